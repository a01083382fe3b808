//! What the layers every request passes through cost (`edge::layers`: request id, request
//! span, metrics, the request timeout, panics caught, compression check, body limit and
//! body timeout), measured in the process without sockets, so the figure is the layers'
//! own CPU time and not the kernel's or the load generator's.
//!
//! `cargo bench -p tidemark-server --bench middleware`. Three routers answer
//! `GET /bench/static/{bytes}` with the same 700 bytes: a bare axum router with only that
//! route; Tidemark's whole router (`App::router`: the console's and the API's routes inside
//! the shared layers) as it serves; and Tidemark's whole router without the layers, to
//! tell the routing table's cost from the layers'. Each runs `MIDDLEWARE_REQUESTS`
//! (200,000) requests one after another on one thread, after a warm-up, three rounds; the
//! figure is nanoseconds of CPU per request, best round. Logs are at `warn`, as the HTTP
//! benchmark (`bench/http.sh`) runs the server.
//!
//! Over HTTP a request costs far more than in the process (parsing, syscalls), so the
//! layers' share of a real request is their nanoseconds here over the bare server's time
//! per request in `bench/http.sh`.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::http::{Request, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http_body_util::BodyExt;
use tidemark_domain::{SystemClock, UuidV7Ids};
use tidemark_server::{App, Config};
use tower::ServiceExt;

/// The shipped binary's allocator (`main.rs`), so the benchmark measures what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const BYTES: usize = 700;
const ROUNDS: usize = 3;

async fn bare_static(Path(bytes): Path<usize>) -> Response {
    static FILLER: [u8; 65_536] = [b'x'; 65_536];
    (
        [(header::CONTENT_TYPE, "application/vnd.api+json")],
        &FILLER[..bytes.min(FILLER.len())],
    )
        .into_response()
}

/// Nanoseconds per request, best of [`ROUNDS`], for `requests` sequential requests.
async fn per_request(router: &Router, requests: usize) -> f64 {
    let uri = format!("/bench/static/{BYTES}");
    let one = || async {
        // As wrk asks (`bench/http.sh`): no Accept-Encoding, so nothing is compressed.
        let request = Request::get(&uri)
            .body(Body::empty())
            .expect("a valid request");
        let response = router
            .clone()
            .oneshot(request)
            .await
            .expect("routers do not fail");
        assert!(response.status().is_success(), "{}", response.status());
        let body = response
            .into_body()
            .collect()
            .await
            .expect("a body")
            .to_bytes();
        assert_eq!(body.len(), BYTES);
    };
    for _ in 0..requests / 10 {
        one().await;
    }
    let mut best = f64::INFINITY;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        for _ in 0..requests {
            one().await;
        }
        best = best.min(started.elapsed().as_nanos() as f64 / requests as f64);
    }
    best
}

fn main() {
    let requests: usize = std::env::var("MIDDLEWARE_REQUESTS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(200_000);
    tracing_subscriber::fmt()
        .with_env_filter("warn")
        .with_writer(std::io::sink)
        .init();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let store =
            tidemark_store_sqlite::SqliteStore::open(dir.path().join("bench.db")).expect("SQLite");
        let config = Config::from_pairs(&[("bench_routes", "true")]).expect("config");
        let app = Arc::new(App::new(
            config,
            Arc::new(store),
            Arc::new(SystemClock),
            Arc::new(UuidV7Ids),
        ));
        let bare = Router::new().route("/bench/static/{bytes}", get(bare_static));
        let unlayered = app.routes();
        let layered = app.router();

        let bare_ns = per_request(&bare, requests).await;
        let unlayered_ns = per_request(&unlayered, requests).await;
        let layered_ns = per_request(&layered, requests).await;
        println!("{requests} sequential requests for {BYTES} bytes, best of {ROUNDS} rounds:");
        println!("  bare axum router:                 {bare_ns:>8.0} ns/request");
        println!("  Tidemark's routes, no layers:     {unlayered_ns:>8.0} ns/request");
        println!("  Tidemark's routes in its layers:  {layered_ns:>8.0} ns/request");
        println!(
            "  the layers' own cost:             {:>8.0} ns/request",
            layered_ns - unlayered_ns
        );
    });
}
