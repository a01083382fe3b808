//! Webhooks: managing subscriptions, delivering notifications, their payloads and the
//! catalogue's examples. The pure parts (the catalogue of events, signing, the guard against
//! deliveries to private addresses, validation of what users register) are the
//! `tidemark-webhooks` crate, re-exported here at their old paths.

pub mod deliver;
pub mod egress;
pub mod example;
pub mod manage;
pub mod payload;

pub use tidemark_webhooks::{address, catalogue, headers, signing};
