//! Real carriers' limits and number → carrier inference, end to end: `infer_number`,
//! tracking requests without a SCAC, a 429's `Retry-After`, the circuit breaker, refused
//! credentials, and one budget shared by two worker processes on PostgreSQL.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use axum::http::StatusCode;
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use tidemark_carriers::profile::RateBudget;
use tidemark_carriers::{Carrier, CarrierError, CarrierSnapshot, TrackingQuery};
use tidemark_domain::{Clock, MockClock};

use crate::helpers::{Backend, TestApp};
use crate::on_both_backends;

on_both_backends!(
    a_container_number_infers_its_line_in_terminal49s_shape,
    a_leasing_companys_container_is_never_auto_selected,
    a_wrong_check_digit_is_reported_and_asks_for_confirmation,
    a_number_that_is_not_one_is_unprocessable,
    a_tracking_request_without_a_scac_uses_the_inferred_carrier,
    a_tracking_request_without_a_scac_that_is_not_certain_is_refused_with_the_candidates,
);

async fn infer(app: &TestApp, number: &str) -> (StatusCode, Value) {
    let response = app
        .post_json(
            "/v2/tracking_requests/infer_number",
            &json!({ "number": number }),
        )
        .await;
    (response.status, response.json())
}

/// Every key path of a JSON document (array items merged), to compare shapes.
fn shape(value: &Value, path: &str, into: &mut BTreeSet<String>) {
    match value {
        Value::Object(members) => {
            for (key, member) in members {
                let path = format!("{path}/{key}");
                into.insert(path.clone());
                shape(member, &path, into);
            }
        }
        Value::Array(items) => {
            for item in items {
                shape(item, &format!("{path}[]"), into);
            }
        }
        _ => {}
    }
}

async fn a_container_number_infers_its_line_in_terminal49s_shape(app: TestApp) {
    let (status, body) = infer(&app, "WHLU1234560").await;

    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!("infer_number_container", body);
    let example: Value = serde_json::from_str(
        &std::fs::read_to_string(
            "../../../shared/reference/terminal49/openapi-examples/\
             post-infer-number.200.Container_-_Auto_Select.json",
        )
        .unwrap(),
    )
    .unwrap();
    let (mut ours, mut theirs) = (BTreeSet::new(), BTreeSet::new());
    shape(&body, "", &mut ours);
    shape(&example, "", &mut theirs);
    assert_eq!(ours, theirs);
    assert_eq!(
        body["data"]["attributes"]["shipping_line"]["selected"]["scac"],
        example["data"]["attributes"]["shipping_line"]["selected"]["scac"]
    );
}

async fn a_leasing_companys_container_is_never_auto_selected(app: TestApp) {
    let (status, body) = infer(&app, "TGHU1234567").await;

    assert_eq!(status, StatusCode::OK);
    let attributes = &body["data"]["attributes"];
    assert_eq!(attributes["number_type"], "container");
    assert_eq!(attributes["shipping_line"]["decision"], "no_prediction");
    assert_eq!(attributes["shipping_line"]["selected"], Value::Null);
    assert!(
        attributes["validation"]["reason"]
            .as_str()
            .unwrap()
            .contains("leasing company")
    );
}

async fn a_wrong_check_digit_is_reported_and_asks_for_confirmation(app: TestApp) {
    let (status, body) = infer(&app, "MSKU1234566").await;

    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!("infer_number_wrong_check_digit", body["data"]["attributes"]);
}

async fn a_number_that_is_not_one_is_unprocessable(app: TestApp) {
    let (status, body) = infer(&app, "ABC/123").await;

    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["errors"][0]["code"], "invalid_number");
    assert_eq!(body["errors"][0]["source"]["pointer"], "/number");
}

async fn submit(app: &TestApp, request_type: &str, number: &str) -> (StatusCode, Value) {
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": request_type, "request_number": number
            }}}),
        )
        .await;
    (response.status, response.json())
}

async fn a_tracking_request_without_a_scac_uses_the_inferred_carrier(app: TestApp) {
    let (status, body) = submit(&app, "container", "MSKU1234565").await;
    let (test_status, test_body) = submit(&app, "bill_of_lading", "TEST-TR-SUCCEEDED").await;

    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["data"]["attributes"]["scac"], "MAEU");
    assert_eq!(test_status, StatusCode::CREATED, "{test_body}");
    assert_eq!(test_body["data"]["attributes"]["scac"], "TEST");
    app.run_pending_jobs().await;
    let id = test_body["data"]["id"].as_str().unwrap();
    let request = app.get(&format!("/v2/tracking_requests/{id}")).await.json();
    assert_eq!(request["data"]["attributes"]["status"], "created");
}

async fn a_tracking_request_without_a_scac_that_is_not_certain_is_refused_with_the_candidates(
    app: TestApp,
) {
    let (status, body) = submit(&app, "booking_number", "221234567").await;
    let (lessor_status, lessor_body) = submit(&app, "container", "TGHU1234567").await;

    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    insta::assert_json_snapshot!("tracking_request_scac_not_inferred", body);
    assert_eq!(lessor_status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(lessor_body["errors"][0]["code"], "not_inferred");
    assert_eq!(
        lessor_body["errors"][0]["meta"]["shipping_line"]["decision"],
        "no_prediction"
    );
}

/// A carrier whose answer the test sets, recording when it was called (on the app's
/// clock).
struct Switchable {
    scac: &'static str,
    /// The app's clock, set once the app exists.
    clock: OnceLock<Arc<MockClock>>,
    answer: Mutex<fn() -> Result<CarrierSnapshot, CarrierError>>,
    calls: Mutex<Vec<DateTime<Utc>>>,
}

impl Switchable {
    fn new(scac: &'static str) -> Arc<Self> {
        Arc::new(Self {
            scac,
            clock: OnceLock::new(),
            answer: Mutex::new(|| Err(CarrierError::NotFound)),
            calls: Mutex::new(Vec::new()),
        })
    }

    fn answer(&self, answer: fn() -> Result<CarrierSnapshot, CarrierError>) {
        *self.answer.lock().unwrap() = answer;
    }

    fn calls(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

#[async_trait]
impl Carrier for Switchable {
    fn scac(&self) -> &str {
        self.scac
    }

    async fn fetch(&self, _: &TrackingQuery) -> Result<CarrierSnapshot, CarrierError> {
        let now = self.clock.get().expect("the clock is set").now();
        self.calls.lock().unwrap().push(now);
        (self.answer.lock().unwrap())()
    }
}

/// An app with `scac` served by a [`Switchable`] carrier on the app's clock. Each test
/// uses its own SCAC: the metrics recorder is shared by the tests of the process.
async fn app_with(
    backend: Backend,
    scac: &'static str,
    budget: RateBudget,
) -> Option<(TestApp, Arc<Switchable>)> {
    let carrier = Switchable::new(scac);
    let app =
        TestApp::with_budgeted_carriers(backend, vec![(carrier.clone() as _, budget)]).await?;
    carrier.clock.set(Arc::clone(&app.clock)).expect("set once");
    Some((app, carrier))
}

fn advance(app: &TestApp, _carrier: &Switchable, by: Duration) {
    app.clock.advance(by);
}

async fn submit_to(app: &TestApp, carrier: &Switchable, number: &str) -> String {
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": number, "scac": carrier.scac
            }}}),
        )
        .await;
    assert_eq!(response.status, StatusCode::CREATED);
    response.json()["data"]["id"].as_str().unwrap().to_owned()
}

/// The value of the metric line starting with `name` (0 when absent).
async fn metric(app: &TestApp, name: &str) -> f64 {
    let response = app.get("/metrics").await;
    String::from_utf8_lossy(&response.body)
        .lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(0.0)
}

async fn attributes_of(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v2/tracking_requests/{id}")).await.json()["data"]["attributes"].clone()
}

/// Each `case = SCAC` as a test on SQLite, then on PostgreSQL when it is configured.
macro_rules! on_both_backends_with_carrier {
    ($($case:ident = $scac:literal),* $(,)?) => {
        mod with_carrier {
            $(
                #[tokio::test]
                async fn $case() {
                    for backend in [$crate::helpers::Backend::Sqlite, $crate::helpers::Backend::Postgres] {
                        match super::app_with(backend, $scac, super::RateBudget::default()).await {
                            Some((app, carrier)) => super::$case(app, carrier).await,
                            None => eprintln!("{backend:?} is not configured: skipped"),
                        }
                    }
                }
            )*
        }
    };
}

on_both_backends_with_carrier!(
    a_429_makes_the_whole_carrier_wait_for_its_retry_after = "CMDU",
    repeated_server_errors_open_the_circuit_until_a_probe_succeeds = "MSCU",
    // Not HLCU: carrier_profiles' tests call a mock Hapag-Lloyd and set its gauges.
    refused_credentials_make_requests_wait_and_they_resume_once_the_credentials_work = "ZIMU",
    events_that_cannot_be_read_are_counted_per_carrier_with_their_raw_payload = "EGLV",
    a_container_whose_answer_has_no_readable_event_retries_as_unrecognized_not_not_found = "MSCU",
    a_container_requests_shipment_takes_the_bill_of_lading_a_later_answer_names = "WHLC",
);

/// The container MSKU1234565 loaded at Shanghai, its transport document named or not.
fn loaded_at_shanghai(bill: Option<&str>) -> Result<CarrierSnapshot, CarrierError> {
    let mut event = json!({
        "eventID": "load-1", "eventType": "EQUIPMENT", "eventClassifierCode": "ACT",
        "eventDateTime": "2026-02-20T10:00:00Z", "equipmentEventTypeCode": "LOAD",
        "equipmentReference": "MSKU1234565", "emptyIndicatorCode": "LADEN",
        "eventLocation": {"UNLocationCode": "CNSHA"},
        "transportCall": {"UNLocationCode": "CNSHA", "modeOfTransport": "VESSEL"}
    });
    if let Some(bill) = bill {
        event["documentReferences"] =
            json!([{"documentReferenceType": "TRD", "documentReferenceValue": bill}]);
    }
    let body = serde_json::to_vec(&[event]).expect("JSON");
    Ok(tidemark_carriers::dcsa::parse_events(&body).expect("a DCSA 2.2 event"))
}

async fn a_container_requests_shipment_takes_the_bill_of_lading_a_later_answer_names(
    app: TestApp,
    carrier: Arc<Switchable>,
) {
    carrier.answer(|| loaded_at_shanghai(None));
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "container", "request_number": "MSKU1234565",
                "scac": carrier.scac
            }}}),
        )
        .await;
    assert_eq!(response.status, StatusCode::CREATED);
    app.run_pending_jobs().await;
    let shipments = app.get("/v2/shipments").await.json();
    let first_bill = shipments["data"][0]["attributes"]["bill_of_lading_number"].clone();

    carrier.answer(|| loaded_at_shanghai(Some("WHLC0123456789")));
    for _ in 0..3 {
        advance(&app, &carrier, Duration::minutes(30));
        app.tick().await;
        app.run_pending_jobs().await;
    }
    let later = app.get("/v2/shipments?q=WHLC0123").await.json();

    assert_eq!(first_bill, "MSKU1234565", "{shipments}");
    assert_eq!(
        later["data"][0]["attributes"]["bill_of_lading_number"], "WHLC0123456789",
        "{later}"
    );
}

async fn a_container_whose_answer_has_no_readable_event_retries_as_unrecognized_not_not_found(
    app: TestApp,
    carrier: Arc<Switchable>,
) {
    carrier.answer(|| {
        Ok(CarrierSnapshot {
            events: Vec::new(),
            skipped: vec!["event 0 (e-1): unknown eventType \"IOT\"".to_owned()],
            skipped_raw: vec![r#"{"eventID":"e-1","eventType":"IOT"}"#.to_owned()],
            worded: Vec::new(),
        })
    });
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "container", "request_number": "CSQU3054383",
                "scac": carrier.scac
            }}}),
        )
        .await;
    assert_eq!(response.status, StatusCode::CREATED);
    let id = response.json()["data"]["id"].as_str().unwrap().to_owned();

    app.run_pending_jobs().await;
    let attributes = attributes_of(&app, &id).await;

    assert_eq!(attributes["status"], "pending", "{attributes}");
    assert_eq!(attributes["is_retrying"], true, "{attributes}");
    assert_eq!(
        attributes["failed_reason"], "unrecognized_response",
        "{attributes}"
    );
}

async fn events_that_cannot_be_read_are_counted_per_carrier_with_their_raw_payload(
    app: TestApp,
    carrier: Arc<Switchable>,
) {
    carrier.answer(|| {
        Ok(CarrierSnapshot {
            events: Vec::new(),
            skipped: vec![
                "event 0 (e-1): unknown eventType \"REEFER\"".to_owned(),
                "event 1 (e-2): unknown eventType \"IOT\"".to_owned(),
            ],
            skipped_raw: vec![
                r#"{"eventID":"e-1","eventType":"REEFER"}"#.to_owned(),
                r#"{"eventID":"e-2","eventType":"IOT"}"#.to_owned(),
            ],
            worded: Vec::new(),
        })
    });
    submit_to(&app, &carrier, "HLCUHAM000000001").await;
    // The metrics recorder is the process's, shared by the tests: compare before and after.
    let drift = "tidemark_carrier_drift_events_total{scac=\"EGLV\"}";
    let before = metric(&app, drift).await;

    app.run_pending_jobs().await;
    let after = metric(&app, drift).await;
    let health = tidemark_server::use_cases::tracking::limits::health(&app.app.engine())
        .await
        .unwrap();

    assert_eq!(after - before, 2.0);
    let eglv = health.iter().find(|h| h.scac == "EGLV").unwrap();
    assert_eq!(eglv.drift_events, 2);
    assert_eq!(
        eglv.last_drift.as_deref(),
        Some(r#"event 1 (e-2): unknown eventType "IOT"; raw: {"eventID":"e-2","eventType":"IOT"}"#)
    );
}

async fn a_429_makes_the_whole_carrier_wait_for_its_retry_after(
    app: TestApp,
    carrier: Arc<Switchable>,
) {
    carrier.answer(|| {
        Err(CarrierError::RateLimited {
            retry_after: Some(std::time::Duration::from_secs(120)),
        })
    });
    submit_to(&app, &carrier, "HLCUHAM000000001").await;
    app.run_pending_jobs().await;
    carrier.answer(|| Err(CarrierError::NotFound));

    submit_to(&app, &carrier, "HLCUHAM000000002").await;
    app.run_pending_jobs().await;
    advance(&app, &carrier, Duration::seconds(90));
    app.tick().await;
    let during = carrier.calls();
    advance(&app, &carrier, Duration::seconds(31));
    app.tick().await;

    assert_eq!(during, 1, "nothing is sent before Retry-After");
    assert_eq!(
        carrier.calls(),
        3,
        "both requests are polled once it passed"
    );
}

async fn repeated_server_errors_open_the_circuit_until_a_probe_succeeds(
    app: TestApp,
    carrier: Arc<Switchable>,
) {
    carrier.answer(|| Err(CarrierError::Unavailable("503".to_owned())));
    for n in 1..=5 {
        submit_to(&app, &carrier, &format!("HLCUHAM00000000{n}")).await;
    }
    app.run_pending_jobs().await;
    let waiting = submit_to(&app, &carrier, "HLCUHAM000000006").await;
    app.run_pending_jobs().await;
    let while_open = carrier.calls();
    let attributes = attributes_of(&app, &waiting).await;
    let metrics = app.get("/metrics").await;
    let metrics = String::from_utf8_lossy(&metrics.body).into_owned();

    carrier.answer(|| Err(CarrierError::NotFound));
    // The circuit half-opens after 30 seconds; the requests are due again after their
    // one-minute retry delay.
    advance(&app, &carrier, Duration::seconds(61));
    app.tick().await;
    let after_probe = carrier.calls();
    advance(&app, &carrier, Duration::minutes(5));
    app.tick().await;

    assert_eq!(while_open, 5, "the sixth poll waits for the open circuit");
    assert_eq!(attributes["status"], "pending");
    assert_eq!(attributes["is_retrying"], true);
    assert!(
        metrics.contains("tidemark_carrier_circuit_open{scac=\"MSCU\"} 1"),
        "{metrics}"
    );
    assert_eq!(after_probe, 6, "one probe when the circuit half-opens");
    assert!(
        carrier.calls() > 6,
        "the closed circuit lets the rest through"
    );
}

async fn refused_credentials_make_requests_wait_and_they_resume_once_the_credentials_work(
    app: TestApp,
    carrier: Arc<Switchable>,
) {
    carrier.answer(|| Err(CarrierError::CredentialsRefused("401".to_owned())));
    let id = submit_to(&app, &carrier, "ZIMUHAM000000001").await;
    app.run_pending_jobs().await;
    for _ in 0..30 {
        advance(&app, &carrier, Duration::minutes(1));
        app.tick().await;
    }
    let waiting = attributes_of(&app, &id).await;
    let metrics = app.get("/metrics").await;
    let metrics = String::from_utf8_lossy(&metrics.body).into_owned();
    let health = tidemark_server::use_cases::tracking::limits::health(&app.app.engine())
        .await
        .unwrap();
    let calls_while_refused = carrier.calls();

    carrier.answer(|| Ok(CarrierSnapshot::default()));
    for _ in 0..6 {
        advance(&app, &carrier, Duration::minutes(1));
        app.tick().await;
    }
    let resumed = attributes_of(&app, &id).await;

    assert_eq!(waiting["status"], "pending");
    assert_eq!(waiting["is_retrying"], true);
    assert_eq!(waiting["retry_count"], Value::Null, "no retries are spent");
    assert!(
        calls_while_refused <= 7,
        "one probe every five minutes, not a poll a minute: {calls_while_refused}"
    );
    assert!(
        metrics.contains("tidemark_carrier_credentials_refused{scac=\"ZIMU\"} 1"),
        "{metrics}"
    );
    let hlcu = health.iter().find(|h| h.scac == "ZIMU").unwrap();
    assert!(hlcu.credentials_refused_since.is_some());
    assert!(hlcu.configured);
    assert_eq!(resumed["is_retrying"], false, "{resumed}");
    assert_ne!(resumed["status"], "failed");
}

/// Two worker processes on one PostgreSQL schema, each with its own store, app and job
/// runner, poll one carrier whose budget is 5 calls a minute while 60 requests are due at
/// once: no minute ever sees more than 5 calls, and every request is polled in the end.
#[tokio::test]
async fn two_worker_processes_share_one_budget_and_never_exceed_it() {
    let Some(schema) = tidemark_store_postgres::testing::temp_schema().await else {
        eprintln!("TIDEMARK_TEST_POSTGRES_URL is not set: skipped");
        return;
    };
    let budget = RateBudget {
        per_minute: Some(5),
        per_day: None,
    };
    let start = DateTime::parse_from_rfc3339("2026-03-01T12:00:00Z")
        .unwrap()
        .to_utc();
    let clock = Arc::new(MockClock::new(start));
    let carrier = Switchable::new("HLCU");
    carrier.clock.set(Arc::clone(&clock)).expect("set once");
    let process = |store: Arc<dyn tidemark_store::Store>, first_id: u64| {
        let mut carriers = tidemark_server::parts::carriers::Carriers::default();
        carriers.insert(carrier.clone() as Arc<dyn Carrier>);
        carriers.set_budget("HLCU", budget);
        let config =
            tidemark_server::Config::from_pairs(&[("public_url", "http://t.test")]).unwrap();
        Arc::new(
            tidemark_server::App::new(
                config,
                store,
                Arc::clone(&clock) as _,
                Arc::new(tidemark_domain::SequentialIds::starting_after(first_id)),
            )
            .with_carriers(carriers),
        )
    };
    let first = process(schema.store(), 0);
    let second = process(schema.another_process().await, 1_000_000);
    let account = tidemark_server::use_cases::accounts::find_or_create_account(&first, "acme")
        .await
        .unwrap();
    let key = tidemark_server::use_cases::accounts::issue_key(
        &first,
        account.id,
        tidemark_domain::ApiKeyScope::ReadWrite,
    )
    .await
    .unwrap();
    for n in 0..60 {
        tidemark_server::use_cases::tracking::requests::submit(
            &first,
            account.id,
            key.key.id,
            tidemark_server::use_cases::tracking::requests::Submission {
                request_type: Some("bill_of_lading".to_owned()),
                request_number: Some(format!("HLCUHAM{n:09}")),
                scac: Some("HLCU".to_owned()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    }

    let (runner_one, runner_two) = (
        tidemark_server::jobs::runner(&first),
        tidemark_server::jobs::runner(&second),
    );
    for _ in 0..(15 * 6) {
        tokio::join!(
            async {
                tidemark_server::use_cases::tracking::sweep(
                    &first.engine(),
                    first.config.scheduler_tick,
                )
                .await
                .unwrap();
                runner_one.run_pending().await
            },
            async {
                tidemark_server::use_cases::tracking::sweep(
                    &second.engine(),
                    second.config.scheduler_tick,
                )
                .await
                .unwrap();
                runner_two.run_pending().await
            },
        );
        clock.advance(Duration::seconds(10));
    }

    let calls = carrier.calls.lock().unwrap().clone();
    for (i, at) in calls.iter().enumerate() {
        let in_minute = calls[i..]
            .iter()
            .filter(|&&other| other >= *at && other < *at + Duration::minutes(1))
            .count();
        assert!(in_minute <= 5, "{in_minute} calls in the minute from {at}");
    }
    let polled: BTreeSet<String> = first
        .store
        .unresolved_tracking_requests(100)
        .await
        .unwrap()
        .into_iter()
        .filter(|request| request.polled_at.is_none())
        .map(|request| request.request_number)
        .collect();
    assert!(polled.is_empty(), "never polled: {polled:?}");
    assert!(calls.len() >= 60, "{} calls", calls.len());
}
