//! DCSA Track & Trace 2.2: the HTTP connector, parsing `GET /v2/events` responses and mapping
//! the events onto Terminal49's `container.transport.*` names.
//!
//! Spec: `reference/dcsa/TNT_v2.2.0-resolved.yaml`; notes in `reference/NOTES-geodata.md` §1.

pub mod client;
mod mapping;
pub(crate) mod parse;

pub use client::{DcsaAuth, DcsaClient, DcsaClientError, plain_segments};
pub use mapping::{JourneyStage, LegContext, LocationRole, t49_event_name};
pub use parse::parse_events;
