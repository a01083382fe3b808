//! The layers every route passes through — the API, the console, the carriers' callbacks,
//! the docs and the assets alike: request ids, request logs, metrics, the request timeout,
//! the body limit and the body timeout, panics caught, responses compressed when asked. One
//! door left out of them is one an attacker uses (slow sign-in bodies held connections open;
//! console requests went unlogged), so they are put around the whole router here, once.
//!
//! They are one hand-written tower service ([`Edge`]) with a concrete future rather than a
//! stack of layers: each layer of the stack wrapped the request's future and the response's
//! body once more (the panic catcher and the compression layer each boxed the body, and
//! axum boxed the result again), `from_fn` boxed its future and re-boxed the inner service on
//! every request, and the metrics' labels were built as strings and looked up in the
//! registry on every request. The time that went to them is in `bench/README.md` ("Tidemark
//! against bare axum") and `benches/middleware.rs`.

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, HttpBody};
use axum::extract::{DefaultBodyLimit, MatchedPath, Request};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use metrics::{Counter, Histogram};
use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};
use tower::{Layer, Service};
use tower_http::compression::{Compression, DefaultPredicate, Predicate};
use tower_http::timeout::TimeoutBody;
use tracing::Span;

use crate::api::error::ApiError;
use crate::app::AppState;
use crate::console::pages::{PageError, error_page};

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// `router` (every route of the process) inside the shared layers.
pub fn layers(router: Router, state: &AppState) -> Router {
    let config = &state.config;
    with_settings(
        router,
        Settings {
            request_timeout: config.request_timeout,
            max_body_bytes: config.max_body_bytes,
            request_body_timeout: config.limits.connections.request_body_timeout,
        },
    )
}

/// What the shared layers enforce.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    /// The whole request's deadline: past it the client gets a 503 (an HTML page for a
    /// browser) and the handler is dropped.
    pub request_timeout: Duration,
    /// The default body limit; routes that take uploads set their own, larger one.
    pub max_body_bytes: usize,
    /// A body that pauses longer than this fails (slow uploads hold a connection).
    pub request_body_timeout: Duration,
}

/// `router` inside the shared layers with these settings.
pub(crate) fn with_settings(router: Router, settings: Settings) -> Router {
    // `Router::layer` wraps each route (and the fallback) on its own, after routing, so the
    // matched route template is known for the metrics' label.
    router.layer(EdgeLayer(settings))
}

/// The layer that makes one [`Edge`] around each route.
#[derive(Clone, Copy)]
struct EdgeLayer(Settings);

impl<S> Layer<S> for EdgeLayer {
    type Service = Edge<<DefaultBodyLimit as Layer<S>>::Service>;

    fn layer(&self, inner: S) -> Self::Service {
        Edge {
            // DefaultBodyLimit only marks the request (the extractors enforce it); its
            // service adds no future or body of its own.
            inner: DefaultBodyLimit::max(self.0.max_body_bytes).layer(inner),
            settings: self.0,
            series: Arc::new(SeriesCache::default()),
        }
    }
}

/// One route inside the shared layers. For each request, in one place and one future:
///
/// - the request id: the client's `x-request-id` when it sent one, else a new UUID; set on
///   the request (handlers and logs see it) and on the response;
/// - a `request` span (method, path, request id) around the handler, and a log line with
///   the status and latency when it answers (`error` for a 5xx, else `info`);
/// - the metrics `http_requests_total` (method, route template, status) and
///   `http_request_duration_seconds` (method, route template), every label from a fixed set;
/// - the request timeout (a 503, an HTML page for browsers), the default body limit, and
///   the pause allowed in a body (only a body that can still send something is watched);
/// - a panic in the handler caught, logged and answered 500 (then logged and counted like
///   any other answer);
/// - the response compressed when the client sent `Accept-Encoding` (tower-http's
///   `Compression`); without it, the response only gets the `Vary: accept-encoding` that
///   `Compression` would have added.
#[derive(Clone)]
pub(crate) struct Edge<S> {
    inner: S,
    settings: Settings,
    /// The metric handles of this route's series, made once.
    series: Arc<SeriesCache>,
}

impl<S> Service<Request> for Edge<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = EdgeFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let started = Instant::now();
        let id = request_id(&mut request);
        let span = tracing::info_span!(
            "request",
            method = %request.method(),
            path = %request.uri().path(),
            request_id = id.to_str().unwrap_or(""),
        );
        let method = method_label(request.method());
        let route = request.extensions().get::<MatchedPath>().cloned();
        let html = wants_html(request.headers());
        // An empty body (every GET) has nothing to wait for: no timer, no wrapper.
        if !request.body().is_end_stream() {
            let timeout = self.settings.request_body_timeout;
            request = request.map(|body| Body::new(TimeoutBody::new(timeout, body)));
        }
        let compress = request.headers().contains_key(header::ACCEPT_ENCODING);
        let inner = {
            let _entered = (!span.is_disabled()).then(|| span.enter());
            let inner = &mut self.inner;
            std::panic::catch_unwind(AssertUnwindSafe(move || {
                if compress {
                    Inner::Compressed {
                        future: Compression::new(inner).call(request),
                    }
                } else {
                    Inner::Plain {
                        future: inner.call(request),
                    }
                }
            }))
            .unwrap_or_else(|_| {
                handler_panicked();
                Inner::Panicked
            })
        };
        EdgeFuture {
            inner,
            timer: None,
            deadline: started + self.settings.request_timeout,
            started,
            id: Some(id),
            span,
            method,
            route,
            html,
            series: Arc::clone(&self.series),
        }
    }
}

pin_project! {
    /// The route's future inside the shared layers.
    pub(crate) struct EdgeFuture<F> {
        #[pin]
        inner: Inner<F>,
        // Armed only if the route has not answered at its first poll (a static route, or one
        // answered from a cache, has): arming and dropping a timer takes the runtime's
        // timer lock each time.
        #[pin]
        timer: Option<Sleep>,
        deadline: Instant,
        started: Instant,
        id: Option<HeaderValue>,
        span: Span,
        method: &'static str,
        route: Option<MatchedPath>,
        html: bool,
        series: Arc<SeriesCache>,
    }
}

pin_project! {
    #[project = InnerProjection]
    enum Inner<F> {
        Plain { #[pin] future: F },
        Compressed { #[pin] future: tower_http::compression::ResponseFuture<F, DefaultPredicate> },
        // The handler panicked (answered 500), or ran out of time (dropped).
        Panicked,
        Gone,
    }
}

impl<F> Future for EdgeFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let answered = {
            let _entered = (!this.span.is_disabled()).then(|| this.span.enter());
            poll_inner(this.inner.as_mut(), cx)
        };
        let mut response = match answered {
            Poll::Ready(response) => response,
            Poll::Pending => {
                if this.timer.is_none() {
                    this.timer
                        .set(Some(tokio::time::sleep_until(*this.deadline)));
                }
                if let Some(timer) = this.timer.as_mut().as_pin_mut() {
                    ready!(timer.poll(cx));
                }
                this.inner.set(Inner::Gone);
                if *this.html {
                    error_page(&PageError::Unavailable)
                } else {
                    ApiError::Unavailable.into_response()
                }
            }
        };
        let elapsed = this.started.elapsed();
        let code = response.status();
        // Whether or not the span is enabled: a 5xx is logged at `error`, which a level
        // that leaves out the `info` span still keeps.
        this.span.in_scope(|| {
            let latency_ms = elapsed.as_secs_f64() * 1000.0;
            if code.is_server_error() {
                tracing::error!(status = code.as_u16(), latency_ms, "response failed");
            } else {
                tracing::info!(
                    status = code.as_u16(),
                    latency_ms,
                    "finished processing request"
                );
            }
        });
        if let Some(id) = this.id.take() {
            response.headers_mut().insert(REQUEST_ID, id);
        }
        this.series
            .get(this.method, this.route.as_ref(), code)
            .record(elapsed);
        Poll::Ready(Ok(response))
    }
}

/// Polls the route, catching a panic in it (answered 500).
fn poll_inner<F>(inner: Pin<&mut Inner<F>>, cx: &mut Context<'_>) -> Poll<Response>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    let mut inner = inner;
    let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
        match inner.as_mut().project() {
            InnerProjection::Plain { future } => future.poll(cx).map(|answer| match answer {
                Ok(response) => response,
                Err(never) => match never {},
            }),
            InnerProjection::Compressed { future } => future.poll(cx).map(|answer| match answer {
                Ok(response) => response.map(Body::new),
                Err(never) => match never {},
            }),
            InnerProjection::Panicked => Poll::Ready(panic_response()),
            // Never polled again once it has answered.
            InnerProjection::Gone => Poll::Pending,
        }
    }));
    match polled {
        Ok(Poll::Ready(mut response)) => {
            if matches!(inner.as_ref().get_ref(), Inner::Plain { .. }) {
                vary_as_compression_would(&mut response);
            }
            inner.set(Inner::Gone);
            Poll::Ready(response)
        }
        Ok(Poll::Pending) => Poll::Pending,
        Err(_) => {
            handler_panicked();
            inner.set(Inner::Gone);
            Poll::Ready(panic_response())
        }
    }
}

fn handler_panicked() {
    tracing::error!("a request handler panicked");
}

fn panic_response() -> Response {
    ApiError::Internal(anyhow::anyhow!("handler panicked")).into_response()
}

/// What tower-http's `Compression` does to a response it leaves uncompressed because the
/// client asked for no encoding: a `Vary: accept-encoding` when the response is one it would
/// have compressed, so caches keep the encodings apart.
fn vary_as_compression_would(response: &mut Response) {
    let headers = response.headers();
    let compressible = !headers.contains_key(header::CONTENT_ENCODING)
        && !headers.contains_key(header::CONTENT_RANGE)
        && DefaultPredicate::new().should_compress(response);
    let accept_encoding = header::ACCEPT_ENCODING.as_str().as_bytes();
    if compressible
        && !response
            .headers()
            .get_all(header::VARY)
            .iter()
            .any(|value| {
                value
                    .as_bytes()
                    .windows(accept_encoding.len())
                    .any(|window| window.eq_ignore_ascii_case(accept_encoding))
            })
    {
        response.headers_mut().append(
            header::VARY,
            HeaderValue::from_static(header::ACCEPT_ENCODING.as_str()),
        );
    }
}

/// The request's id: the client's `x-request-id` when it sent one, else a new random
/// (version 4) UUID; set on the request (handlers and logs see it) and returned on the
/// response.
fn request_id(request: &mut Request) -> HeaderValue {
    if let Some(given) = request.headers().get(REQUEST_ID) {
        return given.clone();
    }
    let made = new_request_id();
    request.headers_mut().insert(REQUEST_ID, made.clone());
    made
}

/// A random UUID written out in a stack buffer, never the injected id generator's (tests'
/// sequential ids would shift with every request); tower-http's maker, used before, made a
/// `String` and then copied it into the header value.
fn new_request_id() -> HeaderValue {
    let uuid = uuid::Builder::from_random_bytes(rand::random()).into_uuid();
    let mut buffer = uuid::Uuid::encode_buffer();
    let text = uuid.hyphenated().encode_lower(&mut buffer);
    HeaderValue::from_str(text).unwrap_or_else(|_| HeaderValue::from_static("-"))
}

/// The method as a metric label: the standard ones by name, anything else `other`, so a
/// client inventing methods cannot create series.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

/// The status as a metric label: the code when it is one of HTTP's, else `other`.
fn status_label(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(_) => status.as_str().to_owned(),
        None => "other".to_owned(),
    }
}

/// Whether the client is a browser asking for a page (the console), which is answered with
/// an HTML page rather than a JSON:API error document.
fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"))
}

/// The metric handles of one series: a method, route template and status.
struct Series {
    method: &'static str,
    /// `None`: the fallback (no route matched).
    route: Option<Arc<str>>,
    status: StatusCode,
    requests: Counter,
    duration: Histogram,
}

impl Series {
    fn new(method: &'static str, route: Option<&MatchedPath>, status: StatusCode) -> Self {
        let route_label = route.map_or("unmatched", MatchedPath::as_str).to_owned();
        Self {
            method,
            route: route.map(|path| Arc::from(path.as_str())),
            status,
            requests: metrics::counter!(
                "http_requests_total",
                "method" => method,
                "route" => route_label.clone(),
                "status" => status_label(status)
            ),
            duration: metrics::histogram!(
                "http_request_duration_seconds",
                "method" => method,
                "route" => route_label
            ),
        }
    }

    fn is(&self, method: &str, route: Option<&MatchedPath>, status: StatusCode) -> bool {
        self.status == status
            && self.method == method
            && match (&self.route, route) {
                (Some(mine), Some(theirs)) => **mine == *theirs.as_str(),
                (None, None) => true,
                _ => false,
            }
    }

    fn record(&self, elapsed: Duration) {
        self.requests.increment(1);
        self.duration.record(elapsed.as_secs_f64());
    }
}

/// How many series one route keeps handles for (its methods and statuses); beyond, a
/// series' handles are looked up in the registry for each request, as the metrics macros do.
const SERIES_PER_ROUTE: usize = 8;

/// A route's series, registered on first use; reading them takes no lock.
#[derive(Default)]
struct SeriesCache {
    slots: [OnceLock<Series>; SERIES_PER_ROUTE],
}

/// A series' handles, the route's own or made for this request.
enum Found<'a> {
    Kept(&'a Series),
    Made(Series),
}

impl Found<'_> {
    fn record(&self, elapsed: Duration) {
        match self {
            Found::Kept(series) => series.record(elapsed),
            Found::Made(series) => series.record(elapsed),
        }
    }
}

impl SeriesCache {
    fn get(
        &self,
        method: &'static str,
        route: Option<&MatchedPath>,
        status: StatusCode,
    ) -> Found<'_> {
        for slot in &self.slots {
            let series = slot.get_or_init(|| Series::new(method, route, status));
            if series.is(method, route, status) {
                return Found::Kept(series);
            }
        }
        Found::Made(Series::new(method, route, status))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::body::Body;
    use axum::http::{Request, StatusCode, header};
    use axum::routing::{get, post};
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    const SETTINGS: Settings = Settings {
        request_timeout: Duration::from_secs(30),
        max_body_bytes: 1024,
        request_body_timeout: Duration::from_secs(10),
    };

    /// Deadlines short enough for the tests not to wait long (nothing asserts on time).
    const SHORT: Settings = Settings {
        request_timeout: Duration::from_millis(200),
        max_body_bytes: 1024,
        request_body_timeout: Duration::from_millis(100),
    };

    fn router() -> Router {
        router_with(SETTINGS)
    }

    fn router_with(settings: Settings) -> Router {
        // The recorder first: a route keeps the handles it gets at its first request.
        crate::telemetry::prometheus();
        let routes = Router::new()
            .route("/edge-test/bytes", get(|| async { "x".repeat(700) }))
            .route(
                "/edge-test/panic",
                get(|| async {
                    if std::hint::black_box(true) {
                        panic!("a handler bug");
                    }
                    "never"
                }),
            )
            .route(
                "/edge-test/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    "late"
                }),
            )
            .route(
                "/edge-test/echo",
                post(|body: axum::body::Bytes| async move { body }),
            );
        with_settings(routes, settings)
    }

    async fn send(request: Request<Body>) -> (Response, Vec<u8>) {
        send_to(router(), request).await
    }

    async fn send_to(router: Router, request: Request<Body>) -> (Response, Vec<u8>) {
        let response = router.oneshot(request).await.expect("infallible");
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.expect("a body").to_bytes().to_vec();
        (Response::from_parts(parts, Body::empty()), bytes)
    }

    fn get_request(uri: &str) -> axum::http::request::Builder {
        Request::get(uri)
    }

    fn rendered() -> String {
        crate::telemetry::prometheus().render()
    }

    #[tokio::test]
    async fn a_request_id_is_made_or_kept_and_returned() {
        let (made, _) = send(get_request("/edge-test/bytes").body(Body::empty()).unwrap()).await;
        let (kept, _) = send(
            get_request("/edge-test/bytes")
                .header("x-request-id", "trace-me-7")
                .body(Body::empty())
                .unwrap(),
        )
        .await;

        let made = made.headers()["x-request-id"].to_str().unwrap().to_owned();
        let uuid = uuid::Uuid::parse_str(&made).expect("a UUID");
        assert_eq!(uuid.get_version(), Some(uuid::Version::Random), "{made}");
        assert_eq!(
            made,
            uuid.hyphenated().to_string(),
            "lower case, hyphenated"
        );
        assert_eq!(kept.headers()["x-request-id"], "trace-me-7");
    }

    #[tokio::test]
    async fn a_panic_is_a_500_with_its_request_id_and_is_counted() {
        let (response, body) = send(
            get_request("/edge-test/panic")
                .header("x-request-id", "panicky")
                .body(Body::empty())
                .unwrap(),
        )
        .await;

        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(response.headers()["x-request-id"], "panicky");
        assert!(String::from_utf8_lossy(&body).contains("\"errors\""));
        let text = rendered();
        assert!(
            text.lines()
                .any(|line| line.starts_with("http_requests_total{")
                    && line.contains("route=\"/edge-test/panic\"")
                    && line.contains("status=\"500\"")),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_request_past_its_deadline_is_a_503_json_or_html() {
        let (api, body) = send_to(
            router_with(SHORT),
            get_request("/edge-test/slow").body(Body::empty()).unwrap(),
        )
        .await;
        let (page, html) = send_to(
            router_with(SHORT),
            get_request("/edge-test/slow")
                .header(header::ACCEPT, "text/html")
                .body(Body::empty())
                .unwrap(),
        )
        .await;

        assert_eq!(api.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(api.headers().contains_key("x-request-id"));
        assert!(String::from_utf8_lossy(&body).contains("\"errors\""));
        assert_eq!(page.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(String::from_utf8_lossy(&html).contains("<html"));
        let text = rendered();
        assert!(
            text.lines()
                .any(|line| line.starts_with("http_requests_total{")
                    && line.contains("route=\"/edge-test/slow\"")
                    && line.contains("status=\"503\"")),
            "{text}"
        );
    }

    #[tokio::test]
    async fn the_deadline_is_armed_only_for_a_route_that_has_not_answered_at_its_first_poll() {
        crate::telemetry::prometheus();
        let routes = Router::new()
            .route("/answered", get(|| async { "now" }))
            .route("/working", get(std::future::pending::<&'static str>));
        let mut edge = EdgeLayer(SETTINGS).layer(routes);
        let answered = edge.call(get_request("/answered").body(Body::empty()).unwrap());
        let working = edge.call(get_request("/working").body(Body::empty()).unwrap());
        let mut answered = std::pin::pin!(answered);
        let mut working = std::pin::pin!(working);

        let first = futures::poll!(answered.as_mut());
        let second = futures::poll!(working.as_mut());

        assert!(matches!(first, Poll::Ready(Ok(ref response)) if response.status() == 200));
        assert!(answered.timer.is_none());
        assert!(second.is_pending());
        assert!(working.timer.is_some());
        assert_eq!(
            working.deadline.duration_since(working.started),
            SETTINGS.request_timeout
        );
    }

    #[tokio::test]
    async fn responses_are_compressed_only_when_asked_and_vary_either_way() {
        let (plain, plain_body) =
            send(get_request("/edge-test/bytes").body(Body::empty()).unwrap()).await;
        let (gzipped, gzipped_body) = send(
            get_request("/edge-test/bytes")
                .header(header::ACCEPT_ENCODING, "gzip")
                .body(Body::empty())
                .unwrap(),
        )
        .await;

        assert_eq!(plain_body.len(), 700);
        assert!(!plain.headers().contains_key(header::CONTENT_ENCODING));
        assert_eq!(plain.headers()[header::VARY], "accept-encoding");
        assert_eq!(gzipped.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(gzipped.headers()[header::VARY], "accept-encoding");
        assert!(gzipped_body.len() < 100, "{}", gzipped_body.len());
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_a_413_and_one_within_is_read() {
        let (over, _) = send(
            Request::post("/edge-test/echo")
                .body(Body::from(vec![b'a'; 2048]))
                .unwrap(),
        )
        .await;
        let (within, echoed) = send(
            Request::post("/edge-test/echo")
                .body(Body::from(vec![b'a'; 512]))
                .unwrap(),
        )
        .await;

        assert_eq!(over.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(within.status(), StatusCode::OK);
        assert_eq!(echoed.len(), 512);
    }

    #[tokio::test]
    async fn a_body_that_pauses_too_long_fails() {
        let (sender, receiver) =
            tokio::sync::mpsc::channel::<Result<axum::body::Bytes, std::io::Error>>(1);
        sender
            .send(Ok(axum::body::Bytes::from_static(b"first part")))
            .await
            .unwrap();
        let body = Body::from_stream(paused_stream(receiver));

        let (response, _) = send_to(
            router_with(SHORT),
            Request::post("/edge-test/echo").body(body).unwrap(),
        )
        .await;
        drop(sender);

        assert!(response.status().is_client_error(), "{}", response.status());
    }

    /// A stream of what `receiver` is sent (the sender is kept, so the body pauses).
    fn paused_stream(
        receiver: tokio::sync::mpsc::Receiver<Result<axum::body::Bytes, std::io::Error>>,
    ) -> impl futures::Stream<Item = Result<axum::body::Bytes, std::io::Error>> {
        futures::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|item| (item, receiver))
        })
    }

    #[test]
    fn series_are_kept_per_method_and_status_and_unmatched_requests_share_one() {
        let cache = SeriesCache::default();
        let route = None;

        let first = cache.get("GET", route, StatusCode::OK);
        assert!(matches!(first, Found::Kept(_)));
        for status in [200, 404, 500, 201, 202, 203, 204, 205, 206] {
            let status = StatusCode::from_u16(status).unwrap();
            let found = cache.get("GET", route, status);
            found.record(Duration::from_millis(1));
        }

        // Eight slots: the ninth distinct series is made each time, still recorded.
        assert!(matches!(
            cache.get("GET", route, StatusCode::from_u16(206).unwrap()),
            Found::Made(_)
        ));
        assert!(matches!(
            cache.get("GET", route, StatusCode::NOT_FOUND),
            Found::Kept(_)
        ));
        assert!(matches!(
            cache.get("HEAD", route, StatusCode::NOT_FOUND),
            Found::Made(_)
        ));
    }
}
