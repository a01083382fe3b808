//! How Tidemark's records look as JSON:API resources: the document model and each resource's
//! attributes, relationships and links. Shared by the API's responses and the webhook
//! payloads (a notification carries the same resources the API serves). It imports neither
//! `api/` nor `use_cases`.

pub mod containers;
pub mod custom_fields;
pub mod documents;
pub mod email_submissions;
pub mod jsonapi;
pub mod metro_areas;
pub mod ports;
pub mod shipments;
pub mod terminals;
pub mod tracking_requests;
pub mod vessels;
pub mod webhook_notifications;
