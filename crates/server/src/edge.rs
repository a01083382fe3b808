//! The layers every route passes through — the API, the console, the carriers' callbacks,
//! the docs and the assets alike: request ids, request logs, metrics, the request timeout,
//! the body limit and the body timeout, panics caught. One door left out of them is one an
//! attacker uses (slow sign-in bodies held connections open; console requests went unlogged),
//! so they are put around the whole router here, once.

use std::time::Instant;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Response as HttpResponse, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::request_id::{MakeRequestId, MakeRequestUuid};
use tracing::Instrument;

use crate::api::error::ApiError;
use crate::app::AppState;
use crate::console::pages::{PageError, error_page};

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// `router` (every route of the process) inside the shared layers.
///
/// `observe` is outermost and does, in one place, what three tower-http layers did (request
/// id, request span and its log line, the id copied to the response) besides metrics and the
/// timeout: each of those layers wrapped the future and the body once more, and moving and
/// polling those wrappers was most of the layers' cost (`benches/middleware.rs`). Panics are
/// caught inside it, so a panic's 500 is logged and counted like any other answer.
pub fn layers(router: Router, state: &AppState) -> Router {
    router.layer(
        ServiceBuilder::new()
            .layer(middleware::from_fn_with_state(state.clone(), observe))
            .layer(CatchPanicLayer::custom(
                |_: Box<dyn std::any::Any + Send>| {
                    tracing::error!("a request handler panicked");
                    ApiError::Internal(anyhow::anyhow!("handler panicked")).into_response()
                },
            ))
            .layer(CompressionLayer::new())
            // Routes that take uploads set their own, larger limit.
            .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
            // A body that pauses longer than this fails (slow uploads hold a connection);
            // the request timeout in `observe` bounds the whole.
            .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
                state.config.limits.connections.request_body_timeout,
            )),
    )
}

/// The request's id: the client's `x-request-id` when it sent a usable one, else a new
/// UUID; set on the request (handlers and logs see it) and returned on the response.
fn request_id(request: &mut Request) -> HeaderValue {
    if let Some(given) = request.headers().get(REQUEST_ID) {
        return given.clone();
    }
    // tower-http's maker, as its request-id layer used: a random UUID, never the injected
    // id generator's (tests' sequential ids would shift with every request).
    let made = MakeRequestUuid.make_request_id(request).map_or_else(
        || HeaderValue::from_static("-"),
        |id| id.header_value().clone(),
    );
    request.headers_mut().insert(REQUEST_ID, made.clone());
    made
}

/// The method as a metric label: the standard ones by name, anything else `other`, so a
/// client inventing methods cannot create series.
fn method_label(method: &axum::http::Method) -> &'static str {
    use axum::http::Method;
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
fn status_label(status: axum::http::StatusCode) -> String {
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

/// Records request metrics and enforces the request timeout. Every label comes from a fixed
/// set: the route is the matched template (`/v2/shipments/{id}`, `/shipments/{id}`), never
/// the raw path.
async fn observe(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = request_id(&mut request);
    let span = tracing::info_span!(
        "request",
        method = %request.method(),
        path = %request.uri().path(),
        request_id = id.to_str().unwrap_or(""),
    );
    let method = method_label(request.method());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let html = wants_html(request.headers());
    let answered = tokio::time::timeout(state.config.request_timeout, next.run(request))
        .instrument(span.clone())
        .await;
    let mut response: HttpResponse<_> = match answered {
        Ok(response) => response,
        Err(_) if html => error_page(&PageError::Unavailable),
        Err(_) => ApiError::Unavailable.into_response(),
    };
    let elapsed = started.elapsed();
    let code = response.status();
    span.in_scope(|| {
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
    response.headers_mut().insert(REQUEST_ID, id);
    let status = status_label(code);
    metrics::counter!("http_requests_total", "method" => method, "route" => route.clone(), "status" => status)
        .increment(1);
    metrics::histogram!("http_request_duration_seconds", "method" => method, "route" => route)
        .record(elapsed.as_secs_f64());
    response
}
