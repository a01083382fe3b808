//! How long a user waits for a webhook: end to end on an idle server, and under a steady
//! load of notifications.
//!
//! `cargo bench -p tidemark-server --bench webhook_latency` (SQLite; PostgreSQL too when
//! `TIDEMARK_TEST_POSTGRES_URL` is set). Each backend gets a whole process's worth of
//! Tidemark in this process: the HTTP API on a loopback port, the workers (`serve`'s
//! defaults: 8 at once, the idle look at the queue every 500 ms) and the in-process sandbox
//! carrier, with a webhook receiver on another loopback port.
//!
//! 1. **Idle**: 25 tracking requests for new `TEST` numbers, one after another, each
//!    `POST /v2/tracking_requests` over HTTP; the time from the POST's response to the
//!    receiver getting that request's `tracking_request.succeeded` webhook (the first
//!    carrier poll, the tracking result's write, the delivery job, the signed POST).
//! 2. **Under load**: `LOAD_SECONDS` seconds of tracking requests failing at
//!    `LOAD_REQUESTS_PER_SECOND`, each announced (as a poll would: written with its domain
//!    event, then the deliveries queued) to `LOAD_WEBHOOKS` webhooks: 500 notifications a
//!    second. The time from each notification's creation (its `created_at`, set before the
//!    write) to the receiver's answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};
use chrono::{DateTime, Utc};
use tidemark_domain::{
    ApiKeyScope, Clock, FailedReason, SystemClock, TrackingRequestStatus, UuidV7Ids,
};
use tidemark_geo::reference::ReferenceData;
use tidemark_server::app::App;
use tidemark_server::config::Config;
use tidemark_server::parts::carriers::{Carriers, start_in_process_sandbox};
use tidemark_server::use_cases::tracking::engine;
use tidemark_server::use_cases::webhooks::manage::{self, WebhookInput};
use tidemark_store::{NotificationFilter, PageRequest, Store};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[path = "support/poll.rs"]
#[expect(dead_code, reason = "this benchmark records results its own way")]
mod poll;

const IDLE_REQUESTS: usize = 25;
const LOAD_WEBHOOKS: usize = 10;
const LOAD_REQUESTS_PER_SECOND: u64 = 50;
const LOAD_SECONDS: u64 = 10;
/// A webhook that has not arrived by then counts as lost and stops the run.
const PATIENCE: Duration = Duration::from_secs(60);

/// What the receiver saw: the `webhook-id`, the body, and when (the clock's time).
struct Arrival {
    id: String,
    body: String,
    at: DateTime<Utc>,
    instant: Instant,
}

async fn receiver() -> (String, mpsc::UnboundedReceiver<Arrival>) {
    let (sender, arrivals) = mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: String| {
            let sender = sender.clone();
            async move {
                let id = headers
                    .get("webhook-id")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                let _ = sender.send(Arrival {
                    id,
                    body,
                    at: SystemClock.now(),
                    instant: Instant::now(),
                });
                StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the receiver");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}/hook"), arrivals)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short list"
    )]
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

/// A running Tidemark on `store`: its API's base URL, a key, and the app.
async fn start(store: Arc<dyn Store>, shutdown: &CancellationToken) -> (String, String, Arc<App>) {
    let config = Config::from_pairs(&[
        ("webhooks_allow_private", "true"),
        ("rate_limit_per_minute", "1000000"),
        ("storage_url", "memory://"),
    ])
    .expect("config");
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let mut carriers = Carriers::default();
    carriers.insert(
        start_in_process_sandbox(
            ReferenceData::embedded(),
            Arc::clone(&clock),
            shutdown.clone(),
        )
        .await
        .expect("sandbox carrier"),
    );
    let app = Arc::new(App::new(config, store, clock, Arc::new(UuidV7Ids)).with_carriers(carriers));
    let account = tidemark_server::use_cases::accounts::find_or_create_account(&app, "bench")
        .await
        .expect("account");
    let key =
        tidemark_server::use_cases::accounts::issue_key(&app, account.id, ApiKeyScope::ReadWrite)
            .await
            .expect("key");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the API");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(Arc::clone(&app).serve(listener, shutdown.clone()));
    tokio::spawn(Arc::clone(&app).run_workers(shutdown.clone()));
    (base, key.secret.expose().to_owned(), app)
}

async fn subscribe(app: &App, account: tidemark_domain::AccountId, url: &str, event: &str) {
    manage::create(
        app,
        app.config.webhooks_allow_private,
        account,
        WebhookInput {
            url: Some(url.to_owned()),
            events: Some(vec![event.to_owned()]),
            ..WebhookInput::default()
        },
    )
    .await
    .expect("webhook");
}

/// Phase 1: POST → `tracking_request.succeeded` at the receiver, one request at a time.
async fn idle(name: &str, base: &str, key: &str, app: &App) {
    let (url, mut arrivals) = receiver().await;
    let account = app
        .store
        .account_by_name("bench")
        .await
        .expect("account")
        .expect("exists");
    subscribe(app, account.id, &url, "tracking_request.succeeded").await;
    tidemark_carriers::tls::install_provider();
    let http = reqwest::Client::builder().build().expect("client");
    let run = uuid::Uuid::from_u128(u128::from(SystemClock.now().timestamp_subsec_nanos()));
    let mut latencies = Vec::with_capacity(IDLE_REQUESTS);
    for i in 0..IDLE_REQUESTS {
        let number = format!("TEST-LAT-{}-{i}", &run.simple().to_string()[24..]);
        let response = http
            .post(format!("{base}/v2/tracking_requests"))
            .header("Authorization", format!("Token {key}"))
            .header("Content-Type", "application/vnd.api+json")
            .body(
                serde_json::json!({"data": {"type": "tracking_request", "attributes": {
                    "request_type": "bill_of_lading", "request_number": number, "scac": "TEST"
                }}})
                .to_string(),
            )
            .send()
            .await
            .expect("POST");
        let returned = Instant::now();
        assert!(
            response.status().is_success(),
            "POST /v2/tracking_requests: {}",
            response.status()
        );
        let created: serde_json::Value =
            serde_json::from_slice(&response.bytes().await.expect("body")).expect("JSON");
        let id = created["data"]["id"].as_str().expect("an id").to_owned();
        let arrived = loop {
            let arrival = tokio::time::timeout(PATIENCE, arrivals.recv())
                .await
                .expect("the webhook arrives")
                .expect("receiver running");
            if arrival.body.contains(&id) && arrival.body.contains("tracking_request.succeeded") {
                break arrival.instant;
            }
        };
        let waited = arrived.saturating_duration_since(returned);
        latencies.push(waited.as_secs_f64() * 1000.0);
    }
    latencies.sort_by(f64::total_cmp);
    println!(
        "{name:>10}: idle, POST → tracking_request.succeeded at the receiver, {IDLE_REQUESTS} requests one after another: p50 {:.1} ms, p90 {:.1} ms, max {:.1} ms",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.90),
        latencies.last().copied().unwrap_or_default()
    );
}

/// Phase 2: a steady 500 notifications a second, event → the receiver's answer.
async fn under_load(name: &str, app: &App) {
    let (url, mut arrivals) = receiver().await;
    let account = tidemark_server::use_cases::accounts::find_or_create_account(app, "load")
        .await
        .expect("account");
    for _ in 0..LOAD_WEBHOOKS {
        subscribe(app, account.id, &url, "tracking_request.failed").await;
    }
    let seen: Arc<Mutex<HashMap<String, DateTime<Utc>>>> = Arc::default();
    let collector = tokio::spawn({
        let seen = Arc::clone(&seen);
        async move {
            while let Some(arrival) = arrivals.recv().await {
                seen.lock()
                    .expect("not poisoned")
                    .entry(arrival.id)
                    .or_insert(arrival.at);
            }
        }
    });
    let started_at = app.clock.now();
    let started = Instant::now();
    let mut ticks =
        tokio::time::interval(Duration::from_micros(1_000_000 / LOAD_REQUESTS_PER_SECOND));
    let total = LOAD_REQUESTS_PER_SECOND * LOAD_SECONDS;
    for i in 0..total {
        ticks.tick().await;
        announce_a_failure(app, account.id, i).await;
    }
    let generating = started.elapsed().as_secs_f64();
    let expected = usize::try_from(total).unwrap_or(usize::MAX) * LOAD_WEBHOOKS;
    let waiting = Instant::now();
    while seen.lock().expect("not poisoned").len() < expected {
        assert!(waiting.elapsed() < PATIENCE, "every notification arrives");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    collector.abort();
    let arrived = seen.lock().expect("not poisoned").clone();
    let mut latencies = Vec::with_capacity(expected);
    let mut page = 0;
    loop {
        let found = app
            .store
            .list_notifications(
                account.id,
                &NotificationFilter {
                    created_from: Some(started_at),
                    ..NotificationFilter::default()
                },
                PageRequest {
                    offset: page * 100,
                    limit: 100,
                },
            )
            .await
            .expect("notifications");
        if found.items.is_empty() {
            break;
        }
        for notification in &found.items {
            if let Some(at) = arrived.get(&notification.id.to_string()) {
                #[expect(clippy::cast_precision_loss, reason = "milliseconds for humans")]
                latencies.push(
                    (*at - notification.created_at)
                        .num_microseconds()
                        .unwrap_or(0) as f64
                        / 1000.0,
                );
            }
        }
        page += 1;
    }
    latencies.sort_by(f64::total_cmp);
    #[expect(clippy::cast_precision_loss, reason = "a rate for humans")]
    let rate = expected as f64 / generating;
    println!(
        "{name:>10}: under load, {} notifications at {rate:.0}/s to {LOAD_WEBHOOKS} webhooks, event → receiver: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        latencies.len(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or_default()
    );
}

/// A tracking request that fails, recorded as a poll records it: one domain event
/// (`tracking_request.failed`), a notification per webhook, the deliveries queued.
async fn announce_a_failure(app: &App, account: tidemark_domain::AccountId, n: u64) {
    let now = app.clock.now();
    let mut request = poll::submitted(account, &format!("LOAD{n:08}"), now);
    app.store
        .create_tracking_request(&request)
        .await
        .expect("request");
    request.status = TrackingRequestStatus::Failed;
    request.failed_reason = Some(FailedReason::NotFound);
    request.updated_at = app.clock.now();
    engine::record(
        &app.engine(),
        TrackingRequestStatus::Pending,
        now,
        &request,
        None,
    )
    .await
    .expect("record");
}

async fn run(name: &str, store: Arc<dyn Store>) {
    let shutdown = CancellationToken::new();
    let (base, key, app) = start(store, &shutdown).await;
    idle(name, &base, &key, &app).await;
    under_load(name, &app).await;
    shutdown.cancel();
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite =
        tidemark_store_sqlite::SqliteStore::open(dir.path().join("bench.db")).expect("SQLite");
    run("sqlite", Arc::new(sqlite)).await;
    if let Some(schema) = tidemark_store_postgres::testing::temp_schema().await {
        run("postgres", schema.store()).await;
    } else {
        println!("  postgres: skipped (set TIDEMARK_TEST_POSTGRES_URL)");
    }
}
