//! The interface every carrier connector offers the server: fetch what the carrier knows
//! about one reference.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::event::{CarrierError, CarrierSnapshot};

/// What kind of number a tracking request follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReferenceKind {
    /// A bill of lading (DCSA transport document reference).
    BillOfLading,
    /// A carrier booking reference.
    Booking,
    /// A container number (DCSA equipment reference).
    Equipment,
}

/// One reference to look up at a carrier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrackingQuery {
    pub reference_kind: ReferenceKind,
    pub reference: String,
    /// When tracking started, for the sandbox carrier, whose voyages are laid out from it.
    /// Only a connector built for the sandbox sends it (`DcsaClient::for_sandbox`); real
    /// carriers never see it.
    pub sandbox_epoch: Option<DateTime<Utc>>,
}

/// A carrier connector.
#[async_trait]
pub trait Carrier: Send + Sync {
    /// The carrier's SCAC, such as `MAEU`.
    fn scac(&self) -> &str;

    /// Why the line cannot be tracked at all (it has no public tracking API), so its
    /// requests fail at once as `data_unavailable` instead of retrying; `None` for a
    /// connector that calls a carrier.
    fn unavailable_reason(&self) -> Option<&str> {
        None
    }

    /// Whether the line has no API and is followed only through the EDI it sends
    /// ([`crate::connector::EdiFeed`]): polls read the stored feed and call no one.
    fn fed_by_edi(&self) -> bool {
        false
    }

    /// Everything the carrier currently publishes about the reference.
    async fn fetch(&self, query: &TrackingQuery) -> Result<CarrierSnapshot, CarrierError>;
}
