//! Terminal49 parity (issue 18): the sandbox's ship shown at once, the webhook egress
//! addresses, container updates, tracking-request custom fields, metro areas and search.

use axum::http::StatusCode;
use chrono::Duration;
use serde_json::{Value, json};
use tidemark_domain::Clock;
use tidemark_geo::reference::ReferenceData;

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    a_new_sandbox_voyage_shows_its_vessel_and_past_track_as_soon_as_it_is_created,
    the_sandbox_vessel_keeps_reporting_on_the_transmitters_interval_after_creation,
    an_installation_that_declares_no_egress_lists_no_webhook_ips,
    webhook_ips_need_an_api_key,
    the_openapi_document_describes_the_parity_operations,
);

mod declared_egress {
    use super::*;

    on_both_backends!(
        settings = &[("webhook_egress_ips", "203.0.113.7, 2001:db8::1, 203.0.113.7")];
        webhook_ips_are_the_declared_egress_in_terminal49s_shape,
    );
}

/// Tracks the showcase number, moves the clock until its first vessel is a third of the
/// way along its first leg, and runs one turn of the workers (the poll that makes the
/// request `created`) — and nothing else: no transmitter tick. Returns the shipment's
/// first container id and the voyage.
async fn showcase_created_at_sea(app: &TestApp) -> (String, tidemark_carriers::sandbox::Voyage) {
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
    app.clock
        .set(first.departure + (first.arrival - first.departure) / 3);
    app.tick().await;
    let requests = app.get("/v2/tracking_requests").await.json();
    assert_eq!(
        requests["data"][0]["attributes"]["status"],
        json!("created")
    );
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

fn feature<'a>(map: &'a Value, kind: &str) -> Option<&'a Value> {
    map["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["properties"]["feature_type"] == json!(kind))
}

async fn a_new_sandbox_voyage_shows_its_vessel_and_past_track_as_soon_as_it_is_created(
    app: TestApp,
) {
    let (container, voyage) = showcase_created_at_sea(&app).await;
    let at_sea = voyage.vessel_position(app.clock.now()).unwrap();

    let map = app
        .get(&format!("/v2/containers/{container}/map_geojson"))
        .await
        .json();
    let current = feature(&map, "current_vessel").expect("the vessel is on the map");
    let point = &current["geometry"]["coordinates"];
    assert!((point[0].as_f64().unwrap() - at_sea.longitude).abs() < 0.01);
    assert!((point[1].as_f64().unwrap() - at_sea.latitude).abs() < 0.01);
    let past = feature(&map, "past_vessel_locations").expect("the past track is on the map");
    let line = past["geometry"]["coordinates"].as_array().unwrap();
    assert!(line.len() >= 2, "{line:?}");

    let imo = &voyage.legs()[0].vessel.imo;
    let vessel = app.get(&format!("/v2/vessels/{imo}")).await;
    assert_eq!(vessel.status, StatusCode::OK);
    let attributes = &vessel.json()["data"]["attributes"];
    assert!((attributes["latitude"].as_f64().unwrap() - at_sea.latitude).abs() < 0.01);
    assert!((attributes["longitude"].as_f64().unwrap() - at_sea.longitude).abs() < 0.01);
    assert_eq!(
        attributes["position_timestamp"],
        json!(app.clock.now().format("%Y-%m-%dT%H:%M:%SZ").to_string())
    );
}

async fn the_sandbox_vessel_keeps_reporting_on_the_transmitters_interval_after_creation(
    app: TestApp,
) {
    let (_, voyage) = showcase_created_at_sea(&app).await;
    let transmitter = app
        .app
        .sandbox_ais
        .clone()
        .expect("the sandbox transmitter is on by default");

    let same_time = tidemark_server::use_cases::vessels::sandbox::tick(
        &app.app,
        &app.app.config.ais,
        &transmitter,
    )
    .await
    .unwrap();
    assert_eq!(
        same_time.positions, 0,
        "what creation sent is not sent again"
    );
    // `sandbox_ais_seconds` is 300 by default: one new position per five minutes.
    app.clock.advance(Duration::minutes(15));
    let later = tidemark_server::use_cases::vessels::sandbox::tick(
        &app.app,
        &app.app.config.ais,
        &transmitter,
    )
    .await
    .unwrap();
    assert_eq!(later.positions, 3, "{later:?}");

    let imo = &voyage.legs()[0].vessel.imo;
    let vessel = app.get(&format!("/v2/vessels/{imo}")).await.json();
    let at_sea = voyage.vessel_position(app.clock.now()).unwrap();
    let attributes = &vessel["data"]["attributes"];
    assert!((attributes["latitude"].as_f64().unwrap() - at_sea.latitude).abs() < 0.01);
    assert_eq!(
        attributes["position_timestamp"],
        json!(app.clock.now().format("%Y-%m-%dT%H:%M:%SZ").to_string())
    );
}

async fn an_installation_that_declares_no_egress_lists_no_webhook_ips(app: TestApp) {
    let response = app.get("/v2/webhooks/ips").await;

    assert_eq!(response.status, StatusCode::OK);
    assert_eq!(
        response.header("content-type"),
        Some("application/vnd.api+json")
    );
    assert_eq!(
        response.json(),
        json!({"webhook_notification_ips": [], "last_updated": "2026-03-01T12:00:00Z"})
    );
}

async fn webhook_ips_are_the_declared_egress_in_terminal49s_shape(app: TestApp) {
    let response = app.get("/v2/webhooks/ips").await;

    assert_eq!(response.status, StatusCode::OK);
    assert_eq!(
        response.json(),
        json!({
            "webhook_notification_ips": ["203.0.113.7", "2001:db8::1"],
            "last_updated": "2026-03-01T12:00:00Z"
        })
    );
}

async fn webhook_ips_need_an_api_key(app: TestApp) {
    let response = app
        .request(axum::http::Method::GET, "/v2/webhooks/ips", None, None)
        .await;

    assert_eq!(response.status, StatusCode::UNAUTHORIZED);
}

/// The operations this file covers, each with its methods, statuses and content type.
const DOCUMENTED: &[(&str, &str, &[&str])] = &[
    ("/v2/webhooks/ips", "get", &["200", "401"]),
    (
        "/v2/containers/{id}",
        "patch",
        &["200", "400", "401", "403", "404", "409", "415", "422"],
    ),
    (
        "/v2/containers",
        "patch",
        &["200", "400", "401", "403", "404", "415", "422"],
    ),
    ("/v2/metro_areas/{id}", "get", &["200", "401", "404"]),
    ("/v2/search", "get", &["200", "400", "401"]),
];

async fn the_openapi_document_describes_the_parity_operations(app: TestApp) {
    let spec = app
        .request(axum::http::Method::GET, "/v2/openapi.json", None, None)
        .await
        .json();

    for (path, method, statuses) in DOCUMENTED {
        let operation = &spec["paths"][path][method];
        assert!(operation.is_object(), "{method} {path} is not documented");
        for status in *statuses {
            let response = &operation["responses"][status];
            assert!(
                response.is_object(),
                "{method} {path} does not list {status}"
            );
            assert!(
                response["content"]["application/vnd.api+json"].is_object(),
                "{method} {path} {status} is not application/vnd.api+json: {response}"
            );
        }
    }
}
