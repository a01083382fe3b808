//! Tracking requests and idempotency keys on PostgreSQL.
//!
//! The duplicate rule is the partial unique index `tracking_requests_active_number`; an
//! idempotency key is reserved by an `INSERT ... ON CONFLICT DO NOTHING` and, when taken,
//! read back to report its earlier use.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use tidemark_domain::{
    AccountId, ApiKeyId, FailedReason, PartyId, RequestType, ShipmentId, TrackingRequest,
    TrackingRequestId, TrackingRequestStatus,
};
use tidemark_store::{IdempotencyState, PageRequest, Paged, StoreResult, TrackingRequestFilter};
use tokio_postgres::Row;
use tokio_postgres::types::{Json, ToSql};

use crate::convert::{backend, on_unique, query_all, query_one, to_int};

pub(crate) const COLUMNS: &str = "id, account_id, request_type, request_number, scac, ref_numbers, \
                       shipment_tags, status, failed_reason, is_retrying, retry_count, \
                       shipment_id, initial_custom_fields, created_at, updated_at, \
                       customer_id, submitted_by, polled_at";

type Param = Box<dyn ToSql + Sync + Send>;

pub(crate) fn from_row(row: &Row) -> StoreResult<TrackingRequest> {
    let request_type: &str = row.try_get(2).map_err(backend)?;
    let status: &str = row.try_get(7).map_err(backend)?;
    let failed_reason: Option<&str> = row.try_get(8).map_err(backend)?;
    let Json(ref_numbers): Json<Vec<String>> = row.try_get(5).map_err(backend)?;
    let Json(shipment_tags): Json<Vec<String>> = row.try_get(6).map_err(backend)?;
    let retry_count: Option<i32> = row.try_get(10).map_err(backend)?;
    let shipment_id: Option<uuid::Uuid> = row.try_get(11).map_err(backend)?;
    Ok(TrackingRequest {
        id: TrackingRequestId(row.try_get(0).map_err(backend)?),
        account_id: AccountId(row.try_get(1).map_err(backend)?),
        request_type: RequestType::parse(request_type)
            .ok_or_else(|| backend(format!("unknown request type {request_type}")))?,
        request_number: row.try_get(3).map_err(backend)?,
        scac: row.try_get(4).map_err(backend)?,
        ref_numbers,
        shipment_tags,
        status: TrackingRequestStatus::parse(status)
            .ok_or_else(|| backend(format!("unknown status {status}")))?,
        failed_reason: failed_reason
            .map(|reason| {
                FailedReason::parse(reason)
                    .ok_or_else(|| backend(format!("unknown failed reason {reason}")))
            })
            .transpose()?,
        is_retrying: row.try_get(9).map_err(backend)?,
        retry_count: retry_count
            .map(u32::try_from)
            .transpose()
            .map_err(backend)?,
        shipment_id: shipment_id.map(ShipmentId),
        initial_custom_fields: row.try_get(12).map_err(backend)?,
        created_at: row.try_get(13).map_err(backend)?,
        updated_at: row.try_get(14).map_err(backend)?,
        customer_id: row
            .try_get::<_, Option<uuid::Uuid>>(15)
            .map_err(backend)?
            .map(PartyId),
        submitted_by: row
            .try_get::<_, Option<uuid::Uuid>>(16)
            .map_err(backend)?
            .map(ApiKeyId),
        polled_at: row.try_get(17).map_err(backend)?,
    })
}

pub async fn create(client: &impl GenericClient, request: &TrackingRequest) -> StoreResult<()> {
    let statement = client
        .prepare_cached(&format!(
            "INSERT INTO tracking_requests ({COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)"
        ))
        .await
        .map_err(backend)?;
    let retry_count = request.retry_count.map(to_int).transpose()?;
    client
        .execute(
            &statement,
            &[
                &request.id.0,
                &request.account_id.0,
                &request.request_type.as_str(),
                &request.request_number,
                &request.scac,
                &Json(&request.ref_numbers),
                &Json(&request.shipment_tags),
                &request.status.as_str(),
                &request.failed_reason.map(FailedReason::as_str),
                &request.is_retrying,
                &retry_count,
                &request.shipment_id.map(|id| id.0),
                &request.initial_custom_fields,
                &request.created_at,
                &request.updated_at,
                &request.customer_id.map(|id| id.0),
                &request.submitted_by.map(|id| id.0),
                &request.polled_at,
            ],
        )
        .await
        .map_err(|e| on_unique(e, "tracking_requests_active_number"))?;
    Ok(())
}

pub async fn get(
    client: &impl GenericClient,
    account: AccountId,
    id: TrackingRequestId,
) -> StoreResult<TrackingRequest> {
    query_one(
        client,
        &format!("SELECT {COLUMNS} FROM tracking_requests WHERE id = $1 AND account_id = $2"),
        &[&id.0, &account.0],
        from_row,
    )
    .await
}

pub async fn by_ids(
    client: &impl GenericClient,
    account: AccountId,
    ids: &[TrackingRequestId],
) -> StoreResult<Vec<TrackingRequest>> {
    let ids: Vec<uuid::Uuid> = ids.iter().map(|id| id.0).collect();
    query_all(
        client,
        &format!("SELECT {COLUMNS} FROM tracking_requests WHERE account_id = $1 AND id = ANY($2)"),
        &[&account.0, &ids],
        from_row,
    )
    .await
}

/// `%`, `_` and `\` in user input are literals, not wildcards (the queries say
/// `ESCAPE '\'`).
pub fn like_pattern(text: &str) -> String {
    let escaped = text
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

/// A `WHERE` condition with numbered parameters, built one clause at a time.
#[derive(Default)]
pub struct Condition {
    pub clauses: Vec<String>,
    values: Vec<Param>,
}

impl Condition {
    /// Adds `value` as the next parameter and returns its placeholder (`$n`).
    pub fn bind(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.values.push(Box::new(value));
        format!("${}", self.values.len())
    }

    pub fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.values
            .iter()
            .map(|value| value.as_ref() as &(dyn ToSql + Sync))
            .collect()
    }
}

fn condition(account: AccountId, filter: &TrackingRequestFilter) -> Condition {
    let mut condition = Condition::default();
    let placeholder = condition.bind(account.0);
    condition
        .clauses
        .push(format!("account_id = {placeholder}"));
    if let Some(q) = &filter.q {
        let placeholder = condition.bind(like_pattern(q));
        condition.clauses.push(format!(
            "(request_number ILIKE {placeholder} ESCAPE '\\' OR EXISTS (\
             SELECT 1 FROM jsonb_array_elements_text(ref_numbers) r \
             WHERE r ILIKE {placeholder} ESCAPE '\\'))"
        ));
    }
    if let Some(number) = &filter.request_number {
        let placeholder = condition.bind(number.trim().to_uppercase());
        condition
            .clauses
            .push(format!("request_number = {placeholder}"));
    }
    if let Some(status) = filter.status {
        let placeholder = condition.bind(status.as_str());
        condition.clauses.push(format!("status = {placeholder}"));
    }
    if let Some(scac) = &filter.scac {
        let placeholder = condition.bind(scac.trim().to_uppercase());
        condition.clauses.push(format!("scac = {placeholder}"));
    }
    for (column, op, at) in [
        ("created_at", ">=", filter.created_from),
        ("created_at", "<=", filter.created_to),
        ("updated_at", ">=", filter.updated_from),
        ("updated_at", "<=", filter.updated_to),
    ] {
        if let Some(at) = at {
            let placeholder = condition.bind(at);
            condition
                .clauses
                .push(format!("{column} {op} {placeholder}"));
        }
    }
    condition
}

pub async fn list(
    client: &impl GenericClient,
    account: AccountId,
    filter: &TrackingRequestFilter,
    page: PageRequest,
) -> StoreResult<Paged<TrackingRequest>> {
    let mut condition = condition(account, filter);
    let clauses = condition.clauses.join(" AND ");

    // The filters take a bounded number of shapes, so caching each statement is fine.
    let count = client
        .prepare_cached(&format!(
            "SELECT count(*) FROM tracking_requests WHERE {clauses}"
        ))
        .await
        .map_err(backend)?;
    let total: i64 = client
        .query_one(&count, &condition.params())
        .await
        .map_err(backend)?
        .try_get(0)
        .map_err(backend)?;

    let limit = condition.bind(i64::from(page.limit));
    let offset = condition.bind(i64::try_from(page.offset).unwrap_or(i64::MAX));
    let select = client
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tracking_requests WHERE {clauses}
             ORDER BY created_at DESC, id DESC LIMIT {limit} OFFSET {offset}"
        ))
        .await
        .map_err(backend)?;
    let items = client
        .query(&select, &condition.params())
        .await
        .map_err(backend)?
        .iter()
        .map(from_row)
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(Paged {
        items,
        total: u64::try_from(total).map_err(backend)?,
    })
}

pub async fn update_ref_numbers(
    client: &impl GenericClient,
    account: AccountId,
    id: TrackingRequestId,
    ref_numbers: &[String],
    now: DateTime<Utc>,
) -> StoreResult<TrackingRequest> {
    query_one(
        client,
        &format!(
            "UPDATE tracking_requests SET ref_numbers = $3, updated_at = $4
             WHERE id = $1 AND account_id = $2 RETURNING {COLUMNS}"
        ),
        &[&id.0, &account.0, &Json(ref_numbers), &now],
        from_row,
    )
    .await
}

pub async fn begin_idempotent(
    client: &impl GenericClient,
    account: AccountId,
    key: &str,
    fingerprint: &str,
    now: DateTime<Utc>,
) -> StoreResult<IdempotencyState> {
    let insert = client
        .prepare_cached(
            "INSERT INTO idempotency_keys (account_id, key, fingerprint, created_at)
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .await
        .map_err(backend)?;
    let inserted = client
        .execute(&insert, &[&account.0, &key, &fingerprint, &now])
        .await
        .map_err(backend)?;
    if inserted == 1 {
        return Ok(IdempotencyState::Started);
    }
    let select = client
        .prepare_cached(
            "SELECT fingerprint, status, body FROM idempotency_keys
             WHERE account_id = $1 AND key = $2",
        )
        .await
        .map_err(backend)?;
    // The row can vanish between the two statements (abandoned or purged); the caller
    // then sees a backend error and may retry, as it would after any transient failure.
    let row = client
        .query_opt(&select, &[&account.0, &key])
        .await
        .map_err(backend)?
        .ok_or_else(|| backend(format!("idempotency key {key:?} vanished while read back")))?;
    let status: Option<i32> = row.try_get(1).map_err(backend)?;
    Ok(match status {
        Some(status) => IdempotencyState::Completed {
            fingerprint: row.try_get(0).map_err(backend)?,
            status: u16::try_from(status).map_err(backend)?,
            body: row
                .try_get::<_, Option<Vec<u8>>>(2)
                .map_err(backend)?
                .unwrap_or_default(),
        },
        None => IdempotencyState::InProgress,
    })
}

pub async fn complete_idempotent(
    client: &impl GenericClient,
    account: AccountId,
    key: &str,
    status: u16,
    body: &[u8],
) -> StoreResult<()> {
    let statement = client
        .prepare_cached(
            "UPDATE idempotency_keys SET status = $3, body = $4
             WHERE account_id = $1 AND key = $2",
        )
        .await
        .map_err(backend)?;
    client
        .execute(&statement, &[&account.0, &key, &i32::from(status), &body])
        .await
        .map_err(backend)?;
    Ok(())
}

pub async fn abandon_idempotent(
    client: &impl GenericClient,
    account: AccountId,
    key: &str,
) -> StoreResult<()> {
    let statement = client
        .prepare_cached(
            "DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND status IS NULL",
        )
        .await
        .map_err(backend)?;
    client
        .execute(&statement, &[&account.0, &key])
        .await
        .map_err(backend)?;
    Ok(())
}

pub async fn purge_idempotency_keys(
    client: &impl GenericClient,
    before: DateTime<Utc>,
) -> StoreResult<u64> {
    client
        .execute(
            "DELETE FROM idempotency_keys WHERE created_at < $1",
            &[&before],
        )
        .await
        .map_err(backend)
}

/// Requests still waiting for the carrier, oldest first, across accounts.
pub async fn unresolved(
    client: &impl GenericClient,
    limit: u32,
) -> StoreResult<Vec<TrackingRequest>> {
    query_all(
        client,
        &format!(
            "SELECT {COLUMNS} FROM tracking_requests
             WHERE status IN ('pending', 'awaiting_manifest') ORDER BY created_at, id LIMIT $1"
        ),
        &[&i64::from(limit)],
        from_row,
    )
    .await
}

pub async fn active_for(
    client: &impl GenericClient,
    scac: &str,
    numbers: &[String],
) -> StoreResult<Vec<TrackingRequest>> {
    query_all(
        client,
        &format!(
            "SELECT {COLUMNS} FROM tracking_requests
             WHERE scac = $1 AND status IN ('pending', 'awaiting_manifest', 'created')
               AND request_number = ANY($2)
             ORDER BY id"
        ),
        &[&scac, &numbers],
        from_row,
    )
    .await
}
