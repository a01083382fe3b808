//! Carrier connectors: the [`Carrier`] interface, the carrier profiles ([`profile`]: what
//! each line's API speaks and wants, as reviewed data), credentials on requests ([`auth`]),
//! the connector for a protocol ([`connector`]), the DCSA Track & Trace 2.2 and 3.0 HTTP
//! clients ([`dcsa::DcsaClient`], [`dcsa3::Dcsa3Client`], picked by [`dcsa_client`]), reading
//! their responses into carrier events and mapping those onto Terminal49's milestones,
//! COSCO's own API ([`cosco`]), HMM's own gateway ([`hmm`]), and the sandbox carrier ([`sandbox`], SCAC `TEST`), which
//! serves made-up voyages over the same protocol.
//!
//! Depends on `domain`, and on `geo`'s port list for the lines that name places instead of
//! giving UN/LOCODEs (COSCO: a name's UN/LOCODE and time zone); never on the store or the
//! server: the server's use cases call in here and decide what to persist, and hand the
//! sandbox its port list.

pub mod auth;
pub mod carrier;
pub mod connector;
pub mod cosco;
pub mod dcsa;
pub mod dcsa3;
pub mod event;
pub mod hmm;
pub mod profile;
pub mod sandbox;
pub mod tls;

pub use carrier::{Carrier, ReferenceKind, TrackingQuery};
pub use dcsa3::{DcsaVersion, dcsa_client};
pub use event::{
    CarrierError, CarrierEvent, CarrierSnapshot, Classifier, DcsaCode, DocumentReference,
    DocumentType, EmptyIndicator, EventKind, ModeOfTransport, Reference, RouteHint, TransportCall,
    WordedStatus,
};
