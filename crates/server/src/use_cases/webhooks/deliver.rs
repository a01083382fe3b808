//! Delivering notifications: one job per webhook drains its due notifications a few at a
//! time, the body rendered once and kept so retries send the same bytes, signed both ways,
//! and every attempt logged. Failed attempts are
//! retried with backoff until `MAX_DELIVERY_ATTEMPTS`; the scheduler's sweep re-queues
//! whatever is due, so a crash loses no notification.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tidemark_domain::webhook::{LOGGED_BODY_BYTES, failing_too_long, is_delivered, retry_at};
use tidemark_domain::{
    AccountId, DeliveryStatus, NotificationLog, NotificationLogId, ShipmentId, WebhookId,
    WebhookNotification, WebhookNotificationId,
};
use tidemark_store::{RecordedDelivery, StoreError};

use crate::parts::core::Core;
use crate::use_cases::queue::{self, JobKind};
use crate::use_cases::webhooks::address::AddressError;
use crate::use_cases::webhooks::payload::{ShipmentContext, delivery_document, shipment_contexts};
use crate::use_cases::webhooks::signing::{SigningSecret, standard_signatures, t49_signature};

/// How long a receiver has to answer.
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(15);
/// The `User-Agent` of every delivery.
pub const USER_AGENT_VALUE: &str = concat!("Tidemark-Webhooks/", env!("CARGO_PKG_VERSION"));

/// What a receiver answered, or why there was no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub request_headers: Vec<(String, String)>,
    pub status: Option<u16>,
    pub response_headers: Vec<(String, String)>,
    pub response_body: Option<String>,
    pub error: Option<String>,
    pub duration_ms: u64,
    /// The receiver's `Retry-After`, in seconds or as an HTTP date.
    pub retry_after: Option<chrono::Duration>,
}

impl Attempt {
    pub fn succeeded(&self) -> bool {
        self.status.is_some_and(is_delivered)
    }
}

/// The headers of one delivery: content type, user agent, both signatures, and the
/// webhook's own headers.
pub fn delivery_headers(
    msg_id: &str,
    timestamp: DateTime<Utc>,
    secrets: &[&str],
    body: &[u8],
    custom: &[(String, String)],
) -> Vec<(String, String)> {
    let signing: Vec<SigningSecret> = secrets.iter().map(|s| SigningSecret::new(*s)).collect();
    let mut headers = vec![
        ("Content-Type".to_owned(), "application/json".to_owned()),
        ("User-Agent".to_owned(), USER_AGENT_VALUE.to_owned()),
        (
            "X-T49-Webhook-Signature".to_owned(),
            secrets
                .first()
                .map(|secret| t49_signature(secret, body))
                .unwrap_or_default(),
        ),
        ("webhook-id".to_owned(), msg_id.to_owned()),
        (
            "webhook-timestamp".to_owned(),
            timestamp.timestamp().to_string(),
        ),
        (
            "webhook-signature".to_owned(),
            standard_signatures(&signing, msg_id, timestamp.timestamp(), body),
        ),
    ];
    headers.extend(custom.iter().cloned());
    headers
}

/// Reads at most [`LOGGED_BODY_BYTES`] of a response body, so a receiver cannot make a
/// delivery read without end.
async fn capped_body(response: &mut reqwest::Response) -> Result<String, reqwest::Error> {
    let mut body: Vec<u8> = Vec::new();
    while body.len() < LOGGED_BODY_BYTES {
        match response.chunk().await? {
            Some(chunk) => body.extend_from_slice(&chunk),
            None => break,
        }
    }
    let cut = body.len() > LOGGED_BODY_BYTES;
    body.truncate(LOGGED_BODY_BYTES);
    let mut text = String::from_utf8_lossy(&body).into_owned();
    // A character cut in half at the end is dropped rather than shown as garbage.
    if cut && text.ends_with('\u{FFFD}') {
        text.pop();
    }
    Ok(text)
}

/// A `Retry-After` value: delay-seconds or an HTTP date.
fn retry_after(
    headers: &reqwest::header::HeaderMap,
    now: DateTime<Utc>,
) -> Option<chrono::Duration> {
    let value = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(seconds) = value.parse::<i64>() {
        return (seconds >= 0).then(|| chrono::Duration::seconds(seconds));
    }
    let at = DateTime::parse_from_rfc2822(value)
        .ok()?
        .with_timezone(&Utc);
    (at > now).then(|| at - now)
}

/// Why a send failed without a response, in words for the delivery log.
fn describe(error: &reqwest::Error) -> String {
    if let Some(refused) = AddressError::find_in(error) {
        return format!("refused address: {refused}");
    }
    if error.is_timeout() {
        return format!("timeout after {} s", DELIVERY_TIMEOUT.as_secs());
    }
    if error.is_connect() {
        return "connection refused or unreachable".to_owned();
    }
    format!("request failed: {error}")
}

/// POSTs `body` to `url` once with `headers`, never following redirects.
pub async fn send(
    client: &reqwest::Client,
    url: &str,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    now: DateTime<Utc>,
) -> Attempt {
    let started = Instant::now();
    let mut map = HeaderMap::new();
    for (name, value) in &headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            map.append(name, value);
        }
    }
    let result = client
        .post(url)
        .headers(map)
        .timeout(DELIVERY_TIMEOUT)
        .body(body)
        .send()
        .await;
    let mut attempt = Attempt {
        request_headers: headers,
        status: None,
        response_headers: Vec::new(),
        response_body: None,
        error: None,
        duration_ms: 0,
        retry_after: None,
    };
    match result {
        Ok(mut response) => {
            attempt.retry_after = retry_after(response.headers(), now);
            attempt.status = Some(response.status().as_u16());
            attempt.response_headers = response
                .headers()
                .iter()
                .map(|(name, value)| {
                    (
                        name.as_str().to_owned(),
                        String::from_utf8_lossy(value.as_bytes()).into_owned(),
                    )
                })
                .collect();
            match capped_body(&mut response).await {
                Ok(text) => attempt.response_body = Some(text),
                Err(error) => attempt.error = Some(describe(&error)),
            }
        }
        Err(error) => attempt.error = Some(describe(&error)),
    }
    attempt.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    attempt
}

/// How many deliveries to one webhook run at once: a slow receiver holds one job and this
/// many connections, never every worker.
pub const PER_WEBHOOK: usize = 4;
/// Notifications claimed at once: several rounds of [`PER_WEBHOOK`], well within the lease
/// even when every receiver times out (32 / 4 × 15 s = 2 minutes).
const CLAIM_BATCH: u32 = 32;
/// How long a claimed notification stays with its worker before another may take it.
const CLAIM_LEASE_SECONDS: i64 = 180;
/// A delivery job gives its webhook back to the queue after this long, well inside the
/// job's lease, so the sweep can hand it to any worker.
const DRAIN_FOR: Duration = Duration::from_secs(60);

/// Queues a delivery job for each webhook with notifications due (new ones at once, failed
/// ones at their retry time). One job per webhook at a time: its key is the webhook.
pub async fn queue_due(core: &Core) -> Result<usize, StoreError> {
    let due = core
        .store
        .webhooks_with_due_notifications(core.clock.now(), 10_000)
        .await?;
    for (account, webhook) in &due {
        queue(core, *account, *webhook).await?;
    }
    Ok(due.len())
}

/// Queues the delivery of a webhook's due notifications.
pub async fn queue(core: &Core, account: AccountId, webhook: WebhookId) -> Result<(), StoreError> {
    queue::enqueue(
        core,
        JobKind::DeliverWebhook,
        serde_json::json!({"account_id": account, "webhook_id": webhook}),
        Some(format!("deliver:{webhook}")),
        core.clock.now(),
    )
    .await
    .map(|_| ())
}

/// What one delivery attempt did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    Delivered,
    WillRetry,
    GaveUp,
}

/// Attempts made but not yet recorded are written together once this long has passed
/// since the last write (and at the end of each claimed batch): one commit per batch
/// instead of one per delivery, while a slow receiver's logs still appear within seconds.
const RECORD_EVERY: Duration = Duration::from_secs(1);

/// Delivers a webhook's due notifications, [`PER_WEBHOOK`] at a time, until none is due or
/// [`DRAIN_FOR`] has passed. Returns how many attempts were recorded.
pub async fn drain(
    core: &Core,
    client: &reqwest::Client,
    account: AccountId,
    webhook_id: WebhookId,
) -> Result<usize, StoreError> {
    let started = Instant::now();
    let mut attempts = 0;
    // One delivery job per webhook runs at a time, so a claim still held now was left by an
    // attempt that died (a killed process): its notifications go out now, not after the
    // claim's lease. A receiver may then get one twice, under the same `webhook-id`.
    let released = core
        .store
        .release_notification_claims(webhook_id, core.clock.now())
        .await?;
    if released > 0 {
        tracing::info!(released, webhook.id = %webhook_id, "took back notifications a stopped delivery had claimed");
    }
    while started.elapsed() < DRAIN_FOR {
        let webhook = core.store.webhook(account, webhook_id).await?;
        let now = core.clock.now();
        let lease_until = now + chrono::Duration::seconds(CLAIM_LEASE_SECONDS);
        let claimed = core
            .store
            .claim_notifications(webhook_id, now, lease_until, CLAIM_BATCH)
            .await?;
        if claimed.is_empty() {
            break;
        }
        // Rendered once (first attempt) and kept; the shipments they need load together.
        let mut unrendered: Vec<ShipmentId> = claimed
            .iter()
            .filter(|n| n.body.is_none())
            .filter_map(|n| n.shipment_id)
            .collect();
        unrendered.sort_unstable();
        unrendered.dedup();
        let contexts = shipment_contexts(core, account, &unrendered).await?;
        let mut unrecorded = Vec::with_capacity(claimed.len());
        let mut last_recorded = Instant::now();
        let mut failure = None;
        for round in claimed.chunks(PER_WEBHOOK) {
            let results = futures::future::join_all(
                round
                    .iter()
                    .map(|n| attempt_one(core, client, &webhook, n, &contexts)),
            )
            .await;
            for result in results {
                match result {
                    Ok(made) => unrecorded.push(made),
                    Err(error) => failure = Some(error),
                }
            }
            if failure.is_some() {
                break;
            }
            if last_recorded.elapsed() >= RECORD_EVERY {
                attempts += record(core, &webhook, std::mem::take(&mut unrecorded)).await?;
                last_recorded = Instant::now();
            }
        }
        attempts += record(core, &webhook, unrecorded).await?;
        if let Some(error) = failure {
            return Err(error);
        }
    }
    Ok(attempts)
}

/// Records attempts in one transaction, then the webhook's health and the metrics.
/// Returns how many were recorded: an attempt whose notification another worker took
/// after our claim lapsed is dropped, and nothing is lost.
async fn record(
    core: &Core,
    webhook: &tidemark_domain::Webhook,
    made: Vec<(RecordedDelivery, Delivery)>,
) -> Result<usize, StoreError> {
    if made.is_empty() {
        return Ok(0);
    }
    let (deliveries, outcomes): (Vec<_>, Vec<_>) = made.into_iter().unzip();
    let recorded = core.store.record_deliveries(&deliveries).await?;
    let mut count = 0;
    let mut any_delivered = false;
    for (outcome, _) in outcomes.iter().zip(&recorded).filter(|(_, kept)| **kept) {
        count += 1;
        any_delivered |= *outcome == Delivery::Delivered;
        metrics::counter!("tidemark_webhook_attempts_total", "outcome" => match outcome {
            Delivery::Delivered => "delivered",
            Delivery::WillRetry => "retry",
            Delivery::GaveUp => "failed",
        })
        .increment(1);
    }
    if count > 0 {
        record_health(core, webhook, any_delivered, core.clock.now()).await?;
    }
    Ok(count)
}

/// Makes one delivery attempt of a claimed notification; returns what to record.
async fn attempt_one(
    core: &Core,
    client: &reqwest::Client,
    webhook: &tidemark_domain::Webhook,
    notification: &WebhookNotification,
    contexts: &HashMap<ShipmentId, ShipmentContext>,
) -> Result<(RecordedDelivery, Delivery), StoreError> {
    let now = core.clock.now();
    let body = match &notification.body {
        Some(body) => body.clone(),
        None => {
            let document = delivery_document(core, notification, contexts).await?;
            serde_json::to_string(&document).map_err(StoreError::backend)?
        }
    };
    let custom: Vec<(String, String)> = webhook
        .headers
        .iter()
        .map(|h| (h.name.clone(), h.value.clone()))
        .collect();
    let headers = delivery_headers(
        &notification.id.to_string(),
        now,
        &webhook.signing_secrets(now),
        body.as_bytes(),
        &custom,
    );
    let attempt = if webhook.active {
        send(
            client,
            &webhook.url,
            headers,
            body.clone().into_bytes(),
            now,
        )
        .await
    } else {
        Attempt {
            request_headers: headers,
            status: None,
            response_headers: Vec::new(),
            response_body: None,
            error: Some("webhook is inactive".to_owned()),
            duration_ms: 0,
            retry_after: None,
        }
    };
    let mut updated = notification.clone();
    updated.attempts += 1;
    updated.body = Some(body);
    updated.updated_at = core.clock.now();
    let outcome = if attempt.succeeded() {
        updated.delivery_status = DeliveryStatus::Succeeded;
        updated.next_attempt_at = None;
        Delivery::Delivered
    } else if let Some(next) = retry_at(
        updated.attempts,
        now,
        rand::random_range(-1.0..=1.0),
        attempt.retry_after,
    )
    .filter(|_| webhook.active)
    {
        updated.next_attempt_at = Some(next);
        Delivery::WillRetry
    } else {
        updated.delivery_status = DeliveryStatus::Failed;
        updated.next_attempt_at = None;
        Delivery::GaveUp
    };
    let log = NotificationLog {
        id: NotificationLogId::new(core.ids.as_ref()),
        notification_id: notification.id,
        account_id: notification.account_id,
        attempt: updated.attempts,
        started_at: now,
        duration_ms: attempt.duration_ms,
        response_status: attempt.status,
        response_headers: attempt.response_headers,
        response_body: attempt.response_body,
        error: attempt.error,
    };
    Ok((
        RecordedDelivery {
            notification: updated,
            attempts_before: notification.attempts,
            log: Some(log),
        },
        outcome,
    ))
}

/// Keeps `failing_since` true and deactivates a webhook that has failed every delivery
/// for `DEACTIVATE_AFTER_DAYS`; the user re-enables it with `PATCH`.
async fn record_health(
    core: &Core,
    webhook: &tidemark_domain::Webhook,
    delivered: bool,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    if !webhook.active {
        return Ok(());
    }
    let (failing_since, deactivate) = if delivered {
        (None, false)
    } else {
        let since = webhook.failing_since.unwrap_or(now);
        (Some(since), failing_too_long(since, now))
    };
    if failing_since == webhook.failing_since && !deactivate {
        return Ok(());
    }
    if deactivate {
        tracing::warn!(webhook.id = %webhook.id, "deactivating a webhook that failed every delivery for days");
    }
    core.store
        .record_webhook_health(webhook.account_id, webhook.id, failing_since, deactivate)
        .await
}

/// Sends a notification again: it becomes pending and due now, whatever happened before
/// (Terminal49 cannot replay; Tidemark can).
pub async fn redeliver(
    core: &Core,
    account: AccountId,
    id: WebhookNotificationId,
) -> Result<WebhookNotification, StoreError> {
    let notification = core.store.notification(account, id).await?;
    let mut again = notification.clone();
    again.delivery_status = DeliveryStatus::Pending;
    again.next_attempt_at = Some(core.clock.now());
    again.updated_at = core.clock.now();
    core.store
        .record_delivery(&again, notification.attempts, None)
        .await?;
    queue(core, account, again.webhook_id).await?;
    Ok(again)
}
