use std::fmt;

use chrono::TimeZone;
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::*;
use crate::reference::ReferenceData;

const EXAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/reference/terminal49/openapi-examples/get-containers-id-map-geojson.200.Example_Response.json"
);
const OPENAPI: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/reference/terminal49/terminal49-openapi.json"
);

fn t(month: u32, day: u32, hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, month, day, hour, 0, 0).unwrap()
}

fn port(locode: &str) -> MapPort {
    MapPort::from_port(ReferenceData::embedded().port_by_locode(locode).unwrap())
}

fn coords(p: &MapPort) -> (f64, f64) {
    p.coordinates.unwrap()
}

/// `n` positions along the sea route from `from` to `to`, up to `fraction` of it,
/// hourly from `start`.
fn track(
    from: (f64, f64),
    to: (f64, f64),
    fraction: f64,
    n: usize,
    start: DateTime<Utc>,
) -> Vec<TrackPoint> {
    let route = SeaRouter::embedded()
        .route(from, to, &RouteOptions::default())
        .unwrap();
    (0..n)
        .map(|i| {
            let p = route.point_at_fraction(fraction * i as f64 / (n - 1) as f64);
            TrackPoint {
                lon: p.lon,
                lat: p.lat,
                timestamp: start + TimeDelta::minutes(10 * i as i64),
            }
        })
        .collect()
}

fn vessel(name: &str, n: u128) -> MapVessel {
    MapVessel {
        id: Uuid::from_u128(n),
        name: name.to_owned(),
        imo: Some(format!("99{n:05}")),
    }
}

/// Laem Chabang → Xiamen (arrived) → Savannah (vessel at sea), as in Terminal49's
/// example, with `positions` stored positions on the second leg.
fn three_port_route(positions: usize) -> MapInput {
    let mut pol = port("THLCH");
    let mut ts = port("CNXMN");
    let mut pod = port("USSAV");
    pod.state = Some("Georgia".to_owned());
    pod.state_abbr = Some("GA".to_owned());
    pol.outbound_atd_at = Some(t(11, 8, 0));
    ts.inbound_ata_at = Some(t(11, 15, 16));
    ts.outbound_atd_at = Some(t(11, 19, 16));
    pod.inbound_eta_at = Some(t(12, 31, 5));
    let leg1 = MapLeg {
        vessel: Some(vessel("FIRST VESSEL", 1)),
        voyage_number: Some("1W".to_owned()),
        track: track(coords(&pol), coords(&ts), 1.0, 500, t(11, 8, 0)),
        current: None,
    };
    let mut track2 = track(coords(&ts), coords(&pod), 0.55, positions, t(11, 19, 16));
    let last = *track2.last().unwrap();
    // Stored out of order: the map sorts by time.
    track2.swap(1, 2);
    let current = VesselFix {
        lon: last.lon + 0.05,
        lat: last.lat,
        heading: Some(108.0),
        speed_knots: Some(20.5),
        timestamp: last.timestamp + TimeDelta::minutes(10),
    };
    let leg2 = MapLeg {
        vessel: Some(vessel("ZIM BANGKOK", 2)),
        voyage_number: Some("13E".to_owned()),
        track: track2,
        current: Some(current),
    };
    MapInput {
        ports: vec![pol, ts, pod],
        legs: vec![leg1, leg2],
        updated_at: Some(t(12, 11, 9)),
    }
}

fn map_json(input: &MapInput, options: &MapOptions) -> Value {
    serde_json::to_value(build_map(input, SeaRouter::embedded(), options)).unwrap()
}

fn kinds(map: &Value) -> Vec<&str> {
    map["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["properties"]["feature_type"].as_str().unwrap())
        .collect()
}

fn line(feature: &Value) -> Vec<[f64; 2]> {
    serde_json::from_value(feature["geometry"]["coordinates"].clone()).unwrap()
}

fn near(a: [f64; 2], b: (f64, f64), tol: f64) -> bool {
    (a[0] - b.0).abs() <= tol && (a[1] - b.1).abs() <= tol
}

#[test]
fn a_three_port_route_with_a_vessel_at_sea_yields_every_feature_in_the_specs_order() {
    let input = three_port_route(2_000);
    let map = map_json(&input, &MapOptions::default());
    assert_eq!(map["type"], "FeatureCollection");
    assert_eq!(
        kinds(&map),
        [
            "port",
            "past_vessel_locations",
            "port",
            "past_vessel_locations",
            "current_vessel",
            "estimated_partial_leg",
            "port"
        ]
    );
    let f = map["features"].as_array().unwrap();
    for feature in f {
        assert_eq!(feature["type"], "Feature");
    }
    let [pol, past1, ts, past2, current, partial, pod] = f.as_slice() else {
        unreachable!()
    };
    let (pol_p, ts_p, pod_p) = (&input.ports[0], &input.ports[1], &input.ports[2]);

    let labels: Vec<_> = [pol, ts, pod]
        .iter()
        .map(|p| p["properties"]["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["POL", "TS1", "POD"]);
    assert_eq!(pol["geometry"]["type"], "Point");
    assert_eq!(pol["properties"]["ports_sequence"], 1);
    assert_eq!(pod["properties"]["ports_sequence"], 3);
    assert_eq!(ts["properties"]["ports_total"], 3);
    assert_eq!(pol["properties"]["location_id"], pol_p.id.to_string());
    assert_eq!(pol["properties"]["location_type"], "Port");
    assert_eq!(pol["properties"]["name"], "Laem Chabang");
    assert_eq!(pol["properties"]["time_zone"], "Asia/Bangkok");
    assert_eq!(pol["properties"]["outbound_atd_at"], "2025-11-08T00:00:00Z");
    assert_eq!(pol["properties"]["inbound_ata_at"], Value::Null);
    assert_eq!(pod["properties"]["state"], "Georgia");
    assert_eq!(pod["properties"]["inbound_eta_at"], "2025-12-31T05:00:00Z");
    assert_eq!(pod["properties"]["updated_at"], "2025-12-11T09:00:00Z");

    // The completed first leg: from departure to arrival.
    let p1 = &past1["properties"];
    assert_eq!(past1["geometry"]["type"], "LineString");
    assert_eq!(p1["ports_sequence"], 1);
    assert_eq!(p1["vessel_id"], Uuid::from_u128(1).to_string());
    assert_eq!(p1["start_time"], "2025-11-08T00:00:00Z");
    assert_eq!(p1["end_time"], "2025-11-15T16:00:00Z");
    assert_eq!(p1["inbound_ata_at"], "2025-11-15T16:00:00Z");
    assert_eq!(p1["point_count"], line(past1).len());

    // The vessel at sea on the second leg.
    let c = &current["properties"];
    assert_eq!(c["ports_sequence"], 2);
    assert_eq!(c["vessel_name"], "ZIM BANGKOK");
    assert_eq!(c["vessel_imo"], "9900002");
    assert_eq!(c["voyage_number"], "13E");
    assert_eq!(c["vessel_location_heading"], 108);
    assert_eq!(c["vessel_location_speed"], 20.5);
    assert_eq!(c["departure_port_id"], ts_p.id.to_string());
    assert_eq!(c["departure_port_label"], "TS1");
    assert_eq!(c["departure_port_atd"], "2025-11-19T16:00:00Z");
    assert_eq!(c["departure_port_time_zone"], "Asia/Shanghai");
    assert_eq!(c["arrival_port_id"], pod_p.id.to_string());
    assert_eq!(c["arrival_port_label"], "POD");
    assert_eq!(c["arrival_port_state_abbr"], "GA");
    assert_eq!(c["arrival_port_eta"], "2025-12-31T05:00:00Z");
    assert_eq!(c["arrival_port_time_zone"], "America/New_York");
    let vessel_at: [f64; 2] =
        serde_json::from_value(current["geometry"]["coordinates"].clone()).unwrap();

    // Its track runs from Xiamen to the vessel, over the window Terminal49 reports.
    let p2 = &past2["properties"];
    assert_eq!(p2["ports_sequence"], 2);
    assert_eq!(p2["start_time"], "2025-11-19T16:00:00Z");
    assert_eq!(p2["end_time"], "2026-01-07T05:00:00Z");
    assert_eq!(p2["inbound_ata_at"], Value::Null);
    assert_eq!(p2["inbound_eta_at"], "2025-12-31T05:00:00Z");
    let track = line(past2);
    assert_eq!(p2["point_count"], track.len());
    assert!(near(track[0], coords(ts_p), 1e-5), "{:?}", track[0]);
    assert_eq!(*track.last().unwrap(), vessel_at);

    // The estimate runs on from the vessel to Savannah.
    let e = &partial["properties"];
    assert_eq!(e["ports_sequence"], 2);
    assert_eq!(e["current_port_id"], ts_p.id.to_string());
    assert_eq!(e["next_port_id"], pod_p.id.to_string());
    let ahead = line(partial);
    assert_eq!(e["point_count"], ahead.len());
    assert_eq!(ahead[0], vessel_at);
    assert!(near(*ahead.last().unwrap(), coords(pod_p), 1e-6));
}

#[test]
fn a_leg_not_started_is_an_estimated_full_leg_between_the_two_ports() {
    let mut input = three_port_route(100);
    // Still at Xiamen: the second leg has not begun.
    input.ports[1].outbound_atd_at = None;
    input.ports[1].outbound_etd_at = Some(t(11, 20, 0));
    let map = map_json(&input, &MapOptions::default());
    assert_eq!(
        kinds(&map),
        [
            "port",
            "past_vessel_locations",
            "port",
            "estimated_full_legs",
            "port"
        ]
    );
    let full = &map["features"][3];
    assert_eq!(full["properties"]["ports_sequence"], 2);
    assert_eq!(
        full["properties"]["previous_port_id"],
        input.ports[1].id.to_string()
    );
    assert_eq!(
        full["properties"]["next_port_id"],
        input.ports[2].id.to_string()
    );
    let l = line(full);
    assert_eq!(full["properties"]["point_count"], l.len());
    assert!(near(l[0], coords(&input.ports[1]), 1e-6));
    assert!(near(*l.last().unwrap(), coords(&input.ports[2]), 1e-6));
}

#[test]
fn ports_alone_are_joined_by_estimated_full_legs() {
    let input = MapInput {
        ports: vec![port("THLCH"), port("USSAV")],
        ..MapInput::default()
    };
    let map = map_json(&input, &MapOptions::default());
    assert_eq!(kinds(&map), ["port", "estimated_full_legs", "port"]);
}

#[test]
fn a_route_without_ports_is_an_empty_feature_collection() {
    let map = map_json(&MapInput::default(), &MapOptions::default());
    assert_eq!(
        map,
        serde_json::json!({"type": "FeatureCollection", "features": []})
    );
}

#[test]
fn a_port_without_coordinates_has_no_feature_but_still_counts() {
    let mut input = three_port_route(100);
    input.ports[2].coordinates = None;
    let map = map_json(&input, &MapOptions::default());
    assert_eq!(
        kinds(&map),
        [
            "port",
            "past_vessel_locations",
            "port",
            "past_vessel_locations",
            "current_vessel"
        ]
    );
    assert_eq!(map["features"][0]["properties"]["ports_total"], 3);
}

#[test]
fn ten_thousand_positions_are_thinned_to_the_bound_keeping_both_ends() {
    let input = three_port_route(10_000);
    let options = MapOptions {
        max_track_points: 200,
        track_tolerance_km: 0.0,
        ..MapOptions::default()
    };
    let map = map_json(&input, &options);
    let past = &map["features"][3];
    let l = line(past);
    assert_eq!(l.len(), 200);
    assert_eq!(past["properties"]["point_count"], 200);
    let ts = coords(&input.ports[1]);
    assert!(near(l[0], ts, 1e-5));
    let vessel_at = &map["features"][4]["geometry"]["coordinates"];
    assert_eq!(serde_json::to_value(l.last().unwrap()).unwrap(), *vessel_at);
}

#[test]
fn simplification_keeps_the_corners_of_a_line_and_drops_the_straight_runs() {
    let mut line: Vec<[f64; 2]> = (0..=100).map(|i| [f64::from(i) * 0.1, 0.0]).collect();
    line.extend((1..=100).map(|i| [10.0, f64::from(i) * 0.1]));
    assert_eq!(simplify(&line, 0.5, 1_000), vec![0, 100, 200]);
    assert_eq!(simplify(&line, 0.5, 2), vec![0, 200]);
    assert_eq!(simplify(&line[..1], 0.5, 10), vec![0]);
}

#[test]
fn wrapped_lines_stay_within_180_and_continuous_ones_never_jump() {
    // A transpacific leg under way from Shanghai to Los Angeles.
    let mut input = MapInput {
        ports: vec![port("CNSHA"), port("USLAX")],
        ..MapInput::default()
    };
    input.ports[0].outbound_atd_at = Some(t(11, 1, 0));
    let stored = track(
        coords(&input.ports[0]),
        coords(&input.ports[1]),
        0.3,
        300,
        t(11, 1, 0),
    );
    let last = *stored.last().unwrap();
    input.legs = vec![MapLeg {
        vessel: Some(vessel("EVER GIVEN", 3)),
        voyage_number: None,
        track: stored,
        current: Some(VesselFix {
            lon: last.lon,
            lat: last.lat,
            heading: None,
            speed_knots: None,
            timestamp: last.timestamp,
        }),
    }];
    let wrapped = map_json(&input, &MapOptions::default());
    let partial = &wrapped["features"][3];
    assert_eq!(
        partial["properties"]["feature_type"],
        "estimated_partial_leg"
    );
    assert!(
        line(partial)
            .iter()
            .all(|p| (-180.0..=180.0).contains(&p[0]))
    );
    assert_eq!(
        wrapped["features"][2]["properties"]["voyage_number"],
        Value::Null
    );
    assert_eq!(
        wrapped["features"][2]["properties"]["vessel_location_heading"],
        Value::Null
    );

    let options = MapOptions {
        longitudes: Longitudes::Continuous,
        ..MapOptions::default()
    };
    let continuous = map_json(&input, &options);
    let partial = line(&continuous["features"][3]);
    assert!(partial.iter().any(|p| p[0] > 180.0 || p[0] < -180.0));
    for w in partial.windows(2) {
        assert!((w[1][0] - w[0][0]).abs() < 180.0, "{w:?}");
    }
}

#[test]
fn split_lines_are_cut_at_the_antimeridian_into_features_of_the_same_kind() {
    // A transpacific leg from Shanghai to Los Angeles, the vessel past the date line.
    let mut input = MapInput {
        ports: vec![port("CNSHA"), port("USLAX")],
        ..MapInput::default()
    };
    input.ports[0].outbound_atd_at = Some(t(11, 1, 0));
    let stored = track(
        coords(&input.ports[0]),
        coords(&input.ports[1]),
        0.7,
        300,
        t(11, 1, 0),
    );
    let last = *stored.last().unwrap();
    assert!(last.lon < 0.0, "the vessel is east of the date line");
    input.legs = vec![MapLeg {
        vessel: Some(vessel("EVER GIVEN", 3)),
        voyage_number: None,
        track: stored,
        current: Some(VesselFix {
            lon: last.lon,
            lat: last.lat,
            heading: None,
            speed_knots: None,
            timestamp: last.timestamp,
        }),
    }];
    let options = MapOptions {
        longitudes: Longitudes::Split,
        ..MapOptions::default()
    };
    let map = map_json(&input, &options);
    assert_eq!(
        kinds(&map),
        [
            "port",
            "past_vessel_locations",
            "past_vessel_locations",
            "current_vessel",
            "estimated_partial_leg",
            "port"
        ]
    );
    let (west, east) = (line(&map["features"][1]), line(&map["features"][2]));
    assert_eq!(west.last().unwrap()[0], 180.0);
    assert_eq!(east[0][0], -180.0);
    assert_eq!(west.last().unwrap()[1], east[0][1], "both halves meet");
    for feature in map["features"].as_array().unwrap() {
        if feature["geometry"]["type"] == "LineString" {
            let l = line(feature);
            assert_eq!(feature["properties"]["point_count"], l.len());
            for w in l.windows(2) {
                assert!((w[1][0] - w[0][0]).abs() < 180.0, "{w:?}");
                assert!((-180.0..=180.0).contains(&w[0][0]));
            }
        }
    }
}

#[test]
fn a_line_that_never_crosses_the_antimeridian_is_not_split() {
    let points = vec![[170.0, 10.0], [175.0, 11.0], [179.5, 12.0]];
    assert_eq!(split_at_antimeridian(&points), vec![points.clone()]);
    let crossing = vec![[179.0, 0.0], [181.0, 2.0], [183.0, 2.0]];
    assert_eq!(
        split_at_antimeridian(&crossing),
        vec![
            vec![[179.0, 0.0], [180.0, 1.0]],
            vec![[-180.0, 1.0], [-179.0, 2.0], [-177.0, 2.0]]
        ]
    );
    let westward = vec![[-179.0, 0.0], [-181.0, 2.0]];
    assert_eq!(
        split_at_antimeridian(&westward),
        vec![
            vec![[-179.0, 0.0], [-180.0, 1.0]],
            vec![[180.0, 1.0], [179.0, 2.0]]
        ]
    );
}

#[test]
fn an_open_leg_collects_positions_until_seven_days_after_its_eta() {
    let mut from = port("CNXMN");
    let mut to = port("USSAV");
    assert_eq!(track_window(&from, &to), (None, None));
    from.outbound_atd_at = Some(t(11, 19, 16));
    to.inbound_eta_at = Some(t(12, 31, 5));
    assert_eq!(
        track_window(&from, &to),
        (
            Some(t(11, 19, 16)),
            Some(Utc.with_ymd_and_hms(2026, 1, 7, 5, 0, 0).unwrap())
        )
    );
    to.inbound_ata_at = Some(t(12, 30, 0));
    assert_eq!(track_window(&from, &to).1, Some(t(12, 30, 0)));
}

#[test]
fn times_are_written_to_the_second_and_whole_numbers_as_integers() {
    let precise = Utc.with_ymd_and_hms(2025, 1, 2, 3, 4, 5).unwrap() + TimeDelta::milliseconds(678);
    assert_eq!(
        serde_json::to_string(&Timestamp(precise)).unwrap(),
        "\"2025-01-02T03:04:05Z\""
    );
    assert_eq!(serde_json::to_string(&Number(108.0)).unwrap(), "108");
    assert_eq!(serde_json::to_string(&Number(20.5)).unwrap(), "20.5");
}

/// The keys of a JSON object in document order (`serde_json::Value` sorts them).
#[derive(Debug, PartialEq)]
struct OrderedKeys(Vec<String>);

impl<'de> Deserialize<'de> for OrderedKeys {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = OrderedKeys;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedKeys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(OrderedKeys(keys))
            }
        }
        d.deserialize_map(Keys)
    }
}

#[derive(Deserialize)]
struct Collection {
    features: Vec<KeyedFeature>,
}

#[derive(Deserialize)]
struct KeyedFeature {
    #[serde(rename = "type")]
    _kind: String,
    properties: OrderedKeys,
}

/// The property keys, in order, of the first feature of each type.
fn keys_by_type(json: &str) -> Vec<(String, Vec<String>)> {
    let collection: Collection = serde_json::from_str(json).unwrap();
    let mut seen: Vec<(String, Vec<String>)> = Vec::new();
    for f in collection.features {
        assert_eq!(f.properties.0[0], "feature_type");
        let kind = feature_type_of(&f.properties.0);
        if !seen.iter().any(|(k, _)| *k == kind) {
            seen.push((kind, f.properties.0));
        }
    }
    seen
}

/// Tells the feature type from its keys (each type's key set is distinct).
fn feature_type_of(keys: &[String]) -> String {
    let has = |k: &str| keys.iter().any(|x| x == k);
    if has("location_type") {
        "port"
    } else if has("vessel_name") {
        "current_vessel"
    } else if has("start_time") {
        "past_vessel_locations"
    } else if has("current_port_id") {
        "estimated_partial_leg"
    } else {
        "estimated_full_legs"
    }
    .to_owned()
}

#[test]
fn property_keys_of_each_feature_type_match_terminal49s_example_in_order() {
    let example = std::fs::read_to_string(EXAMPLE).unwrap();
    let ours = serde_json::to_string(&build_map(
        &three_port_route(500),
        SeaRouter::embedded(),
        &MapOptions::default(),
    ))
    .unwrap();
    let theirs = keys_by_type(&example);
    let ours = keys_by_type(&ours);
    assert_eq!(theirs.len(), 4, "the example shows four feature types");
    for (kind, keys) in &theirs {
        let mine = ours
            .iter()
            .find(|(k, _)| k == kind)
            .unwrap_or_else(|| panic!("no {kind} feature"));
        assert_eq!(&mine.1, keys, "{kind}");
    }
}

#[test]
fn property_keys_of_each_feature_type_match_terminal49s_schemas() {
    let openapi: Value = serde_json::from_str(&std::fs::read_to_string(OPENAPI).unwrap()).unwrap();
    let mut input = three_port_route(100);
    let map = map_json(&input, &MapOptions::default());
    input.ports[1].outbound_atd_at = None;
    let full = map_json(&input, &MapOptions::default());
    let schemas = [
        ("port", "portFeatureProperties"),
        (
            "past_vessel_locations",
            "pastVesselLocationsFeatureProperties",
        ),
        ("current_vessel", "currentVesselFeatureProperties"),
        (
            "estimated_partial_leg",
            "estimatedPartialLegFeatureProperties",
        ),
        ("estimated_full_legs", "estimatedFullLegFeatureProperties"),
    ];
    let all: Vec<&Value> = map["features"]
        .as_array()
        .unwrap()
        .iter()
        .chain(full["features"].as_array().unwrap())
        .collect();
    for (kind, schema) in schemas {
        let feature = all
            .iter()
            .find(|f| f["properties"]["feature_type"] == kind)
            .unwrap_or_else(|| panic!("no {kind} feature"));
        let mut mine: Vec<&String> = feature["properties"].as_object().unwrap().keys().collect();
        let mut theirs: Vec<&String> = openapi["components"]["schemas"][schema]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        mine.sort();
        theirs.sort();
        assert_eq!(mine, theirs, "{kind}");
    }
}
