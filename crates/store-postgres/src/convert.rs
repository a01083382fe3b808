//! Conversions between PostgreSQL rows and domain types, and error mapping.
//!
//! Rows are read with `try_get` only: a column of an unexpected type becomes a `Backend`
//! error rather than the panic `Row::get` would raise.

use deadpool_postgres::GenericClient;
use tidemark_domain::{Account, AccountId, ApiKey, ApiKeyId, ApiKeyScope};
use tidemark_store::{StoreError, StoreResult};
use tokio_postgres::Row;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

/// Runs a cached statement expected to return one row, read with `read`; no row is
/// `NotFound`.
pub async fn query_one<T>(
    client: &impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
    read: fn(&Row) -> StoreResult<T>,
) -> StoreResult<T> {
    let statement = client.prepare_cached(sql).await.map_err(backend)?;
    client
        .query_opt(&statement, params)
        .await
        .map_err(backend)?
        .as_ref()
        .map(read)
        .transpose()?
        .ok_or(StoreError::NotFound)
}

/// Runs a cached statement and reads every row with `read`.
pub async fn query_all<T>(
    client: &impl GenericClient,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
    read: fn(&Row) -> StoreResult<T>,
) -> StoreResult<Vec<T>> {
    let statement = client.prepare_cached(sql).await.map_err(backend)?;
    client
        .query(&statement, params)
        .await
        .map_err(backend)?
        .iter()
        .map(read)
        .collect()
}

pub fn backend(error: impl Into<tidemark_store::BoxError>) -> StoreError {
    StoreError::backend(error)
}

/// Maps a unique violation (SQLSTATE 23505) to `Conflict`, anything else to `Backend`.
pub fn on_unique(error: tokio_postgres::Error, constraint: &'static str) -> StoreError {
    if error.code() == Some(&SqlState::UNIQUE_VIOLATION) {
        StoreError::Conflict { constraint }
    } else {
        backend(error)
    }
}

/// Counters are `integer` columns; the domain counts with `u32`.
pub fn to_int(value: u32) -> StoreResult<i32> {
    i32::try_from(value).map_err(backend)
}

pub fn from_int(row: &Row, index: usize) -> StoreResult<u32> {
    let value: i32 = row.try_get(index).map_err(backend)?;
    u32::try_from(value).map_err(backend)
}

pub const ACCOUNT_COLUMNS: &str = "id, name, created_at";

pub fn account_from_row(row: &Row) -> StoreResult<Account> {
    Ok(Account {
        id: AccountId(row.try_get(0).map_err(backend)?),
        name: row.try_get(1).map_err(backend)?,
        created_at: row.try_get(2).map_err(backend)?,
    })
}

pub const API_KEY_COLUMNS: &str = "id, account_id, prefix, hash, scope, created_at, revoked_at";

pub fn api_key_from_row(row: &Row) -> StoreResult<ApiKey> {
    let scope: &str = row.try_get(4).map_err(backend)?;
    Ok(ApiKey {
        id: ApiKeyId(row.try_get(0).map_err(backend)?),
        account_id: AccountId(row.try_get(1).map_err(backend)?),
        prefix: row.try_get(2).map_err(backend)?,
        hash: row.try_get(3).map_err(backend)?,
        scope: ApiKeyScope::parse(scope)
            .ok_or_else(|| backend(format!("unknown scope {scope}")))?,
        created_at: row.try_get(5).map_err(backend)?,
        revoked_at: row.try_get(6).map_err(backend)?,
    })
}
