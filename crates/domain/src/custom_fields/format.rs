//! `default_format` and `display_value` (notes §13: numbers "per `default_format`", dates
//! `YYYY-MM-DD` "or custom", datetimes `YYYY-MM-DD HH:MM:SS` "or custom", booleans Yes / No,
//! enums their labels).
//!
//! Terminal49 types `default_format` as a string without documenting its grammar, so
//! Tidemark uses two familiar ones:
//!
//! - numbers, spreadsheet style: `0`, `0.00`, `#,##0`, `#,##0.00` (up to 6 zeros after the
//!   point), with optional literal text around it, as in `$#,##0.00` or `0.0 kg`;
//! - dates and datetimes, Moment.js style tokens: `YYYY` `YY` `MMMM` `MMM` `MM` `M` `DD` `D`
//!   `dddd` `ddd`, and for datetimes `HH` `H` `hh` `h` `mm` `ss` `A` `a`; the literals
//!   space `/ - . , :`; and any text in `[brackets]`. Datetimes are shown in UTC.
//!
//! Other data types take no format.

use std::fmt::Write as _;

use chrono::{DateTime, NaiveDate, Utc};

use super::{
    DataType, Decimal, Definition, FieldOption, FieldProblem, MAX_FORMAT_LENGTH, ProblemCode,
    StoredValue, char_len, sort_options,
};

/// Shown for a date without `default_format`.
const DEFAULT_DATE_FORMAT: &str = "%Y-%m-%d";
/// Shown for a datetime without `default_format`: Terminal49's `YYYY-MM-DD HH:MM:SS`, in UTC.
const DEFAULT_DATETIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S";

/// Date tokens and their chrono specifiers, longest first so `MMMM` wins over `MM`.
const DATE_TOKENS: [(&str, &str); 10] = [
    ("YYYY", "%Y"),
    ("MMMM", "%B"),
    ("dddd", "%A"),
    ("MMM", "%b"),
    ("ddd", "%a"),
    ("YY", "%y"),
    ("MM", "%m"),
    ("DD", "%d"),
    ("M", "%-m"),
    ("D", "%-d"),
];
/// Time tokens, for datetimes only; case tells `mm` (minutes) from `MM` (month).
const TIME_TOKENS: [(&str, &str); 8] = [
    ("HH", "%H"),
    ("hh", "%I"),
    ("mm", "%M"),
    ("ss", "%S"),
    ("H", "%-H"),
    ("h", "%-I"),
    ("A", "%p"),
    ("a", "%P"),
];
/// Characters that stand for themselves in a date pattern.
const DATE_LITERALS: [char; 7] = [' ', '/', '-', '.', ',', ':', '\''];

/// A definition's checked `default_format`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DefaultFormat {
    /// For `number` fields.
    Number(NumberFormat),
    /// For `date` and `datetime` fields.
    Date(DatePattern),
}

/// A number format such as `#,##0.00`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumberFormat {
    source: String,
    prefix: String,
    suffix: String,
    precision: u32,
    thousands_separator: bool,
}

/// A date or datetime pattern such as `MMM D, YYYY`, translated to chrono's specifiers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatePattern {
    source: String,
    strftime: String,
}

impl DefaultFormat {
    /// Checks `raw` as the format of a `data_type` field, or says why it is not one (a
    /// predicate such as "does not apply to boolean fields").
    pub fn parse(data_type: DataType, raw: &str) -> Result<Self, String> {
        if char_len(raw) > MAX_FORMAT_LENGTH {
            return Err(format!(
                "is too long (maximum is {MAX_FORMAT_LENGTH} characters)"
            ));
        }
        match data_type {
            DataType::Number => NumberFormat::parse(raw).map(Self::Number),
            DataType::Date => DatePattern::parse(raw, false).map(Self::Date),
            DataType::Datetime => DatePattern::parse(raw, true).map(Self::Date),
            _ => Err(format!("does not apply to {data_type} fields")),
        }
    }

    /// [`DefaultFormat::parse`] for the `default_format` attribute, where null or blank
    /// means the type's default.
    pub(super) fn parse_attribute(
        data_type: DataType,
        raw: Option<&str>,
    ) -> Result<Option<Self>, FieldProblem> {
        let Some(raw) = raw.filter(|raw| !raw.trim().is_empty()) else {
            return Ok(None);
        };
        Self::parse(data_type, raw).map(Some).map_err(|predicate| {
            let code = if predicate.starts_with("is too long") {
                ProblemCode::TooLong
            } else {
                ProblemCode::Invalid
            };
            FieldProblem::attribute(
                "default_format",
                code,
                format!("Default format {predicate}"),
            )
        })
    }

    /// The format as written.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Number(format) => &format.source,
            Self::Date(pattern) => &pattern.source,
        }
    }
}

impl NumberFormat {
    /// Parses `[text](0|#,##0)[.0…][text]`.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let is_core = |c: char| matches!(c, '#' | '0' | ',' | '.');
        let invalid = || {
            "must be a number format such as 0, 0.00, #,##0 or #,##0.00, with optional text \
             around it"
                .to_owned()
        };
        let start = raw.find(is_core).ok_or_else(invalid)?;
        let end = raw.rfind(is_core).map(|at| at + 1).ok_or_else(invalid)?;
        let core = &raw[start..end];
        let (integer, fraction) = core.split_once('.').unwrap_or((core, ""));
        let thousands_separator = match integer {
            "0" => false,
            "#,##0" => true,
            _ => return Err(invalid()),
        };
        if core.contains('.')
            && (fraction.is_empty() || fraction.len() > 6 || !fraction.bytes().all(|b| b == b'0'))
        {
            return Err(invalid());
        }
        Ok(Self {
            source: raw.to_owned(),
            prefix: raw[..start].to_owned(),
            suffix: raw[end..].to_owned(),
            precision: u32::try_from(fraction.len()).map_err(|_| invalid())?,
            thousands_separator,
        })
    }

    /// Fraction digits shown.
    pub fn precision(&self) -> u32 {
        self.precision
    }

    /// Whether thousands are separated by `,`.
    pub fn thousands_separator(&self) -> bool {
        self.thousands_separator
    }

    /// `number` in this format; a minus sign goes before the prefix (`-$5.00`).
    pub fn apply(&self, number: Decimal) -> String {
        let digits = number.format(self.precision, self.thousands_separator);
        let (sign, digits) = match digits.strip_prefix('-') {
            Some(unsigned) => ("-", unsigned),
            None => ("", digits.as_str()),
        };
        format!("{sign}{}{digits}{}", self.prefix, self.suffix)
    }
}

impl DatePattern {
    /// Parses a token pattern; time tokens only when `with_time`.
    pub fn parse(raw: &str, with_time: bool) -> Result<Self, String> {
        let mut strftime = String::new();
        let mut has_token = false;
        let mut rest = raw;
        'scan: while let Some(next) = rest.chars().next() {
            if next == '[' {
                let close = rest
                    .find(']')
                    .ok_or_else(|| "has a [ without its closing ]".to_owned())?;
                strftime.push_str(&rest[1..close].replace('%', "%%"));
                rest = &rest[close + 1..];
                continue;
            }
            if DATE_LITERALS.contains(&next) {
                strftime.push(next);
                rest = &rest[next.len_utf8()..];
                continue;
            }
            for (token, specifier) in DATE_TOKENS {
                if let Some(after) = rest.strip_prefix(token) {
                    strftime.push_str(specifier);
                    has_token = true;
                    rest = after;
                    continue 'scan;
                }
            }
            for (token, specifier) in TIME_TOKENS {
                if let Some(after) = rest.strip_prefix(token) {
                    if !with_time {
                        return Err(format!(
                            "uses the time token {token}, which dates do not have"
                        ));
                    }
                    strftime.push_str(specifier);
                    has_token = true;
                    rest = after;
                    continue 'scan;
                }
            }
            return Err(format!(
                "has {next:?}, which is not a known token; put literal text in [brackets]"
            ));
        }
        if !has_token {
            return Err("must contain at least one token such as YYYY, MM or DD".to_owned());
        }
        Ok(Self {
            source: raw.to_owned(),
            strftime,
        })
    }

    /// The equivalent chrono format string.
    pub fn strftime(&self) -> &str {
        &self.strftime
    }
}

/// The `display_value` of `value` under `definition`: `None` when there is no value.
///
/// Texts as stored; numbers in `default_format`, else their canonical decimal; dates and
/// datetimes in `default_format`, else `YYYY-MM-DD` and `YYYY-MM-DD HH:MM:SS` (UTC);
/// booleans `Yes` or `No`; an enum value as its option's label; `enum_multi` labels joined
/// with `, ` in option display order; a reference as its id. A value whose option has been
/// deleted shows as the raw value, after the labelled ones.
pub fn display_value(
    definition: &Definition,
    options: &[FieldOption],
    value: Option<&StoredValue>,
) -> Option<String> {
    let format = definition.default_format.as_ref();
    let shown = match value? {
        StoredValue::Text(text) => text.clone(),
        StoredValue::Number(number) => match format {
            Some(DefaultFormat::Number(format)) => format.apply(*number),
            _ => number.to_string(),
        },
        StoredValue::Date(date) => format_date(*date, pattern(format), DEFAULT_DATE_FORMAT),
        StoredValue::Datetime(at) => format_datetime(*at, pattern(format)),
        StoredValue::Boolean(flag) => if *flag { "Yes" } else { "No" }.to_owned(),
        StoredValue::Enum(value) => options
            .iter()
            .find(|option| option.value == *value)
            .map_or_else(|| value.clone(), |option| option.label.clone()),
        StoredValue::EnumMulti(values) => {
            let mut ordered = options.to_vec();
            sort_options(&mut ordered);
            let mut labels: Vec<String> = ordered
                .into_iter()
                .filter(|option| values.contains(&option.value))
                .map(|option| option.label)
                .collect();
            labels.extend(
                values
                    .iter()
                    .filter(|value| !options.iter().any(|option| option.value == **value))
                    .cloned(),
            );
            labels.join(", ")
        }
        StoredValue::Reference { id, .. } => id.to_string(),
    };
    Some(shown)
}

fn pattern(format: Option<&DefaultFormat>) -> Option<&str> {
    match format {
        Some(DefaultFormat::Date(pattern)) => Some(pattern.strftime()),
        _ => None,
    }
}

/// Writing through `write!` turns a bad specifier into an error instead of chrono's panic in
/// `to_string`; patterns are checked on the way in, so this is only a safety net.
fn format_date(date: NaiveDate, pattern: Option<&str>, default: &str) -> String {
    let mut shown = String::new();
    if write!(shown, "{}", date.format(pattern.unwrap_or(default))).is_ok() {
        return shown;
    }
    date.format(DEFAULT_DATE_FORMAT).to_string()
}

fn format_datetime(at: DateTime<Utc>, pattern: Option<&str>) -> String {
    let mut shown = String::new();
    if write!(
        shown,
        "{}",
        at.format(pattern.unwrap_or(DEFAULT_DATETIME_FORMAT))
    )
    .is_ok()
    {
        return shown;
    }
    at.format(DEFAULT_DATETIME_FORMAT).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::test_support::{definition, option};
    use super::super::{NewDefinition, check_value, validate_new_definition};
    use super::*;

    fn formatted(data_type: &str, default_format: Option<&str>) -> Definition {
        validate_new_definition(&NewDefinition {
            api_slug: Some("field".to_owned()),
            display_name: Some("Field".to_owned()),
            entity_type: Some("Container".to_owned()),
            data_type: Some(data_type.to_owned()),
            default_format: default_format.map(str::to_owned),
            ..NewDefinition::default()
        })
        .expect("valid")
    }

    fn shown(definition: &Definition, options: &[FieldOption], raw: Value) -> Option<String> {
        let value = check_value(definition, options, &raw).expect("valid");
        display_value(definition, options, value.as_ref())
    }

    #[test]
    fn no_value_has_no_display_value() {
        assert_eq!(
            display_value(&definition("number", Value::Null), &[], None),
            None
        );
    }

    #[test]
    fn a_number_without_a_format_shows_its_canonical_decimal() {
        assert_eq!(
            shown(&formatted("number", None), &[], json!(1234.50)),
            Some("1234.5".to_owned())
        );
    }

    #[test]
    fn a_number_format_sets_precision_and_thousands_separator() {
        let definition = formatted("number", Some("#,##0.00"));

        assert_eq!(
            shown(&definition, &[], json!(1234567.891)),
            Some("1,234,567.89".to_owned())
        );
    }

    #[test]
    fn a_number_format_may_carry_text_around_the_number() {
        assert_eq!(
            shown(&formatted("number", Some("$#,##0")), &[], json!(-1500)),
            Some("-$1,500".to_owned())
        );
        assert_eq!(
            shown(&formatted("number", Some("0.0 kg")), &[], json!(12.25)),
            Some("12.3 kg".to_owned())
        );
    }

    #[test]
    fn malformed_number_formats_are_rejected() {
        for raw in [
            "",
            "kg",
            "##0",
            "0.",
            "0.0000000",
            "0,000",
            "0.00.0",
            "#,##0.0#",
        ] {
            assert!(NumberFormat::parse(raw).is_err(), "{raw:?}");
        }
    }

    #[test]
    fn a_date_without_a_format_shows_yyyy_mm_dd() {
        assert_eq!(
            shown(&formatted("date", None), &[], json!("2024-03-05")),
            Some("2024-03-05".to_owned())
        );
    }

    #[test]
    fn common_date_patterns_are_supported() {
        let cases = [
            ("YYYY-MM-DD", "2024-03-05"),
            ("MM/DD/YYYY", "03/05/2024"),
            ("DD/MM/YYYY", "05/03/2024"),
            ("MMM D, YYYY", "Mar 5, 2024"),
            ("dddd D MMMM YY", "Tuesday 5 March 24"),
            ("D.M.YYYY [(local)]", "5.3.2024 (local)"),
        ];
        for (pattern, expected) in cases {
            let definition = formatted("date", Some(pattern));

            assert_eq!(
                shown(&definition, &[], json!("2024-03-05")),
                Some(expected.to_owned()),
                "{pattern}"
            );
        }
    }

    #[test]
    fn a_date_pattern_cannot_use_time_tokens() {
        let error = DatePattern::parse("YYYY-MM-DD HH:mm", false).expect_err("rejected");

        assert_eq!(error, "uses the time token HH, which dates do not have");
    }

    #[test]
    fn unknown_letters_in_a_date_pattern_are_rejected() {
        assert!(DatePattern::parse("YYYY-MM-DD at", false).is_err());
        assert!(DatePattern::parse("[unclosed YYYY", false).is_err());
        assert!(DatePattern::parse("--", false).is_err());
    }

    #[test]
    fn a_percent_sign_in_bracketed_text_is_literal() {
        let pattern = DatePattern::parse("YYYY [100%]", false).expect("valid");

        assert_eq!(pattern.strftime(), "%Y 100%%");
    }

    #[test]
    fn a_datetime_without_a_format_shows_utc_seconds() {
        let definition = formatted("datetime", None);

        assert_eq!(
            shown(&definition, &[], json!("2024-03-05T14:07:09.5+01:00")),
            Some("2024-03-05 13:07:09".to_owned())
        );
    }

    #[test]
    fn a_datetime_pattern_may_use_twelve_hour_time() {
        let definition = formatted("datetime", Some("MMM D, YYYY h:mm A"));

        assert_eq!(
            shown(&definition, &[], json!("2024-03-05T14:07:00Z")),
            Some("Mar 5, 2024 2:07 PM".to_owned())
        );
    }

    #[test]
    fn booleans_show_yes_or_no() {
        let definition = definition("boolean", Value::Null);

        assert_eq!(shown(&definition, &[], json!(true)), Some("Yes".to_owned()));
        assert_eq!(shown(&definition, &[], json!(false)), Some("No".to_owned()));
    }

    #[test]
    fn an_enum_shows_its_option_label() {
        let options = [option("air", None)];

        assert_eq!(
            shown(&definition("enum", Value::Null), &options, json!("air")),
            Some("AIR".to_owned())
        );
    }

    #[test]
    fn an_enum_whose_option_was_deleted_shows_the_raw_value() {
        let value = StoredValue::Enum("rail".to_owned());

        assert_eq!(
            display_value(&definition("enum", Value::Null), &[], Some(&value)),
            Some("rail".to_owned())
        );
    }

    #[test]
    fn enum_multi_labels_are_joined_in_option_order() {
        let options = [option("sea", Some(2)), option("air", Some(1))];
        let value =
            StoredValue::EnumMulti(vec!["sea".to_owned(), "gone".to_owned(), "air".to_owned()]);

        let shown = display_value(
            &definition("enum_multi", Value::Null),
            &options,
            Some(&value),
        );

        assert_eq!(shown, Some("AIR, SEA, gone".to_owned()));
    }

    #[test]
    fn a_reference_shows_its_id() {
        let id = "0190a8f0-0000-7000-8000-000000000001";

        assert_eq!(
            shown(&definition("reference", Value::Null), &[], json!(id)),
            Some(id.to_owned())
        );
    }

    #[test]
    fn a_default_format_longer_than_64_characters_is_too_long() {
        let raw = format!("YYYY{}", "-".repeat(61));

        assert!(DefaultFormat::parse(DataType::Date, &raw).is_err());
    }
}
