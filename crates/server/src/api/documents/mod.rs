//! `/v2/documents` (beta): upload, list, show, download, edit and delete shipment
//! documents. Uploads come as `multipart/form-data`, or as JSON naming a direct upload
//! (`/v2/direct_uploads`) in `attributes.attached_document`.
//!
//! Every route here reads its own body with its own limit (the document size for uploads,
//! `max_body_bytes` for JSON), so the router lifts axum's default limit.
//!
//! - [`list`]: `GET /v2/documents` and its query (filters, sort), and the document types;
//! - [`upload`]: `POST /v2/documents`, from a form or a direct upload;
//! - [`document`]: one document: show, edit, delete;
//! - [`actions`]: re-running classification, extraction and linking, and rotating;
//! - [`download`]: the bytes, and the signed links that need no API key;
//! - [`input`]: request bodies and the shipments and containers they name;
//! - [`resource`]: documents as JSON:API resources, with what they include.

mod actions;
mod document;
mod download;
mod input;
mod list;
mod resource;
mod upload;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;

pub use download::{Signed, signed_download_link};
pub use resource::{DocumentAttributes, included, included_document, resource};

/// The relationships `include` accepts (`current_extraction` is an alias).
const INCLUDES: &[&str] = &[
    "shipments",
    "cargos",
    "account",
    "user",
    "last_document_representation",
    "email_submission",
    "current_extraction",
];

/// Where documents are uploaded (its body holds a whole document).
pub const UPLOAD_PATH: &str = "/v2/documents";

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list::list, upload::create))
        .routes(routes!(list::types))
        .routes(routes!(document::show, document::update, document::destroy))
        .routes(routes!(download::download))
        .routes(routes!(download::download_url))
        .routes(routes!(actions::reclassify))
        .routes(routes!(actions::reextract))
        .routes(routes!(actions::relink))
        .routes(routes!(actions::rotate))
        .layer(DefaultBodyLimit::disable())
}

/// Routes that need no API key: their links are signed and expire.
pub fn public_router() -> Router<AppState> {
    Router::new().route("/v2/documents/{id}/content", get(download::signed_download))
}
