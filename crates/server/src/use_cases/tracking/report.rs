//! From what a DCSA carrier sent to a [`CarrierReport`]: the shipment's route (port of
//! lading, transshipments, port of discharge) is read off the events themselves, then each
//! event is named for its place in that route, and linked to the reference terminal its
//! transport call names, when Tidemark knows it.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use tidemark_carriers::dcsa::{JourneyStage, LegContext, LocationRole, t49_event_name};
use tidemark_carriers::{
    CarrierEvent, CarrierSnapshot, Classifier, DcsaCode, DocumentType, EmptyIndicator,
    ModeOfTransport, RouteHint, WordedStatus,
};
use tidemark_domain::tracking_update::{
    CarrierReport, Milestone, ReportedContainer, ReportedFacility, ReportedRawEvent,
};
use tidemark_domain::{ReportedEvent, TransportEventName};
use tidemark_geo::reference::ReferenceData;
use uuid::Uuid;

/// The shipment's route as the events show it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Route {
    port_of_lading: Option<String>,
    port_of_discharge: Option<String>,
    /// The place of delivery, when the carrier names it and it is not the port of discharge.
    place_of_delivery: Option<String>,
    transshipments: BTreeSet<String>,
    first_load_at: Option<DateTime<Utc>>,
    full_out_at: Option<DateTime<Utc>>,
}

fn is_laden(event: &CarrierEvent) -> bool {
    event.empty_indicator != Some(EmptyIndicator::Empty)
}

/// Whether an event is a vessel's call or a move onto or off one: a laden load or discharge,
/// or a vessel's arrival or departure, by vessel or barge, or with no mode given (DCSA
/// 3.0.0's equipment events carry none, and a load at a port is onto a ship). Rail and truck
/// moves are never part of the ocean route.
fn is_ocean_call(event: &CarrierEvent) -> bool {
    let moves = match event.dcsa_code {
        DcsaCode::Load | DcsaCode::Disc => is_laden(event),
        DcsaCode::Arri | DcsaCode::Depa => true,
        _ => false,
    };
    moves
        && event.un_location_code.is_some()
        && matches!(
            event.inferred_mode(),
            None | Some(ModeOfTransport::Vessel | ModeOfTransport::Barge)
        )
}

/// The last place the carrier marks with `hint`.
fn hinted(events: &[&CarrierEvent], hint: RouteHint) -> Option<String> {
    events
        .iter()
        .filter(|e| e.route_hint == Some(hint))
        .filter_map(|e| e.un_location_code.clone())
        .next_back()
}

/// The port of discharge from the ocean calls in time order: the last port the container
/// arrives at or is discharged at (actual, estimated or planned) and does not leave again
/// by sea. A port where it is discharged and then loaded or sails again is a transshipment,
/// so an estimated arrival at a later port outranks an earlier actual discharge; a rail or
/// truck arrival never counts. `None` while the container is still at sea past its last
/// known port, rather than a guess.
fn port_of_discharge_of(calls: &[&CarrierEvent], port_of_lading: Option<&str>) -> Option<String> {
    let mut candidate: Option<&str> = None;
    for call in calls {
        let Some(place) = call.un_location_code.as_deref() else {
            continue;
        };
        match call.dcsa_code {
            // The carrier's own word that the call is a transshipment's.
            _ if call.route_hint == Some(RouteHint::Transshipment) && Some(place) == candidate => {
                candidate = None;
            }
            _ if call.route_hint == Some(RouteHint::Transshipment) => {}
            DcsaCode::Disc | DcsaCode::Arri if Some(place) != port_of_lading => {
                candidate = Some(place);
            }
            DcsaCode::Load | DcsaCode::Depa if Some(place) == candidate => candidate = None,
            _ => {}
        }
    }
    // A port where boxes are loaded and this one is never discharged is a port of loading
    // (the vessel's arrival there is the call it is loaded on), not its destination.
    let loaded_never_discharged = |place: &str| {
        let here = |code| {
            calls
                .iter()
                .any(|e| e.dcsa_code == code && e.un_location_code.as_deref() == Some(place))
        };
        here(DcsaCode::Load) && !here(DcsaCode::Disc)
    };
    candidate
        .filter(|place| !loaded_never_discharged(place))
        .map(str::to_owned)
}

/// Whether a vessel is loaded at the event's place by it: any load, laden or not, estimated
/// or not (a call where boxes are loaded is a port of lading or a transshipment for them).
fn loads_here(event: &CarrierEvent) -> bool {
    event.dcsa_code == DcsaCode::Load
        && event.un_location_code.is_some()
        && matches!(
            event.inferred_mode(),
            None | Some(ModeOfTransport::Vessel | ModeOfTransport::Barge)
        )
}

/// The place the box is first loaded at (any load, laden or not, estimated or not, that the
/// carrier does not mark as a transshipment's), when the answer never has it discharged
/// there: the call where it waits to be loaded, on the port of lading's side. Read from the
/// whole answer, not the order of events, since an arrival there may be dated after the load
/// is planned. A later port where the box is loaded again is a transshipment even when its
/// discharge there is not reported: a box is loaded at a second port only after it came off
/// a vessel there.
fn loading_call(calls: &[&CarrierEvent]) -> Option<String> {
    let place = calls
        .iter()
        .find(|e| e.dcsa_code == DcsaCode::Load && e.route_hint != Some(RouteHint::Transshipment))?
        .un_location_code
        .clone()?;
    let discharged_here = calls
        .iter()
        .any(|e| e.dcsa_code == DcsaCode::Disc && e.un_location_code.as_ref() == Some(&place));
    (!discharged_here).then_some(place)
}

fn route_of(events: &[CarrierEvent]) -> Route {
    let mut by_time: Vec<&CarrierEvent> = events.iter().collect();
    by_time.sort_by_key(|e| e.event_datetime);
    let calls: Vec<&CarrierEvent> = by_time
        .iter()
        .copied()
        .filter(|e| is_ocean_call(e) || loads_here(e))
        .collect();
    let first_load = calls
        .iter()
        .find(|e| {
            e.dcsa_code == DcsaCode::Load
                && is_laden(e)
                && e.route_hint != Some(RouteHint::Transshipment)
        })
        .copied();
    let port_of_lading = hinted(&by_time, RouteHint::PortOfLoading).or_else(|| {
        first_load
            .or_else(|| {
                calls
                    .iter()
                    .find(|e| {
                        e.dcsa_code == DcsaCode::Depa
                            && e.route_hint != Some(RouteHint::Transshipment)
                    })
                    .copied()
            })
            .and_then(|e| e.un_location_code.clone())
            .or_else(|| loading_call(&calls))
    });
    let port_of_discharge = hinted(&by_time, RouteHint::PortOfDischarge)
        .or_else(|| port_of_discharge_of(&calls, port_of_lading.as_deref()));
    let place_of_delivery = hinted(&by_time, RouteHint::PlaceOfDelivery)
        .or_else(|| {
            // A shipment known only from a rail ramp's statuses: the ramp the full box
            // leaves is its inland destination.
            (port_of_lading.is_none() && port_of_discharge.is_none())
                .then(|| last_rail_full_out(&by_time))
                .flatten()
        })
        .filter(|place| Some(place) != port_of_discharge.as_ref());
    let hinted_transshipments = by_time
        .iter()
        .filter(|e| e.route_hint == Some(RouteHint::Transshipment))
        .filter_map(|e| e.un_location_code.clone());
    // A port the box is discharged at and leaves again; never the call it is first loaded
    // at (unless the carrier says so).
    let loading_call = loading_call(&calls);
    let transshipments = calls
        .iter()
        .filter_map(|e| e.un_location_code.clone())
        .filter(|l| Some(l) != loading_call.as_ref())
        .chain(hinted_transshipments)
        .filter(|l| {
            Some(l) != port_of_lading.as_ref()
                && Some(l) != port_of_discharge.as_ref()
                && Some(l) != place_of_delivery.as_ref()
        })
        .collect();
    let full_out_at = by_time
        .iter()
        .filter(|e| {
            e.dcsa_code == DcsaCode::Gtot
                && is_laden(e)
                && e.classifier == Classifier::Actual
                && e.un_location_code.is_some()
                && (e.un_location_code == port_of_discharge
                    || e.un_location_code == place_of_delivery)
        })
        .map(|e| e.event_datetime)
        .next();
    Route {
        first_load_at: first_load
            .filter(|e| e.classifier == Classifier::Actual)
            .map(|e| e.event_datetime),
        port_of_lading,
        port_of_discharge,
        place_of_delivery,
        transshipments,
        full_out_at,
    }
}

/// The place of the last actual laden gate-out by rail: where the full box left a rail ramp.
fn last_rail_full_out(by_time: &[&CarrierEvent]) -> Option<String> {
    by_time
        .iter()
        .filter(|e| {
            e.dcsa_code == DcsaCode::Gtot
                && e.empty_indicator == Some(EmptyIndicator::Laden)
                && e.classifier == Classifier::Actual
                && e.inferred_mode() == Some(ModeOfTransport::Rail)
        })
        .filter_map(|e| e.un_location_code.clone())
        .next_back()
}

/// Whether an event off the known route is a rail move at an inland stop: by rail, for a
/// shipment whose ocean route is unknown (no port of lading, none of discharge: one known
/// only from a rail ramp's statuses). Terminal49 tracks rail on the destination side only,
/// and nothing places this box before a vessel.
fn inland_rail_stop(route: &Route, event: &CarrierEvent) -> bool {
    route.port_of_lading.is_none()
        && route.port_of_discharge.is_none()
        && event.un_location_code.is_some()
        && event.inferred_mode() == Some(ModeOfTransport::Rail)
}

fn context(route: &Route, event: &CarrierEvent) -> LegContext {
    let role = match event.un_location_code.as_deref() {
        Some(l) if Some(l) == route.port_of_lading.as_deref() => LocationRole::PortOfLading,
        Some(l) if Some(l) == route.port_of_discharge.as_deref() => LocationRole::PortOfDischarge,
        Some(l) if route.transshipments.contains(l) => LocationRole::Transshipment,
        Some(l) if Some(l) == route.place_of_delivery.as_deref() => LocationRole::InlandDestination,
        _ if inland_rail_stop(route, event) => LocationRole::Inland,
        _ => LocationRole::Unknown,
    };
    let at = event.event_datetime;
    let stage = if route.first_load_at.is_none_or(|first| at < first) {
        JourneyStage::BeforeFirstLoad
    } else if route.full_out_at.is_some_and(|out| at > out) {
        JourneyStage::AfterFullOut
    } else {
        JourneyStage::Underway
    };
    LegContext::at(role).in_stage(stage)
}

/// The carrier's id for an event, or a stable one built from what identifies it. An
/// estimate's id leaves its time out, so a moved estimate is the same estimate.
///
/// `repeated` says the carrier gave the same id to more than one event of this answer (DCSA's
/// own examples do, and MSC's ids are timestamps to the second): the id then names them
/// together with what each is about, so none of them overwrites another.
fn source_id(event: &CarrierEvent, repeated: bool) -> String {
    let about = || {
        let mut parts = vec![
            event.kind.as_str().to_owned(),
            event.dcsa_code.as_str().to_owned(),
            event.classifier.as_str().to_owned(),
            event.un_location_code.clone().unwrap_or_default(),
            event.equipment_reference.clone().unwrap_or_default(),
        ];
        if event.classifier == Classifier::Actual {
            parts.push(event.event_datetime.timestamp().to_string());
        }
        parts
    };
    match &event.event_id {
        Some(id) if repeated => std::iter::once(id.clone())
            .chain(about())
            .collect::<Vec<_>>()
            .join("|"),
        Some(id) => id.clone(),
        None => {
            let mut parts = about();
            let call_id = event
                .transport_call
                .as_ref()
                .and_then(|c| c.transport_call_id.clone())
                .unwrap_or_default();
            // The id of an event without one, as it has always been built (stored ids stay
            // stable): the call's id after the container.
            let time = (event.classifier == Classifier::Actual).then(|| parts.pop());
            parts.push(call_id);
            if let Some(Some(time)) = time {
                parts.push(time);
            }
            parts.join("|")
        }
    }
}

/// The ids of one answer's events, in order ([`source_id`]).
fn source_ids(events: &[CarrierEvent]) -> Vec<String> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for id in events.iter().filter_map(|e| e.event_id.as_deref()) {
        *seen.entry(id).or_default() += 1;
    }
    events
        .iter()
        .map(|event| {
            let repeated = event
                .event_id
                .as_deref()
                .is_some_and(|id| seen.get(id).copied().unwrap_or(0) > 1);
            source_id(event, repeated)
        })
        .collect()
}

/// The event in the carrier's DCSA terms, such as `EQUIPMENT LOAD ACT LADEN` or
/// `TRANSPORT ARRI EST`.
fn original_event(event: &CarrierEvent) -> String {
    let mut words = vec![
        event.kind.as_str(),
        event.dcsa_code.as_str(),
        event.classifier.as_str(),
    ];
    if let Some(empty) = event.empty_indicator {
        words.push(empty.as_str());
    }
    words.join(" ")
}

/// The container an event is about: an equipment, IoT or reefer event's (transport and
/// shipment events concern every container of the shipment).
fn equipment_number(event: &CarrierEvent) -> Option<String> {
    event
        .kind
        .concerns_equipment()
        .then(|| container_number(event))
        .flatten()
}

/// The container an event names only among its references (`EQ`), as transport and
/// shipment events of a bill of lading do, when it is a freight container's number.
fn referenced_container(event: &CarrierEvent) -> Option<String> {
    event
        .references
        .iter()
        .filter(|r| r.reference_type.eq_ignore_ascii_case("EQ"))
        .map(|r| r.value.trim().to_uppercase())
        .find(|number| is_container_shaped(number))
}

/// The category letter (the fourth) of a number of ISO 6346's shape: four letters, then
/// seven digits.
fn iso_6346_category(number: &str) -> Option<u8> {
    let bytes = number.as_bytes();
    (bytes.len() == 11
        && bytes[..4].iter().all(u8::is_ascii_uppercase)
        && bytes[4..].iter().all(u8::is_ascii_digit))
    .then_some(bytes[3])
}

/// Four letters ending in `U`, then seven digits (ISO 6346's shape).
fn is_container_shaped(number: &str) -> bool {
    iso_6346_category(number) == Some(b'U')
}

/// Whether `code` looks like an ISO 6346 size and type code (`22GP`, `45R1`, `L5G1`): four
/// letters and digits.
fn is_size_type_code(code: &str) -> bool {
    code.len() == 4 && code.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The event's equipment reference when it is a freight container's number: four letters
/// ending in `U`, then seven digits (ISO 6346); or, with another fourth letter than ISO
/// 6346's `J` (detachable equipment) and `Z` (trailers and chassis), when the carrier gives
/// the box's size and type code (`ISOEquipmentCode`), as anonymised samples (`ABCD1234567`)
/// and owner codes outside the BIC register do. Carriers also track chassis, trailers and
/// their own equipment ids; those stay raw events, never containers. The check digit is not
/// held against the carrier: it wrote the number, and a typo in it is still its box.
fn container_number(event: &CarrierEvent) -> Option<String> {
    let number = event.equipment_reference.as_deref()?.trim().to_uppercase();
    let sized = event
        .iso_equipment_code
        .as_deref()
        .is_some_and(|code| is_size_type_code(code.trim()));
    match iso_6346_category(&number)? {
        b'U' => Some(number),
        b'J' | b'Z' => None,
        _ if sized => Some(number),
        _ => None,
    }
}

/// The voyage the event belongs to: the import voyage for an arrival or a discharge (the
/// voyage that brought the box), the export voyage for a load or a departure, and whichever
/// the carrier gives when it gives one only.
/// The event's call when it can name a vessel: not a move by rail or truck. A rail call's
/// conveyance is a train, whatever its carrier puts in the vessel fields (an X12 322 names
/// its railroad in N1*RR, which reaches the container as its rail carrier,
/// `pod_rail_carrier_scac` or `ind_rail_carrier_scac`); Terminal49's rail events name no
/// vessel and no voyage.
fn vessel_call(event: &CarrierEvent) -> Option<&tidemark_carriers::TransportCall> {
    let call = event.transport_call.as_ref()?;
    (!matches!(
        call.mode_of_transport,
        Some(ModeOfTransport::Rail | ModeOfTransport::Truck)
    ))
    .then_some(call)
}

fn voyage_number(event: &CarrierEvent) -> Option<String> {
    let call = event.transport_call.as_ref()?;
    let import = call.carrier_import_voyage_number.clone();
    let export = call.carrier_export_voyage_number.clone();
    match event.dcsa_code {
        DcsaCode::Arri | DcsaCode::Disc => import.or(export),
        _ => export.or(import),
    }
}

/// The port terminal an event happened at, as the carrier names it (DCSA `facilityCode`
/// from the SMDG list, else `otherFacility`): its transport call's facility, when the call
/// is at the event's place and is a port terminal (`POTE`, or no type given).
fn facility_of(event: &CarrierEvent) -> Option<ReportedFacility> {
    let call = event.transport_call.as_ref()?;
    let at_the_event = match (&call.un_location_code, &event.un_location_code) {
        (Some(call_at), Some(event_at)) => call_at.eq_ignore_ascii_case(event_at),
        _ => true,
    };
    let port_terminal = call
        .facility_type_code
        .as_deref()
        .is_none_or(|t| t == "POTE");
    let named = call.facility_smdg_code.is_some() || call.facility_name.is_some();
    (at_the_event && port_terminal && named).then(|| ReportedFacility {
        smdg_code: call.facility_smdg_code.clone(),
        name: call.facility_name.clone(),
    })
}

/// The reference terminal a carrier names at the port `locode`; `None` when Tidemark does
/// not know it. One rule for the events and the shipment's `pod_terminal`.
pub fn terminal_of(
    reference: &ReferenceData,
    locode: &str,
    facility: &ReportedFacility,
) -> Option<Uuid> {
    reference
        .terminal_named(
            locode,
            facility.smdg_code.as_deref(),
            facility.name.as_deref(),
        )
        .map(|terminal| terminal.id)
}

/// The reference terminal where an event happened, when its carrier names one Tidemark
/// knows.
fn event_terminal(reference: &ReferenceData, event: &CarrierEvent) -> Option<Uuid> {
    let locode = event.un_location_code.as_deref()?;
    terminal_of(reference, locode, &facility_of(event)?)
}

/// Every event as the carrier sent it, named where Terminal49's raw vocabulary has a name.
fn raw_events(
    route: &Route,
    events: &[CarrierEvent],
    ids: &[String],
    reference: &ReferenceData,
) -> Vec<ReportedRawEvent> {
    events
        .iter()
        .zip(ids)
        .map(|(event, id)| ReportedRawEvent {
            source_id: id.clone(),
            container_number: equipment_number(event),
            reported: ReportedEvent {
                original_event: original_event(event),
                event: t49_event_name(event, &context(route, event))
                    .and_then(tidemark_domain::TransportEventName::raw_event_name)
                    .map(str::to_owned),
                timestamp: event.event_datetime,
                estimated: event.classifier != Classifier::Actual,
                location_locode: event.un_location_code.clone(),
                location_name: event.location_name.clone(),
                vessel_name: vessel_call(event).and_then(|c| c.vessel_name.clone()),
                vessel_imo: vessel_call(event).and_then(|c| c.vessel_imo.clone()),
                voyage_number: vessel_call(event).and_then(|_| voyage_number(event)),
                terminal_id: event_terminal(reference, event),
            },
        })
        .collect()
}

/// A status the line gave only in its own words: a raw event whose `original_event` is those
/// words and whose `event` is none, known across polls by what it says, about which
/// container, where and when.
fn worded_raw_event(status: &WordedStatus) -> ReportedRawEvent {
    let container_number = status
        .equipment_reference
        .as_deref()
        .map(|number| number.trim().to_uppercase())
        .filter(|number| iso_6346_category(number) == Some(b'U'));
    ReportedRawEvent {
        source_id: [
            "WORDS",
            &status.words,
            status.un_location_code.as_deref().unwrap_or_default(),
            status.equipment_reference.as_deref().unwrap_or_default(),
            &status.at.timestamp().to_string(),
        ]
        .join("|"),
        container_number,
        reported: ReportedEvent {
            original_event: status.words.clone(),
            event: None,
            timestamp: status.at,
            estimated: false,
            location_locode: status.un_location_code.clone(),
            location_name: status.location_name.clone(),
            vessel_name: None,
            vessel_imo: None,
            voyage_number: None,
            terminal_id: None,
        },
    }
}

/// The terminal the carrier names at the port of discharge, from its latest event there at a
/// port terminal that has a code or a name.
fn pod_terminal(route: &Route, events: &[CarrierEvent]) -> Option<ReportedFacility> {
    let pod = route.port_of_discharge.as_deref()?;
    events
        .iter()
        .filter(|e| e.un_location_code.as_deref() == Some(pod))
        .filter_map(facility_of)
        .next_back()
}

/// Whether a planned (`PLN`) event gives way to an `EST` of the same milestone at the same
/// call: both read as the same `estimated.*` milestone, and the estimate is the fresher
/// figure, so only it becomes the milestone (the plan stays a raw event).
fn plan_gives_way(
    event: &CarrierEvent,
    name: TransportEventName,
    named: &[(&CarrierEvent, TransportEventName)],
) -> bool {
    event.classifier == Classifier::Planned
        && named.iter().any(|&(other, other_name)| {
            other.classifier == Classifier::Estimated
                && other_name == name
                && at_the_same_call(other, event)
        })
}

/// Whether an estimate sits beside the actual it announced in one answer (the same move at
/// the same call): a line that answers with the voyage as it stands keeps its last ETA next
/// to the ATA. The estimate is no milestone then; the actual is.
fn replaced_by_actual(event: &CarrierEvent, events: &[CarrierEvent]) -> bool {
    event.classifier == Classifier::Estimated
        && events.iter().any(|other| {
            other.classifier == Classifier::Actual
                && other.dcsa_code == event.dcsa_code
                && at_the_same_call(other, event)
        })
}

/// Whether two events concern the same container at the same place, and the same transport
/// call when both name one.
fn at_the_same_call(a: &CarrierEvent, b: &CarrierEvent) -> bool {
    fn call_id(e: &CarrierEvent) -> Option<&str> {
        e.transport_call
            .as_ref()
            .and_then(|c| c.transport_call_id.as_deref())
    }
    a.un_location_code == b.un_location_code
        && equipment_number(a) == equipment_number(b)
        && match (call_id(a), call_id(b)) {
            (Some(x), Some(y)) => x == y,
            _ => true,
        }
}

/// What makes two milestones the same: name, container, time and place.
type MilestoneKey = (
    TransportEventName,
    Option<String>,
    DateTime<Utc>,
    Option<String>,
);

/// The value named most often (the first of equals), trimmed; `None` when none is named.
fn most_named<'a>(values: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for value in values.map(str::trim).filter(|v| !v.is_empty()) {
        match counts.iter_mut().find(|(seen, _)| *seen == value) {
            Some((_, count)) => *count += 1,
            None => counts.push((value, 1)),
        }
    }
    let most = counts.iter().map(|(_, count)| *count).max()?;
    counts
        .iter()
        .find(|(_, count)| *count == most)
        .map(|(value, _)| (*value).to_owned())
}

/// Reads one poll's events into a report; `reference` names the terminals they happened at.
pub fn from_snapshot(snapshot: &CarrierSnapshot, reference: &ReferenceData) -> CarrierReport {
    let route = route_of(&snapshot.events);
    let mut containers: Vec<ReportedContainer> = Vec::new();
    for event in &snapshot.events {
        let Some(number) = container_number(event).or_else(|| referenced_container(event)) else {
            continue;
        };
        match containers.iter_mut().find(|c| c.number == number) {
            Some(known) if known.iso_equipment_code.is_none() => {
                known
                    .iso_equipment_code
                    .clone_from(&event.iso_equipment_code);
            }
            Some(_) => {}
            None => containers.push(ReportedContainer {
                number,
                iso_equipment_code: event.iso_equipment_code.clone(),
            }),
        }
    }
    let ids = source_ids(&snapshot.events);
    let named: Vec<(&CarrierEvent, &String, TransportEventName)> = snapshot
        .events
        .iter()
        .zip(&ids)
        .filter_map(|(event, id)| {
            Some((event, id, t49_event_name(event, &context(&route, event))?))
        })
        .collect();
    let plain: Vec<(&CarrierEvent, TransportEventName)> = named
        .iter()
        .map(|&(event, _, name)| (event, name))
        .collect();
    // Estimates the answer's own actuals replaced, read once.
    let replaced: Vec<bool> = named
        .iter()
        .map(|(event, _, _)| replaced_by_actual(event, &snapshot.events))
        .collect();
    let replaced_pod_eta = named
        .iter()
        .zip(&replaced)
        .filter(|((event, _, name), replaced)| {
            **replaced
                && *name == TransportEventName::EstimatedVesselArrived
                && event.un_location_code.is_some()
                && event.un_location_code == route.port_of_discharge
        })
        .map(|((event, _, _), _)| event.event_datetime)
        .next_back();
    // Two events the carrier sent for one call (the same milestone, container, place and
    // time under two ids) are one milestone.
    let mut seen: Vec<MilestoneKey> = Vec::new();
    let milestones = named
        .iter()
        .zip(&replaced)
        .filter(|(_, replaced)| !**replaced)
        .map(|(named, _)| named)
        .filter(|(event, _, name)| !plan_gives_way(event, *name, &plain))
        .filter(|(event, _, name)| {
            let key = (
                *name,
                equipment_number(event),
                event.event_datetime,
                event.un_location_code.clone(),
            );
            let first = !seen.contains(&key);
            if first {
                seen.push(key);
            }
            first
        })
        .map(|&(event, id, name)| Milestone {
            source_id: id.clone(),
            event: name,
            container_number: equipment_number(event),
            at: event.event_datetime,
            location_locode: event.un_location_code.clone(),
            vessel_name: vessel_call(event).and_then(|c| c.vessel_name.clone()),
            vessel_imo: vessel_call(event).and_then(|c| c.vessel_imo.clone()),
            voyage_number: vessel_call(event).and_then(|_| voyage_number(event)),
            terminal_id: event_terminal(reference, event),
        })
        .collect();
    let mut raw_events = raw_events(&route, &snapshot.events, &ids, reference);
    raw_events.extend(snapshot.worded.iter().map(worded_raw_event));
    let transport_document = most_named(
        snapshot
            .events
            .iter()
            .flat_map(|e| e.document_numbers(DocumentType::TransportDocument)),
    );
    let pod_terminal = pod_terminal(&route, &snapshot.events);
    CarrierReport {
        containers,
        raw_events,
        pod_terminal,
        port_of_lading: route.port_of_lading,
        port_of_discharge: route.port_of_discharge,
        destination: route.place_of_delivery,
        transport_document,
        pickup: Vec::new(),
        milestones,
        replaced_pod_eta,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn sample() -> CarrierSnapshot {
        let body = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/reference/dcsa/samples/tnt-220-response.json"
        ))
        .expect("the DCSA sample is beside the project");
        tidemark_carriers::dcsa::parse_events(&body).expect("the sample parses")
    }

    #[test]
    fn the_dcsa_sample_reads_into_a_report_without_inventing_containers() {
        let report = from_snapshot(&sample(), ReferenceData::embedded());

        assert!(report.containers.iter().all(|c| !c.number.is_empty()));
        assert!(report.milestones.iter().all(|m| !m.source_id.is_empty()));
    }

    #[test]
    fn every_carrier_event_is_kept_as_a_raw_event_even_without_a_milestone() {
        let snapshot = sample();
        let report = from_snapshot(&snapshot, ReferenceData::embedded());

        assert_eq!(report.raw_events.len(), snapshot.events.len());
        assert!(report.raw_events.len() >= report.milestones.len());
        assert!(
            report
                .raw_events
                .iter()
                .all(|e| !e.reported.original_event.is_empty())
        );
    }

    /// A DCSA 2.2 event at `locode` whose transport call is at `call_at` with `facility`
    /// (the call's facility members).
    fn event_at(id: &str, locode: &str, call_at: &str, facility: serde_json::Value) -> Value {
        let mut call = json!({
            "transportCallID": format!("call-{id}"),
            "UNLocationCode": call_at,
            "modeOfTransport": "VESSEL",
            "vessel": {"vesselIMONumber": "9321483", "vesselName": "KING OF THE SEAS"},
        });
        if let (Some(call), Some(facility)) = (call.as_object_mut(), facility.as_object()) {
            call.extend(facility.clone());
        }
        json!({
            "eventID": id,
            "eventType": "EQUIPMENT",
            "eventClassifierCode": "ACT",
            "eventDateTime": "2026-03-01T10:00:00Z",
            "equipmentEventTypeCode": "DISC",
            "equipmentReference": "MSKU1234565",
            "emptyIndicatorCode": "LADEN",
            "eventLocation": {"UNLocationCode": locode},
            "transportCall": call,
        })
    }

    fn report_of(events: &[Value]) -> CarrierReport {
        let body = serde_json::to_vec(events).expect("JSON");
        let snapshot = tidemark_carriers::dcsa::parse_events(&body).expect("the events parse");
        from_snapshot(&snapshot, ReferenceData::embedded())
    }

    fn vig() -> Uuid {
        tidemark_geo::reference::terminal_id("USORF", "Virginia International Gateway")
    }

    #[test]
    fn an_event_at_a_terminal_named_by_its_smdg_code_is_linked_to_it() {
        let facility = json!({
            "facilityCode": "VIG", "facilityCodeListProvider": "SMDG", "facilityTypeCode": "POTE"
        });

        let report = report_of(&[event_at("disc", "USORF", "USORF", facility)]);

        assert_eq!(report.milestones[0].terminal_id, Some(vig()));
        assert_eq!(report.raw_events[0].reported.terminal_id, Some(vig()));
    }

    #[test]
    fn an_event_at_a_terminal_named_by_name_is_linked_to_it() {
        let facility = json!({"otherFacility": "Wando Welch Terminal"});

        let report = report_of(&[event_at("disc", "USCHS", "USCHS", facility)]);

        let wando = tidemark_geo::reference::terminal_id("USCHS", "Wando Welch Terminal");
        assert_eq!(report.raw_events[0].reported.terminal_id, Some(wando));
    }

    #[test]
    fn an_event_names_no_terminal_for_an_unknown_code_another_list_a_depot_or_another_port() {
        let unknown = json!({"facilityCode": "NOPE", "facilityCodeListProvider": "SMDG"});
        let bic = json!({"facilityCode": "VIG", "facilityCodeListProvider": "BIC"});
        let depot = json!({"facilityCode": "VIG", "facilityTypeCode": "DEPO"});
        let elsewhere = json!({"facilityCode": "VIG", "facilityCodeListProvider": "SMDG"});

        let report = report_of(&[
            event_at("unknown", "USORF", "USORF", unknown),
            event_at("bic", "USORF", "USORF", bic),
            event_at("depot", "USORF", "USORF", depot),
            event_at("elsewhere", "USCHS", "USORF", elsewhere),
        ]);

        assert!(
            report
                .raw_events
                .iter()
                .all(|e| e.reported.terminal_id.is_none())
        );
        assert!(report.milestones.iter().all(|m| m.terminal_id.is_none()));
    }

    #[test]
    fn the_dcsa_samples_facility_is_no_terminal_tidemark_knows() {
        let report = from_snapshot(&sample(), ReferenceData::embedded());

        assert!(
            report
                .raw_events
                .iter()
                .all(|e| e.reported.terminal_id.is_none())
        );
    }

    /// A DCSA 2.2 vessel arrival at Rotterdam with `classifier`, on the call `call`.
    fn arrival(id: &str, classifier: &str, at: &str, call: &str) -> Value {
        json!({
            "eventID": id,
            "eventType": "TRANSPORT",
            "eventClassifierCode": classifier,
            "eventDateTime": at,
            "transportEventTypeCode": "ARRI",
            "transportCall": {
                "transportCallID": call,
                "UNLocationCode": "NLRTM",
                "modeOfTransport": "VESSEL",
                "vessel": {"vesselIMONumber": "9321483", "vesselName": "KING OF THE SEAS"}
            }
        })
    }

    /// A laden load at Shanghai, so the route has a port of lading before Rotterdam.
    fn load_at_shanghai() -> Value {
        let mut load = event_at("load", "CNSHA", "CNSHA", json!({}));
        load["equipmentEventTypeCode"] = json!("LOAD");
        load["eventDateTime"] = json!("2026-02-01T10:00:00Z");
        load
    }

    fn etas(report: &CarrierReport) -> Vec<(&str, DateTime<Utc>)> {
        report
            .milestones
            .iter()
            .filter(|m| m.event == TransportEventName::EstimatedVesselArrived)
            .map(|m| (m.source_id.as_str(), m.at))
            .collect()
    }

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().expect("a valid date-time")
    }

    #[test]
    fn a_planned_arrival_alone_gives_the_eta() {
        let report = report_of(&[
            load_at_shanghai(),
            arrival("pln", "PLN", "2026-03-10T06:00:00Z", "call-rtm"),
        ]);

        assert_eq!(report.port_of_discharge.as_deref(), Some("NLRTM"));
        assert_eq!(etas(&report), [("pln", at("2026-03-10T06:00:00Z"))]);
    }

    #[test]
    fn an_estimated_arrival_wins_over_a_planned_one_for_the_same_call() {
        let report = report_of(&[
            load_at_shanghai(),
            arrival("pln", "PLN", "2026-03-10T06:00:00Z", "call-rtm"),
            arrival("est", "EST", "2026-03-12T18:00:00Z", "call-rtm"),
        ]);

        assert_eq!(etas(&report), [("est", at("2026-03-12T18:00:00Z"))]);
        // The plan is still kept as the carrier sent it.
        assert!(report.raw_events.iter().any(|e| e.source_id == "pln"));
    }

    #[test]
    fn a_status_in_the_lines_own_words_is_a_raw_event_of_its_container_and_no_milestone() {
        let snapshot = CarrierSnapshot {
            worded: vec![WordedStatus {
                words: "Cargo Received".to_owned(),
                at: at("2015-09-19T13:31:00Z"),
                equipment_reference: Some("cbhu4398907".to_owned()),
                un_location_code: Some("CNTAO".to_owned()),
                location_name: Some("Qingdao".to_owned()),
            }],
            ..CarrierSnapshot::default()
        };

        let report = from_snapshot(&snapshot, ReferenceData::embedded());

        assert!(report.milestones.is_empty());
        let [raw] = report.raw_events.as_slice() else {
            panic!("one raw event: {:?}", report.raw_events);
        };
        assert_eq!(raw.container_number.as_deref(), Some("CBHU4398907"));
        assert_eq!(raw.reported.original_event, "Cargo Received");
        assert_eq!(raw.reported.event, None);
        assert_eq!(raw.reported.location_locode.as_deref(), Some("CNTAO"));
    }

    #[test]
    fn an_estimate_beside_the_actual_arrival_it_announced_is_no_milestone_but_the_eta() {
        let report = report_of(&[
            load_at_shanghai(),
            arrival("est", "EST", "2026-03-10T06:00:00Z", "call-rtm"),
            arrival("act", "ACT", "2026-03-10T05:24:00Z", "call-rtm"),
        ]);

        assert_eq!(etas(&report), []);
        assert_eq!(report.replaced_pod_eta, Some(at("2026-03-10T06:00:00Z")));
        assert!(report.raw_events.iter().any(|e| e.source_id == "est"));
    }

    #[test]
    fn an_estimate_for_another_call_is_not_replaced_by_an_actual_elsewhere() {
        let report = report_of(&[
            load_at_shanghai(),
            arrival("est", "EST", "2026-03-12T06:00:00Z", "call-rtm"),
            arrival("act", "ACT", "2026-03-01T05:24:00Z", "call-rtm-earlier"),
        ]);

        assert_eq!(etas(&report), [("est", at("2026-03-12T06:00:00Z"))]);
        assert_eq!(report.replaced_pod_eta, None);
    }

    /// A DCSA 2.2 equipment event `code` at `place` and `at`, laden, on a vessel call unless
    /// `mode` says otherwise (`None`: no mode given).
    fn move_at(id: &str, code: &str, place: &str, at: &str, mode: Option<&str>) -> Value {
        let mut call = json!({
            "transportCallID": format!("call-{place}"),
            "UNLocationCode": place,
            "vessel": {"vesselIMONumber": "9321483", "vesselName": "KING OF THE SEAS"},
        });
        if let Some(mode) = mode {
            call["modeOfTransport"] = json!(mode);
        }
        if mode.is_some_and(|m| m != "VESSEL") {
            call.as_object_mut().map(|c| c.remove("vessel"));
        }
        json!({
            "eventID": id,
            "eventType": "EQUIPMENT",
            "eventClassifierCode": "ACT",
            "eventDateTime": at,
            "equipmentEventTypeCode": code,
            "equipmentReference": "MSKU1234565",
            "emptyIndicatorCode": "LADEN",
            "eventLocation": {"UNLocationCode": place},
            "transportCall": call,
        })
    }

    fn names(report: &CarrierReport) -> Vec<(String, &'static str)> {
        let mut named: Vec<_> = report
            .milestones
            .iter()
            .map(|m| {
                (
                    m.location_locode.clone().unwrap_or_default(),
                    m.event.as_str(),
                )
            })
            .collect();
        named.sort();
        named
    }

    #[test]
    fn a_port_where_the_box_is_discharged_and_loaded_again_is_a_transshipment() {
        let report = report_of(&[
            move_at("1", "LOAD", "CNSHA", "2026-02-01T00:00:00Z", Some("VESSEL")),
            move_at("2", "DISC", "SGSIN", "2026-02-08T00:00:00Z", Some("VESSEL")),
            move_at("3", "LOAD", "SGSIN", "2026-02-10T00:00:00Z", Some("VESSEL")),
        ]);

        assert_eq!(report.port_of_lading.as_deref(), Some("CNSHA"));
        assert_eq!(report.port_of_discharge, None);
        assert!(names(&report).contains(&(
            "SGSIN".to_owned(),
            "container.transport.transshipment_discharged"
        )));
    }

    #[test]
    fn an_estimated_arrival_at_a_later_port_outranks_an_earlier_actual_discharge() {
        let mut eta = arrival("eta", "EST", "2026-03-10T06:00:00Z", "call-rtm");
        eta["transportCall"]["UNLocationCode"] = json!("NLRTM");
        let report = report_of(&[
            move_at("1", "LOAD", "CNSHA", "2026-02-01T00:00:00Z", Some("VESSEL")),
            move_at("2", "DISC", "SGSIN", "2026-02-08T00:00:00Z", Some("VESSEL")),
            eta,
        ]);

        assert_eq!(report.port_of_discharge.as_deref(), Some("NLRTM"));
        assert!(names(&report).contains(&(
            "SGSIN".to_owned(),
            "container.transport.transshipment_discharged"
        )));
    }

    #[test]
    fn a_rail_arrival_is_never_the_port_of_discharge() {
        let mut rail = arrival("rail", "ACT", "2026-03-20T06:00:00Z", "call-chi");
        rail["transportCall"]["UNLocationCode"] = json!("USCHI");
        rail["transportCall"]["modeOfTransport"] = json!("RAIL");
        let report = report_of(&[
            move_at("1", "LOAD", "CNSHA", "2026-02-01T00:00:00Z", Some("VESSEL")),
            move_at("2", "DISC", "USLAX", "2026-03-01T00:00:00Z", Some("VESSEL")),
            rail,
        ]);

        assert_eq!(report.port_of_discharge.as_deref(), Some("USLAX"));
    }

    #[test]
    fn the_rail_moves_of_a_shipment_known_only_from_a_ramp_are_its_inland_milestones() {
        // No vessel call at all: a ramp's rail load at Long Beach, rail arrival at Saint
        // Paul and unload at Chicago, then the full box out of the Chicago ramp.
        let report = report_of(&[
            move_at("1", "LOAD", "USLGB", "2016-05-24T14:30:00Z", Some("RAIL")),
            move_at("2", "DISC", "USCHI", "2016-05-30T10:00:00Z", Some("RAIL")),
            move_at("3", "GTOT", "USCHI", "2016-06-10T15:45:20Z", Some("RAIL")),
        ]);

        assert_eq!(report.port_of_discharge, None);
        // The ramp the full box left is the inland destination.
        assert_eq!(report.destination.as_deref(), Some("USCHI"));
        assert_eq!(
            names(&report),
            [
                ("USCHI".to_owned(), "container.transport.full_out"),
                ("USCHI".to_owned(), "container.transport.rail_unloaded"),
                ("USLGB".to_owned(), "container.transport.rail_loaded"),
            ]
        );
    }

    #[test]
    fn a_rail_move_before_a_known_vessel_load_is_no_inland_milestone() {
        // An export: loaded on rail inland, then on the vessel at Los Angeles. Terminal49
        // tracks rail on the destination side only.
        let report = report_of(&[
            move_at("1", "LOAD", "USCHI", "2026-01-20T00:00:00Z", Some("RAIL")),
            move_at("2", "LOAD", "USLAX", "2026-02-01T00:00:00Z", Some("VESSEL")),
        ]);

        assert_eq!(report.port_of_lading.as_deref(), Some("USLAX"));
        assert_eq!(
            names(&report),
            [("USLAX".to_owned(), "container.transport.vessel_loaded")]
        );
    }

    #[test]
    fn moves_without_a_mode_still_make_the_route_and_its_milestones() {
        let report = report_of(&[
            move_at("1", "LOAD", "CNSHA", "2026-02-01T00:00:00Z", None),
            move_at("2", "DISC", "NLRTM", "2026-03-01T00:00:00Z", None),
        ]);

        assert_eq!(report.port_of_lading.as_deref(), Some("CNSHA"));
        assert_eq!(report.port_of_discharge.as_deref(), Some("NLRTM"));
        assert_eq!(
            names(&report),
            [
                ("CNSHA".to_owned(), "container.transport.vessel_loaded"),
                ("NLRTM".to_owned(), "container.transport.vessel_discharged"),
            ]
        );
    }

    #[test]
    fn events_sharing_an_id_are_kept_apart() {
        let mut pick = move_at("same", "LOAD", "CNSHA", "2026-02-01T00:00:00Z", None);
        pick["equipmentReference"] = json!("MSKU7654321");
        let report = report_of(&[
            move_at("same", "LOAD", "CNSHA", "2026-02-01T00:00:00Z", None),
            pick,
        ]);

        let ids: BTreeSet<&str> = report
            .raw_events
            .iter()
            .map(|e| e.source_id.as_str())
            .collect();
        assert_eq!(ids.len(), 2, "{ids:?}");
        assert!(ids.iter().all(|id| id.starts_with("same|")));
    }

    #[test]
    fn a_unique_id_stays_the_carriers_own() {
        let report = report_of(&[move_at(
            "e-1",
            "LOAD",
            "CNSHA",
            "2026-02-01T00:00:00Z",
            None,
        )]);

        assert_eq!(report.raw_events[0].source_id, "e-1");
    }

    #[test]
    fn equipment_that_is_not_a_freight_container_is_no_container() {
        let mut chassis = move_at("1", "LOAD", "CNSHA", "2026-02-01T00:00:00Z", None);
        chassis["equipmentReference"] = json!("MSKZ1234567");
        let mut own_id = move_at("2", "LOAD", "CNSHA", "2026-02-01T00:00:00Z", None);
        own_id["equipmentReference"] = json!("EQ-42");

        let report = report_of(&[chassis, own_id]);

        assert!(report.containers.is_empty(), "{:?}", report.containers);
        assert_eq!(report.raw_events.len(), 2);
    }

    #[test]
    fn the_transport_document_the_events_name_is_reported() {
        let mut load = move_at("1", "LOAD", "CNSHA", "2026-02-01T00:00:00Z", None);
        load["documentReferences"] = json!([
            {"documentReferenceType": "TRD", "documentReferenceValue": "MAEU123456789"},
            {"documentReferenceType": "BKG", "documentReferenceValue": "987654321"}
        ]);

        let report = report_of(&[load]);

        assert_eq!(report.transport_document.as_deref(), Some("MAEU123456789"));
    }

    fn report_of_3_0(events: &[Value]) -> CarrierReport {
        let body = serde_json::to_vec(&json!({ "events": events })).expect("JSON");
        let snapshot = tidemark_carriers::dcsa3::parse_events(&body).expect("the events parse");
        assert!(snapshot.skipped.is_empty(), "{:?}", snapshot.skipped);
        from_snapshot(&snapshot, ReferenceData::embedded())
    }

    /// A DCSA 3.0.0 event of `family` (`IOT`, `REEFER`) with `code`, about `APZU4812090`.
    fn reading(family: &str, code: &str, at: &str) -> Value {
        let code_field = format!("{}EventTypeCode", family.to_lowercase());
        json!({
            "eventID": format!("{family}-{at}"),
            "eventDateTime": at,
            "eventLocation": {"UNLocationCode": "USNYC"},
            "eventClassification": {
                "eventTypeCode": family,
                "eventClassifierCode": "ACT",
                code_field: code
            },
            "equipmentDetails": {"equipmentReference": "APZU4812090", "ISOEquipmentCode": "45R1"}
        })
    }

    #[test]
    fn iot_and_reefer_events_are_kept_raw_about_their_container_and_are_no_milestones() {
        let report = report_of_3_0(&[
            reading("IOT", "DETC", "2026-01-20T16:45:00Z"),
            reading("REEFER", "MEAS", "2026-01-20T18:00:00Z"),
        ]);

        assert!(report.milestones.is_empty(), "{:?}", report.milestones);
        let raw: Vec<(&str, Option<&str>)> = report
            .raw_events
            .iter()
            .map(|e| {
                (
                    e.reported.original_event.as_str(),
                    e.container_number.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            raw,
            [
                ("IOT DETC ACT", Some("APZU4812090")),
                ("REEFER MEAS ACT", Some("APZU4812090")),
            ]
        );
    }

    #[test]
    fn an_answer_of_iot_or_reefer_events_only_names_their_container() {
        let report = report_of_3_0(&[reading("REEFER", "MEAS", "2026-01-20T18:00:00Z")]);

        assert_eq!(
            report.containers,
            [ReportedContainer {
                number: "APZU4812090".to_owned(),
                iso_equipment_code: Some("45R1".to_owned()),
            }]
        );
    }

    #[test]
    fn an_empty_gate_in_the_carrier_calls_an_import_move_is_the_empty_returned() {
        let depart = json!({
            "eventID": "depa",
            "eventDateTime": "2026-01-16T11:30:00Z",
            "eventLocation": {"UNLocationCode": "GBSOU", "facilityTypeCode": "POTE"},
            "eventClassification": {
                "eventTypeCode": "TRANSPORT", "eventClassifierCode": "ACT",
                "transportEventTypeCode": "DEPA"
            },
            "transportDetails": {"transportCall": {"modeOfTransport": "VESSEL"}}
        });
        let gate_in = json!({
            "eventID": "gtin",
            "eventDateTime": "2026-01-17T13:45:00Z",
            "eventLocation": {"UNLocationCode": "FRPAR", "facilityTypeCode": "DEPO"},
            "eventClassification": {
                "eventTypeCode": "EQUIPMENT", "eventClassifierCode": "ACT",
                "equipmentEventTypeCode": "GTIN"
            },
            "equipmentDetails": {
                "equipmentReference": "APZU4812090", "emptyIndicatorCode": "EMPTY",
                "movementType": "IMPORT"
            }
        });

        let report = report_of_3_0(&[depart, gate_in]);

        assert!(names(&report).contains(&("FRPAR".to_owned(), "container.transport.empty_in")));
    }

    #[test]
    fn a_port_where_the_box_is_only_loaded_is_its_loading_call_not_a_transshipment() {
        // The vessel's arrival is dated after the (estimated, empty) load is planned: read
        // from the whole answer, the port is where the box waits to be loaded.
        let mut load = move_at(
            "load",
            "LOAD",
            "FRPAR",
            "2019-11-11T23:11:00Z",
            Some("VESSEL"),
        );
        load["eventClassifierCode"] = json!("EST");
        load["emptyIndicatorCode"] = json!("EMPTY");
        let mut arrival = arrival("arri", "ACT", "2021-01-09T13:12:56Z", "call-par");
        arrival["transportCall"]["UNLocationCode"] = json!("FRPAR");

        let report = report_of(&[load, arrival]);

        assert_eq!(report.port_of_lading.as_deref(), Some("FRPAR"));
        assert_eq!(report.port_of_discharge, None);
        assert!(report.milestones.is_empty(), "{:?}", names(&report));
        assert_eq!(report.raw_events.len(), 2);
    }

    #[test]
    fn a_second_port_the_box_is_loaded_at_is_a_transshipment_even_without_its_discharge() {
        let report = report_of(&[
            move_at("1", "LOAD", "CNSHA", "2026-02-01T00:00:00Z", Some("VESSEL")),
            move_at("2", "LOAD", "SGSIN", "2026-02-10T00:00:00Z", Some("VESSEL")),
            move_at("3", "DISC", "NLRTM", "2026-03-01T00:00:00Z", Some("VESSEL")),
        ]);

        assert_eq!(report.port_of_lading.as_deref(), Some("CNSHA"));
        assert_eq!(report.port_of_discharge.as_deref(), Some("NLRTM"));
        assert!(names(&report).contains(&(
            "SGSIN".to_owned(),
            "container.transport.transshipment_loaded"
        )));
    }

    #[test]
    fn a_number_outside_the_owner_register_is_a_container_when_its_size_and_type_are_given() {
        let mut sized = move_at("1", "DISC", "NOOSL", "2024-03-23T19:00:00Z", None);
        sized["equipmentReference"] = json!("ABCD1234567");
        sized["ISOEquipmentCode"] = json!("45RT");
        let mut unnamed_size = move_at("2", "DISC", "NOOSL", "2024-03-23T19:00:00Z", None);
        unnamed_size["equipmentReference"] = json!("ABCE1234567");

        let report = report_of(&[sized, unnamed_size]);

        let numbers: Vec<&str> = report
            .containers
            .iter()
            .map(|c| c.number.as_str())
            .collect();
        assert_eq!(numbers, ["ABCD1234567"]);
    }

    #[test]
    fn detachable_equipment_and_chassis_are_no_containers_even_with_a_size_and_type() {
        let mut detachable = move_at("1", "LOAD", "CNSHA", "2026-02-01T00:00:00Z", None);
        detachable["equipmentReference"] = json!("MSKJ1234567");
        detachable["ISOEquipmentCode"] = json!("22GP");
        let mut chassis = move_at("2", "LOAD", "CNSHA", "2026-02-01T00:00:00Z", None);
        chassis["equipmentReference"] = json!("MSKZ1234567");
        chassis["ISOEquipmentCode"] = json!("40CH");

        let report = report_of(&[detachable, chassis]);

        assert!(report.containers.is_empty(), "{:?}", report.containers);
    }

    #[test]
    fn an_empty_poll_gives_an_empty_report() {
        let report = from_snapshot(&CarrierSnapshot::default(), ReferenceData::embedded());

        assert_eq!(report, CarrierReport::default());
    }
}
