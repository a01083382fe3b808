//! Carrier connectors: the [`Carrier`] interface, the DCSA Track & Trace 2.2 HTTP client
//! ([`dcsa::DcsaClient`]), reading its responses into carrier events and mapping those onto
//! Terminal49's milestones, and the sandbox carrier ([`sandbox`], SCAC `TEST`), which serves
//! made-up voyages over the same protocol.
//!
//! Depends on `domain` only, never on the store, the geo data or the server: the server's use
//! cases call in here and decide what to persist, and hand the sandbox its port list.

pub mod carrier;
pub mod dcsa;
pub mod event;
pub mod profile;
pub mod sandbox;
pub mod tls;

pub use carrier::{Carrier, ReferenceKind, TrackingQuery};
pub use event::{
    CarrierError, CarrierEvent, CarrierSnapshot, Classifier, DcsaCode, DocumentReference,
    DocumentType, EmptyIndicator, EventKind, ModeOfTransport, Reference, TransportCall,
};
