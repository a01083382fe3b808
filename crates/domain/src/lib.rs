//! Tidemark's domain: the types and rules that need no IO.
//!
//! This crate must not depend on any database, HTTP or async runtime crate; every other
//! crate depends on it, and it depends on none of them.

pub mod account;
pub mod carriers;
pub mod clock;
pub mod container_number;
pub mod custom_fields;
pub mod domain_event;
pub mod ids;
pub mod job;
pub mod party;
pub mod pickup;
pub mod shipment;
pub mod timestamp_text;
pub mod tracking;
pub mod tracking_request;
pub mod tracking_update;
pub mod webhook;

pub use account::{Account, ApiKey, ApiKeyScope, ApiKeySecret};
pub use clock::{Clock, MockClock, ScaledClock, SystemClock};
pub use container_number::{ContainerNumber, ContainerNumberError};
pub use domain_event::DomainEvent;
pub use ids::{
    AccountId, ApiKeyId, ContainerId, DomainEventId, IdGenerator, JobId, NotificationLogId,
    PartyId, RawEventId, SequentialIds, ShipmentId, TrackingRequestId, TransportEventId, UuidV7Ids,
    WebhookId, WebhookNotificationId,
};
pub use job::{Job, JobState, NewJob, RetryPolicy};
pub use party::Party;
pub use shipment::{Container, RawEvent, ReportedEvent, Shipment, TransportEvent};
pub use tracking::{
    ContainerStatus, FailedReason, RequestNumberProblem, RequestType, TrackingRequestStatus,
    TransportEventName, validate_request_number,
};
pub use tracking_request::TrackingRequest;
pub use webhook::{DeliveryStatus, NotificationLog, Webhook, WebhookNotification};
