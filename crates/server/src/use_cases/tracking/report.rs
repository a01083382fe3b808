//! From what a DCSA carrier sent to a [`CarrierReport`]: the shipment's route (port of
//! lading, transshipments, port of discharge) is read off the events themselves, then each
//! event is named for its place in that route, and linked to the reference terminal its
//! transport call names, when Tidemark knows it.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use tidemark_carriers::dcsa::{JourneyStage, LegContext, LocationRole, t49_event_name};
use tidemark_carriers::{
    CarrierEvent, CarrierSnapshot, Classifier, DcsaCode, EmptyIndicator, EventKind, ModeOfTransport,
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
    transshipments: BTreeSet<String>,
    first_load_at: Option<DateTime<Utc>>,
    full_out_at: Option<DateTime<Utc>>,
}

fn is_vessel(event: &CarrierEvent) -> bool {
    matches!(
        event.mode_of_transport(),
        Some(ModeOfTransport::Vessel | ModeOfTransport::Barge)
    )
}

fn is_laden(event: &CarrierEvent) -> bool {
    event.empty_indicator != Some(EmptyIndicator::Empty)
}

fn route_of(events: &[CarrierEvent]) -> Route {
    let mut by_time: Vec<&CarrierEvent> = events.iter().collect();
    by_time.sort_by_key(|e| e.event_datetime);
    let loads = by_time
        .iter()
        .filter(|e| e.dcsa_code == DcsaCode::Load && is_vessel(e) && is_laden(e));
    let discharges = by_time
        .iter()
        .filter(|e| e.dcsa_code == DcsaCode::Disc && is_vessel(e) && is_laden(e));
    let departures = by_time
        .iter()
        .filter(|e| e.kind == EventKind::Transport && e.dcsa_code == DcsaCode::Depa);
    let arrivals = by_time
        .iter()
        .filter(|e| e.kind == EventKind::Transport && e.dcsa_code == DcsaCode::Arri);
    let first_load = loads.clone().next().copied();
    let port_of_lading = first_load
        .or_else(|| departures.clone().next().copied())
        .and_then(|e| e.un_location_code.clone());
    let port_of_discharge = discharges
        .clone()
        .next_back()
        .or_else(|| arrivals.clone().next_back())
        .and_then(|e| e.un_location_code.clone());
    let transshipments = loads
        .chain(discharges)
        .chain(departures)
        .chain(arrivals)
        .filter_map(|e| e.un_location_code.clone())
        .filter(|l| Some(l) != port_of_lading.as_ref() && Some(l) != port_of_discharge.as_ref())
        .collect();
    let full_out_at = by_time
        .iter()
        .filter(|e| {
            e.dcsa_code == DcsaCode::Gtot
                && is_laden(e)
                && e.classifier == Classifier::Actual
                && e.un_location_code.is_some()
                && e.un_location_code == port_of_discharge
        })
        .map(|e| e.event_datetime)
        .next();
    Route {
        first_load_at: first_load
            .filter(|e| e.classifier == Classifier::Actual)
            .map(|e| e.event_datetime),
        port_of_lading,
        port_of_discharge,
        transshipments,
        full_out_at,
    }
}

fn context(route: &Route, event: &CarrierEvent) -> LegContext {
    let role = match event.un_location_code.as_deref() {
        Some(l) if Some(l) == route.port_of_lading.as_deref() => LocationRole::PortOfLading,
        Some(l) if Some(l) == route.port_of_discharge.as_deref() => LocationRole::PortOfDischarge,
        Some(l) if route.transshipments.contains(l) => LocationRole::Transshipment,
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
fn source_id(event: &CarrierEvent) -> String {
    if let Some(id) = &event.event_id {
        return id.clone();
    }
    let call = event.transport_call.as_ref();
    let mut parts = vec![
        event.kind.as_str().to_owned(),
        event.dcsa_code.as_str().to_owned(),
        event.classifier.as_str().to_owned(),
        event.un_location_code.clone().unwrap_or_default(),
        event.equipment_reference.clone().unwrap_or_default(),
        call.and_then(|c| c.transport_call_id.clone())
            .unwrap_or_default(),
    ];
    if event.classifier == Classifier::Actual {
        parts.push(event.event_datetime.timestamp().to_string());
    }
    parts.join("|")
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

fn equipment_number(event: &CarrierEvent) -> Option<String> {
    match event.kind {
        EventKind::Equipment => event
            .equipment_reference
            .as_deref()
            .map(|n| n.trim().to_uppercase()),
        _ => None,
    }
}

fn voyage_number(event: &CarrierEvent, route: &Route) -> Option<String> {
    let call = event.transport_call.as_ref()?;
    let at_discharge =
        event.un_location_code.is_some() && event.un_location_code == route.port_of_discharge;
    if at_discharge {
        call.carrier_import_voyage_number
            .clone()
            .or_else(|| call.carrier_export_voyage_number.clone())
    } else {
        call.carrier_export_voyage_number.clone()
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
    reference: &ReferenceData,
) -> Vec<ReportedRawEvent> {
    events
        .iter()
        .map(|event| {
            let call = event.transport_call.as_ref();
            ReportedRawEvent {
                source_id: source_id(event),
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
                    vessel_name: call.and_then(|c| c.vessel_name.clone()),
                    vessel_imo: call.and_then(|c| c.vessel_imo.clone()),
                    voyage_number: voyage_number(event, route),
                    terminal_id: event_terminal(reference, event),
                },
            }
        })
        .collect()
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
/// call (same place, same container, and same transport call when both name one): both read
/// as the same `estimated.*` milestone, and the estimate is the fresher figure, so only it
/// becomes the milestone (the plan stays a raw event).
fn plan_gives_way(
    event: &CarrierEvent,
    name: TransportEventName,
    named: &[(&CarrierEvent, TransportEventName)],
) -> bool {
    if event.classifier != Classifier::Planned {
        return false;
    }
    let call_id = |e: &CarrierEvent| {
        e.transport_call
            .as_ref()
            .and_then(|c| c.transport_call_id.clone())
    };
    named.iter().any(|&(other, other_name)| {
        other.classifier == Classifier::Estimated
            && other_name == name
            && other.un_location_code == event.un_location_code
            && equipment_number(other) == equipment_number(event)
            && match (call_id(other), call_id(event)) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    })
}

/// Reads one poll's events into a report; `reference` names the terminals they happened at.
pub fn from_snapshot(snapshot: &CarrierSnapshot, reference: &ReferenceData) -> CarrierReport {
    let route = route_of(&snapshot.events);
    let mut containers: Vec<ReportedContainer> = Vec::new();
    for event in &snapshot.events {
        let Some(number) = event
            .equipment_reference
            .as_deref()
            .map(|n| n.trim().to_uppercase())
        else {
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
    let named: Vec<(&CarrierEvent, TransportEventName)> = snapshot
        .events
        .iter()
        .filter_map(|event| Some((event, t49_event_name(event, &context(&route, event))?)))
        .collect();
    let milestones = named
        .iter()
        .filter(|(event, name)| !plan_gives_way(event, *name, &named))
        .map(|&(event, name)| {
            let call = event.transport_call.as_ref();
            Milestone {
                source_id: source_id(event),
                event: name,
                container_number: equipment_number(event),
                at: event.event_datetime,
                location_locode: event.un_location_code.clone(),
                vessel_name: call.and_then(|c| c.vessel_name.clone()),
                vessel_imo: call.and_then(|c| c.vessel_imo.clone()),
                voyage_number: voyage_number(event, &route),
                terminal_id: event_terminal(reference, event),
            }
        })
        .collect();
    let raw_events = raw_events(&route, &snapshot.events, reference);
    let pod_terminal = pod_terminal(&route, &snapshot.events);
    CarrierReport {
        containers,
        raw_events,
        pod_terminal,
        port_of_lading: route.port_of_lading,
        port_of_discharge: route.port_of_discharge,
        destination: None,
        milestones,
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
    fn an_empty_poll_gives_an_empty_report() {
        let report = from_snapshot(&CarrierSnapshot::default(), ReferenceData::embedded());

        assert_eq!(report, CarrierReport::default());
    }
}
