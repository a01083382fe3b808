//! Reading terminals' JSON values: fields by any of their known names, dates, local times,
//! yes/no flags and amounts, in the several spellings terminals use.
//!
//! Where a profile's field names are guesses (APM Terminals, Port Houston), an adapter
//! lists the likely names and takes the first present. A field that is present but does
//! not read is an error (the caller makes it `Drift`), never silently dropped.

use crate::connector::ContainerQuery;
use crate::status::{Hold, HoldKind, HoldStatus};
use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde_json::Value;

/// The first of `names` present in `object` and not null or blank, matched without regard
/// to case. A dotted name (`scope.facility_id`, as Navis names its fields) is a key of that
/// name, else the path through nested objects.
pub(crate) fn field<'a>(object: &'a Value, names: &[&str]) -> Option<&'a Value> {
    names.iter().find_map(|name| named(object, name))
}

fn named<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    let map = object.as_object()?;
    let key = |name: &str| {
        map.iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
            .filter(|value| !is_blank(value))
    };
    key(name).or_else(|| {
        let (head, rest) = name.split_once('.')?;
        named(key(head)?, rest)
    })
}

fn is_blank(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// A value as trimmed text: strings, numbers and booleans; `None` for anything else.
pub(crate) fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.trim().to_owned()).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// [`text`] of the first of `names` present.
pub(crate) fn text_field(object: &Value, names: &[&str]) -> Option<String> {
    field(object, names).and_then(text)
}

fn compact(text: &str) -> String {
    text.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// The query of `batch` a terminal's container number answers: the same number (spaces,
/// dashes, lower case tolerated), else the same owner code and serial when the terminal's
/// check digit is wrong or missing (the first ten characters name the box; a terminal's
/// typo in the eleventh must not lose the answer). `Err` when `value` is no container
/// number at all; `Ok(None)` when it is one this batch did not ask about.
pub(crate) fn query_for<'a>(
    value: &Value,
    batch: &'a [ContainerQuery],
) -> Result<Option<&'a ContainerQuery>, String> {
    let Some(text) = text(value) else {
        return Err(format!("{value} is not a container number"));
    };
    let number = compact(&text);
    let owner_and_serial = number.get(..10).filter(|_| matches!(number.len(), 10 | 11));
    let looks_like_one = owner_and_serial.is_some_and(|head| {
        head.bytes().take(4).all(|b| b.is_ascii_alphabetic())
            && head.bytes().skip(4).all(|b| b.is_ascii_digit())
    });
    if !looks_like_one {
        return Err(format!("{text:?} is not a container number"));
    }
    Ok(batch
        .iter()
        .find(|q| q.container.as_str() == number)
        .or_else(|| {
            batch
                .iter()
                .find(|q| q.container.as_str().get(..10) == owner_and_serial)
        }))
}

/// A calendar day: `2024-05-03`, the day of `2024-05-03T23:59:00-04:00` (as written,
/// not converted: a last free day is the terminal's local day), `05/03/2024` (US) or
/// `20240503`.
pub(crate) fn date(value: &Value) -> Result<Option<NaiveDate>, String> {
    let Some(text) = text(value) else {
        return Ok(None);
    };
    let head: String = text.chars().take(10).collect();
    let parsed = NaiveDate::parse_from_str(&head, "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(&head, "%m/%d/%Y"))
        .or_else(|_| NaiveDate::parse_from_str(&text, "%Y%m%d"))
        .or_else(|_| {
            // `5/3/2024 …`: a US date without leading zeros, before a time.
            let day = text.split_whitespace().next().unwrap_or_default();
            NaiveDate::parse_from_str(day, "%m/%d/%Y")
        });
    parsed
        .map(Some)
        .map_err(|_| format!("{text:?} is not a date"))
}

/// An instant: RFC 3339 with an offset as given; a local time without one (ISO or US
/// style, with or without seconds or fractions) in `zone`; a date alone as the start of that
/// local day; a JSON integer as milliseconds (or seconds) since 1970.
pub(crate) fn instant(value: &Value, zone: Tz) -> Result<Option<DateTime<Utc>>, String> {
    if let Some(at) = value.as_i64().and_then(epoch) {
        return Ok(Some(at));
    }
    let Some(text) = text(value) else {
        return Ok(None);
    };
    if let Ok(at) = DateTime::parse_from_rfc3339(&text) {
        return Ok(Some(at.with_timezone(&Utc)));
    }
    const LOCAL: [&str; 9] = [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
        "%m/%d/%Y %H:%M:%S",
        "%m/%d/%Y %H:%M",
        "%m/%d/%Y %I:%M:%S %p",
        "%m/%d/%Y %I:%M %p",
        "%Y%m%d%H%M",
    ];
    let naive = LOCAL
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(&text, format).ok())
        .or_else(|| {
            (text.len() <= 10)
                .then(|| date(value).ok().flatten())
                .flatten()
                .and_then(|day| day.and_hms_opt(0, 0, 0))
        })
        .ok_or_else(|| format!("{text:?} is not a date and time"))?;
    Ok(Some(local(naive, zone)))
}

/// An instant sent as a JSON integer: milliseconds since 1970 (Java's and Navis's
/// habit) from 10^11 up, seconds below; small numbers are no instant.
fn epoch(number: i64) -> Option<DateTime<Utc>> {
    match number {
        100_000_000_000.. => DateTime::from_timestamp_millis(number),
        1_000_000_000.. => DateTime::from_timestamp(number, 0),
        _ => None,
    }
}

/// A local time in `zone` as UTC: the earlier of an ambiguous hour, and an hour later for a
/// time that falls in a spring-forward gap.
pub(crate) fn local(naive: NaiveDateTime, zone: Tz) -> DateTime<Utc> {
    zone.from_local_datetime(&naive)
        .earliest()
        .or_else(|| {
            zone.from_local_datetime(&(naive + chrono::Duration::hours(1)))
                .earliest()
        })
        .map_or_else(|| naive.and_utc(), |at| at.with_timezone(&Utc))
}

/// A yes/no: a JSON boolean, or `Y`/`N`, `Yes`/`No`, `true`/`false`, `1`/`0`.
pub(crate) fn flag(value: &Value) -> Result<Option<bool>, String> {
    if let Value::Bool(b) = value {
        return Ok(Some(*b));
    }
    let Some(text) = text(value) else {
        return Ok(None);
    };
    match text.to_ascii_uppercase().as_str() {
        "Y" | "YES" | "TRUE" | "1" => Ok(Some(true)),
        "N" | "NO" | "FALSE" | "0" => Ok(Some(false)),
        _ => Err(format!("{text:?} is not a yes or no")),
    }
}

/// An amount in hundredths: a JSON number (`285`, `285.5`), or text (`"285.00"`,
/// `"$1,285.50"`, `"USD 12"`). A third decimal is rounded half away from zero.
pub(crate) fn cents(value: &Value) -> Result<Option<i64>, String> {
    let Some(text) = text(value) else {
        return Ok(None);
    };
    let bad = || format!("{text:?} is not an amount");
    let cleaned: String = text
        .chars()
        .filter(|c| c.is_ascii_digit() || matches!(c, '.' | '-'))
        .collect();
    let (negative, digits) = match cleaned.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, cleaned.as_str()),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if (whole.is_empty() && fraction.is_empty())
        || fraction.contains(['.', '-'])
        || whole.contains('-')
    {
        return Err(bad());
    }
    let whole: i64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let mut fraction_digits = fraction.bytes().map(|b| i64::from(b - b'0'));
    let tenths = fraction_digits.next().unwrap_or(0);
    let hundredths = fraction_digits.next().unwrap_or(0);
    let round = i64::from(fraction_digits.next().unwrap_or(0) >= 5);
    let amount = whole
        .checked_mul(100)
        .and_then(|c| c.checked_add(tenths * 10 + hundredths + round))
        .ok_or_else(bad)?;
    Ok(Some(if negative { -amount } else { amount }))
}

/// Holds as terminals list them: an array of texts (`["CUSTOMS", "LINE"]`), an array of
/// objects (`[{"type": "CUSTOMS", "status": "HOLD", "description": "…"}]`), one text with
/// commas or semicolons (`"CUSTOMS, FREIGHT"`), or an object of kinds to statuses
/// (`{"customs": "RELEASED", "freight": "HOLD"}`). Released ones are left out, and so is a
/// text that says there is none ("NONE", "No holds"); the kind is read from the terminal's
/// words ([`HoldKind::from_text`]), the description is its text.
pub(crate) fn holds(value: &Value) -> Result<Vec<Hold>, String> {
    let mut holds = Vec::new();
    let mut push = |words: &str, status: Option<HoldStatus>| {
        if let Some(status) = status {
            holds.push(Hold {
                kind: HoldKind::from_text(words),
                status,
                description: words.to_owned(),
            });
        }
    };
    match value {
        Value::Null => {}
        Value::String(list) => {
            for word in list
                .split([',', ';'])
                .map(str::trim)
                .filter(|w| !w.is_empty() && !says_none(w))
            {
                push(word, Some(HoldStatus::Hold));
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::String(word) if !word.trim().is_empty() && !says_none(word) => {
                        push(word.trim(), Some(HoldStatus::Hold));
                    }
                    Value::String(_) => {}
                    Value::Object(_) => {
                        let kind = text_field(
                            item,
                            &[
                                "type", "holdType", "name", "code", "holdCode", "category", "hold",
                                "holdId", "id",
                            ],
                        );
                        let description = text_field(
                            item,
                            &[
                                "description",
                                "holdDescription",
                                "desc",
                                "reason",
                                "text",
                                "remark",
                                "message",
                            ],
                        );
                        let words = match (kind, description) {
                            (Some(kind), Some(description)) if kind != description => {
                                format!("{kind} - {description}")
                            }
                            (Some(words), _) | (None, Some(words)) => words,
                            (None, None) => return Err(format!("a hold without words: {item}")),
                        };
                        let status = text_field(item, &["status", "holdStatus", "state"])
                            .map_or(Some(HoldStatus::Hold), |s| HoldStatus::from_text(&s));
                        push(&words, status);
                    }
                    other => return Err(format!("a hold that does not read: {other}")),
                }
            }
        }
        Value::Object(map) => {
            for (kind, status) in map {
                let status = match status {
                    Value::Bool(on) => on.then_some(HoldStatus::Hold),
                    other => text(other).and_then(|s| HoldStatus::from_text(&s)),
                };
                push(kind, status);
            }
        }
        other => return Err(format!("holds that do not read: {other}")),
    }
    Ok(holds)
}

/// Whether a terminal's hold text says there is none ("NONE", "No holds", "N/A").
fn says_none(text: &str) -> bool {
    let words = text.trim().to_ascii_uppercase();
    matches!(
        words.as_str(),
        "NONE" | "NO" | "NO HOLD" | "NO HOLDS" | "N/A" | "NA" | "NIL" | "-"
    )
}

/// The items of an answer: the answer itself when it is an array, else the array under one
/// of `envelopes`, else the answer alone when it is one item (an object with one of
/// `item_keys`, as a terminal's single lookup answers).
pub(crate) fn items<'a>(
    answer: &'a Value,
    envelopes: &[&str],
    item_keys: &[&str],
) -> Option<Vec<&'a Value>> {
    match answer {
        Value::Array(items) => Some(items.iter().collect()),
        Value::Object(_) => match field(answer, envelopes) {
            Some(Value::Array(items)) => Some(items.iter().collect()),
            Some(_) => None,
            None => field(answer, item_keys).map(|_| vec![answer]),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn dates_read_in_the_spellings_terminals_use() {
        let day = NaiveDate::from_ymd_opt(2024, 5, 3);

        for text in [
            "2024-05-03",
            "2024-05-03T23:59:00-04:00",
            "05/03/2024",
            "5/3/2024 12:00 AM",
            "20240503",
        ] {
            assert_eq!(date(&json!(text)), Ok(day), "{text}");
        }
        assert_eq!(date(&json!(null)), Ok(None));
        assert!(date(&json!("soon")).is_err());
    }

    #[test]
    fn a_local_time_without_an_offset_is_read_in_the_terminal_s_zone() {
        let zone = chrono_tz::America::New_York;

        let summer = instant(&json!("2024-07-01T10:00:00"), zone)
            .unwrap()
            .unwrap();
        let us = instant(&json!("07/01/2024 10:00 AM"), zone)
            .unwrap()
            .unwrap();
        let exact = instant(&json!("2024-07-01T10:00:00Z"), zone)
            .unwrap()
            .unwrap();

        assert_eq!(summer.to_rfc3339(), "2024-07-01T14:00:00+00:00");
        assert_eq!(us, summer);
        assert_eq!(exact.to_rfc3339(), "2024-07-01T10:00:00+00:00");
    }

    #[test]
    fn amounts_read_exactly_in_cents() {
        let cases = [
            (json!(285), 28_500),
            (json!(285.5), 28_550),
            (json!("285.00"), 28_500),
            (json!("$1,285.05"), 128_505),
            (json!("-12.345"), -1_235),
        ];

        for (value, expected) in cases {
            assert_eq!(cents(&value), Ok(Some(expected)), "{value}");
        }
        assert!(cents(&json!("n/a")).is_err());
    }

    #[test]
    fn flags_read_yes_and_no_in_any_spelling() {
        assert_eq!(flag(&json!(true)), Ok(Some(true)));
        assert_eq!(flag(&json!("Y")), Ok(Some(true)));
        assert_eq!(flag(&json!("no")), Ok(Some(false)));
        assert_eq!(flag(&json!("")), Ok(None));
        assert!(flag(&json!("maybe")).is_err());
    }

    #[test]
    fn holds_read_in_every_listed_shape_and_released_ones_are_left_out() {
        let shapes = [
            json!(["CUSTOMS", "Line hold"]),
            json!("CUSTOMS; Line hold"),
            json!([{"type": "CUSTOMS", "status": "HOLD"}, {"type": "USDA", "status": "RELEASED"}, {"name": "Line hold"}]),
            json!({"CUSTOMS": "HOLD", "Line hold": true, "USDA": "CLEARED", "TMF": false}),
        ];

        for shape in shapes {
            let kinds: Vec<HoldKind> = holds(&shape).unwrap().iter().map(|h| h.kind).collect();

            assert_eq!(kinds, [HoldKind::Customs, HoldKind::Freight], "{shape}");
        }
    }

    #[test]
    fn a_dotted_name_is_a_key_of_that_name_or_a_path_through_nested_objects() {
        let nested = json!({"scope": {"Facility_Id": "BCT"}});
        let flat = json!({"scope.facility_id": "BPT"});

        assert_eq!(
            text_field(&nested, &["scope.facility_id"]).as_deref(),
            Some("BCT")
        );
        assert_eq!(
            text_field(&flat, &["scope.facility_id"]).as_deref(),
            Some("BPT")
        );
        assert_eq!(field(&nested, &["scope.yard_id"]), None);
    }

    #[test]
    fn a_terminal_s_number_matches_the_query_even_with_a_wrong_check_digit() {
        let batch = [ContainerQuery::new(
            tidemark_domain::ContainerNumber::parse("GLDU1234560").unwrap(),
            None,
        )];

        let exact = query_for(&json!("gldu 123456-0"), &batch).unwrap();
        let typo = query_for(&json!("GLDU1234567"), &batch).unwrap();
        let other = query_for(&json!("MSCU1234566"), &batch).unwrap();

        assert!(exact.is_some() && typo.is_some());
        assert!(other.is_none());
        assert!(query_for(&json!("N/A"), &batch).is_err());
        assert!(query_for(&json!(null), &batch).is_err());
    }

    #[test]
    fn a_hold_text_that_says_none_is_no_hold() {
        for none in [json!("NONE"), json!("No holds"), json!(["N/A"]), json!("")] {
            assert_eq!(holds(&none), Ok(vec![]), "{none}");
        }
    }

    #[test]
    fn an_integer_instant_is_milliseconds_or_seconds_since_1970() {
        let zone = chrono_tz::America::Chicago;

        let millis = instant(&json!(1_709_670_720_000_i64), zone)
            .unwrap()
            .unwrap();
        let seconds = instant(&json!(1_709_670_720), zone).unwrap().unwrap();

        assert_eq!(millis.to_rfc3339(), "2024-03-05T20:32:00+00:00");
        assert_eq!(seconds, millis);
        assert!(instant(&json!(42), zone).is_err());
    }

    #[test]
    fn fields_match_any_listed_name_without_regard_to_case() {
        let object = json!({"ContainerID": "MSCU1234566", "blank": " "});

        assert_eq!(
            text_field(&object, &["assetId", "containerId"]).as_deref(),
            Some("MSCU1234566")
        );
        assert_eq!(field(&object, &["blank"]), None);
    }
}
