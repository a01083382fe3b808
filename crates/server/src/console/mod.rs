//! The web console: server-rendered HTML pages over the same use cases as the JSON:API
//! (never over the HTTP API itself), with its own routes, session auth and assets.
//!
//! Templates are [maud](https://maud.lambda.xyz): checked at compile time, escaped by
//! default, and plain Rust, so no template files have to be found or embedded at run time.
//! Partial updates (the board refreshing itself) use htmx, vendored in `assets/` with its
//! licence; assets are embedded in the binary, named by a hash of their content and served
//! compressed with a year's caching.

pub mod assets;
pub mod board;
pub mod custom_fields;
pub mod documents;
pub mod map;
pub mod pages;
pub mod security_headers;
pub mod session;
pub mod shipment;
pub mod track;
pub mod webhooks;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{get, post};
use tower_http::compression::CompressionLayer;

use crate::app::AppState;

/// The console's routes, at the root of the server.
pub fn router(state: AppState) -> Router {
    let max_upload = state.config.max_document_bytes;
    Router::new()
        .route("/", get(board::page))
        .route("/board/rows", get(board::rows))
        .route("/shipments/{id}", get(shipment::show))
        .route(
            "/shipments/{id}/references",
            post(shipment::save_references),
        )
        .route(
            "/shipments/{id}/custom-fields",
            post(shipment::save_custom_field),
        )
        .route(
            "/shipments/{id}/stop-tracking",
            post(shipment::stop_tracking),
        )
        .route(
            "/shipments/{id}/resume-tracking",
            post(shipment::resume_tracking),
        )
        .route("/shipments/{id}/refresh", post(shipment::refresh))
        .route("/shipments/{id}/documents", post(shipment::link_document))
        .route(
            "/shipments/{id}/documents/{document}/unlink",
            post(shipment::unlink_document),
        )
        .route("/shipments/{id}/route-map", get(map::route))
        .route("/sign-in", get(pages::sign_in_form).post(pages::sign_in))
        .route("/sign-out", post(pages::sign_out))
        .route("/track", get(track::page).post(track::submit))
        .route(
            "/track/upload",
            post(track::upload).layer(DefaultBodyLimit::max(track::MAX_UPLOAD_BYTES + 64 * 1024)),
        )
        .route(
            "/documents",
            get(documents::index)
                .post(documents::create)
                // The form around the file: a few kB.
                .layer(DefaultBodyLimit::max(max_upload + 64 * 1024)),
        )
        .route("/documents/{id}", get(documents::show))
        .route("/documents/{id}/shipments", post(documents::link_shipment))
        .route("/documents/{id}/file", get(documents::file))
        .route("/webhooks", get(webhooks::index).post(webhooks::create))
        .route("/webhooks/{id}", get(webhooks::show))
        .route("/webhooks/{id}/test", post(webhooks::send_test))
        .route("/webhooks/{id}/pause", post(webhooks::pause))
        .route("/webhooks/{id}/resume", post(webhooks::resume))
        .route(
            "/webhooks/{id}/rotate-secret",
            post(webhooks::rotate_secret),
        )
        .route(
            "/webhooks/{id}/notifications/{notification}/redeliver",
            post(webhooks::redeliver),
        )
        .route(
            "/custom-fields",
            get(custom_fields::index).post(custom_fields::create),
        )
        .route(
            "/custom-fields/{id}",
            get(custom_fields::show).post(custom_fields::update),
        )
        .route("/custom-fields/{id}/delete", post(custom_fields::delete))
        .route(
            "/custom-fields/{id}/options",
            post(custom_fields::create_option),
        )
        .route(
            "/custom-fields/{id}/options/{option}",
            post(custom_fields::update_option),
        )
        .route(
            "/custom-fields/{id}/options/{option}/delete",
            post(custom_fields::delete_option),
        )
        .route(
            "/api-keys",
            get(pages::api_keys).post(pages::create_api_key),
        )
        .route("/api-keys/{id}/revoke", post(pages::revoke_api_key))
        .route("/carriers", get(pages::carriers))
        .route("/assets/{name}", get(assets::serve))
        .layer(CompressionLayer::new())
        // Every page, fragment and asset: CSP, no framing, no referrer to other sites.
        .layer(middleware::from_fn(security_headers::add))
        .with_state(state)
}
