//! Carrier events linked to the reference terminals they happened at: a DCSA event whose
//! transport call names a terminal Tidemark knows (its SMDG `facilityCode` at that port, or
//! its name as `otherFacility`) relates its transport event and raw event to that terminal,
//! `include=terminal` puts the terminal in `included`, and webhooks carry the same.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::body::Bytes;
use axum::http::StatusCode;
use serde_json::{Value, json};
use tidemark_carriers::{Carrier, CarrierError, CarrierSnapshot, TrackingQuery};

use crate::console;
use crate::helpers::{Backend, TestApp};

/// Each case as a test on SQLite, then on PostgreSQL when it is configured.
macro_rules! on_both_backends_with_voyage {
    ($($case:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $case() {
                for backend in [Backend::Sqlite, Backend::Postgres] {
                    match app_with_voyage(backend).await {
                        Some(app) => cases::$case(app).await,
                        None => eprintln!("{backend:?} is not configured: skipped"),
                    }
                }
            }
        )*
    };
}

on_both_backends_with_voyage!(
    a_transport_event_at_a_known_terminal_relates_and_includes_it,
    an_event_at_a_terminal_named_by_name_relates_it,
    a_raw_event_names_its_terminal,
    an_event_at_an_unknown_facility_has_a_null_terminal,
    the_pod_terminal_is_the_terminal_the_events_name_at_the_port_of_discharge,
    a_webhook_for_an_event_at_a_known_terminal_relates_and_includes_it,
    the_console_shows_where_each_event_happened_by_terminal_and_port,
    a_webhook_for_an_event_on_a_vessel_includes_the_vessel_after_the_terminal,
);

const SCAC: &str = "MAEU";
const NUMBER: &str = "TERMINALS-BL-1";
const CONTAINER: &str = "MSKU1234565";

/// A carrier that answers every poll with the same DCSA 2.2 events, read by the real parser.
struct Answering(fn() -> Value);

#[async_trait]
impl Carrier for Answering {
    fn scac(&self) -> &str {
        SCAC
    }

    async fn fetch(&self, _: &TrackingQuery) -> Result<CarrierSnapshot, CarrierError> {
        let body = serde_json::to_vec(&(self.0)()).expect("JSON");
        tidemark_carriers::dcsa::parse_events(&body)
    }
}

/// A DCSA 2.2 transport call at `locode` with `facility`'s members.
fn call_at(locode: &str, facility: Value) -> Value {
    let mut call = json!({
        "transportCallID": format!("call-{locode}"),
        "UNLocationCode": locode,
        "modeOfTransport": "VESSEL",
        "exportVoyageNumber": "612E",
        "vessel": {"vesselIMONumber": "9321483", "vesselName": "KING OF THE SEAS"},
    });
    if let (Some(call), Some(facility)) = (call.as_object_mut(), facility.as_object()) {
        call.extend(facility.clone());
    }
    call
}

fn equipment(id: &str, code: &str, at: &str, locode: &str, facility: Value) -> Value {
    json!({
        "eventID": id, "eventType": "EQUIPMENT", "eventClassifierCode": "ACT",
        "eventDateTime": at, "equipmentEventTypeCode": code,
        "equipmentReference": CONTAINER, "ISOEquipmentCode": "45G1",
        "emptyIndicatorCode": "LADEN",
        "eventLocation": {"UNLocationCode": locode},
        "transportCall": call_at(locode, facility),
        "documentReferences": [{"documentReferenceType": "TRD", "documentReferenceValue": NUMBER}],
    })
}

fn transport(id: &str, code: &str, at: &str, locode: &str, facility: Value) -> Value {
    json!({
        "eventID": id, "eventType": "TRANSPORT", "eventClassifierCode": "ACT",
        "eventDateTime": at, "transportEventTypeCode": code,
        "transportCall": call_at(locode, facility),
        "documentReferences": [{"documentReferenceType": "TRD", "documentReferenceValue": NUMBER}],
    })
}

/// Loaded at a Shanghai facility Tidemark does not know, departed from a terminal named by
/// name, arrived and discharged at Norfolk's Virginia International Gateway, named by its
/// SMDG code.
fn voyage() -> Value {
    let smdg_vig = json!({
        "facilityCode": "VIG", "facilityCodeListProvider": "SMDG", "facilityTypeCode": "POTE"
    });
    json!([
        equipment(
            "load",
            "LOAD",
            "2026-02-01T08:00:00Z",
            "CNSHA",
            json!({"facilityCode": "NOPE", "facilityCodeListProvider": "SMDG"}),
        ),
        transport(
            "depart",
            "DEPA",
            "2026-02-02T08:00:00Z",
            "CNSHA",
            json!({"otherFacility": "Shanghai Mingdong Container Terminals"}),
        ),
        transport(
            "arrive",
            "ARRI",
            "2026-02-25T08:00:00Z",
            "USORF",
            smdg_vig.clone()
        ),
        equipment(
            "discharge",
            "DISC",
            "2026-02-26T08:00:00Z",
            "USORF",
            smdg_vig
        ),
    ])
}

fn vig() -> String {
    tidemark_geo::reference::terminal_id("USORF", "Virginia International Gateway").to_string()
}

/// The `terminal` relationship of an event at the Virginia International Gateway.
fn at_vig() -> Value {
    json!({"data": {"type": "terminal", "id": vig()}})
}

/// A test app whose `MAEU` answers [`voyage`], with `NUMBER` tracked and polled once, and
/// webhooks allowed to a local receiver.
async fn app_with_voyage(backend: Backend) -> Option<TestApp> {
    TestApp::build(
        backend,
        &[("webhooks_allow_private", "true")],
        vec![Arc::new(Answering(voyage))],
    )
    .await
}

/// Loaded at Jebel Ali and arrived at Sydney, each terminal named only by its code from the
/// SMDG master terminal list (no hand-curated terminal at either port).
fn smdg_voyage() -> Value {
    let smdg = |code: &str| json!({"facilityCode": code, "facilityCodeListProvider": "SMDG"});
    json!([
        equipment(
            "load",
            "LOAD",
            "2026-02-01T08:00:00Z",
            "AEJEA",
            smdg("DPWJA")
        ),
        transport(
            "arrive",
            "ARRI",
            "2026-02-20T08:00:00Z",
            "AUSYD",
            smdg("CTLPB")
        ),
    ])
}

#[tokio::test]
async fn an_event_at_a_terminal_of_the_smdg_list_named_by_its_code_relates_it() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(app) = TestApp::build(backend, &[], vec![Arc::new(Answering(smdg_voyage))]).await
        else {
            eprintln!("{backend:?} is not configured: skipped");
            continue;
        };
        app.track("bill_of_lading", NUMBER, SCAC).await;
        app.run_pending_jobs().await;
        let containers = app
            .get_ok(&format!("/v2/containers?filter[number]={CONTAINER}"))
            .await;
        let container = containers["data"][0]["id"].as_str().unwrap().to_owned();

        let events = app
            .get_ok(&format!(
                "/v2/containers/{container}/transport_events?include=terminal"
            ))
            .await;

        let terminal_of = |event: &str| {
            events["data"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["attributes"]["event"] == json!(event))
                .map(|e| e["relationships"]["terminal"]["data"]["id"].clone())
        };
        let sydney = tidemark_geo::reference::terminal_id("AUSYD", "DP WORLD SYDNEY");
        let jebel_ali = tidemark_geo::reference::terminal_id("AEJEA", "DP WORLD JEBEL ALI - CT1");
        assert_eq!(
            terminal_of("container.transport.vessel_arrived"),
            Some(json!(sydney.to_string())),
            "{events:#}"
        );
        assert_eq!(
            terminal_of("container.transport.vessel_loaded"),
            Some(json!(jebel_ali.to_string())),
            "{events:#}"
        );
        let shown = app.get_ok(&format!("/v2/terminals/{sydney}")).await;
        assert_eq!(shown["data"]["attributes"]["smdg_code"], json!("CTLPB"));
    }
}

mod cases {
    use super::*;

    async fn track(app: &TestApp) {
        app.track("bill_of_lading", NUMBER, SCAC).await;
        app.run_pending_jobs().await;
    }

    async fn container_id(app: &TestApp) -> String {
        let containers = app
            .get_ok(&format!("/v2/containers?filter[number]={CONTAINER}"))
            .await;
        containers["data"][0]["id"].as_str().unwrap().to_owned()
    }

    /// The tracked container's `feed` (`transport_events` or `raw_events`, `query` added),
    /// after tracking.
    async fn feed(app: &TestApp, feed: &str, query: &str) -> Value {
        track(app).await;
        let container = container_id(app).await;
        app.get_ok(&format!(
            "/v2/containers/{container}/{feed}?page[size]=100{query}"
        ))
        .await
    }

    fn named<'a>(document: &'a Value, attribute: &str, value: &str) -> &'a Value {
        document["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["attributes"][attribute] == json!(value))
            .unwrap_or_else(|| panic!("no event with {attribute} {value}: {document:#}"))
    }

    fn included_terminals(document: &Value) -> Vec<&Value> {
        document["included"]
            .as_array()
            .map(|included| {
                included
                    .iter()
                    .filter(|o| o["type"] == json!("terminal"))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub async fn a_transport_event_at_a_known_terminal_relates_and_includes_it(app: TestApp) {
        let events = feed(&app, "transport_events", "&include=terminal").await;

        let arrived = named(&events, "event", "container.transport.vessel_arrived");
        assert_eq!(arrived["relationships"]["terminal"], at_vig());
        let terminals = included_terminals(&events);
        let vig_objects: Vec<&&Value> = terminals
            .iter()
            .filter(|t| t["id"] == json!(vig()))
            .collect();
        assert_eq!(vig_objects.len(), 1, "each terminal once: {terminals:#?}");
        let shown = app.get_ok(&format!("/v2/terminals/{}", vig())).await;
        assert_eq!(*vig_objects[0], &shown["data"]);
        assert_eq!(shown["data"]["attributes"]["smdg_code"], json!("VIG"));
    }

    pub async fn an_event_at_a_terminal_named_by_name_relates_it(app: TestApp) {
        let events = feed(&app, "transport_events", "").await;

        let departed = named(&events, "event", "container.transport.vessel_departed");
        let mingdong =
            tidemark_geo::reference::terminal_id("CNSHA", "Shanghai Mingdong Container Terminals");
        assert_eq!(
            departed["relationships"]["terminal"]["data"]["id"],
            json!(mingdong.to_string())
        );
        assert!(
            included_terminals(&events).is_empty(),
            "terminals are included only when asked for"
        );
    }

    pub async fn a_raw_event_names_its_terminal(app: TestApp) {
        let raw = feed(&app, "raw_events", "").await;

        let discharged = named(&raw, "original_event", "EQUIPMENT DISC ACT LADEN");
        assert_eq!(discharged["relationships"]["terminal"], at_vig());
        assert!(
            included_terminals(&raw)
                .iter()
                .any(|t| t["id"] == json!(vig())),
            "raw events include their terminals by default, as Terminal49's do"
        );
    }

    pub async fn an_event_at_an_unknown_facility_has_a_null_terminal(app: TestApp) {
        let events = feed(&app, "transport_events", "&include=terminal").await;
        let container = container_id(&app).await;
        let raw = app
            .get_ok(&format!(
                "/v2/containers/{container}/raw_events?include=terminal"
            ))
            .await;

        let loaded = named(&events, "event", "container.transport.vessel_loaded");
        let raw_loaded = named(&raw, "original_event", "EQUIPMENT LOAD ACT LADEN");
        assert_eq!(loaded["relationships"]["terminal"], json!({"data": null}));
        assert_eq!(
            raw_loaded["relationships"]["terminal"],
            json!({"data": null})
        );
        let known: Vec<&Value> = included_terminals(&events)
            .into_iter()
            .map(|t| &t["attributes"]["name"])
            .collect();
        assert_eq!(
            known,
            [
                &json!("Shanghai Mingdong Container Terminals"),
                &json!("Virginia International Gateway")
            ]
        );
    }

    pub async fn the_pod_terminal_is_the_terminal_the_events_name_at_the_port_of_discharge(
        app: TestApp,
    ) {
        track(&app).await;

        let shipments = app.get_ok(&format!("/v2/shipments?q={NUMBER}")).await;
        assert_eq!(
            shipments["data"][0]["relationships"]["pod_terminal"],
            at_vig()
        );
    }

    pub async fn the_console_shows_where_each_event_happened_by_terminal_and_port(app: TestApp) {
        track(&app).await;
        let shipments = app.get_ok(&format!("/v2/shipments?q={NUMBER}")).await;
        let id = shipments["data"][0]["id"].as_str().unwrap();
        let cookie = console::sign_in(&app, &app.key).await;

        let html = console::text(&console::page(&app, &format!("/shipments/{id}"), &cookie).await);

        for place in [
            "Virginia International Gateway, Norfolk (USORF)",
            "Shanghai Mingdong Container Terminals, Shanghai (CNSHA)",
            // Loaded at a facility Tidemark does not know: the port alone.
            "Shanghai (CNSHA)",
        ] {
            assert!(
                html.contains(&format!("<td>{place}</td>")),
                "{place}: {html}"
            );
        }
    }

    pub async fn a_webhook_for_an_event_at_a_known_terminal_relates_and_includes_it(app: TestApp) {
        let bodies = arrivals_delivered(&app).await;
        assert_eq!(bodies.len(), 1, "one arrival");
        let delivered: Value = serde_json::from_slice(&bodies[0]).unwrap();
        let included = delivered["included"].as_array().unwrap();
        let event = included
            .iter()
            .find(|o| o["type"] == json!("transport_event"))
            .expect("the event is included");
        assert_eq!(event["relationships"]["terminal"], at_vig());
        let types: Vec<&str> = included
            .iter()
            .map(|o| o["type"].as_str().unwrap())
            .collect();
        let port = types.iter().position(|t| *t == "port").expect("the port");
        assert_eq!(types.get(port + 1), Some(&"terminal"), "{types:?}");
    }

    pub async fn a_webhook_for_an_event_on_a_vessel_includes_the_vessel_after_the_terminal(
        app: TestApp,
    ) {
        let bodies = arrivals_delivered(&app).await;
        let delivered: Value = serde_json::from_slice(&bodies[0]).unwrap();
        let included = delivered["included"].as_array().unwrap();
        let types: Vec<&str> = included
            .iter()
            .map(|o| o["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [
                "shipment",
                "container",
                "port",
                "terminal",
                "vessel",
                "transport_event"
            ],
            "Terminal49's order"
        );
        let vessel = &included[4];
        assert_eq!(vessel["attributes"]["imo"], json!("9321483"));
        assert_eq!(vessel["attributes"]["name"], json!("KING OF THE SEAS"));
        let event = &included[5];
        assert_eq!(event["relationships"]["vessel"]["data"]["id"], vessel["id"]);
    }

    /// The bodies a webhook subscribed to `vessel_arrived` receives once the voyage is
    /// tracked and polled.
    async fn arrivals_delivered(app: &TestApp) -> Vec<Bytes> {
        let received = receiver().await;
        let webhook = app
            .post_json(
                "/v2/webhooks",
                &json!({"data": {"type": "webhook", "attributes": {
                    "url": received.0, "events": ["container.transport.vessel_arrived"],
                }}}),
            )
            .await;
        assert_eq!(webhook.status, StatusCode::CREATED);
        track(app).await;
        app.run_pending_jobs().await;
        received.1.lock().unwrap().clone()
    }

    /// A local HTTP receiver: its URL, and the bodies it got.
    async fn receiver() -> (String, Arc<Mutex<Vec<Bytes>>>) {
        let received: Arc<Mutex<Vec<Bytes>>> = Arc::default();
        let log = Arc::clone(&received);
        let router = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |body: Bytes| {
                let log = Arc::clone(&log);
                async move {
                    log.lock().unwrap().push(body);
                    StatusCode::OK
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await });
        (format!("http://{address}/hook"), received)
    }
}
