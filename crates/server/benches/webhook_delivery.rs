//! Webhook deliveries per second to a local receiver on loopback, and the time from event
//! to delivery.
//!
//! `cargo bench -p tidemark-server --bench webhook_delivery` (SQLite; PostgreSQL too when
//! `TIDEMARK_TEST_POSTGRES_URL` is set). Phase 1 records sandbox voyages for one account
//! with 50 webhooks until at least 20,000 notifications are pending, then measures how fast
//! the workers drain them. Phase 2 records voyages one at a time while the workers run, and
//! reports event-to-delivery latency (from the notification's creation to the end of its
//! delivery, read off the delivery logs).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use chrono::{Duration, TimeZone, Utc};
use tidemark_carriers::sandbox::{Sandbox, builtin_ports};
use tidemark_domain::domain_event::events_of;
use tidemark_domain::tracking_update::{Known, plan};
use tidemark_domain::{AccountId, SystemClock, TrackingRequestStatus, UuidV7Ids};
use tidemark_server::app::App;
use tidemark_server::config::Config;
use tidemark_server::use_cases::tracking::report::from_snapshot;
use tidemark_server::use_cases::webhooks::manage::{self, WebhookInput};
use tidemark_server::use_cases::webhooks::{catalogue, deliver};
use tidemark_store::{NotificationFilter, PageRequest, Store};
use tokio_util::sync::CancellationToken;

#[path = "support/poll.rs"]
#[expect(dead_code, reason = "this benchmark records results its own way")]
mod poll;

const WEBHOOKS: usize = 50;
const NOTIFICATIONS: usize = 20_000;
const LATENCY_SHIPMENTS: usize = 10;

async fn receiver() -> (String, Arc<AtomicUsize>) {
    let received = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&received);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let count = Arc::clone(&count);
            async move {
                count.fetch_add(1, Ordering::Relaxed);
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}/hook"), received)
}

/// Records one sandbox voyage as a poll would; returns the domain events it announced.
async fn record_voyage(app: &App, account: AccountId, sandbox: &Sandbox, n: usize) -> usize {
    let epoch = Utc
        .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .expect("valid date");
    let number = format!("TEST-HOOK-{n}");
    let Some(voyage) = sandbox.voyage(&number, epoch) else {
        return 0;
    };
    let body = serde_json::to_vec(&voyage.events_until(epoch + Duration::days(90))).expect("json");
    let snapshot = tidemark_carriers::dcsa::parse_events(&body).expect("parses");
    let now = app.clock.now();
    let mut request = poll::submitted(account, &number, now);
    app.store
        .create_tracking_request(&request)
        .await
        .expect("request");
    let update = plan(
        &request,
        Known::default(),
        &from_snapshot(
            &snapshot,
            tidemark_geo::reference::ReferenceData::embedded(),
        ),
        app.ids.as_ref(),
        now,
    );
    request.status = TrackingRequestStatus::Created;
    request.shipment_id = Some(update.shipment.id);
    let events = events_of(
        TrackingRequestStatus::Pending,
        &request,
        Some(&update),
        app.ids.as_ref(),
        now,
    );
    app.store
        .record_tracking_result(&request, now, Some(&update), &events)
        .await
        .expect("record");
    events.len()
}

fn percentile(sorted: &[i64], p: f64) -> i64 {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short list"
    )]
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

async fn run(name: &str, store: Arc<dyn Store>) {
    let (url, received) = receiver().await;
    let config = Config::from_pairs(&[("webhooks_allow_private", "true")]).expect("config");
    let app = Arc::new(App::new(
        config,
        store,
        Arc::new(SystemClock),
        Arc::new(UuidV7Ids),
    ));
    let account = tidemark_server::use_cases::accounts::find_or_create_account(&app, "bench")
        .await
        .expect("account");
    let every_event: Vec<String> = catalogue::catalogue()
        .iter()
        .map(|e| e.name.to_owned())
        .collect();
    for _ in 0..WEBHOOKS {
        manage::create(
            &app,
            app.config.webhooks_allow_private,
            account.id,
            WebhookInput {
                url: Some(url.clone()),
                events: Some(every_event.clone()),
                ..WebhookInput::default()
            },
        )
        .await
        .expect("webhook");
    }
    let sandbox = Sandbox::new(builtin_ports());

    // Phase 1: a backlog of at least 20,000 notifications, drained by the workers.
    let mut pending = 0;
    let mut n = 0;
    while pending < NOTIFICATIONS {
        pending += record_voyage(&app, account.id, &sandbox, n).await * WEBHOOKS;
        n += 1;
    }
    let runner = tidemark_server::jobs::runner(&app);
    let started = Instant::now();
    deliver::queue_due(&app).await.expect("queue");
    runner.run_pending().await;
    let elapsed = started.elapsed().as_secs_f64();
    let delivered = received.load(Ordering::Relaxed);
    #[expect(clippy::cast_precision_loss, reason = "a rate for humans")]
    let rate = delivered as f64 / elapsed;
    println!(
        "{name:>10}: {delivered} of {pending} notifications to {WEBHOOKS} webhooks in {elapsed:.2} s = {rate:.0} deliveries/s"
    );

    // Phase 2: voyages recorded one at a time while the workers run, each a burst of about
    // 1,400 notifications, two seconds apart (below the drain rate, so no backlog builds).
    let shutdown = CancellationToken::new();
    let workers = tokio::spawn({
        let (runner, shutdown) = (tidemark_server::jobs::runner(&app), shutdown.clone());
        async move { runner.run_until(shutdown).await }
    });
    let phase_start = app.clock.now();
    let before = received.load(Ordering::Relaxed);
    let mut expected = 0;
    for i in 0..LATENCY_SHIPMENTS {
        expected += record_voyage(&app, account.id, &sandbox, n + i).await * WEBHOOKS;
        deliver::queue_due(&app).await.expect("queue");
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    }
    while received.load(Ordering::Relaxed) < before + expected {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    shutdown.cancel();
    workers.await.expect("workers");
    let mut latencies = Vec::new();
    let mut page = 0;
    loop {
        let found = app
            .store
            .list_notifications(
                account.id,
                &NotificationFilter {
                    created_from: Some(phase_start),
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
            let logs = app
                .store
                .notification_logs(account.id, notification.id)
                .await
                .expect("logs");
            if let Some(log) = logs.last() {
                let done = log.started_at
                    + Duration::milliseconds(i64::try_from(log.duration_ms).unwrap_or(0));
                latencies.push((done - notification.created_at).num_milliseconds());
            }
        }
        page += 1;
    }
    latencies.sort_unstable();
    println!(
        "{name:>10}: event to delivery over {} notifications in bursts of one voyage: p50 {} ms, p99 {} ms",
        latencies.len(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99)
    );
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
