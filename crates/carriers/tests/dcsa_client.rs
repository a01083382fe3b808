//! The DCSA T&T 2.2 connector against a mock carrier, and against the sandbox over a socket.

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use serde_json::json;
use tidemark_carriers::dcsa::{DcsaAuth, DcsaClient};
use tidemark_carriers::sandbox::{Sandbox, builtin_ports, router};
use tidemark_carriers::{
    Carrier, CarrierError, CarrierSnapshot, Classifier, ReferenceKind, TrackingQuery,
};
use tidemark_domain::MockClock;
use url::Url;
use wiremock::matchers::{
    body_string_contains, header, method, path, query_param, query_param_is_missing,
};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn event(id: &str) -> serde_json::Value {
    json!({
        "eventID": id,
        "eventCreatedDateTime": "2024-03-01T10:00:00Z",
        "eventType": "TRANSPORT",
        "eventClassifierCode": "ACT",
        "eventDateTime": "2024-03-01T08:30:00Z",
        "transportEventTypeCode": "DEPA",
        "transportCall": {
            "transportCallID": "tc-1",
            "UNLocationCode": "CNSHA",
            "modeOfTransport": "VESSEL",
            "vessel": {"vesselIMONumber": "9321483", "vesselName": "King of the Seas"}
        }
    })
}

/// What the client makes of `answer` to the events of bill of lading BL1.
async fn fetched_from(answer: ResponseTemplate) -> Result<CarrierSnapshot, CarrierError> {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v2/events"))
        .respond_with(answer)
        .mount(&server)
        .await;
    client(&server, DcsaAuth::None)
        .fetch(&bill_of_lading("BL1"))
        .await
}

fn bill_of_lading(number: &str) -> TrackingQuery {
    TrackingQuery {
        reference_kind: ReferenceKind::BillOfLading,
        reference: number.to_owned(),
        sandbox_epoch: None,
    }
}

fn client(server: &MockServer, auth: DcsaAuth) -> DcsaClient {
    let base = Url::parse(&format!("{}/tnt", server.uri())).expect("a valid URL");
    DcsaClient::new("ABCD", base, auth).expect("a valid configuration")
}

#[tokio::test]
async fn the_reference_and_the_api_version_are_sent() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/tnt/v2/events"))
        .and(query_param("carrierBookingReference", "BKG123"))
        .and(query_param_is_missing("tidemarkEpoch"))
        .and(header("API-Version", "2.2.0"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([event("e-1")])))
        .expect(1)
        .mount(&server)
        .await;
    let query = TrackingQuery {
        reference_kind: ReferenceKind::Booking,
        reference: "BKG123".to_owned(),
        sandbox_epoch: Some(Utc.with_ymd_and_hms(2025, 6, 1, 9, 30, 0).unwrap()),
    };

    let snapshot = client(&server, DcsaAuth::None).fetch(&query).await.unwrap();

    assert_eq!(snapshot.events.len(), 1);
    assert_eq!(snapshot.events[0].event_id.as_deref(), Some("e-1"));
}

#[tokio::test]
async fn a_real_line_is_never_sent_the_sandbox_epoch() {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v2/events"))
        .and(query_param_is_missing("tidemarkEpoch"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([event("e-1")])))
        .expect(2)
        .mount(&server)
        .await;
    let client = client(&server, DcsaAuth::None);
    let with_epoch = TrackingQuery {
        sandbox_epoch: Some(Utc.with_ymd_and_hms(2025, 6, 1, 9, 30, 0).unwrap()),
        ..bill_of_lading("BL1")
    };

    let first = client.fetch(&with_epoch).await;
    let second = client.fetch(&bill_of_lading("BL1")).await;

    assert!(first.is_ok() && second.is_ok(), "{first:?} {second:?}");
    let requests = server.received_requests().await.unwrap();
    assert!(
        requests
            .iter()
            .all(|r| !r.url.as_str().contains("tidemarkEpoch")),
        "{requests:?}"
    );
}

#[tokio::test]
async fn the_sandbox_connector_sends_the_epoch() {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v2/events"))
        .and(query_param(
            "transportDocumentReference",
            "TEST-TR-SUCCEEDED",
        ))
        .and(query_param("tidemarkEpoch", "2025-06-01T09:30:00Z"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([event("e-1")])))
        .expect(1)
        .mount(&server)
        .await;
    let base = Url::parse(&format!("{}/tnt", server.uri())).unwrap();
    let sandbox = DcsaClient::for_sandbox(base).unwrap();
    let query = TrackingQuery {
        sandbox_epoch: Some(Utc.with_ymd_and_hms(2025, 6, 1, 9, 30, 0).unwrap()),
        ..bill_of_lading("TEST-TR-SUCCEEDED")
    };

    let snapshot = sandbox.fetch(&query).await.unwrap();

    assert_eq!(sandbox.scac(), "TEST");
    assert_eq!(snapshot.events.len(), 1);
}

#[tokio::test]
async fn pages_linked_by_next_page_cursor_are_merged() {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v2/events"))
        .and(query_param("equipmentReference", "MSCU1234566"))
        .and(query_param_is_missing("cursor"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("Next-Page-Cursor", "page-2")
                .set_body_json(json!([event("e-1"), event("e-2")])),
        )
        .mount(&server)
        .await;
    Mock::given(path("/tnt/v2/events"))
        .and(query_param("equipmentReference", "MSCU1234566"))
        .and(query_param("cursor", "page-2"))
        .respond_with(
            // 2.2's header, as a link.
            ResponseTemplate::new(200)
                .insert_header("Next-Page", "/tnt/v2/events?cursor=page-3")
                .set_body_json(json!([event("e-3"), "garbage"])),
        )
        .mount(&server)
        .await;
    Mock::given(path("/tnt/v2/events"))
        .and(query_param("cursor", "page-3"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([event("e-4")])))
        .mount(&server)
        .await;
    let query = TrackingQuery {
        reference_kind: ReferenceKind::Equipment,
        reference: "MSCU1234566".to_owned(),
        sandbox_epoch: None,
    };

    let snapshot = client(&server, DcsaAuth::None).fetch(&query).await.unwrap();

    let ids: Vec<_> = snapshot
        .events
        .iter()
        .map(|e| e.event_id.as_deref().unwrap())
        .collect();
    assert_eq!(ids, ["e-1", "e-2", "e-3", "e-4"]);
    assert_eq!(
        snapshot.skipped,
        ["page 2, event 1: expected an object, got a string"]
    );
}

#[tokio::test]
async fn a_cursor_that_repeats_is_an_unexpected_payload() {
    let result = fetched_from(
        ResponseTemplate::new(200)
            .insert_header("Next-Page-Cursor", "again")
            .set_body_json(json!([])),
    )
    .await;

    assert!(
        matches!(result, Err(CarrierError::UnexpectedPayload(_))),
        "{result:?}"
    );
}

#[tokio::test]
async fn not_found_is_not_found() {
    let result =
        fetched_from(ResponseTemplate::new(404).set_body_json(json!({"statusCode": 404}))).await;

    assert!(matches!(result, Err(CarrierError::NotFound)), "{result:?}");
}

#[tokio::test]
async fn too_many_requests_is_rate_limited_for_the_retry_after_seconds() {
    let result = fetched_from(ResponseTemplate::new(429).insert_header("Retry-After", "120")).await;

    let Err(CarrierError::RateLimited { retry_after }) = result else {
        panic!("expected RateLimited, got {result:?}");
    };
    assert_eq!(retry_after, Some(Duration::from_secs(120)));
}

#[tokio::test]
async fn server_errors_and_refused_connections_are_unavailable() {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v2/events"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&server)
        .await;
    // Bind a port, then free it, so nothing listens there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let nowhere = DcsaClient::new(
        "ABCD",
        Url::parse(&format!("http://{closed}/")).unwrap(),
        DcsaAuth::None,
    )
    .unwrap();

    let unavailable = client(&server, DcsaAuth::None)
        .fetch(&bill_of_lading("BL1"))
        .await;
    let refused = nowhere.fetch(&bill_of_lading("BL1")).await;

    assert!(
        matches!(unavailable, Err(CarrierError::Unavailable(_))),
        "{unavailable:?}"
    );
    assert!(
        matches!(refused, Err(CarrierError::Unavailable(_))),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_body_that_is_not_events_is_an_unexpected_payload() {
    let result =
        fetched_from(ResponseTemplate::new(200).set_body_string("<html>maintenance</html>")).await;

    assert!(
        matches!(result, Err(CarrierError::UnexpectedPayload(_))),
        "{result:?}"
    );
}

#[tokio::test]
async fn an_answer_whose_events_cannot_be_read_is_unreadable_not_not_found() {
    let iot = json!({
        "eventID": "iot-1",
        "eventType": "IOT",
        "eventClassifierCode": "ACT",
        "eventDateTime": "2024-03-01T08:30:00Z",
        "iotEventTypeCode": "DETC"
    });
    let reefer = json!({
        "eventID": "reefer-1",
        "eventType": "REEFER",
        "eventClassifierCode": "ACT",
        "eventDateTime": "2024-03-01T08:30:00Z",
        "reeferEventTypeCode": "MEAS"
    });
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v2/events"))
        .and(query_param("equipmentReference", "MSCU1234566"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([iot, reefer])))
        .mount(&server)
        .await;
    let query = TrackingQuery {
        reference_kind: ReferenceKind::Equipment,
        reference: "MSCU1234566".to_owned(),
        sandbox_epoch: None,
    };

    let snapshot = client(&server, DcsaAuth::None).fetch(&query).await.unwrap();

    // The skipped events stay for drift diagnostics; the answer is not "not found".
    assert_eq!(snapshot.skipped.len(), 2, "{:?}", snapshot.skipped);
    let unreadable = snapshot.unreadable();
    let Some(CarrierError::UnexpectedPayload(message)) = unreadable else {
        panic!("expected UnexpectedPayload, got {unreadable:?}");
    };
    assert!(
        message.contains("none of the carrier's 2 events"),
        "{message}"
    );
}

#[tokio::test]
async fn a_wrapper_object_around_the_events_is_an_unexpected_payload() {
    let result =
        fetched_from(ResponseTemplate::new(200).set_body_json(json!({"events": [event("e-1")]})))
            .await;

    assert!(
        matches!(result, Err(CarrierError::UnexpectedPayload(_))),
        "{result:?}"
    );
}

#[tokio::test]
async fn an_empty_list_of_events_is_an_empty_snapshot() {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v2/events"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .mount(&server)
        .await;

    let snapshot = client(&server, DcsaAuth::None)
        .fetch(&bill_of_lading("BL1"))
        .await
        .unwrap();

    assert!(snapshot.events.is_empty() && snapshot.skipped.is_empty());
    assert!(snapshot.unreadable().is_none());
}

#[tokio::test]
async fn header_auth_is_sent_with_every_request() {
    let server = MockServer::start().await;
    Mock::given(path("/tnt/v2/events"))
        .and(header("Consumer-Key", "secret-key"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .expect(1)
        .mount(&server)
        .await;
    let auth = DcsaAuth::Header {
        name: "Consumer-Key".to_owned(),
        value: "secret-key".to_owned(),
    };

    let result = client(&server, auth).fetch(&bill_of_lading("BL1")).await;

    assert!(result.is_ok(), "{result:?}");
}

#[tokio::test]
async fn an_oauth2_token_is_fetched_once_and_reused_until_it_expires() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/oauth/token"))
        // "me:pw" in HTTP Basic.
        .and(header("Authorization", "Basic bWU6cHc="))
        .and(body_string_contains("grant_type=client_credentials"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "access_token": "token-1", "token_type": "Bearer", "expires_in": 3600
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(path("/tnt/v2/events"))
        .and(header("Authorization", "Bearer token-1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([event("e-1")])))
        .expect(2)
        .mount(&server)
        .await;
    let auth = DcsaAuth::OAuth2ClientCredentials {
        token_url: Url::parse(&format!("{}/oauth/token", server.uri())).unwrap(),
        client_id: "me".to_owned(),
        client_secret: "pw".to_owned(),
        scope: None,
    };
    let client = client(&server, auth);

    let first = client.fetch(&bill_of_lading("BL1")).await;
    let second = client.fetch(&bill_of_lading("BL1")).await;

    assert!(first.is_ok() && second.is_ok(), "{first:?} {second:?}");
}

#[tokio::test]
async fn refused_oauth2_credentials_are_refused_credentials() {
    let server = MockServer::start().await;
    Mock::given(path("/oauth/token"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&server)
        .await;
    let auth = DcsaAuth::OAuth2ClientCredentials {
        token_url: Url::parse(&format!("{}/oauth/token", server.uri())).unwrap(),
        client_id: "me".to_owned(),
        client_secret: "wrong".to_owned(),
        scope: Some("tnt".to_owned()),
    };

    let result = client(&server, auth).fetch(&bill_of_lading("BL1")).await;

    assert!(
        matches!(result, Err(CarrierError::CredentialsRefused(_))),
        "{result:?}"
    );
}

#[tokio::test]
async fn the_sandbox_served_over_a_socket_is_fetched_through_the_dcsa_client() {
    let epoch = Utc.with_ymd_and_hms(2025, 6, 1, 9, 30, 0).unwrap();
    let now = epoch + chrono::Duration::days(3);
    let sandbox = Arc::new(Sandbox::new(builtin_ports()));
    let app = router(sandbox.clone(), Arc::new(MockClock::new(now)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let client =
        DcsaClient::for_sandbox(Url::parse(&format!("http://{address}")).unwrap()).unwrap();
    let query = TrackingQuery {
        sandbox_epoch: Some(epoch),
        ..bill_of_lading("TEST-TR-SUCCEEDED")
    };
    let expected = sandbox
        .voyage("TEST-TR-SUCCEEDED", epoch)
        .unwrap()
        .events_until(now);

    let snapshot = client.fetch(&query).await.unwrap();
    let failed = client.fetch(&bill_of_lading("TEST-TR-FAILED")).await;

    assert!(snapshot.skipped.is_empty(), "{:?}", snapshot.skipped);
    let ids: Vec<String> = snapshot
        .events
        .iter()
        .map(|e| e.event_id.clone().unwrap())
        .collect();
    let expected_ids: Vec<String> = expected.iter().map(|e| e.event_id.to_string()).collect();
    assert_eq!(ids, expected_ids);
    assert!(
        snapshot
            .events
            .iter()
            .any(|e| e.classifier == Classifier::Actual)
    );
    assert!(
        snapshot
            .events
            .iter()
            .any(|e| e.classifier == Classifier::Estimated)
    );
    assert!(matches!(failed, Err(CarrierError::NotFound)), "{failed:?}");
    server.abort();
}

#[tokio::test]
async fn a_401_or_403_from_the_events_endpoint_is_refused_credentials() {
    for status in [401, 403] {
        let server = MockServer::start().await;
        Mock::given(path("/tnt/v2/events"))
            .respond_with(ResponseTemplate::new(status))
            .mount(&server)
            .await;
        let auth = DcsaAuth::Header {
            name: "Consumer-Key".to_owned(),
            value: "revoked".to_owned(),
        };

        let result = client(&server, auth).fetch(&bill_of_lading("BL1")).await;

        assert!(
            matches!(result, Err(CarrierError::CredentialsRefused(_))),
            "{status}: {result:?}"
        );
    }
}
