//! The DCSA T&T 3.0 connector against a strict mock carrier, and against the sandbox's
//! `/v3/events` over a socket.

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use serde_json::json;
use tidemark_carriers::dcsa::{DcsaAuth, DcsaClient};
use tidemark_carriers::dcsa3::Dcsa3Client;
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
    Dcsa3Client::new("ABCD", base, auth).expect("a valid configuration")
}

/// How the strict carrier links its second page.
#[derive(Clone, Copy)]
enum Paging {
    AbsoluteLink,
    RelativeLink,
    Cursor,
}

/// A T&T 3.0 carrier that answers only what the standard allows: `API-Version` 3, known
/// query parameters in the combinations it supports, `documentTypeCodes` with a
/// `documentReference`, and a cursor it issued. It serves two pages.
struct Strict {
    base: String,
    paging: Paging,
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
        if api_version != Some("3") {
            return Self::refuse(&format!("API-Version must be 3, got {api_version:?}"));
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
            let known = [
                "documentReference",
                "documentTypeCodes",
                "equipmentReference",
                "cursor",
                "limit",
            ];
            if !known.contains(&name.as_str()) {
                return Self::refuse(&format!("unknown query parameter {name}"));
            }
        }
        match (get("documentReference"), get("documentTypeCodes")) {
            (Some(_), Some("TRD" | "BKG")) | (None, None) => {}
            (Some(_), _) => return Self::refuse("documentTypeCodes must say TRD or BKG"),
            (None, Some(_)) => return Self::refuse("documentTypeCodes needs documentReference"),
        }
        if get("documentReference").is_none() && get("equipmentReference").is_none() {
            return Self::refuse("a documentReference or equipmentReference is required");
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

async fn strict_server(paging: Paging) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v3/events"))
        .respond_with(Strict {
            base: server.uri(),
            paging,
        })
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn both_pages_of_a_strict_carrier_are_fetched_by_bill_of_lading_booking_or_container() {
    for paging in [Paging::AbsoluteLink, Paging::RelativeLink, Paging::Cursor] {
        let server = strict_server(paging).await;
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
async fn the_query_and_the_major_api_version_are_what_the_standard_names() {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v3/events"))
        .and(header("API-Version", "3"))
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
        Some("documentReference=ABC709951&documentTypeCodes=BKG")
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
        (404, |e| matches!(e, CarrierError::NotFound)),
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
    assert!(matches!(failed, Err(CarrierError::NotFound)), "{failed:?}");
    server.abort();
}

#[tokio::test]
async fn a_3_0_answer_whose_events_cannot_be_read_is_unreadable_not_not_found() {
    let reefer = json!({
        "eventID": "reefer-1",
        "eventDateTime": "2026-01-20T12:30:00Z",
        "eventClassification": {
            "eventTypeCode": "REEFER",
            "eventClassifierCode": "ACT",
            "reeferEventTypeCode": "MEAS"
        }
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

    assert_eq!(snapshot.skipped.len(), 1, "{:?}", snapshot.skipped);
    let unreadable = snapshot.unreadable();
    assert!(
        matches!(unreadable, Some(CarrierError::UnexpectedPayload(_))),
        "{unreadable:?}"
    );
}
