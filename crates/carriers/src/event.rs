//! What a carrier told us, in one shape for every connector: the events of one poll and the
//! errors that decide whether to retry.
//!
//! The vocabulary is DCSA Track & Trace's (codes such as `ARRI` or `LOAD`), because every
//! carrier we follow speaks it; a connector for another protocol translates into it.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A failed poll of a carrier. Each variant is a decision for the caller.
#[derive(Debug, thiserror::Error)]
pub enum CarrierError {
    /// The carrier asks us to slow down: retry after `retry_after` (from `Retry-After`) or
    /// with backoff.
    #[error("rate limited by the carrier")]
    RateLimited { retry_after: Option<Duration> },
    /// The carrier does not know the number: no retry, the request fails or waits for the
    /// manifest.
    #[error("the carrier does not know this number")]
    NotFound,
    /// The carrier could not be reached or answered with a server error: retry later.
    #[error("the carrier is unavailable: {0}")]
    Unavailable(String),
    /// The carrier refuses our credentials (401, 403, or a token endpoint that rejects the
    /// client): an operator must fix them; polls wait rather than fail, and resume once a
    /// call succeeds.
    #[error("the carrier refused our credentials: {0}")]
    CredentialsRefused(String),
    /// The carrier answered with something we cannot read: retry a few times, then give up
    /// as `unrecognized_response`.
    #[error("unexpected payload from the carrier: {0}")]
    UnexpectedPayload(String),
}

/// The events of one poll, and the ones left out because they could not be read.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CarrierSnapshot {
    /// The events that were understood, in the carrier's order.
    pub events: Vec<CarrierEvent>,
    /// One line per event that was left out, saying which and why, so one odd event does not
    /// hide the others and operators can still see what was dropped.
    pub skipped: Vec<String>,
    /// The raw JSON of each skipped event, in the same order (cut at
    /// [`MAX_SKIPPED_RAW_BYTES`]), kept so drift can be diagnosed from what was sent.
    #[serde(skip)]
    pub skipped_raw: Vec<String>,
    /// Statuses a line gave only in its own words (no DCSA code stands for them, such as
    /// COSCO's "Cargo Received"): no milestone, but kept as what the line said, with the
    /// container, time and place it gave.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub worded: Vec<WordedStatus>,
}

/// A status in the line's own words, at a time and place it gave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WordedStatus {
    pub words: String,
    pub at: DateTime<Utc>,
    pub equipment_reference: Option<String>,
    pub un_location_code: Option<String>,
    pub location_name: Option<String>,
}

impl CarrierSnapshot {
    /// The error an answer stands for when the carrier sent events and none could be read
    /// (events in a shape or with codes we do not know): an answer we do not
    /// understand, to retry as `unrecognized_response`, never "the carrier does not know the
    /// number". `None` when an event was read, or when there were none at all (`[]`).
    pub fn unreadable(&self) -> Option<CarrierError> {
        if !self.events.is_empty() || !self.worded.is_empty() {
            return None;
        }
        let last = self.skipped.last()?;
        Some(CarrierError::UnexpectedPayload(format!(
            "none of the carrier's {} events could be read (last: {last})",
            self.skipped.len()
        )))
    }
}

impl CarrierSnapshot {
    /// Leaves out the events that name another transport document, booking or container
    /// than the one `query` asked for: a server that ignores a filter it does not know
    /// answers for other shipments, and those must never be attached to this one. Each is
    /// listed in `skipped` with the reason; events that name nothing (a vessel's arrival)
    /// stay.
    pub fn keep_about(&mut self, query: &crate::TrackingQuery) {
        let asked = &query.reference;
        let mut kept = Vec::with_capacity(self.events.len());
        for event in std::mem::take(&mut self.events) {
            match event.names_another(query.reference_kind, asked) {
                None => kept.push(event),
                Some(other) => {
                    self.skipped.push(format!(
                        "event {} names {other}, not {asked}",
                        event.event_id.as_deref().unwrap_or("without an id")
                    ));
                    self.skipped_raw
                        .push(clip_raw(&serde_json::to_string(&event).unwrap_or_default()));
                }
            }
        }
        self.events = kept;
    }
}

/// Whether two references name the same thing: equal but for case, spaces and dashes, or
/// but for one of them carrying the line's four-letter prefix (`MAEU123456789` and
/// `123456789`), as carriers write their own numbers both ways.
pub fn same_reference(a: &str, b: &str) -> bool {
    let plain = |text: &str| -> String {
        text.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_uppercase())
            .collect()
    };
    let (a, b) = (plain(a), plain(b));
    let unprefixed = |long: &str, short: &str| {
        long.len() == short.len() + 4
            && long[..4].chars().all(|c| c.is_ascii_alphabetic())
            && long[4..] == *short
    };
    !a.is_empty() && (a == b || unprefixed(&a, &b) || unprefixed(&b, &a))
}

/// The most of a skipped event's raw JSON that is kept.
pub const MAX_SKIPPED_RAW_BYTES: usize = 4_096;

/// `raw` cut at [`MAX_SKIPPED_RAW_BYTES`] on a character boundary.
pub fn clip_raw(raw: &str) -> String {
    if raw.len() <= MAX_SKIPPED_RAW_BYTES {
        return raw.to_owned();
    }
    let mut end = MAX_SKIPPED_RAW_BYTES;
    while !raw.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &raw[..end])
}

/// One carrier event: a vessel call (transport), a container move (equipment) or a document
/// status (shipment).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CarrierEvent {
    /// The carrier's id for the event; events are corrected by re-sending the same id.
    pub event_id: Option<String>,
    pub kind: EventKind,
    /// What happened; always one of `kind`'s codes.
    pub dcsa_code: DcsaCode,
    pub classifier: Classifier,
    /// When it happened or is expected to happen.
    pub event_datetime: DateTime<Utc>,
    /// When the carrier recorded the event.
    pub event_created_datetime: Option<DateTime<Utc>>,
    /// The container number, as the carrier wrote it (not checked against ISO 6346: carriers
    /// also track trailers and chassis under other schemes).
    pub equipment_reference: Option<String>,
    /// The ISO 6346 size and type code, such as `22GP`.
    pub iso_equipment_code: Option<String>,
    pub empty_indicator: Option<EmptyIndicator>,
    /// Where the event took place: the event location's UN/LOCODE, else the transport call's.
    pub un_location_code: Option<String>,
    /// The event location's name, when given.
    pub location_name: Option<String>,
    pub transport_call: Option<TransportCall>,
    /// Booking and transport document (bill of lading) numbers the event belongs to. For a
    /// shipment event this includes the document whose status it reports.
    pub document_references: Vec<DocumentReference>,
    /// The shipper's and forwarder's references (`FF`, `SI`, `PO`, `CR`, `AAO`, `EQ`).
    pub references: Vec<Reference>,
    /// What the carrier says the event's place is in the shipment's route, or which side of
    /// it the move is on, when it says (DCSA 3.0.0 `shipmentLocationType` and
    /// `movementType`, Beta-1 `isTransshipmentMove`).
    pub route_hint: Option<RouteHint>,
}

/// A carrier's own word on a place's role in the route, or on the side of the route a move
/// is on, which outranks what Tidemark reads off the order of events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RouteHint {
    /// `POL`: port of loading.
    PortOfLoading,
    /// `POD`: port of discharge.
    PortOfDischarge,
    /// `PDE`: place of delivery.
    PlaceOfDelivery,
    /// A transshipment move (Beta-1 `isTransshipmentMove: true`, 3.0.0 `movementType:
    /// TRANSSHIPMENT`).
    Transshipment,
    /// A move on the import side, after the ocean leg (3.0.0 `movementType: IMPORT`): an
    /// empty container gated in on this side has been returned.
    ImportMove,
    /// A move on the export side, before the ocean leg (3.0.0 `movementType: EXPORT`).
    ExportMove,
}

impl RouteHint {
    /// From a DCSA `shipmentLocationType` code; other codes (`PRE`, `FCD`, …) say nothing
    /// about the ocean route.
    pub fn from_location_type(code: &str) -> Option<Self> {
        match code.trim().to_ascii_uppercase().as_str() {
            "POL" => Some(Self::PortOfLoading),
            "POD" => Some(Self::PortOfDischarge),
            "PDE" => Some(Self::PlaceOfDelivery),
            _ => None,
        }
    }

    /// From a DCSA 3.0.0 `movementType` (`IMPORT`, `EXPORT`, `TRANSSHIPMENT`); other codes
    /// say nothing.
    pub fn from_movement_type(code: &str) -> Option<Self> {
        match code.trim().to_ascii_uppercase().as_str() {
            "IMPORT" => Some(Self::ImportMove),
            "EXPORT" => Some(Self::ExportMove),
            "TRANSSHIPMENT" => Some(Self::Transshipment),
            _ => None,
        }
    }
}

impl CarrierEvent {
    /// The transport call's facility type (`POTE`, `RAMP`, …), which some mapping rules need.
    pub fn facility_type_code(&self) -> Option<&str> {
        self.transport_call
            .as_ref()
            .and_then(|call| call.facility_type_code.as_deref())
    }

    /// The transport call's mode of transport.
    pub fn mode_of_transport(&self) -> Option<ModeOfTransport> {
        self.transport_call
            .as_ref()
            .and_then(|call| call.mode_of_transport)
    }

    /// How the container travels on the event's call, as far as the answer says: the call's
    /// mode; else a vessel when the call names one (by name or IMO number: many carriers
    /// leave the mode out, and DCSA 3.0.0's `vesselTransport` implies it); else rail at a
    /// rail ramp; else unknown. Only an explicit mode says truck or barge.
    pub fn inferred_mode(&self) -> Option<ModeOfTransport> {
        let call = self.transport_call.as_ref()?;
        if let Some(mode) = call.mode_of_transport {
            return Some(mode);
        }
        let named = |text: &Option<String>| text.as_deref().is_some_and(|t| !t.trim().is_empty());
        if named(&call.vessel_name) || named(&call.vessel_imo) {
            return Some(ModeOfTransport::Vessel);
        }
        (call.facility_type_code.as_deref() == Some("RAMP")).then_some(ModeOfTransport::Rail)
    }

    /// What the event names instead of `asked` (a `kind` reference), if it names another
    /// document or container and not `asked`: `None` when it is about `asked` or names
    /// nothing of that kind.
    pub fn names_another(&self, kind: crate::ReferenceKind, asked: &str) -> Option<String> {
        let named: Vec<&str> = match kind {
            crate::ReferenceKind::Equipment if self.kind.concerns_equipment() => {
                self.equipment_reference.as_deref().into_iter().collect()
            }
            crate::ReferenceKind::Equipment => Vec::new(),
            crate::ReferenceKind::BillOfLading => self
                .document_numbers(DocumentType::TransportDocument)
                .collect(),
            crate::ReferenceKind::Booking => self.document_numbers(DocumentType::Booking).collect(),
        };
        if named.is_empty() || named.iter().any(|n| same_reference(n, asked)) {
            return None;
        }
        let what = match kind {
            crate::ReferenceKind::Equipment => "container",
            crate::ReferenceKind::BillOfLading => "transport document",
            crate::ReferenceKind::Booking => "booking",
        };
        Some(format!("{what} {}", named.join(", ")))
    }

    /// The numbers of the documents of the given type that the event refers to.
    pub fn document_numbers(&self, document_type: DocumentType) -> impl Iterator<Item = &str> {
        self.document_references
            .iter()
            .filter(move |reference| reference.document_type == document_type)
            .map(|reference| reference.value.as_str())
    }
}

/// A call of a vessel, train, truck or barge at a place, which transport and equipment events
/// refer to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TransportCall {
    pub transport_call_id: Option<String>,
    /// Tells apart two calls at the same place within one voyage.
    pub sequence_number: Option<i64>,
    pub un_location_code: Option<String>,
    /// The terminal's SMDG code (`ADT`); left out when the carrier uses another code list.
    pub facility_smdg_code: Option<String>,
    /// DCSA facility type: `POTE` port terminal, `RAMP` rail ramp, `INTE` inland terminal, …
    pub facility_type_code: Option<String>,
    /// The facility by name, when the carrier has no standard code for it (DCSA
    /// `otherFacility`).
    pub facility_name: Option<String>,
    pub mode_of_transport: Option<ModeOfTransport>,
    /// The seven-digit IMO number, as sent.
    pub vessel_imo: Option<String>,
    pub vessel_name: Option<String>,
    pub carrier_service_code: Option<String>,
    /// The carrier's export voyage (the deprecated `carrierVoyageNumber` when that is all
    /// there is).
    pub carrier_export_voyage_number: Option<String>,
    pub carrier_import_voyage_number: Option<String>,
}

/// A document number that an event refers to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentReference {
    pub document_type: DocumentType,
    pub value: String,
}

/// A party's reference that an event carries, such as a purchase order number.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// DCSA reference type: `FF`, `SI`, `PO`, `CR`, `AAO` or `EQ`.
    pub reference_type: String,
    pub value: String,
}

// DCSA code lists are declared with the domain's `string_enum!`: `as_str`, `parse`, `ALL`,
// `Display` and serde through the code itself.
use tidemark_domain::string_enum as dcsa_codes;

dcsa_codes! {
    /// The families of DCSA T&T events (`eventType`, 3.0's `eventTypeCode`): 2.2's three,
    /// and 3.0's IoT and reefer events, which are about one container but are no move of it:
    /// they are kept as the carrier sent them and never become milestones.
    pub enum EventKind {
        /// A vessel, train, truck or barge arrived or departed.
        Transport => "TRANSPORT",
        /// A container moved: gated, loaded, discharged…
        Equipment => "EQUIPMENT",
        /// A document changed status: booking confirmed, bill of lading issued…
        Shipment => "SHIPMENT",
        /// A device on the container detected something (T&T 3.0: a door opened, a position).
        Iot => "IOT",
        /// A reefer container's settings were measured or adjusted (T&T 3.0).
        Reefer => "REEFER",
    }
}

impl EventKind {
    /// Whether events of this family are about the one container they name
    /// (`equipmentReference`): equipment, IoT and reefer events.
    pub fn concerns_equipment(self) -> bool {
        matches!(self, Self::Equipment | Self::Iot | Self::Reefer)
    }
}

dcsa_codes! {
    /// What happened: `transportEventTypeCode`, `equipmentEventTypeCode` or
    /// `shipmentEventTypeCode` (and 3.0's `iotEventTypeCode` and `reeferEventTypeCode`).
    /// T&T 2.2's codes, plus the 3.0 equipment codes that carriers already send and our
    /// mapping uses, and 3.0's IoT and reefer codes.
    pub enum DcsaCode {
        // Transport.
        Arri => "ARRI",
        Depa => "DEPA",
        // Equipment, T&T 2.2.
        Load => "LOAD",
        Disc => "DISC",
        Gtin => "GTIN",
        Gtot => "GTOT",
        Stuf => "STUF",
        Strp => "STRP",
        Pick => "PICK",
        Drop => "DROP",
        Insp => "INSP",
        Rsea => "RSEA",
        Rmvd => "RMVD",
        // Equipment, T&T 3.0.
        Avpu => "AVPU",
        Avdo => "AVDO",
        Cuss => "CUSS",
        Cusi => "CUSI",
        Cusr => "CUSR",
        Cros => "CROS",
        // Shipment (document statuses).
        Rece => "RECE",
        Drft => "DRFT",
        Pena => "PENA",
        Penu => "PENU",
        Reje => "REJE",
        Appr => "APPR",
        Issu => "ISSU",
        Surr => "SURR",
        Subm => "SUBM",
        Void => "VOID",
        Conf => "CONF",
        Reqs => "REQS",
        Cmpl => "CMPL",
        Hold => "HOLD",
        Rels => "RELS",
        // IoT, T&T 3.0: what the device noticed is in `iotDetails`.
        Detc => "DETC",
        // Reefer, T&T 3.0.
        Meas => "MEAS",
        Adju => "ADJU",
    }
}

impl DcsaCode {
    /// The family of events this code belongs to; no code is shared between families.
    pub fn kind(self) -> EventKind {
        match self {
            Self::Arri | Self::Depa => EventKind::Transport,
            Self::Load
            | Self::Disc
            | Self::Gtin
            | Self::Gtot
            | Self::Stuf
            | Self::Strp
            | Self::Pick
            | Self::Drop
            | Self::Insp
            | Self::Rsea
            | Self::Rmvd
            | Self::Avpu
            | Self::Avdo
            | Self::Cuss
            | Self::Cusi
            | Self::Cusr
            | Self::Cros => EventKind::Equipment,
            Self::Rece
            | Self::Drft
            | Self::Pena
            | Self::Penu
            | Self::Reje
            | Self::Appr
            | Self::Issu
            | Self::Surr
            | Self::Subm
            | Self::Void
            | Self::Conf
            | Self::Reqs
            | Self::Cmpl
            | Self::Hold
            | Self::Rels => EventKind::Shipment,
            Self::Detc => EventKind::Iot,
            Self::Meas | Self::Adju => EventKind::Reefer,
        }
    }
}

dcsa_codes! {
    /// Whether an event happened, is planned, or is estimated (`eventClassifierCode`).
    pub enum Classifier {
        /// The schedule baseline.
        Planned => "PLN",
        Actual => "ACT",
        /// A current estimate, which may change with every poll.
        Estimated => "EST",
    }
}

dcsa_codes! {
    /// Whether the container was empty or full (`emptyIndicatorCode`).
    pub enum EmptyIndicator {
        Empty => "EMPTY",
        Laden => "LADEN",
    }
}

dcsa_codes! {
    /// How the container travels on a transport call (`modeOfTransport`).
    pub enum ModeOfTransport {
        Vessel => "VESSEL",
        Rail => "RAIL",
        Truck => "TRUCK",
        Barge => "BARGE",
    }
}

dcsa_codes! {
    /// The kind of document a number identifies (`documentReferenceType`, `documentTypeCode`).
    pub enum DocumentType {
        /// Carrier booking request reference.
        CarrierBookingRequest => "CBR",
        /// Booking (carrier booking reference).
        Booking => "BKG",
        ShippingInstruction => "SHI",
        ShipmentReleaseMessage => "SRM",
        /// Transport document: the bill of lading number.
        TransportDocument => "TRD",
        ArrivalNotice => "ARN",
        VerifiedGrossMass => "VGM",
        CargoSurvey => "CAS",
        Customs => "CUS",
        DangerousGoodsDeclaration => "DGD",
        OutOfGauge => "OOG",
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::{ReferenceKind, TrackingQuery};

    /// An event of `kind` and `code` about the container `number`.
    fn about(kind: EventKind, code: DcsaCode, number: &str) -> CarrierEvent {
        CarrierEvent {
            event_id: Some(format!("{kind}-{number}")),
            kind,
            dcsa_code: code,
            classifier: Classifier::Actual,
            event_datetime: Utc
                .with_ymd_and_hms(2026, 1, 20, 16, 45, 0)
                .single()
                .expect("a valid date"),
            event_created_datetime: None,
            equipment_reference: Some(number.to_owned()),
            iso_equipment_code: None,
            empty_indicator: None,
            un_location_code: None,
            location_name: None,
            transport_call: None,
            document_references: Vec::new(),
            references: Vec::new(),
            route_hint: None,
        }
    }

    #[test]
    fn iot_and_reefer_codes_belong_to_their_own_families() {
        assert_eq!(DcsaCode::Detc.kind(), EventKind::Iot);
        assert_eq!(DcsaCode::Meas.kind(), EventKind::Reefer);
        assert_eq!(DcsaCode::Adju.kind(), EventKind::Reefer);
    }

    #[test]
    fn iot_and_reefer_events_about_another_container_are_left_out_of_a_container_query() {
        let mut snapshot = CarrierSnapshot {
            events: vec![
                about(EventKind::Iot, DcsaCode::Detc, "APZU4812090"),
                about(EventKind::Iot, DcsaCode::Detc, "MSKU1234565"),
                about(EventKind::Reefer, DcsaCode::Meas, "MSKU1234565"),
            ],
            ..CarrierSnapshot::default()
        };
        let query = TrackingQuery {
            reference_kind: ReferenceKind::Equipment,
            reference: "APZU4812090".to_owned(),
            sandbox_epoch: None,
        };

        snapshot.keep_about(&query);

        assert_eq!(snapshot.events.len(), 1);
        assert_eq!(snapshot.skipped.len(), 2, "{:?}", snapshot.skipped);
    }
}
