//! `webhook_notification`: one event for one webhook, as receivers and the API see it.

use chrono::{DateTime, Utc};
use serde::Serialize;
use tidemark_domain::{NotificationLog, WebhookNotification};
use utoipa::ToSchema;

use crate::resources::jsonapi::{Relationships, Resource, ResourceIdentifier, timestamp};
use tidemark_webhooks::catalogue;

#[derive(Debug, Serialize, ToSchema)]
pub struct NotificationAttributes {
    pub id: String,
    pub event: String,
    /// `pending`, `succeeded` or `failed`.
    pub delivery_status: &'static str,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
}

/// The notification's `reference_object`: container events are presented as event
/// resources of their own (Terminal49's `container_created_event`, …), named by the
/// domain event.
pub fn reference_of(n: &WebhookNotification) -> ResourceIdentifier {
    match n.event.as_str() {
        "container.created" => {
            ResourceIdentifier::new("container_created_event", n.domain_event_id)
        }
        "container.updated" => {
            ResourceIdentifier::new("container_updated_event", n.domain_event_id)
        }
        _ => ResourceIdentifier::new(
            catalogue::event(&n.event).map_or("transport_event", |e| e.reference_type),
            n.reference_id,
        ),
    }
}

pub struct NotificationResource<'a> {
    pub notification: &'a WebhookNotification,
    pub logs: &'a [NotificationLog],
}

impl Resource for NotificationResource<'_> {
    const TYPE: &'static str = "webhook_notification";
    const PATH: &'static str = "webhook_notifications";
    type Attributes = NotificationAttributes;

    fn id(&self) -> String {
        self.notification.id.to_string()
    }

    fn attributes(&self) -> NotificationAttributes {
        let n = self.notification;
        NotificationAttributes {
            id: n.id.to_string(),
            event: n.event.clone(),
            delivery_status: n.delivery_status.as_str(),
            created_at: n.created_at,
        }
    }

    fn relationships(&self) -> Relationships {
        let n = self.notification;
        let relationships = if n.event.starts_with("document.") {
            // Terminal49's document events name their document as `document`.
            Relationships::default().one(
                "document",
                Some(ResourceIdentifier::new("document", n.reference_id)),
            )
        } else {
            Relationships::default()
        };
        relationships
            .one("reference_object", Some(reference_of(n)))
            .one(
                "webhook",
                Some(ResourceIdentifier::new("webhook", n.webhook_id)),
            )
            .many(
                "webhook_notification_logs",
                self.logs
                    .iter()
                    .map(|l| ResourceIdentifier::new("webhook_notification_log", l.id))
                    .collect(),
            )
    }
}
