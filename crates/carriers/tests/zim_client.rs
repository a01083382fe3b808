//! ZIM's DCSA Track & Trace gateway (its portal's "DCSA Track And Trace Sandbox v1"):
//! `GET /` under the server URL, that is the base URL itself, with an Azure APIM
//! subscription key. The connector is built as the server builds it, from the ZIMU
//! profile's `events_path`, against a strict mock of that gateway.

use std::sync::Arc;

use serde_json::json;
use tidemark_carriers::auth::Authenticator;
use tidemark_carriers::connector::{BASE_URL_ITSELF, Credentials, Endpoint, connector};
use tidemark_carriers::profile::{Profiles, Protocol};
use tidemark_carriers::{Carrier, CarrierError, ReferenceKind, TrackingQuery};
use tidemark_domain::SystemClock;
use url::Url;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The query parameters ZIM's OpenAPI lists for `GET /`.
const ZIM_PARAMS: &[&str] = &[
    "eventType",
    "shipmentEventTypeCode",
    "documentTypeCode",
    "carrierBookingReference",
    "transportDocumentReference",
    "transportEventTypeCode",
    "transportCallID",
    "vesselIMONumber",
    "exportVoyageNumber",
    "carrierServiceCode",
    "UNLocationCode",
    "equipmentEventTypeCode",
    "equipmentReference",
    "eventCreatedDateTime",
    "limit",
    "cursor",
    "sort",
];

const SERVER_PATH: &str = "/trackAndTrace-sandbox/v1";

/// ZIM's gateway, strictly: the events only at the server URL itself, only with the
/// subscription key, and no query parameter its OpenAPI does not list.
struct StrictZim;

impl Respond for StrictZim {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let at_base = request.url.path().trim_end_matches('/') == SERVER_PATH;
        if request.method.as_str() != "GET" || !at_base {
            return ResponseTemplate::new(404);
        }
        let key = request
            .headers
            .get("Ocp-Apim-Subscription-Key")
            .and_then(|v| v.to_str().ok());
        if key != Some("zim-key") {
            return ResponseTemplate::new(401);
        }
        let unknown = request.url.query_pairs().any(|(name, _)| {
            let name = name.split(':').next().unwrap_or_default();
            !ZIM_PARAMS.contains(&name)
        });
        if unknown {
            return ResponseTemplate::new(400);
        }
        ResponseTemplate::new(200).set_body_json(json!([{
            "eventID": "z-1",
            "eventType": "EQUIPMENT",
            "eventClassifierCode": "ACT",
            "eventDateTime": "2020-04-02T17:22:00+08:00",
            "eventCreatedDateTime": "2020-04-02T17:30:00+08:00",
            "equipmentEventTypeCode": "LOAD",
            "equipmentReference": "ZIMU2505082",
            "emptyIndicatorCode": "LADEN",
            "eventLocation": {"UNLocationCode": "SGSIN"},
            "documentReferences": [{"documentReferenceType": "TRD", "documentReferenceValue": "ZIMUORF597101"}]
        }]))
    }
}

async fn gateway() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(StrictZim)
        .mount(&server)
        .await;
    server
}

fn zim(server: &MockServer, key: Option<&str>, events_path: Option<&str>) -> Arc<dyn Carrier> {
    let auth = match key {
        Some(key) => Authenticator::headers(vec![(
            "Ocp-Apim-Subscription-Key".to_owned(),
            key.to_owned(),
        )])
        .expect("a valid header"),
        None => Authenticator::none(),
    };
    connector(
        "ZIMU",
        Protocol::Dcsa22,
        Endpoint {
            base_url: Url::parse(&format!("{}{SERVER_PATH}", server.uri())).expect("a URL"),
            events_path: events_path.map(str::to_owned),
        },
        Credentials::Auth(auth),
        Arc::new(SystemClock),
    )
    .expect("a valid configuration")
}

fn bill_of_lading() -> TrackingQuery {
    TrackingQuery {
        reference_kind: ReferenceKind::BillOfLading,
        reference: "ZIMUORF597101".to_owned(),
        sandbox_epoch: None,
    }
}

#[test]
fn zims_profile_puts_the_events_at_the_base_url_itself() {
    let (_, line) = Profiles::embedded().line_api("ZIMU").unwrap();

    let path = line.events_path.as_ref().and_then(|p| p.value.as_deref());

    assert_eq!(path, Some(BASE_URL_ITSELF));
}

#[tokio::test]
async fn events_at_the_base_url_itself_are_asked_for_there() {
    let server = gateway().await;

    let snapshot = zim(&server, Some("zim-key"), Some(BASE_URL_ITSELF))
        .fetch(&bill_of_lading())
        .await
        .unwrap();

    assert_eq!(snapshot.events.len(), 1);
    let asked = server.received_requests().await.unwrap();
    assert_eq!(asked[0].url.path(), SERVER_PATH);
}

#[tokio::test]
async fn without_the_subscription_key_zim_refuses_the_credentials() {
    let server = gateway().await;

    let error = zim(&server, None, Some(BASE_URL_ITSELF))
        .fetch(&bill_of_lading())
        .await
        .unwrap_err();

    assert!(
        matches!(error, CarrierError::CredentialsRefused(_)),
        "{error:?}"
    );
}

#[tokio::test]
async fn dcsas_own_path_is_not_zims() {
    let server = gateway().await;

    let error = zim(&server, Some("zim-key"), None)
        .fetch(&bill_of_lading())
        .await
        .unwrap_err();

    assert!(matches!(error, CarrierError::NotFound), "{error:?}");
}

#[test]
fn the_base_url_itself_needs_a_base_url_with_a_path() {
    let built = connector(
        "ZIMU",
        Protocol::Dcsa22,
        Endpoint {
            base_url: Url::parse("https://apigw.zim.example/").unwrap(),
            events_path: Some(BASE_URL_ITSELF.to_owned()),
        },
        Credentials::Auth(Authenticator::none()),
        Arc::new(SystemClock),
    );

    let error = built.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("events_path"), "{error}");
}
