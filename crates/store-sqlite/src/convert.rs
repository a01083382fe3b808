//! Conversions between rusqlite values and domain types.

use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use rusqlite::Row;
use rusqlite::types::Type;
use tidemark_domain::{AccountId, ApiKey, ApiKeyId, ApiKeyScope};
use tidemark_store::StoreError;
use uuid::Uuid;

/// The one timestamp format stored: fixed width, so text order is time order.
const TS_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.6fZ";

pub fn to_ts(at: DateTime<Utc>) -> String {
    tidemark_domain::timestamp_text::utc_text(at, true)
}

/// Reads a stored timestamp: the fixed-width form directly, anything else through chrono.
pub fn parse_ts(text: &str) -> Result<DateTime<Utc>, chrono::ParseError> {
    fixed_width_ts(text).map_or_else(
        || NaiveDateTime::parse_from_str(text, TS_FORMAT).map(|naive| naive.and_utc()),
        Ok,
    )
}

/// `YYYY-MM-DDTHH:MM:SS.ffffffZ`, or `None` when the text is not exactly that.
fn fixed_width_ts(text: &str) -> Option<DateTime<Utc>> {
    let bytes = text.as_bytes();
    if bytes.len() != 27
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || bytes[10] != b'T'
        || bytes[13] != b':'
        || bytes[16] != b':'
        || bytes[19] != b'.'
        || bytes[26] != b'Z'
    {
        return None;
    }
    let number = |from: usize, to: usize| -> Option<u32> {
        bytes[from..to].iter().try_fold(0_u32, |n, &b| {
            b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
        })
    };
    let date = NaiveDate::from_ymd_opt(
        i32::try_from(number(0, 4)?).ok()?,
        number(5, 7)?,
        number(8, 10)?,
    )?;
    let time = NaiveTime::from_hms_micro_opt(
        number(11, 13)?,
        number(14, 16)?,
        number(17, 19)?,
        number(20, 26)?,
    )?;
    Some(date.and_time(time).and_utc())
}

fn conversion_error(
    index: usize,
    error: impl std::error::Error + Send + Sync + 'static,
) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(index, Type::Text, Box::new(error))
}

pub fn from_ts(row: &Row<'_>, index: usize) -> rusqlite::Result<DateTime<Utc>> {
    let text: String = row.get(index)?;
    parse_ts(&text).map_err(|e| conversion_error(index, e))
}

pub fn from_optional_ts(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<DateTime<Utc>>> {
    let text: Option<String> = row.get(index)?;
    text.map(|text| parse_ts(&text).map_err(|e| conversion_error(index, e)))
        .transpose()
}

pub fn uuid_from(row: &Row<'_>, index: usize) -> rusqlite::Result<Uuid> {
    let text: String = row.get(index)?;
    Uuid::parse_str(&text).map_err(|e| conversion_error(index, e))
}

pub fn api_key_from_row(row: &Row<'_>) -> rusqlite::Result<ApiKey> {
    let scope: String = row.get(4)?;
    Ok(ApiKey {
        id: ApiKeyId(uuid_from(row, 0)?),
        account_id: AccountId(uuid_from(row, 1)?),
        prefix: row.get(2)?,
        hash: row.get(3)?,
        scope: ApiKeyScope::parse(&scope).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(
                4,
                Type::Text,
                format!("unknown scope {scope}").into(),
            )
        })?,
        created_at: from_ts(row, 5)?,
        revoked_at: from_optional_ts(row, 6)?,
    })
}

pub fn backend(error: impl Into<tidemark_store::BoxError>) -> StoreError {
    StoreError::backend(error)
}

/// Maps a unique-constraint violation to `Conflict`, anything else to `Backend`.
pub fn on_unique(error: rusqlite::Error, constraint: &'static str) -> StoreError {
    match error.sqlite_error_code() {
        Some(rusqlite::ErrorCode::ConstraintViolation) => StoreError::Conflict { constraint },
        _ => backend(error),
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn timestamps_read_back_to_the_microsecond() {
        let at = Utc.timestamp_opt(1_767_225_600, 123_456_000).single();
        let at = at.expect("valid time");
        assert_eq!(parse_ts(&to_ts(at)).ok(), Some(at));
    }

    #[test]
    fn timestamps_outside_four_digit_years_still_read_back() {
        let at = Utc.with_ymd_and_hms(12_345, 6, 7, 8, 9, 10).single();
        let at = at.expect("valid time");
        assert_eq!(parse_ts(&to_ts(at)).ok(), Some(at));
    }

    #[test]
    fn malformed_timestamps_are_errors() {
        for text in [
            "",
            "2026-13-01T00:00:00.000000Z",
            "2026-01-01 00:00:00.000000Z",
            "2026-01-01T00:00:00.00000xZ",
        ] {
            assert!(parse_ts(text).is_err(), "{text}");
        }
    }
}
