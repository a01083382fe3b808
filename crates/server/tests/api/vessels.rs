//! Vessels, their positions and future positions, and container route maps, over HTTP.
//! Positions arrive as AIS sentences through the ingest path, as in production.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use tidemark_domain::Clock;
use tidemark_geo::ais::{PositionReport, StaticData, encode_position, encode_static};
use tidemark_geo::reference::ReferenceData;
use tidemark_server::parts::sandbox_ais::SandboxAis;
use tidemark_server::use_cases::vessels::ais::ingest_lines;
use tidemark_server::use_cases::vessels::sandbox as sandbox_vessels;

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    a_vessel_is_shown_by_id_and_by_imo_with_its_latest_position,
    stored_positions_are_shown_for_a_window_only_when_asked,
    a_half_open_inverted_or_malformed_positions_window_is_a_bad_request,
    an_unknown_vessel_is_not_found,
    a_vessel_the_carrier_names_is_known_by_imo_before_it_reports_a_position,
    bad_truncated_and_unknown_sentences_are_counted_and_skipped,
    housekeeping_purges_positions_past_the_retention,
    the_sandbox_reports_only_what_is_new_at_each_tick,
    a_real_sample_feed_is_decoded_and_stored,
    a_udp_source_stores_the_positions_it_receives,
    a_tcp_source_reads_a_feed_and_reconnects_when_it_drops,
    a_tracked_test_container_maps_every_feature_type_in_route_order,
    map_properties_have_terminal49s_names_order_and_types,
    another_accounts_container_has_no_map,
    future_positions_follow_the_sea_to_the_next_port_paced_by_the_carriers_eta,
    future_positions_from_given_coordinates_start_there,
    future_position_parameters_are_checked,
);

const MMSI: u32 = 353_136_000;
const IMO: u32 = 9_811_000;

fn static_lines(at: DateTime<Utc>) -> Vec<String> {
    encode_static(&StaticData {
        mmsi: MMSI,
        imo: Some(IMO),
        name: Some("EVER ACE".to_owned()),
        message_type: 5,
        received_at: Some(at.timestamp()),
        ..StaticData::default()
    })
}

fn position_line(at: DateTime<Utc>, lat: f64, lon: f64) -> String {
    encode_position(&PositionReport {
        mmsi: MMSI,
        latitude: lat,
        longitude: lon,
        speed_over_ground_knots: Some(18.5),
        course_over_ground: Some(45.0),
        true_heading: Some(44),
        timestamp_second: None,
        navigation_status: None,
        message_type: 1,
        received_at: Some(at.timestamp()),
    })
}

/// Static data, then a position every 10 minutes for `count` reports from `start`.
async fn feed(app: &TestApp, start: DateTime<Utc>, count: i64) {
    let mut lines = static_lines(start);
    for i in 0..count {
        lines.push(position_line(
            start + Duration::minutes(10 * i),
            1.0 + i as f64 * 0.01,
            104.0 + i as f64 * 0.01,
        ));
    }
    let report = ingest_lines(&app.app, &app.app.config.ais, &lines)
        .await
        .unwrap();
    assert_eq!(report.positions, count as u64);
}

async fn a_vessel_is_shown_by_id_and_by_imo_with_its_latest_position(app: TestApp) {
    let start = app.clock.now() - Duration::hours(5);
    feed(&app, start, 3).await;

    let by_imo = app.get("/v2/vessels/9811000").await;
    assert_eq!(by_imo.status, StatusCode::OK);
    let body = by_imo.json();
    let data = &body["data"];
    assert_eq!(data["type"], json!("vessel"));
    let attributes = &data["attributes"];
    assert_eq!(attributes["name"], json!("EVER ACE"));
    assert_eq!(attributes["imo"], json!("9811000"));
    assert_eq!(attributes["mmsi"], json!("353136000"));
    assert!((attributes["latitude"].as_f64().unwrap() - 1.02).abs() < 1e-4);
    assert!((attributes["longitude"].as_f64().unwrap() - 104.02).abs() < 1e-4);
    assert_eq!(attributes["nautical_speed_knots"], json!(18.5));
    assert_eq!(attributes["navigational_heading_degrees"], json!(44.0));
    let expected_time = (start + Duration::minutes(20))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    assert_eq!(attributes["position_timestamp"], json!(expected_time));
    assert!(
        attributes.get("positions").is_none(),
        "positions only when asked"
    );

    let id = data["id"].as_str().unwrap();
    let by_id = app.get(&format!("/v2/vessels/{id}")).await.json();
    assert_eq!(by_id["data"], body["data"]);
    assert_eq!(
        by_id["links"]["self"],
        json!(format!("http://tidemark.test/v2/vessels/{id}"))
    );
}

async fn stored_positions_are_shown_for_a_window_only_when_asked(app: TestApp) {
    let start = app.clock.now() - Duration::hours(10);
    feed(&app, start, 30).await;
    let from = (start + Duration::minutes(50)).to_rfc3339();
    let to = (start + Duration::minutes(100)).to_rfc3339();
    let url = format!(
        "/v2/vessels/9811000?show_positions[from_timestamp]={}&show_positions[to_timestamp]={}",
        urlencode(&from),
        urlencode(&to)
    );
    let response = app.get(&url).await;
    assert_eq!(response.status, StatusCode::OK);
    let positions = response.json()["data"]["attributes"]["positions"]
        .as_array()
        .unwrap()
        .clone();
    // 50, 60, …, 100 minutes: six reports, oldest first, none estimated.
    assert_eq!(positions.len(), 6);
    assert!(positions.iter().all(|p| p["estimated"] == json!(false)));
    assert!((positions[0]["latitude"].as_f64().unwrap() - 1.05).abs() < 1e-4);
    assert!(positions[0]["heading"].is_number());
    let times: Vec<&str> = positions
        .iter()
        .map(|p| p["timestamp"].as_str().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]));
}

fn urlencode(text: &str) -> String {
    text.replace('+', "%2B").replace(':', "%3A")
}

async fn a_half_open_inverted_or_malformed_positions_window_is_a_bad_request(app: TestApp) {
    feed(&app, app.clock.now() - Duration::hours(1), 1).await;
    for (query, parameter) in [
        (
            "show_positions[from_timestamp]=2026-03-01T00:00:00Z",
            "show_positions[to_timestamp]",
        ),
        (
            "show_positions[to_timestamp]=2026-03-01T00:00:00Z",
            "show_positions[from_timestamp]",
        ),
        (
            "show_positions[from_timestamp]=2026-03-02T00:00:00Z&show_positions[to_timestamp]=2026-03-01T00:00:00Z",
            "show_positions[to_timestamp]",
        ),
        (
            "show_positions[from_timestamp]=yesterday&show_positions[to_timestamp]=2026-03-01T00:00:00Z",
            "show_positions[from_timestamp]",
        ),
    ] {
        let response = app.get(&format!("/v2/vessels/9811000?{query}")).await;
        assert_eq!(response.status, StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(
            response.error_member("source")["parameter"],
            json!(parameter),
            "{query}"
        );
    }
}

async fn an_unknown_vessel_is_not_found(app: TestApp) {
    for id in [
        "1234567",
        "0190a0f0-0000-7000-8000-000000000000",
        "not-a-vessel",
    ] {
        let response = app.get(&format!("/v2/vessels/{id}")).await;
        assert_eq!(response.status, StatusCode::NOT_FOUND, "{id}");
    }
}

async fn a_vessel_the_carrier_names_is_known_by_imo_before_it_reports_a_position(app: TestApp) {
    let (_, voyage) = showcase_at_sea(&app).await;
    let second = &voyage.legs()[1].vessel;
    let response = app.get(&format!("/v2/vessels/{}", second.imo)).await;
    assert_eq!(response.status, StatusCode::OK);
    let attributes = &response.json()["data"]["attributes"];
    assert_eq!(attributes["name"], json!(second.name));
    assert_eq!(attributes["imo"], json!(second.imo));
    assert_eq!(attributes["latitude"], Value::Null);
    assert_eq!(attributes["position_timestamp"], Value::Null);
    // The first vessel is at sea and reported through AIS: its MMSI is tied to its IMO.
    let first = &voyage.legs()[0].vessel;
    let response = app.get(&format!("/v2/vessels/{}", first.imo)).await.json();
    assert_eq!(response["data"]["attributes"]["mmsi"], json!(first.mmsi));
    assert!(response["data"]["attributes"]["latitude"].is_number());
}

async fn housekeeping_purges_positions_past_the_retention(app: TestApp) {
    // Default retention: 90 days. Positions 100 days old and one day old.
    feed(&app, app.clock.now() - Duration::days(100), 3).await;
    let recent = app.clock.now() - Duration::days(1);
    ingest_lines(
        &app.app,
        &app.app.config.ais,
        [position_line(recent, 2.0, 105.0)],
    )
    .await
    .unwrap();
    app.run_housekeeping().await;
    let vessel = app.app.store.vessel_by_imo("9811000").await.unwrap();
    let track = app
        .app
        .store
        .vessel_track(
            vessel.id,
            app.clock.now() - Duration::days(365),
            app.clock.now(),
            100,
        )
        .await
        .unwrap();
    assert_eq!(track.len(), 1);
    assert_eq!(track[0].timestamp, recent);
}

async fn the_sandbox_reports_only_what_is_new_at_each_tick(app: TestApp) {
    let (_, voyage) = showcase_at_sea(&app).await;
    let sandbox = tidemark_server::parts::carriers::sandbox(ReferenceData::embedded());
    let transmitter = SandboxAis::new(sandbox, Duration::minutes(30));
    // A new transmitter (as after a restart) resends the track; the store keeps it once.
    let resent = sandbox_vessels::tick(&app.app, &app.app.config.ais, &transmitter)
        .await
        .unwrap();
    assert!(resent.positions > 10);
    assert_eq!(resent.stored, 0, "{resent:?}");
    let again = sandbox_vessels::tick(&app.app, &app.app.config.ais, &transmitter)
        .await
        .unwrap();
    assert_eq!(again.positions, 0, "nothing new at the same time");
    app.clock.advance(Duration::hours(2));
    let later = sandbox_vessels::tick(&app.app, &app.app.config.ais, &transmitter)
        .await
        .unwrap();
    assert_eq!(later.positions, 4, "two hours at half-hour steps");
    assert_eq!(later.stored, 4);
    let imo = &voyage.legs()[0].vessel.imo;
    let vessel = app.get(&format!("/v2/vessels/{imo}")).await.json();
    let at_sea = voyage.vessel_position(app.clock.now()).unwrap();
    let lat = vessel["data"]["attributes"]["latitude"].as_f64().unwrap();
    assert!(
        (lat - at_sea.latitude).abs() < 0.01,
        "the latest fix is now"
    );
}

async fn bad_truncated_and_unknown_sentences_are_counted_and_skipped(app: TestApp) {
    let now = app.clock.now();
    let good = position_line(now, 10.0, 20.0);
    let sentence_start = good.find('!').unwrap();
    let mut bad_checksum = good.clone();
    bad_checksum.replace_range(good.len() - 2.., "00");
    let truncated = good[..good.len() - 12].to_owned();
    let lines = vec![
        bad_checksum,
        truncated,
        // A base station report (type 4): well formed, but not used.
        "!AIVDM,1,1,,A,403OviQuMGCqWrRO9>E6fE700@GO,0*4D".to_owned(),
        "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47".to_owned(),
        "garbage \u{0} \u{7f} line".to_owned(),
        // The second part of a message whose first part never came.
        "!AIVDM,2,2,3,B,1@0000000000000,2*55".to_owned(),
        good[sentence_start..].to_owned(),
    ];
    let report = ingest_lines(&app.app, &app.app.config.ais, &lines)
        .await
        .unwrap();
    let stats = report.decode;
    assert_eq!(stats.lines, 7);
    assert_eq!(stats.decoded, 1);
    assert_eq!(report.positions, 1);
    assert!(stats.bad_checksum >= 1, "{stats:?}");
    assert!(stats.malformed + stats.bad_checksum >= 2, "{stats:?}");
    assert_eq!(stats.unsupported_type, 1, "{stats:?}");
    assert!(stats.not_ais >= 2, "{stats:?}");
    // The good line still landed; unknown to carrier data, the vessel is known by MMSI.
    let metrics = app.get("/metrics").await;
    let text = String::from_utf8_lossy(&metrics.body).to_string();
    assert!(
        text.contains("tidemark_ais_sentences_total"),
        "metrics count AIS outcomes"
    );
}

async fn a_real_sample_feed_is_decoded_and_stored(app: TestApp) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/reference/ais/pyais_nmea_data_sample.txt");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("{} not found: skipped", path.display());
        return;
    };
    let report =
        tidemark_server::use_cases::vessels::ais::replay_file(&app.app, &app.app.config.ais, &path)
            .await
            .unwrap();
    assert_eq!(report.decode.lines, text.lines().count() as u64);
    assert!(report.positions > 100, "{report:?}");
    assert!(report.stored > 0, "{report:?}");
    assert!(report.statics > 0, "{report:?}");
}

/// Waits (for socket IO, not for time to pass) until the vessel with this IMO has a
/// latest fix, for at most ten seconds.
async fn wait_for_fix(app: &TestApp, imo: &str) -> bool {
    for _ in 0..500 {
        if let Ok(vessel) = app.app.store.vessel_by_imo(imo).await
            && vessel.latest.is_some()
        {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    false
}

fn lines_for(mmsi: u32, imo: u32, at: DateTime<Utc>) -> String {
    let mut lines = encode_static(&StaticData {
        mmsi,
        imo: Some(imo),
        name: Some(format!("VESSEL {imo}")),
        message_type: 5,
        received_at: None,
        ..StaticData::default()
    });
    lines.push(encode_position(&PositionReport {
        mmsi,
        latitude: 51.9,
        longitude: 4.1,
        speed_over_ground_knots: Some(10.0),
        course_over_ground: Some(90.0),
        true_heading: Some(90),
        timestamp_second: None,
        navigation_status: None,
        message_type: 1,
        received_at: Some(at.timestamp()),
    }));
    lines.join("\r\n") + "\r\n"
}

async fn a_udp_source_stores_the_positions_it_receives(app: TestApp) {
    let address = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let source = tokio::spawn(tidemark_server::use_cases::vessels::ais::run_source(
        app.app.core.clone(),
        app.app.config.ais.clone(),
        tidemark_server::config::AisSource::Udp(address),
        shutdown.clone(),
    ));
    let sender = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let datagram = lines_for(244_000_001, 9_000_001, app.clock.now());
    let mut stored = false;
    // Datagrams sent before the source is listening are lost, as on any UDP feed.
    for _ in 0..20 {
        sender.send_to(datagram.as_bytes(), address).await.unwrap();
        if wait_for_fix(&app, "9000001").await {
            stored = true;
            break;
        }
    }
    shutdown.cancel();
    source.await.unwrap();
    assert!(stored, "the datagram's position was stored");
    let vessel = app.app.store.vessel_by_imo("9000001").await.unwrap();
    assert_eq!(vessel.mmsi.as_deref(), Some("244000001"));
    assert_eq!(vessel.name.as_deref(), Some("VESSEL 9000001"));
}

async fn a_tcp_source_reads_a_feed_and_reconnects_when_it_drops(app: TestApp) {
    use tokio::io::AsyncWriteExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let source = tokio::spawn(tidemark_server::use_cases::vessels::ais::run_source(
        app.app.core.clone(),
        app.app.config.ais.clone(),
        tidemark_server::config::AisSource::Tcp(address.to_string()),
        shutdown.clone(),
    ));
    let (mut first, _) = listener.accept().await.unwrap();
    first
        .write_all(lines_for(244_000_002, 9_000_002, app.clock.now()).as_bytes())
        .await
        .unwrap();
    assert!(wait_for_fix(&app, "9000002").await);
    drop(first);
    // The source connects again after a short backoff and reads the new feed.
    let (mut second, _) = listener.accept().await.unwrap();
    second
        .write_all(lines_for(244_000_003, 9_000_003, app.clock.now()).as_bytes())
        .await
        .unwrap();
    assert!(wait_for_fix(&app, "9000003").await);
    shutdown.cancel();
    source.await.unwrap();
}

/// Tracks the showcase number and moves the clock until its first vessel is at sea, with
/// the sandbox's vessels reporting through AIS. Returns the container id.
async fn showcase_at_sea(app: &TestApp) -> (String, tidemark_carriers::sandbox::Voyage) {
    let epoch = app.clock.now();
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": "TEST-TR-SUCCEEDED",
                "scac": "TEST"
            }}}),
        )
        .await;
    assert_eq!(response.status, StatusCode::CREATED);
    let sandbox = tidemark_server::parts::carriers::sandbox(ReferenceData::embedded());
    let voyage = sandbox
        .voyage("TEST-TR-SUCCEEDED", epoch)
        .expect("the showcase has a voyage");
    let first = &voyage.legs()[0];
    // A third of the way along the first leg.
    app.clock
        .set(first.departure + (first.arrival - first.departure) / 3);
    app.tick().await;
    let transmitter = SandboxAis::new(sandbox, Duration::minutes(30));
    let report = sandbox_vessels::tick(&app.app, &app.app.config.ais, &transmitter)
        .await
        .unwrap();
    assert!(report.positions > 10, "{report:?}");

    let requests = app.get("/v2/tracking_requests").await.json();
    let shipment_id = requests["data"][0]["relationships"]["tracked_object"]["data"]["id"]
        .as_str()
        .expect("tracked")
        .to_owned();
    let shipment = app
        .get(&format!("/v2/shipments/{shipment_id}"))
        .await
        .json();
    let container = shipment["data"]["relationships"]["containers"]["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    (container, voyage)
}

/// The features' kinds and sequences in order; the parts of a line cut at the
/// antimeridian count once.
fn feature_types(map: &Value) -> Vec<(String, u64)> {
    let mut kinds: Vec<(String, u64)> = map["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["properties"]["feature_type"].as_str().unwrap().to_owned(),
                f["properties"]["ports_sequence"].as_u64().unwrap(),
            )
        })
        .collect();
    kinds.dedup();
    kinds
}

/// The features, with the parts of a line cut at the antimeridian joined again.
fn joined_features(map: &Value) -> Vec<Value> {
    let mut joined: Vec<Value> = Vec::new();
    for feature in map["features"].as_array().unwrap() {
        if let Some(previous) = joined.last_mut()
            && previous["properties"]["feature_type"] == feature["properties"]["feature_type"]
            && previous["properties"]["ports_sequence"] == feature["properties"]["ports_sequence"]
        {
            let more = feature["geometry"]["coordinates"]
                .as_array()
                .unwrap()
                .clone();
            previous["geometry"]["coordinates"]
                .as_array_mut()
                .unwrap()
                .extend(more);
            continue;
        }
        joined.push(feature.clone());
    }
    joined
}

async fn a_tracked_test_container_maps_every_feature_type_in_route_order(app: TestApp) {
    let (container, voyage) = showcase_at_sea(&app).await;
    let response = app
        .get(&format!("/v2/containers/{container}/map_geojson"))
        .await;
    assert_eq!(response.status, StatusCode::OK);
    let map = response.json();
    assert_eq!(map["type"], json!("FeatureCollection"));
    let types = feature_types(&map);
    let expected: Vec<(String, u64)> = [
        ("port", 1),
        ("past_vessel_locations", 1),
        ("current_vessel", 1),
        ("estimated_partial_leg", 1),
        ("port", 2),
        ("estimated_full_legs", 2),
        ("port", 3),
    ]
    .iter()
    .map(|(t, s)| ((*t).to_owned(), *s))
    .collect();
    assert_eq!(types, expected);

    let features = &joined_features(&map);
    let labels: Vec<&str> = features
        .iter()
        .filter(|f| f["properties"]["feature_type"] == json!("port"))
        .map(|f| f["properties"]["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["POL", "TS1", "POD"]);
    // Ports are the voyage's, longitude first.
    let pol = &features[0];
    let reference = ReferenceData::embedded()
        .port_by_locode(&voyage.port_of_lading().locode)
        .unwrap();
    assert_eq!(
        pol["properties"]["location_id"],
        json!(reference.id.to_string())
    );
    let coordinates = pol["geometry"]["coordinates"].as_array().unwrap();
    assert!((coordinates[0].as_f64().unwrap() - reference.longitude).abs() < 1e-5);
    assert!((coordinates[1].as_f64().unwrap() - reference.latitude).abs() < 1e-5);
    assert!(pol["properties"]["outbound_atd_at"].is_string());

    // The vessel is where the sandbox says, and the past track ends there.
    let current = &features[2];
    let at_sea = voyage.vessel_position(app.clock.now()).unwrap();
    let point = current["geometry"]["coordinates"].as_array().unwrap();
    assert!((point[0].as_f64().unwrap() - at_sea.longitude).abs() < 0.01);
    assert!((point[1].as_f64().unwrap() - at_sea.latitude).abs() < 0.01);
    assert_eq!(
        current["properties"]["vessel_imo"],
        json!(voyage.legs()[0].vessel.imo)
    );
    assert_eq!(current["properties"]["departure_port_label"], json!("POL"));
    assert_eq!(current["properties"]["arrival_port_label"], json!("TS1"));
    let past = &features[1];
    let line = past["geometry"]["coordinates"].as_array().unwrap();
    assert!(line.len() >= 2);
    assert_eq!(
        past["properties"]["point_count"],
        json!(line.len()),
        "point_count counts the line's points"
    );
    assert_eq!(line.last().unwrap(), &json!(point));
    assert_eq!(
        past["properties"]["vessel_id"],
        current["properties"]["vessel_id"]
    );
    // The partial leg starts at the vessel and ends at the transshipment port.
    let partial = features[3]["geometry"]["coordinates"].as_array().unwrap();
    assert_eq!(partial.first().unwrap(), &json!(point));
    let ts = &features[4]["geometry"]["coordinates"];
    assert_eq!(partial.last().unwrap(), ts);
    // The leg not started runs from the transshipment port to the POD.
    let full = features[5]["geometry"]["coordinates"].as_array().unwrap();
    assert_eq!(full.first().unwrap(), ts);
    assert_eq!(
        full.last().unwrap(),
        &features[6]["geometry"]["coordinates"]
    );
    // Every line stays within ±180° and never jumps across the globe: the
    // transpacific leg is cut at the antimeridian.
    let mut cut = 0;
    for feature in map["features"].as_array().unwrap() {
        let points = coordinates_of(feature);
        for p in &points {
            assert!((-180.0..=180.0).contains(&p[0]) && (-90.0..=90.0).contains(&p[1]));
        }
        for w in points.windows(2) {
            assert!((w[1][0] - w[0][0]).abs() < 180.0, "{w:?}");
        }
        if points.len() > 1 {
            assert_eq!(feature["properties"]["point_count"], json!(points.len()));
        }
        cut += points.iter().filter(|p| p[0].abs() == 180.0).count();
    }
    assert!(
        cut >= 2,
        "the leg from Tokyo to Seattle crosses the date line"
    );
}

fn coordinates_of(feature: &Value) -> Vec<[f64; 2]> {
    let geometry = &feature["geometry"];
    let pair = |v: &Value| [v[0].as_f64().unwrap(), v[1].as_f64().unwrap()];
    match geometry["type"].as_str().unwrap() {
        "Point" => vec![pair(&geometry["coordinates"])],
        _ => geometry["coordinates"]
            .as_array()
            .unwrap()
            .iter()
            .map(pair)
            .collect(),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

async fn map_properties_have_terminal49s_names_order_and_types(app: TestApp) {
    let example_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../../shared/reference/terminal49/openapi-examples/get-containers-id-map-geojson.200.Example_Response.json",
    );
    let Ok(text) = std::fs::read_to_string(&example_path) else {
        eprintln!("{} not found: skipped", example_path.display());
        return;
    };
    let example: Value = serde_json::from_str(&text).unwrap();
    let mut expected: BTreeMap<String, Vec<(String, &'static str)>> = BTreeMap::new();
    for feature in example["features"].as_array().unwrap() {
        let properties = feature["properties"].as_object().unwrap();
        expected.insert(
            properties["feature_type"].as_str().unwrap().to_owned(),
            properties
                .iter()
                .map(|(k, v)| (k.clone(), json_type(v)))
                .collect(),
        );
    }
    // Not in the example: spec §2.12 and Terminal49's schema.
    expected.insert(
        "estimated_full_legs".to_owned(),
        [
            ("feature_type", "string"),
            ("ports_sequence", "integer"),
            ("previous_port_id", "string"),
            ("next_port_id", "string"),
            ("point_count", "integer"),
        ]
        .iter()
        .map(|(k, t)| ((*k).to_owned(), *t))
        .collect(),
    );

    let (container, _) = showcase_at_sea(&app).await;
    let response = app
        .get(&format!("/v2/containers/{container}/map_geojson"))
        .await;
    // Key order as sent, not as a JSON map would sort it.
    let raw = String::from_utf8(response.body.clone()).unwrap();
    let map = response.json();
    let mut seen = 0;
    for feature in map["features"].as_array().unwrap() {
        assert_eq!(feature["type"], json!("Feature"));
        let kind = feature["properties"]["feature_type"].as_str().unwrap();
        let want = &expected[kind];
        let got = feature["properties"].as_object().unwrap();
        let names: Vec<&str> = got.keys().map(String::as_str).collect();
        let mut want_names: Vec<&str> = want.iter().map(|(k, _)| k.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        want_names.sort_unstable();
        assert_eq!(sorted, want_names, "{kind}: property names");
        for (name, kind_of) in want {
            let value = &got[name];
            // Nullable members may be null on either side; otherwise the types agree
            // (a whole number may be written as an integer where the example has one).
            if value.is_null() || *kind_of == "null" {
                continue;
            }
            let actual = json_type(value);
            let compatible = actual == *kind_of
                || (*kind_of == "number" && actual == "integer")
                || (*kind_of == "integer" && actual == "number");
            assert!(compatible, "{kind}.{name}: {actual} where {kind_of}");
        }
        for name in [
            "location_id",
            "vessel_id",
            "departure_port_id",
            "next_port_id",
        ] {
            if let Some(id) = got.get(name).and_then(Value::as_str) {
                assert!(uuid::Uuid::parse_str(id).is_ok(), "{kind}.{name} is a UUID");
            }
        }
        for (name, value) in got {
            if let Some(text) = value.as_str()
                && (name.ends_with("_at")
                    || name.ends_with("_time")
                    || name.ends_with("timestamp")
                    || name.ends_with("_eta")
                    || name.ends_with("_atd"))
            {
                assert!(
                    text.ends_with('Z') && DateTime::parse_from_rfc3339(text).is_ok(),
                    "{kind}.{name} = {text}"
                );
            }
        }
        seen += 1;
    }
    assert!(seen >= 7);
    // The serialized order of the port's properties is Terminal49's.
    // (A parsed example sorts its keys, so the order is written out from it here.)
    let port_keys = [
        "feature_type",
        "ports_sequence",
        "ports_total",
        "location_id",
        "location_type",
        "name",
        "state_abbr",
        "state",
        "country_code",
        "country",
        "time_zone",
        "inbound_eta_at",
        "inbound_ata_at",
        "outbound_etd_at",
        "outbound_atd_at",
        "label",
        "updated_at",
    ];
    let positions: Vec<usize> = port_keys
        .iter()
        .map(|k| raw.find(&format!("\"{k}\"")).unwrap())
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "port properties in order"
    );
}

async fn another_accounts_container_has_no_map(app: TestApp) {
    let (container, _) = showcase_at_sea(&app).await;
    let other = app.other_account_key().await;
    let response = app
        .request(
            axum::http::Method::GET,
            &format!("/v2/containers/{container}/map_geojson"),
            Some(&other),
            None,
        )
        .await;
    assert_eq!(response.status, StatusCode::NOT_FOUND);
    let response = app.get("/v2/containers/not-an-id/map_geojson").await;
    assert_eq!(response.status, StatusCode::NOT_FOUND);
}

fn ids_of(voyage: &tidemark_carriers::sandbox::Voyage) -> (String, String, String) {
    let reference = ReferenceData::embedded();
    let leg = &voyage.legs()[0];
    let from = reference.port_by_locode(&leg.from.locode).unwrap().id;
    let to = reference.port_by_locode(&leg.to.locode).unwrap().id;
    (leg.vessel.imo.clone(), from.to_string(), to.to_string())
}

async fn future_positions_follow_the_sea_to_the_next_port_paced_by_the_carriers_eta(app: TestApp) {
    let (_, voyage) = showcase_at_sea(&app).await;
    let (imo, previous, port) = ids_of(&voyage);
    let response = app
        .get(&format!(
            "/v2/vessels/{imo}/future_positions?port_id={port}&previous_port_id={previous}"
        ))
        .await;
    assert_eq!(
        response.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    let body = response.json();
    let id = body["data"]["id"].as_str().unwrap();
    assert_eq!(
        body["links"]["self"],
        json!(format!(
            "http://tidemark.test/v2/vessels/{id}/future_positions"
        ))
    );
    let positions = body["data"]["attributes"]["positions"].as_array().unwrap();
    assert!(positions.len() > 10);
    assert!(positions.iter().all(|p| p["estimated"] == json!(true)));
    assert!(positions.iter().all(|p| p["heading"].is_number()));
    let times: Vec<DateTime<Utc>> = positions
        .iter()
        .map(|p| p["timestamp"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(times[0] > app.clock.now() - Duration::hours(1));
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    // The route ends at the port...
    let destination = &voyage.legs()[0].to;
    let last = positions.last().unwrap();
    assert!((last["latitude"].as_f64().unwrap() - destination.latitude).abs() < 0.01);
    assert!((last["longitude"].as_f64().unwrap() - destination.longitude).abs() < 0.01);
    // ...on the sea network: consecutive hourly points are a ship's hour apart, never a
    // jump across a continent.
    for pair in positions.windows(2) {
        let km = haversine_km(&pair[0], &pair[1]);
        assert!(km < 100.0, "{km} km between hourly points");
    }
    // ...at the pace of the carrier's latest estimate for that call: the last point is
    // its estimated arrival.
    let (container, _) = first_container(&app).await;
    let raw = app
        .get(&format!("/v2/containers/{container}/raw_events"))
        .await
        .json();
    let eta = raw["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["attributes"])
        .find(|a| {
            a["estimated"] == json!(true)
                && a["location_locode"] == json!(destination.locode)
                && a["original_event"].as_str().unwrap().contains("ARRI")
        })
        .expect("the carrier estimates the transshipment arrival")["timestamp"]
        .as_str()
        .unwrap()
        .parse::<DateTime<Utc>>()
        .unwrap();
    assert_eq!(*times.last().unwrap(), eta);
}

async fn first_container(app: &TestApp) -> (String, String) {
    let requests = app.get("/v2/tracking_requests").await.json();
    let shipment_id = requests["data"][0]["relationships"]["tracked_object"]["data"]["id"]
        .as_str()
        .expect("tracked")
        .to_owned();
    let shipment = app
        .get(&format!("/v2/shipments/{shipment_id}"))
        .await
        .json();
    let container = shipment["data"]["relationships"]["containers"]["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    (container, shipment_id)
}

fn haversine_km(a: &Value, b: &Value) -> f64 {
    let (lat1, lon1) = (
        a["latitude"].as_f64().unwrap().to_radians(),
        a["longitude"].as_f64().unwrap().to_radians(),
    );
    let (lat2, lon2) = (
        b["latitude"].as_f64().unwrap().to_radians(),
        b["longitude"].as_f64().unwrap().to_radians(),
    );
    let dlat = lat2 - lat1;
    let mut dlon = (lon2 - lon1).abs();
    if dlon > std::f64::consts::PI {
        dlon = 2.0 * std::f64::consts::PI - dlon;
    }
    let h = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * 6371.0 * h.sqrt().asin()
}

async fn future_positions_from_given_coordinates_start_there(app: TestApp) {
    let (_, voyage) = showcase_at_sea(&app).await;
    let (imo, previous, port) = ids_of(&voyage);
    let leg = &voyage.legs()[0];
    // Halfway along the leg rather than where the vessel is now.
    let halfway = voyage
        .vessel_position(leg.departure + (leg.arrival - leg.departure) / 2)
        .unwrap();
    let response = app
        .get(&format!(
            "/v2/vessels/{imo}/future_positions_with_coordinates?port_id={port}&previous_port_id={previous}&latitude={}&longitude={}",
            halfway.latitude, halfway.longitude
        ))
        .await;
    assert_eq!(
        response.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    let positions = response.json()["data"]["attributes"]["positions"]
        .as_array()
        .unwrap()
        .clone();
    let start = json!({"latitude": halfway.latitude, "longitude": halfway.longitude});
    assert!(haversine_km(&start, &positions[0]) < 100.0);
    let now = app
        .get(&format!(
            "/v2/vessels/{imo}/future_positions?port_id={port}&previous_port_id={previous}"
        ))
        .await
        .json();
    let length =
        |points: &[Value]| -> f64 { points.windows(2).map(|w| haversine_km(&w[0], &w[1])).sum() };
    let from_now = now["data"]["attributes"]["positions"].as_array().unwrap();
    assert!(
        length(&positions) < length(from_now),
        "a start nearer the port leaves less sea to cross"
    );
    // Both arrive at the carrier's estimate.
    assert_eq!(
        positions.last().unwrap()["timestamp"],
        from_now.last().unwrap()["timestamp"]
    );
}

async fn future_position_parameters_are_checked(app: TestApp) {
    let (_, voyage) = showcase_at_sea(&app).await;
    let (imo, previous, port) = ids_of(&voyage);
    let base = format!("/v2/vessels/{imo}/future_positions_with_coordinates");
    for (query, parameter) in [
        (
            format!("previous_port_id={previous}&latitude=1&longitude=2"),
            "port_id",
        ),
        (
            format!("port_id={port}&latitude=1&longitude=2"),
            "previous_port_id",
        ),
        (
            format!("port_id=nope&previous_port_id={previous}&latitude=1&longitude=2"),
            "port_id",
        ),
        (
            format!("port_id={port}&previous_port_id={previous}&longitude=2"),
            "latitude",
        ),
        (
            format!("port_id={port}&previous_port_id={previous}&latitude=north&longitude=2"),
            "latitude",
        ),
        (
            format!("port_id={port}&previous_port_id={previous}&latitude=91&longitude=2"),
            "latitude",
        ),
        (
            format!("port_id={port}&previous_port_id={previous}&latitude=1&longitude=-180.5"),
            "longitude",
        ),
        (
            format!("port_id={port}&previous_port_id={previous}&latitude=NaN&longitude=2"),
            "latitude",
        ),
    ] {
        let response = app.get(&format!("{base}?{query}")).await;
        assert_eq!(response.status, StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(
            response.error_member("source")["parameter"],
            json!(parameter),
            "{query}"
        );
    }
    let unknown_port = uuid::Uuid::from_u128(7);
    let response = app
        .get(&format!(
            "{base}?port_id={unknown_port}&previous_port_id={previous}&latitude=1&longitude=2"
        ))
        .await;
    assert_eq!(response.status, StatusCode::NOT_FOUND);
    let response = app
        .get(&format!(
            "/v2/vessels/1234567/future_positions?port_id={port}&previous_port_id={previous}"
        ))
        .await;
    assert_eq!(response.status, StatusCode::NOT_FOUND);
    let response = app
        .get(&format!(
            "/v2/vessels/{imo}/future_positions?previous_port_id={previous}"
        ))
        .await;
    assert_eq!(response.status, StatusCode::BAD_REQUEST);
}
