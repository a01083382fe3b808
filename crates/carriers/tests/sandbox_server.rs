//! The sandbox carrier over HTTP: DCSA T&T 2.2 and 3.0 paging, headers and errors.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::response::Response;
use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::Value;
use tidemark_carriers::sandbox::{Sandbox, builtin_ports, router};
use tidemark_domain::MockClock;
use tower::ServiceExt;

const EPOCH: &str = "2025-06-01T09:30:00Z";

fn epoch() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 6, 1, 9, 30, 0)
        .single()
        .expect("a valid date")
}

fn sandbox() -> Arc<Sandbox> {
    Arc::new(Sandbox::new(builtin_ports()))
}

fn app_at(now: DateTime<Utc>) -> axum::Router {
    router(sandbox(), Arc::new(MockClock::new(now)))
}

async fn get(app: axum::Router, uri: &str) -> Response {
    app.oneshot(
        Request::get(uri)
            .body(Body::empty())
            .expect("a valid request"),
    )
    .await
    .expect("the router always answers")
}

async fn json(response: Response) -> Value {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a readable body");
    serde_json::from_slice(&bytes).expect("a JSON body")
}

fn header<'a>(response: &'a Response, name: &str) -> Option<&'a str> {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().expect("an ASCII header"))
}

#[tokio::test]
async fn events_are_served_in_pages_linked_by_next_page_cursor() {
    let now = epoch() + Duration::days(40);
    let expected = sandbox()
        .voyage("TEST-TR-SUCCEEDED", epoch())
        .unwrap()
        .events_until(now);
    let base = format!(
        "/v2/events?transportDocumentReference=TEST-TR-SUCCEEDED&tidemarkEpoch={EPOCH}&limit=4"
    );

    let mut pages = Vec::new();
    let mut uri = base.clone();
    loop {
        let response = get(app_at(now), &uri).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(header(&response, "API-Version"), Some("2.2.0"));
        assert!(header(&response, "Current-Page-Cursor").is_some());
        let next = header(&response, "Next-Page-Cursor").map(str::to_owned);
        assert_eq!(header(&response, "Next-Page").map(str::to_owned), next);
        pages.push(json(response).await);
        match next {
            Some(cursor) => uri = format!("{base}&cursor={cursor}"),
            None => break,
        }
    }

    assert_eq!(pages.len(), expected.len().div_ceil(4));
    assert!(
        pages[..pages.len() - 1]
            .iter()
            .all(|p| p.as_array().unwrap().len() == 4)
    );
    let served: Vec<Value> = pages
        .into_iter()
        .flat_map(|p| p.as_array().unwrap().clone())
        .collect();
    assert_eq!(
        served,
        serde_json::to_value(&expected)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    );
}

#[tokio::test]
async fn a_cursor_keeps_the_time_of_the_first_page() {
    let first = get(
        app_at(epoch()),
        &format!(
            "/v2/events?carrierBookingReference=TEST-TR-SUCCEEDED&tidemarkEpoch={EPOCH}&limit=1"
        ),
    )
    .await;
    let cursor = header(&first, "Next-Page-Cursor").unwrap().to_owned();
    let all_then = json(
        get(
            app_at(epoch()),
            &format!("/v2/events?carrierBookingReference=TEST-TR-SUCCEEDED&tidemarkEpoch={EPOCH}"),
        )
        .await,
    )
    .await;

    // A month later, the second page still shows the voyage as it was.
    let second = get(
        app_at(epoch() + Duration::days(30)),
        &format!("/v2/events?carrierBookingReference=TEST-TR-SUCCEEDED&tidemarkEpoch={EPOCH}&limit=1&cursor={cursor}"),
    )
    .await;

    assert_eq!(json(second).await[0], all_then[1]);
}

#[tokio::test]
async fn an_equipment_reference_narrows_a_shipment_down_to_one_container() {
    let voyage = sandbox().voyage("TEST-TR-SUCCEEDED", epoch()).unwrap();
    let container = voyage.containers()[0].number.as_str().to_owned();

    let response = get(
        app_at(epoch() + Duration::days(60)),
        &format!("/v2/events?transportDocumentReference=TEST-TR-SUCCEEDED&equipmentReference={container}&tidemarkEpoch={EPOCH}&limit=1000"),
    )
    .await;

    assert_eq!(response.status(), StatusCode::OK);
    let events = json(response).await;
    let events = events.as_array().unwrap();
    assert!(events.iter().any(|e| e["eventType"] == "TRANSPORT"));
    assert!(
        events
            .iter()
            .filter(|e| e["eventType"] == "EQUIPMENT")
            .all(|e| e["equipmentReference"] == container.as_str())
    );
}

#[tokio::test]
async fn a_query_without_a_reference_is_a_bad_request_with_a_dcsa_error_body() {
    let response = get(app_at(epoch()), "/v2/events?limit=10").await;

    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(header(&response, "API-Version"), Some("2.2.0"));
    let body = json(response).await;
    assert_eq!(body["statusCode"], 400);
    assert_eq!(body["httpMethod"], "GET");
    assert_eq!(body["requestUri"], "/v2/events?limit=10");
    assert_eq!(body["errors"][0]["reason"], "invalidQuery");
}

#[tokio::test]
async fn malformed_limits_cursors_and_epochs_are_bad_requests() {
    for query in [
        "limit=0",
        "limit=ten",
        "cursor=%21%21",
        "cursor=bm9wZQ",
        "tidemarkEpoch=yesterday",
    ] {
        let response = get(
            app_at(epoch()),
            &format!("/v2/events?transportDocumentReference=TEST-TR-SUCCEEDED&{query}"),
        )
        .await;

        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{query}");
    }
}

#[tokio::test]
async fn unknown_numbers_are_not_found_with_a_dcsa_error_body() {
    for query in [
        "transportDocumentReference=TEST-TR-FAILED",
        "carrierBookingReference=MAEU123456789",
        "equipmentReference=TDMU1234565",
        "transportDocumentReference=TEST-TR-SUCCEEDED&carrierBookingReference=TEST-OTHER",
        "transportDocumentReference=TEST-TR-SUCCEEDED&equipmentReference=MSCU1234566",
    ] {
        let response = get(app_at(epoch()), &format!("/v2/events?{query}")).await;

        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{query}");
        assert_eq!(json(response).await["errors"][0]["reason"], "notFound");
    }
}

#[tokio::test]
async fn without_an_epoch_the_voyage_starts_from_the_current_utc_day() {
    let now = epoch() + Duration::hours(5);
    let midnight = Utc.with_ymd_and_hms(2025, 6, 1, 0, 0, 0).unwrap();
    let expected = sandbox()
        .voyage("TEST-TR-SUCCEEDED", midnight)
        .unwrap()
        .events_until(now);

    let response = get(
        app_at(now),
        "/v2/events?transportDocumentReference=TEST-TR-SUCCEEDED&limit=1000",
    )
    .await;

    assert_eq!(
        json(response).await,
        serde_json::to_value(&expected).unwrap()
    );
}

#[tokio::test]
async fn the_3_0_events_are_served_ten_a_page_linked_by_a_relative_next_page() {
    let now = epoch() + Duration::days(40);
    let expected: Vec<String> = sandbox()
        .voyage("TEST-TR-SUCCEEDED", epoch())
        .unwrap()
        .events_until(now)
        .iter()
        .map(|event| event.event_id.to_string())
        .collect();

    let mut ids = Vec::new();
    let mut uri = format!(
        "/v3/events?documentReference=TEST-TR-SUCCEEDED&documentTypeCodes=TRD&tidemarkEpoch={EPOCH}"
    );
    let mut pages = 0;
    loop {
        let response = get(app_at(now), &uri).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(header(&response, "API-Version"), Some("3.0.0"));
        let next = header(&response, "Next-Page").map(str::to_owned);
        let page = json(response).await;
        let events = page["events"].as_array().expect("an events list");
        assert!(events.len() <= 10);
        for event in events {
            assert!(event["eventClassification"]["eventTypeCode"].is_string());
            ids.push(event["eventID"].as_str().expect("an id").to_owned());
        }
        pages += 1;
        match next {
            Some(link) => {
                assert!(link.starts_with("/v3/events?"), "{link}");
                assert!(
                    link.contains("documentReference=TEST-TR-SUCCEEDED"),
                    "{link}"
                );
                uri = link;
            }
            None => break,
        }
    }

    assert!(pages > 1);
    assert_eq!(ids, expected);
}

#[tokio::test]
async fn a_3_0_booking_finds_the_same_voyage_and_other_document_types_find_none() {
    let now = epoch() + Duration::days(3);
    let query = |codes: &str| {
        format!(
            "/v3/events?documentReference=TEST-TR-SUCCEEDED&documentTypeCodes={codes}&tidemarkEpoch={EPOCH}"
        )
    };

    let by_bill = json(get(app_at(now), &query("TRD")).await).await;
    let by_booking = json(get(app_at(now), &query("BKG")).await).await;
    let by_instruction = get(app_at(now), &query("SHI")).await;

    assert_eq!(by_bill, by_booking);
    // 3.0 answers what it does not know with no events, not a 404.
    assert_eq!(by_instruction.status(), StatusCode::OK);
    assert_eq!(header(&by_instruction, "API-Version"), Some("3.0.0"));
    assert_eq!(json(by_instruction).await["events"], serde_json::json!([]));
}
