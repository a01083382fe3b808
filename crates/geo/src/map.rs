//! The container route map: a GeoJSON FeatureCollection shaped like Terminal49's
//! `GET /containers/{id}/map_geojson` (interface spec §2.12).
//!
//! Features come grouped by port, in route order. Each group holds the port, then the
//! features of the leg leaving it, in the order of the interface spec (§2.12):
//! `past_vessel_locations`, then `current_vessel` and `estimated_partial_leg` (vessel at
//! sea) or `estimated_full_legs` (leg not started). (Terminal49's example puts
//! `current_vessel` first; where the two differ the spec wins.) Property names and their order are
//! Terminal49's, so the output serializes byte-compatible in shape.
//!
//! Geometry is `Point` or `LineString` only, as Terminal49's schema allows. Longitudes
//! are within ±180° by default, as Terminal49 sends them; [`Longitudes::Continuous`]
//! lets a line run past ±180° instead, and [`Longitudes::Split`] cuts it at ±180° into
//! several `LineString` features of the same kind, so web maps do not draw it across
//! the globe.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Serialize, Serializer};
use uuid::Uuid;

use crate::future::join_route;
use crate::reference::Port;
use crate::searoute::{EARTH_RADIUS_KM, RouteOptions, SeaRouter};

/// How long after the ETA a leg still in progress collects past positions: Terminal49's
/// `end_time` of an open leg is its ETA plus seven days.
pub const OPEN_LEG_GRACE: TimeDelta = TimeDelta::days(7);

/// What the map is drawn from, in route order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MapInput {
    /// The ports of the route: the first is the POL, the last the POD, any between
    /// transshipments (labelled `TS1`, `TS2`, …).
    pub ports: Vec<MapPort>,
    /// `legs[i]` is the voyage from `ports[i]` to `ports[i + 1]`. Missing legs count as
    /// legs with no vessel data.
    pub legs: Vec<MapLeg>,
    /// When the shipment last changed: each port's `updated_at`.
    pub updated_at: Option<DateTime<Utc>>,
}

/// A port of the route and its times.
#[derive(Debug, Clone, PartialEq)]
pub struct MapPort {
    /// `location_id`.
    pub id: Uuid,
    /// Port name.
    pub name: String,
    /// Subdivision code.
    pub state_abbr: Option<String>,
    /// Subdivision name.
    pub state: Option<String>,
    /// ISO 3166-1 alpha-2.
    pub country_code: String,
    /// Country name.
    pub country: String,
    /// IANA time zone name.
    pub time_zone: String,
    /// `(lon, lat)`; a port without them has no feature and no estimated legs.
    pub coordinates: Option<(f64, f64)>,
    /// Estimated arrival.
    pub inbound_eta_at: Option<DateTime<Utc>>,
    /// Actual arrival: the leg into this port is over.
    pub inbound_ata_at: Option<DateTime<Utc>>,
    /// Estimated departure.
    pub outbound_etd_at: Option<DateTime<Utc>>,
    /// Actual departure: the leg out of this port has started.
    pub outbound_atd_at: Option<DateTime<Utc>>,
}

impl MapPort {
    /// A port from the reference data, with no times yet.
    #[must_use]
    pub fn from_port(port: &Port) -> Self {
        Self {
            id: port.id,
            name: port.name.clone(),
            state_abbr: port.state_abbr.clone(),
            state: None,
            country_code: port.country_code.clone(),
            country: port.country.clone(),
            time_zone: port.time_zone.clone(),
            coordinates: Some((port.longitude, port.latitude)),
            inbound_eta_at: None,
            inbound_ata_at: None,
            outbound_etd_at: None,
            outbound_atd_at: None,
        }
    }
}

/// The voyage between two consecutive ports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MapLeg {
    /// The vessel; without it there is no past track and no current vessel.
    pub vessel: Option<MapVessel>,
    /// Carrier voyage number.
    pub voyage_number: Option<String>,
    /// Stored positions of the vessel during the leg (see [`track_window`]), in any
    /// order; thinned for the map.
    pub track: Vec<TrackPoint>,
    /// The vessel's latest position, shown while the leg is under way (departed, not
    /// arrived).
    pub current: Option<VesselFix>,
}

/// A vessel.
#[derive(Debug, Clone, PartialEq)]
pub struct MapVessel {
    /// `vessel_id`.
    pub id: Uuid,
    /// Name.
    pub name: String,
    /// IMO number.
    pub imo: Option<String>,
}

/// A stored position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrackPoint {
    /// Degrees.
    pub lon: f64,
    /// Degrees.
    pub lat: f64,
    /// When.
    pub timestamp: DateTime<Utc>,
}

/// The vessel's latest position with course and speed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VesselFix {
    /// Degrees.
    pub lon: f64,
    /// Degrees.
    pub lat: f64,
    /// Degrees clockwise from north.
    pub heading: Option<f64>,
    /// Knots.
    pub speed_knots: Option<f64>,
    /// When.
    pub timestamp: DateTime<Utc>,
}

/// How longitudes of lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Longitudes {
    /// Within `[-180, 180]`, as Terminal49 writes them.
    #[default]
    Wrapped,
    /// Each within 180° of the one before, so lines cross ±180° without a jump.
    Continuous,
    /// Within `[-180, 180]`, and a line that crosses ±180° is cut there into several
    /// features of the same kind (RFC 7946 §3.1.9), each a `LineString` ending on the
    /// antimeridian, so no map draws it across the globe.
    Split,
}

/// Tunables.
#[derive(Debug, Clone, PartialEq)]
pub struct MapOptions {
    /// Most points of a past track.
    pub max_track_points: usize,
    /// Track points closer than this to the simplified line are dropped.
    pub track_tolerance_km: f64,
    /// How line longitudes are written.
    pub longitudes: Longitudes,
    /// Passages estimated legs avoid.
    pub route: RouteOptions,
    /// How near the planned leg a vessel must be for the partial leg to follow it
    /// (see [`crate::future::FutureOptions::on_leg_tolerance_km`]).
    pub on_leg_tolerance_km: f64,
}

impl Default for MapOptions {
    fn default() -> Self {
        Self {
            // A few hundred points draw a voyage faithfully at any zoom a map uses.
            max_track_points: 500,
            track_tolerance_km: 1.0,
            longitudes: Longitudes::Wrapped,
            route: RouteOptions::default(),
            on_leg_tolerance_km: 50.0,
        }
    }
}

/// The time range whose stored positions make the past track of the leg from `from`
/// to `to`, as Terminal49 reports it in `start_time` / `end_time`: from the departure
/// to the arrival, or while under way to the ETA plus [`OPEN_LEG_GRACE`]. `None` ends
/// are unknown (no departure yet; no arrival and no ETA).
#[must_use]
pub fn track_window(
    from: &MapPort,
    to: &MapPort,
) -> (Option<DateTime<Utc>>, Option<DateTime<Utc>>) {
    let end = to
        .inbound_ata_at
        .or_else(|| to.inbound_eta_at.map(|eta| eta + OPEN_LEG_GRACE));
    (from.outbound_atd_at, end)
}

/// Stands in for legs the input leaves out.
static NO_LEG: MapLeg = MapLeg {
    vessel: None,
    voyage_number: None,
    track: Vec::new(),
    current: None,
};

/// A GeoJSON FeatureCollection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FeatureCollection<'a> {
    #[serde(rename = "type")]
    kind: FeatureCollectionTag,
    /// The features, in the order described in the module documentation.
    pub features: Vec<Feature<'a>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
enum FeatureCollectionTag {
    #[default]
    FeatureCollection,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
enum FeatureTag {
    #[default]
    Feature,
}

/// A GeoJSON Feature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Feature<'a> {
    #[serde(rename = "type")]
    kind: FeatureTag,
    /// Where.
    pub geometry: Geometry,
    /// What, by `feature_type`.
    pub properties: Properties<'a>,
}

/// A GeoJSON geometry: `[lon, lat]` coordinates.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", content = "coordinates")]
pub enum Geometry {
    /// One position.
    Point([f64; 2]),
    /// A line of at least two positions.
    LineString(Vec<[f64; 2]>),
}

/// The properties of each feature type, field for field as Terminal49's.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "feature_type", rename_all = "snake_case")]
pub enum Properties<'a> {
    /// `portFeatureProperties`.
    Port(PortProperties<'a>),
    /// `pastVesselLocationsFeatureProperties`.
    PastVesselLocations(PastVesselLocationsProperties),
    /// `currentVesselFeatureProperties`.
    CurrentVessel(CurrentVesselProperties<'a>),
    /// `estimatedFullLegFeatureProperties` (the plural is Terminal49's).
    #[serde(rename = "estimated_full_legs")]
    EstimatedFullLegs(EstimatedFullLegProperties),
    /// `estimatedPartialLegFeatureProperties`.
    EstimatedPartialLeg(EstimatedPartialLegProperties),
}

/// Properties of a `port` feature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortProperties<'a> {
    pub ports_sequence: usize,
    pub ports_total: usize,
    pub location_id: Uuid,
    pub location_type: &'static str,
    pub name: &'a str,
    pub state_abbr: Option<&'a str>,
    pub state: Option<&'a str>,
    pub country_code: &'a str,
    pub country: &'a str,
    pub time_zone: &'a str,
    pub inbound_eta_at: Option<Timestamp>,
    pub inbound_ata_at: Option<Timestamp>,
    pub outbound_etd_at: Option<Timestamp>,
    pub outbound_atd_at: Option<Timestamp>,
    pub label: String,
    pub updated_at: Option<Timestamp>,
}

/// Properties of a `past_vessel_locations` feature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PastVesselLocationsProperties {
    pub ports_sequence: usize,
    pub vessel_id: Uuid,
    pub start_time: Timestamp,
    pub end_time: Timestamp,
    pub point_count: usize,
    pub outbound_atd_at: Option<Timestamp>,
    pub inbound_ata_at: Option<Timestamp>,
    pub inbound_eta_at: Option<Timestamp>,
}

/// Properties of a `current_vessel` feature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurrentVesselProperties<'a> {
    pub ports_sequence: usize,
    pub vessel_id: Uuid,
    pub vessel_name: &'a str,
    pub vessel_imo: Option<&'a str>,
    pub voyage_number: Option<&'a str>,
    pub vessel_location_timestamp: Timestamp,
    pub vessel_location_heading: Option<Number>,
    pub vessel_location_speed: Option<Number>,
    pub departure_port_id: Uuid,
    pub departure_port_name: &'a str,
    pub departure_port_state_abbr: Option<&'a str>,
    pub departure_port_state: Option<&'a str>,
    pub departure_port_country_code: &'a str,
    pub departure_port_country: &'a str,
    pub departure_port_label: String,
    pub departure_port_atd: Option<Timestamp>,
    pub departure_port_time_zone: &'a str,
    pub arrival_port_id: Uuid,
    pub arrival_port_name: &'a str,
    pub arrival_port_state_abbr: Option<&'a str>,
    pub arrival_port_state: Option<&'a str>,
    pub arrival_port_country_code: &'a str,
    pub arrival_port_country: &'a str,
    pub arrival_port_label: String,
    pub arrival_port_eta: Option<Timestamp>,
    pub arrival_port_time_zone: &'a str,
}

/// Properties of an `estimated_full_legs` feature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EstimatedFullLegProperties {
    pub ports_sequence: usize,
    pub previous_port_id: Uuid,
    pub next_port_id: Uuid,
    pub point_count: usize,
}

/// Properties of an `estimated_partial_leg` feature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EstimatedPartialLegProperties {
    pub ports_sequence: usize,
    pub current_port_id: Uuid,
    pub next_port_id: Uuid,
    pub point_count: usize,
}

/// A UTC time written to the second with a `Z`, as Terminal49 writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp(pub DateTime<Utc>);

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0.format("%Y-%m-%dT%H:%M:%SZ"))
    }
}

/// A number written as an integer when it is whole (Terminal49 writes heading `108`,
/// speed `21`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Number(pub f64);

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if v.fract() == 0.0 && v.abs() < 9.0e15 {
            s.serialize_i64(v as i64)
        } else {
            s.serialize_f64(v)
        }
    }
}

impl FeatureCollection<'_> {
    /// An empty collection.
    #[must_use]
    pub fn empty() -> Self {
        Self {
            kind: FeatureCollectionTag::FeatureCollection,
            features: Vec::new(),
        }
    }
}

/// Builds the map of a container's route. Never fails: what cannot be drawn (a port
/// without coordinates, a leg without a sea route) is left out.
///
/// Serialize the result directly (`serde_json::to_vec`, axum's `Json`): going through
/// `serde_json::Value` would sort the property keys, which Terminal49 does not.
#[must_use]
pub fn build_map<'a>(
    input: &'a MapInput,
    router: &SeaRouter,
    options: &MapOptions,
) -> FeatureCollection<'a> {
    let ports = &input.ports;
    let total = ports.len();
    let labels: Vec<String> = (0..total).map(|i| label(i, total)).collect();
    let updated_at = input.updated_at.map(Timestamp);
    let mut features = Vec::with_capacity(total * 3);

    for (i, port) in ports.iter().enumerate() {
        let sequence = i + 1;
        if let Some(at) = port.coordinates.and_then(valid) {
            features.push(feature(
                Geometry::Point(rounded(at)),
                Properties::Port(PortProperties {
                    ports_sequence: sequence,
                    ports_total: total,
                    location_id: port.id,
                    location_type: "Port",
                    name: &port.name,
                    state_abbr: port.state_abbr.as_deref(),
                    state: port.state.as_deref(),
                    country_code: &port.country_code,
                    country: &port.country,
                    time_zone: &port.time_zone,
                    inbound_eta_at: port.inbound_eta_at.map(Timestamp),
                    inbound_ata_at: port.inbound_ata_at.map(Timestamp),
                    outbound_etd_at: port.outbound_etd_at.map(Timestamp),
                    outbound_atd_at: port.outbound_atd_at.map(Timestamp),
                    label: labels[i].clone(),
                    updated_at,
                }),
            ));
        }
        let Some(next) = ports.get(i + 1) else {
            continue;
        };
        let leg = input.legs.get(i).unwrap_or(&NO_LEG);
        let departed = port.outbound_atd_at.is_some();
        let arrived = next.inbound_ata_at.is_some();
        let under_way = departed && !arrived;
        let current = leg
            .current
            .filter(|fix| under_way && valid((fix.lon, fix.lat)).is_some());

        // Before departure, stored positions belong to the vessel's earlier voyages.
        if let Some(vessel) = &leg.vessel
            && (departed || arrived)
            && let Some(past) = past_track(leg, current, options)
        {
            let (start, end) = track_window(port, next);
            for piece in past.pieces {
                features.push(feature(
                    Geometry::LineString(piece.points),
                    Properties::PastVesselLocations(PastVesselLocationsProperties {
                        ports_sequence: sequence,
                        vessel_id: vessel.id,
                        start_time: Timestamp(start.unwrap_or(past.first_time)),
                        end_time: Timestamp(end.unwrap_or(past.last_time)),
                        point_count: piece.point_count,
                        outbound_atd_at: port.outbound_atd_at.map(Timestamp),
                        inbound_ata_at: next.inbound_ata_at.map(Timestamp),
                        inbound_eta_at: next.inbound_eta_at.map(Timestamp),
                    }),
                ));
            }
        }

        if let (Some(fix), Some(vessel)) = (current, &leg.vessel) {
            features.push(feature(
                Geometry::Point(rounded((fix.lon, fix.lat))),
                Properties::CurrentVessel(CurrentVesselProperties {
                    ports_sequence: sequence,
                    vessel_id: vessel.id,
                    vessel_name: &vessel.name,
                    vessel_imo: vessel.imo.as_deref(),
                    voyage_number: leg.voyage_number.as_deref(),
                    vessel_location_timestamp: Timestamp(fix.timestamp),
                    vessel_location_heading: fix.heading.filter(|h| h.is_finite()).map(Number),
                    vessel_location_speed: fix.speed_knots.filter(|s| s.is_finite()).map(Number),
                    departure_port_id: port.id,
                    departure_port_name: &port.name,
                    departure_port_state_abbr: port.state_abbr.as_deref(),
                    departure_port_state: port.state.as_deref(),
                    departure_port_country_code: &port.country_code,
                    departure_port_country: &port.country,
                    departure_port_label: labels[i].clone(),
                    departure_port_atd: port.outbound_atd_at.map(Timestamp),
                    departure_port_time_zone: &port.time_zone,
                    arrival_port_id: next.id,
                    arrival_port_name: &next.name,
                    arrival_port_state_abbr: next.state_abbr.as_deref(),
                    arrival_port_state: next.state.as_deref(),
                    arrival_port_country_code: &next.country_code,
                    arrival_port_country: &next.country,
                    arrival_port_label: labels[i + 1].clone(),
                    arrival_port_eta: next.inbound_eta_at.map(Timestamp),
                    arrival_port_time_zone: &next.time_zone,
                }),
            ));
        }

        if arrived {
            continue;
        }
        let (Some(from), Some(to)) = (
            port.coordinates.and_then(valid),
            next.coordinates.and_then(valid),
        ) else {
            continue;
        };
        match current {
            Some(fix) if leg.vessel.is_some() => {
                for piece in partial_leg((fix.lon, fix.lat), from, to, router, options) {
                    features.push(feature(
                        Geometry::LineString(piece.points),
                        Properties::EstimatedPartialLeg(EstimatedPartialLegProperties {
                            ports_sequence: sequence,
                            current_port_id: port.id,
                            next_port_id: next.id,
                            point_count: piece.point_count,
                        }),
                    ));
                }
            }
            _ => {
                if let Ok(route) = router.route(from, to, &options.route) {
                    for piece in finish_lines(route.into_points(), options.longitudes) {
                        features.push(feature(
                            Geometry::LineString(piece.points),
                            Properties::EstimatedFullLegs(EstimatedFullLegProperties {
                                ports_sequence: sequence,
                                previous_port_id: port.id,
                                next_port_id: next.id,
                                point_count: piece.point_count,
                            }),
                        ));
                    }
                }
            }
        }
    }

    FeatureCollection {
        kind: FeatureCollectionTag::FeatureCollection,
        features,
    }
}

fn feature(geometry: Geometry, properties: Properties<'_>) -> Feature<'_> {
    Feature {
        kind: FeatureTag::Feature,
        geometry,
        properties,
    }
}

/// `POL` first, `POD` last, `TS1`, `TS2`, … between.
fn label(index: usize, total: usize) -> String {
    if index == 0 {
        "POL".to_owned()
    } else if index + 1 == total {
        "POD".to_owned()
    } else {
        format!("TS{index}")
    }
}

fn valid((lon, lat): (f64, f64)) -> Option<(f64, f64)> {
    ((-180.0..=180.0).contains(&lon) && (-90.0..=90.0).contains(&lat)).then_some((lon, lat))
}

/// Six decimals: about 0.1 m, and shorter output than the raw binary fractions.
fn rounded((lon, lat): (f64, f64)) -> [f64; 2] {
    [round6(lon), round6(lat)]
}

fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

fn wrap(lon: f64) -> f64 {
    if (-180.0..=180.0).contains(&lon) {
        lon
    } else {
        (lon + 180.0).rem_euclid(360.0) - 180.0
    }
}

/// `lon` moved by whole turns to within 180° of `reference`.
fn unwrap(reference: f64, lon: f64) -> f64 {
    lon - 360.0 * ((lon - reference) / 360.0).round()
}

/// One drawn line: its points (at least two) and how many.
struct Piece {
    points: Vec<[f64; 2]>,
    point_count: usize,
}

/// Continuous longitudes in; the lines to draw out, written per `mode`: one line, or
/// with [`Longitudes::Split`] one per stretch between crossings of ±180°. Lines of fewer
/// than two points are left out.
fn finish_lines(points: Vec<[f64; 2]>, mode: Longitudes) -> Vec<Piece> {
    let lines = match mode {
        Longitudes::Split => split_at_antimeridian(&points)
            .into_iter()
            .map(|part| finish_line(part, Longitudes::Wrapped))
            .collect(),
        _ => vec![finish_line(points, mode)],
    };
    lines
        .into_iter()
        .filter(|line| line.len() >= 2)
        .map(|points| Piece {
            point_count: points.len(),
            points,
        })
        .collect()
}

/// Cuts a line of continuous longitudes where it crosses ±180° (or an odd multiple of
/// it), each part in `[-180, 180]` and ending (or starting) on the antimeridian at the
/// interpolated crossing latitude.
fn split_at_antimeridian(points: &[[f64; 2]]) -> Vec<Vec<[f64; 2]>> {
    // Which copy of the world a longitude lies in: crossing ±180° changes it.
    let sheet = |lon: f64| ((lon + 180.0) / 360.0).floor();
    let mut parts = Vec::new();
    let mut current: Vec<[f64; 2]> = Vec::with_capacity(points.len());
    for (i, &p) in points.iter().enumerate() {
        if let Some(&a) = i.checked_sub(1).and_then(|j| points.get(j)) {
            let (from, to) = (sheet(a[0]), sheet(p[0]));
            // Consecutive points are less than 180° apart, so at most one crossing.
            if from != to && p[0] != a[0] {
                let east = to > from;
                let boundary = 360.0 * from.max(to) - 180.0;
                let t = (boundary - a[0]) / (p[0] - a[0]);
                let lat = a[1] + t * (p[1] - a[1]);
                current.push([if east { 180.0 } else { -180.0 }, lat]);
                parts.push(std::mem::take(&mut current));
                current.push([if east { -180.0 } else { 180.0 }, lat]);
            }
        }
        current.push([p[0] - 360.0 * sheet(p[0]), p[1]]);
    }
    parts.push(current);
    parts
}

/// Continuous longitudes in, written per `mode`, rounded, without repeats.
fn finish_line(points: Vec<[f64; 2]>, mode: Longitudes) -> Vec<[f64; 2]> {
    let mut out: Vec<[f64; 2]> = Vec::with_capacity(points.len());
    for p in points {
        let lon = match mode {
            Longitudes::Wrapped | Longitudes::Split => wrap(p[0]),
            Longitudes::Continuous => p[0],
        };
        let q = [round6(lon), round6(p[1])];
        if out.last() != Some(&q) {
            out.push(q);
        }
    }
    out
}

/// The line from the vessel along its route to the next port.
fn partial_leg(
    vessel: (f64, f64),
    from: (f64, f64),
    to: (f64, f64),
    router: &SeaRouter,
    options: &MapOptions,
) -> Vec<Piece> {
    let Ok(joined) = join_route(
        router,
        vessel,
        to,
        Some(from),
        options.on_leg_tolerance_km,
        &options.route,
    ) else {
        return Vec::new();
    };
    let points = joined.route.points();
    let join = joined.route.point_at_km(joined.start_km);
    let mut line = Vec::with_capacity(points.len().saturating_sub(joined.segment) + 2);
    line.push([vessel.0, vessel.1]);
    let mut last = vessel.0;
    for p in
        std::iter::once([join.lon, join.lat]).chain(points.iter().skip(joined.segment + 1).copied())
    {
        last = unwrap(last, p[0]);
        line.push([last, p[1]]);
    }
    finish_lines(line, options.longitudes)
}

struct PastTrack {
    pieces: Vec<Piece>,
    first_time: DateTime<Utc>,
    last_time: DateTime<Utc>,
}

/// The leg's stored positions in time order, ending at the current fix when that is
/// newer, thinned, as lines to draw. `None` when fewer than two points remain.
fn past_track(leg: &MapLeg, current: Option<VesselFix>, options: &MapOptions) -> Option<PastTrack> {
    let mut points: Vec<&TrackPoint> = leg
        .track
        .iter()
        .filter(|p| valid((p.lon, p.lat)).is_some())
        .collect();
    if !points.is_sorted_by_key(|p| p.timestamp) {
        points.sort_by_key(|p| p.timestamp);
    }
    let mut line: Vec<[f64; 2]> = Vec::with_capacity(points.len() + 1);
    let mut previous: Option<f64> = None;
    let mut push = |lon: f64, lat: f64| {
        let lon = previous.map_or(lon, |r| unwrap(r, lon));
        previous = Some(lon);
        line.push([lon, lat]);
    };
    for p in &points {
        push(p.lon, p.lat);
    }
    let mut first_time = points.first().map(|p| p.timestamp);
    let mut last_time = points.last().map(|p| p.timestamp);
    if let Some(fix) = current
        && last_time.is_none_or(|t| fix.timestamp > t)
    {
        push(fix.lon, fix.lat);
        first_time = first_time.or(Some(fix.timestamp));
        last_time = Some(fix.timestamp);
    }
    let (first_time, last_time) = (first_time?, last_time?);
    let kept = simplify(&line, options.track_tolerance_km, options.max_track_points);
    let pieces = finish_lines(kept.iter().map(|&i| line[i]).collect(), options.longitudes);
    (!pieces.is_empty()).then_some(PastTrack {
        pieces,
        first_time,
        last_time,
    })
}

const KM_PER_DEGREE: f64 = EARTH_RADIUS_KM * std::f64::consts::PI / 180.0;

/// A range of the line between two kept points and its farthest inner point.
#[derive(Debug, Clone, Copy)]
struct Span {
    distance_km: f64,
    start: usize,
    end: usize,
    farthest: usize,
}

impl PartialEq for Span {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Span {}

impl PartialOrd for Span {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Span {
    fn cmp(&self, other: &Self) -> Ordering {
        self.distance_km
            .total_cmp(&other.distance_km)
            .then(other.start.cmp(&self.start))
    }
}

/// Indices of the points kept by Douglas–Peucker with `tolerance_km`, at most
/// `max_points` of them, the first and the last always included.
///
/// Spans are split most-deviating first (a heap rather than recursion), so stopping at
/// `max_points` keeps the points that matter most. Distances are planar in km around
/// each span's mean latitude, which is ample for choosing what to draw; longitudes must
/// be continuous.
fn simplify(line: &[[f64; 2]], tolerance_km: f64, max_points: usize) -> Vec<usize> {
    let n = line.len();
    if n <= 2 || max_points <= 2 {
        return match n {
            0 => Vec::new(),
            1 => vec![0],
            _ => vec![0, n - 1],
        };
    }
    let mut keep = vec![false; n];
    keep[0] = true;
    keep[n - 1] = true;
    let mut kept = 2;
    let mut heap = BinaryHeap::new();
    if let Some(span) = farthest(line, 0, n - 1) {
        heap.push(span);
    }
    while kept < max_points {
        let Some(span) = heap.pop() else { break };
        if span.distance_km <= tolerance_km {
            break;
        }
        keep[span.farthest] = true;
        kept += 1;
        for (start, end) in [(span.start, span.farthest), (span.farthest, span.end)] {
            if let Some(s) = farthest(line, start, end) {
                heap.push(s);
            }
        }
    }
    keep.iter()
        .enumerate()
        .filter_map(|(i, &k)| k.then_some(i))
        .collect()
}

/// The inner point of `line[start..=end]` farthest from the segment joining its ends.
fn farthest(line: &[[f64; 2]], start: usize, end: usize) -> Option<Span> {
    if end <= start + 1 {
        return None;
    }
    let (a, b) = (line[start], line[end]);
    let kx = ((a[1] + b[1]) / 2.0).to_radians().cos() * KM_PER_DEGREE;
    let ky = KM_PER_DEGREE;
    let (bx, by) = ((b[0] - a[0]) * kx, (b[1] - a[1]) * ky);
    let length2 = bx * bx + by * by;
    let mut best = (0.0_f64, start + 1);
    for (i, p) in line.iter().enumerate().take(end).skip(start + 1) {
        let (px, py) = ((p[0] - a[0]) * kx, (p[1] - a[1]) * ky);
        // Distance to the segment, not the infinite line: tracks double back.
        let t = if length2 > 0.0 {
            ((px * bx + py * by) / length2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let (dx, dy) = (px - t * bx, py - t * by);
        let d2 = dx * dx + dy * dy;
        if d2 > best.0 {
            best = (d2, i);
        }
    }
    Some(Span {
        distance_km: best.0.sqrt(),
        start,
        end,
        farthest: best.1,
    })
}

#[cfg(test)]
mod tests;
