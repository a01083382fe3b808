//! Webhooks, their notifications and delivery logs on SQLite.

use chrono::{DateTime, Utc};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, params};
use tidemark_domain::webhook::{WebhookHeader, notifications_for};
use tidemark_domain::{
    AccountId, ContainerId, DeliveryStatus, DomainEvent, DomainEventId, NotificationLog,
    NotificationLogId, ShipmentId, Webhook, WebhookId, WebhookNotification, WebhookNotificationId,
};
use tidemark_store::{
    NotificationFilter, PageRequest, Paged, RecordedDelivery, StoreError, StoreResult,
};
use uuid::Uuid;

use crate::convert::{backend, from_ts, to_ts, uuid_from};
use crate::shipments::paged;

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

fn opt_ts(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<DateTime<Utc>>> {
    let text: Option<String> = row.get(index)?;
    text.map(|_| from_ts(row, index)).transpose()
}

fn opt_uuid(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<Uuid>> {
    let text: Option<String> = row.get(index)?;
    text.map(|_| uuid_from(row, index)).transpose()
}

fn json_text<T: serde::Serialize>(value: &T) -> StoreResult<String> {
    serde_json::to_string(value).map_err(backend)
}

const WEBHOOK_COLUMNS: &str = "id, account_id, url, active, events, headers, secret, \
    previous_secret, previous_secret_expires_at, created_at, updated_at, failing_since";

fn webhook_from_row(row: &Row<'_>) -> rusqlite::Result<Webhook> {
    Ok(Webhook {
        id: WebhookId(uuid_from(row, 0)?),
        account_id: AccountId(uuid_from(row, 1)?),
        url: row.get(2)?,
        active: row.get(3)?,
        events: json_column(row, 4)?,
        headers: json_column::<Vec<WebhookHeader>>(row, 5)?,
        secret: row.get(6)?,
        previous_secret: row.get(7)?,
        previous_secret_expires_at: opt_ts(row, 8)?,
        created_at: from_ts(row, 9)?,
        updated_at: from_ts(row, 10)?,
        failing_since: opt_ts(row, 11)?,
    })
}

pub fn create(conn: &Connection, w: &Webhook) -> StoreResult<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO webhooks ({WEBHOOK_COLUMNS})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
    ))
    .and_then(|mut stmt| {
        stmt.execute(params![
            w.id.0.to_string(),
            w.account_id.0.to_string(),
            w.url,
            w.active,
            json_text(&w.events).map_err(|e| invalid(4, e.to_string()))?,
            json_text(&w.headers).map_err(|e| invalid(5, e.to_string()))?,
            w.secret,
            w.previous_secret,
            w.previous_secret_expires_at.map(to_ts),
            to_ts(w.created_at),
            to_ts(w.updated_at),
            w.failing_since.map(to_ts),
        ])
    })
    .map_err(backend)?;
    Ok(())
}

pub fn get(conn: &Connection, account: AccountId, id: WebhookId) -> StoreResult<Webhook> {
    conn.prepare_cached(&format!(
        "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?1 AND account_id = ?2"
    ))
    .and_then(|mut stmt| {
        stmt.query_row([id.0.to_string(), account.0.to_string()], webhook_from_row)
            .optional()
    })
    .map_err(backend)?
    .ok_or(StoreError::NotFound)
}

pub fn list(
    conn: &Connection,
    account: AccountId,
    page: PageRequest,
) -> StoreResult<Paged<Webhook>> {
    paged(
        conn,
        WEBHOOK_COLUMNS,
        "FROM webhooks WHERE account_id = ?",
        "created_at DESC, id DESC",
        vec![Value::Text(account.0.to_string())],
        page,
        webhook_from_row,
    )
}

pub fn update(conn: &Connection, w: &Webhook) -> StoreResult<()> {
    let changed = conn
        .prepare_cached(
            "UPDATE webhooks SET url = ?3, active = ?4, events = ?5, headers = ?6, secret = ?7,
                previous_secret = ?8, previous_secret_expires_at = ?9, updated_at = ?10
             WHERE id = ?1 AND account_id = ?2",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                w.id.0.to_string(),
                w.account_id.0.to_string(),
                w.url,
                w.active,
                json_text(&w.events).map_err(|e| invalid(5, e.to_string()))?,
                json_text(&w.headers).map_err(|e| invalid(6, e.to_string()))?,
                w.secret,
                w.previous_secret,
                w.previous_secret_expires_at.map(to_ts),
                to_ts(w.updated_at),
            ])
        })
        .map_err(backend)?;
    if changed == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub fn record_health(
    conn: &Connection,
    account: AccountId,
    id: WebhookId,
    failing_since: Option<DateTime<Utc>>,
    deactivate: bool,
) -> StoreResult<()> {
    let changed = conn
        .prepare_cached(
            "UPDATE webhooks SET failing_since = ?3,
                active = CASE WHEN ?4 THEN 0 ELSE active END
             WHERE id = ?1 AND account_id = ?2",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                id.0.to_string(),
                account.0.to_string(),
                failing_since.map(to_ts),
                deactivate,
            ])
        })
        .map_err(backend)?;
    if changed == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub fn delete(conn: &mut Connection, account: AccountId, id: WebhookId) -> StoreResult<()> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let (id, account) = (id.0.to_string(), account.0.to_string());
    tx.execute(
        "DELETE FROM webhook_notification_logs WHERE notification_id IN
            (SELECT id FROM webhook_notifications WHERE webhook_id = ?1 AND account_id = ?2)",
        [&id, &account],
    )
    .map_err(backend)?;
    tx.execute(
        "DELETE FROM webhook_notifications WHERE webhook_id = ?1 AND account_id = ?2",
        [&id, &account],
    )
    .map_err(backend)?;
    let deleted = tx
        .execute(
            "DELETE FROM webhooks WHERE id = ?1 AND account_id = ?2",
            [&id, &account],
        )
        .map_err(backend)?;
    if deleted == 0 {
        return Err(StoreError::NotFound);
    }
    tx.commit().map_err(backend)
}

const NOTIFICATION_COLUMNS: &str = "id, account_id, webhook_id, domain_event_id, event, \
    reference_type, reference_id, shipment_id, container_id, delivery_status, attempts, \
    next_attempt_at, body, created_at, updated_at, payload";

fn notification_from_row(row: &Row<'_>) -> rusqlite::Result<WebhookNotification> {
    let status: String = row.get(9)?;
    Ok(WebhookNotification {
        id: WebhookNotificationId(uuid_from(row, 0)?),
        account_id: AccountId(uuid_from(row, 1)?),
        webhook_id: WebhookId(uuid_from(row, 2)?),
        domain_event_id: DomainEventId(uuid_from(row, 3)?),
        event: row.get(4)?,
        reference_type: row.get(5)?,
        reference_id: uuid_from(row, 6)?,
        shipment_id: opt_uuid(row, 7)?.map(ShipmentId),
        container_id: opt_uuid(row, 8)?.map(ContainerId),
        delivery_status: DeliveryStatus::parse(&status)
            .ok_or_else(|| invalid(9, format!("unknown delivery status {status}")))?,
        attempts: row.get(10)?,
        next_attempt_at: opt_ts(row, 11)?,
        body: row.get(12)?,
        created_at: from_ts(row, 13)?,
        updated_at: from_ts(row, 14)?,
        payload: row
            .get::<_, Option<String>>(15)?
            .map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(|e| invalid(15, e.to_string()))?,
    })
}

/// Makes the notifications of `events` for the account's webhooks, inside the
/// transaction that records the change.
pub fn fan_out(tx: &Connection, events: &[DomainEvent], paused: bool) -> StoreResult<()> {
    let Some(first) = events.first() else {
        return Ok(());
    };
    let webhooks: Vec<Webhook> = tx
        .prepare_cached(&format!(
            "SELECT {WEBHOOK_COLUMNS} FROM webhooks WHERE account_id = ?1 AND active"
        ))
        .and_then(|mut stmt| {
            stmt.query_map([first.account_id.0.to_string()], webhook_from_row)
                .and_then(Iterator::collect)
        })
        .map_err(backend)?;
    if webhooks.is_empty() {
        return Ok(());
    }
    let mut insert = tx
        .prepare_cached(&format!(
            "INSERT INTO webhook_notifications ({NOTIFICATION_COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
             ON CONFLICT (id) DO NOTHING"
        ))
        .map_err(backend)?;
    for n in notifications_for(events, &webhooks, paused) {
        insert
            .execute(params![
                n.id.0.to_string(),
                n.account_id.0.to_string(),
                n.webhook_id.0.to_string(),
                n.domain_event_id.0.to_string(),
                n.event,
                n.reference_type,
                n.reference_id.to_string(),
                n.shipment_id.map(|id| id.0.to_string()),
                n.container_id.map(|id| id.0.to_string()),
                n.delivery_status.as_str(),
                n.attempts,
                n.next_attempt_at.map(to_ts),
                n.body,
                to_ts(n.created_at),
                to_ts(n.updated_at),
                n.payload.as_ref().map(serde_json::Value::to_string),
            ])
            .map_err(backend)?;
    }
    Ok(())
}

pub fn notification(
    conn: &Connection,
    account: AccountId,
    id: WebhookNotificationId,
) -> StoreResult<WebhookNotification> {
    conn.prepare_cached(&format!(
        "SELECT {NOTIFICATION_COLUMNS} FROM webhook_notifications
         WHERE id = ?1 AND account_id = ?2"
    ))
    .and_then(|mut stmt| {
        stmt.query_row(
            [id.0.to_string(), account.0.to_string()],
            notification_from_row,
        )
        .optional()
    })
    .map_err(backend)?
    .ok_or(StoreError::NotFound)
}

pub fn list_notifications(
    conn: &Connection,
    account: AccountId,
    filter: &NotificationFilter,
    page: PageRequest,
) -> StoreResult<Paged<WebhookNotification>> {
    let mut clauses = vec!["account_id = ?".to_owned()];
    let mut values = vec![Value::Text(account.0.to_string())];
    if let Some(event) = &filter.event {
        clauses.push("event = ?".to_owned());
        values.push(Value::Text(event.clone()));
    }
    if let Some(status) = filter.delivery_status {
        clauses.push("delivery_status = ?".to_owned());
        values.push(Value::Text(status.as_str().to_owned()));
    }
    if let Some(webhook) = filter.webhook {
        clauses.push("webhook_id = ?".to_owned());
        values.push(Value::Text(webhook.0.to_string()));
    }
    if let Some(from) = filter.created_from {
        clauses.push("created_at >= ?".to_owned());
        values.push(Value::Text(to_ts(from)));
    }
    if let Some(to) = filter.created_to {
        clauses.push("created_at <= ?".to_owned());
        values.push(Value::Text(to_ts(to)));
    }
    paged(
        conn,
        NOTIFICATION_COLUMNS,
        &format!("FROM webhook_notifications WHERE {}", clauses.join(" AND ")),
        "created_at DESC, id DESC",
        values,
        page,
        notification_from_row,
    )
}

pub fn webhooks_with_due_notifications(
    conn: &Connection,
    due_before: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<(AccountId, WebhookId)>> {
    conn.prepare_cached(
        "SELECT DISTINCT account_id, webhook_id FROM webhook_notifications
         WHERE delivery_status = 'pending' AND next_attempt_at <= ?1 LIMIT ?2",
    )
    .and_then(|mut stmt| {
        stmt.query_map(params![to_ts(due_before), limit], |row| {
            Ok((AccountId(uuid_from(row, 0)?), WebhookId(uuid_from(row, 1)?)))
        })
        .and_then(Iterator::collect)
    })
    .map_err(backend)
}

pub fn claim_notifications(
    conn: &mut Connection,
    webhook: WebhookId,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<WebhookNotification>> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let mut claimed: Vec<WebhookNotification> = tx
        .prepare_cached(&format!(
            "SELECT {NOTIFICATION_COLUMNS} FROM webhook_notifications
             WHERE webhook_id = ?1 AND delivery_status = 'pending' AND next_attempt_at <= ?2
             ORDER BY next_attempt_at, id LIMIT ?3"
        ))
        .and_then(|mut stmt| {
            stmt.query_map(
                params![webhook.0.to_string(), to_ts(now), limit],
                notification_from_row,
            )
            .and_then(Iterator::collect)
        })
        .map_err(backend)?;
    {
        let mut lease = tx
            .prepare_cached(
                "UPDATE webhook_notifications SET next_attempt_at = ?2, claimed = 1 WHERE id = ?1",
            )
            .map_err(backend)?;
        for n in &mut claimed {
            lease
                .execute(params![n.id.0.to_string(), to_ts(lease_until)])
                .map_err(backend)?;
            n.next_attempt_at = Some(lease_until);
        }
    }
    tx.commit().map_err(backend)?;
    Ok(claimed)
}

pub fn release_claims(
    conn: &Connection,
    webhook: WebhookId,
    now: DateTime<Utc>,
) -> StoreResult<u64> {
    let released = conn
        .prepare_cached(
            "UPDATE webhook_notifications SET next_attempt_at = ?2, claimed = 0
             WHERE webhook_id = ?1 AND claimed = 1 AND delivery_status = 'pending'",
        )
        .and_then(|mut stmt| stmt.execute(params![webhook.0.to_string(), to_ts(now)]))
        .map_err(backend)?;
    Ok(released as u64)
}

const LOG_COLUMNS: &str = "id, notification_id, account_id, attempt, started_at, duration_ms, \
    response_status, response_headers, response_body, error";

fn log_from_row(row: &Row<'_>) -> rusqlite::Result<NotificationLog> {
    let duration: i64 = row.get(5)?;
    Ok(NotificationLog {
        id: NotificationLogId(uuid_from(row, 0)?),
        notification_id: WebhookNotificationId(uuid_from(row, 1)?),
        account_id: AccountId(uuid_from(row, 2)?),
        attempt: row.get(3)?,
        started_at: from_ts(row, 4)?,
        duration_ms: u64::try_from(duration).map_err(|e| invalid(5, e.to_string()))?,
        response_status: row.get(6)?,
        response_headers: json_column(row, 7)?,
        response_body: row.get(8)?,
        error: row.get(9)?,
    })
}

pub fn record_deliveries(
    conn: &mut Connection,
    deliveries: &[RecordedDelivery],
) -> StoreResult<Vec<bool>> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let mut recorded = Vec::with_capacity(deliveries.len());
    for delivery in deliveries {
        let n = &delivery.notification;
        let changed = tx
            .prepare_cached(
                "UPDATE webhook_notifications SET delivery_status = ?3, attempts = ?4,
                    next_attempt_at = ?5, body = ?6, updated_at = ?7, claimed = 0
                 WHERE id = ?1 AND account_id = ?2 AND attempts = ?8",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    n.id.0.to_string(),
                    n.account_id.0.to_string(),
                    n.delivery_status.as_str(),
                    n.attempts,
                    n.next_attempt_at.map(to_ts),
                    n.body,
                    to_ts(n.updated_at),
                    delivery.attempts_before,
                ])
            })
            .map_err(backend)?;
        recorded.push(changed > 0);
        let Some(log) = delivery.log.as_ref().filter(|_| changed > 0) else {
            continue;
        };
        tx.prepare_cached(&format!(
            "INSERT INTO webhook_notification_logs ({LOG_COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
        ))
        .and_then(|mut stmt| {
            stmt.execute(params![
                log.id.0.to_string(),
                log.notification_id.0.to_string(),
                log.account_id.0.to_string(),
                log.attempt,
                to_ts(log.started_at),
                i64::try_from(log.duration_ms).unwrap_or(i64::MAX),
                log.response_status,
                json_text(&log.response_headers).map_err(|e| invalid(7, e.to_string()))?,
                log.response_body,
                log.error,
            ])
        })
        .map_err(backend)?;
    }
    tx.commit().map_err(backend)?;
    Ok(recorded)
}

pub fn logs(
    conn: &Connection,
    account: AccountId,
    ids: &[WebhookNotificationId],
) -> StoreResult<Vec<NotificationLog>> {
    let ids: Vec<String> = ids.iter().map(|id| id.0.to_string()).collect();
    let ids = serde_json::to_string(&ids).map_err(backend)?;
    conn.prepare_cached(&format!(
        "SELECT {LOG_COLUMNS} FROM webhook_notification_logs
         WHERE notification_id IN (SELECT value FROM json_each(?1)) AND account_id = ?2
         ORDER BY notification_id, attempt, id"
    ))
    .and_then(|mut stmt| {
        stmt.query_map([ids, account.0.to_string()], log_from_row)
            .and_then(Iterator::collect)
    })
    .map_err(backend)
}
