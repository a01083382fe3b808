//! Shipments, their containers and the containers' transport events, as Tidemark keeps
//! them. Field names follow Terminal49's resources, so the API maps them one to one.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::ids::{
    AccountId, ApiKeyId, ContainerId, PartyId, RawEventId, ShipmentId, TrackingRequestId,
    TransportEventId,
};
use crate::tracking::{ContainerStatus, TransportEventName};

/// What a bill of lading or booking covers: a voyage from a port of lading to a port of
/// discharge, with its containers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Shipment {
    pub id: ShipmentId,
    pub account_id: AccountId,
    /// The tracking request that created it.
    pub tracking_request_id: TrackingRequestId,
    pub bill_of_lading_number: String,
    /// The number as the carrier knows it (upper case, no spaces).
    pub normalized_number: String,
    pub ref_numbers: Vec<String>,
    pub tags: Vec<String>,
    pub shipping_line_scac: String,
    pub port_of_lading_locode: Option<String>,
    pub port_of_discharge_locode: Option<String>,
    pub destination_locode: Option<String>,
    pub pod_vessel_name: Option<String>,
    pub pod_vessel_imo: Option<String>,
    pub pod_voyage_number: Option<String>,
    pub pol_etd_at: Option<DateTime<Utc>>,
    pub pol_atd_at: Option<DateTime<Utc>>,
    pub pod_eta_at: Option<DateTime<Utc>>,
    /// The first ETA ever seen for the port of discharge.
    pub pod_original_eta_at: Option<DateTime<Utc>>,
    pub pod_ata_at: Option<DateTime<Utc>>,
    pub destination_eta_at: Option<DateTime<Utc>>,
    pub destination_ata_at: Option<DateTime<Utc>>,
    /// The first departure estimate ever seen for the port of lading.
    pub pol_original_etd_at: Option<DateTime<Utc>>,
    /// The first arrival estimate ever seen for the inland destination.
    pub destination_original_eta_at: Option<DateTime<Utc>>,
    /// The terminal at the port of discharge (an id of the reference terminals), when the
    /// carrier named one Tidemark knows.
    pub pod_terminal_id: Option<uuid::Uuid>,
    pub line_tracking_last_attempted_at: Option<DateTime<Utc>>,
    pub line_tracking_last_succeeded_at: Option<DateTime<Utc>>,
    pub line_tracking_stopped_at: Option<DateTime<Utc>>,
    /// Why tracking stopped: `user`, `all_containers_terminated`, `past_arrival_window`, …
    pub line_tracking_stopped_reason: Option<String>,
    /// The API key that stopped tracking, when a user stopped it.
    pub line_tracking_stopped_by: Option<ApiKeyId>,
    /// The customer (party) the shipment is tracked for.
    pub customer_id: Option<PartyId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Shipment {
    pub fn is_tracking(&self) -> bool {
        self.line_tracking_stopped_at.is_none()
    }

    /// A user who stopped a shipment's tracking is told nothing more about it until
    /// resuming; tracking that stopped by itself still announces that it stopped.
    pub fn notifications_paused(&self) -> bool {
        !self.is_tracking() && self.line_tracking_stopped_by.is_some()
    }
}

/// One container of a shipment, with its milestones as last known.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Container {
    pub id: ContainerId,
    pub account_id: AccountId,
    pub shipment_id: ShipmentId,
    pub number: String,
    /// The user's reference numbers for this container (`PATCH /v2/containers/{id}`); a
    /// poll never changes them.
    pub ref_numbers: Vec<String>,
    pub seal_number: Option<String>,
    /// ISO 6346 size-type code as the carrier sent it (`45G1`).
    pub iso_equipment_code: Option<String>,
    pub equipment_type: Option<String>,
    pub equipment_length: Option<u32>,
    pub equipment_height: Option<String>,
    pub weight_in_lbs: Option<u32>,
    pub pod_arrived_at: Option<DateTime<Utc>>,
    pub pod_discharged_at: Option<DateTime<Utc>>,
    pub pod_full_out_at: Option<DateTime<Utc>>,
    pub final_destination_full_out_at: Option<DateTime<Utc>>,
    pub empty_terminated_at: Option<DateTime<Utc>>,
    pub availability_known: bool,
    pub available_for_pickup: bool,
    /// Last free day, holds, fees, appointment and yard place, as terminals and EDI report.
    pub pickup: crate::pickup::PickupFacts,
    /// The rail leg inland, derived from the rail milestones.
    pub inland: crate::pickup::InlandFacts,
    pub current_status: ContainerStatus,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A milestone of one container's journey, past (`estimated == false`) or expected.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TransportEvent {
    pub id: TransportEventId,
    pub account_id: AccountId,
    pub shipment_id: ShipmentId,
    pub container_id: ContainerId,
    pub event: TransportEventName,
    pub timestamp: DateTime<Utc>,
    pub voyage_number: Option<String>,
    pub location_locode: Option<String>,
    pub vessel_name: Option<String>,
    pub vessel_imo: Option<String>,
    /// The terminal where it happened (an id of the reference terminals), when the carrier
    /// named one Tidemark knows.
    pub terminal_id: Option<uuid::Uuid>,
    /// The carrier's id of the event this came from: a re-sent event is recognised by it.
    pub source_id: String,
    /// What a pick-up notice announces: the new last free day (`2026-07-03`) or
    /// appointment time; `None` for moves, and for a value withdrawn.
    pub value: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// One event of a shipment as the carrier reported it, kept beside the named transport
/// events so users can see exactly what the carrier said (Terminal49's `raw_event`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RawEvent {
    pub id: RawEventId,
    pub account_id: AccountId,
    pub shipment_id: ShipmentId,
    /// `None` for vessel-level events, which concern every container of the shipment.
    pub container_number: Option<String>,
    /// The carrier's id of the event; a re-sent event with the same id replaces this one.
    pub source_id: String,
    pub reported: ReportedEvent,
    pub created_at: DateTime<Utc>,
}

/// What a carrier said about one event, before Tidemark named it as a milestone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReportedEvent {
    /// The event in the carrier's own words.
    pub original_event: String,
    /// Terminal49's raw event name (`vessel_loaded`, `full_out`, …), when it has one.
    pub event: Option<String>,
    pub timestamp: DateTime<Utc>,
    pub estimated: bool,
    pub location_locode: Option<String>,
    pub location_name: Option<String>,
    pub vessel_name: Option<String>,
    pub vessel_imo: Option<String>,
    pub voyage_number: Option<String>,
    /// The terminal where it happened (an id of the reference terminals), when the carrier
    /// named one Tidemark knows.
    pub terminal_id: Option<uuid::Uuid>,
}

/// Decodes the size and type of an ISO 6346 size-type code (`45G1` → 40 ft, high cube,
/// dry), or of the all-digit code used before 1996 that carriers still send (`4310` → 40 ft,
/// 8'6", general purpose). Unknown codes give `None`s rather than guesses.
pub fn equipment_from_iso_code(
    code: &str,
) -> (Option<u32>, Option<&'static str>, Option<&'static str>) {
    let code = code.trim();
    if code.len() == 4 && code.bytes().all(|b| b.is_ascii_digit()) {
        return equipment_from_pre_1996_code(code);
    }
    let mut chars = code.chars();
    let (Some(size), Some(height), Some(kind)) = (chars.next(), chars.next(), chars.next()) else {
        return (None, None, None);
    };
    let length = match size {
        '1' => Some(10),
        '2' => Some(20),
        '4' => Some(40),
        'L' => Some(45),
        _ => None,
    };
    let height = match height {
        '0' | '2' => Some("standard"),
        '5' => Some("high_cube"),
        _ => None,
    };
    let kind = match kind {
        'G' => Some("dry"),
        'R' => Some("reefer"),
        'U' => Some("open top"),
        'P' => Some("flat rack"),
        'T' => Some("tank"),
        'B' => Some("bulk"),
        _ => None,
    };
    (length, height, kind)
}

/// The numeric size-type codes of ISO 2716 and ISO 6346:1984: length, then height (0–1
/// 8 ft, 2–3 8'6", 4–5 taller), then a two-digit type whose tens give the family (0–1
/// general purpose, 3 refrigerated, 5 open top, 6 platform, 7 tank).
fn equipment_from_pre_1996_code(
    code: &str,
) -> (Option<u32>, Option<&'static str>, Option<&'static str>) {
    let digits: Vec<u8> = code.bytes().map(|b| b - b'0').collect();
    let length = match digits[0] {
        1 => Some(10),
        2 => Some(20),
        3 => Some(30),
        4 => Some(40),
        _ => None,
    };
    let height = match digits[1] {
        0..=3 => Some("standard"),
        4 | 5 => Some("high_cube"),
        _ => None,
    };
    let kind = match digits[2] {
        0 | 1 => Some("dry"),
        3 => Some("reefer"),
        5 => Some("open top"),
        6 => Some("flat rack"),
        7 => Some("tank"),
        _ => None,
    };
    (length, height, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pre_1996_numeric_code_is_decoded() {
        assert_eq!(
            equipment_from_iso_code("4310"),
            (Some(40), Some("standard"), Some("dry"))
        );
        assert_eq!(
            equipment_from_iso_code("4532"),
            (Some(40), Some("high_cube"), Some("reefer"))
        );
    }

    #[test]
    fn a_forty_foot_high_cube_is_decoded() {
        assert_eq!(
            equipment_from_iso_code("45G1"),
            (Some(40), Some("high_cube"), Some("dry"))
        );
    }

    #[test]
    fn a_twenty_foot_reefer_is_decoded() {
        assert_eq!(
            equipment_from_iso_code("22R1"),
            (Some(20), Some("standard"), Some("reefer"))
        );
    }

    #[test]
    fn an_unknown_code_gives_nothing_rather_than_a_guess() {
        assert_eq!(equipment_from_iso_code("?"), (None, None, None));
        assert_eq!(equipment_from_iso_code("9XZ1"), (None, None, None));
    }
}
