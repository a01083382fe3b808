//! What a poll keeps of a real line's answer, end to end against a mock DCSA 2.2 gateway
//! that refuses any parameter DCSA does not define: events naming another bill of lading are
//! never attached, a bill of lading answered with vessel events alone is tracked with its
//! ETA, and a number is sent exactly as the user wrote it.

use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::helpers::{Backend, TestApp};

/// Declares each `async fn(Backend)` as a test on SQLite and on PostgreSQL.
macro_rules! on_both {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $case() {
                    super::$case($crate::helpers::Backend::Sqlite).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $case() {
                    super::$case($crate::helpers::Backend::Postgres).await;
                }
            )*
        }
    };
}

on_both!(
    events_naming_another_bill_of_lading_are_never_attached,
    a_bill_of_lading_answered_with_vessel_events_alone_is_tracked_with_its_eta,
    a_bill_of_lading_is_asked_for_as_the_user_wrote_it,
);

/// Answers `body` for a query by `transportDocumentReference` alone; 400 for any other
/// parameter, as a gateway that validates its parameters does.
struct Strict2_2 {
    body: Value,
}

impl Respond for Strict2_2 {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let known = [
            "transportDocumentReference",
            "carrierBookingReference",
            "equipmentReference",
            "limit",
            "cursor",
        ];
        match request
            .url
            .query_pairs()
            .find(|(name, _)| !known.contains(&name.as_ref()))
        {
            Some((name, _)) => ResponseTemplate::new(400)
                .set_body_json(json!({"errors": [{"message": format!("unknown {name}")}]})),
            None => ResponseTemplate::new(200).set_body_json(&self.body),
        }
    }
}

async fn gateway(body: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/tnt/v2/events"))
        .respond_with(Strict2_2 { body })
        .mount(&server)
        .await;
    server
}

async fn app_for(backend: Backend, server: &MockServer) -> Option<TestApp> {
    let base = format!("{}/tnt", server.uri());
    TestApp::with_configured_carriers(
        backend,
        &[
            ("carriers.KMTU.base_url", &base),
            ("carriers.KMTU.auth_header", "X-Key"),
            ("carriers.KMTU.auth_value", "k"),
        ],
    )
    .await
}

async fn track_bill(app: &TestApp, number: &str) -> (Value, Option<Value>) {
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": number, "scac": "KMTU"
            }}}),
        )
        .await;
    assert_eq!(response.status, 201, "{}", response.json());
    let id = response.json()["data"]["id"].as_str().unwrap().to_owned();
    app.run_pending_jobs().await;
    let request = app.get(&format!("/v2/tracking_requests/{id}")).await.json()["data"].clone();
    let shipment = match request["relationships"]["tracked_object"]["data"]["id"].as_str() {
        Some(shipment) => {
            Some(app.get(&format!("/v2/shipments/{shipment}")).await.json()["data"].clone())
        }
        None => None,
    };
    (request, shipment)
}

/// A laden load at Busan onto KMTC's vessel, naming the bill of lading `bill`.
fn load_for(id: &str, bill: &str, container: &str) -> Value {
    json!({
        "eventID": id,
        "eventType": "EQUIPMENT",
        "eventClassifierCode": "ACT",
        "eventDateTime": "2026-02-20T08:30:00Z",
        "equipmentEventTypeCode": "LOAD",
        "equipmentReference": container,
        "emptyIndicatorCode": "LADEN",
        "documentReferences": [{"documentReferenceType": "TRD", "documentReferenceValue": bill}],
        "transportCall": {
            "transportCallID": "tc-busan",
            "UNLocationCode": "KRPUS",
            "modeOfTransport": "VESSEL",
            "vessel": {"vesselIMONumber": "9321483", "vesselName": "KMTC SEOUL"}
        }
    })
}

/// The vessel's estimated arrival at Los Angeles, naming no document.
fn eta_at_los_angeles() -> Value {
    json!({
        "eventID": "eta-lax",
        "eventType": "TRANSPORT",
        "eventClassifierCode": "EST",
        "eventDateTime": "2026-03-10T14:00:00Z",
        "transportEventTypeCode": "ARRI",
        "transportCall": {
            "transportCallID": "tc-lax",
            "UNLocationCode": "USLAX",
            "modeOfTransport": "VESSEL",
            "vessel": {"vesselIMONumber": "9321483", "vesselName": "KMTC SEOUL"},
            "importVoyageNumber": "2603E"
        }
    })
}

async fn events_naming_another_bill_of_lading_are_never_attached(backend: Backend) {
    let server = gateway(json!([
        load_for("mine", "KMTUPUS123", "KMTU1234565"),
        load_for("theirs", "KMTUPUS999", "TGHU7654328"),
        eta_at_los_angeles(),
    ]))
    .await;
    let Some(app) = app_for(backend, &server).await else {
        return;
    };

    let (request, shipment) = track_bill(&app, "KMTUPUS123").await;

    assert_eq!(request["attributes"]["status"], "created", "{request}");
    let shipment = shipment.expect("a shipment");
    let containers = shipment["relationships"]["containers"]["data"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(containers.len(), 1, "{shipment}");
    let container = app
        .get(&format!(
            "/v2/containers/{}",
            containers[0]["id"].as_str().unwrap()
        ))
        .await
        .json();
    assert_eq!(container["data"]["attributes"]["number"], "KMTU1234565");
}

async fn a_bill_of_lading_answered_with_vessel_events_alone_is_tracked_with_its_eta(
    backend: Backend,
) {
    let server = gateway(json!([eta_at_los_angeles()])).await;
    let Some(app) = app_for(backend, &server).await else {
        return;
    };

    let (request, shipment) = track_bill(&app, "KMTUPUS123").await;

    assert_eq!(request["attributes"]["status"], "created", "{request}");
    let attributes = shipment.expect("a shipment")["attributes"].clone();
    assert_eq!(attributes["port_of_discharge_locode"], "USLAX");
    assert_eq!(attributes["pod_eta_at"], "2026-03-10T14:00:00Z");
    assert_eq!(attributes["pod_vessel_name"], "KMTC SEOUL");
    assert_eq!(attributes["pod_voyage_number"], "2603E");
}

async fn a_bill_of_lading_is_asked_for_as_the_user_wrote_it(backend: Backend) {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/tnt/v2/events"))
        .and(query_param("transportDocumentReference", "kmtuPus123abc"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([load_for(
            "mine",
            "kmtuPus123abc",
            "KMTU1234565"
        )])))
        .mount(&server)
        .await;
    let Some(app) = app_for(backend, &server).await else {
        return;
    };

    let (request, _) = track_bill(&app, " kmtuPus123abc ").await;

    assert_eq!(request["attributes"]["status"], "created", "{request}");
    assert_eq!(request["attributes"]["request_number"], "kmtuPus123abc");
}
