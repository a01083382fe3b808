//! HMM's own gateway ("dcsaCargoTracking v1") against a strict mock: the events only at its
//! path, only with `x-Gateway-APIKey`, only with `carrierBookingReference` and
//! `equipmentReference` together and no other query parameter. The connector is built as
//! the server builds it, from the HDMU profile.

use std::sync::Arc;

use serde_json::json;
use tidemark_carriers::auth::Authenticator;
use tidemark_carriers::connector::{Credentials, Endpoint, connector};
use tidemark_carriers::hmm::{BOOKING_PARAM, DEFAULT_PATH, EQUIPMENT_PARAM};
use tidemark_carriers::profile::{Profiles, Protocol};
use tidemark_carriers::{Carrier, CarrierError, DcsaCode, ReferenceKind, TrackingQuery};
use tidemark_domain::SystemClock;
use url::Url;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// HMM's gateway, strictly, answering its portal example for booking SELM96466400.
struct StrictHmm;

impl Respond for StrictHmm {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        if request.method.as_str() != "GET" || request.url.path() != DEFAULT_PATH {
            return ResponseTemplate::new(404);
        }
        let key = request
            .headers
            .get("x-Gateway-APIKey")
            .and_then(|v| v.to_str().ok());
        if key != Some("hmm-key") {
            return ResponseTemplate::new(401);
        }
        let query: Vec<(String, String)> = request.url.query_pairs().into_owned().collect();
        let known = |name: &str| name == BOOKING_PARAM || name == EQUIPMENT_PARAM;
        let has = |name: &str| query.iter().any(|(n, _)| n == name);
        if query.iter().any(|(name, _)| !known(name))
            || !has(BOOKING_PARAM)
            || !has(EQUIPMENT_PARAM)
        {
            return ResponseTemplate::new(400);
        }
        let asked = query
            .iter()
            .any(|(name, value)| name == BOOKING_PARAM && value == "SELM96466400");
        if !asked {
            return ResponseTemplate::new(200).set_body_json(json!([]));
        }
        ResponseTemplate::new(200).set_body_json(json!({
            "shipment": {"carrierBookingReference": "SELM96466400"},
            "transport": {"loadTransportCallId": "C1"},
            "equipment": {"ISOEquipmentCode": "45G1"},
            "equipmentEvent": [{
                "eventID": "E1", "eventType": "Equipment", "eventClassifierCode": "ACT",
                "eventDateTime": "2021-01-14T16:43:00+09:00", "equipmentEventTypeCode": "GTIN",
                "emptyIndicatorCode": "Laden", "eventLocation": "KRPUS"
            }],
            "transportCall": [{"transportCallID": "C1", "UNLocationCode": "KRPUS"}]
        }))
    }
}

async fn gateway() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(StrictHmm)
        .mount(&server)
        .await;
    server
}

/// The HDMU connector at the mock, with the profile's events path.
fn hmm(server: &MockServer, key: Option<&str>) -> Arc<dyn Carrier> {
    let (_, line) = Profiles::embedded()
        .line_api("HDMU")
        .expect("HMM has a profile");
    let auth = match key {
        Some(key) => Authenticator::headers(vec![("x-Gateway-APIKey".to_owned(), key.to_owned())])
            .expect("a valid header"),
        None => Authenticator::none(),
    };
    connector(
        "HDMU",
        line.protocol(),
        Endpoint {
            base_url: Url::parse(&server.uri()).expect("a URL"),
            events_path: line.events_path.as_ref().and_then(|p| p.value.clone()),
        },
        Credentials::Auth(auth),
        Arc::new(SystemClock),
    )
    .expect("a valid configuration")
}

fn query(kind: ReferenceKind, number: &str) -> TrackingQuery {
    TrackingQuery {
        reference_kind: kind,
        reference: number.to_owned(),
        sandbox_epoch: None,
    }
}

#[test]
fn hmms_profile_selects_its_own_adapter_at_its_gateways_path() {
    let (_, line) = Profiles::embedded().line_api("HDMU").unwrap();

    assert_eq!(line.protocol(), Protocol::Hmm);
    assert_eq!(
        line.events_path.as_ref().and_then(|p| p.value.as_deref()),
        Some(DEFAULT_PATH)
    );
}

#[tokio::test]
async fn a_booking_is_asked_with_the_container_parameter_beside_it_and_read() {
    let server = gateway().await;

    let snapshot = hmm(&server, Some("hmm-key"))
        .fetch(&query(ReferenceKind::Booking, "SELM96466400"))
        .await
        .unwrap();

    assert_eq!(snapshot.events.len(), 1);
    assert_eq!(snapshot.events[0].dcsa_code, DcsaCode::Gtin);
    let asked = server.received_requests().await.unwrap();
    let query: Vec<(String, String)> = asked[0].url.query_pairs().into_owned().collect();
    assert_eq!(
        query,
        [
            (BOOKING_PARAM.to_owned(), "SELM96466400".to_owned()),
            (EQUIPMENT_PARAM.to_owned(), String::new()),
        ]
    );
}

#[tokio::test]
async fn without_the_gateway_key_hmm_refuses_the_credentials() {
    let server = gateway().await;

    let error = hmm(&server, None)
        .fetch(&query(ReferenceKind::Booking, "SELM96466400"))
        .await
        .unwrap_err();

    assert!(
        matches!(error, CarrierError::CredentialsRefused(_)),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_wrong_gateway_key_is_refused_credentials() {
    let server = gateway().await;

    let error = hmm(&server, Some("not-it"))
        .fetch(&query(ReferenceKind::Booking, "SELM96466400"))
        .await
        .unwrap_err();

    assert!(
        matches!(error, CarrierError::CredentialsRefused(_)),
        "{error:?}"
    );
}

#[tokio::test]
async fn no_query_parameter_the_gateway_does_not_know_is_sent() {
    let server = gateway().await;

    hmm(&server, Some("hmm-key"))
        .fetch(&query(ReferenceKind::Equipment, "HMMU1234567"))
        .await
        .unwrap();

    let asked = server.received_requests().await.unwrap();
    assert!(
        asked[0]
            .url
            .query_pairs()
            .all(|(name, _)| name == BOOKING_PARAM || name == EQUIPMENT_PARAM)
    );
}

#[tokio::test]
async fn a_bill_of_lading_is_not_asked_for_since_hmm_has_no_such_lookup() {
    let server = gateway().await;

    let error = hmm(&server, Some("hmm-key"))
        .fetch(&query(ReferenceKind::BillOfLading, "HDMUSELM96466400"))
        .await
        .unwrap_err();

    assert!(matches!(error, CarrierError::NotFound), "{error:?}");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_answer_for_another_booking_is_not_attached() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::path(DEFAULT_PATH))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "shipment": {"carrierBookingReference": "OTHER0000001"},
            "shipmentEvent": [{"eventID": "S1", "eventClassifierCode": "ACT",
                "eventDateTime": "2020-11-13T18:07:22+09:00", "shipmentEventTypeCode": "RECE"}]
        })))
        .mount(&server)
        .await;

    let snapshot = hmm(&server, Some("hmm-key"))
        .fetch(&query(ReferenceKind::Booking, "SELM96466400"))
        .await
        .unwrap();

    assert!(snapshot.events.is_empty());
    assert_eq!(snapshot.skipped.len(), 1);
}
