//! Applying carrier events: how many DCSA events per second go from a carrier's response
//! body to stored shipments, containers, transport events and domain events.
//!
//! `cargo bench -p tidemark-server --bench apply_events` (SQLite; PostgreSQL too when
//! `TIDEMARK_TEST_POSTGRES_URL` is set). Each shipment is a sandbox voyage played to its
//! end, parsed, planned and written with its domain events, as a poll does; the carrier
//! bodies and the (pending) tracking requests are made before the clock starts.

use std::sync::Arc;
use std::time::Instant;

use chrono::{Duration, TimeZone, Utc};
use tidemark_carriers::sandbox::{Sandbox, builtin_ports};
use tidemark_domain::{Account, AccountId, IdGenerator, UuidV7Ids};
use tidemark_store::Store;

#[path = "support/poll.rs"]
mod poll;
use poll::{apply, submitted};

/// The shipped binary's allocator (`main.rs`), so the benchmark measures what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SHIPMENTS: usize = 2_000;
/// As many as a worker process runs at once by default (`worker_concurrency`).
const WORKERS: usize = 8;

async fn run(name: &str, store: Arc<dyn Store>) {
    let ids = UuidV7Ids;
    let epoch = Utc
        .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .expect("valid date");
    let account = Account {
        id: AccountId::new(&ids),
        name: format!("bench-{}", ids.next_id()),
        created_at: epoch,
    };
    store.create_account(&account).await.expect("account");
    let sandbox = Sandbox::new(builtin_ports());
    // Carrier responses are prepared first: the benchmark measures what Tidemark does with
    // them, not the sandbox that makes them.
    let bodies: Vec<(String, Vec<u8>)> = (0..SHIPMENTS)
        .filter_map(|i| {
            let number = format!("TEST-BENCH-{i}");
            let voyage = sandbox.voyage(&number, epoch)?;
            let events = voyage.events_until(epoch + Duration::days(90));
            Some((number, serde_json::to_vec(&events).expect("serializable")))
        })
        .collect();
    // So are the tracking requests: users submitted them before any poll.
    let mut polls = Vec::with_capacity(bodies.len());
    for (number, body) in bodies {
        let request = submitted(account.id, &number, epoch);
        store
            .create_tracking_request(&request)
            .await
            .expect("request");
        polls.push((request, body));
    }

    let busy_before = busy_cpu_seconds();
    let started = Instant::now();
    let polls = Arc::new(polls);
    let mut workers = tokio::task::JoinSet::new();
    for worker in 0..WORKERS {
        let (store, polls) = (Arc::clone(&store), Arc::clone(&polls));
        workers.spawn(async move {
            let mut applied = 0;
            for (request, body) in polls.iter().skip(worker).step_by(WORKERS) {
                applied += apply(store.as_ref(), request.clone(), body, epoch).await;
            }
            applied
        });
    }
    let mut carrier_events = 0;
    while let Some(applied) = workers.join_next().await {
        carrier_events += applied.expect("worker");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let busy = busy_cpu_seconds()
        .zip(busy_before)
        .map(|(after, before)| after - before);
    #[expect(clippy::cast_precision_loss, reason = "a rate for humans")]
    let rate = carrier_events as f64 / elapsed;
    println!(
        "{name:>10}: {} shipments, {carrier_events} DCSA events in {elapsed:.2} s = {rate:.0} events/s ({WORKERS} workers)",
        polls.len()
    );
    if let Some(busy) = busy {
        #[expect(clippy::cast_precision_loss, reason = "a rate for humans")]
        let per_thousand = busy * 1000.0 / carrier_events as f64;
        println!(
            "{:>10}  machine CPU busy {busy:.2} s = {:.0} ms per 1,000 events",
            "",
            per_thousand * 1000.0
        );
    }
}

/// Seconds every core of the machine spent busy (Linux `/proc/stat`), or `None` elsewhere:
/// the cost of the events in CPU, which a slower or shared machine changes less than the rate.
fn busy_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu = stat.lines().next()?.strip_prefix("cpu ")?;
    let ticks: Vec<f64> = cpu
        .split_whitespace()
        .map(|field| field.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal: idle, waiting and stolen time are not
    // the benchmark's.
    let busy = [0, 1, 2, 5, 6]
        .iter()
        .map(|&field| ticks.get(field).copied())
        .sum::<Option<f64>>()?;
    // USER_HZ is 100 on every Linux architecture Tidemark builds for.
    Some(busy / 100.0)
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
