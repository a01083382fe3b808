//! The HTTP listener: an accept loop that bounds what a client can hold.
//!
//! `axum::serve` keeps every connection for as long as the client likes: one that sends
//! nothing, or half a header, or stops reading, holds a file descriptor forever, and enough
//! of them exhaust the process's. So connections are served here, with hyper-util's builder
//! as axum itself does, and:
//!
//! - at most [`ConnectionLimits::max_connections`] at once: one more is answered `503` and
//!   closed at once, and a log line says the limit was reached (once, until it clears);
//! - an HTTP/1 request head must be whole within `header_read_timeout` of the connection's
//!   start or of the end of the previous response, however its bytes trickle in
//!   (slowloris; idle HTTP/1 keep-alive connections are closed by the same rule), and may be
//!   at most `max_header_bytes` (`431` beyond); an HTTP/2 connection has at most
//!   `http2_max_concurrent_streams` streams and the same header-list bound, and must send its
//!   first request within `header_read_timeout` of its last byte;
//! - a connection with no handler working on which nothing is read or written for
//!   `idle_timeout` is closed: idle HTTP/2 connections, and readers that stopped reading a
//!   response;
//! - these timeouts are one timer per connection, in its loop ([`Activity::check`]), not
//!   hyper's header-read timer, which armed a timer for every request head;
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
                header_read: limits.header_read_timeout,
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
    // No timer for HTTP/1: its header-read timeout is the connection loop's
    // ([`Activity::check`]), one timer per connection rather than hyper's one per request.
    builder
        .http1()
        .header_read_timeout(None)
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

/// How long a connection may stay quiet: while a request head arrives, and otherwise.
#[derive(Clone, Copy, Debug)]
struct Timeouts {
    /// An HTTP/1 request head must be whole within this of the connection's start or of the
    /// end of the previous response; an HTTP/2 connection must send its first request
    /// within this of its last byte.
    header_read: Duration,
    /// No byte either way for this long, and no handler working: closed.
    idle: Duration,
}

impl Timeouts {
    /// How often a connection whose deadlines keep moving is looked at again: at most this
    /// late after a deadline a request's end brought forward.
    fn recheck(self) -> Duration {
        self.header_read.min(self.idle)
    }
}

/// Serves one connection until it ends, is idle too long, or the server shuts down.
///
/// Its timeouts are kept by this one loop and one timer per connection, not one per
/// request: the requests only record what happened (atomics and a clock read), and the
/// timer, when it fires, works out whether a deadline has passed or when to look again
/// ([`Activity::check`]). hyper's own HTTP/1 header-read timeout armed, and dropped, a
/// boxed timer for every request head, taking the runtime's timer lock twice.
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
    let activity = Arc::new(Activity::new(Instant::now()));
    let io = TokioIo::new(Watched::new(stream, Arc::clone(&activity)));
    let in_service = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let busy = Busy::enter(Arc::clone(&in_service));
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(ConnectInfo(address));
        let router = router.clone();
        async move {
            let response = router.oneshot(request).await;
            // Sent once hyper drops the body, after its last byte.
            let sending = busy.answered();
            response.map(|response| {
                response.map(|body| Sending {
                    body,
                    _sending: sending,
                })
            })
        }
    });
    let conn = builder.serve_connection_with_upgrades(io, service);
    tokio::pin!(conn);
    let mut draining = false;
    loop {
        let next_check = match activity.check(timeouts, Instant::now()) {
            Check::Again(at) => at,
            Check::Close(why) => {
                tracing::debug!(%address, reason = why.as_str(), "closing a connection");
                if why == Expired::Idle {
                    metrics::counter!("tidemark_http_connections_idle_closed_total").increment(1);
                }
                break;
            }
        };
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
            () = tokio::time::sleep_until(next_check) => {}
        }
    }
    metrics::gauge!("tidemark_http_connections_open").decrement(1.0);
}

/// What a connection has been doing, recorded by its requests and its IO as it happens and
/// read by its loop when its timer fires. Times are milliseconds since the connection
/// started.
struct Activity {
    started: Instant,
    /// The last byte read or written.
    last_millis: AtomicU64,
    /// The end of the last response sent (0: none yet, the connection's start).
    waiting_since_millis: AtomicU64,
    /// Requests whose handler is working (a handler may think for a while without any IO;
    /// the request timeout bounds it).
    in_handler: AtomicUsize,
    /// Requests answered or being answered whose response is not yet all sent.
    unsent: AtomicUsize,
    /// Requests begun on this connection.
    requests: AtomicUsize,
    /// The client opened with HTTP/2's preface.
    http2: AtomicBool,
}

/// Why a connection is closed by its loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expired {
    /// No whole request head in time: a slow or silent client (slowloris), or an idle
    /// HTTP/1 keep-alive connection.
    HeaderRead,
    /// No byte either way for the idle timeout and no handler working.
    Idle,
}

impl Expired {
    fn as_str(self) -> &'static str {
        match self {
            Expired::HeaderRead => "no request head within the header read timeout",
            Expired::Idle => "idle",
        }
    }
}

/// What the connection's loop does when it looks.
#[derive(Debug, PartialEq, Eq)]
enum Check {
    Close(Expired),
    /// Look again then (no deadline can pass before).
    Again(Instant),
}

impl Activity {
    fn new(started: Instant) -> Self {
        Self {
            started,
            last_millis: AtomicU64::new(0),
            waiting_since_millis: AtomicU64::new(0),
            in_handler: AtomicUsize::new(0),
            unsent: AtomicUsize::new(0),
            requests: AtomicUsize::new(0),
            http2: AtomicBool::new(false),
        }
    }

    fn millis(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.started).as_millis()).unwrap_or(u64::MAX)
    }

    fn at(&self, millis: u64) -> Instant {
        self.started + Duration::from_millis(millis)
    }

    /// A byte went through at `now`.
    fn touch(&self, now: Instant) {
        self.last_millis.store(self.millis(now), Ordering::Relaxed);
    }

    /// A request's head is whole: its handler starts.
    fn request_began(&self) {
        self.in_handler.fetch_add(1, Ordering::Relaxed);
        self.unsent.fetch_add(1, Ordering::Relaxed);
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    /// A handler answered at `now`; its response is being sent.
    fn handler_answered(&self, now: Instant) {
        self.touch(now);
        self.in_handler.fetch_sub(1, Ordering::Relaxed);
    }

    /// A response was all sent (or dropped) at `now`: from here the next head is waited for.
    fn response_sent(&self, now: Instant) {
        self.waiting_since_millis
            .store(self.millis(now), Ordering::Relaxed);
        self.unsent.fetch_sub(1, Ordering::Relaxed);
    }

    /// Whether a deadline has passed at `now`, else when to look again:
    ///
    /// - a handler working: nothing to close (the request timeout bounds it);
    /// - no byte for the idle timeout: closed (an idle connection; a client that stopped
    ///   reading its response);
    /// - HTTP/1 (and a connection whose protocol is not known yet) with no response left to
    ///   send: the next request head must be whole within the header-read timeout of the
    ///   connection's start or of the last response's end, however the bytes trickle in;
    /// - HTTP/2 before its first request: the header-read timeout of silence.
    fn check(&self, timeouts: Timeouts, now: Instant) -> Check {
        let recheck = now + timeouts.recheck();
        if self.in_handler.load(Ordering::Relaxed) > 0 {
            return Check::Again(recheck);
        }
        let last = self.at(self.last_millis.load(Ordering::Relaxed));
        let first = self.requests.load(Ordering::Relaxed) == 0;
        let mut deadline = (last + timeouts.idle, Expired::Idle);
        if self.http2.load(Ordering::Relaxed) {
            if first {
                deadline.0 = deadline.0.min(last + timeouts.header_read);
            }
        } else if self.unsent.load(Ordering::Relaxed) == 0 {
            let waiting = self.at(self.waiting_since_millis.load(Ordering::Relaxed));
            let head = waiting + timeouts.header_read;
            if head <= deadline.0 {
                deadline = (head, Expired::HeaderRead);
            }
        }
        if now >= deadline.0 {
            Check::Close(deadline.1)
        } else {
            Check::Again(deadline.0.min(recheck))
        }
    }
}

/// Marks a request's handler as working for as long as it lives.
struct Busy(Option<Arc<Activity>>);

impl Busy {
    fn enter(activity: Arc<Activity>) -> Self {
        activity.request_began();
        Self(Some(activity))
    }

    /// The handler answered: its response is being sent until the [`Sent`] is dropped.
    fn answered(mut self) -> Sent {
        let activity = self.0.take();
        if let Some(activity) = &activity {
            activity.handler_answered(Instant::now());
        }
        Sent(activity)
    }
}

impl Drop for Busy {
    /// The handler's future was dropped before it answered (the connection went away).
    fn drop(&mut self) {
        if let Some(activity) = self.0.take() {
            let now = Instant::now();
            activity.handler_answered(now);
            activity.response_sent(now);
        }
    }
}

/// Marks a response as being sent for as long as it lives.
struct Sent(Option<Arc<Activity>>);

impl Drop for Sent {
    fn drop(&mut self) {
        if let Some(activity) = self.0.take() {
            activity.response_sent(Instant::now());
        }
    }
}

pin_project_lite::pin_project! {
    /// A response body that marks its response sent when hyper drops it (after its last
    /// byte): the body as it is, no box.
    struct Sending {
        #[pin]
        body: Body,
        _sending: Sent,
    }
}

impl hyper::body::Body for Sending {
    type Data = <Body as hyper::body::Body>::Data;
    type Error = <Body as hyper::body::Body>::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        hyper::body::Body::poll_frame(self.project().body, cx)
    }

    fn is_end_stream(&self) -> bool {
        hyper::body::Body::is_end_stream(&self.body)
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::Body::size_hint(&self.body)
    }
}

/// HTTP/2's connection preface: a connection that opens with it is HTTP/2 (hyper-util's
/// automatic builder tells the protocols apart the same way).
const HTTP2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A TCP stream that records when bytes last went through it, and whether it opened with
/// HTTP/2's preface.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
    /// How much of the preface the first bytes matched; `None` once decided.
    preface_matched: Option<usize>,
}

impl Watched {
    fn new(inner: TcpStream, activity: Arc<Activity>) -> Self {
        Self {
            inner,
            activity,
            preface_matched: Some(0),
        }
    }

    fn read(&mut self, bytes: &[u8]) {
        self.activity.touch(Instant::now());
        if let Some(matched) = self.preface_matched {
            self.preface_matched = sniff(matched, bytes, &self.activity.http2);
        }
    }
}

/// Matches `bytes`, read after `matched` bytes of the preface matched, against the rest of
/// it: the bytes matched so far, or `None` once decided (`http2` set when it matched whole).
fn sniff(matched: usize, bytes: &[u8], http2: &AtomicBool) -> Option<usize> {
    let rest = &HTTP2_PREFACE[matched..];
    let compared = bytes.len().min(rest.len());
    if bytes[..compared] != rest[..compared] {
        return None;
    }
    if compared == rest.len() {
        http2.store(true, Ordering::Relaxed);
        return None;
    }
    Some(matched + compared)
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
            this.read(&buf.filled()[before..]);
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
            this.activity.touch(Instant::now());
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
            this.activity.touch(Instant::now());
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

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUTS: Timeouts = Timeouts {
        header_read: Duration::from_secs(10),
        idle: Duration::from_secs(60),
    };

    fn secs(activity: &Activity, seconds: f64) -> Instant {
        activity.started + Duration::from_secs_f64(seconds)
    }

    fn check_at(activity: &Activity, seconds: f64) -> Check {
        activity.check(TIMEOUTS, secs(activity, seconds))
    }

    fn again_at(activity: &Activity, seconds: f64) -> Check {
        Check::Again(secs(activity, seconds))
    }

    #[test]
    fn an_http1_head_must_be_whole_within_the_header_timeout_of_the_start_however_it_trickles_in() {
        let activity = Activity::new(Instant::now());
        for second in 1..10 {
            activity.touch(secs(&activity, f64::from(second)));
        }

        assert_eq!(check_at(&activity, 9.5), again_at(&activity, 10.0));
        assert_eq!(check_at(&activity, 10.0), Check::Close(Expired::HeaderRead));
    }

    #[test]
    fn the_header_timeout_starts_again_when_a_response_has_been_sent() {
        let activity = Activity::new(Instant::now());
        activity.request_began();
        activity.handler_answered(secs(&activity, 1.0));
        activity.touch(secs(&activity, 2.0));
        // Still sending: only the idle timeout counts, looked at again within the shorter.
        assert_eq!(check_at(&activity, 30.0), again_at(&activity, 40.0));

        activity.response_sent(secs(&activity, 31.0));

        assert_eq!(check_at(&activity, 40.0), again_at(&activity, 41.0));
        assert_eq!(check_at(&activity, 41.0), Check::Close(Expired::HeaderRead));
    }

    #[test]
    fn a_working_handler_keeps_its_connection_however_long_it_is_silent() {
        let activity = Activity::new(Instant::now());
        activity.request_began();

        assert_eq!(check_at(&activity, 1000.0), again_at(&activity, 1010.0));
    }

    #[test]
    fn a_client_that_stopped_reading_its_response_is_closed_at_the_idle_timeout() {
        let activity = Activity::new(Instant::now());
        activity.request_began();
        activity.handler_answered(secs(&activity, 1.0));
        activity.touch(secs(&activity, 2.0));

        assert_eq!(check_at(&activity, 61.5), again_at(&activity, 62.0));
        assert_eq!(check_at(&activity, 62.0), Check::Close(Expired::Idle));
    }

    #[test]
    fn a_request_whose_handler_is_dropped_counts_as_answered_and_sent() {
        let activity = Arc::new(Activity::new(Instant::now()));
        let busy = Busy::enter(Arc::clone(&activity));

        drop(busy);

        assert_eq!(activity.in_handler.load(Ordering::Relaxed), 0);
        assert_eq!(activity.unsent.load(Ordering::Relaxed), 0);
        assert_eq!(activity.requests.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_response_counts_as_sent_when_its_body_is_dropped() {
        let activity = Arc::new(Activity::new(Instant::now()));
        let sending = Busy::enter(Arc::clone(&activity)).answered();
        assert_eq!(activity.in_handler.load(Ordering::Relaxed), 0);
        assert_eq!(activity.unsent.load(Ordering::Relaxed), 1);
        let body = Sending {
            body: Body::from("answer"),
            _sending: sending,
        };

        drop(body);

        assert_eq!(activity.unsent.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn an_http2_connection_is_closed_after_the_idle_timeout_not_the_header_timeout() {
        let activity = Activity::new(Instant::now());
        activity.http2.store(true, Ordering::Relaxed);
        activity.touch(secs(&activity, 5.0));
        // Before its first request: the header-read timeout of silence.
        assert_eq!(check_at(&activity, 14.0), again_at(&activity, 15.0));
        activity.request_began();
        activity.handler_answered(secs(&activity, 14.0));
        activity.response_sent(secs(&activity, 14.0));

        assert_eq!(check_at(&activity, 30.0), again_at(&activity, 40.0));
        assert_eq!(check_at(&activity, 73.5), again_at(&activity, 74.0));
        assert_eq!(check_at(&activity, 74.0), Check::Close(Expired::Idle));
    }

    #[test]
    fn http2_is_told_by_its_preface_even_when_it_comes_in_pieces() {
        let http2 = AtomicBool::new(false);
        assert_eq!(sniff(0, b"PRI * HTTP/2.0\r\n", &http2), Some(16));
        assert!(!http2.load(Ordering::Relaxed));
        assert_eq!(sniff(16, b"\r\nSM\r\n\r\n\0\0\x12\x04", &http2), None);
        assert!(http2.load(Ordering::Relaxed));

        let http1 = AtomicBool::new(false);
        assert_eq!(sniff(0, b"GET / HTTP/1.1\r\n", &http1), None);
        assert_eq!(sniff(3, b" / HTTP/1.1\r\n", &http1), None);
        assert!(!http1.load(Ordering::Relaxed));
    }
}
