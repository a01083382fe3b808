//! Webhooks and their notifications: who is told about which events, and how each
//! delivery went. Notifications are made from domain events in the same transaction as
//! the change they announce (see [`notifications_for`]).

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::domain_event::DomainEvent;
use crate::ids::{
    AccountId, ContainerId, DomainEventId, NotificationLogId, ShipmentId, WebhookId,
    WebhookNotificationId,
};

/// How long a rotated-out secret keeps signing deliveries beside the new one.
pub const SECRET_OVERLAP_HOURS: i64 = 24;

/// The published retry schedule: the wait after each failed attempt (12 retries over about
/// three days), before jitter.
pub const RETRY_SCHEDULE_MINUTES: [i64; 12] = [
    1,
    5,
    10,
    30,
    60,
    2 * 60,
    4 * 60,
    6 * 60,
    8 * 60,
    12 * 60,
    16 * 60,
    20 * 60,
];

/// The first attempt and 12 retries, as Terminal49.
pub const MAX_DELIVERY_ATTEMPTS: u32 = 13;

/// The longest a receiver's `Retry-After` may push a retry back.
pub const MAX_RETRY_AFTER_HOURS: i64 = 24;

/// A webhook that has failed every delivery for this long is deactivated.
pub const DEACTIVATE_AFTER_DAYS: i64 = 5;

/// A custom header added to every delivery of a webhook.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookHeader {
    pub name: String,
    pub value: String,
}

/// A subscription: deliveries of `events` to `url`, signed with `secret`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Webhook {
    pub id: WebhookId,
    pub account_id: AccountId,
    pub url: String,
    pub active: bool,
    pub events: Vec<String>,
    pub headers: Vec<WebhookHeader>,
    pub secret: String,
    /// The secret before the last rotation, still signing until `previous_secret_expires_at`.
    pub previous_secret: Option<String>,
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
    /// Since when every delivery has failed; `None` after a success.
    pub failing_since: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Whether a webhook whose deliveries have all failed since `since` should be
/// deactivated at `now`.
pub fn failing_too_long(since: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    now - since >= Duration::days(DEACTIVATE_AFTER_DAYS)
}

impl Webhook {
    /// The secrets that sign a delivery made at `now`: the current one, and the previous
    /// one during its overlap.
    pub fn signing_secrets(&self, now: DateTime<Utc>) -> Vec<&str> {
        let mut secrets = vec![self.secret.as_str()];
        if let (Some(previous), Some(until)) =
            (&self.previous_secret, self.previous_secret_expires_at)
            && now < until
        {
            secrets.push(previous);
        }
        secrets
    }

    /// Replaces the secret, keeping the old one for [`SECRET_OVERLAP_HOURS`].
    pub fn rotate_secret(&mut self, new_secret: String, now: DateTime<Utc>) {
        let old = std::mem::replace(&mut self.secret, new_secret);
        self.previous_secret = Some(old);
        self.previous_secret_expires_at = Some(now + Duration::hours(SECRET_OVERLAP_HOURS));
        self.updated_at = now;
    }

    pub fn subscribes_to(&self, event: &str) -> bool {
        self.active && self.events.iter().any(|e| e == event)
    }
}

crate::string_enum! {
    /// Where a notification's delivery stands.
    pub enum DeliveryStatus {
        Pending => "pending",
        Succeeded => "succeeded",
        Failed => "failed",
    }
}

/// One event to deliver to one webhook.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WebhookNotification {
    pub id: WebhookNotificationId,
    pub account_id: AccountId,
    pub webhook_id: WebhookId,
    pub domain_event_id: DomainEventId,
    pub event: String,
    pub reference_type: String,
    pub reference_id: Uuid,
    pub shipment_id: Option<ShipmentId>,
    pub container_id: Option<ContainerId>,
    /// The domain event's payload (a `container.updated` changeset).
    pub payload: Option<serde_json::Value>,
    pub delivery_status: DeliveryStatus,
    /// Delivery attempts made so far.
    pub attempts: u32,
    /// When the next attempt is due, while pending.
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// The body as first sent, so every retry sends the same bytes.
    pub body: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What happened on one delivery attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NotificationLog {
    pub id: NotificationLogId,
    pub notification_id: WebhookNotificationId,
    pub account_id: AccountId,
    pub attempt: u32,
    pub started_at: DateTime<Utc>,
    pub duration_ms: u64,
    pub response_status: Option<u16>,
    pub response_headers: Vec<(String, String)>,
    /// The first 4 KiB of the response body.
    pub response_body: Option<String>,
    /// Why the attempt failed without a response: timeout, refused address, …
    pub error: Option<String>,
}

/// The most of a response body a delivery log keeps.
pub const LOGGED_BODY_BYTES: usize = 4096;

/// Whether a receiver's status counts as delivered (Terminal49: 200, 201, 202 or 204).
pub fn is_delivered(status: u16) -> bool {
    matches!(status, 200 | 201 | 202 | 204)
}

/// When to try again after `attempts` failed attempts, following
/// [`RETRY_SCHEDULE_MINUTES`] with `jitter` (a fraction in -1..=1, spreading retries by up to
/// ±10 % so receivers that failed together are not retried together), pushed back to a
/// receiver's `Retry-After` (at most [`MAX_RETRY_AFTER_HOURS`]). `None` once the attempts
/// are exhausted.
pub fn retry_at(
    attempts: u32,
    now: DateTime<Utc>,
    jitter: f64,
    retry_after: Option<Duration>,
) -> Option<DateTime<Utc>> {
    if attempts >= MAX_DELIVERY_ATTEMPTS {
        return None;
    }
    let index = usize::try_from(attempts.saturating_sub(1)).unwrap_or(usize::MAX);
    let minutes = *RETRY_SCHEDULE_MINUTES.get(index)?;
    let base = Duration::minutes(minutes);
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a tenth of at most 20 hours in milliseconds fits in i64"
    )]
    let spread = (base.num_milliseconds() as f64 * 0.1 * jitter.clamp(-1.0, 1.0)) as i64;
    let scheduled = base + Duration::milliseconds(spread);
    let asked = retry_after
        .map(|wait| wait.min(Duration::hours(MAX_RETRY_AFTER_HOURS)))
        .unwrap_or_default();
    Some(now + scheduled.max(asked))
}

/// A notification's id, derived from the event and the webhook, so fanning the same event
/// out twice cannot notify twice, and ids keep the event's time order.
pub fn notification_id(event: DomainEventId, webhook: WebhookId) -> WebhookNotificationId {
    let mut bytes = *event.0.as_bytes();
    let digest = Sha256::digest(webhook.0.as_bytes());
    // Keep the UUIDv7 timestamp (bytes 0..6) and version nibble; mix the webhook into the
    // random part.
    for (byte, mixed) in bytes.iter_mut().skip(8).zip(digest.iter()) {
        *byte ^= mixed;
    }
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    WebhookNotificationId(Uuid::from_bytes(bytes))
}

/// The notifications a batch of domain events makes: one per event and active webhook that
/// subscribed to it, none while the shipment's notifications are paused (tracking stopped
/// by a user).
pub fn notifications_for(
    events: &[DomainEvent],
    webhooks: &[Webhook],
    paused: bool,
) -> Vec<WebhookNotification> {
    if paused {
        return Vec::new();
    }
    let mut notifications = Vec::new();
    for event in events {
        for webhook in webhooks
            .iter()
            .filter(|w| w.account_id == event.account_id && w.subscribes_to(&event.event))
        {
            notifications.push(WebhookNotification {
                id: notification_id(event.id, webhook.id),
                account_id: event.account_id,
                webhook_id: webhook.id,
                domain_event_id: event.id,
                event: event.event.clone(),
                reference_type: event.reference_type.clone(),
                reference_id: event.reference_id,
                shipment_id: event.shipment_id,
                container_id: event.container_id,
                payload: event.payload.clone(),
                delivery_status: DeliveryStatus::Pending,
                attempts: 0,
                next_attempt_at: Some(event.created_at),
                body: None,
                created_at: event.created_at,
                updated_at: event.created_at,
            });
        }
    }
    notifications
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::ids::{IdGenerator, SequentialIds};

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0)
            .single()
            .expect("valid")
    }

    fn webhook(ids: &SequentialIds, account: AccountId, events: &[&str]) -> Webhook {
        Webhook {
            id: WebhookId::new(ids),
            account_id: account,
            url: "https://example.com/hook".to_owned(),
            active: true,
            events: events.iter().map(|e| (*e).to_owned()).collect(),
            headers: Vec::new(),
            secret: "whsec_current".to_owned(),
            previous_secret: None,
            previous_secret_expires_at: None,
            failing_since: None,
            created_at: at(),
            updated_at: at(),
        }
    }

    fn event(ids: &SequentialIds, account: AccountId, name: &str) -> DomainEvent {
        DomainEvent {
            id: DomainEventId::new(ids),
            account_id: account,
            event: name.to_owned(),
            reference_type: "transport_event".to_owned(),
            reference_id: ids.next_id(),
            shipment_id: None,
            container_id: None,
            payload: None,
            created_at: at(),
        }
    }

    #[test]
    fn each_subscribed_active_webhook_gets_one_notification_per_event() {
        let ids = SequentialIds::default();
        let account = AccountId::new(&ids);
        let mut inactive = webhook(&ids, account, &["container.transport.vessel_loaded"]);
        inactive.active = false;
        let hooks = vec![
            webhook(&ids, account, &["container.transport.vessel_loaded"]),
            webhook(&ids, account, &["tracking_request.succeeded"]),
            inactive,
        ];
        let events = vec![
            event(&ids, account, "container.transport.vessel_loaded"),
            event(&ids, account, "container.transport.vessel_loaded"),
        ];

        let made = notifications_for(&events, &hooks, false);

        assert_eq!(made.len(), 2);
        assert!(made.iter().all(|n| n.webhook_id == hooks[0].id));
        assert_ne!(made[0].id, made[1].id);
    }

    #[test]
    fn paused_notifications_make_none() {
        let ids = SequentialIds::default();
        let account = AccountId::new(&ids);
        let hooks = vec![webhook(&ids, account, &["container.created"])];
        let events = vec![event(&ids, account, "container.created")];

        assert!(notifications_for(&events, &hooks, true).is_empty());
    }

    #[test]
    fn another_accounts_webhook_is_never_notified() {
        let ids = SequentialIds::default();
        let hooks = vec![webhook(&ids, AccountId::new(&ids), &["container.created"])];
        let events = vec![event(&ids, AccountId::new(&ids), "container.created")];

        assert!(notifications_for(&events, &hooks, false).is_empty());
    }

    #[test]
    fn a_notification_id_is_the_same_for_the_same_event_and_webhook_only() {
        let ids = SequentialIds::default();
        let (event, first, second) = (
            DomainEventId::new(&ids),
            WebhookId::new(&ids),
            WebhookId::new(&ids),
        );

        assert_eq!(notification_id(event, first), notification_id(event, first));
        assert_ne!(
            notification_id(event, first),
            notification_id(event, second)
        );
        assert_eq!(
            notification_id(event, first).0.as_bytes()[..6],
            event.0.as_bytes()[..6],
            "keeps the event's time order"
        );
    }

    #[test]
    fn a_rotated_secret_signs_beside_the_new_one_for_a_day() {
        let ids = SequentialIds::default();
        let mut hook = webhook(&ids, AccountId::new(&ids), &["container.created"]);

        hook.rotate_secret("whsec_new".to_owned(), at());

        assert_eq!(
            hook.signing_secrets(at()),
            vec!["whsec_new", "whsec_current"]
        );
        assert_eq!(
            hook.signing_secrets(at() + Duration::hours(SECRET_OVERLAP_HOURS)),
            vec!["whsec_new"]
        );
    }

    #[test]
    fn retries_follow_the_published_schedule_then_stop() {
        assert_eq!(
            retry_at(1, at(), 0.0, None),
            Some(at() + Duration::minutes(1))
        );
        assert_eq!(
            retry_at(3, at(), 0.0, None),
            Some(at() + Duration::minutes(10))
        );
        assert_eq!(
            retry_at(12, at(), 0.0, None),
            Some(at() + Duration::hours(20))
        );
        assert_eq!(retry_at(MAX_DELIVERY_ATTEMPTS, at(), 0.0, None), None);
    }

    #[test]
    fn twelve_retries_span_about_three_days() {
        let total: i64 = RETRY_SCHEDULE_MINUTES.iter().sum();

        assert!((60 * 60..=80 * 60).contains(&total), "{total} minutes");
        assert_eq!(
            RETRY_SCHEDULE_MINUTES.len() + 1,
            MAX_DELIVERY_ATTEMPTS as usize
        );
    }

    #[test]
    fn jitter_spreads_a_retry_by_at_most_a_tenth() {
        let early = retry_at(5, at(), -1.0, None).expect("retried");
        let late = retry_at(5, at(), 1.0, None).expect("retried");

        assert_eq!(early, at() + Duration::minutes(54));
        assert_eq!(late, at() + Duration::minutes(66));
    }

    #[test]
    fn a_receivers_retry_after_pushes_the_retry_back_within_a_day() {
        let asked = retry_at(1, at(), 0.0, Some(Duration::minutes(30)));
        let greedy = retry_at(1, at(), 0.0, Some(Duration::days(7)));
        let shorter = retry_at(5, at(), 0.0, Some(Duration::seconds(5)));

        assert_eq!(asked, Some(at() + Duration::minutes(30)));
        assert_eq!(greedy, Some(at() + Duration::hours(MAX_RETRY_AFTER_HOURS)));
        assert_eq!(
            shorter,
            Some(at() + Duration::hours(1)),
            "never sooner than scheduled"
        );
    }

    #[test]
    fn only_the_documented_statuses_count_as_delivered() {
        assert!(is_delivered(200) && is_delivered(204));
        assert!(!is_delivered(203) && !is_delivered(301) && !is_delivered(500));
    }
}
