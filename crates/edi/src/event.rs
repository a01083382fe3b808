//! From statuses to what the rest of Tidemark uses: a [`CarrierEvent`] for codes that stand
//! for a DCSA event (so the report pipeline turns them into milestones like any carrier's),
//! and [`TerminalFacts`] for availability, last free day, holds, fees and appointments.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use tidemark_carriers::{
    CarrierEvent, DocumentReference, DocumentType, Reference, RouteHint, TransportCall,
};

use crate::codes::{HoldKind, TerminalEffect};
use crate::model::{LocationRole, StatusReport};

/// Why a status is no carrier event.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotAnEvent {
    /// The code is in no table (drift), or its row has no DCSA event (a terminal fact).
    #[error("status code {0:?} stands for no DCSA event")]
    NoEvent(String),
    /// The time could not be put in UTC (no time, or no zone for the place).
    #[error("status {0:?} has no time in UTC")]
    NoUtcTime(String),
}

impl StatusReport {
    /// The DCSA event this status stands for, in the shape every carrier connector produces.
    ///
    /// The event id is built from the content (sender, code, container or B/L, place, time),
    /// so the same status received twice, in two interchanges, is the same event.
    pub fn to_carrier_event(&self) -> Result<CarrierEvent, NotAnEvent> {
        let row = self.mapping.as_ref();
        let Some(dcsa_code) = row.and_then(|row| row.event) else {
            return Err(NotAnEvent::NoEvent(self.code.clone()));
        };
        let Some(event_datetime) = self.time.as_ref().and_then(|time| time.utc) else {
            return Err(NotAnEvent::NoUtcTime(self.code.clone()));
        };
        let mode = row
            .and_then(|row| row.mode)
            .or_else(|| self.transport.as_ref().and_then(|transport| transport.mode));
        let transport = self.transport.clone().unwrap_or_default();
        let transport_call = TransportCall {
            un_location_code: self.location.locode.clone(),
            facility_name: self.location.name.clone(),
            mode_of_transport: mode,
            vessel_imo: transport.imo,
            vessel_name: transport.name,
            carrier_export_voyage_number: transport.voyage,
            ..TransportCall::default()
        };
        let mut document_references: Vec<DocumentReference> = self
            .references
            .bookings
            .iter()
            .map(|value| DocumentReference {
                document_type: DocumentType::Booking,
                value: value.clone(),
            })
            .collect();
        document_references.extend(self.references.bills_of_lading.iter().map(|value| {
            DocumentReference {
                document_type: DocumentType::TransportDocument,
                value: value.clone(),
            }
        }));
        // The DCSA reference types a 315 N9 or IFTSTA RFF can carry under the same code.
        let references = self
            .references
            .other
            .iter()
            .filter(|(qualifier, _)| matches!(qualifier.as_str(), "SI" | "PO" | "FF"))
            .map(|(qualifier, value)| Reference {
                reference_type: qualifier.clone(),
                value: value.clone(),
            })
            .collect();
        let subject = self
            .references
            .container
            .as_deref()
            .or(self.references.bills_of_lading.first().map(String::as_str))
            .unwrap_or("-");
        // A status with only words (no code) is named by the event they were read as.
        let code = if self.code.is_empty() {
            format!("~{}", dcsa_code.as_str())
        } else {
            self.code.clone()
        };
        let event_id = format!(
            "edi:{}:{}:{}:{}:{}",
            self.sender,
            code,
            subject,
            self.location.locode.as_deref().unwrap_or("-"),
            event_datetime.format("%Y-%m-%dT%H:%M:%SZ"),
        );
        Ok(CarrierEvent {
            event_id: Some(event_id),
            kind: dcsa_code.kind(),
            dcsa_code,
            classifier: self.classifier,
            event_datetime,
            event_created_datetime: None,
            equipment_reference: self.references.container.clone(),
            iso_equipment_code: self.iso_size_type.clone(),
            empty_indicator: row.and_then(|row| row.empty).or(self.empty_indicator),
            un_location_code: self.location.locode.clone(),
            location_name: self.location.name.clone(),
            transport_call: Some(transport_call),
            document_references,
            references,
            route_hint: self.location_role.as_ref().and_then(route_hint),
        })
    }

    /// The railroad the status names (`N1*RR`, `N9*RR`, a rail `TDT`'s carrier) and the rail
    /// leg it speaks of: a rail load or departure is the leg leaving the port, a rail
    /// arrival or unload, or a ramp's terminal status (last free day, availability), the leg
    /// at the inland destination; any other status leaves the leg to its place.
    pub fn railroad(&self) -> Option<Railroad> {
        use tidemark_carriers::{DcsaCode, ModeOfTransport};
        let scac = self.rail_carrier_scac.clone()?;
        let row = self.mapping.as_ref();
        let transport_mode = self.transport.as_ref().and_then(|t| t.mode);
        let by_rail =
            row.and_then(|row| row.mode).or(transport_mode) == Some(ModeOfTransport::Rail);
        let leg = match row.and_then(|row| row.event) {
            Some(DcsaCode::Load | DcsaCode::Depa) if by_rail => Some(RailLeg::FromPort),
            Some(DcsaCode::Arri | DcsaCode::Disc) if by_rail => Some(RailLeg::InlandDestination),
            _ if row.is_some_and(|row| row.terminal.is_some())
                && transport_mode == Some(ModeOfTransport::Rail) =>
            {
                Some(RailLeg::InlandDestination)
            }
            _ => None,
        };
        Some(Railroad { scac, leg })
    }

    /// What a status that is no terminal status says about the container's railroad: facts
    /// naming only it (`railroad_only`), so that it reaches the container like a terminal's
    /// word without counting as a terminal report.
    pub fn railroad_facts(&self) -> Option<TerminalFacts> {
        let railroad = self.railroad()?;
        Some(TerminalFacts {
            container: self.references.container.clone(),
            location: self.location.locode.clone(),
            observed_at: self.time.as_ref().and_then(|time| time.utc),
            railroad: Some(railroad),
            railroad_only: true,
            ..TerminalFacts::default()
        })
    }

    /// What the status says about the container at its terminal, when its code is a
    /// terminal code (availability, last free day, holds, fees, appointment), with the
    /// railroad it names.
    pub fn terminal_facts(&self) -> Option<TerminalFacts> {
        let row = self.mapping.as_ref()?;
        let effect = row.terminal?;
        let mut facts = TerminalFacts {
            container: self.references.container.clone(),
            location: self.location.locode.clone(),
            observed_at: self.time.as_ref().and_then(|time| time.utc),
            at_rail_ramp: self
                .transport
                .as_ref()
                .is_some_and(|t| t.mode == Some(tidemark_carriers::ModeOfTransport::Rail)),
            railroad: self.railroad(),
            ..TerminalFacts::default()
        };
        let text = match &self.description {
            Some(description) => format!("{} ({description})", row.meaning),
            None => row.meaning.clone(),
        };
        match effect {
            TerminalEffect::Available => facts.available = Some(true),
            TerminalEffect::NotAvailable => facts.available = Some(false),
            TerminalEffect::LastFreeDay => {
                // A date at the terminal: the local date as sent, never shifted by a zone.
                facts.last_free_day = self.time.as_ref().map(|time| time.local.date());
            }
            TerminalEffect::FreeTimeExpired => {
                facts.free_time_expired = true;
                facts.fees.push(Fee {
                    kind: FeeKind::Demurrage,
                    amount: None,
                    currency: None,
                    code: self.code.clone(),
                });
            }
            TerminalEffect::Appointment => {
                facts.appointment_at = self.time.as_ref().and_then(|time| time.utc);
            }
            TerminalEffect::Hold | TerminalEffect::Release => {
                let kind = refine(row.hold.unwrap_or(HoldKind::Other), &text);
                let status = if effect == TerminalEffect::Hold {
                    HoldStatus::Hold
                } else {
                    HoldStatus::Released
                };
                facts.holds.push(Hold {
                    kind,
                    status,
                    description: text,
                    code: self.code.clone(),
                });
                if effect == TerminalEffect::Hold && self.code == "TC" {
                    facts.fees.push(Fee {
                        kind: FeeKind::Other,
                        amount: None,
                        currency: None,
                        code: self.code.clone(),
                    });
                }
            }
            TerminalEffect::InBond => facts.in_bond = true,
        }
        Some(facts)
    }
}

/// The sender's word on the status location's role, as the carrier pipeline takes it: the
/// R4 `L`/`D`/`1`/`E`/`T` roles (LOC 9/11/7/13) are the route, and R4 `7`, the destination
/// rail intermodal terminal, is the inland destination; receipt, relay, the origin rail
/// terminal (R4 `6`: the port's ramp on an import, an inland one on an export) and the bare
/// activity location say nothing about it.
fn route_hint(role: &LocationRole) -> Option<RouteHint> {
    match role {
        LocationRole::Loading => Some(RouteHint::PortOfLoading),
        LocationRole::Discharge | LocationRole::FinalPortOfDischarge => {
            Some(RouteHint::PortOfDischarge)
        }
        // The ramp the rail leg ends at is the inland destination Terminal49 tracks (its
        // `ind_*` fields and the full out there).
        LocationRole::FinalDelivery | LocationRole::DestinationRailTerminal => {
            Some(RouteHint::PlaceOfDelivery)
        }
        LocationRole::Transshipment => Some(RouteHint::Transshipment),
        LocationRole::OriginRailTerminal
        | LocationRole::Receipt
        | LocationRole::Activity
        | LocationRole::Relay
        | LocationRole::Other(_) => None,
    }
}

/// A customs hold the sender calls VACIS, or a terminal hold it calls TMF, gets that name
/// (SOURCES.md A.2 design note e: keep the raw text, map to the six names).
fn refine(kind: HoldKind, text: &str) -> HoldKind {
    let upper = text.to_ascii_uppercase();
    match kind {
        HoldKind::Customs if upper.contains("VACIS") => HoldKind::Vacis,
        HoldKind::Other if upper.contains("TMF") => HoldKind::Tmf,
        kind => kind,
    }
}

/// What a terminal status says about one container, in Terminal49's terms.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalFacts {
    pub container: Option<String>,
    /// The terminal's place (UN/LOCODE).
    pub location: Option<String>,
    /// `available_for_pickup`; `None` when the status does not say.
    pub available: Option<bool>,
    /// `pickup_lfd`, the date as the terminal wrote it.
    pub last_free_day: Option<NaiveDate>,
    /// Free time is over (`FT`); the LFD, if known, stays.
    pub free_time_expired: bool,
    pub holds: Vec<Hold>,
    pub fees: Vec<Fee>,
    /// `pickup_appointment_at`.
    pub appointment_at: Option<DateTime<Utc>>,
    /// An in-bond movement was authorized or changed.
    pub in_bond: bool,
    /// Reported by a rail ramp (its 322 names the railroad): its last free day is the
    /// rail's (`pickup_lfd_rail`), not the port terminal's.
    #[serde(default)]
    pub at_rail_ramp: bool,
    /// The railroad the status names (`pod_rail_carrier_scac` / `ind_rail_carrier_scac`).
    #[serde(default)]
    pub railroad: Option<Railroad>,
    /// Facts of a status that is no terminal status, kept for its railroad alone: they
    /// are no terminal report (`terminal_checked_at` does not move).
    #[serde(default)]
    pub railroad_only: bool,
    /// When the status happened, in UTC when known.
    pub observed_at: Option<DateTime<Utc>>,
}

/// A railroad a status names, by SCAC.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Railroad {
    pub scac: String,
    /// The rail leg the status speaks of, when its code says; `None` leaves it to the
    /// status's place (at the port of discharge, the leg leaving it).
    #[serde(default)]
    pub leg: Option<RailLeg>,
}

/// The two rail legs Terminal49 names a railroad for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RailLeg {
    /// From the port of discharge (`pod_rail_carrier_scac`).
    FromPort,
    /// Into the inland destination (`ind_rail_carrier_scac`).
    InlandDestination,
}

/// A hold placed or lifted. Terminal49 lists only current holds; a `Released` hold tells the
/// caller to remove the hold of that name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    pub kind: HoldKind,
    pub status: HoldStatus,
    /// The code's meaning and the sender's own text, for `holds_at_pod_terminal[].description`.
    pub description: String,
    /// The status code as sent.
    pub code: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HoldStatus {
    Hold,
    Pending,
    Released,
}

/// A fee the status implies. 315/322 codes say that a fee runs, not how much: `amount` is
/// filled only by senders that send one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fee {
    pub kind: FeeKind,
    pub amount: Option<String>,
    pub currency: Option<String>,
    pub code: String,
}

/// Terminal49's fee types (`fees_at_pod_terminal[].type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeeKind {
    Demurrage,
    ExtendedDwellTime,
    Exam,
    Total,
    Other,
}
