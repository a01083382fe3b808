//! The console's shipments board with many shipments: the server's time to render `GET /`
//! (the whole page) and `GET /board/rows` (the rows the page refreshes), through the router
//! with a signed-in session, and the weight of each console page as a browser fetches it
//! (HTML, scripts and styles, gzip-compressed as served; the map's library and basemap
//! counted apart).
//!
//! `cargo bench -p tidemark-server --bench console_board` (SQLite; PostgreSQL too when
//! `TIDEMARK_TEST_POSTGRES_URL` is set). `BOARD_SHIPMENTS` sets the number of shipments
//! (default 100,000); `BOARD_SKIP_SQLITE=1` measures PostgreSQL alone; `BOARD_SEED_ONLY=1`
//! stops after writing them; `BOARD_SQLITE_FILE=path` writes SQLite's file there and keeps it. Each is a sandbox voyage's first fortnight of events, written as
//! a poll writes it; they are made before the clock starts. While they are written, the rate
//! of each tenth of them is printed, so a write path that slows as the account grows shows.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration as StdDuration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::{Duration, TimeZone, Utc};
use http_body_util::BodyExt;
use tidemark_carriers::sandbox::{Sandbox, builtin_ports};
use tidemark_domain::{AccountId, ApiKeyScope, MockClock, UuidV7Ids};
use tidemark_server::use_cases::accounts;
use tidemark_server::{App, Config};
use tidemark_store::Store;
use tower::ServiceExt;

#[path = "support/poll.rs"]
mod poll;
use poll::{apply, submitted};

const RUNS: usize = 201;
const WRITERS: usize = 8;

struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

async fn get(router: &axum::Router, cookie: &str, path: &str, gzip: bool) -> Answer {
    let mut request = Request::get(path).header(header::COOKIE, cookie);
    if gzip {
        request = request.header(header::ACCEPT_ENCODING, "gzip");
    }
    let response = router
        .clone()
        .oneshot(request.body(Body::empty()).expect("request"))
        .await
        .expect("infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    Answer {
        status,
        headers,
        body,
    }
}

/// Counts the shipments written and prints the rate of each tenth of them.
struct Progress {
    name: String,
    step: usize,
    written: AtomicUsize,
    /// When the last tenth was done.
    mark: Mutex<Instant>,
}

impl Progress {
    fn new(name: &str, count: usize) -> Self {
        Self {
            name: name.to_owned(),
            step: (count / 10).max(1),
            written: AtomicUsize::new(0),
            mark: Mutex::new(Instant::now()),
        }
    }

    fn one_more(&self) {
        let written = self.written.fetch_add(1, Ordering::Relaxed) + 1;
        if !written.is_multiple_of(self.step) {
            return;
        }
        let now = Instant::now();
        let mut mark = self.mark.lock().unwrap_or_else(PoisonError::into_inner);
        let seconds = now.duration_since(*mark).as_secs_f64();
        *mark = now;
        #[expect(clippy::cast_precision_loss, reason = "a rate for humans")]
        let rate = self.step as f64 / seconds;
        println!(
            "{:>10}: seeding, {written} written, the last {} at {rate:.0}/s",
            self.name, self.step
        );
    }
}

/// Writes `count` tracked shipments for the account, as polls write them.
async fn seed(
    store: &Arc<dyn Store>,
    account: AccountId,
    count: usize,
    epoch: chrono::DateTime<Utc>,
    progress: Arc<Progress>,
) {
    let sandbox = Arc::new(Sandbox::new(builtin_ports()));
    let mut writers = tokio::task::JoinSet::new();
    for writer in 0..WRITERS {
        let (store, sandbox, progress) = (
            Arc::clone(store),
            Arc::clone(&sandbox),
            Arc::clone(&progress),
        );
        writers.spawn(async move {
            for i in (writer..count).step_by(WRITERS) {
                let number = format!("TEST-BOARD-{i:06}");
                let Some(voyage) = sandbox.voyage(&number, epoch) else {
                    continue;
                };
                let body = serde_json::to_vec(&voyage.events_until(epoch + Duration::days(14)))
                    .expect("serializable");
                let request = submitted(account, &number, epoch);
                store
                    .create_tracking_request(&request)
                    .await
                    .expect("request");
                apply(store.as_ref(), request, &body, epoch).await;
                progress.one_more();
            }
        });
    }
    while let Some(done) = writers.join_next().await {
        done.expect("writer");
    }
}

fn percentiles(mut times: Vec<StdDuration>) -> (f64, f64) {
    times.sort();
    let at = |q: f64| {
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "an index from a quantile"
        )]
        let index = ((times.len() - 1) as f64 * q) as usize;
        times[index].as_secs_f64() * 1e3
    };
    (at(0.5), at(0.99))
}

/// The `src`/`href` of the page's own scripts and styles (`/assets/…`), and the basemap the
/// map's script fetches (`data-land`).
fn assets_of(html: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for marker in ["src=\"/assets/", "href=\"/assets/", "data-land=\"/assets/"] {
        let mut rest = html;
        while let Some(at) = rest.find(marker) {
            let start = at + marker.len() - "/assets/".len();
            let tail = &rest[start..];
            let end = tail.find('"').unwrap_or(tail.len());
            found.insert(tail[..end].to_owned());
            rest = &tail[end..];
        }
    }
    found
}

/// The map's library and basemap, fetched by the route map's script: counted apart.
fn is_map_asset(path: &str) -> bool {
    ["leaflet", "land-", "topojson", "route-map"]
        .iter()
        .any(|name| path.contains(name))
}

async fn run(name: &str, store: Arc<dyn Store>, shipments: usize) {
    let epoch = Utc
        .with_ymd_and_hms(2026, 3, 1, 12, 0, 0)
        .single()
        .expect("valid date");
    let clock = Arc::new(MockClock::new(epoch + Duration::days(14)));
    let config = Config::from_pairs(&[
        ("public_url", "http://tidemark.bench"),
        ("rate_limit_per_minute", "100000000"),
    ])
    .expect("config");
    let app = Arc::new(App::new(
        config,
        Arc::clone(&store),
        Arc::clone(&clock) as _,
        Arc::new(UuidV7Ids),
    ));
    let account = accounts::find_or_create_account(&app, "bench")
        .await
        .expect("account");
    let key = accounts::issue_key(&app, account.id, ApiKeyScope::ReadWrite)
        .await
        .expect("key")
        .secret
        .expose()
        .to_owned();
    let seeding = Instant::now();
    let progress = Arc::new(Progress::new(name, shipments));
    seed(&store, account.id, shipments, epoch, progress).await;
    println!(
        "{name:>10}: {shipments} shipments written in {:.0} s",
        seeding.elapsed().as_secs_f64()
    );
    if std::env::var_os("BOARD_SEED_ONLY").is_some() {
        return;
    }

    let router = app.router();
    let signed_in = router
        .clone()
        .oneshot(
            Request::post("/sign-in")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from(format!("api_key={key}")))
                .expect("request"),
        )
        .await
        .expect("infallible");
    let cookie = signed_in
        .headers()
        .get(header::SET_COOKIE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .expect("a session cookie")
        .to_owned();

    for path in ["/", "/board/rows", "/?q=TEST-BOARD-0421"] {
        let mut times = Vec::with_capacity(RUNS);
        let mut bytes = 0;
        for _ in 0..RUNS {
            let started = Instant::now();
            let answer = get(&router, &cookie, path, false).await;
            times.push(started.elapsed());
            assert_eq!(answer.status, StatusCode::OK, "{path}");
            bytes = answer.body.len();
        }
        let (p50, p99) = percentiles(times);
        println!(
            "{name:>10}: GET {path:<22} p50 {p50:.2} ms, p99 {p99:.2} ms ({bytes} bytes of HTML, {RUNS} runs)"
        );
    }

    // Page weight, as a browser fetches each page once: HTML and its own assets, gzip.
    let shipment = store
        .list_shipments(
            account.id,
            &tidemark_store::ShipmentFilter::default(),
            tidemark_store::PageRequest {
                offset: 0,
                limit: 1,
            },
        )
        .await
        .ok()
        .and_then(|page| page.items.first().map(|s| s.id.to_string()));
    let mut pages = vec![
        "/".to_owned(),
        "/track".to_owned(),
        "/documents".to_owned(),
        "/webhooks".to_owned(),
        "/custom-fields".to_owned(),
        "/api-keys".to_owned(),
        "/carriers".to_owned(),
    ];
    pages.extend(shipment.map(|id| format!("/shipments/{id}")));
    for page in pages {
        let answer = get(&router, &cookie, &page, true).await;
        if answer.status != StatusCode::OK {
            println!("{name:>10}: {page}: {}", answer.status);
            continue;
        }
        let html = get(&router, &cookie, &page, false).await;
        let text = String::from_utf8_lossy(&html.body).into_owned();
        let (mut own, mut map) = (0, 0);
        for asset in assets_of(&text) {
            let fetched = get(&router, &cookie, &asset, true).await;
            if is_map_asset(&asset) {
                map += fetched.body.len();
            } else {
                own += fetched.body.len();
            }
        }
        let encoded = answer
            .headers
            .get(header::CONTENT_ENCODING)
            .map_or("identity", |value| value.to_str().unwrap_or("?"));
        println!(
            "{name:>10}: page {page:<48} HTML {:>6} B ({encoded}), scripts and styles {own:>6} B, map {map:>7} B",
            answer.body.len()
        );
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let shipments = std::env::var("BOARD_SHIPMENTS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("temp dir");
    if std::env::var_os("BOARD_SKIP_SQLITE").is_none() {
        // BOARD_SQLITE_FILE keeps the database for a look afterwards (sqlite3, EXPLAIN).
        let file = std::env::var_os("BOARD_SQLITE_FILE")
            .map_or_else(|| dir.path().join("bench.db"), std::path::PathBuf::from);
        let sqlite = tidemark_store_sqlite::SqliteStore::open(file).expect("SQLite");
        run("sqlite", Arc::new(sqlite), shipments).await;
    }
    if let Some(schema) = tidemark_store_postgres::testing::temp_schema().await {
        run("postgres", schema.store(), shipments).await;
    } else {
        println!("  postgres: skipped (set TIDEMARK_TEST_POSTGRES_URL)");
    }
}
