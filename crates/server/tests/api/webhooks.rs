//! Webhooks end to end: subscriptions, signed deliveries of tracking events to a real HTTP
//! receiver, retries with backoff, delivery logs, replay, examples and test deliveries.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode};
use base64::Engine as _;
use chrono::Duration;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use tidemark_domain::Clock as _;

use crate::helpers::{TestApp, TestResponse};
use crate::on_both_backends;

on_both_backends!(
    settings = &[("webhooks_allow_private", "true")];
    a_webhook_is_created_with_a_secret_then_read_changed_and_deleted,
    every_problem_with_a_webhook_is_reported_at_its_attribute,
    tracking_events_are_delivered_signed_to_the_subscribed_webhook,
    a_failing_receiver_is_retried_with_backoff_and_every_attempt_is_logged,
    a_notification_is_redelivered_on_request,
    a_rotated_secret_signs_beside_the_new_one,
    the_event_catalogue_is_grouped_with_descriptions,
    an_example_needs_a_known_event,
    a_test_delivery_shows_what_was_sent_and_answered,
    notifications_are_filtered_and_include_their_logs,
    a_receivers_retry_after_is_honoured,
    a_notification_fails_after_twelve_retries_and_the_webhook_is_deactivated_after_five_days,
    a_delivery_cut_off_by_a_crash_is_made_after_the_restart,
    stopping_tracking_pauses_the_shipments_notifications,
    each_delivery_has_every_member_of_terminal49s_example_for_its_event,
    a_slow_receiver_does_not_hold_up_the_others,
);

mod private_addresses {
    use super::*;

    on_both_backends!(
        a_webhook_to_a_private_address_is_refused_by_default,
        a_hostname_that_resolves_to_a_private_address_is_refused_when_delivering,
    );
}

/// An HTTP receiver on a local port that records what it gets and answers `status`.
#[derive(Clone)]
struct Receiver {
    url: String,
    status: Arc<AtomicU16>,
    retry_after: Arc<Mutex<Option<String>>>,
    received: Arc<Mutex<Vec<(HeaderMap, Bytes)>>>,
}

impl Receiver {
    async fn start() -> Self {
        let status = Arc::new(AtomicU16::new(200));
        let retry_after: Arc<Mutex<Option<String>>> = Arc::default();
        let received: Arc<Mutex<Vec<(HeaderMap, Bytes)>>> = Arc::default();
        let (answer, wait, log) = (
            Arc::clone(&status),
            Arc::clone(&retry_after),
            Arc::clone(&received),
        );
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let (answer, wait, log) =
                    (Arc::clone(&answer), Arc::clone(&wait), Arc::clone(&log));
                async move {
                    log.lock().unwrap().push((headers, body));
                    let status = StatusCode::from_u16(answer.load(Ordering::SeqCst)).unwrap();
                    let mut response = axum::response::IntoResponse::into_response(status);
                    if let Some(seconds) = wait.lock().unwrap().clone() {
                        response
                            .headers_mut()
                            .insert("retry-after", seconds.parse().unwrap());
                    }
                    response
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address: SocketAddr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            url: format!("http://{address}/hook"),
            status,
            retry_after,
            received,
        }
    }

    fn answer(&self, status: u16) {
        self.status.store(status, Ordering::SeqCst);
    }

    fn deliveries(&self) -> Vec<(HeaderMap, Bytes)> {
        self.received.lock().unwrap().clone()
    }
}

async fn create_webhook(app: &TestApp, url: &str, events: &[&str]) -> TestResponse {
    app.post_json(
        "/v2/webhooks",
        &json!({"data": {"type": "webhook", "attributes": {
            "url": url, "events": events,
            "headers": [{"name": "x-team", "value": "ops"}],
        }}}),
    )
    .await
}

async fn webhook_of(app: &TestApp, url: &str, events: &[&str]) -> Value {
    let response = create_webhook(app, url, events).await;
    assert_eq!(
        response.status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    response.json()["data"].clone()
}

async fn track(app: &TestApp, number: &str) {
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": number, "scac": "TEST"
            }}}),
        )
        .await;
    assert_eq!(response.status, StatusCode::CREATED);
}

async fn send(app: &TestApp, method: Method, path: &str, body: Option<&Value>) -> TestResponse {
    app.request(
        method,
        path,
        Some(&app.key),
        body.map(|b| ("application/json", serde_json::to_vec(b).unwrap())),
    )
    .await
}

fn t49_signature(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

fn standard_signature(secret: &str, id: &str, timestamp: &str, body: &[u8]) -> String {
    let key = base64::engine::general_purpose::STANDARD
        .decode(secret.trim_start_matches("whsec_"))
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    )
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers.get(name).unwrap().to_str().unwrap()
}

async fn a_webhook_is_created_with_a_secret_then_read_changed_and_deleted(app: TestApp) {
    let created = webhook_of(
        &app,
        "https://example.com/hook",
        &["tracking_request.succeeded"],
    )
    .await;
    let id = created["id"].as_str().unwrap();

    let changed = send(
        &app,
        Method::PATCH,
        &format!("/v2/webhooks/{id}"),
        Some(&json!({"data": {"type": "webhook", "attributes": {
            "active": false, "events": ["tracking_request.failed", "container.created"]
        }}})),
    )
    .await;
    let listed = app.get("/v2/webhooks").await.json();
    let deleted = send(&app, Method::DELETE, &format!("/v2/webhooks/{id}"), None).await;
    let gone = app.get(&format!("/v2/webhooks/{id}")).await;

    assert!(
        created["attributes"]["secret"]
            .as_str()
            .unwrap()
            .starts_with("whsec_")
    );
    assert_eq!(created["attributes"]["active"], json!(true));
    assert_eq!(
        created["attributes"]["headers"],
        json!([{"name": "X-Team", "value": "ops"}])
    );
    assert_eq!(changed.status, StatusCode::OK);
    assert_eq!(changed.json()["data"]["attributes"]["active"], json!(false));
    assert_eq!(
        changed.json()["data"]["attributes"]["url"],
        json!("https://example.com/hook")
    );
    assert_eq!(listed["meta"]["total"], json!(1));
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
}

async fn every_problem_with_a_webhook_is_reported_at_its_attribute(app: TestApp) {
    let response = app
        .post_json(
            "/v2/webhooks",
            &json!({"data": {"type": "webhook", "attributes": {
                "url": "ftp://example.com",
                "events": ["container.created", "no.such.event", "container.created"],
                "headers": [{"name": "Content-Type", "value": "text/plain"}],
            }}}),
        )
        .await;

    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    let errors = response.json()["errors"].clone();
    let pointers: Vec<&str> = errors
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["source"]["pointer"].as_str().unwrap())
        .collect();
    assert_eq!(
        pointers,
        vec![
            "/data/attributes/url",
            "/data/attributes/events/1",
            "/data/attributes/events/2",
            "/data/attributes/headers/0/name",
        ]
    );
    assert_eq!(
        app.get("/v2/webhooks").await.json()["meta"]["total"],
        json!(0)
    );
}

async fn a_webhook_to_a_private_address_is_refused_by_default(app: TestApp) {
    let response = create_webhook(&app, "http://127.0.0.1:9/hook", &["container.created"]).await;

    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(response.error_member("code"), json!("refused_address"));
}

async fn tracking_events_are_delivered_signed_to_the_subscribed_webhook(app: TestApp) {
    let receiver = Receiver::start().await;
    let webhook = webhook_of(
        &app,
        &receiver.url,
        &[
            "tracking_request.succeeded",
            "container.transport.vessel_loaded",
        ],
    )
    .await;
    let secret = webhook["attributes"]["secret"].as_str().unwrap().to_owned();

    track(&app, "TEST-HOOKED").await;
    app.run_pending_jobs().await;
    app.run_pending_jobs().await;

    let deliveries = receiver.deliveries();
    assert!(deliveries.len() >= 2, "{} deliveries", deliveries.len());
    let events: Vec<String> = deliveries
        .iter()
        .map(|(_, body)| {
            serde_json::from_slice::<Value>(body).unwrap()["data"]["attributes"]["event"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(events.contains(&"tracking_request.succeeded".to_owned()));
    assert!(events.contains(&"container.transport.vessel_loaded".to_owned()));
    for (headers, body) in &deliveries {
        let document: Value = serde_json::from_slice(body).unwrap();
        let id = document["data"]["id"].as_str().unwrap();
        assert_eq!(header(headers, "content-type"), "application/json");
        assert!(header(headers, "user-agent").starts_with("Tidemark"));
        assert_eq!(header(headers, "x-team"), "ops");
        assert_eq!(
            header(headers, "x-t49-webhook-signature"),
            t49_signature(&secret, body)
        );
        assert_eq!(header(headers, "webhook-id"), id);
        assert_eq!(
            header(headers, "webhook-signature"),
            standard_signature(&secret, id, header(headers, "webhook-timestamp"), body)
        );
        let reference = &document["data"]["relationships"]["reference_object"]["data"];
        assert!(
            document["included"]
                .as_array()
                .unwrap()
                .iter()
                .any(|o| o["id"] == reference["id"] && o["type"] == reference["type"]),
            "the reference object is included"
        );
    }
    let succeeded = deliveries
        .iter()
        .map(|(_, body)| serde_json::from_slice::<Value>(body).unwrap())
        .find(|d| d["data"]["attributes"]["event"] == json!("tracking_request.succeeded"))
        .unwrap();
    let types: Vec<&str> = succeeded["included"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["type"].as_str().unwrap())
        .collect();
    assert!(types.contains(&"shipment") && types.contains(&"tracking_request"));
    let notifications = app
        .get("/v2/webhook_notifications?filter[delivery_status]=succeeded")
        .await
        .json();
    assert_eq!(notifications["meta"]["total"], json!(deliveries.len()));
}

async fn a_failing_receiver_is_retried_with_backoff_and_every_attempt_is_logged(app: TestApp) {
    let receiver = Receiver::start().await;
    receiver.answer(503);
    webhook_of(&app, &receiver.url, &["tracking_request.succeeded"]).await;
    track(&app, "TEST-FLAKY").await;
    app.run_pending_jobs().await;
    app.run_pending_jobs().await;

    let pending = app
        .get("/v2/webhook_notifications?include=webhook_notification_logs")
        .await
        .json();
    assert_eq!(
        pending["data"][0]["attributes"]["delivery_status"],
        json!("pending")
    );
    let log = &pending["included"][0];
    assert_eq!(log["type"], json!("webhook_notification_log"));
    assert_eq!(log["attributes"]["response_status"], json!(503));

    app.clock.advance(Duration::seconds(30));
    app.tick().await;
    assert_eq!(receiver.deliveries().len(), 1, "not before its retry time");

    receiver.answer(204);
    app.clock.advance(Duration::minutes(1));
    app.tick().await;

    let id = pending["data"][0]["id"].as_str().unwrap();
    let delivered = app
        .get(&format!(
            "/v2/webhook_notifications/{id}?include=webhook_notification_logs"
        ))
        .await
        .json();
    assert_eq!(receiver.deliveries().len(), 2);
    assert_eq!(
        delivered["data"]["attributes"]["delivery_status"],
        json!("succeeded")
    );
    assert_eq!(
        delivered["data"]["relationships"]["webhook_notification_logs"]["data"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let (first, second) = (&receiver.deliveries()[0], &receiver.deliveries()[1]);
    assert_eq!(first.1, second.1, "a retry sends the same body");
    assert_eq!(
        header(&first.0, "webhook-id"),
        header(&second.0, "webhook-id")
    );
}

async fn a_notification_is_redelivered_on_request(app: TestApp) {
    let receiver = Receiver::start().await;
    webhook_of(&app, &receiver.url, &["tracking_request.succeeded"]).await;
    track(&app, "TEST-AGAIN").await;
    app.run_pending_jobs().await;
    app.run_pending_jobs().await;
    let list = app.get("/v2/webhook_notifications").await.json();
    let id = list["data"][0]["id"].as_str().unwrap();

    let redelivered = send(
        &app,
        Method::POST,
        &format!("/v2/webhook_notifications/{id}/redeliver"),
        None,
    )
    .await;
    app.run_pending_jobs().await;

    assert_eq!(redelivered.status, StatusCode::ACCEPTED);
    assert_eq!(receiver.deliveries().len(), 2);
    assert_eq!(
        receiver.deliveries()[0].1,
        receiver.deliveries()[1].1,
        "the same notification, byte for byte"
    );
}

async fn a_rotated_secret_signs_beside_the_new_one(app: TestApp) {
    let receiver = Receiver::start().await;
    let webhook = webhook_of(&app, &receiver.url, &["tracking_request.succeeded"]).await;
    let old = webhook["attributes"]["secret"].as_str().unwrap().to_owned();
    let id = webhook["id"].as_str().unwrap();

    let rotated = send(
        &app,
        Method::POST,
        &format!("/v2/webhooks/{id}/rotate_secret"),
        None,
    )
    .await
    .json();
    track(&app, "TEST-ROTATED").await;
    app.run_pending_jobs().await;
    app.run_pending_jobs().await;

    let new = rotated["data"]["attributes"]["secret"].as_str().unwrap();
    assert_ne!(new, old);
    let (headers, body) = &receiver.deliveries()[0];
    let message = header(headers, "webhook-id");
    let at = header(headers, "webhook-timestamp");
    assert_eq!(
        header(headers, "webhook-signature"),
        format!(
            "{} {}",
            standard_signature(new, message, at, body),
            standard_signature(&old, message, at, body)
        )
    );
    assert_eq!(
        header(headers, "x-t49-webhook-signature"),
        t49_signature(new, body)
    );
}

async fn the_event_catalogue_is_grouped_with_descriptions(app: TestApp) {
    let catalogue = app.get("/v2/webhooks/events").await.json();

    let groups = catalogue["data"].as_array().unwrap();
    assert_eq!(groups[0]["id"], json!("tracking-request-events"));
    assert_eq!(groups[0]["type"], json!("webhook_event_category"));
    let events: usize = groups
        .iter()
        .map(|g| g["attributes"]["events"].as_array().unwrap().len())
        .sum();
    assert_eq!(events, 43);
    assert!(groups[0]["attributes"]["events"][0]["description"].is_string());
}

async fn an_example_needs_a_known_event(app: TestApp) {
    let missing = app.get("/v2/webhook_notifications/examples").await;
    let unknown = app
        .get("/v2/webhook_notifications/examples?event=nope")
        .await;
    let known = app
        .get("/v2/webhook_notifications/examples?event=container.transport.vessel_loaded")
        .await;

    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        missing.error_member("source"),
        json!({"parameter": "event"})
    );
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert_eq!(known.status, StatusCode::OK);
    assert_eq!(
        known.json()["data"][0]["relationships"]["reference_object"]["data"]["type"],
        json!("transport_event")
    );
}

async fn a_test_delivery_shows_what_was_sent_and_answered(app: TestApp) {
    let receiver = Receiver::start().await;
    receiver.answer(202);

    let response = app
        .post_json(
            "/v2/webhooks/trigger",
            &json!({"url": receiver.url, "event": "tracking_request.succeeded", "secret": "s3cret"}),
        )
        .await;
    let blank = app
        .post_json(
            "/v2/webhooks/trigger",
            &json!({"event": "tracking_request.succeeded"}),
        )
        .await;

    assert_eq!(response.status, StatusCode::OK);
    let result = response.json();
    assert_eq!(result["succeeded"], json!(true));
    assert_eq!(result["status_code"], json!(202));
    let (headers, body) = &receiver.deliveries()[0];
    assert_eq!(
        result["request_body"].as_str().unwrap().as_bytes(),
        body.as_ref()
    );
    assert_eq!(
        header(headers, "x-t49-webhook-signature"),
        t49_signature("s3cret", body)
    );
    assert_eq!(blank.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(blank.error_member("detail"), json!("url is required"));
}

async fn notifications_are_filtered_and_include_their_logs(app: TestApp) {
    let receiver = Receiver::start().await;
    let webhook = webhook_of(
        &app,
        &receiver.url,
        &["tracking_request.succeeded", "container.created"],
    )
    .await;
    track(&app, "TEST-FILTERS").await;
    app.run_pending_jobs().await;
    app.run_pending_jobs().await;
    let webhook_id = webhook["id"].as_str().unwrap();

    let created = app
        .get("/v2/webhook_notifications?filter[event]=container.created")
        .await
        .json();
    let by_webhook = app
        .get(&format!(
            "/v2/webhook_notifications?filter[webhook_id]={webhook_id}&include=webhook,reference_object"
        ))
        .await
        .json();
    let bad = app
        .get("/v2/webhook_notifications?filter[delivery_status]=lost")
        .await;
    let other = app.other_account_key().await;
    let id = created["data"][0]["id"].as_str().unwrap();
    let elsewhere = app
        .request(
            Method::GET,
            &format!("/v2/webhook_notifications/{id}"),
            Some(&other),
            None,
        )
        .await;

    assert!(created["meta"]["total"].as_u64().unwrap() >= 1);
    assert!(
        created["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["attributes"]["event"] == json!("container.created"))
    );
    let included: Vec<&str> = by_webhook["included"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["type"].as_str().unwrap())
        .collect();
    assert!(included.contains(&"webhook"));
    assert!(included.contains(&"container_created_event"));
    assert!(included.contains(&"tracking_request"));
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert_eq!(elsewhere.status, StatusCode::NOT_FOUND);
}

async fn first_notification(app: &TestApp) -> Value {
    app.get("/v2/webhook_notifications?include=webhook_notification_logs")
        .await
        .json()
}

async fn a_receivers_retry_after_is_honoured(app: TestApp) {
    let receiver = Receiver::start().await;
    receiver.answer(429);
    webhook_of(&app, &receiver.url, &["tracking_request.succeeded"]).await;
    // The receiver asks for ten minutes, longer than the first scheduled retry (1 minute).
    *receiver.retry_after.lock().unwrap() = Some("600".to_owned());
    track(&app, "TEST-SLOW-DOWN").await;
    app.run_pending_jobs().await;
    app.run_pending_jobs().await;

    app.clock.advance(Duration::minutes(5));
    app.tick().await;
    let waited = receiver.deliveries().len();
    receiver.answer(200);
    app.clock.advance(Duration::minutes(6));
    app.tick().await;

    assert_eq!(waited, 1, "no retry before the receiver's Retry-After");
    assert_eq!(receiver.deliveries().len(), 2);
    let notifications = first_notification(&app).await;
    assert_eq!(
        notifications["data"][0]["attributes"]["delivery_status"],
        json!("succeeded")
    );
}

async fn a_notification_fails_after_twelve_retries_and_the_webhook_is_deactivated_after_five_days(
    app: TestApp,
) {
    let receiver = Receiver::start().await;
    receiver.answer(500);
    let webhook = webhook_of(&app, &receiver.url, &["tracking_request.succeeded"]).await;
    track(&app, "TEST-DOWN").await;
    app.run_pending_jobs().await;
    app.run_pending_jobs().await;

    // Each retry comes at its scheduled time, give or take 10 % jitter.
    for minutes in tidemark_domain::webhook::RETRY_SCHEDULE_MINUTES {
        app.clock.advance(Duration::minutes(minutes * 11 / 10 + 1));
        app.tick().await;
    }

    let notifications = first_notification(&app).await;
    assert_eq!(
        receiver.deliveries().len(),
        13,
        "the first attempt and 12 retries"
    );
    assert_eq!(
        notifications["data"][0]["attributes"]["delivery_status"],
        json!("failed")
    );
    assert_eq!(
        notifications["data"][0]["relationships"]["webhook_notification_logs"]["data"]
            .as_array()
            .unwrap()
            .len(),
        13
    );
    let id = webhook["id"].as_str().unwrap();
    let still = app.get(&format!("/v2/webhooks/{id}")).await.json();
    assert_eq!(
        still["data"]["attributes"]["active"],
        json!(true),
        "three days in"
    );

    app.clock.advance(Duration::days(2));
    track(&app, "TEST-STILL-DOWN").await;
    app.run_pending_jobs().await;
    app.run_pending_jobs().await;

    let after = app.get(&format!("/v2/webhooks/{id}")).await.json();
    assert_eq!(after["data"]["attributes"]["active"], json!(false));
}

async fn a_delivery_cut_off_by_a_crash_is_made_after_the_restart(app: TestApp) {
    let receiver = Receiver::start().await;
    webhook_of(&app, &receiver.url, &["tracking_request.succeeded"]).await;
    track(&app, "TEST-CRASH").await;
    // The poll records the shipment and queues its delivery; then a worker takes the queued
    // jobs and dies before running them.
    let account = app
        .app
        .store
        .account_by_name("acme")
        .await
        .unwrap()
        .unwrap();
    let requests = app.get("/v2/tracking_requests").await.json();
    let request = requests["data"][0]["id"].as_str().unwrap().parse().unwrap();
    tidemark_server::use_cases::tracking::engine::poll(
        &app.app.engine(),
        account.id,
        tidemark_domain::TrackingRequestId(request),
        true,
    )
    .await
    .unwrap();
    let claimed = app
        .app
        .store
        .claim_jobs(app.clock.now(), Duration::minutes(5), 10)
        .await
        .unwrap();
    assert!(claimed.iter().any(|job| job.kind == "deliver_webhook"));

    app.clock.advance(Duration::minutes(6));
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

    assert_eq!(receiver.deliveries().len(), 1);
    let notifications = first_notification(&app).await;
    assert_eq!(
        notifications["data"][0]["attributes"]["delivery_status"],
        json!("succeeded")
    );
}

async fn stopping_tracking_pauses_the_shipments_notifications(app: TestApp) {
    let receiver = Receiver::start().await;
    webhook_of(&app, &receiver.url, &["tracking_request.tracking_stopped"]).await;
    track(&app, "TEST-PAUSED").await;
    app.run_pending_jobs().await;
    let shipments = app.get("/v2/shipments").await.json();
    let id = shipments["data"][0]["id"].as_str().unwrap();

    let stopped = send(
        &app,
        Method::PATCH,
        &format!("/v2/shipments/{id}/stop_tracking"),
        None,
    )
    .await;
    app.clock.advance(Duration::days(2));
    app.tick().await;

    assert_eq!(stopped.status, StatusCode::OK);
    assert_eq!(
        app.get("/v2/webhook_notifications").await.json()["meta"]["total"],
        json!(0)
    );
    assert!(receiver.deliveries().is_empty());
}

async fn a_hostname_that_resolves_to_a_private_address_is_refused_when_delivering(app: TestApp) {
    let receiver = Receiver::start().await;
    let port = receiver
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/hook");
    // Stored as an older release or another process might have: validation would refuse it.
    let account = app
        .app
        .store
        .account_by_name("acme")
        .await
        .unwrap()
        .unwrap();
    let now = app.clock.now();
    app.app
        .store
        .create_webhook(&tidemark_domain::Webhook {
            id: tidemark_domain::WebhookId(uuid::Uuid::from_u128(42)),
            account_id: account.id,
            url: format!("http://localhost:{port}/hook"),
            active: true,
            events: vec!["tracking_request.succeeded".to_owned()],
            headers: Vec::new(),
            secret: "whsec_c2VjcmV0c2VjcmV0c2VjcmV0".to_owned(),
            previous_secret: None,
            previous_secret_expires_at: None,
            failing_since: None,
            created_at: now,
            updated_at: now,
        })
        .await
        .unwrap();

    track(&app, "TEST-REBIND").await;
    app.run_pending_jobs().await;
    app.run_pending_jobs().await;

    assert!(receiver.deliveries().is_empty());
    let notifications = first_notification(&app).await;
    let log = &notifications["included"][0]["attributes"];
    assert!(
        log["error"]
            .as_str()
            .unwrap()
            .starts_with("refused address"),
        "{log}"
    );
    assert_eq!(log["response_status"], Value::Null);
}

fn keys(object: &Value, member: &str) -> std::collections::BTreeSet<String> {
    object[member]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

async fn each_delivery_has_every_member_of_terminal49s_example_for_its_event(app: TestApp) {
    let receiver = Receiver::start().await;
    let events: Vec<&str> = tidemark_server::use_cases::webhooks::catalogue::catalogue()
        .iter()
        .map(|e| e.name)
        .collect();
    webhook_of(&app, &receiver.url, &events).await;
    track(&app, "TEST-SHAPES").await;
    app.run_pending_jobs().await;
    app.run_pending_jobs().await;

    let examples = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/reference/terminal49/webhook-examples"
    );
    let mut compared = std::collections::BTreeSet::new();
    for (_, body) in receiver.deliveries() {
        let ours: Value = serde_json::from_slice(&body).unwrap();
        let event = ours["data"]["attributes"]["event"]
            .as_str()
            .unwrap()
            .to_owned();
        let Ok(text) = std::fs::read_to_string(format!("{examples}/{event}.json")) else {
            continue;
        };
        let theirs: Value = serde_json::from_str(&text).unwrap();
        for member in ["attributes", "relationships"] {
            assert_eq!(
                keys(&ours["data"], member),
                keys(&theirs["data"], member),
                "{event}: data.{member}"
            );
        }
        assert_eq!(
            ours["data"]["relationships"]["reference_object"]["data"]["type"],
            theirs["data"]["relationships"]["reference_object"]["data"]["type"],
            "{event}"
        );
        for included in ours["included"].as_array().unwrap() {
            let kind = included["type"].as_str().unwrap();
            let Some(example) = theirs["included"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["type"] == json!(kind))
            else {
                continue;
            };
            for member in ["attributes", "relationships"] {
                let missing: Vec<String> = keys(example, member)
                    .difference(&keys(included, member))
                    .cloned()
                    .collect();
                assert!(
                    missing.is_empty(),
                    "{event}: {kind}.{member} lacks {missing:?}"
                );
            }
        }
        compared.insert(event);
    }
    for event in [
        "tracking_request.succeeded",
        "container.created",
        "container.transport.vessel_loaded",
        "container.transport.estimated.vessel_arrived",
        "shipment.estimated.arrival",
    ] {
        assert!(
            compared.contains(event),
            "{event} was delivered and compared: {compared:?}"
        );
    }
}

/// A receiver that holds every request until released, telling when one arrives.
async fn held_receiver() -> (String, Arc<tokio::sync::Notify>, Arc<tokio::sync::Notify>) {
    let (arrived, release) = (
        Arc::new(tokio::sync::Notify::new()),
        Arc::new(tokio::sync::Notify::new()),
    );
    let (on_arrival, on_release) = (Arc::clone(&arrived), Arc::clone(&release));
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let (on_arrival, on_release) = (Arc::clone(&on_arrival), Arc::clone(&on_release));
            async move {
                on_arrival.notify_one();
                on_release.notified().await;
                StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}/hook"), arrived, release)
}

async fn a_slow_receiver_does_not_hold_up_the_others(app: TestApp) {
    let (slow_url, slow_arrived, release) = held_receiver().await;
    let fast = Receiver::start().await;
    webhook_of(&app, &slow_url, &["tracking_request.succeeded"]).await;
    webhook_of(&app, &fast.url, &["tracking_request.succeeded"]).await;
    track(&app, "TEST-SLOW-AND-FAST").await;

    let workers = tokio::spawn({
        let runner = tidemark_server::jobs::runner(&app.app);
        async move {
            // The poll, then the deliveries: one job per webhook, run side by side.
            runner.run_pending().await;
            runner.run_pending().await
        }
    });
    let guard = std::time::Duration::from_secs(30);
    tokio::time::timeout(guard, slow_arrived.notified())
        .await
        .expect("the slow receiver got its request");
    // Wait until the fast receiver's delivery is recorded; the slow one is still held.
    let meanwhile = tokio::time::timeout(guard, async {
        loop {
            let succeeded = app
                .get("/v2/webhook_notifications?filter[delivery_status]=succeeded")
                .await
                .json();
            if succeeded["meta"]["total"] != json!(0) {
                return succeeded;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the fast receiver's delivery is recorded while the slow one is held");
    release.notify_one();
    tokio::time::timeout(guard, workers)
        .await
        .expect("the workers finish once released")
        .unwrap();

    assert_eq!(meanwhile["meta"]["total"], json!(1));
    assert_eq!(fast.deliveries().len(), 1);
    let after = app
        .get("/v2/webhook_notifications?filter[delivery_status]=succeeded")
        .await
        .json();
    assert_eq!(after["meta"]["total"], json!(2));
}
