//! Conversions between rusqlite values and domain types.

use chrono::{DateTime, NaiveDateTime, Utc};
use rusqlite::Row;
use rusqlite::types::Type;
use tidemark_domain::{AccountId, ApiKey, ApiKeyId, ApiKeyScope};
use tidemark_store::StoreError;
use uuid::Uuid;

/// The one timestamp format stored: fixed width, so text order is time order.
const TS_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.6fZ";

pub fn to_ts(at: DateTime<Utc>) -> String {
    at.format(TS_FORMAT).to_string()
}

fn conversion_error(
    index: usize,
    error: impl std::error::Error + Send + Sync + 'static,
) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(index, Type::Text, Box::new(error))
}

pub fn from_ts(row: &Row<'_>, index: usize) -> rusqlite::Result<DateTime<Utc>> {
    let text: String = row.get(index)?;
    NaiveDateTime::parse_from_str(&text, TS_FORMAT)
        .map(|naive| naive.and_utc())
        .map_err(|e| conversion_error(index, e))
}

pub fn from_optional_ts(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<DateTime<Utc>>> {
    let text: Option<String> = row.get(index)?;
    text.map(|text| {
        NaiveDateTime::parse_from_str(&text, TS_FORMAT)
            .map(|naive| naive.and_utc())
            .map_err(|e| conversion_error(index, e))
    })
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
