//! Carrier connectors: reading DCSA Track & Trace responses into carrier events, mapping those
//! onto Terminal49's milestones, and (to come) the HTTP client and the sandbox carrier.
//!
//! Depends on `domain` only, never on the store or the server: the server's use cases call
//! in here and decide what to persist.

pub mod dcsa;
pub mod event;

pub use event::{
    CarrierError, CarrierEvent, CarrierSnapshot, Classifier, DcsaCode, DocumentReference,
    DocumentType, EmptyIndicator, EventKind, ModeOfTransport, Reference, TransportCall,
};
