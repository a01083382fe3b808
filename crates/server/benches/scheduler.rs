//! The poll scheduler's tick as the number of tracked shipments grows: the time to find the
//! due shipments among 10,000 and 100,000, with none due and with 1,000 due.
//!
//! `cargo bench -p tidemark-server --bench scheduler` (SQLite; PostgreSQL too with
//! `TIDEMARK_TEST_POSTGRES_URL` and `BENCH_SCHEDULER_POSTGRES=1`, which takes minutes to
//! fill). A tick reads at most `LIMIT` rows through the due-time index, so both its time and
//! its memory should stay flat.

use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Duration, TimeZone, Utc};
use tidemark_domain::tracking_update::{CarrierReport, Known, plan};
use tidemark_domain::{
    Account, AccountId, IdGenerator, RequestType, TrackingRequest, TrackingRequestId,
    TrackingRequestStatus, UuidV7Ids,
};
use tidemark_store::Store;

const LIMIT: u32 = 10_000;
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
        let request = TrackingRequest {
            id: TrackingRequestId::new(&ids),
            account_id: account,
            request_type: RequestType::BillOfLading,
            request_number: format!("TEST-SCHED-{i}"),
            scac: "TEST".to_owned(),
            ref_numbers: Vec::new(),
            shipment_tags: Vec::new(),
            status: TrackingRequestStatus::Pending,
            failed_reason: None,
            is_retrying: false,
            retry_count: None,
            shipment_id: None,
            initial_custom_fields: None,
            customer_id: None,
            submitted_by: None,
            polled_at: None,
            created_at: now,
            updated_at: now,
        };
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

async fn tick_ms(store: &dyn Store, due_before: DateTime<Utc>) -> (f64, usize) {
    const RUNS: u32 = 20;
    let mut found = 0;
    let started = Instant::now();
    for _ in 0..RUNS {
        found = store
            .shipments_to_poll(due_before, LIMIT)
            .await
            .expect("tick")
            .len();
    }
    (
        started.elapsed().as_secs_f64() * 1000.0 / f64::from(RUNS),
        found,
    )
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
    let mut filled = 0;
    for size in [10_000, 100_000] {
        fill(store.as_ref(), account.id, filled, size, now).await;
        filled = size;
        let (idle, none) = tick_ms(store.as_ref(), now - Duration::days(2)).await;
        let (busy, due) = tick_ms(store.as_ref(), now - Duration::hours(1)).await;
        println!(
            "{name:>10}: {size:>7} tracked: tick {idle:.2} ms with {none} due, {busy:.2} ms with {due} due"
        );
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
