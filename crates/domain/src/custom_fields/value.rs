//! Custom field values: type checks, rules, normalization and index keys.
//!
//! A value arrives as JSON (`custom_field_value` in the OpenAPI: string, number, boolean,
//! string array or object). [`check_value`] turns it into a [`StoredValue`] in canonical
//! form, or reports every broken rule at `/data/attributes/value`.
//!
//! Index keys: each stored value yields strings ([`StoredValue::index_keys`]) that the store
//! keeps next to the value, and [`filter_key`] turns the `filter[custom_fields][<api_slug>]`
//! query text into the same string, so a filter is one equality lookup. An `enum_multi` value
//! yields one key per member, so a filter naming one option value matches every entity whose
//! list contains it.

use chrono::{DateTime, NaiveDate, SecondsFormat, SubsecRound, Utc};
use serde_json::Value;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::validation::Bound;
use super::{
    DataType, Decimal, DecimalError, Definition, FieldOption, FieldProblem, MAX_LONG_TEXT_LENGTH,
    MAX_SHORT_TEXT_LENGTH, ProblemCode, ReferenceType, char_len, collect, sort_options,
};

/// Longest text used as its own index key; longer texts are keyed by their SHA-256, which
/// keeps index entries small (PostgreSQL B-tree entries are limited to about 2.7 kB).
const MAX_PLAIN_KEY_BYTES: usize = 128;
/// Prefix of hashed text keys. Shorter texts that start with it are hashed too, so a plain
/// key can never equal a hashed one.
const HASHED_KEY_PREFIX: &str = "sha256:";
/// How many option values an "is not one of the options" message lists.
const MAX_LISTED_OPTIONS: usize = 20;

/// A value in canonical form, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoredValue {
    /// `short_text` (trimmed) and `long_text` (as given).
    Text(String),
    /// `number`.
    Number(Decimal),
    /// `date`.
    Date(NaiveDate),
    /// `datetime`, in UTC, to the microsecond.
    Datetime(DateTime<Utc>),
    /// `boolean`.
    Boolean(bool),
    /// `enum`: an option value.
    Enum(String),
    /// `enum_multi`: distinct option values, in option order when checked.
    EnumMulti(Vec<String>),
    /// `reference`: the id of a resource of the definition's reference type.
    Reference {
        /// The JSON:API type of the referenced resource.
        reference_type: ReferenceType,
        /// Its id.
        id: Uuid,
    },
}

impl StoredValue {
    /// The JSON shown as the custom field's `value` and accepted back by [`check_value`]:
    /// strings for texts, dates, datetimes and enums, a number for numbers (the exact decimal
    /// text if a float would lose digits), a boolean, a string array, or `{type, id}`.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Text(text) | Self::Enum(text) => Value::from(text.as_str()),
            Self::Number(number) => number.to_json(),
            Self::Date(date) => Value::from(canonical_date(*date)),
            Self::Datetime(at) => Value::from(canonical_datetime(*at)),
            Self::Boolean(flag) => Value::Bool(*flag),
            Self::EnumMulti(values) => Value::from(values.clone()),
            Self::Reference { reference_type, id } => serde_json::json!({
                "type": reference_type.as_str(),
                "id": id.to_string(),
            }),
        }
    }

    /// Reads back a value written by [`StoredValue::to_json`], checking its type only: rules
    /// and options may have changed since it was stored.
    pub fn from_json(definition: &Definition, raw: &Value) -> Result<Option<Self>, FieldProblem> {
        parse_typed(definition, raw, &Target::VALUE)
    }

    /// The keys under which the store indexes this value; [`filter_key`] produces the same
    /// strings from a query. One key per member for `enum_multi`, one otherwise.
    pub fn index_keys(&self) -> Vec<String> {
        match self {
            Self::Text(text) | Self::Enum(text) => vec![text_key(text)],
            Self::Number(number) => vec![number.to_string()],
            Self::Date(date) => vec![canonical_date(*date)],
            Self::Datetime(at) => vec![canonical_datetime(*at)],
            Self::Boolean(flag) => vec![flag.to_string()],
            Self::EnumMulti(values) => values.iter().map(|value| text_key(value)).collect(),
            Self::Reference { id, .. } => vec![id.to_string()],
        }
    }
}

/// Checks a raw value against its definition's type, validation and options.
///
/// Returns `Ok(None)` for no value: `null`, a blank string, or an empty `enum_multi` list,
/// unless the definition requires a value. Every problem points at `/data/attributes/value`
/// and names its rule, e.g. "Value must be at most 100".
pub fn check_value(
    definition: &Definition,
    options: &[FieldOption],
    raw: &Value,
) -> Result<Option<StoredValue>, Vec<FieldProblem>> {
    check_value_at(definition, options, raw, &Target::VALUE)
}

/// Where a checked value sits in the request, and how messages name it.
pub(super) struct Target {
    /// JSON pointer of the value.
    pub(super) pointer: &'static str,
    /// The value's name at the start of a sentence.
    pub(super) subject: &'static str,
    /// Whether `validation.required` applies (not to a definition's `default_value`).
    pub(super) enforce_required: bool,
}

impl Target {
    /// An entity's value.
    pub(super) const VALUE: Self = Self {
        pointer: "/data/attributes/value",
        subject: "Value",
        enforce_required: true,
    };
    /// A definition's `default_value`.
    pub(super) const DEFAULT_VALUE: Self = Self {
        pointer: "/data/attributes/default_value",
        subject: "Default value",
        enforce_required: false,
    };

    fn problem(&self, code: ProblemCode, predicate: impl std::fmt::Display) -> FieldProblem {
        FieldProblem::at(self.pointer, code, format!("{} {predicate}", self.subject))
    }
}

/// [`check_value`] for a value at `target`.
pub(super) fn check_value_at(
    definition: &Definition,
    options: &[FieldOption],
    raw: &Value,
    target: &Target,
) -> Result<Option<StoredValue>, Vec<FieldProblem>> {
    let Some(value) = parse_typed(definition, raw, target).map_err(|problem| vec![problem])? else {
        if target.enforce_required && definition.validation.required {
            return Err(vec![target.problem(ProblemCode::Blank, "is required")]);
        }
        return Ok(None);
    };
    let mut problems = Vec::new();
    let value = check_rules(definition, options, value, target, &mut problems);
    collect(Some(value), problems)
}

/// Turns the text of `filter[custom_fields][<api_slug>]` into an index key.
///
/// Numbers are canonical (`5` and `5.0` give `5`), booleans are `true` or `false` in any
/// case, dates are `YYYY-MM-DD`, datetimes RFC 3339 converted to UTC (a space where the
/// offset's `+` was, as form decoding leaves it, is read as `+`), references a UUID, texts
/// and option values as given (short texts trimmed). For `enum_multi` the filter names one
/// option value and matches every list containing it. A date does not match a datetime's day.
///
/// On failure the problem's `pointer` holds the query parameter name, for JSON:API's
/// `source.parameter`.
pub fn filter_key(definition: &Definition, raw_filter: &str) -> Result<String, FieldProblem> {
    let parameter = format!("filter[custom_fields][{}]", definition.api_slug);
    let problem = |code, predicate: &str| {
        FieldProblem::at(parameter.as_str(), code, format!("Filter {predicate}"))
    };
    let trimmed = raw_filter.trim();
    if trimmed.is_empty() {
        return Err(problem(ProblemCode::Blank, "can't be blank"));
    }
    match definition.data_type {
        DataType::ShortText | DataType::Enum | DataType::EnumMulti => Ok(text_key(trimmed)),
        DataType::LongText => Ok(text_key(raw_filter)),
        DataType::Number => Decimal::parse(trimmed)
            .map(|number| number.to_string())
            .map_err(|_| problem(ProblemCode::Invalid, "must be a number")),
        DataType::Date => parse_date(trimmed)
            .map(canonical_date)
            .ok_or_else(|| problem(ProblemCode::Invalid, "must be a date in YYYY-MM-DD format")),
        DataType::Datetime => parse_datetime(trimmed)
            .or_else(|| parse_datetime(&restore_offset_plus(trimmed)))
            .map(canonical_datetime)
            .ok_or_else(|| problem(ProblemCode::Invalid, "must be an RFC 3339 date and time")),
        DataType::Boolean => match trimmed.to_ascii_lowercase().as_str() {
            flag @ ("true" | "false") => Ok(flag.to_owned()),
            _ => Err(problem(ProblemCode::Invalid, "must be true or false")),
        },
        DataType::Reference => Uuid::parse_str(trimmed)
            .map(|id| id.to_string())
            .map_err(|_| problem(ProblemCode::Invalid, "must be a UUID")),
    }
}

/// Checks the JSON type and normalizes; `None` for no value.
fn parse_typed(
    definition: &Definition,
    raw: &Value,
    target: &Target,
) -> Result<Option<StoredValue>, FieldProblem> {
    if raw.is_null() {
        return Ok(None);
    }
    let invalid = |predicate: &str| target.problem(ProblemCode::Invalid, predicate);
    match definition.data_type {
        DataType::ShortText | DataType::LongText => {
            let text = raw.as_str().ok_or_else(|| invalid("must be a string"))?;
            if text.trim().is_empty() {
                Ok(None)
            } else if definition.data_type == DataType::ShortText {
                Ok(Some(StoredValue::Text(text.trim().to_owned())))
            } else {
                Ok(Some(StoredValue::Text(text.to_owned())))
            }
        }
        DataType::Number => {
            let parsed = match raw {
                Value::Number(number) => Decimal::from_json_number(number),
                // Accepted because a decimal may be shown as a string (see `Decimal::to_json`).
                Value::String(text) if text.trim().is_empty() => return Ok(None),
                Value::String(text) => Decimal::parse(text.trim()),
                _ => Err(DecimalError::Invalid),
            };
            match parsed {
                Ok(number) => Ok(Some(StoredValue::Number(number))),
                Err(DecimalError::Invalid) => Err(invalid("must be a number")),
                Err(DecimalError::TooLarge) => Err(invalid(
                    "must have at most 12 digits before the decimal point",
                )),
            }
        }
        DataType::Date => match optional_text(raw, || invalid("must be a string"))? {
            None => Ok(None),
            Some(text) => parse_date(text)
                .map(|date| Some(StoredValue::Date(date)))
                .ok_or_else(|| invalid("must be a date in YYYY-MM-DD format")),
        },
        DataType::Datetime => match optional_text(raw, || invalid("must be a string"))? {
            None => Ok(None),
            Some(text) => parse_datetime(text)
                .map(|at| Some(StoredValue::Datetime(at)))
                .ok_or_else(|| {
                    invalid("must be an RFC 3339 date and time, such as 2024-01-31T09:30:00Z")
                }),
        },
        DataType::Boolean => raw
            .as_bool()
            .map(|flag| Some(StoredValue::Boolean(flag)))
            .ok_or_else(|| invalid("must be true or false")),
        DataType::Enum => {
            let text = optional_text(raw, || invalid("must be a string"))?;
            Ok(text.map(|text| StoredValue::Enum(text.to_owned())))
        }
        DataType::EnumMulti => {
            let items = raw
                .as_array()
                .ok_or_else(|| invalid("must be a list of option values"))?;
            let mut values: Vec<String> = Vec::with_capacity(items.len());
            for item in items {
                let text = item
                    .as_str()
                    .ok_or_else(|| invalid("must be a list of option values"))?
                    .trim();
                if !values.iter().any(|seen| seen == text) {
                    values.push(text.to_owned());
                }
            }
            Ok((!values.is_empty()).then_some(StoredValue::EnumMulti(values)))
        }
        DataType::Reference => parse_reference(definition, raw, target),
    }
}

/// A reference is `{"type": …, "id": …}` (Terminal49's shape) or the bare id.
fn parse_reference(
    definition: &Definition,
    raw: &Value,
    target: &Target,
) -> Result<Option<StoredValue>, FieldProblem> {
    let Some(reference_type) = definition.reference_type else {
        return Err(target.problem(
            ProblemCode::Invalid,
            "has no reference type to check against",
        ));
    };
    let id = match raw {
        Value::String(text) if text.trim().is_empty() => return Ok(None),
        Value::String(text) => text.as_str(),
        Value::Object(object) => {
            let given = object.get("type").and_then(Value::as_str);
            if given != Some(reference_type.as_str()) {
                return Err(target.problem(
                    ProblemCode::Invalid,
                    format!("must reference a {reference_type}"),
                ));
            }
            object.get("id").and_then(Value::as_str).unwrap_or_default()
        }
        _ => {
            return Err(target.problem(
                ProblemCode::Invalid,
                "must be an object with type and id, or an id",
            ));
        }
    };
    Uuid::parse_str(id.trim())
        .map(|id| Some(StoredValue::Reference { reference_type, id }))
        .map_err(|_| {
            target.problem(
                ProblemCode::Invalid,
                format!("must be a {reference_type} id (a UUID)"),
            )
        })
}

/// Applies validation and options to a typed value, returning it in final canonical form.
fn check_rules(
    definition: &Definition,
    options: &[FieldOption],
    value: StoredValue,
    target: &Target,
    problems: &mut Vec<FieldProblem>,
) -> StoredValue {
    let validation = &definition.validation;
    match value {
        StoredValue::Text(text) => {
            let limit = if definition.data_type == DataType::LongText {
                MAX_LONG_TEXT_LENGTH
            } else {
                MAX_SHORT_TEXT_LENGTH
            };
            let limit = validation.max_length.map_or(limit, |max| max.min(limit));
            if char_len(&text) > limit {
                problems.push(target.problem(
                    ProblemCode::TooLong,
                    format!("is too long (maximum is {limit} characters)"),
                ));
            }
            if let Some(pattern) = &validation.pattern
                && !pattern.is_match(&text)
            {
                problems.push(target.problem(
                    ProblemCode::Invalid,
                    format!("must match pattern {}", pattern.as_str()),
                ));
            }
            StoredValue::Text(text)
        }
        StoredValue::Number(number) => {
            check_bounds(
                definition,
                Bound::Number(number),
                "at least",
                "at most",
                target,
                problems,
            );
            value
        }
        StoredValue::Date(date) => {
            check_bounds(
                definition,
                Bound::Date(date),
                "on or after",
                "on or before",
                target,
                problems,
            );
            value
        }
        StoredValue::Datetime(at) => {
            check_bounds(
                definition,
                Bound::Datetime(at),
                "on or after",
                "on or before",
                target,
                problems,
            );
            value
        }
        StoredValue::Enum(text) => {
            if !options.iter().any(|option| option.value == text) {
                problems.push(target.problem(
                    ProblemCode::Inclusion,
                    format!("is not one of the options: {}", list_options(options)),
                ));
            }
            StoredValue::Enum(text)
        }
        StoredValue::EnumMulti(values) => {
            for unknown in values
                .iter()
                .filter(|value| !options.iter().any(|option| &option.value == *value))
            {
                problems.push(target.problem(
                    ProblemCode::Inclusion,
                    format!(
                        "{unknown:?} is not one of the options: {}",
                        list_options(options)
                    ),
                ));
            }
            // Canonical order is the options' display order, so equal sets store equally.
            let mut ordered = options.to_vec();
            sort_options(&mut ordered);
            let values = ordered
                .into_iter()
                .map(|option| option.value)
                .filter(|option| values.contains(option))
                .collect();
            StoredValue::EnumMulti(values)
        }
        StoredValue::Boolean(_) | StoredValue::Reference { .. } => value,
    }
}

fn check_bounds(
    definition: &Definition,
    value: Bound,
    at_least: &str,
    at_most: &str,
    target: &Target,
    problems: &mut Vec<FieldProblem>,
) {
    let validation = &definition.validation;
    if let Some(min) = validation.min
        && below(value, min)
    {
        problems.push(target.problem(
            ProblemCode::GreaterThanOrEqualTo,
            format!("must be {at_least} {}", min.describe()),
        ));
    }
    if let Some(max) = validation.max
        && below(max, value)
    {
        problems.push(target.problem(
            ProblemCode::LessThanOrEqualTo,
            format!("must be {at_most} {}", max.describe()),
        ));
    }
}

/// Whether `a < b`; bounds of another type than the value never apply.
fn below(a: Bound, b: Bound) -> bool {
    match (a, b) {
        (Bound::Number(a), Bound::Number(b)) => a < b,
        (Bound::Date(a), Bound::Date(b)) => a < b,
        (Bound::Datetime(a), Bound::Datetime(b)) => a < b,
        _ => false,
    }
}

fn list_options(options: &[FieldOption]) -> String {
    if options.is_empty() {
        return "(none defined)".to_owned();
    }
    let mut ordered = options.to_vec();
    sort_options(&mut ordered);
    let mut listed: Vec<&str> = ordered
        .iter()
        .take(MAX_LISTED_OPTIONS)
        .map(|option| option.value.as_str())
        .collect();
    if ordered.len() > MAX_LISTED_OPTIONS {
        listed.push("…");
    }
    listed.join(", ")
}

/// A string's trimmed text, `None` when blank, or `not_string()` for other JSON types.
fn optional_text(
    raw: &Value,
    not_string: impl FnOnce() -> FieldProblem,
) -> Result<Option<&str>, FieldProblem> {
    let text = raw.as_str().ok_or_else(not_string)?.trim();
    Ok((!text.is_empty()).then_some(text))
}

fn text_key(text: &str) -> String {
    if text.len() <= MAX_PLAIN_KEY_BYTES && !text.starts_with(HASHED_KEY_PREFIX) {
        text.to_owned()
    } else {
        format!(
            "{HASHED_KEY_PREFIX}{}",
            hex::encode(Sha256::digest(text.as_bytes()))
        )
    }
}

/// Strictly `YYYY-MM-DD`; chrono alone would also take unpadded months and days.
pub(super) fn parse_date(text: &str) -> Option<NaiveDate> {
    let bytes = text.as_bytes();
    let shaped = bytes.len() == 10
        && bytes.iter().enumerate().all(|(index, byte)| match index {
            4 | 7 => *byte == b'-',
            _ => byte.is_ascii_digit(),
        });
    if !shaped {
        return None;
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
}

/// RFC 3339 with any offset, to UTC, truncated to microseconds as PostgreSQL stores them.
pub(super) fn parse_datetime(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|at| at.with_timezone(&Utc).trunc_subsecs(6))
}

pub(super) fn canonical_date(date: NaiveDate) -> String {
    date.format("%Y-%m-%d").to_string()
}

/// `2024-01-31T09:30:00Z`, with a fraction only when there is one.
pub(super) fn canonical_datetime(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// `…T10:00:00 02:00` → `…T10:00:00+02:00`: an unencoded `+` in a query string decodes to a space.
fn restore_offset_plus(text: &str) -> String {
    match text.len().checked_sub(6) {
        Some(at) if text.as_bytes()[at] == b' ' => format!("{}+{}", &text[..at], &text[at + 1..]),
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{definition, option};
    use super::*;

    fn check(
        data_type: &str,
        validation: Value,
        raw: Value,
    ) -> Result<Option<StoredValue>, Vec<FieldProblem>> {
        check_value(&definition(data_type, validation), &[], &raw)
    }

    fn details(result: Result<Option<StoredValue>, Vec<FieldProblem>>) -> Vec<String> {
        result
            .expect_err("is rejected")
            .into_iter()
            .map(|problem| problem.detail)
            .collect()
    }

    fn stored(data_type: &str, raw: Value) -> StoredValue {
        check(data_type, Value::Null, raw)
            .expect("valid")
            .expect("a value")
    }

    #[test]
    fn null_is_no_value_when_not_required() {
        assert_eq!(check("number", Value::Null, Value::Null), Ok(None));
    }

    #[test]
    fn null_is_rejected_when_required() {
        let problems =
            check("number", json!({"required": true}), Value::Null).expect_err("rejected");

        assert_eq!(problems[0].pointer, "/data/attributes/value");
        assert_eq!(problems[0].code, ProblemCode::Blank);
        assert_eq!(problems[0].detail, "Value is required");
    }

    #[test]
    fn a_blank_text_counts_as_no_value() {
        assert_eq!(check("short_text", Value::Null, json!("   ")), Ok(None));
        assert_eq!(
            details(check("short_text", json!({"required": true}), json!(" "))),
            ["Value is required"]
        );
    }

    #[test]
    fn a_required_boolean_accepts_false() {
        let result = check("boolean", json!({"required": true}), json!(false));

        assert_eq!(result, Ok(Some(StoredValue::Boolean(false))));
    }

    #[test]
    fn short_text_is_trimmed_and_long_text_is_kept_as_given() {
        assert_eq!(
            stored("short_text", json!(" ABC124 ")),
            StoredValue::Text("ABC124".to_owned())
        );
        assert_eq!(
            stored("long_text", json!(" a\nb ")),
            StoredValue::Text(" a\nb ".to_owned())
        );
    }

    #[test]
    fn a_text_field_rejects_other_json_types() {
        assert_eq!(
            details(check("short_text", Value::Null, json!(5))),
            ["Value must be a string"]
        );
    }

    #[test]
    fn short_text_is_limited_to_255_characters_without_a_rule() {
        let long = "é".repeat(256);

        let found = check("short_text", Value::Null, json!(long)).expect_err("rejected");

        assert_eq!(found[0].code, ProblemCode::TooLong);
        assert_eq!(
            found[0].detail,
            "Value is too long (maximum is 255 characters)"
        );
    }

    #[test]
    fn max_length_lowers_the_text_limit() {
        let found = details(check("short_text", json!({"max_length": 3}), json!("ABCD")));

        assert_eq!(found, ["Value is too long (maximum is 3 characters)"]);
    }

    #[test]
    fn a_text_must_match_the_pattern() {
        let found = details(check(
            "short_text",
            json!({"pattern": "^[A-Z]+$"}),
            json!("abc"),
        ));

        assert_eq!(found, ["Value must match pattern ^[A-Z]+$"]);
    }

    #[test]
    fn every_broken_text_rule_is_reported() {
        let validation = json!({"pattern": "^[A-Z]+$", "max_length": 2});

        let found = details(check("short_text", validation, json!("abc")));

        assert_eq!(found.len(), 2);
    }

    #[test]
    fn numbers_are_kept_as_exact_decimals() {
        assert_eq!(stored("number", json!(0.1)).to_json(), json!(0.1));
        assert_eq!(stored("number", json!(5.0)).index_keys(), ["5"]);
    }

    #[test]
    fn a_number_may_be_sent_as_decimal_text() {
        assert_eq!(
            stored("number", json!("12.50")),
            stored("number", json!(12.5))
        );
    }

    #[test]
    fn a_number_field_rejects_text_that_is_not_a_number() {
        assert_eq!(
            details(check("number", Value::Null, json!("12 kg"))),
            ["Value must be a number"]
        );
        assert_eq!(
            details(check("number", Value::Null, json!(true))),
            ["Value must be a number"]
        );
    }

    #[test]
    fn a_number_beyond_twelve_integer_digits_is_rejected() {
        let found = details(check("number", Value::Null, json!(1e13)));

        assert_eq!(
            found,
            ["Value must have at most 12 digits before the decimal point"]
        );
    }

    #[test]
    fn a_number_above_the_maximum_is_rejected() {
        let found = check("number", json!({"max": 100}), json!(100.5)).expect_err("rejected");

        assert_eq!(found[0].code, ProblemCode::LessThanOrEqualTo);
        assert_eq!(found[0].detail, "Value must be at most 100");
    }

    #[test]
    fn a_number_below_the_minimum_is_rejected() {
        let found = details(check("number", json!({"min": 0.5}), json!(0)));

        assert_eq!(found, ["Value must be at least 0.5"]);
    }

    #[test]
    fn bounds_are_inclusive() {
        let validation = json!({"min": 1, "max": 1});

        assert!(check("number", validation, json!(1)).is_ok());
    }

    #[test]
    fn dates_must_be_written_yyyy_mm_dd() {
        assert_eq!(
            stored("date", json!("2024-02-29")).to_json(),
            json!("2024-02-29")
        );
        for raw in [
            "2024-2-29",
            "2023-02-29",
            "29/02/2024",
            "2024-02-29T00:00:00Z",
        ] {
            assert_eq!(
                details(check("date", Value::Null, json!(raw))),
                ["Value must be a date in YYYY-MM-DD format"],
                "{raw}"
            );
        }
    }

    #[test]
    fn a_date_before_the_minimum_is_rejected() {
        let found = details(check(
            "date",
            json!({"min": "2024-01-01"}),
            json!("2023-12-31"),
        ));

        assert_eq!(found, ["Value must be on or after 2024-01-01"]);
    }

    #[test]
    fn datetimes_are_stored_in_utc_to_the_microsecond() {
        let value = stored("datetime", json!("2024-01-31T11:30:00.1234567+02:00"));

        assert_eq!(value.to_json(), json!("2024-01-31T09:30:00.123456Z"));
    }

    #[test]
    fn a_datetime_without_an_offset_is_rejected() {
        let found = details(check("datetime", Value::Null, json!("2024-01-31 09:30:00")));

        assert_eq!(
            found,
            ["Value must be an RFC 3339 date and time, such as 2024-01-31T09:30:00Z"]
        );
    }

    #[test]
    fn a_datetime_after_the_maximum_is_rejected() {
        let validation = json!({"max": "2024-01-01T00:00:00Z"});

        let found = details(check("datetime", validation, json!("2024-01-01T00:00:01Z")));

        assert_eq!(found, ["Value must be on or before 2024-01-01T00:00:00Z"]);
    }

    #[test]
    fn a_boolean_field_takes_only_json_booleans() {
        assert_eq!(
            details(check("boolean", Value::Null, json!("true"))),
            ["Value must be true or false"]
        );
    }

    #[test]
    fn an_enum_value_must_be_one_of_the_options() {
        let options = [option("b", Some(2)), option("a", Some(1))];

        let found = check_value(&definition("enum", Value::Null), &options, &json!("c"))
            .expect_err("rejected");

        assert_eq!(found[0].code, ProblemCode::Inclusion);
        assert_eq!(found[0].detail, "Value is not one of the options: a, b");
    }

    #[test]
    fn an_enum_value_among_the_options_is_accepted() {
        let options = [option("a", None)];

        let result = check_value(&definition("enum", Value::Null), &options, &json!("a"));

        assert_eq!(result, Ok(Some(StoredValue::Enum("a".to_owned()))));
    }

    #[test]
    fn enum_multi_values_are_deduplicated_and_put_in_option_order() {
        let options = [
            option("x", Some(3)),
            option("y", Some(1)),
            option("z", Some(2)),
        ];
        let definition = definition("enum_multi", Value::Null);

        let result = check_value(&definition, &options, &json!(["x", "y", "x"]));

        assert_eq!(
            result,
            Ok(Some(StoredValue::EnumMulti(vec![
                "y".to_owned(),
                "x".to_owned()
            ])))
        );
    }

    #[test]
    fn each_unknown_enum_multi_value_is_reported() {
        let options = [option("a", None)];
        let definition = definition("enum_multi", Value::Null);

        let found =
            check_value(&definition, &options, &json!(["a", "b", "c"])).expect_err("rejected");

        assert_eq!(found.len(), 2);
        assert_eq!(found[0].detail, "Value \"b\" is not one of the options: a");
    }

    #[test]
    fn an_empty_enum_multi_list_is_no_value() {
        assert_eq!(check("enum_multi", Value::Null, json!([])), Ok(None));
    }

    #[test]
    fn an_enum_multi_value_must_be_a_list_of_strings() {
        let expected = ["Value must be a list of option values"];

        assert_eq!(
            details(check("enum_multi", Value::Null, json!("a"))),
            expected
        );
        assert_eq!(
            details(check("enum_multi", Value::Null, json!([1]))),
            expected
        );
    }

    #[test]
    fn a_reference_is_an_object_of_the_reference_type_or_a_bare_id() {
        let id = "0190a8f0-0000-7000-8000-000000000001";
        let from_object = stored("reference", json!({"type": "shipment", "id": id}));

        assert_eq!(from_object, stored("reference", json!(id)));
        assert_eq!(from_object.to_json(), json!({"type": "shipment", "id": id}));
    }

    #[test]
    fn a_reference_of_another_type_is_rejected() {
        let raw = json!({"type": "container", "id": "0190a8f0-0000-7000-8000-000000000001"});

        assert_eq!(
            details(check("reference", Value::Null, raw)),
            ["Value must reference a shipment"]
        );
    }

    #[test]
    fn a_reference_id_must_be_a_uuid() {
        let found = details(check("reference", Value::Null, json!("42")));

        assert_eq!(found, ["Value must be a shipment id (a UUID)"]);
    }

    #[test]
    fn stored_values_read_back_from_their_json() {
        let definition = definition("datetime", Value::Null);
        let value = stored("datetime", json!("2024-01-31T09:30:00Z"));

        assert_eq!(
            StoredValue::from_json(&definition, &value.to_json()),
            Ok(Some(value))
        );
    }

    #[test]
    fn number_filters_match_whatever_spelling_was_stored() {
        let definition = definition("number", Value::Null);

        assert_eq!(filter_key(&definition, "5.0"), Ok("5".to_owned()));
        assert_eq!(stored("number", json!(5)).index_keys(), ["5"]);
    }

    #[test]
    fn boolean_filters_are_true_or_false_in_any_case() {
        let definition = definition("boolean", Value::Null);

        assert_eq!(filter_key(&definition, "TRUE"), Ok("true".to_owned()));
        assert_eq!(stored("boolean", json!(true)).index_keys(), ["true"]);
        assert!(filter_key(&definition, "yes").is_err());
    }

    #[test]
    fn date_filters_are_canonical_dates() {
        let definition = definition("date", Value::Null);

        assert_eq!(
            filter_key(&definition, " 2024-01-05 "),
            Ok("2024-01-05".to_owned())
        );
        assert!(filter_key(&definition, "2024-1-5").is_err());
    }

    #[test]
    fn datetime_filters_are_converted_to_utc_even_when_the_plus_was_decoded_to_a_space() {
        let definition = definition("datetime", Value::Null);
        let key = stored("datetime", json!("2024-01-01T08:00:00Z")).index_keys();

        assert_eq!(
            filter_key(&definition, "2024-01-01T10:00:00+02:00"),
            Ok(key[0].clone())
        );
        assert_eq!(
            filter_key(&definition, "2024-01-01T10:00:00 02:00"),
            Ok(key[0].clone())
        );
    }

    #[test]
    fn an_enum_multi_value_is_indexed_under_each_member() {
        let options = [option("a", None), option("b", None)];
        let definition = definition("enum_multi", Value::Null);
        let value = check_value(&definition, &options, &json!(["a", "b"]))
            .expect("valid")
            .expect("a value");

        assert_eq!(value.index_keys(), ["a", "b"]);
        assert_eq!(filter_key(&definition, "b"), Ok("b".to_owned()));
    }

    #[test]
    fn reference_filters_are_lowercase_uuids() {
        let definition = definition("reference", Value::Null);

        let key = filter_key(&definition, "0190A8F0-0000-7000-8000-00000000000A");

        assert_eq!(key, Ok("0190a8f0-0000-7000-8000-00000000000a".to_owned()));
    }

    #[test]
    fn long_texts_are_indexed_by_their_hash() {
        let text = "x".repeat(500);
        let definition = definition("long_text", Value::Null);

        let keys = stored("long_text", json!(text)).index_keys();

        assert!(keys[0].starts_with("sha256:"));
        assert_eq!(filter_key(&definition, &text), Ok(keys[0].clone()));
    }

    #[test]
    fn a_short_text_that_looks_like_a_hashed_key_is_hashed_too() {
        let keys = stored("short_text", json!("sha256:abc")).index_keys();

        assert_ne!(keys[0], "sha256:abc");
    }

    #[test]
    fn a_blank_filter_names_its_query_parameter() {
        let problem = filter_key(&definition("number", Value::Null), " ").expect_err("rejected");

        assert_eq!(problem.pointer, "filter[custom_fields][field]");
        assert_eq!(problem.code, ProblemCode::Blank);
    }

    #[test]
    fn a_number_filter_that_is_not_a_number_is_invalid() {
        let problem = filter_key(&definition("number", Value::Null), "five").expect_err("rejected");

        assert_eq!(problem.detail, "Filter must be a number");
    }
}
