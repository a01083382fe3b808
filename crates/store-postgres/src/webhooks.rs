//! Webhooks, their notifications and delivery logs on PostgreSQL.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use tidemark_domain::webhook::{WebhookHeader, notifications_for};
use tidemark_domain::{
    AccountId, ContainerId, DeliveryStatus, DomainEvent, DomainEventId, NotificationLog,
    NotificationLogId, ShipmentId, Webhook, WebhookId, WebhookNotification, WebhookNotificationId,
};
use tidemark_store::{
    NotificationFilter, PageRequest, Paged, RecordedDelivery, StoreError, StoreResult,
};
use tokio_postgres::Row;
use tokio_postgres::types::Json;
use uuid::Uuid;

use crate::convert::{backend, query_all, query_one, to_int};
use crate::shipments::paged;
use crate::tracking_requests::Condition;
use crate::unnest::Rows;

const WEBHOOK_COLUMNS: &str = "id, account_id, url, active, events, headers, secret, \
    previous_secret, previous_secret_expires_at, created_at, updated_at, failing_since";

fn webhook_from_row(row: &Row) -> StoreResult<Webhook> {
    let Json(events): Json<Vec<String>> = row.try_get(4).map_err(backend)?;
    let Json(headers): Json<Vec<WebhookHeader>> = row.try_get(5).map_err(backend)?;
    Ok(Webhook {
        id: WebhookId(row.try_get(0).map_err(backend)?),
        account_id: AccountId(row.try_get(1).map_err(backend)?),
        url: row.try_get(2).map_err(backend)?,
        active: row.try_get(3).map_err(backend)?,
        events,
        headers,
        secret: row.try_get(6).map_err(backend)?,
        previous_secret: row.try_get(7).map_err(backend)?,
        previous_secret_expires_at: row.try_get(8).map_err(backend)?,
        created_at: row.try_get(9).map_err(backend)?,
        updated_at: row.try_get(10).map_err(backend)?,
        failing_since: row.try_get(11).map_err(backend)?,
    })
}

pub async fn create(client: &impl GenericClient, w: &Webhook) -> StoreResult<()> {
    let statement = client
        .prepare_cached(&format!(
            "INSERT INTO webhooks ({WEBHOOK_COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        ))
        .await
        .map_err(backend)?;
    client
        .execute(
            &statement,
            &[
                &w.id.0,
                &w.account_id.0,
                &w.url,
                &w.active,
                &Json(&w.events),
                &Json(&w.headers),
                &w.secret,
                &w.previous_secret,
                &w.previous_secret_expires_at,
                &w.created_at,
                &w.updated_at,
                &w.failing_since,
            ],
        )
        .await
        .map_err(backend)?;
    Ok(())
}

pub async fn get(
    client: &impl GenericClient,
    account: AccountId,
    id: WebhookId,
) -> StoreResult<Webhook> {
    query_one(
        client,
        &format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = $1 AND account_id = $2"),
        &[&id.0, &account.0],
        webhook_from_row,
    )
    .await
}

pub async fn list(
    client: &impl GenericClient,
    account: AccountId,
    page: PageRequest,
) -> StoreResult<Paged<Webhook>> {
    let mut condition = Condition::default();
    let placeholder = condition.bind(account.0);
    condition
        .clauses
        .push(format!("account_id = {placeholder}"));
    paged(
        client,
        WEBHOOK_COLUMNS,
        "FROM webhooks",
        condition,
        "created_at DESC, id DESC",
        page,
        webhook_from_row,
    )
    .await
}

pub async fn update(client: &impl GenericClient, w: &Webhook) -> StoreResult<()> {
    let statement = client
        .prepare_cached(
            "UPDATE webhooks SET url = $3, active = $4, events = $5, headers = $6, secret = $7,
                previous_secret = $8, previous_secret_expires_at = $9, updated_at = $10
             WHERE id = $1 AND account_id = $2",
        )
        .await
        .map_err(backend)?;
    let changed = client
        .execute(
            &statement,
            &[
                &w.id.0,
                &w.account_id.0,
                &w.url,
                &w.active,
                &Json(&w.events),
                &Json(&w.headers),
                &w.secret,
                &w.previous_secret,
                &w.previous_secret_expires_at,
                &w.updated_at,
            ],
        )
        .await
        .map_err(backend)?;
    if changed == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub async fn record_health(
    client: &impl GenericClient,
    account: AccountId,
    id: WebhookId,
    failing_since: Option<DateTime<Utc>>,
    deactivate: bool,
) -> StoreResult<()> {
    let statement = client
        .prepare_cached(
            "UPDATE webhooks SET failing_since = $3, active = active AND NOT $4
             WHERE id = $1 AND account_id = $2",
        )
        .await
        .map_err(backend)?;
    let changed = client
        .execute(
            &statement,
            &[&id.0, &account.0, &failing_since, &deactivate],
        )
        .await
        .map_err(backend)?;
    if changed == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub async fn delete(
    client: &mut deadpool_postgres::Client,
    account: AccountId,
    id: WebhookId,
) -> StoreResult<()> {
    let tx = client.transaction().await.map_err(backend)?;
    tx.execute(
        "DELETE FROM webhook_notification_logs WHERE notification_id IN
            (SELECT id FROM webhook_notifications WHERE webhook_id = $1 AND account_id = $2)",
        &[&id.0, &account.0],
    )
    .await
    .map_err(backend)?;
    tx.execute(
        "DELETE FROM webhook_notifications WHERE webhook_id = $1 AND account_id = $2",
        &[&id.0, &account.0],
    )
    .await
    .map_err(backend)?;
    let deleted = tx
        .execute(
            "DELETE FROM webhooks WHERE id = $1 AND account_id = $2",
            &[&id.0, &account.0],
        )
        .await
        .map_err(backend)?;
    if deleted == 0 {
        return Err(StoreError::NotFound);
    }
    tx.commit().await.map_err(backend)
}

const NOTIFICATION_COLUMNS: &str = "id, account_id, webhook_id, domain_event_id, event, \
    reference_type, reference_id, shipment_id, container_id, delivery_status, attempts, \
    next_attempt_at, body, created_at, updated_at, payload";

fn notification_from_row(row: &Row) -> StoreResult<WebhookNotification> {
    let status: &str = row.try_get(9).map_err(backend)?;
    let attempts: i32 = row.try_get(10).map_err(backend)?;
    Ok(WebhookNotification {
        id: WebhookNotificationId(row.try_get(0).map_err(backend)?),
        account_id: AccountId(row.try_get(1).map_err(backend)?),
        webhook_id: WebhookId(row.try_get(2).map_err(backend)?),
        domain_event_id: DomainEventId(row.try_get(3).map_err(backend)?),
        event: row.try_get(4).map_err(backend)?,
        reference_type: row.try_get(5).map_err(backend)?,
        reference_id: row.try_get(6).map_err(backend)?,
        shipment_id: row
            .try_get::<_, Option<Uuid>>(7)
            .map_err(backend)?
            .map(ShipmentId),
        container_id: row
            .try_get::<_, Option<Uuid>>(8)
            .map_err(backend)?
            .map(ContainerId),
        delivery_status: DeliveryStatus::parse(status)
            .ok_or_else(|| backend(format!("unknown delivery status {status}")))?,
        attempts: u32::try_from(attempts).map_err(backend)?,
        next_attempt_at: row.try_get(11).map_err(backend)?,
        body: row.try_get(12).map_err(backend)?,
        created_at: row.try_get(13).map_err(backend)?,
        updated_at: row.try_get(14).map_err(backend)?,
        payload: row.try_get(15).map_err(backend)?,
    })
}

/// Makes the notifications of `events` for the account's webhooks, inside the
/// transaction that records the change.
pub async fn fan_out(
    tx: &deadpool_postgres::Transaction<'_>,
    events: &[DomainEvent],
    paused: bool,
) -> StoreResult<()> {
    let Some(first) = events.first() else {
        return Ok(());
    };
    let webhooks = active_webhooks(tx, &[first.account_id.0]).await?;
    insert_notifications(tx, events, &webhooks, paused).await
}

/// The active webhooks of each of `accounts`, in one query: whom the notifications of
/// their changes go to.
pub(crate) async fn active_webhooks(
    client: &impl GenericClient,
    accounts: &[Uuid],
) -> StoreResult<Vec<Webhook>> {
    let statement = client
        .prepare_cached(&ACTIVE_WEBHOOKS_SQL)
        .await
        .map_err(backend)?;
    client
        .query(&statement, &[&accounts])
        .await
        .map_err(backend)?
        .iter()
        .map(webhook_from_row)
        .collect()
}

static ACTIVE_WEBHOOKS_SQL: LazyLock<String> = LazyLock::new(|| {
    format!("SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE account_id = ANY($1) AND active")
});

/// Stores a notification of each of `events` for each of `webhooks` subscribed to it.
pub(crate) async fn insert_notifications(
    tx: &deadpool_postgres::Transaction<'_>,
    events: &[DomainEvent],
    webhooks: &[Webhook],
    paused: bool,
) -> StoreResult<()> {
    let notifications = notifications_for(events, webhooks, paused);
    crate::unnest::insert(
        tx,
        "webhook_notifications",
        notification_rows(&notifications)?,
        "ON CONFLICT (id) DO NOTHING",
    )
    .await
}

/// Notifications as rows.
pub(crate) fn notification_rows(n: &[WebhookNotification]) -> StoreResult<Rows<'_>> {
    let uuids = |f: fn(&WebhookNotification) -> Uuid| n.iter().map(f).collect::<Vec<_>>();
    let optional =
        |f: fn(&WebhookNotification) -> Option<Uuid>| n.iter().map(f).collect::<Vec<_>>();
    let text = |f: fn(&WebhookNotification) -> Option<&str>| n.iter().map(f).collect::<Vec<_>>();
    let time =
        |f: fn(&WebhookNotification) -> Option<DateTime<Utc>>| n.iter().map(f).collect::<Vec<_>>();
    let attempts: Vec<i32> = n
        .iter()
        .map(|n| to_int(n.attempts))
        .collect::<StoreResult<_>>()?;
    Ok(Rows::new(n.len())
        .column("id", "uuid", uuids(|n| n.id.0))
        .column("account_id", "uuid", uuids(|n| n.account_id.0))
        .column("webhook_id", "uuid", uuids(|n| n.webhook_id.0))
        .column("domain_event_id", "uuid", uuids(|n| n.domain_event_id.0))
        .column("event", "text", text(|n| Some(n.event.as_str())))
        .column(
            "reference_type",
            "text",
            text(|n| Some(n.reference_type.as_str())),
        )
        .column("reference_id", "uuid", uuids(|n| n.reference_id))
        .column(
            "shipment_id",
            "uuid",
            optional(|n| n.shipment_id.map(|i| i.0)),
        )
        .column(
            "container_id",
            "uuid",
            optional(|n| n.container_id.map(|i| i.0)),
        )
        .column(
            "delivery_status",
            "text",
            text(|n| Some(n.delivery_status.as_str())),
        )
        .column("attempts", "int4", attempts)
        .column(
            "next_attempt_at",
            "timestamptz",
            time(|n| n.next_attempt_at),
        )
        .column("body", "text", text(|n| n.body.as_deref()))
        .column("created_at", "timestamptz", time(|n| Some(n.created_at)))
        .column("updated_at", "timestamptz", time(|n| Some(n.updated_at)))
        .column(
            "payload",
            "jsonb",
            n.iter().map(|n| n.payload.as_ref()).collect(),
        ))
}

pub async fn notification(
    client: &impl GenericClient,
    account: AccountId,
    id: WebhookNotificationId,
) -> StoreResult<WebhookNotification> {
    query_one(
        client,
        &format!(
            "SELECT {NOTIFICATION_COLUMNS} FROM webhook_notifications \
             WHERE id = $1 AND account_id = $2"
        ),
        &[&id.0, &account.0],
        notification_from_row,
    )
    .await
}

pub async fn list_notifications(
    client: &impl GenericClient,
    account: AccountId,
    filter: &NotificationFilter,
    page: PageRequest,
) -> StoreResult<Paged<WebhookNotification>> {
    let mut condition = Condition::default();
    let placeholder = condition.bind(account.0);
    condition
        .clauses
        .push(format!("account_id = {placeholder}"));
    if let Some(event) = &filter.event {
        let placeholder = condition.bind(event.clone());
        condition.clauses.push(format!("event = {placeholder}"));
    }
    if let Some(status) = filter.delivery_status {
        let placeholder = condition.bind(status.as_str().to_owned());
        condition
            .clauses
            .push(format!("delivery_status = {placeholder}"));
    }
    if let Some(webhook) = filter.webhook {
        let placeholder = condition.bind(webhook.0);
        condition
            .clauses
            .push(format!("webhook_id = {placeholder}"));
    }
    if let Some(from) = filter.created_from {
        let placeholder = condition.bind(from);
        condition
            .clauses
            .push(format!("created_at >= {placeholder}"));
    }
    if let Some(to) = filter.created_to {
        let placeholder = condition.bind(to);
        condition
            .clauses
            .push(format!("created_at <= {placeholder}"));
    }
    paged(
        client,
        NOTIFICATION_COLUMNS,
        "FROM webhook_notifications",
        condition,
        "created_at DESC, id DESC",
        page,
        notification_from_row,
    )
    .await
}

pub async fn webhooks_with_due_notifications(
    client: &impl GenericClient,
    due_before: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<(AccountId, WebhookId)>> {
    query_all(
        client,
        "SELECT DISTINCT account_id, webhook_id FROM webhook_notifications \
         WHERE delivery_status = 'pending' AND next_attempt_at <= $1 LIMIT $2",
        &[&due_before, &i64::from(limit)],
        |row| {
            Ok((
                AccountId(row.try_get(0).map_err(backend)?),
                WebhookId(row.try_get(1).map_err(backend)?),
            ))
        },
    )
    .await
}

pub async fn release_claims(
    client: &impl GenericClient,
    webhook: WebhookId,
    now: DateTime<Utc>,
) -> StoreResult<u64> {
    let statement = client
        .prepare_cached(
            "UPDATE webhook_notifications SET next_attempt_at = $2, claimed = false
             WHERE webhook_id = $1 AND claimed AND delivery_status = 'pending'",
        )
        .await
        .map_err(backend)?;
    client
        .execute(&statement, &[&webhook.0, &now])
        .await
        .map_err(backend)
}

pub async fn claim_notifications(
    client: &impl GenericClient,
    webhook: WebhookId,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<WebhookNotification>> {
    // SKIP LOCKED: workers claiming for the same webhook at once take different rows.
    let mut claimed = query_all(
        client,
        &format!(
            "UPDATE webhook_notifications SET next_attempt_at = $3, claimed = true WHERE id IN (
                SELECT id FROM webhook_notifications
                WHERE webhook_id = $1 AND delivery_status = 'pending' AND next_attempt_at <= $2
                ORDER BY next_attempt_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
             RETURNING {NOTIFICATION_COLUMNS}"
        ),
        &[&webhook.0, &now, &lease_until, &i64::from(limit)],
        notification_from_row,
    )
    .await?;
    claimed.sort_by_key(|n| (n.created_at, n.id));
    Ok(claimed)
}

const LOG_COLUMNS: &str = "id, notification_id, account_id, attempt, started_at, duration_ms, \
    response_status, response_headers, response_body, error";

fn log_from_row(row: &Row) -> StoreResult<NotificationLog> {
    let attempt: i32 = row.try_get(3).map_err(backend)?;
    let duration: i64 = row.try_get(5).map_err(backend)?;
    let status: Option<i32> = row.try_get(6).map_err(backend)?;
    let Json(headers): Json<Vec<(String, String)>> = row.try_get(7).map_err(backend)?;
    Ok(NotificationLog {
        id: NotificationLogId(row.try_get(0).map_err(backend)?),
        notification_id: WebhookNotificationId(row.try_get(1).map_err(backend)?),
        account_id: AccountId(row.try_get(2).map_err(backend)?),
        attempt: u32::try_from(attempt).map_err(backend)?,
        started_at: row.try_get(4).map_err(backend)?,
        duration_ms: u64::try_from(duration).map_err(backend)?,
        response_status: status.map(u16::try_from).transpose().map_err(backend)?,
        response_headers: headers,
        response_body: row.try_get(8).map_err(backend)?,
        error: row.try_get(9).map_err(backend)?,
    })
}

pub async fn record_deliveries(
    client: &mut deadpool_postgres::Client,
    deliveries: &[RecordedDelivery],
) -> StoreResult<Vec<bool>> {
    let tx = client.transaction().await.map_err(backend)?;
    let update = tx
        .prepare_cached(
            "UPDATE webhook_notifications SET delivery_status = $3, attempts = $4,
                next_attempt_at = $5, body = $6, updated_at = $7, claimed = false
             WHERE id = $1 AND account_id = $2 AND attempts = $8",
        )
        .await
        .map_err(backend)?;
    let insert_log = tx
        .prepare_cached(&format!(
            "INSERT INTO webhook_notification_logs ({LOG_COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ))
        .await
        .map_err(backend)?;
    let mut recorded = Vec::with_capacity(deliveries.len());
    for delivery in deliveries {
        let n = &delivery.notification;
        let changed = tx
            .execute(
                &update,
                &[
                    &n.id.0,
                    &n.account_id.0,
                    &n.delivery_status.as_str(),
                    &to_int(n.attempts)?,
                    &n.next_attempt_at,
                    &n.body,
                    &n.updated_at,
                    &to_int(delivery.attempts_before)?,
                ],
            )
            .await
            .map_err(backend)?;
        recorded.push(changed > 0);
        let Some(log) = delivery.log.as_ref().filter(|_| changed > 0) else {
            continue;
        };
        tx.execute(
            &insert_log,
            &[
                &log.id.0,
                &log.notification_id.0,
                &log.account_id.0,
                &to_int(log.attempt)?,
                &log.started_at,
                &i64::try_from(log.duration_ms).unwrap_or(i64::MAX),
                &log.response_status.map(i32::from),
                &Json(&log.response_headers),
                &log.response_body,
                &log.error,
            ],
        )
        .await
        .map_err(backend)?;
    }
    tx.commit().await.map_err(backend)?;
    Ok(recorded)
}

pub async fn logs(
    client: &impl GenericClient,
    account: AccountId,
    ids: &[WebhookNotificationId],
) -> StoreResult<Vec<NotificationLog>> {
    let ids: Vec<Uuid> = ids.iter().map(|id| id.0).collect();
    query_all(
        client,
        &format!(
            "SELECT {LOG_COLUMNS} FROM webhook_notification_logs \
             WHERE notification_id = ANY($1) AND account_id = $2 \
             ORDER BY notification_id, attempt, id"
        ),
        &[&ids, &account.0],
        log_from_row,
    )
    .await
}
