//! From what a DCSA carrier sent to a [`CarrierReport`]: the shipment's route (port of
//! lading, transshipments, port of discharge) is read off the events themselves, then each
//! event is named for its place in that route.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use tidemark_carriers::dcsa::{JourneyStage, LegContext, LocationRole, t49_event_name};
use tidemark_carriers::{
    CarrierEvent, CarrierSnapshot, Classifier, DcsaCode, EmptyIndicator, EventKind, ModeOfTransport,
};
use tidemark_domain::ReportedEvent;
use tidemark_domain::tracking_update::{
    CarrierReport, Milestone, ReportedContainer, ReportedFacility, ReportedRawEvent,
};

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

/// Every event as the carrier sent it, named where Terminal49's raw vocabulary has a name.
fn raw_events(route: &Route, events: &[CarrierEvent]) -> Vec<ReportedRawEvent> {
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
                },
            }
        })
        .collect()
}

/// Reads one poll's events into a report.
/// The terminal the carrier names at the port of discharge, from its latest event there at a
/// port terminal that has a code or a name.
fn pod_terminal(route: &Route, events: &[CarrierEvent]) -> Option<ReportedFacility> {
    let pod = route.port_of_discharge.as_deref()?;
    events
        .iter()
        .filter(|e| e.un_location_code.as_deref() == Some(pod))
        .filter_map(|e| e.transport_call.as_ref())
        .filter(|call| {
            call.facility_type_code
                .as_deref()
                .is_none_or(|t| t == "POTE")
        })
        .filter(|call| call.facility_smdg_code.is_some() || call.facility_name.is_some())
        .map(|call| ReportedFacility {
            smdg_code: call.facility_smdg_code.clone(),
            name: call.facility_name.clone(),
        })
        .next_back()
}

pub fn from_snapshot(snapshot: &CarrierSnapshot) -> CarrierReport {
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
    let milestones = snapshot
        .events
        .iter()
        .filter_map(|event| {
            let name = t49_event_name(event, &context(&route, event))?;
            let call = event.transport_call.as_ref();
            Some(Milestone {
                source_id: source_id(event),
                event: name,
                container_number: equipment_number(event),
                at: event.event_datetime,
                location_locode: event.un_location_code.clone(),
                vessel_name: call.and_then(|c| c.vessel_name.clone()),
                vessel_imo: call.and_then(|c| c.vessel_imo.clone()),
                voyage_number: voyage_number(event, &route),
            })
        })
        .collect();
    let raw_events = raw_events(&route, &snapshot.events);
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
        let report = from_snapshot(&sample());

        assert!(report.containers.iter().all(|c| !c.number.is_empty()));
        assert!(report.milestones.iter().all(|m| !m.source_id.is_empty()));
    }

    #[test]
    fn every_carrier_event_is_kept_as_a_raw_event_even_without_a_milestone() {
        let snapshot = sample();
        let report = from_snapshot(&snapshot);

        assert_eq!(report.raw_events.len(), snapshot.events.len());
        assert!(report.raw_events.len() >= report.milestones.len());
        assert!(
            report
                .raw_events
                .iter()
                .all(|e| !e.reported.original_event.is_empty())
        );
    }

    #[test]
    fn an_empty_poll_gives_an_empty_report() {
        let report = from_snapshot(&CarrierSnapshot::default());

        assert_eq!(report, CarrierReport::default());
    }
}
