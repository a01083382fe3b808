//! The HTTP API: one module per URL segment under `/v2`, plus operations endpoints.
//!
//! Every response that is not a success is a JSON:API error document, including unknown
//! routes (404), wrong methods (405), oversized bodies (413), timeouts and panics.

pub mod api_keys;
pub mod auth;
pub mod containers;
pub mod custom_field_definitions;
pub mod custom_fields;
pub mod dcsa_notifications;
pub mod direct_uploads;
pub mod docs;
pub mod document_schemas;
pub mod documents;
pub mod email_submissions;
pub mod error;
pub mod extract;
pub mod health;
pub mod idempotency;
pub mod jsonapi;
pub mod map_geojson;
pub mod metro_areas;
pub mod parties;
pub mod ports;
pub mod raw_events;
pub mod search;
pub mod shipments;
pub mod shipping_lines;
pub mod terminals;
pub mod tracking_requests;
pub mod vessels;
pub mod webhook_notifications;
pub mod webhooks;

use std::time::Instant;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{HeaderName, Response as HttpResponse};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use utoipa_axum::router::OpenApiRouter;

use crate::api::error::ApiError;
use crate::app::AppState;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The `/v2` routes with their OpenAPI description.
pub fn v2_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(docs::base_openapi())
        .merge(api_keys::router())
        .merge(ports::router())
        .merge(metro_areas::router())
        .merge(shipping_lines::router())
        .merge(terminals::router())
        .merge(tracking_requests::router())
        .merge(shipments::router())
        .merge(containers::router())
        .merge(search::router())
        .merge(raw_events::router())
        .merge(parties::router())
        .merge(webhooks::router())
        .merge(webhook_notifications::router())
        .merge(vessels::router())
        .merge(map_geojson::router())
        .merge(documents::router())
        .merge(document_schemas::router())
        .merge(email_submissions::router())
        .merge(direct_uploads::router())
        .merge(custom_fields::router())
        .merge(custom_field_definitions::router())
}

pub fn router(state: AppState) -> Router {
    let (v2, mut openapi) = v2_routes().split_for_parts();
    // The last layer added runs first: authenticate, then handle idempotency keys.
    let v2 = v2
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            idempotency::idempotency,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ));
    let (operations, operations_openapi) = health::router().split_for_parts();
    openapi.merge(operations_openapi);
    let max_body = state.config.max_body_bytes;
    Router::new()
        .merge(v2)
        .merge(operations)
        .merge(dcsa_notifications::router())
        .merge(documents::public_router())
        .merge(direct_uploads::public_router())
        .merge(docs::router(openapi))
        .fallback(|| async { ApiError::NotFound })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .layer(
            ServiceBuilder::new()
                .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
                .layer(
                    TraceLayer::new_for_http()
                        .on_response(DefaultOnResponse::new().level(tracing::Level::INFO))
                        .make_span_with(|request: &Request| {
                            let request_id = request
                                .headers()
                                .get(REQUEST_ID)
                                .and_then(|value| value.to_str().ok())
                                .unwrap_or("");
                            tracing::info_span!(
                                "request",
                                method = %request.method(),
                                path = %request.uri().path(),
                                request_id,
                            )
                        }),
                )
                .layer(PropagateRequestIdLayer::new(REQUEST_ID))
                .layer(CatchPanicLayer::custom(
                    |_: Box<dyn std::any::Any + Send>| {
                        tracing::error!("a request handler panicked");
                        ApiError::Internal(anyhow::anyhow!("handler panicked")).into_response()
                    },
                ))
                .layer(middleware::from_fn_with_state(state.clone(), observe))
                .layer(CompressionLayer::new())
                .layer(DefaultBodyLimit::max(max_body))
                // A body that pauses longer than this fails (slow uploads hold a connection);
                // the request timeout above bounds the whole.
                .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
                    state.config.limits.connections.request_body_timeout,
                )),
        )
        .with_state(state)
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

/// Records request metrics and enforces the request timeout. Every label comes from a fixed
/// set: the route is the matched template (`/v2/shipments/{id}`), never the raw path.
async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = method_label(request.method());
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let response: HttpResponse<_> =
        match tokio::time::timeout(state.config.request_timeout, next.run(request)).await {
            Ok(response) => response,
            Err(_) => ApiError::Unavailable.into_response(),
        };
    let status = status_label(response.status());
    metrics::counter!("http_requests_total", "method" => method, "route" => route.clone(), "status" => status)
        .increment(1);
    metrics::histogram!("http_request_duration_seconds", "method" => method, "route" => route)
        .record(started.elapsed().as_secs_f64());
    response
}
