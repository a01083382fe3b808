//! DCSA Track & Trace 3.0 end to end: a carrier configured with `dcsa_version = "3.0"` is
//! polled at the sandbox's `/events` (3.0.0's path) (paged by `Next-Page`) and its number becomes a
//! shipment with containers and events; a 3.0 notification (`{"events": [...]}`) is accepted
//! on the push callback with the same signature rule as 2.2's.

use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use chrono::TimeZone;
use serde_json::{Value, json};
use tidemark_domain::MockClock;
use tidemark_server::Config;
use tidemark_server::parts::carriers::{connector_for, sandbox};

use crate::helpers::{Backend, TestApp, TestResponse};
use crate::on_both_backends;

on_both_backends!(
    a_carrier_speaking_3_0_tracks_a_number_through_the_sandboxs_3_0_events,
    a_signed_3_0_push_is_accepted_and_polls_the_requests_it_concerns,
    a_3_0_push_with_a_wrong_signature_or_body_is_refused,
);

const SECRET: &str = "s3cret-subscription-key";

/// A sandbox carrier on a free port, at the test app's time, recording the paths asked for.
async fn sandbox_v3() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let clock = Arc::new(MockClock::new(
        chrono::Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap(),
    ));
    let paths = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&paths);
    let router = tidemark_carriers::sandbox::router(
        sandbox(tidemark_geo::reference::ReferenceData::embedded()),
        clock,
    )
    .layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            recorded
                .lock()
                .unwrap()
                .push(request.uri().path().to_owned());
            next.run(request)
        },
    ));
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{address}/"), paths)
}

/// A test app whose KMTU speaks DCSA 3.0 at `base_url`, configured as an operator would.
async fn app_with_3_0_carrier(backend: Backend, base_url: &str) -> TestApp {
    let settings = [
        ("carriers.KMTU.base_url", base_url),
        ("carriers.KMTU.dcsa_version", "3.0"),
        ("carriers.KMTU.notification_secret", SECRET),
    ];
    let config = Config::from_pairs(&settings).unwrap();
    assert_eq!(
        config.carriers[0].protocol,
        tidemark_carriers::profile::Protocol::Dcsa30
    );
    let connector =
        connector_for(&config.carriers[0], Arc::new(tidemark_domain::SystemClock)).unwrap();
    TestApp::build(backend, &settings, vec![connector])
        .await
        .unwrap()
}

async fn request_of(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v2/tracking_requests/{id}")).await.json()["data"].clone()
}

fn signed(secret: &str, body: &[u8]) -> String {
    use hmac::Mac;
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

async fn push(app: &TestApp, signature: &str, body: &[u8]) -> TestResponse {
    app.send(
        axum::http::Request::post("/callbacks/dcsa/KMTU")
            .header("content-type", "application/json")
            .header("notification-signature", signature)
            .body(axum::body::Body::from(body.to_vec()))
            .unwrap(),
    )
    .await
}

/// A 3.0 notification of one departure of the bill of lading `number`.
fn notification(number: &str) -> Vec<u8> {
    json!({"events": [{
        "eventID": "evt-push-001",
        "eventDateTime": "2026-03-01T10:00:00Z",
        "eventUpdatedDateTime": "2026-03-01T10:05:00Z",
        "eventLocation": {"UNLocationCode": "CNSHA", "facilityTypeCode": "POTE"},
        "eventClassification": {
            "eventTypeCode": "TRANSPORT",
            "eventClassifierCode": "ACT",
            "transportEventTypeCode": "DEPA"
        },
        "shipmentDetails": {"documentReference": {"typeCode": "TRD", "reference": number}},
        "transportDetails": {"transportCall": {"modeOfTransport": "VESSEL"}}
    }]})
    .to_string()
    .into_bytes()
}

async fn a_carrier_speaking_3_0_tracks_a_number_through_the_sandboxs_3_0_events(app: TestApp) {
    let (base_url, paths) = sandbox_v3().await;
    let app = app_with_3_0_carrier(app.backend, &base_url).await;
    let id = app.track("bill_of_lading", "TEST-DCSA3-0001", "KMTU").await;

    app.run_pending_jobs().await;

    let request = request_of(&app, &id).await;
    assert_eq!(request["attributes"]["status"], json!("created"));
    let shipment_id = request["relationships"]["tracked_object"]["data"]["id"]
        .as_str()
        .expect("the request has a shipment")
        .to_owned();
    let shipment = app
        .get(&format!("/v2/shipments/{shipment_id}?include=containers"))
        .await
        .json();
    assert_eq!(
        shipment["data"]["attributes"]["shipping_line_scac"],
        json!("KMTU")
    );
    assert!(shipment["data"]["attributes"]["port_of_lading_locode"].is_string());
    let containers = shipment["data"]["relationships"]["containers"]["data"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!containers.is_empty());
    let container_id = containers[0]["id"].as_str().unwrap();
    let events = app
        .get(&format!(
            "/v2/containers/{container_id}/transport_events?page[size]=100"
        ))
        .await
        .json();
    assert!(
        !events["data"].as_array().unwrap().is_empty(),
        "the container has transport events"
    );
    let paths = paths.lock().unwrap().clone();
    assert!(paths.len() >= 2, "the voyage was read in pages: {paths:?}");
    // 3.0.0's own path: its spec's one resource is `/events` under the carrier's address.
    assert!(paths.iter().all(|path| path == "/events"), "{paths:?}");
}

async fn a_signed_3_0_push_is_accepted_and_polls_the_requests_it_concerns(app: TestApp) {
    let (base_url, _) = sandbox_v3().await;
    let app = app_with_3_0_carrier(app.backend, &base_url).await;
    app.track("bill_of_lading", "TEST-DCSA3-PUSH", "KMTU").await;
    app.run_pending_jobs().await;
    assert_eq!(
        app.run_pending_jobs().await,
        0,
        "nothing is due before the push"
    );
    let body = notification("TEST-DCSA3-PUSH");

    let response = push(&app, &signed(SECRET, &body), &body).await;

    assert_eq!(response.status, StatusCode::NO_CONTENT);
    assert!(
        app.run_pending_jobs().await >= 1,
        "the push queued a poll of the request"
    );
}

async fn a_3_0_push_with_a_wrong_signature_or_body_is_refused(app: TestApp) {
    let (base_url, _) = sandbox_v3().await;
    let app = app_with_3_0_carrier(app.backend, &base_url).await;
    let body = notification("TEST-DCSA3-PUSH");
    let not_events = br#"{"events": {"eventID": "1"}}"#;

    let unsigned = push(&app, "sha256=00", &body).await;
    let signed_by_another = push(&app, &signed("another-secret-of-16", &body), &body).await;
    let malformed = push(&app, &signed(SECRET, not_events), not_events).await;

    assert_eq!(unsigned.status, StatusCode::UNAUTHORIZED);
    assert_eq!(signed_by_another.status, StatusCode::UNAUTHORIZED);
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    assert_eq!(malformed.error_member("status"), json!("400"));
}
