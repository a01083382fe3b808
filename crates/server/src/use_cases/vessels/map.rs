//! A container's route map: its ports in order with their times, from the shipment and
//! the container's transport events, and each leg's vessel with its stored AIS track and
//! latest fix, handed to [`tidemark_geo::map::build_map`].

use chrono::{DateTime, Utc};
use tidemark_domain::{AccountId, ContainerId, ReportedEvent};
use tidemark_geo::map::{
    MapInput, MapLeg, MapPort, MapVessel, TrackPoint, VesselFix, track_window,
};
use tidemark_geo::reference::{ReferenceData, port_id};
use tidemark_store::StoreError;

use crate::parts::core::Core;
use crate::use_cases::vessels::vessels_named;

/// Stored positions a leg's track is sampled down to before simplification: four times
/// the points the map draws, so the simplified line keeps the track's shape.
const MAP_TRACK_SAMPLE: u32 = 2_000;

/// The map input of a container of the account; `NotFound` for another's or an unknown
/// container. A container with no known ports gets an input with no ports.
pub async fn container_map_input(
    core: &Core,
    account: AccountId,
    container: ContainerId,
) -> Result<MapInput, StoreError> {
    let container = core.store.container(account, container).await?;
    let shipment = core.store.shipment(account, container.shipment_id).await?;
    let mut events: Vec<Call> = core
        .store
        .raw_events_of_container(account, container.id)
        .await?
        .iter()
        .filter_map(|raw| Call::of(&raw.reported))
        .collect();
    events.sort_by_key(|e| e.at);

    let locodes = route(
        shipment.port_of_lading_locode.as_deref(),
        shipment.port_of_discharge_locode.as_deref(),
        &events,
    );
    if locodes.is_empty() {
        return Ok(MapInput::default());
    }
    let mut ports: Vec<MapPort> = locodes
        .iter()
        .map(|locode| map_port(core.reference, locode))
        .collect();
    let last = ports.len() - 1;
    for (i, port) in ports.iter_mut().enumerate() {
        let at = locodes[i].as_str();
        if i > 0 {
            port.inbound_ata_at = latest(&events, at, Move::Arrival, false);
            port.inbound_eta_at = latest(&events, at, Move::Arrival, true);
        }
        if i < last {
            port.outbound_atd_at = latest(&events, at, Move::Departure, false);
            port.outbound_etd_at = latest(&events, at, Move::Departure, true);
        }
    }
    // The shipment's own milestones fill what the events lack.
    if let Some(pol) = ports.first_mut() {
        pol.outbound_atd_at = pol.outbound_atd_at.or(shipment.pol_atd_at);
        pol.outbound_etd_at = pol.outbound_etd_at.or(shipment.pol_etd_at);
    }
    if let Some(pod) = ports.last_mut().filter(|_| last > 0) {
        pod.inbound_ata_at = pod.inbound_ata_at.or(shipment.pod_ata_at);
        pod.inbound_eta_at = shipment.pod_eta_at.or(pod.inbound_eta_at);
    }

    // Each leg's vessel: named by the departure from its first port, else by the arrival
    // at its last one; the POD's vessel on the shipment serves the final leg.
    let mut leg_vessels: Vec<(Option<Named>, Option<String>)> = Vec::new();
    for i in 0..last {
        let (from, to) = (locodes[i].as_str(), locodes[i + 1].as_str());
        let named = events
            .iter()
            .rev()
            .find(|e| e.locode == from && e.kind == Move::Departure && e.vessel_imo.is_some())
            .or_else(|| {
                events
                    .iter()
                    .rev()
                    .find(|e| e.locode == to && e.kind == Move::Arrival && e.vessel_imo.is_some())
            });
        let vessel = named
            .and_then(|e| e.vessel_imo.clone().map(|imo| (imo, e.vessel_name.clone())))
            .or_else(|| {
                (i + 1 == last)
                    .then(|| {
                        shipment
                            .pod_vessel_imo
                            .clone()
                            .map(|imo| (imo, shipment.pod_vessel_name.clone()))
                    })
                    .flatten()
            });
        let voyage = named.and_then(|e| e.voyage_number.clone()).or_else(|| {
            (i + 1 == last)
                .then(|| shipment.pod_voyage_number.clone())
                .flatten()
        });
        leg_vessels.push((vessel, voyage));
    }
    let named: Vec<(String, Option<String>)> =
        leg_vessels.iter().filter_map(|(v, _)| v.clone()).collect();
    let vessels = vessels_named(core, &named).await?;

    let mut legs = Vec::with_capacity(last);
    for (i, (vessel, voyage)) in leg_vessels.into_iter().enumerate() {
        let mut leg = MapLeg {
            voyage_number: voyage,
            ..MapLeg::default()
        };
        let Some(vessel) = vessel.and_then(|(imo, _)| vessels.get(&imo)) else {
            legs.push(leg);
            continue;
        };
        leg.vessel = Some(MapVessel {
            id: vessel.id,
            name: vessel
                .name
                .clone()
                .unwrap_or_else(|| vessel.imo.clone().unwrap_or_default()),
            imo: vessel.imo.clone(),
        });
        let (from, to) = (&ports[i], &ports[i + 1]);
        if let (Some(start), end) = track_window(from, to) {
            let end = end.unwrap_or_else(|| core.clock.now());
            if end >= start {
                leg.track = core
                    .store
                    .vessel_track_sampled(vessel.id, start, end, MAP_TRACK_SAMPLE)
                    .await?
                    .into_iter()
                    .map(|f| TrackPoint {
                        lon: f.longitude,
                        lat: f.latitude,
                        timestamp: f.timestamp,
                    })
                    .collect();
            }
            // A fix from before the departure belongs to an earlier voyage.
            leg.current = vessel
                .latest
                .filter(|f| f.timestamp >= start)
                .map(|f| VesselFix {
                    lon: f.longitude,
                    lat: f.latitude,
                    heading: f.heading.or(f.course),
                    speed_knots: f.speed_knots,
                    timestamp: f.timestamp,
                });
        }
        legs.push(leg);
    }

    Ok(MapInput {
        ports,
        legs,
        updated_at: Some(shipment.updated_at.max(container.updated_at)),
    })
}

/// A vessel as carrier data names it: IMO and name.
type Named = (String, Option<String>);

/// Whether a vessel call event is an arrival or a departure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Move {
    Arrival,
    Departure,
}

/// A carrier event about a vessel calling at a port: what the route is read from. Raw
/// events rather than transport events, because carriers announce transshipment calls
/// only as estimates, which Terminal49's event names do not cover.
struct Call {
    locode: String,
    kind: Move,
    at: DateTime<Utc>,
    estimated: bool,
    /// A loading says which vessel carries the container, not when it left.
    loading: bool,
    vessel_imo: Option<String>,
    vessel_name: Option<String>,
    voyage_number: Option<String>,
}

impl Call {
    fn of(event: &ReportedEvent) -> Option<Self> {
        let name = event.event.as_deref().unwrap_or_default();
        let original = event.original_event.to_ascii_uppercase();
        // Terminal49's names where the carrier has them, DCSA's transport codes otherwise.
        let kind = if name.ends_with("arrived") || original.contains("ARRI") {
            Move::Arrival
        } else if name.ends_with("departed")
            || original.contains("DEPA")
            || name.ends_with("loaded")
            || original.contains("LOAD")
        {
            Move::Departure
        } else {
            return None;
        };
        // Rail and inland moves are not sea legs.
        if name.starts_with("rail") || name.contains("destination") {
            return None;
        }
        let loaded = name.ends_with("loaded") || original.contains("LOAD");
        Some(Self {
            locode: event.location_locode.clone()?.trim().to_ascii_uppercase(),
            kind,
            at: event.timestamp,
            estimated: event.estimated,
            loading: loaded,
            vessel_imo: event
                .vessel_imo
                .clone()
                .filter(|imo| !imo.trim().is_empty()),
            vessel_name: event.vessel_name.clone(),
            voyage_number: event.voyage_number.clone(),
        })
    }
}

/// The latest time of an actual (or estimated) move at `locode`.
fn latest(events: &[Call], locode: &str, kind: Move, estimated: bool) -> Option<DateTime<Utc>> {
    events
        .iter()
        .filter(|e| e.locode == locode && e.kind == kind && e.estimated == estimated)
        .filter(|e| !e.loading)
        .map(|e| e.at)
        .max()
}

/// The route's ports in order: the port of lading, the ports the container's vessels
/// call at in between in time order, the port of discharge.
fn route(pol: Option<&str>, pod: Option<&str>, events: &[Call]) -> Vec<String> {
    let pol = pol.map(str::to_owned).or_else(|| {
        events
            .iter()
            .find(|e| e.vessel_imo.is_some())
            .map(|e| e.locode.clone())
    });
    let pod = pod.map(str::to_owned).or_else(|| {
        events
            .iter()
            .rev()
            .find(|e| e.kind == Move::Arrival && e.vessel_imo.is_some())
            .map(|e| e.locode.clone())
    });
    let mut locodes: Vec<String> = Vec::new();
    locodes.extend(pol.clone());
    for event in events.iter().filter(|e| e.vessel_imo.is_some()) {
        let locode = event.locode.as_str();
        if Some(locode) != pol.as_deref()
            && Some(locode) != pod.as_deref()
            && !locodes.iter().any(|l| l == locode)
        {
            locodes.push(locode.to_owned());
        }
    }
    if let Some(pod) = pod
        && locodes.last() != Some(&pod)
    {
        locodes.push(pod);
    }
    locodes
}

/// The reference port, or a bare one (no coordinates, so no feature) when unknown.
fn map_port(reference: &ReferenceData, locode: &str) -> MapPort {
    match reference.port_by_locode(locode) {
        Some(port) => MapPort::from_port(port),
        None => MapPort {
            id: port_id(locode),
            name: locode.to_owned(),
            state_abbr: None,
            state: None,
            country_code: locode.chars().take(2).collect(),
            country: String::new(),
            time_zone: "UTC".to_owned(),
            coordinates: None,
            inbound_eta_at: None,
            inbound_ata_at: None,
            outbound_etd_at: None,
            outbound_atd_at: None,
        },
    }
}
