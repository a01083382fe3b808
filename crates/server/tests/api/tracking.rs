//! The tracking engine end to end: a tracking request is polled at its carrier (the sandbox
//! `TEST` carrier over HTTP, or a scripted one), becomes a shipment with containers and
//! events, and follows Terminal49's lifecycle.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::http::{Method, StatusCode};
use chrono::Duration;
use serde_json::{Value, json};
use tidemark_carriers::{Carrier, CarrierError, CarrierSnapshot, TrackingQuery};

use tidemark_domain::Clock;

use crate::helpers::{Backend, TestApp};
use crate::on_both_backends;

on_both_backends!(
    a_test_number_becomes_a_tracked_shipment_with_containers_and_events,
    a_transport_event_names_its_vessel,
    the_sandbox_failure_number_fails_as_not_found,
    the_voyage_unfolds_as_the_clock_moves,
    polling_again_creates_no_duplicate_events,
    an_unknown_bill_of_lading_awaits_its_manifest_then_expires,
    editing_a_request_awaiting_its_manifest_does_not_postpone_its_daily_check,
    an_unknown_container_number_fails_at_once,
    transient_carrier_errors_are_retried_then_exhausted,
    a_carrier_that_recovers_clears_the_retry_state,
    stopping_tracking_stops_polling_and_resuming_restarts_it,
    tracking_survives_a_restart_in_the_middle,
    shipments_and_containers_are_listed_and_filtered,
    another_accounts_shipment_and_container_are_not_found,
    a_shipment_accepts_only_ref_numbers_and_tags,
    a_shipment_read_again_shows_an_edit_and_a_later_poll,
    a_tracking_request_includes_its_shipment_by_default,
    a_tracking_request_includes_containers_and_ports_through_its_shipment,
    a_refresh_polls_now_and_has_its_own_limit_of_ten_a_minute,
    tracking_stops_by_itself_once_every_container_is_returned,
    every_change_is_recorded_as_a_domain_event_for_notifications,
    a_signed_carrier_push_polls_the_requests_it_concerns_at_once,
    a_push_to_a_brand_callback_is_checked_with_its_family_secret_and_reaches_the_family,
    a_carrier_push_with_a_wrong_signature_or_body_is_refused,
    a_push_sent_again_is_acknowledged_and_polls_nothing,
    a_stopped_shipment_blocks_a_duplicate_and_resumes_cleanly,
    a_shipment_its_carrier_stopped_answering_for_stops_being_tracked,
    a_list_of_tracking_requests_includes_their_shipments_and_what_is_asked_through_them,
    a_containers_raw_events_are_every_carrier_event_in_time_order,
    the_raw_events_of_an_unknown_container_are_not_found,
    the_key_that_stopped_tracking_is_the_user_who_stopped_it,
    a_tracking_request_shows_the_key_that_submitted_it_as_its_user,
    a_new_arrival_estimate_is_announced_once_per_shipment_as_an_estimated_event,
);

/// A carrier that answers each poll with the next scripted result.
struct Scripted {
    scac: &'static str,
    answers: Mutex<VecDeque<Result<CarrierSnapshot, CarrierError>>>,
}

#[async_trait]
impl Carrier for Scripted {
    fn scac(&self) -> &str {
        self.scac
    }

    async fn fetch(&self, _: &TrackingQuery) -> Result<CarrierSnapshot, CarrierError> {
        self.answers
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Err(CarrierError::NotFound))
    }
}

async fn scripted_app(
    backend: Backend,
    answers: Vec<Result<CarrierSnapshot, CarrierError>>,
) -> TestApp {
    let carrier = Arc::new(Scripted {
        scac: "MAEU",
        answers: Mutex::new(answers.into()),
    });
    TestApp::with_carriers(backend, vec![carrier])
        .await
        .unwrap()
}

async fn request_of(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v2/tracking_requests/{id}")).await.json()["data"].clone()
}

async fn shipment_of(app: &TestApp, request_id: &str) -> Value {
    let request = request_of(app, request_id).await;
    let shipment_id = request["relationships"]["tracked_object"]["data"]["id"]
        .as_str()
        .expect("the request has a shipment")
        .to_owned();
    app.get(&format!(
        "/v2/shipments/{shipment_id}?include=containers,port_of_lading,port_of_discharge"
    ))
    .await
    .json()
}

async fn events_of(app: &TestApp, container_id: &str) -> Vec<Value> {
    app.get(&format!(
        "/v2/containers/{container_id}/transport_events?page[size]=100"
    ))
    .await
    .json()["data"]
        .as_array()
        .unwrap()
        .clone()
}

async fn a_transport_event_names_its_vessel(app: TestApp) {
    let id = app
        .track("bill_of_lading", "TEST-TR-SUCCEEDED", "TEST")
        .await;
    app.run_pending_jobs().await;
    let shipment = shipment_of(&app, &id).await;
    let container = shipment["data"]["relationships"]["containers"]["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let events = events_of(&app, &container).await;

    let departed = events
        .iter()
        .find(|e| e["attributes"]["event"] == json!("container.transport.vessel_departed"))
        .expect("the sandbox voyage has departed");
    let vessel = departed["relationships"]["vessel"]["data"].clone();
    assert_eq!(vessel["type"], json!("vessel"));
    let shown = app
        .get(&format!("/v2/vessels/{}", vessel["id"].as_str().unwrap()))
        .await;
    assert_eq!(shown.status, StatusCode::OK);
    assert!(shown.json()["data"]["attributes"]["imo"].is_string());
}

async fn a_test_number_becomes_a_tracked_shipment_with_containers_and_events(app: TestApp) {
    let id = app
        .track("bill_of_lading", "TEST-TR-SUCCEEDED", "TEST")
        .await;

    app.run_pending_jobs().await;

    let request = request_of(&app, &id).await;
    assert_eq!(request["attributes"]["status"], json!("created"));
    assert_eq!(
        request["relationships"]["tracked_object"]["data"]["type"],
        json!("shipment")
    );
    let shipment = shipment_of(&app, &id).await;
    let attributes = &shipment["data"]["attributes"];
    assert_eq!(
        attributes["bill_of_lading_number"],
        json!("TEST-TR-SUCCEEDED")
    );
    assert_eq!(attributes["shipping_line_scac"], json!("TEST"));
    assert!(attributes["port_of_lading_locode"].is_string());
    assert!(attributes["port_of_discharge_locode"].is_string());
    assert!(attributes["pod_timezone"].is_string());
    assert!(attributes["line_tracking_last_succeeded_at"].is_string());
    let containers = shipment["data"]["relationships"]["containers"]["data"]
        .as_array()
        .unwrap();
    assert!(!containers.is_empty());
    let included_types: Vec<&str> = shipment["included"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["type"].as_str().unwrap())
        .collect();
    assert!(included_types.contains(&"container") && included_types.contains(&"port"));
    let container_id = containers[0]["id"].as_str().unwrap();
    let container = app
        .get(&format!("/v2/containers/{container_id}"))
        .await
        .json();
    assert!(
        container["data"]["attributes"]["number"]
            .as_str()
            .unwrap()
            .starts_with("TDMU")
    );
    let now = app.get("/healthz").await;
    assert_eq!(now.status, StatusCode::OK);
    for event in events_of(&app, container_id).await {
        let name = event["attributes"]["event"].as_str().unwrap();
        assert!(name.starts_with("container.transport."), "{name}");
    }
}

async fn the_sandbox_failure_number_fails_as_not_found(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-TR-FAILED", "TEST").await;

    app.run_pending_jobs().await;

    let request = request_of(&app, &id).await;
    assert_eq!(request["attributes"]["status"], json!("failed"));
    assert_eq!(request["attributes"]["failed_reason"], json!("not_found"));
    assert_eq!(
        request["relationships"]["tracked_object"]["data"],
        Value::Null
    );
}

async fn actual_events(app: &TestApp, request_id: &str) -> usize {
    let shipment = shipment_of(app, request_id).await;
    let mut count = 0;
    for container in shipment["data"]["relationships"]["containers"]["data"]
        .as_array()
        .unwrap()
    {
        count += events_of(app, container["id"].as_str().unwrap())
            .await
            .iter()
            .filter(|e| {
                !e["attributes"]["event"]
                    .as_str()
                    .unwrap()
                    .contains(".estimated.")
            })
            .count();
    }
    count
}

async fn the_voyage_unfolds_as_the_clock_moves(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-UNFOLDS-1", "TEST").await;
    app.run_pending_jobs().await;
    let before = actual_events(&app, &id).await;

    app.clock.advance(Duration::days(60));
    app.tick().await;

    let after = actual_events(&app, &id).await;
    assert!(
        after > before,
        "{before} actual events before, {after} after"
    );
    let shipment = shipment_of(&app, &id).await;
    assert!(shipment["data"]["attributes"]["pod_ata_at"].is_string());
}

async fn polling_again_creates_no_duplicate_events(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-NODUPES", "TEST").await;
    app.run_pending_jobs().await;
    let first = actual_events(&app, &id).await;

    app.clock.advance(Duration::hours(2));
    app.tick().await;
    app.clock.advance(Duration::hours(2));
    app.tick().await;

    // Two hours apart the sandbox may reveal new moves, but none twice: compare with a
    // fresh count of distinct events.
    let shipment = shipment_of(&app, &id).await;
    for container in shipment["data"]["relationships"]["containers"]["data"]
        .as_array()
        .unwrap()
    {
        let events = events_of(&app, container["id"].as_str().unwrap()).await;
        let mut keys: Vec<(String, String)> = events
            .iter()
            .map(|e| {
                (
                    e["attributes"]["event"].as_str().unwrap().to_owned(),
                    e["attributes"]["timestamp"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let total = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), total, "an event was recorded twice");
    }
    assert!(actual_events(&app, &id).await >= first);
}

async fn an_unknown_bill_of_lading_awaits_its_manifest_then_expires(app: TestApp) {
    let app = scripted_app(app.backend, Vec::new()).await;
    let id = app.track("bill_of_lading", "TESTSCRIPTED", "MAEU").await;

    app.run_pending_jobs().await;
    let waiting = request_of(&app, &id).await;
    app.clock.advance(Duration::hours(12));
    app.tick().await;
    let half_a_day_later = request_of(&app, &id).await;
    for _ in 0..7 {
        app.clock.advance(Duration::days(1));
        app.tick().await;
    }

    assert_eq!(waiting["attributes"]["status"], json!("awaiting_manifest"));
    assert_eq!(
        half_a_day_later["attributes"]["updated_at"], waiting["attributes"]["updated_at"],
        "re-checked daily, not sooner"
    );
    let expired = request_of(&app, &id).await;
    assert_eq!(expired["attributes"]["status"], json!("failed"));
    assert_eq!(expired["attributes"]["failed_reason"], json!("expired"));
}

async fn editing_a_request_awaiting_its_manifest_does_not_postpone_its_daily_check(app: TestApp) {
    let app = scripted_app(app.backend, Vec::new()).await;
    let id = app.track("bill_of_lading", "TESTSCRIPTED", "MAEU").await;
    app.run_pending_jobs().await;
    app.clock.advance(Duration::hours(20));
    let edited = app
        .request(
            Method::PATCH,
            &format!("/v2/tracking_requests/{id}"),
            Some(&app.key),
            Some((
                "application/json",
                json!({"data": {"type": "tracking_request", "attributes": {"ref_numbers": ["PO-1"]}}})
                    .to_string()
                    .into_bytes(),
            )),
        )
        .await;
    assert_eq!(edited.status, StatusCode::OK);

    app.clock.advance(Duration::hours(4) + Duration::minutes(1));
    app.tick().await;

    let checked = request_of(&app, &id).await;
    assert_eq!(
        checked["attributes"]["updated_at"],
        json!(tidemark_server::api::jsonapi::timestamp::format(
            app.clock.now()
        )),
        "checked a day after the last check, not a day after the edit"
    );
    assert_eq!(checked["attributes"]["status"], json!("awaiting_manifest"));
}

async fn an_unknown_container_number_fails_at_once(app: TestApp) {
    let app = scripted_app(app.backend, Vec::new()).await;
    let id = app.track("container", "CSQU3054383", "MAEU").await;

    app.run_pending_jobs().await;

    let request = request_of(&app, &id).await;
    assert_eq!(request["attributes"]["status"], json!("failed"));
    assert_eq!(request["attributes"]["failed_reason"], json!("not_found"));
}

async fn transient_carrier_errors_are_retried_then_exhausted(app: TestApp) {
    let answers = (0..20)
        .map(|_| Err(CarrierError::Unavailable("503".to_owned())))
        .collect();
    let app = scripted_app(app.backend, answers).await;
    let id = app.track("bill_of_lading", "TESTSCRIPTED", "MAEU").await;

    app.run_pending_jobs().await;
    let first = request_of(&app, &id).await;
    for _ in 0..20 {
        app.clock.advance(Duration::hours(5));
        app.tick().await;
    }

    assert_eq!(first["attributes"]["status"], json!("pending"));
    assert_eq!(first["attributes"]["is_retrying"], json!(true));
    assert_eq!(first["attributes"]["retry_count"], json!(1));
    assert_eq!(
        first["attributes"]["failed_reason"],
        json!("shipping_line_unreachable")
    );
    let exhausted = request_of(&app, &id).await;
    assert_eq!(exhausted["attributes"]["status"], json!("failed"));
    assert_eq!(
        exhausted["attributes"]["failed_reason"],
        json!("retries_exhausted")
    );
    assert_eq!(exhausted["attributes"]["retry_count"], json!(14));
}

fn sandbox_snapshot() -> CarrierSnapshot {
    let sandbox =
        tidemark_carriers::sandbox::Sandbox::new(tidemark_carriers::sandbox::builtin_ports());
    let epoch = chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2026, 3, 1, 0, 0, 0).unwrap();
    let voyage = sandbox.voyage("TESTSCRIPTED", epoch).unwrap();
    let body = serde_json::to_vec(&voyage.events_until(epoch + Duration::days(3))).unwrap();
    tidemark_carriers::dcsa::parse_events(&body).unwrap()
}

async fn a_carrier_that_recovers_clears_the_retry_state(app: TestApp) {
    let app = scripted_app(
        app.backend,
        vec![
            Err(CarrierError::UnexpectedPayload("html".to_owned())),
            Ok(sandbox_snapshot()),
        ],
    )
    .await;
    let id = app.track("bill_of_lading", "TESTSCRIPTED", "MAEU").await;
    app.run_pending_jobs().await;
    let retrying = request_of(&app, &id).await;

    app.clock.advance(Duration::minutes(5));
    app.tick().await;

    assert_eq!(
        retrying["attributes"]["failed_reason"],
        json!("unrecognized_response")
    );
    let created = request_of(&app, &id).await;
    assert_eq!(created["attributes"]["status"], json!("created"));
    assert_eq!(created["attributes"]["is_retrying"], json!(false));
    assert_eq!(created["attributes"]["failed_reason"], Value::Null);
}

async fn stopping_tracking_stops_polling_and_resuming_restarts_it(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-STOPME", "TEST").await;
    app.run_pending_jobs().await;
    let shipment_id = shipment_of(&app, &id).await["data"]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    let stopped = app
        .request(
            Method::PATCH,
            &format!("/v2/shipments/{shipment_id}/stop_tracking"),
            Some(&app.key),
            None,
        )
        .await;
    app.clock.advance(Duration::days(3));
    app.tick().await;
    let while_stopped = app
        .get(&format!("/v2/shipments/{shipment_id}"))
        .await
        .json();
    let resumed = app
        .request(
            Method::PATCH,
            &format!("/v2/shipments/{shipment_id}/resume_tracking"),
            Some(&app.key),
            None,
        )
        .await;
    app.tick().await;

    assert_eq!(stopped.status, StatusCode::OK);
    let stopped = stopped.json();
    assert!(stopped["data"]["attributes"]["line_tracking_stopped_at"].is_string());
    assert_eq!(
        stopped["data"]["attributes"]["line_tracking_stopped_reason"],
        json!("stopped_by_user")
    );
    assert_eq!(
        while_stopped["data"]["attributes"]["line_tracking_last_attempted_at"],
        stopped["data"]["attributes"]["line_tracking_last_attempted_at"],
        "no poll while stopped"
    );
    assert_eq!(
        request_of(&app, &id).await["attributes"]["status"],
        json!("created")
    );
    assert_eq!(
        resumed.json()["data"]["attributes"]["line_tracking_stopped_at"],
        Value::Null
    );
    let after = app
        .get(&format!("/v2/shipments/{shipment_id}"))
        .await
        .json();
    assert_ne!(
        after["data"]["attributes"]["line_tracking_last_attempted_at"],
        stopped["data"]["attributes"]["line_tracking_last_attempted_at"],
        "polled again after resuming"
    );
}

async fn tracking_survives_a_restart_in_the_middle(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-RESTART", "TEST").await;
    // The process dies before any worker ran: the request and its queued poll are stored.

    let restarted = app.restarted();
    tidemark_server::use_cases::tracking::sweep(
        &restarted.engine(),
        restarted.config.scheduler_tick,
    )
    .await
    .unwrap();
    tidemark_server::jobs::runner(&restarted)
        .run_pending()
        .await;

    assert_eq!(
        request_of(&app, &id).await["attributes"]["status"],
        json!("created")
    );
}

async fn shipments_and_containers_are_listed_and_filtered(app: TestApp) {
    let first = app.track("bill_of_lading", "TEST-LIST-1", "TEST").await;
    app.track("bill_of_lading", "TEST-LIST-2", "TEST").await;
    app.run_pending_jobs().await;
    let shipment = shipment_of(&app, &first).await;
    let pol = shipment["data"]["attributes"]["port_of_lading_locode"]
        .as_str()
        .unwrap()
        .to_owned();
    let container_number = shipment["included"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["type"] == json!("container"))
        .unwrap()["attributes"]["number"]
        .as_str()
        .unwrap()
        .to_owned();

    let all = app.get("/v2/shipments").await.json();
    let by_number = app.get("/v2/shipments?number=TEST-LIST-1").await.json();
    let by_container = app
        .get(&format!("/v2/shipments?q={container_number}"))
        .await
        .json();
    let by_pol = app
        .get(&format!("/v2/shipments?filter[port_of_lading]={pol}"))
        .await
        .json();
    let stopped = app
        .get("/v2/shipments?filter[tracking_stopped]=true")
        .await
        .json();
    let containers = app
        .get(&format!("/v2/containers?filter[number]={container_number}"))
        .await
        .json();
    let bad_status = app.get("/v2/containers?filter[status]=sunk").await;

    assert_eq!(all["meta"]["total"], json!(2));
    assert_eq!(by_number["meta"]["total"], json!(1));
    assert_eq!(by_number["data"][0]["id"], shipment["data"]["id"]);
    assert_eq!(by_container["data"][0]["id"], shipment["data"]["id"]);
    assert!(by_pol["meta"]["total"].as_u64().unwrap() >= 1);
    assert_eq!(stopped["meta"]["total"], json!(0));
    assert_eq!(containers["meta"]["total"], json!(1));
    assert_eq!(bad_status.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        bad_status.error_member("source"),
        json!({"parameter": "filter[status]"})
    );
}

async fn another_accounts_shipment_and_container_are_not_found(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-MINE", "TEST").await;
    app.run_pending_jobs().await;
    let shipment = shipment_of(&app, &id).await;
    let shipment_id = shipment["data"]["id"].as_str().unwrap();
    let container_id = shipment["data"]["relationships"]["containers"]["data"][0]["id"]
        .as_str()
        .unwrap();
    let intruder = app.other_account_key().await;

    for path in [
        format!("/v2/shipments/{shipment_id}"),
        format!("/v2/containers/{container_id}"),
        format!("/v2/containers/{container_id}/transport_events"),
    ] {
        let response = app.request(Method::GET, &path, Some(&intruder), None).await;
        assert_eq!(response.status, StatusCode::NOT_FOUND, "{path}");
    }
    let stop = app
        .request(
            Method::PATCH,
            &format!("/v2/shipments/{shipment_id}/stop_tracking"),
            Some(&intruder),
            None,
        )
        .await;
    assert_eq!(stop.status, StatusCode::NOT_FOUND);
}

async fn a_shipment_accepts_only_ref_numbers_and_tags(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-EDIT", "TEST").await;
    app.run_pending_jobs().await;
    let shipment_id = shipment_of(&app, &id).await["data"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/v2/shipments/{shipment_id}");
    let patch = |attributes: Value| {
        app.request(
            Method::PATCH,
            &path,
            Some(&app.key),
            Some((
                "application/json",
                json!({"data": {"type": "shipment", "attributes": attributes}})
                    .to_string()
                    .into_bytes(),
            )),
        )
    };

    let edited = patch(json!({"ref_numbers": ["PO-9"], "tags": ["hot", "hot", "fragile"]})).await;
    let refused = patch(json!({"bill_of_lading_number": "X", "tags": "hot"})).await;

    assert_eq!(edited.status, StatusCode::OK);
    assert_eq!(
        edited.json()["data"]["attributes"]["tags"],
        json!(["hot", "fragile"])
    );
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused.json()["errors"].as_array().unwrap().len(), 2);
}

/// A shipment's document is kept between reads while nothing changes (the store's shipment
/// cache): a user's edit and a carrier's later news each show in the very next read.
async fn a_shipment_read_again_shows_an_edit_and_a_later_poll(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-READ-AGAIN", "TEST").await;
    app.run_pending_jobs().await;
    let first = shipment_of(&app, &id).await;
    let again = shipment_of(&app, &id).await;
    let shipment_id = first["data"]["id"].as_str().unwrap().to_owned();
    let edit = app
        .request(
            Method::PATCH,
            &format!("/v2/shipments/{shipment_id}"),
            Some(&app.key),
            Some((
                "application/json",
                json!({"data": {"type": "shipment", "attributes": {"tags": ["hot"]}}})
                    .to_string()
                    .into_bytes(),
            )),
        )
        .await;
    let edited = shipment_of(&app, &id).await;
    app.clock.advance(Duration::days(60));
    app.tick().await;
    let polled = shipment_of(&app, &id).await;

    assert_eq!(again, first);
    assert_eq!(edit.status, StatusCode::OK);
    assert_eq!(edited["data"]["attributes"]["tags"], json!(["hot"]));
    assert!(edited["data"]["attributes"]["pod_ata_at"].is_null());
    assert!(polled["data"]["attributes"]["pod_ata_at"].is_string());
    assert_eq!(polled["data"]["attributes"]["tags"], json!(["hot"]));
    assert_ne!(polled["included"], edited["included"]);
}

async fn a_tracking_request_includes_its_shipment_by_default(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-INCLUDE", "TEST").await;
    app.run_pending_jobs().await;

    let response = app.get(&format!("/v2/tracking_requests/{id}")).await.json();

    let included = response["included"].as_array().unwrap();
    assert_eq!(included.len(), 1);
    assert_eq!(included[0]["type"], json!("shipment"));
    assert_eq!(
        included[0]["id"],
        response["data"]["relationships"]["tracked_object"]["data"]["id"]
    );
}

async fn a_tracking_request_includes_containers_and_ports_through_its_shipment(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-INCLUDE-2", "TEST").await;
    app.run_pending_jobs().await;

    let response = app
        .get(&format!(
            "/v2/tracking_requests/{id}?include=tracked_object.containers,tracked_object.port_of_lading"
        ))
        .await
        .json();
    let unknown = app
        .get(&format!(
            "/v2/tracking_requests/{id}?include=tracked_object.captain"
        ))
        .await;

    let types: Vec<&str> = response["included"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["type"].as_str().unwrap())
        .collect();
    assert!(
        types.contains(&"shipment") && types.contains(&"container") && types.contains(&"port"),
        "{types:?}"
    );
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        unknown.error_member("source"),
        json!({"parameter": "include"})
    );
}

async fn a_refresh_polls_now_and_has_its_own_limit_of_ten_a_minute(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-REFRESH", "TEST").await;
    app.run_pending_jobs().await;
    let shipment = shipment_of(&app, &id).await;
    let container_id = shipment["data"]["relationships"]["containers"]["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let attempted = shipment["data"]["attributes"]["line_tracking_last_attempted_at"].clone();
    let path = format!("/v2/containers/{container_id}/refresh");
    app.clock.advance(Duration::minutes(10));

    let first = app
        .request(Method::PATCH, &path, Some(&app.key), None)
        .await;
    app.run_pending_jobs().await;
    let mut statuses = Vec::new();
    for _ in 0..10 {
        statuses.push(
            app.request(Method::PATCH, &path, Some(&app.key), None)
                .await
                .status,
        );
    }

    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(
        first.json()["message"],
        json!("Started refresh for Shipping line")
    );
    let after = shipment_of(&app, &id).await;
    assert_ne!(
        after["data"]["attributes"]["line_tracking_last_attempted_at"],
        attempted
    );
    assert_eq!(statuses.iter().filter(|s| **s == StatusCode::OK).count(), 9);
    assert_eq!(statuses.last(), Some(&StatusCode::TOO_MANY_REQUESTS));
    assert_eq!(
        app.get("/v2/shipments").await.status,
        StatusCode::OK,
        "reads are not limited by refreshes"
    );
}

async fn tracking_stops_by_itself_once_every_container_is_returned(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-TO-THE-END", "TEST").await;
    app.run_pending_jobs().await;

    for _ in 0..12 {
        app.clock.advance(Duration::days(10));
        app.tick().await;
    }

    let request = request_of(&app, &id).await;
    let shipment = shipment_of(&app, &id).await;
    assert_eq!(request["attributes"]["status"], json!("tracking_stopped"));
    let reason = shipment["data"]["attributes"]["line_tracking_stopped_reason"]
        .as_str()
        .unwrap();
    assert!(
        ["all_containers_terminated", "past_arrival_window"].contains(&reason),
        "{reason}"
    );
    let containers = app
        .get("/v2/containers?filter[status]=empty_returned")
        .await
        .json();
    assert!(containers["meta"]["total"].as_u64().unwrap() >= 1);
}

async fn every_change_is_recorded_as_a_domain_event_for_notifications(app: TestApp) {
    let failed = app.track("bill_of_lading", "TEST-TR-FAILED", "TEST").await;
    let succeeded = app
        .track("bill_of_lading", "TEST-TR-SUCCEEDED", "TEST")
        .await;
    app.run_pending_jobs().await;
    let account = app
        .app
        .store
        .account_by_name("acme")
        .await
        .unwrap()
        .unwrap();

    let events = app
        .app
        .store
        .domain_events(account.id, None, 1000)
        .await
        .unwrap();

    let about = |request: &str, name: &str| {
        events
            .iter()
            .any(|e| e.event == name && e.reference_id.to_string() == request)
    };
    assert!(about(&failed, "tracking_request.failed"));
    assert!(about(&succeeded, "tracking_request.succeeded"));
    assert!(events.iter().any(|e| e.event == "container.created"));
    assert!(
        events
            .iter()
            .any(|e| e.event.starts_with("container.transport."))
    );
    let before = events.len();

    app.clock.advance(Duration::minutes(1));
    app.tick().await;

    let again = app
        .app
        .store
        .domain_events(account.id, None, 1000)
        .await
        .unwrap();
    assert_eq!(
        again.len(),
        before,
        "a poll that changes nothing announces nothing"
    );
}

fn signed(secret: &str, body: &[u8]) -> String {
    use hmac::Mac;
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

async fn push(
    app: &TestApp,
    scac: &str,
    signature: &str,
    body: &[u8],
) -> crate::helpers::TestResponse {
    app.send(
        axum::http::Request::post(format!("/callbacks/dcsa/{scac}"))
            .header("content-type", "application/json")
            .header("notification-signature", signature)
            .body(axum::body::Body::from(body.to_vec()))
            .unwrap(),
    )
    .await
}

/// A 2.2 push: the departure of bill of lading TESTSCRIPTED from Shanghai.
fn departure_push_of_testscripted() -> Vec<u8> {
    json!([{
        "eventType": "TRANSPORT", "eventClassifierCode": "ACT",
        "eventDateTime": "2026-03-01T10:00:00Z", "transportEventTypeCode": "DEPA",
        "documentReferences": [{"documentReferenceType": "TRD", "documentReferenceValue": "TESTSCRIPTED"}],
        "transportCall": {"UNLocationCode": "CNSHA", "modeOfTransport": "VESSEL"}
    }])
    .to_string()
    .into_bytes()
}

async fn push_app(backend: Backend) -> TestApp {
    let carrier = Arc::new(Scripted {
        scac: "MAEU",
        answers: Mutex::new(vec![Err(CarrierError::NotFound), Ok(sandbox_snapshot())].into()),
    });
    TestApp::build(
        backend,
        &[
            ("carriers.MAEU.base_url", "http://127.0.0.1:9/"),
            ("carriers.MAEU.consumer_key", "k"),
            (
                "carriers.MAEU.notification_secret",
                "s3cret-subscription-key",
            ),
        ],
        vec![carrier],
    )
    .await
    .unwrap()
}

async fn a_signed_carrier_push_polls_the_requests_it_concerns_at_once(app: TestApp) {
    let app = push_app(app.backend).await;
    let id = app.track("bill_of_lading", "TESTSCRIPTED", "MAEU").await;
    app.run_pending_jobs().await;
    assert_eq!(
        request_of(&app, &id).await["attributes"]["status"],
        json!("awaiting_manifest")
    );
    let body = json!([{
        "eventID": "5e51e72c-d872-4d6b-9fbc-1ecb8e6e4fbf",
        "eventType": "TRANSPORT", "eventClassifierCode": "ACT",
        "eventDateTime": "2026-03-01T10:00:00Z", "eventCreatedDateTime": "2026-03-01T10:05:00Z",
        "transportEventTypeCode": "DEPA",
        "documentReferences": [{"documentReferenceType": "TRD", "documentReferenceValue": "TESTSCRIPTED"}],
        "transportCall": {"UNLocationCode": "CNSHA", "modeOfTransport": "VESSEL"}
    }])
    .to_string()
    .into_bytes();

    let response = push(
        &app,
        "maeu",
        &signed("s3cret-subscription-key", &body),
        &body,
    )
    .await;
    app.run_pending_jobs().await;

    assert_eq!(response.status, StatusCode::NO_CONTENT);
    assert_eq!(
        request_of(&app, &id).await["attributes"]["status"],
        json!("created")
    );
}

async fn a_push_to_a_brand_callback_is_checked_with_its_family_secret_and_reaches_the_family(
    app: TestApp,
) {
    let app = push_app(app.backend).await;
    let id = app.track("bill_of_lading", "TESTSCRIPTED", "MAEU").await;
    app.run_pending_jobs().await;
    let body = departure_push_of_testscripted();

    // Sealand (SEAU) is a Maersk brand: Maersk's API sends its pushes, signed with the one
    // secret the operator set for MAEU.
    let response = push(
        &app,
        "SEAU",
        &signed("s3cret-subscription-key", &body),
        &body,
    )
    .await;
    app.run_pending_jobs().await;

    assert_eq!(response.status, StatusCode::NO_CONTENT);
    assert_eq!(
        request_of(&app, &id).await["attributes"]["status"],
        json!("created")
    );
}

async fn a_push_sent_again_is_acknowledged_and_polls_nothing(app: TestApp) {
    let app = push_app(app.backend).await;
    app.track("bill_of_lading", "TESTSCRIPTED", "MAEU").await;
    app.run_pending_jobs().await;
    let body = departure_push_of_testscripted();
    let signature = signed("s3cret-subscription-key", &body);
    push(&app, "MAEU", &signature, &body).await;
    let first_polls = app.run_pending_jobs().await;

    let replayed = push(&app, "MAEU", &signature, &body).await;
    let replay_polls = app.run_pending_jobs().await;

    assert!(first_polls > 0);
    assert_eq!(replayed.status, StatusCode::NO_CONTENT);
    assert_eq!(replay_polls, 0);
}

async fn a_carrier_push_with_a_wrong_signature_or_body_is_refused(app: TestApp) {
    let app = push_app(app.backend).await;
    let body = b"[]".to_vec();

    let unsigned = push(&app, "MAEU", "sha256=00", &body).await;
    let unknown = push(
        &app,
        "MSCU",
        &signed("s3cret-subscription-key", &body),
        &body,
    )
    .await;
    let garbage = push(
        &app,
        "MAEU",
        &signed("s3cret-subscription-key", b"{nope"),
        b"{nope",
    )
    .await;

    assert_eq!(unsigned.status, StatusCode::UNAUTHORIZED);
    // Alike: the callback does not tell which carriers are configured.
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    assert_eq!(garbage.status, StatusCode::BAD_REQUEST);
    assert_eq!(garbage.error_member("status"), json!("400"));
}

async fn a_stopped_shipment_blocks_a_duplicate_and_resumes_cleanly(app: TestApp) {
    let id = app
        .track("bill_of_lading", "TEST-TR-SUCCEEDED", "TEST")
        .await;
    app.run_pending_jobs().await;
    let shipment_id = shipment_of(&app, &id).await["data"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.request(
        Method::PATCH,
        &format!("/v2/shipments/{shipment_id}/stop_tracking"),
        Some(&app.key),
        None,
    )
    .await;

    let duplicate = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": "TEST-TR-SUCCEEDED", "scac": "TEST"
            }}}),
        )
        .await;
    let resumed = app
        .request(
            Method::PATCH,
            &format!("/v2/shipments/{shipment_id}/resume_tracking"),
            Some(&app.key),
            None,
        )
        .await;

    assert_eq!(duplicate.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(duplicate.error_member("code"), json!("duplicate"));
    assert_eq!(resumed.status, StatusCode::OK);
    assert_eq!(
        request_of(&app, &id).await["attributes"]["status"],
        json!("created")
    );
}

async fn a_shipment_its_carrier_stopped_answering_for_stops_being_tracked(app: TestApp) {
    let mut answers = vec![Ok(sandbox_snapshot())];
    answers.extend((0..100).map(|_| Err(CarrierError::NotFound)));
    let app = scripted_app(app.backend, answers).await;
    let id = app.track("bill_of_lading", "TESTSCRIPTED", "MAEU").await;
    app.run_pending_jobs().await;
    assert_eq!(
        request_of(&app, &id).await["attributes"]["status"],
        json!("created")
    );

    for _ in 0..30 {
        app.clock.advance(Duration::days(2));
        app.tick().await;
    }

    let request = request_of(&app, &id).await;
    let shipment = shipment_of(&app, &id).await;
    assert_eq!(request["attributes"]["status"], json!("tracking_stopped"));
    assert!(shipment["data"]["attributes"]["line_tracking_stopped_reason"].is_string());
}

async fn a_list_of_tracking_requests_includes_their_shipments_and_what_is_asked_through_them(
    app: TestApp,
) {
    app.track("bill_of_lading", "TEST-LIST-A", "TEST").await;
    app.track("bill_of_lading", "TEST-LIST-B", "TEST").await;
    app.track("bill_of_lading", "TEST-TR-FAILED", "TEST").await;
    app.run_pending_jobs().await;

    let plain = app.get("/v2/tracking_requests").await.json();
    let with = app
        .get("/v2/tracking_requests?include=tracked_object,tracked_object.containers")
        .await
        .json();

    let shipments_of = |document: &Value| {
        document["included"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["type"] == json!("shipment"))
            .count()
    };
    assert_eq!(shipments_of(&plain), 2, "as Terminal49, by default");
    let included = with["included"].as_array().unwrap();
    assert_eq!(
        included
            .iter()
            .filter(|o| o["type"] == json!("shipment"))
            .count(),
        2
    );
    assert!(included.iter().any(|o| o["type"] == json!("container")));
}

async fn first_container_id(app: &TestApp, request_id: &str) -> String {
    shipment_of(app, request_id).await["data"]["relationships"]["containers"]["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn a_containers_raw_events_are_every_carrier_event_in_time_order(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-RAW-FEED", "TEST").await;
    app.run_pending_jobs().await;
    let container = first_container_id(&app, &id).await;

    let raw = app
        .get(&format!(
            "/v2/containers/{container}/raw_events?page[size]=100"
        ))
        .await
        .json();
    let events = events_of(&app, &container).await;

    let data = raw["data"].as_array().unwrap();
    assert!(
        data.len() >= events.len(),
        "{} raw, {} named",
        data.len(),
        events.len()
    );
    assert!(data.iter().all(|e| e["type"] == json!("raw_event")));
    let timestamps: Vec<&str> = data
        .iter()
        .map(|e| e["attributes"]["timestamp"].as_str().unwrap())
        .collect();
    let mut sorted = timestamps.clone();
    sorted.sort_unstable();
    assert_eq!(timestamps, sorted);
    let indexes: Vec<u64> = data
        .iter()
        .map(|e| e["attributes"]["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, (0..data.len() as u64).collect::<Vec<_>>());
    let loaded = data
        .iter()
        .find(|e| e["attributes"]["event"] == json!("vessel_loaded"))
        .expect("the load is in the raw feed");
    assert!(
        loaded["attributes"]["original_event"]
            .as_str()
            .unwrap()
            .starts_with("EQUIPMENT LOAD ACT")
    );
    assert_eq!(loaded["attributes"]["estimated"], json!(false));
    assert!(loaded["attributes"]["actual_on"].is_string());
    assert!(loaded["attributes"]["timezone"].is_string());
    assert_eq!(
        loaded["relationships"]["location"]["data"]["type"],
        json!("port")
    );
    assert!(
        data.iter()
            .any(|e| e["attributes"]["estimated"] == json!(true)
                && e["attributes"]["estimated_at"].is_string()),
        "estimates are in the feed too"
    );
    assert_eq!(raw["meta"]["total"], json!(data.len()));
}

async fn the_raw_events_of_an_unknown_container_are_not_found(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-RAW-OTHER", "TEST").await;
    app.run_pending_jobs().await;
    let container = first_container_id(&app, &id).await;
    let other = app.other_account_key().await;

    let unknown = app
        .get("/v2/containers/0190f0c4-0000-7000-8000-000000000000/raw_events")
        .await;
    let elsewhere = app
        .request(
            Method::GET,
            &format!("/v2/containers/{container}/raw_events"),
            Some(&other),
            None,
        )
        .await;

    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(elsewhere.status, StatusCode::NOT_FOUND);
}

async fn the_key_that_stopped_tracking_is_the_user_who_stopped_it(app: TestApp) {
    let id = app
        .track("bill_of_lading", "TEST-WHO-STOPPED", "TEST")
        .await;
    app.run_pending_jobs().await;
    let shipment_id = shipment_of(&app, &id).await["data"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let keys = app.get("/v2/api_keys").await.json();

    let stopped = app
        .request(
            Method::PATCH,
            &format!("/v2/shipments/{shipment_id}/stop_tracking"),
            Some(&app.key),
            None,
        )
        .await
        .json();
    let resumed = app
        .request(
            Method::PATCH,
            &format!("/v2/shipments/{shipment_id}/resume_tracking"),
            Some(&app.key),
            None,
        )
        .await
        .json();

    let user = &stopped["data"]["relationships"]["line_tracking_stopped_by_user"]["data"];
    assert_eq!(user["type"], json!("user"));
    assert!(
        keys["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["id"] == user["id"]),
        "the user is one of the account's keys"
    );
    assert_eq!(
        resumed["data"]["relationships"]["line_tracking_stopped_by_user"]["data"],
        Value::Null
    );
}

async fn a_new_arrival_estimate_is_announced_once_per_shipment_as_an_estimated_event(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-ETA-NEWS", "TEST").await;
    app.run_pending_jobs().await;
    let account = app
        .app
        .store
        .account_by_name("acme")
        .await
        .unwrap()
        .unwrap();
    let shipment = shipment_of(&app, &id).await;
    let containers = shipment["data"]["relationships"]["containers"]["data"]
        .as_array()
        .unwrap()
        .len();

    let events = app
        .app
        .store
        .domain_events(account.id, None, 1000)
        .await
        .unwrap();

    let arrivals: Vec<_> = events
        .iter()
        .filter(|e| e.event == "shipment.estimated.arrival")
        .collect();
    let estimates = events
        .iter()
        .filter(|e| e.event == "container.transport.estimated.vessel_arrived")
        .count();
    assert_eq!(
        arrivals.len(),
        1,
        "{containers} containers, one announcement"
    );
    assert_eq!(arrivals[0].reference_type, "estimated_event");
    assert!(estimates >= 1);
    assert!(
        events
            .iter()
            .any(|e| e.reference_type == "transport_event"
                && e.reference_id == arrivals[0].reference_id),
        "the estimated event presents the recorded estimate"
    );
}

async fn a_tracking_request_shows_the_key_that_submitted_it_as_its_user(app: TestApp) {
    let id = app.track("bill_of_lading", "TEST-WHO-ASKED", "TEST").await;
    let keys = app.get("/v2/api_keys").await.json();

    let request = request_of(&app, &id).await;

    let user = &request["relationships"]["user"]["data"];
    assert_eq!(user["type"], json!("user"));
    assert!(
        keys["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["id"] == user["id"]),
        "the user is one of the account's keys"
    );
}
