//! `GET /v2/documents` with a million documents in one account, and upload throughput.
//!
//! `cargo bench -p tidemark-server --bench documents` runs SQLite; PostgreSQL too with
//! `TIDEMARK_TEST_POSTGRES_URL` and `BENCH_DOCUMENTS_POSTGRES=1`. `BENCH_DOCUMENTS_ROWS`
//! changes the number of documents (default 1,000,000). The rows are seeded with batched
//! SQL straight into the tables (not through the API), with the counts and the word index
//! that the store keeps beside them; requests then go through the whole
//! router (authentication, query parsing, the store, JSON) with `oneshot`, no socket.
//!
//! Reported per query: p50 and p95 of 50 requests after 5 warm-ups.

#![expect(clippy::expect_used, reason = "a benchmark: failing to set up ends it")]

use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use tidemark_domain::{AccountId, ApiKeyScope, Clock, SystemClock, UuidV7Ids};
use tidemark_server::use_cases::accounts;
use tidemark_server::{App, Config};
use tidemark_store::{DOCUMENT_BUCKET_SIZE, Store, document_words};
use tower::ServiceExt;
use uuid::Uuid;

const KINDS: [(&str, &str); 5] = [
    ("BL", "bill_of_lading"),
    ("invoice", "commercial_invoice"),
    ("arrival-notice", "arrival_notice"),
    ("packing-list", "packing_list"),
    ("DO", "delivery_order"),
];
const CARRIERS: [&str; 4] = ["MAEU", "MSCU", "CMDU", "HLCU"];
const BATCH: usize = 1_000;

/// The i-th seeded document: id, file name, type, seconds after the epoch of the seed.
fn row(i: usize) -> (Uuid, String, &'static str, i64) {
    let (kind, document_type) = KINDS[i % KINDS.len()];
    let carrier = CARRIERS[(i / KINDS.len()) % CARRIERS.len()];
    let id = Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0000 + i as u128);
    (
        id,
        format!("{kind}_{carrier}{i:09}.pdf"),
        document_type,
        i64::try_from(i).expect("small"),
    )
}

fn ts(seconds: i64) -> String {
    let at = chrono::DateTime::from_timestamp(1_767_225_600 + seconds, 0).expect("valid time");
    at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

fn seed_sqlite(path: &std::path::Path, account: AccountId, rows: usize) {
    let mut conn = rusqlite::Connection::open(path).expect("open SQLite");
    conn.pragma_update(None, "synchronous", "OFF")
        .expect("pragma");
    let account = account.0.to_string();
    let started = Instant::now();
    for chunk_start in (0..rows).step_by(100_000) {
        let tx = conn.transaction().expect("transaction");
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO documents (id, account_id, source, name, file_name, content_type,
                        size_bytes, sha256, storage_key, document_type, classification_notes,
                        created_at, updated_at, seq)
                     VALUES (?1, ?2, 'upload', ?3, ?3, 'application/pdf', 102400, ?4, ?5, ?6,
                        'seeded', ?7, ?7, ?8)",
                )
                .expect("prepare");
            let mut word = tx
                .prepare("INSERT INTO document_words (account_id, word, seq) VALUES (?1, ?2, ?3)")
                .expect("prepare");
            for i in chunk_start..(chunk_start + 100_000).min(rows) {
                let (id, name, document_type, at) = row(i);
                for w in document_words(&name, &name) {
                    word.execute(rusqlite::params![account, w, at + 1])
                        .expect("word");
                }
                insert
                    .execute(rusqlite::params![
                        id.to_string(),
                        account,
                        name,
                        format!("{i:064x}"),
                        format!("accounts/{account}/documents/{id}.pdf"),
                        document_type,
                        ts(at),
                        at + 1,
                    ])
                    .expect("insert");
            }
        }
        tx.commit().expect("commit");
    }
    conn.execute(
        "INSERT INTO document_counts (account_id, live, next_seq) VALUES (?1, ?2, ?2)
         ON CONFLICT (account_id) DO UPDATE SET live = excluded.live, next_seq = excluded.next_seq",
        rusqlite::params![account, i64::try_from(rows).expect("small")],
    )
    .expect("count");
    conn.execute(
        "INSERT INTO document_buckets (account_id, bucket, live)
         SELECT account_id, seq / ?2, count(*) FROM documents
         WHERE account_id = ?1 AND deleted_at IS NULL GROUP BY 1, 2",
        rusqlite::params![account, DOCUMENT_BUCKET_SIZE],
    )
    .expect("buckets");
    conn.execute(
        "INSERT INTO document_word_counts (account_id, word, live)
         SELECT account_id, word, count(*) FROM document_words GROUP BY 1, 2",
        [],
    )
    .expect("word counts");
    conn.execute(
        "INSERT INTO document_type_counts (account_id, document_type, live)
         SELECT account_id, document_type, count(*) FROM documents
         WHERE deleted_at IS NULL GROUP BY 1, 2",
        [],
    )
    .expect("type counts");
    println!(
        "  sqlite: seeded {rows} documents in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

async fn seed_postgres(client: &tokio_postgres::Client, account: AccountId, rows: usize) {
    let started = Instant::now();
    let statement = client
        .prepare(
            "INSERT INTO documents (id, account_id, source, name, file_name, content_type,
                size_bytes, sha256, storage_key, document_type, classification_notes,
                created_at, updated_at, seq)
             SELECT id, $2, 'upload', name, name, 'application/pdf', 102400, sha, key, kind,
                'seeded', at, at, seq
             FROM UNNEST($1::uuid[], $3::text[], $4::text[], $5::text[], $6::text[],
                $7::timestamptz[], $8::bigint[]) AS t (id, name, sha, key, kind, at, seq)",
        )
        .await
        .expect("prepare");
    let words = client
        .prepare(
            "INSERT INTO document_words (account_id, word, seq)
             SELECT $1, word, seq FROM UNNEST($2::text[], $3::bigint[]) AS t (word, seq)",
        )
        .await
        .expect("prepare");
    for batch_start in (0..rows).step_by(BATCH) {
        let mut words_of = (Vec::new(), Vec::new());
        let mut ids = Vec::with_capacity(BATCH);
        let mut names = Vec::with_capacity(BATCH);
        let mut shas = Vec::with_capacity(BATCH);
        let mut keys = Vec::with_capacity(BATCH);
        let mut kinds = Vec::with_capacity(BATCH);
        let mut times = Vec::with_capacity(BATCH);
        let mut seqs = Vec::with_capacity(BATCH);
        for i in batch_start..(batch_start + BATCH).min(rows) {
            let (id, name, document_type, at) = row(i);
            for w in document_words(&name, &name) {
                words_of.0.push(w);
                words_of.1.push(at + 1);
            }
            ids.push(id);
            names.push(name);
            shas.push(format!("{i:064x}"));
            keys.push(format!("accounts/{}/documents/{id}.pdf", account.0));
            kinds.push(document_type.to_owned());
            times
                .push(chrono::DateTime::from_timestamp(1_767_225_600 + at, 0).expect("valid time"));
            seqs.push(at + 1);
        }
        client
            .execute(&words, &[&account.0, &words_of.0, &words_of.1])
            .await
            .expect("words");
        client
            .execute(
                &statement,
                &[
                    &ids, &account.0, &names, &shas, &keys, &kinds, &times, &seqs,
                ],
            )
            .await
            .expect("insert");
    }
    client
        .execute(
            "INSERT INTO document_counts (account_id, live, next_seq) VALUES ($1, $2, $2)
             ON CONFLICT (account_id)
             DO UPDATE SET live = excluded.live, next_seq = excluded.next_seq",
            &[&account.0, &i64::try_from(rows).expect("small")],
        )
        .await
        .expect("count");
    client
        .execute(
            "INSERT INTO document_buckets (account_id, bucket, live)
             SELECT account_id, seq / $2, count(*) FROM documents
             WHERE account_id = $1 AND deleted_at IS NULL GROUP BY 1, 2",
            &[&account.0, &DOCUMENT_BUCKET_SIZE],
        )
        .await
        .expect("buckets");
    client
        .execute(
            "INSERT INTO document_word_counts (account_id, word, live)
             SELECT account_id, word, count(*) FROM document_words GROUP BY 1, 2",
            &[],
        )
        .await
        .expect("word counts");
    client
        .execute(
            "INSERT INTO document_type_counts (account_id, document_type, live)
             SELECT account_id, effective_type, count(*) FROM documents
             WHERE deleted_at IS NULL GROUP BY 1, 2",
            &[],
        )
        .await
        .expect("type counts");
    client
        .batch_execute("VACUUM ANALYZE documents, document_words, document_word_counts")
        .await
        .expect("vacuum");
    println!(
        "  postgres: seeded {rows} documents in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

fn config(storage: &str) -> Config {
    Config::from_pairs(&[
        ("storage_url", storage),
        ("public_url", "http://bench.test"),
        ("rate_limit_per_minute", "100000000"),
        ("log_level", "error"),
    ])
    .expect("valid config")
}

async fn app_on(store: Arc<dyn Store>, storage: &str) -> (Arc<App>, AccountId, String) {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let app = Arc::new(App::new(config(storage), store, clock, Arc::new(UuidV7Ids)));
    let account = accounts::find_or_create_account(&app, "bench")
        .await
        .expect("account");
    let key = accounts::issue_key(&app, account.id, ApiKeyScope::ReadWrite)
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

async fn measure(name: &str, router: &axum::Router, key: &str, label: &str, path: &str) -> f64 {
    let mut total = 0;
    for _ in 0..5 {
        let (status, body) = get(router, key, path).await;
        assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        let json: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        total = json["meta"]["total"].as_u64().unwrap_or(0);
    }
    let mut samples = Vec::with_capacity(50);
    for _ in 0..50 {
        let started = Instant::now();
        let (status, _) = get(router, key, path).await;
        samples.push(started.elapsed());
        assert_eq!(status, StatusCode::OK);
    }
    let p50 = percentile(&mut samples, 0.5);
    let p95 = percentile(&mut samples, 0.95);
    println!("{name:>10}: {label:<34} p50 {p50:7.2} ms  p95 {p95:7.2} ms  (total {total})");
    p50
}

async fn list_queries(name: &str, app: &Arc<App>, key: &str, rows: usize) {
    let router = app.router();
    let last_page = rows.div_ceil(30).min(10_000);
    let page1 = measure(name, &router, key, "page 1", "/v2/documents?page[size]=30").await;
    let far = measure(
        name,
        &router,
        key,
        &format!("page {last_page}"),
        &format!("/v2/documents?page[size]=30&page[number]={last_page}"),
    )
    .await;
    let target = row(rows / 2).1;
    let token = target
        .trim_end_matches(".pdf")
        .split('_')
        .nth(1)
        .expect("a number")
        .to_owned();
    measure(
        name,
        &router,
        key,
        "filter[filename]=<one BL number>",
        &format!("/v2/documents?page[size]=30&filter[filename]={token}"),
    )
    .await;
    measure(
        name,
        &router,
        key,
        "filter[filename]=invoice (1 in 5)",
        "/v2/documents?page[size]=30&filter[filename]=invoice",
    )
    .await;
    measure(
        name,
        &router,
        key,
        "filter[filename]=arrival notice",
        "/v2/documents?page[size]=30&filter[filename]=arrival%20notice",
    )
    .await;
    let typed = &token[..token.len() - 4];
    measure(
        name,
        &router,
        key,
        &format!("filter[filename]={typed} (a prefix)"),
        &format!("/v2/documents?page[size]=30&filter[filename]={typed}"),
    )
    .await;
    measure(
        name,
        &router,
        key,
        "filter[document_types]=arrival_notice",
        "/v2/documents?page[size]=30&filter[document_types]=arrival_notice",
    )
    .await;
    println!(
        "{name:>10}: page {last_page} / page 1 = {:.2}",
        far / page1.max(f64::EPSILON)
    );
}

/// Multipart uploads of distinct 100 KiB files, one at a time, through the router.
async fn upload_throughput(name: &str, app: &Arc<App>, key: &str, count: usize) {
    let router = app.router();
    let boundary = "bench-boundary-7MA4YWxk";
    let started = Instant::now();
    for n in 0..count {
        let mut file = format!("PACKING LIST {name} {n}\n").into_bytes();
        while file.len() < 100 * 1024 {
            file.extend_from_slice(format!("line {n} {} of cartons\n", file.len()).as_bytes());
        }
        file.truncate(100 * 1024);
        let mut body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"list-{n}.txt\"\r\nContent-Type: text/plain\r\n\r\n"
        )
        .into_bytes();
        body.extend_from_slice(&file);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let request = Request::post("/v2/documents")
            .header(header::AUTHORIZATION, format!("Token {key}"))
            .header(
                header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(Body::from(body))
            .expect("request");
        let response = router.clone().oneshot(request).await.expect("infallible");
        assert_eq!(response.status(), StatusCode::CREATED);
    }
    let seconds = started.elapsed().as_secs_f64();
    #[expect(clippy::cast_precision_loss, reason = "small counts")]
    let per_second = count as f64 / seconds;
    println!(
        "{name:>10}: {count} uploads of 100 KiB in {seconds:.2} s: {per_second:.0} uploads/s, {:.1} MiB/s",
        per_second * 100.0 / 1024.0
    );
}

fn rows() -> usize {
    std::env::var("BENCH_DOCUMENTS_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

async fn sqlite(rows: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bench.db");
    let store = Arc::new(tidemark_store_sqlite::SqliteStore::open(&path).expect("SQLite"));
    let (app, account, key) = app_on(store, "memory://").await;
    seed_sqlite(&path, account, rows);
    list_queries("sqlite", &app, &key, rows).await;
    upload_throughput("sqlite/mem", &app, &key, 300).await;
    let files = dir.path().join("files");
    let url = format!("file://{}", files.display());
    let store = Arc::new(tidemark_store_sqlite::SqliteStore::open(&path).expect("SQLite"));
    let (app, _, key) = app_on(store, &url).await;
    upload_throughput("sqlite/disk", &app, &key, 300).await;
}

async fn postgres(rows: usize) {
    let Ok(url) = std::env::var("TIDEMARK_TEST_POSTGRES_URL") else {
        return;
    };
    let schema = format!("bench_documents_{}", std::process::id());
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
    let (app, account, key) = app_on(store, "memory://").await;
    client
        .batch_execute(&format!("SET search_path = {schema}"))
        .await
        .expect("search path");
    seed_postgres(&client, account, rows).await;
    list_queries("postgres", &app, &key, rows).await;
    upload_throughput("postgres", &app, &key, 300).await;
    drop(app);
    client
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .expect("drop schema");
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rows = rows();
    if std::env::var_os("BENCH_DOCUMENTS_SKIP_SQLITE").is_none() {
        sqlite(rows).await;
    }
    if std::env::var_os("BENCH_DOCUMENTS_POSTGRES").is_some() {
        postgres(rows).await;
    } else {
        println!(
            "  postgres: skipped (set TIDEMARK_TEST_POSTGRES_URL and BENCH_DOCUMENTS_POSTGRES=1)"
        );
    }
}
