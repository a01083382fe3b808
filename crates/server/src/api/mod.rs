//! The HTTP API: one module per URL segment under `/v2`, plus operations endpoints.
//!
//! Every response that is not a success is a JSON:API error document, including unknown
//! routes (404), wrong methods (405), oversized bodies (413), timeouts and panics (the last
//! three from the layers every route shares, `crate::edge`).

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
pub mod edi_messages;
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

use axum::Router;
use axum::middleware;
use utoipa_axum::router::OpenApiRouter;

use crate::api::error::ApiError;
use crate::app::AppState;

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
        .merge(edi_messages::router())
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
    // The layers every door shares (request ids, logs, metrics, timeouts, body limits) are
    // put around the API and the console together, in `edge`.
    Router::new()
        .merge(v2)
        .merge(operations)
        .merge(dcsa_notifications::router())
        .merge(documents::public_router())
        .merge(direct_uploads::public_router())
        .merge(docs::router(openapi))
        .fallback(|| async { ApiError::NotFound })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .with_state(state)
}
