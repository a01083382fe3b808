//! Tracking requests and idempotency keys on SQLite.

use chrono::{DateTime, Utc};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, params, params_from_iter};
use tidemark_domain::{
    AccountId, ApiKeyId, FailedReason, PartyId, RequestType, ShipmentId, TrackingRequest,
    TrackingRequestId, TrackingRequestStatus,
};
use tidemark_store::{
    IdempotencyState, PageRequest, Paged, StoreError, StoreResult, TrackingRequestFilter,
};

use crate::convert::{backend, from_ts, on_unique, to_ts, uuid_from};

pub(crate) const COLUMNS: &str = "id, account_id, request_type, request_number, scac, ref_numbers, \
                       shipment_tags, status, failed_reason, is_retrying, retry_count, \
                       shipment_id, initial_custom_fields, created_at, updated_at, \
                       customer_id, submitted_by, polled_at";

fn invalid(index: usize, what: impl Into<String>) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        index,
        rusqlite::types::Type::Text,
        what.into().into(),
    )
}

fn json_column<T: serde::de::DeserializeOwned>(row: &Row<'_>, index: usize) -> rusqlite::Result<T> {
    let text: String = row.get(index)?;
    serde_json::from_str(&text).map_err(|e| invalid(index, e.to_string()))
}

pub(crate) fn from_row(row: &Row<'_>) -> rusqlite::Result<TrackingRequest> {
    let request_type: String = row.get(2)?;
    let status: String = row.get(7)?;
    let failed_reason: Option<String> = row.get(8)?;
    let shipment_id: Option<String> = row.get(11)?;
    let initial_custom_fields: Option<String> = row.get(12)?;
    let customer_id: Option<String> = row.get(15)?;
    let submitted_by: Option<String> = row.get(16)?;
    Ok(TrackingRequest {
        id: TrackingRequestId(uuid_from(row, 0)?),
        account_id: AccountId(uuid_from(row, 1)?),
        request_type: RequestType::parse(&request_type)
            .ok_or_else(|| invalid(2, format!("unknown request type {request_type}")))?,
        request_number: row.get(3)?,
        scac: row.get(4)?,
        ref_numbers: json_column(row, 5)?,
        shipment_tags: json_column(row, 6)?,
        status: TrackingRequestStatus::parse(&status)
            .ok_or_else(|| invalid(7, format!("unknown status {status}")))?,
        failed_reason: failed_reason
            .map(|reason| {
                FailedReason::parse(&reason)
                    .ok_or_else(|| invalid(8, format!("unknown failed reason {reason}")))
            })
            .transpose()?,
        is_retrying: row.get(9)?,
        retry_count: row.get(10)?,
        shipment_id: shipment_id
            .map(|id| uuid::Uuid::parse_str(&id).map(ShipmentId))
            .transpose()
            .map_err(|e| invalid(11, e.to_string()))?,
        initial_custom_fields: initial_custom_fields
            .map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(|e| invalid(12, e.to_string()))?,
        created_at: from_ts(row, 13)?,
        updated_at: from_ts(row, 14)?,
        customer_id: customer_id
            .map(|id| uuid::Uuid::parse_str(&id).map(PartyId))
            .transpose()
            .map_err(|e| invalid(15, e.to_string()))?,
        submitted_by: submitted_by
            .map(|id| uuid::Uuid::parse_str(&id).map(ApiKeyId))
            .transpose()
            .map_err(|e| invalid(16, e.to_string()))?,
        polled_at: row
            .get::<_, Option<String>>(17)?
            .map(|text| {
                DateTime::parse_from_rfc3339(&text)
                    .map(|at| at.with_timezone(&Utc))
                    .map_err(|e| invalid(17, e.to_string()))
            })
            .transpose()?,
    })
}

fn json_text<T: serde::Serialize>(value: &T) -> StoreResult<String> {
    serde_json::to_string(value).map_err(backend)
}

pub fn create(conn: &Connection, request: &TrackingRequest) -> StoreResult<()> {
    conn.execute(
        &format!(
            "INSERT INTO tracking_requests ({COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)"
        ),
        params![
            request.id.0.to_string(),
            request.account_id.0.to_string(),
            request.request_type.as_str(),
            request.request_number,
            request.scac,
            json_text(&request.ref_numbers)?,
            json_text(&request.shipment_tags)?,
            request.status.as_str(),
            request.failed_reason.map(FailedReason::as_str),
            request.is_retrying,
            request.retry_count,
            request.shipment_id.map(|id| id.0.to_string()),
            request
                .initial_custom_fields
                .as_ref()
                .map(json_text)
                .transpose()?,
            to_ts(request.created_at),
            to_ts(request.updated_at),
            request.customer_id.map(|id| id.0.to_string()),
            request.submitted_by.map(|id| id.0.to_string()),
            request.polled_at.map(to_ts),
        ],
    )
    .map_err(|e| on_unique(e, "tracking_requests_active_number"))?;
    Ok(())
}

pub fn get(
    conn: &Connection,
    account: AccountId,
    id: TrackingRequestId,
) -> StoreResult<TrackingRequest> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM tracking_requests WHERE id = ?1 AND account_id = ?2"
    ))
    .and_then(|mut stmt| {
        stmt.query_row([id.0.to_string(), account.0.to_string()], from_row)
            .optional()
    })
    .map_err(backend)?
    .ok_or(StoreError::NotFound)
}

pub fn by_ids(
    conn: &Connection,
    account: AccountId,
    ids: &[TrackingRequestId],
) -> StoreResult<Vec<TrackingRequest>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = ids.iter().map(|id| id.0.to_string()).collect();
    let ids = serde_json::to_string(&ids).map_err(backend)?;
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tracking_requests
             WHERE account_id = ?1 AND id IN (SELECT value FROM json_each(?2))"
        ))
        .map_err(backend)?;
    stmt.query_map(params![account.0.to_string(), ids], from_row)
        .and_then(Iterator::collect)
        .map_err(backend)
}

/// `%`, `_` and `\` in user input are literals, not wildcards.
pub(crate) fn like_pattern(text: &str) -> String {
    let escaped = text
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

pub fn list(
    conn: &Connection,
    account: AccountId,
    filter: &TrackingRequestFilter,
    page: PageRequest,
) -> StoreResult<Paged<TrackingRequest>> {
    let mut clauses = vec!["account_id = ?".to_owned()];
    let mut values: Vec<Value> = vec![Value::Text(account.0.to_string())];
    if let Some(q) = &filter.q {
        clauses.push(
            "(request_number LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM json_each(ref_numbers) \
             WHERE json_each.value LIKE ? ESCAPE '\\'))"
                .to_owned(),
        );
        let pattern = like_pattern(q);
        values.push(Value::Text(pattern.clone()));
        values.push(Value::Text(pattern));
    }
    if let Some(number) = &filter.request_number {
        clauses.push("request_number = ?".to_owned());
        values.push(Value::Text(number.trim().to_uppercase()));
    }
    if let Some(status) = filter.status {
        clauses.push("status = ?".to_owned());
        values.push(Value::Text(status.as_str().to_owned()));
    }
    if let Some(scac) = &filter.scac {
        clauses.push("scac = ?".to_owned());
        values.push(Value::Text(scac.trim().to_uppercase()));
    }
    let mut range = |column: &str, op: &str, at: Option<DateTime<Utc>>| {
        if let Some(at) = at {
            clauses.push(format!("{column} {op} ?"));
            values.push(Value::Text(to_ts(at)));
        }
    };
    range("created_at", ">=", filter.created_from);
    range("created_at", "<=", filter.created_to);
    range("updated_at", ">=", filter.updated_from);
    range("updated_at", "<=", filter.updated_to);
    let condition = clauses.join(" AND ");

    let total: i64 = conn
        .query_row(
            &format!("SELECT count(*) FROM tracking_requests WHERE {condition}"),
            params_from_iter(values.iter()),
            |row| row.get(0),
        )
        .map_err(backend)?;
    values.push(Value::Integer(i64::from(page.limit)));
    values.push(Value::Integer(
        i64::try_from(page.offset).unwrap_or(i64::MAX),
    ));
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {COLUMNS} FROM tracking_requests WHERE {condition}
             ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?"
        ))
        .map_err(backend)?;
    let items = stmt
        .query_map(params_from_iter(values.iter()), from_row)
        .and_then(Iterator::collect)
        .map_err(backend)?;
    Ok(Paged {
        items,
        total: u64::try_from(total).unwrap_or(0),
    })
}

pub fn update_ref_numbers(
    conn: &Connection,
    account: AccountId,
    id: TrackingRequestId,
    ref_numbers: &[String],
    now: DateTime<Utc>,
) -> StoreResult<TrackingRequest> {
    conn.query_row(
        &format!(
            "UPDATE tracking_requests SET ref_numbers = ?3, updated_at = ?4
             WHERE id = ?1 AND account_id = ?2 RETURNING {COLUMNS}"
        ),
        params![
            id.0.to_string(),
            account.0.to_string(),
            json_text(&ref_numbers)?,
            to_ts(now)
        ],
        from_row,
    )
    .optional()
    .map_err(backend)?
    .ok_or(StoreError::NotFound)
}

pub fn begin_idempotent(
    conn: &Connection,
    account: AccountId,
    key: &str,
    fingerprint: &str,
    now: DateTime<Utc>,
) -> StoreResult<IdempotencyState> {
    let inserted = conn
        .execute(
            "INSERT INTO idempotency_keys (account_id, key, fingerprint, created_at)
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
            params![account.0.to_string(), key, fingerprint, to_ts(now)],
        )
        .map_err(backend)?;
    if inserted == 1 {
        return Ok(IdempotencyState::Started);
    }
    let (fingerprint, status, body): (String, Option<u16>, Option<Vec<u8>>) = conn
        .query_row(
            "SELECT fingerprint, status, body FROM idempotency_keys
             WHERE account_id = ?1 AND key = ?2",
            params![account.0.to_string(), key],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .map_err(backend)?;
    Ok(match status {
        Some(status) => IdempotencyState::Completed {
            fingerprint,
            status,
            body: body.unwrap_or_default(),
        },
        None => IdempotencyState::InProgress,
    })
}

pub fn complete_idempotent(
    conn: &Connection,
    account: AccountId,
    key: &str,
    status: u16,
    body: &[u8],
) -> StoreResult<()> {
    conn.execute(
        "UPDATE idempotency_keys SET status = ?3, body = ?4 WHERE account_id = ?1 AND key = ?2",
        params![account.0.to_string(), key, status, body],
    )
    .map_err(backend)?;
    Ok(())
}

pub fn abandon_idempotent(conn: &Connection, account: AccountId, key: &str) -> StoreResult<()> {
    conn.execute(
        "DELETE FROM idempotency_keys WHERE account_id = ?1 AND key = ?2 AND status IS NULL",
        params![account.0.to_string(), key],
    )
    .map_err(backend)?;
    Ok(())
}

pub fn purge_idempotency_keys(conn: &Connection, before: DateTime<Utc>) -> StoreResult<u64> {
    let deleted = conn
        .execute(
            "DELETE FROM idempotency_keys WHERE created_at < ?1",
            [to_ts(before)],
        )
        .map_err(backend)?;
    Ok(deleted as u64)
}

pub fn unresolved(conn: &Connection, limit: u32) -> StoreResult<Vec<TrackingRequest>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tracking_requests
             WHERE status IN ('pending', 'awaiting_manifest') ORDER BY created_at, id LIMIT ?1"
        ))
        .map_err(backend)?;
    stmt.query_map([limit], from_row)
        .and_then(Iterator::collect)
        .map_err(backend)
}

pub fn active_for(
    conn: &Connection,
    scac: &str,
    numbers: &[String],
) -> StoreResult<Vec<TrackingRequest>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tracking_requests
             WHERE scac = ?1 AND status IN ('pending', 'awaiting_manifest', 'created')
               AND request_number IN (SELECT value FROM json_each(?2))
             ORDER BY id"
        ))
        .map_err(backend)?;
    stmt.query_map(params![scac, json_text(&numbers)?], from_row)
        .and_then(Iterator::collect)
        .map_err(backend)
}
