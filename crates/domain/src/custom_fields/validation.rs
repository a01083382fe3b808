//! A definition's `validation` object and the safe `pattern` it may carry.
//!
//! Terminal49 documents `validation` as a free-form object holding keys such as `required`,
//! `pattern` and `max_length` (notes §13). Tidemark accepts exactly these rules and rejects any
//! other key, so that a typo does not silently disable a rule:
//!
//! | key | applies to | value |
//! | --- | --- | --- |
//! | `required` | every type | `true` or `false` |
//! | `min`, `max` | `number`, `date`, `datetime` | a value of the field's type, inclusive |
//! | `max_length` | `short_text`, `long_text` | characters, at most the type's own limit |
//! | `pattern` | `short_text`, `long_text` | a regular expression the text must contain a match of |

use chrono::{DateTime, NaiveDate, Utc};
use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};

use super::value::{canonical_datetime, parse_date, parse_datetime};
use super::{
    DataType, Decimal, FieldProblem, MAX_LONG_TEXT_LENGTH, MAX_PATTERN_LENGTH,
    MAX_SHORT_TEXT_LENGTH, ProblemCode, char_len, collect,
};

/// Compiled program limit for a pattern; `a{1000}{1000}` is short but would be huge.
const PATTERN_SIZE_LIMIT: usize = 256 * 1024;
/// Lazy DFA cache limit for a pattern.
const PATTERN_DFA_SIZE_LIMIT: usize = 1024 * 1024;
/// Deepest nesting of groups and repetitions in a pattern.
const PATTERN_NEST_LIMIT: u32 = 32;
/// The keys `validation` may hold, in the order they are written back.
const KNOWN_KEYS: [&str; 5] = ["required", "min", "max", "max_length", "pattern"];

/// The rules a definition puts on its values. The default has no rule.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Validation {
    /// A value must be present (not null, not blank, not an empty list).
    pub required: bool,
    /// Smallest allowed value, inclusive; numbers, dates and datetimes.
    pub min: Option<Bound>,
    /// Largest allowed value, inclusive; numbers, dates and datetimes.
    pub max: Option<Bound>,
    /// Most characters allowed; texts.
    pub max_length: Option<usize>,
    /// A regular expression the text must contain a match of; texts.
    pub pattern: Option<SafePattern>,
}

/// A `min` or `max`, of the field's own type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// For `number` fields.
    Number(Decimal),
    /// For `date` fields.
    Date(NaiveDate),
    /// For `datetime` fields.
    Datetime(DateTime<Utc>),
}

impl Bound {
    /// The bound as written back in the `validation` object and in messages.
    pub fn to_json(self) -> Value {
        match self {
            Self::Number(number) => number.to_json(),
            Self::Date(date) => Value::from(date.format("%Y-%m-%d").to_string()),
            Self::Datetime(at) => Value::from(canonical_datetime(at)),
        }
    }

    /// The bound as people read it.
    pub fn describe(self) -> String {
        match self {
            Self::Number(number) => number.to_string(),
            Self::Date(date) => date.format("%Y-%m-%d").to_string(),
            Self::Datetime(at) => canonical_datetime(at),
        }
    }

    /// Whether `self` is above `other`; bounds of different types never compare.
    fn exceeds(self, other: Self) -> bool {
        match (self, other) {
            (Self::Number(a), Self::Number(b)) => a > b,
            (Self::Date(a), Self::Date(b)) => a > b,
            (Self::Datetime(a), Self::Datetime(b)) => a > b,
            _ => false,
        }
    }
}

impl Validation {
    /// Reads and checks a `validation` object for a field of `data_type`; `null` or absent
    /// means no rule. Problems point at `/data/attributes/validation[/<key>]`.
    pub fn parse(data_type: DataType, raw: Option<&Value>) -> Result<Self, Vec<FieldProblem>> {
        let object = match raw {
            None | Some(Value::Null) => return Ok(Self::default()),
            Some(Value::Object(object)) => object,
            Some(_) => {
                return Err(vec![FieldProblem::attribute(
                    "validation",
                    ProblemCode::Invalid,
                    "Validation must be an object",
                )]);
            }
        };
        let mut validation = Self::default();
        let mut problems = Vec::new();
        for (key, value) in object {
            if let Err(problem) = validation.read_rule(data_type, key, value) {
                problems.push(problem);
            }
        }
        if let (Some(min), Some(max)) = (validation.min, validation.max)
            && min.exceeds(max)
        {
            problems.push(rule_problem(
                "min",
                ProblemCode::Invalid,
                format!("must not be greater than max ({})", max.describe()),
            ));
        }
        collect(validation, problems)
    }

    /// The object as stored and shown, or `null` when there is no rule.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        if self.required {
            object.insert("required".to_owned(), Value::Bool(true));
        }
        if let Some(min) = self.min {
            object.insert("min".to_owned(), min.to_json());
        }
        if let Some(max) = self.max {
            object.insert("max".to_owned(), max.to_json());
        }
        if let Some(max_length) = self.max_length {
            object.insert("max_length".to_owned(), Value::from(max_length));
        }
        if let Some(pattern) = &self.pattern {
            object.insert("pattern".to_owned(), Value::from(pattern.as_str()));
        }
        if object.is_empty() {
            Value::Null
        } else {
            Value::Object(object)
        }
    }

    fn read_rule(
        &mut self,
        data_type: DataType,
        key: &str,
        value: &Value,
    ) -> Result<(), FieldProblem> {
        match key {
            "required" => {
                self.required = value.as_bool().ok_or_else(|| {
                    rule_problem(key, ProblemCode::Invalid, "must be true or false")
                })?;
            }
            "min" | "max" => {
                if !matches!(
                    data_type,
                    DataType::Number | DataType::Date | DataType::Datetime
                ) {
                    return Err(not_applicable(key, data_type));
                }
                let bound = parse_bound(data_type, value)
                    .map_err(|detail| rule_problem(key, ProblemCode::Invalid, detail))?;
                if key == "min" {
                    self.min = Some(bound);
                } else {
                    self.max = Some(bound);
                }
            }
            "max_length" => {
                let limit = match data_type {
                    DataType::ShortText => MAX_SHORT_TEXT_LENGTH,
                    DataType::LongText => MAX_LONG_TEXT_LENGTH,
                    _ => return Err(not_applicable(key, data_type)),
                };
                let length = value
                    .as_u64()
                    .and_then(|length| usize::try_from(length).ok())
                    .filter(|length| (1..=limit).contains(length))
                    .ok_or_else(|| {
                        rule_problem(
                            key,
                            ProblemCode::Invalid,
                            format!("must be a whole number from 1 to {limit}"),
                        )
                    })?;
                self.max_length = Some(length);
            }
            "pattern" => {
                if !data_type.is_text() {
                    return Err(not_applicable(key, data_type));
                }
                let source = value
                    .as_str()
                    .ok_or_else(|| rule_problem(key, ProblemCode::Invalid, "must be a string"))?;
                self.pattern = Some(
                    SafePattern::new(source)
                        .map_err(|(code, detail)| rule_problem(key, code, detail))?,
                );
            }
            _ => {
                return Err(rule_problem(
                    key,
                    ProblemCode::Invalid,
                    format!(
                        "is not a known rule (known rules: {})",
                        KNOWN_KEYS.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A user-supplied regular expression, bounded in length and compiled size.
///
/// The `regex` crate guarantees matching in time linear in the input, so a pattern such as
/// `(a+)+$` cannot backtrack catastrophically; the limits bound the compile cost and memory.
/// The pattern is searched for anywhere in the text: anchor it with `^…$` to match the whole.
#[derive(Clone, Debug)]
pub struct SafePattern {
    source: String,
    regex: Regex,
}

impl SafePattern {
    /// Compiles `source`, or says why not (code and a predicate such as "is too long …").
    pub fn new(source: &str) -> Result<Self, (ProblemCode, String)> {
        if source.trim().is_empty() {
            return Err((ProblemCode::Blank, "can't be blank".to_owned()));
        }
        if char_len(source) > MAX_PATTERN_LENGTH {
            return Err((
                ProblemCode::TooLong,
                format!("is too long (maximum is {MAX_PATTERN_LENGTH} characters)"),
            ));
        }
        let regex = RegexBuilder::new(source)
            .size_limit(PATTERN_SIZE_LIMIT)
            .dfa_size_limit(PATTERN_DFA_SIZE_LIMIT)
            .nest_limit(PATTERN_NEST_LIMIT)
            .build()
            .map_err(|error| match error {
                regex::Error::CompiledTooBig(_) => {
                    (ProblemCode::Invalid, "is too complex".to_owned())
                }
                _ => (
                    ProblemCode::Invalid,
                    "is not a valid regular expression".to_owned(),
                ),
            })?;
        Ok(Self {
            source: source.to_owned(),
            regex,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether `text` contains a match.
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }
}

impl PartialEq for SafePattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

fn parse_bound(data_type: DataType, value: &Value) -> Result<Bound, String> {
    match data_type {
        DataType::Number => value
            .as_number()
            .and_then(|number| Decimal::from_json_number(number).ok())
            .map(Bound::Number)
            .ok_or_else(|| "must be a number with at most 12 integer digits".to_owned()),
        DataType::Date => value
            .as_str()
            .and_then(parse_date)
            .map(Bound::Date)
            .ok_or_else(|| "must be a date in YYYY-MM-DD format".to_owned()),
        _ => value
            .as_str()
            .and_then(parse_datetime)
            .map(Bound::Datetime)
            .ok_or_else(|| "must be an RFC 3339 date and time".to_owned()),
    }
}

fn rule_problem(key: &str, code: ProblemCode, predicate: impl std::fmt::Display) -> FieldProblem {
    FieldProblem::at(
        format!("/data/attributes/validation/{key}"),
        code,
        format!("Validation {key} {predicate}"),
    )
}

fn not_applicable(key: &str, data_type: DataType) -> FieldProblem {
    rule_problem(
        key,
        ProblemCode::Invalid,
        format!("does not apply to {data_type} fields"),
    )
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use serde_json::json;

    use super::*;

    fn problems(data_type: DataType, raw: Value) -> Vec<FieldProblem> {
        Validation::parse(data_type, Some(&raw)).expect_err("is rejected")
    }

    #[test]
    fn a_null_validation_has_no_rule() {
        let validation = Validation::parse(DataType::Number, Some(&Value::Null)).expect("valid");

        assert_eq!(validation, Validation::default());
        assert_eq!(validation.to_json(), Value::Null);
    }

    #[test]
    fn a_validation_that_is_not_an_object_is_invalid() {
        let found = problems(DataType::Number, json!([1]));

        assert_eq!(found[0].pointer, "/data/attributes/validation");
    }

    #[test]
    fn number_bounds_are_read_and_written_back() {
        let raw = json!({"required": true, "min": 0, "max": 99.5});

        let validation = Validation::parse(DataType::Number, Some(&raw)).expect("valid");

        assert!(validation.required);
        assert_eq!(validation.to_json(), raw);
    }

    #[test]
    fn a_minimum_above_the_maximum_is_invalid() {
        let found = problems(DataType::Number, json!({"min": 10, "max": 5}));

        assert_eq!(found.len(), 1);
        assert_eq!(found[0].pointer, "/data/attributes/validation/min");
        assert_eq!(
            found[0].detail,
            "Validation min must not be greater than max (5)"
        );
    }

    #[test]
    fn date_bounds_must_be_dates() {
        let found = problems(DataType::Date, json!({"min": "2024-13-01"}));

        assert_eq!(
            found[0].detail,
            "Validation min must be a date in YYYY-MM-DD format"
        );
    }

    #[test]
    fn datetime_bounds_are_normalized_to_utc() {
        let raw = json!({"max": "2024-01-01T02:00:00+02:00"});

        let validation = Validation::parse(DataType::Datetime, Some(&raw)).expect("valid");

        assert_eq!(validation.to_json(), json!({"max": "2024-01-01T00:00:00Z"}));
    }

    #[test]
    fn max_length_on_a_number_field_does_not_apply() {
        let found = problems(DataType::Number, json!({"max_length": 5}));

        assert_eq!(found[0].pointer, "/data/attributes/validation/max_length");
        assert_eq!(
            found[0].detail,
            "Validation max_length does not apply to number fields"
        );
    }

    #[test]
    fn min_on_a_text_field_does_not_apply() {
        let found = problems(DataType::ShortText, json!({"min": 1}));

        assert_eq!(found[0].code, ProblemCode::Invalid);
    }

    #[test]
    fn max_length_must_stay_within_the_type_limit() {
        let found = problems(DataType::ShortText, json!({"max_length": 256}));

        assert_eq!(
            found[0].detail,
            "Validation max_length must be a whole number from 1 to 255"
        );
    }

    #[test]
    fn long_text_allows_a_larger_max_length() {
        let raw = json!({"max_length": 5000});

        assert!(Validation::parse(DataType::LongText, Some(&raw)).is_ok());
    }

    #[test]
    fn required_must_be_a_boolean() {
        let found = problems(DataType::Boolean, json!({"required": "yes"}));

        assert_eq!(found[0].detail, "Validation required must be true or false");
    }

    #[test]
    fn unknown_rules_are_rejected() {
        let found = problems(DataType::ShortText, json!({"min_length": 3}));

        assert_eq!(found[0].pointer, "/data/attributes/validation/min_length");
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let found = problems(
            DataType::Number,
            json!({"pattern": "x", "max_length": 3, "required": 1}),
        );

        assert_eq!(found.len(), 3);
    }

    #[test]
    fn a_pattern_that_does_not_compile_is_invalid() {
        let found = problems(DataType::ShortText, json!({"pattern": "(unclosed"}));

        assert_eq!(
            found[0].detail,
            "Validation pattern is not a valid regular expression"
        );
    }

    #[test]
    fn an_over_long_pattern_is_rejected() {
        let pattern = "a".repeat(MAX_PATTERN_LENGTH + 1);

        let found = problems(DataType::ShortText, json!({ "pattern": pattern }));

        assert_eq!(found[0].code, ProblemCode::TooLong);
    }

    #[test]
    fn a_short_pattern_that_compiles_to_a_huge_program_is_rejected() {
        let found = problems(DataType::ShortText, json!({"pattern": "\\w{1000}{1000}"}));

        assert_eq!(found[0].detail, "Validation pattern is too complex");
    }

    #[test]
    fn a_blank_pattern_is_rejected() {
        let found = problems(DataType::ShortText, json!({"pattern": " "}));

        assert_eq!(found[0].code, ProblemCode::Blank);
    }

    #[test]
    fn a_pattern_is_searched_for_anywhere_in_the_text() {
        let pattern = SafePattern::new("[0-9]{3}").expect("compiles");

        assert!(pattern.is_match("ABC123"));
        assert!(!pattern.is_match("ABC12"));
    }

    #[test]
    fn a_catastrophic_backtracking_pattern_stays_fast() {
        let pattern = SafePattern::new("(a+)+$").expect("compiles");
        let text = format!("{}!", "a".repeat(100_000));
        let started = Instant::now();

        let matched = pattern.is_match(&text);

        assert!(!matched);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
}
