//! The HTTP listener: an accept loop that bounds what a client can hold.
//!
//! `axum::serve` keeps every connection for as long as the client likes: one that sends
//! nothing, or half a header, or stops reading, holds a file descriptor forever, and enough
//! of them exhaust the process's. So connections are served here, with hyper-util's builder
//! as axum itself does, and:
//!
//! - at most [`ConnectionLimits::max_connections`] at once: one more is answered `503` and
//!   closed at once, and a log line says the limit was reached (once, until it clears);
//! - an HTTP/1 request head must arrive within `header_read_timeout` (slowloris), and may
//!   be at most `max_header_bytes` (`431` beyond); an HTTP/2 connection has at most
//!   `http2_max_concurrent_streams` streams and the same header-list bound;
//! - a connection that has not sent a whole request head within `header_read_timeout` of
//!   connecting is closed (hyper's own header timeout starts only once it knows the
//!   protocol, which needs the first bytes);
//! - a connection with no request in progress on which nothing is read or written for
//!   `idle_timeout` is closed: idle keep-alive connections (HTTP/2; hyper closes idle
//!   HTTP/1 ones at the header timeout), and readers that stopped reading a response;
//! - each request carries its client's address ([`ConnectInfo`]), for the rate limit of
//!   the unauthenticated.
//!
//! The request-body pause (`request_body_timeout`) and the whole request's deadline are
//! layers around every route, the console's too (`edge::layers`).
//! [`raise_open_file_limit`] lifts the process's soft descriptor limit to its hard one at
//! start.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::limits::ConnectionLimits;

/// What a connection over the limit gets before it is closed (a JSON:API error).
const OVER_LIMIT_BODY: &str = r#"{"errors":[{"status":"503","title":"Service Unavailable","detail":"Too many connections."}]}"#;

fn over_limit_response() -> String {
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/vnd.api+json\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{OVER_LIMIT_BODY}",
        OVER_LIMIT_BODY.len()
    )
}

/// Serves `router` on `listener` within `limits` until `shutdown` is cancelled, then lets
/// the requests in flight finish.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: &ConnectionLimits,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let saturated = AtomicBool::new(false);
    let builder = Arc::new(builder(limits));
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, address) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                accept_failed(&error).await;
                continue;
            }
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            if !saturated.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    max_connections = limits.max_connections,
                    "connection limit reached (TIDEMARK_MAX_CONNECTIONS): new connections are \
                     answered 503 and closed until some end"
                );
            }
            metrics::counter!("tidemark_http_connections_refused_total").increment(1);
            // Best effort, never waiting: the client learns why, or sees the close.
            let _ = stream.try_write(over_limit_response().as_bytes());
            continue;
        };
        if saturated.swap(false, Ordering::Relaxed) {
            tracing::info!("below the connection limit again");
        }
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection(
            stream,
            address,
            router.clone(),
            Arc::clone(&builder),
            Timeouts {
                first_request: limits.header_read_timeout,
                idle: limits.idle_timeout,
            },
            shutdown.clone(),
            slot,
        ));
    }
    // Every connection holds a slot until it ends: having them all back means they have.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = slots.acquire_many(all).await;
    Ok(())
}

/// hyper's HTTP/1 and HTTP/2 settings from the limits.
fn builder(limits: &ConnectionLimits) -> Builder<TokioExecutor> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.max_header_bytes);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.http2_max_concurrent_streams)
        .max_header_list_size(u32::try_from(limits.max_header_bytes).unwrap_or(u32::MAX))
        .max_pending_accept_reset_streams(Some(32))
        .max_local_error_reset_streams(Some(256))
        .keep_alive_interval(Some(limits.idle_timeout))
        .keep_alive_timeout(limits.header_read_timeout);
    builder
}

/// An accept error: per-connection ones are the client's business; running out of file
/// descriptors is logged and waited out, as axum does.
async fn accept_failed(error: &std::io::Error) {
    use std::io::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!(%error, "accept error");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// How long a connection may stay quiet: before its first request, and after.
#[derive(Clone, Copy)]
struct Timeouts {
    first_request: Duration,
    idle: Duration,
}

/// Serves one connection until it ends, is idle too long, or the server shuts down.
async fn connection(
    stream: TcpStream,
    address: SocketAddr,
    router: Router,
    builder: Arc<Builder<TokioExecutor>>,
    timeouts: Timeouts,
    shutdown: CancellationToken,
    _slot: tokio::sync::OwnedSemaphorePermit,
) {
    metrics::gauge!("tidemark_http_connections_open").increment(1.0);
    // The connection's own token: the loop below polls it each time the connection wakes,
    // and polling a waiting token locks its waiters' list; the server's token, shared by
    // every connection, was one lock all connections took for every request.
    let shutdown = shutdown.child_token();
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        inner: stream,
        activity: Arc::clone(&activity),
    });
    let in_service = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let busy = Busy::enter(Arc::clone(&in_service));
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(ConnectInfo(address));
        let router = router.clone();
        async move {
            let response = router.oneshot(request).await;
            drop(busy);
            response
        }
    });
    let conn = builder.serve_connection_with_upgrades(io, service);
    tokio::pin!(conn);
    let mut draining = false;
    loop {
        let idle_timeout = if activity.requests.load(Ordering::Relaxed) == 0 {
            timeouts.first_request
        } else {
            timeouts.idle
        };
        let idle_deadline = activity.last() + idle_timeout;
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, %address, "connection ended with an error");
                }
                break;
            }
            () = shutdown.cancelled(), if !draining => {
                conn.as_mut().graceful_shutdown();
                draining = true;
            }
            () = tokio::time::sleep_until(idle_deadline) => {
                if activity.idle_since(idle_timeout) {
                    tracing::debug!(%address, "closing an idle connection");
                    metrics::counter!("tidemark_http_connections_idle_closed_total").increment(1);
                    break;
                }
            }
        }
    }
    metrics::gauge!("tidemark_http_connections_open").decrement(1.0);
}

/// When a connection last read or wrote a byte, and how many of its requests are being
/// handled (a handler may think for a while without any IO; the request timeout bounds it).
struct Activity {
    started: Instant,
    last_millis: AtomicU64,
    busy: AtomicUsize,
    /// Requests begun on this connection.
    requests: AtomicUsize,
}

impl Activity {
    fn new() -> Self {
        Self {
            started: Instant::now(),
            last_millis: AtomicU64::new(0),
            busy: AtomicUsize::new(0),
            requests: AtomicUsize::new(0),
        }
    }

    fn touch(&self) {
        let millis = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_millis.store(millis, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.started + Duration::from_millis(self.last_millis.load(Ordering::Relaxed))
    }

    /// Nothing in progress, and no byte either way for `timeout`.
    fn idle_since(&self, timeout: Duration) -> bool {
        self.busy.load(Ordering::Relaxed) == 0 && self.last().elapsed() >= timeout
    }
}

/// Marks a request as being handled for as long as it lives.
struct Busy(Arc<Activity>);

impl Busy {
    fn enter(activity: Arc<Activity>) -> Self {
        activity.busy.fetch_add(1, Ordering::Relaxed);
        activity.requests.fetch_add(1, Ordering::Relaxed);
        Self(activity)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::Relaxed);
        self.0.touch();
    }
}

/// A TCP stream that records when bytes last went through it.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let result = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.touch();
        }
        result
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_write(cx, buf);
        if matches!(result, Poll::Ready(Ok(written)) if written > 0) {
            this.activity.touch();
        }
        result
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        if matches!(result, Poll::Ready(Ok(written)) if written > 0) {
            this.activity.touch();
        }
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// Raises this process's soft limit on open files to its hard limit, and says so; warns
/// when even that is below what `max_connections` may need.
pub fn raise_open_file_limit(max_connections: usize) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok(limits) => limits,
        Err(error) => {
            tracing::warn!(%error, "cannot read the open-file limit");
            return;
        }
    };
    if soft < hard {
        match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
            Ok(()) => tracing::info!(from = soft, to = hard, "raised the open-file limit"),
            Err(error) => {
                tracing::warn!(%error, soft, hard, "cannot raise the open-file limit");
            }
        }
    } else {
        tracing::info!(limit = soft, "open-file limit");
    }
    let limit = soft.max(hard);
    // Connections plus the database, storage, carriers and webhooks.
    if (max_connections as u64).saturating_add(256) > limit {
        tracing::warn!(
            max_connections,
            open_file_limit = limit,
            "TIDEMARK_MAX_CONNECTIONS is close to or above the open-file limit: raise the \
             hard limit (ulimit -Hn, LimitNOFILE=) or lower max_connections"
        );
    }
}
