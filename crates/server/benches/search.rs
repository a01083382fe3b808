//! `GET /v2/search` among 1,000,000 shipments of one account, each with the tracking
//! request that created it: BL `MAEU26xxxxxxx` (also the request number) and one ref number
//! `PO-<i mod 100,000>` (so ten shipments share each), seeded with batched SQL straight into
//! `tracking_requests`, `shipments` and `search_terms` (the terms made by the same
//! `tidemark_store::terms_of` the store uses: 6,000,000 rows). Containers are not seeded.
//! Each query goes through the router (auth, the term scan, loading what it found,
//! serialization); reports p50 and p99 per query and over all of them.
//!
//! `cargo bench -p tidemark-server --bench search` (SQLite; PostgreSQL too with
//! `TIDEMARK_TEST_POSTGRES_URL` and `BENCH_SEARCH_POSTGRES=1`; `BENCH_SEARCH_SHIPMENTS`
//! changes the count).

use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::{DateTime, Utc};
use http_body_util::BodyExt;
use tidemark_domain::{AccountId, ApiKeyScope, Clock, IdGenerator, SystemClock, UuidV7Ids};
use tidemark_server::app::App;
use tidemark_server::config::Config;
use tidemark_server::use_cases::accounts;
use tidemark_store::{SearchKind, Store, terms_of};
use tower::ServiceExt;
use uuid::Uuid;

const BATCH: usize = 10_000;
const RUNS: usize = 200;

/// One seeded shipment: ids, BL number, ref number, creation time.
struct Seed {
    request: Uuid,
    shipment: Uuid,
    number: String,
    reference: String,
    at: DateTime<Utc>,
}

fn seed(i: usize) -> Seed {
    let ids = UuidV7Ids;
    Seed {
        request: ids.next_id(),
        shipment: ids.next_id(),
        number: format!("MAEU26{i:07}"),
        reference: format!("PO-{}", i % 100_000),
        at: DateTime::from_timestamp(1_767_225_600 + i64::try_from(i).expect("small"), 0)
            .expect("valid time"),
    }
}

/// `(kind, terms)` of a seed: the shipment's and its request's.
fn terms(seed: &Seed) -> [(SearchKind, Uuid, Vec<String>); 2] {
    let numbers = [seed.number.as_str(), seed.reference.as_str()];
    let terms: Vec<String> = terms_of(numbers).into_iter().collect();
    [
        (SearchKind::Shipment, seed.shipment, terms.clone()),
        (SearchKind::TrackingRequest, seed.request, terms),
    ]
}

fn ts(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

fn seed_sqlite(path: &std::path::Path, account: AccountId, shipments: usize) {
    let mut conn = rusqlite::Connection::open(path).expect("open SQLite");
    let tx = conn.transaction().expect("transaction");
    {
        let mut request = tx
            .prepare(
                "INSERT INTO tracking_requests (id, account_id, request_type, request_number,
                    scac, ref_numbers, status, shipment_id, created_at, updated_at)
                 VALUES (?1, ?2, 'bill_of_lading', ?3, 'MAEU', ?4, 'created', ?5, ?6, ?6)",
            )
            .expect("prepare");
        let mut shipment = tx
            .prepare(
                "INSERT INTO shipments (id, account_id, tracking_request_id,
                    bill_of_lading_number, normalized_number, ref_numbers, shipping_line_scac,
                    port_of_lading_locode, port_of_discharge_locode, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?4, ?5, 'MAEU', 'CNSHA', 'NLRTM', ?6, ?6)",
            )
            .expect("prepare");
        let mut term = tx
            .prepare(
                "INSERT INTO search_terms (account_id, term, kind, entity_id, at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .expect("prepare");
        let account = account.0.to_string();
        for i in 0..shipments {
            let seed = seed(i);
            let refs = format!("[\"{}\"]", seed.reference);
            let at = ts(seed.at);
            request
                .execute(rusqlite::params![
                    seed.request.to_string(),
                    account,
                    seed.number,
                    refs,
                    seed.shipment.to_string(),
                    at
                ])
                .expect("request");
            shipment
                .execute(rusqlite::params![
                    seed.shipment.to_string(),
                    account,
                    seed.request.to_string(),
                    seed.number,
                    refs,
                    at
                ])
                .expect("shipment");
            for (kind, id, terms) in terms(&seed) {
                for t in terms {
                    term.execute(rusqlite::params![
                        account,
                        t,
                        kind.code(),
                        id.to_string(),
                        at
                    ])
                    .expect("term");
                }
            }
        }
    }
    tx.commit().expect("commit");
    conn.execute_batch("ANALYZE").expect("analyze");
}

async fn seed_postgres(client: &tokio_postgres::Client, account: AccountId, shipments: usize) {
    let requests = client
        .prepare(
            "INSERT INTO tracking_requests (id, account_id, request_type, request_number, scac,
                ref_numbers, status, shipment_id, created_at, updated_at)
             SELECT id, $1, 'bill_of_lading', number, 'MAEU', jsonb_build_array(reference),
                'created', shipment, at, at
             FROM UNNEST($2::uuid[], $3::text[], $4::text[], $5::uuid[], $6::timestamptz[])
                AS t (id, number, reference, shipment, at)",
        )
        .await
        .expect("prepare");
    let shipments_insert = client
        .prepare(
            "INSERT INTO shipments (id, account_id, tracking_request_id, bill_of_lading_number,
                normalized_number, ref_numbers, shipping_line_scac, port_of_lading_locode,
                port_of_discharge_locode, created_at, updated_at)
             SELECT id, $1, request, number, number, jsonb_build_array(reference), 'MAEU',
                'CNSHA', 'NLRTM', at, at
             FROM UNNEST($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::timestamptz[])
                AS t (id, request, number, reference, at)",
        )
        .await
        .expect("prepare");
    let terms_insert = client
        .prepare(
            "INSERT INTO search_terms (account_id, term, kind, entity_id, at)
             SELECT $1, term, kind, id, at
             FROM UNNEST($2::text[], $3::smallint[], $4::uuid[], $5::timestamptz[])
                AS t (term, kind, id, at)",
        )
        .await
        .expect("prepare");
    for start in (0..shipments).step_by(BATCH) {
        let seeds: Vec<Seed> = (start..(start + BATCH).min(shipments)).map(seed).collect();
        let request_ids: Vec<Uuid> = seeds.iter().map(|s| s.request).collect();
        let shipment_ids: Vec<Uuid> = seeds.iter().map(|s| s.shipment).collect();
        let numbers: Vec<&str> = seeds.iter().map(|s| s.number.as_str()).collect();
        let references: Vec<&str> = seeds.iter().map(|s| s.reference.as_str()).collect();
        let times: Vec<DateTime<Utc>> = seeds.iter().map(|s| s.at).collect();
        client
            .execute(
                &requests,
                &[
                    &account.0,
                    &request_ids,
                    &numbers,
                    &references,
                    &shipment_ids,
                    &times,
                ],
            )
            .await
            .expect("requests");
        client
            .execute(
                &shipments_insert,
                &[
                    &account.0,
                    &shipment_ids,
                    &request_ids,
                    &numbers,
                    &references,
                    &times,
                ],
            )
            .await
            .expect("shipments");
        let (mut all_terms, mut kinds, mut ids, mut ats) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for seed in &seeds {
            for (kind, id, terms) in terms(seed) {
                for term in terms {
                    all_terms.push(term);
                    kinds.push(kind.code());
                    ids.push(id);
                    ats.push(seed.at);
                }
            }
        }
        client
            .execute(&terms_insert, &[&account.0, &all_terms, &kinds, &ids, &ats])
            .await
            .expect("terms");
    }
    client
        .batch_execute("ANALYZE tracking_requests; ANALYZE shipments; ANALYZE search_terms")
        .await
        .expect("analyze");
}

async fn app_on(store: Arc<dyn Store>) -> (Arc<App>, AccountId, String) {
    let config = Config::from_pairs(&[
        ("public_url", "http://bench.test"),
        ("rate_limit_per_minute", "100000000"),
        ("log_level", "error"),
    ])
    .expect("valid config");
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let app = Arc::new(App::new(config, store, clock, Arc::new(UuidV7Ids)));
    let account = accounts::find_or_create_account(&app, "bench")
        .await
        .expect("account");
    let key = accounts::issue_key(&app, account.id, ApiKeyScope::ReadOnly)
        .await
        .expect("key");
    (app, account.id, key.secret.expose().to_owned())
}

async fn get(router: &axum::Router, key: &str, path: &str) -> (StatusCode, Vec<u8>) {
    let request = Request::get(path)
        .header(header::AUTHORIZATION, format!("Token {key}"))
        .body(Body::empty())
        .expect("request");
    let response = router.clone().oneshot(request).await.expect("infallible");
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    (status, body)
}

fn percentile(samples: &mut [StdDuration], p: f64) -> f64 {
    samples.sort();
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short list"
    )]
    let index = ((samples.len() - 1) as f64 * p).round() as usize;
    samples[index].as_secs_f64() * 1000.0
}

/// The queries timed, with what each is: exact numbers, prefixes, words and a miss.
fn queries(shipments: usize) -> Vec<(&'static str, String)> {
    let middle = shipments / 2;
    vec![
        ("exact BL", format!("MAEU26{middle:07}")),
        ("BL prefix (10)", format!("MAEU26{:06}", middle / 10)),
        ("ref number", "PO-4242".to_owned()),
        ("ref word prefix", "4242".to_owned()),
        ("broad prefix", "maeu".to_owned()),
        ("miss", "ZZZU1234".to_owned()),
    ]
}

async fn measure(name: &str, app: &Arc<App>, key: &str, shipments: usize) {
    let router = app.router();
    let mut all = Vec::new();
    for (label, query) in queries(shipments) {
        let path = format!("/v2/search?query={query}");
        let (status, body) = get(&router, key, &path).await;
        assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        let json: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        let results = json["data"].as_array().map_or(0, Vec::len);
        let mut samples = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let started = Instant::now();
            let (status, _) = get(&router, key, &path).await;
            samples.push(started.elapsed());
            assert_eq!(status, StatusCode::OK);
        }
        all.extend_from_slice(&samples);
        let p50 = percentile(&mut samples, 0.5);
        let p99 = percentile(&mut samples, 0.99);
        println!(
            "{name:>9}: {label:<16} {query:<16} {results:>2} results: p50 {p50:.2} ms, p99 {p99:.2} ms"
        );
    }
    let p50 = percentile(&mut all, 0.5);
    let p99 = percentile(&mut all, 0.99);
    println!("{name:>9}: all queries: p50 {p50:.2} ms, p99 {p99:.2} ms");
}

fn shipments() -> usize {
    std::env::var("BENCH_SEARCH_SHIPMENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

async fn sqlite(shipments: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bench.db");
    let store = Arc::new(tidemark_store_sqlite::SqliteStore::open(&path).expect("SQLite"));
    let (app, account, key) = app_on(store).await;
    let started = Instant::now();
    seed_sqlite(&path, account, shipments);
    println!(
        "   sqlite: seeded {shipments} shipments in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    measure("sqlite", &app, &key, shipments).await;
}

async fn postgres(shipments: usize) {
    let Ok(url) = std::env::var("TIDEMARK_TEST_POSTGRES_URL") else {
        return;
    };
    let schema = format!("bench_search_{}", std::process::id());
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    client
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .await
        .expect("schema");
    let store = Arc::new(
        tidemark_store_postgres::PgStore::connect_with(
            &url,
            tidemark_store_postgres::ConnectOptions {
                max_connections: 4,
                schema: Some(schema.clone()),
                ..Default::default()
            },
        )
        .await
        .expect("PostgreSQL"),
    );
    let (app, account, key) = app_on(store).await;
    client
        .batch_execute(&format!("SET search_path = {schema}"))
        .await
        .expect("search path");
    let started = Instant::now();
    seed_postgres(&client, account, shipments).await;
    println!(
        " postgres: seeded {shipments} shipments in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    measure("postgres", &app, &key, shipments).await;
    drop(app);
    client
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .expect("drop schema");
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let shipments = shipments();
    if std::env::var_os("BENCH_SEARCH_SKIP_SQLITE").is_none() {
        sqlite(shipments).await;
    }
    if std::env::var_os("BENCH_SEARCH_POSTGRES").is_some() {
        postgres(shipments).await;
    } else {
        println!(" postgres: skipped (set TIDEMARK_TEST_POSTGRES_URL and BENCH_SEARCH_POSTGRES=1)");
    }
}
