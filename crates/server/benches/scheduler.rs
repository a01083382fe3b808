//! The poll scheduler's tick (`tracking::sweep`, what `serve` runs every
//! `TIDEMARK_SCHEDULER_TICK_SECONDS`) as the number of tracked shipments grows, among 10,000
//! and 100,000: its time and the heap it uses, with none due, with 1,000 due (the tick
//! queues 1,000 polls) and again with the same 1,000 already queued.
//!
//! `cargo bench -p tidemark-server --bench scheduler` (SQLite; PostgreSQL too with
//! `TIDEMARK_TEST_POSTGRES_URL` and `BENCH_SCHEDULER_POSTGRES=1`, which takes minutes to
//! fill). A tick reads the due shipments through the due-time index, at most 10,000, so both
//! its time and its memory should stay flat as the tracked count grows.
//!
//! Heap figures come from dhat, measured on a second run of each tick right after the timed
//! one (dhat slows allocation down): `peak` is the most bytes the tick held at once, `total`
//! all it allocated. For "1,000 due" that second run finds the polls already queued (it
//! reads the same rows and tries the same 1,000 deduplicated enqueues), like "same again".

use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Duration, TimeZone, Utc};
use tidemark_domain::tracking_update::{CarrierReport, Known, plan};
use tidemark_domain::{
    Account, AccountId, IdGenerator, MockClock, TrackingRequestStatus, UuidV7Ids,
};
use tidemark_server::app::App;
use tidemark_server::config::Config;
use tidemark_server::use_cases::tracking;
use tidemark_store::Store;

#[path = "support/poll.rs"]
#[expect(dead_code, reason = "this benchmark records results its own way")]
mod poll;

const DUE: usize = 1_000;

/// Adds tracked shipments until there are `target`; the first `DUE` ever made were last
/// polled long ago, the rest just now.
async fn fill(
    store: &dyn Store,
    account: AccountId,
    from: usize,
    target: usize,
    now: DateTime<Utc>,
) {
    let ids = UuidV7Ids;
    for i in from..target {
        let request = poll::submitted(account, &format!("TEST-SCHED-{i}"), now);
        store
            .create_tracking_request(&request)
            .await
            .expect("request");
        let mut update = plan(
            &request,
            Known::default(),
            &CarrierReport::default(),
            &ids,
            now,
        );
        update.shipment.line_tracking_last_attempted_at = Some(if i < DUE {
            now - Duration::days(1)
        } else {
            now
        });
        let mut created = request.clone();
        created.status = TrackingRequestStatus::Created;
        created.shipment_id = Some(update.shipment.id);
        store
            .record_tracking_result(&created, request.updated_at, Some(&update), &[])
            .await
            .expect("record");
    }
}

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

struct Tick {
    ms: f64,
    queued: usize,
    peak_kib: f64,
    total_kib: f64,
}

/// One sweep at `now`, timed; then one more with dhat on, for its heap.
async fn tick(app: &App, clock: &MockClock, now: DateTime<Utc>) -> Tick {
    clock.set(now);
    let started = Instant::now();
    let queued = tracking::sweep(&app.engine(), app.config.scheduler_tick)
        .await
        .expect("tick");
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let heap = {
        let _profiler = dhat::Profiler::builder().testing().build();
        tracking::sweep(&app.engine(), app.config.scheduler_tick)
            .await
            .expect("tick");
        dhat::HeapStats::get()
    };
    #[expect(clippy::cast_precision_loss, reason = "sizes for humans")]
    Tick {
        ms,
        queued,
        peak_kib: heap.max_bytes as f64 / 1024.0,
        total_kib: heap.total_bytes as f64 / 1024.0,
    }
}

async fn run(name: &str, store: Arc<dyn Store>) {
    let now = Utc
        .with_ymd_and_hms(2026, 6, 1, 0, 0, 0)
        .single()
        .expect("valid date");
    let account = Account {
        id: AccountId::new(&UuidV7Ids),
        name: format!("sched-{}", UuidV7Ids.next_id()),
        created_at: now,
    };
    store.create_account(&account).await.expect("account");
    let clock = Arc::new(MockClock::new(now));
    let config = Config::from_pairs(&[]).expect("default config");
    // The tick looks for each connected carrier's due shipments: the bench's are `TEST`'s
    // (never called here).
    let mut carriers = tidemark_server::parts::carriers::Carriers::default();
    carriers.insert(
        tidemark_server::parts::carriers::remote_sandbox(
            &url::Url::parse("http://127.0.0.1:9/").expect("a valid URL"),
        )
        .expect("sandbox connector"),
    );
    let app = App::new(
        config,
        Arc::clone(&store),
        Arc::clone(&clock) as _,
        Arc::new(UuidV7Ids),
    )
    .with_carriers(carriers);
    let mut filled = 0;
    for size in [10_000, 100_000] {
        fill(store.as_ref(), account.id, filled, size, now).await;
        filled = size;
        // Polled a day ago (the first DUE) or just now (the rest), and polled again after
        // the hour of `tracking_poll_seconds`: a day ago none was due, now the first DUE are.
        // The first tick after filling also pays for the fill's leftovers (checkpoints,
        // autovacuum), so the idle figure is the best of five.
        let mut idle = tick(&app, &clock, now - Duration::days(1)).await;
        for _ in 0..4 {
            let next = tick(&app, &clock, now - Duration::days(1)).await;
            if next.ms < idle.ms {
                idle = next;
            }
        }
        let first = tick(&app, &clock, now).await;
        let again = tick(&app, &clock, now).await;
        for (label, t) in [
            ("none due", idle),
            ("1,000 due", first),
            ("same again", again),
        ] {
            println!(
                "{name:>10}: {size:>7} tracked, {label:<10}: tick {:>7.2} ms, queued {:>5}, heap peak {:>8.1} KiB, total {:>9.1} KiB",
                t.ms, t.queued, t.peak_kib, t.total_kib
            );
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite =
        tidemark_store_sqlite::SqliteStore::open(dir.path().join("bench.db")).expect("SQLite");
    run("sqlite", Arc::new(sqlite)).await;
    if std::env::var_os("BENCH_SCHEDULER_POSTGRES").is_some() {
        if let Some(schema) = tidemark_store_postgres::testing::temp_schema().await {
            run("postgres", schema.store()).await;
        }
    } else {
        println!(
            "  postgres: skipped (set TIDEMARK_TEST_POSTGRES_URL and BENCH_SCHEDULER_POSTGRES=1)"
        );
    }
}
