//! A bare axum server to measure Tidemark's HTTP stack against (`bench/bare.sh`): one
//! route, `GET /bench/static/{bytes}`, answering exactly what Tidemark's bench route does
//! (`bytes` filler bytes as `application/vnd.api+json`), with nothing around it: no request
//! ids, logs, metrics, timeouts, limits or connection accounting.
//!
//! Run as the server runs: the same allocator, a multi-threaded tokio runtime whose worker
//! threads come from `TOKIO_WORKER_THREADS` (one per core by default), `TCP_NODELAY` on
//! accepted sockets, served by `axum::serve` (hyper-util's builder, as Tidemark's listener).
//!
//! `cargo run --release -p tidemark-server --example bare_axum -- 127.0.0.1:3001`
//! (the address defaults to `127.0.0.1:3001`).

use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The same body and content type as Tidemark's `/bench/static/{bytes}`.
async fn static_bytes(Path(bytes): Path<usize>) -> Response {
    static FILLER: [u8; 65_536] = [b'x'; 65_536];
    if bytes > FILLER.len() {
        return StatusCode::NOT_FOUND.into_response();
    }
    (
        [(header::CONTENT_TYPE, "application/vnd.api+json")],
        &FILLER[..bytes],
    )
        .into_response()
}

fn main() -> std::io::Result<()> {
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3001".to_owned());
    // As `tidemark`'s main: tokio reads TOKIO_WORKER_THREADS itself.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&address)
            .await?
            .tap_io(|stream| {
                let _ = stream.set_nodelay(true);
            });
        let router = Router::new().route("/bench/static/{bytes}", get(static_bytes));
        axum::serve(listener, router).await
    })
}
