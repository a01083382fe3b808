//! The DCSA T&T 3.0 connector against a strict mock carrier, and against the sandbox's
//! `/v3/events` over a socket.

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use serde_json::json;
use tidemark_carriers::dcsa::{DcsaAuth, DcsaClient};
use tidemark_carriers::dcsa3::{Dcsa3Client, Dialect};
use tidemark_carriers::sandbox::{Sandbox, builtin_ports, router};
use tidemark_carriers::{Carrier, CarrierError, ReferenceKind, TrackingQuery};
use tidemark_domain::MockClock;
use url::Url;
use wiremock::matchers::{header, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn event(id: &str) -> serde_json::Value {
    json!({
        "eventID": id,
        "eventDateTime": "2026-01-20T12:30:00Z",
        "eventUpdatedDateTime": "2026-01-20T12:35:00Z",
        "eventLocation": {"UNLocationCode": "DEHAM", "facilityTypeCode": "POTE"},
        "eventClassification": {
            "eventTypeCode": "TRANSPORT",
            "eventClassifierCode": "ACT",
            "transportEventTypeCode": "ARRI"
        },
        "shipmentDetails": {"documentReference": {"typeCode": "TRD", "reference": "HHL71800000"}},
        "transportDetails": {"transportCall": {
            "modeOfTransport": "VESSEL",
            "vesselTransport": {"vesselIMONumber": "1234567", "vesselName": "Alpha"}
        }}
    })
}

fn query(kind: ReferenceKind, number: &str) -> TrackingQuery {
    TrackingQuery {
        reference_kind: kind,
        reference: number.to_owned(),
        sandbox_epoch: None,
    }
}

fn client(server: &MockServer, auth: DcsaAuth) -> Dcsa3Client {
    let base = Url::parse(&format!("{}/tnt", server.uri())).expect("a valid URL");
    // The mocks serve the Beta-1's and the sandbox's `/v3/events`; 3.0.0's own `/events`
    // is the default (`the_default_path_is_3_0_0s_events`).
    Dcsa3Client::new("ABCD", base, auth)
        .and_then(|client| client.at_path("/v3/events"))
        .expect("a valid configuration")
}

#[tokio::test]
async fn the_default_path_is_3_0_0s_events() {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/events"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"events": [event("e-1")]})))
        .expect(1)
        .mount(&server)
        .await;
    let base = Url::parse(&format!("{}/tnt", server.uri())).expect("a valid URL");

    let snapshot = Dcsa3Client::new("ABCD", base, DcsaAuth::None)
        .unwrap()
        .fetch(&query(ReferenceKind::Equipment, "APZU4812090"))
        .await
        .unwrap();

    assert_eq!(snapshot.events.len(), 1);
}

/// How the strict carrier links its second page.
#[derive(Clone, Copy)]
enum Paging {
    AbsoluteLink,
    RelativeLink,
    Cursor,
}

/// A T&T 3.0 carrier that answers only what its standard allows: the `API-Version` it
/// speaks, its own query parameters in the combinations it supports (3.0.0's
/// `transportDocumentReference`, `carrierBookingReference`, `equipmentReference`; Beta-1's
/// `documentTypeCodes` with a `documentReference`), and a cursor it issued. It serves two
/// pages.
struct Strict {
    base: String,
    paging: Paging,
    dialect: Dialect,
}

impl Strict {
    fn refuse(reason: &str) -> ResponseTemplate {
        ResponseTemplate::new(400).set_body_json(json!({
            "statusCode": 400,
            "errors": [{"reason": "invalidQuery", "message": reason}]
        }))
    }
}

impl Respond for Strict {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let api_version = request
            .headers
            .get("api-version")
            .and_then(|value| value.to_str().ok());
        let (version, known): (&str, &[&str]) = match self.dialect {
            Dialect::V3_0_0 => (
                "3.0.0",
                &[
                    "transportDocumentReference",
                    "carrierBookingReference",
                    "equipmentReference",
                    "eventTypes",
                    "eventUpdatedDateTimeMin",
                    "eventUpdatedDateTimeMax",
                    "cursor",
                    "limit",
                ],
            ),
            Dialect::Beta1 => (
                "3",
                &[
                    "documentReference",
                    "documentTypeCodes",
                    "equipmentReference",
                    "cursor",
                    "limit",
                ],
            ),
        };
        if api_version != Some(version) {
            return Self::refuse(&format!(
                "API-Version must be {version}, got {api_version:?}"
            ));
        }
        let pairs: Vec<(String, String)> = request
            .url
            .query_pairs()
            .map(|(name, value)| (name.into_owned(), value.into_owned()))
            .collect();
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.as_str())
        };
        for (name, _) in &pairs {
            if !known.contains(&name.as_str()) {
                return Self::refuse(&format!("unknown query parameter {name}"));
            }
        }
        match (get("documentReference"), get("documentTypeCodes")) {
            (Some(_), Some("TRD" | "BKG")) | (None, None) => {}
            (Some(_), _) => return Self::refuse("documentTypeCodes must say TRD or BKG"),
            (None, Some(_)) => return Self::refuse("documentTypeCodes needs documentReference"),
        }
        let asks_for_something = [
            "documentReference",
            "transportDocumentReference",
            "carrierBookingReference",
            "equipmentReference",
        ]
        .iter()
        .any(|name| get(name).is_some());
        if !asks_for_something {
            return Self::refuse("a document, booking or equipment reference is required");
        }
        match get("cursor") {
            None => {
                let first_query = request.url.query().unwrap_or_default();
                let response = ResponseTemplate::new(200)
                    .set_body_json(json!({"events": [event("e-1"), event("e-2")]}));
                match self.paging {
                    Paging::AbsoluteLink => response.insert_header(
                        "Next-Page",
                        format!("{}/tnt/v3/events?{first_query}&cursor=p2", self.base),
                    ),
                    Paging::RelativeLink => response.insert_header(
                        "Next-Page",
                        format!("/tnt/v3/events?{first_query}&cursor=p2"),
                    ),
                    Paging::Cursor => response.insert_header("Next-Page-Cursor", "p2"),
                }
            }
            Some("p2") => ResponseTemplate::new(200)
                .set_body_json(json!({"events": [event("e-3"), {"eventID": "bad"}]})),
            Some(other) => Self::refuse(&format!("unknown cursor {other}")),
        }
    }
}

async fn strict_server(paging: Paging, dialect: Dialect) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v3/events"))
        .respond_with(Strict {
            base: server.uri(),
            paging,
            dialect,
        })
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn both_pages_of_a_strict_carrier_are_fetched_by_bill_of_lading_booking_or_container() {
    for paging in [Paging::AbsoluteLink, Paging::RelativeLink, Paging::Cursor] {
        let server = strict_server(paging, Dialect::V3_0_0).await;
        for kind in [
            ReferenceKind::BillOfLading,
            ReferenceKind::Booking,
            ReferenceKind::Equipment,
        ] {
            let snapshot = client(&server, DcsaAuth::None)
                .fetch(&query(kind, "HHL71800000"))
                .await
                .unwrap_or_else(|e| panic!("{kind:?}: {e}"));

            let ids: Vec<_> = snapshot
                .events
                .iter()
                .map(|e| e.event_id.as_deref().unwrap_or_default())
                .collect();
            assert_eq!(ids, ["e-1", "e-2", "e-3"], "{kind:?}");
            assert_eq!(
                snapshot.skipped,
                ["page 2, event 1 (bad): eventClassification is missing"]
            );
        }
    }
}

#[tokio::test]
async fn a_strict_beta_1_carrier_is_asked_in_its_own_dialect() {
    let server = strict_server(Paging::Cursor, Dialect::Beta1).await;
    for kind in [
        ReferenceKind::BillOfLading,
        ReferenceKind::Booking,
        ReferenceKind::Equipment,
    ] {
        let beta = client(&server, DcsaAuth::None).speaking(Dialect::Beta1);
        let snapshot = beta
            .fetch(&query(kind, "HHL71800000"))
            .await
            .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(snapshot.events.len(), 3, "{kind:?}");
    }
    let in_3_0_0 = client(&server, DcsaAuth::None)
        .fetch(&query(ReferenceKind::BillOfLading, "HHL71800000"))
        .await;
    assert!(
        matches!(in_3_0_0, Err(CarrierError::UnexpectedPayload(_))),
        "{in_3_0_0:?}"
    );
}

#[tokio::test]
async fn the_query_and_the_full_api_version_are_what_3_0_0_names() {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v3/events"))
        .and(header("API-Version", "3.0.0"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"events": []})))
        .expect(1)
        .mount(&server)
        .await;
    let sent = TrackingQuery {
        sandbox_epoch: None,
        ..query(ReferenceKind::Booking, "ABC709951")
    };

    client(&server, DcsaAuth::None).fetch(&sent).await.unwrap();

    let requests = server.received_requests().await.unwrap_or_default();
    assert_eq!(
        requests[0].url.query(),
        Some("carrierBookingReference=ABC709951")
    );
}

#[tokio::test]
async fn a_next_page_on_another_host_is_never_called() {
    let elsewhere = MockServer::start().await;
    Mock::given(path("/v3/events"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"events": []})))
        .expect(0)
        .mount(&elsewhere)
        .await;
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v3/events"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header(
                    "Next-Page",
                    format!("{}/v3/events?cursor=x", elsewhere.uri()),
                )
                .set_body_json(json!({"events": [event("e-1")]})),
        )
        .mount(&server)
        .await;

    let result = client(&server, DcsaAuth::None)
        .fetch(&query(ReferenceKind::Equipment, "APZU4812090"))
        .await;

    assert!(
        matches!(&result, Err(CarrierError::UnexpectedPayload(message)) if message.contains("another host")),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_next_page_that_repeats_is_an_unexpected_payload() {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v3/events"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("Next-Page", "/tnt/v3/events?cursor=again")
                .set_body_json(json!({"events": []})),
        )
        .mount(&server)
        .await;

    let result = client(&server, DcsaAuth::None)
        .fetch(&query(ReferenceKind::Equipment, "APZU4812090"))
        .await;

    assert!(
        matches!(result, Err(CarrierError::UnexpectedPayload(_))),
        "{result:?}"
    );
}

#[tokio::test]
async fn http_answers_map_to_the_same_errors_as_2_2() {
    type Expected = fn(&CarrierError) -> bool;
    let cases: [(u16, Expected); 4] = [
        // 3.0.0 answers an unknown reference with 200 and no events: a 404 is a wrong path.
        (
            404,
            |e| matches!(e, CarrierError::UnexpectedPayload(m) if m.contains("events_path")),
        ),
        (401, |e| matches!(e, CarrierError::CredentialsRefused(_))),
        (503, |e| matches!(e, CarrierError::Unavailable(_))),
        (
            429,
            |e| matches!(e, CarrierError::RateLimited { retry_after } if *retry_after == Some(Duration::from_secs(7))),
        ),
    ];
    for (status, expected) in cases {
        let server = MockServer::start().await;
        Mock::given(path("/tnt/v3/events"))
            .respond_with(ResponseTemplate::new(status).insert_header("Retry-After", "7"))
            .mount(&server)
            .await;

        let result = client(&server, DcsaAuth::None)
            .fetch(&query(ReferenceKind::BillOfLading, "HHL71800000"))
            .await;

        assert!(result.as_ref().is_err_and(expected), "{status}: {result:?}");
    }
}

#[tokio::test]
async fn the_configured_credentials_go_with_every_page() {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v3/events"))
        .and(header("Consumer-Key", "k3y"))
        .respond_with(Strict {
            base: server.uri(),
            paging: Paging::RelativeLink,
            dialect: Dialect::V3_0_0,
        })
        .expect(2)
        .mount(&server)
        .await;
    let auth = DcsaAuth::Header {
        name: "Consumer-Key".to_owned(),
        value: "k3y".to_owned(),
    };

    let snapshot = client(&server, auth)
        .fetch(&query(ReferenceKind::BillOfLading, "HHL71800000"))
        .await
        .unwrap();

    assert_eq!(snapshot.events.len(), 3);
}

#[tokio::test]
async fn the_sandbox_serves_the_same_voyage_over_3_0_as_over_2_2_in_pages() {
    let epoch = Utc.with_ymd_and_hms(2025, 6, 1, 9, 30, 0).unwrap();
    let now = epoch + chrono::Duration::days(3);
    let sandbox = Arc::new(Sandbox::new(builtin_ports()));
    let app = router(sandbox.clone(), Arc::new(MockClock::new(now)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let base = Url::parse(&format!("http://{address}")).unwrap();
    let v3 = Dcsa3Client::for_sandbox(base.clone()).unwrap();
    let v2 = DcsaClient::for_sandbox(base).unwrap();
    let sent = TrackingQuery {
        sandbox_epoch: Some(epoch),
        ..query(ReferenceKind::BillOfLading, "TEST-TR-SUCCEEDED")
    };
    let events = sandbox
        .voyage("TEST-TR-SUCCEEDED", epoch)
        .unwrap()
        .events_until(now);

    let over_3_0 = v3.fetch(&sent).await.unwrap();
    let over_2_2 = v2.fetch(&sent).await.unwrap();
    let failed = v3
        .fetch(&query(ReferenceKind::BillOfLading, "TEST-TR-FAILED"))
        .await;

    assert!(events.len() > 10, "the voyage spans more than one 3.0 page");
    assert!(over_3_0.skipped.is_empty(), "{:?}", over_3_0.skipped);
    assert_eq!(over_3_0, over_2_2);
    assert!(
        failed
            .as_ref()
            .is_ok_and(|snapshot| snapshot.events.is_empty()),
        "{failed:?}"
    );
    server.abort();
}

#[tokio::test]
async fn a_3_0_answer_whose_events_cannot_be_read_is_unreadable_not_not_found() {
    let unknown_family = json!({
        "eventID": "weather-1",
        "eventDateTime": "2026-01-20T12:30:00Z",
        "eventClassification": {
            "eventTypeCode": "WEATHER",
            "eventClassifierCode": "ACT",
            "weatherEventTypeCode": "STRM"
        }
    });
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v3/events"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"events": [unknown_family]})))
        .mount(&server)
        .await;

    let snapshot = client(&server, DcsaAuth::None)
        .fetch(&query(ReferenceKind::Equipment, "MSCU1234566"))
        .await
        .unwrap();

    assert_eq!(snapshot.skipped.len(), 1, "{:?}", snapshot.skipped);
    let unreadable = snapshot.unreadable();
    assert!(
        matches!(unreadable, Some(CarrierError::UnexpectedPayload(_))),
        "{unreadable:?}"
    );
}

#[tokio::test]
async fn a_3_0_answer_of_reefer_events_only_is_read_about_its_container() {
    let reefer = json!({
        "eventID": "reefer-1",
        "eventDateTime": "2026-01-20T12:30:00Z",
        "eventClassification": {
            "eventTypeCode": "REEFER",
            "eventClassifierCode": "ACT",
            "reeferEventTypeCode": "MEAS"
        },
        "equipmentDetails": {"equipmentReference": "MSCU1234566"}
    });
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v3/events"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"events": [reefer]})))
        .mount(&server)
        .await;

    let snapshot = client(&server, DcsaAuth::None)
        .fetch(&query(ReferenceKind::Equipment, "MSCU1234566"))
        .await
        .unwrap();

    assert_eq!(snapshot.events.len(), 1, "{:?}", snapshot.skipped);
    assert_eq!(
        snapshot.events[0].equipment_reference.as_deref(),
        Some("MSCU1234566")
    );
    assert!(snapshot.unreadable().is_none());
}
