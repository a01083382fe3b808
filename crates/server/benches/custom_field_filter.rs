//! Listing shipments filtered by a custom field value among 10,000 shipments, each with a
//! `po` text value (100 distinct, so 100 shipments match one) and a `priority` number (10
//! distinct, so 1,000 match one). Reports p50 and p95 of the store query and of the whole
//! `GET /v2/shipments?filter[custom_fields][…]=…` through the router (auth, lookups of the
//! definition, page of 30, serialization); the target is a p50 under 20 ms.
//!
//! `cargo bench -p tidemark-server --bench custom_field_filter` (SQLite; PostgreSQL too with
//! `TIDEMARK_TEST_POSTGRES_URL` and `BENCH_CUSTOM_FIELDS_POSTGRES=1`).

use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::{DateTime, TimeZone, Utc};
use http_body_util::BodyExt;
use serde_json::json;
use tidemark_domain::custom_fields::{NewDefinition, check_value, validate_new_definition};
use tidemark_domain::tracking_update::{CarrierReport, Known, plan};
use tidemark_domain::{ApiKeyScope, IdGenerator, MockClock, TrackingRequestStatus, UuidV7Ids};
use tidemark_server::app::App;
use tidemark_server::config::Config;
use tidemark_server::use_cases::accounts;
use tidemark_store::{
    CustomFieldFilter, DefinitionRecord, EntityRef, NewValue, PageRequest, ShipmentFilter, Store,
};
use tower::ServiceExt;

#[path = "support/poll.rs"]
#[expect(dead_code, reason = "this benchmark records results its own way")]
mod poll;

const SHIPMENTS: usize = 10_000;
const RUNS: usize = 200;
const BATCH: usize = 1_000;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0)
        .single()
        .expect("valid date")
}

async fn define(
    store: &dyn Store,
    account: tidemark_domain::AccountId,
    slug: &str,
    data_type: &str,
) -> DefinitionRecord {
    let definition = validate_new_definition(&NewDefinition {
        api_slug: Some(slug.to_owned()),
        display_name: Some(slug.to_owned()),
        entity_type: Some("Shipment".to_owned()),
        data_type: Some(data_type.to_owned()),
        ..NewDefinition::default()
    })
    .expect("valid definition");
    let record = DefinitionRecord {
        id: UuidV7Ids.next_id(),
        account_id: account,
        definition,
        created_at: now(),
        updated_at: now(),
    };
    store
        .create_custom_field_definition(&record)
        .await
        .expect("definition");
    record
}

/// 10,000 shipments with their two values, written in batches.
async fn fill(store: &dyn Store, account: tidemark_domain::AccountId) -> [DefinitionRecord; 2] {
    let po = define(store, account, "po", "short_text").await;
    let priority = define(store, account, "priority", "number").await;
    let ids = UuidV7Ids;
    let mut values = Vec::with_capacity(2 * BATCH);
    for i in 0..SHIPMENTS {
        let request = poll::submitted(account, &format!("TEST-CF-{i}"), now());
        store
            .create_tracking_request(&request)
            .await
            .expect("request");
        let update = plan(
            &request,
            Known::default(),
            &CarrierReport::default(),
            &ids,
            now(),
        );
        let mut created = request.clone();
        created.status = TrackingRequestStatus::Created;
        created.shipment_id = Some(update.shipment.id);
        store
            .record_tracking_result(&created, request.updated_at, Some(&update), &[])
            .await
            .expect("record");
        let entity = EntityRef {
            entity_type: po.definition.entity_type,
            id: update.shipment.id.0,
        };
        for (definition, raw) in [
            (&po, json!(format!("PO-{}", i % 100))),
            (&priority, json!(i % 10)),
        ] {
            values.push(NewValue {
                id: ids.next_id(),
                account_id: account,
                definition_id: definition.id,
                entity,
                value: check_value(&definition.definition, &[], &raw)
                    .expect("valid value")
                    .expect("a value"),
                at: now(),
            });
        }
        if values.len() >= 2 * BATCH {
            store
                .insert_custom_field_values_if_absent(&values)
                .await
                .expect("values");
            values.clear();
        }
    }
    store
        .insert_custom_field_values_if_absent(&values)
        .await
        .expect("values");
    [po, priority]
}

fn percentiles(mut samples: Vec<StdDuration>) -> (f64, f64) {
    samples.sort();
    let at = |p: usize| samples[(samples.len() * p / 100).min(samples.len() - 1)];
    (at(50).as_secs_f64() * 1000.0, at(95).as_secs_f64() * 1000.0)
}

async fn run(name: &str, store: Arc<dyn Store>) {
    let config = Config::from_pairs(&[
        ("public_url", "http://tidemark.bench"),
        ("rate_limit_per_minute", "100000000"),
    ])
    .expect("config");
    let app = Arc::new(App::new(
        config,
        store,
        Arc::new(MockClock::new(now())),
        Arc::new(UuidV7Ids),
    ));
    let account = accounts::find_or_create_account(&app, &format!("bench-{}", UuidV7Ids.next_id()))
        .await
        .expect("account");
    let key = accounts::issue_key(&app, account.id, ApiKeyScope::ReadOnly)
        .await
        .expect("key");
    let started = Instant::now();
    let [po, priority] = fill(app.store.as_ref(), account.id).await;
    println!(
        "{name:>10}: seeded {SHIPMENTS} shipments with 2 values each in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    for (label, definition, raw, matching) in [
        ("po=PO-42", &po, "PO-42", SHIPMENTS / 100),
        ("priority=7", &priority, "7", SHIPMENTS / 10),
    ] {
        let filter = ShipmentFilter {
            custom_fields: vec![CustomFieldFilter {
                definition_id: definition.id,
                key: tidemark_domain::custom_fields::filter_key(&definition.definition, raw)
                    .expect("filter"),
            }],
            ..ShipmentFilter::default()
        };
        let page = PageRequest {
            offset: 0,
            limit: 30,
        };
        let mut samples = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let started = Instant::now();
            let found = app
                .store
                .list_shipments(account.id, &filter, page)
                .await
                .expect("list");
            samples.push(started.elapsed());
            assert_eq!(found.total, matching as u64);
        }
        let (p50, p95) = percentiles(samples);
        println!(
            "{name:>10}: store  list_shipments {label:<11} ({matching:>4} match): p50 {p50:.2} ms, p95 {p95:.2} ms"
        );

        let router = app.router();
        let uri = format!(
            "/v2/shipments?filter[custom_fields][{}]={raw}",
            definition.definition.api_slug
        );
        let mut samples = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let request = Request::get(&uri)
                .header(
                    header::AUTHORIZATION,
                    format!("Token {}", key.secret.expose()),
                )
                .body(Body::empty())
                .expect("request");
            let started = Instant::now();
            let response = router.clone().oneshot(request).await.expect("response");
            let status = response.status();
            let body = response
                .into_body()
                .collect()
                .await
                .expect("body")
                .to_bytes();
            samples.push(started.elapsed());
            assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        }
        let (p50, p95) = percentiles(samples);
        println!(
            "{name:>10}: HTTP   GET /v2/shipments {label:<11} ({matching:>4} match): p50 {p50:.2} ms, p95 {p95:.2} ms"
        );
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite =
        tidemark_store_sqlite::SqliteStore::open(dir.path().join("bench.db")).expect("SQLite");
    run("sqlite", Arc::new(sqlite)).await;
    if std::env::var_os("BENCH_CUSTOM_FIELDS_POSTGRES").is_some() {
        if let Some(schema) = tidemark_store_postgres::testing::temp_schema().await {
            run("postgres", schema.store()).await;
        }
    } else {
        println!(
            "  postgres: skipped (set TIDEMARK_TEST_POSTGRES_URL and BENCH_CUSTOM_FIELDS_POSTGRES=1)"
        );
    }
}
