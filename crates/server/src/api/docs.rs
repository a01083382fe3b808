//! The OpenAPI document (generated from the handlers' annotations) at `/v2/openapi.json`,
//! and a self-contained docs page at `/docs` that needs no network access.

use std::sync::Arc;

use crate::api::extract::Path;
use axum::Router;
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{InfoBuilder, OpenApi, OpenApiBuilder};

use crate::api::error::ApiError;
use crate::app::AppState;

const DOCS_PAGE: &str = include_str!("docs.html");

/// Tags whose operations need a word of context beyond each operation's own.
const TAGS: &[(&str, &str)] = &[
    (
        "Documents",
        "Shipment documents (beta): uploads, downloads, and their background reading. \
         `reclassify`, `reextract`, `relink` and `rotate` queue a job and answer \
         `202 {\"status\": \"accepted\"}`; the result shows on the document once the job ran.",
    ),
    (
        "Document Schemas",
        "The fields Tidemark reads from bills of lading, arrival notices and commercial \
         invoices, as JSON Schema: what `last_document_representation.payload.fields` holds.",
    ),
    (
        "Email Submissions",
        "Emails received by the built-in SMTP receiver (`TIDEMARK_EMAIL__SMTP_LISTEN`), each \
         with the documents made of its attachments.",
    ),
];

/// Info, tags and security scheme; paths and schemas are added by the routers.
pub fn base_openapi() -> OpenApi {
    let mut openapi = OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("Tidemark API")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(
                    "Self-hosted container shipment tracking, compatible with Terminal49's v2 API. \
                     Authenticate with `Authorization: Token <API key>`.",
                ))
                .build(),
        )
        .build();
    openapi.tags = Some(
        TAGS.iter()
            .map(|(name, description)| {
                TagBuilder::new()
                    .name(*name)
                    .description(Some(*description))
                    .build()
            })
            .collect(),
    );
    openapi
        .components
        .get_or_insert_with(Default::default)
        .add_security_scheme(
            "token",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "Authorization",
                "`Token <API key>` (or `Bearer <API key>`)",
            ))),
        );
    openapi
}

pub fn router(openapi: OpenApi) -> Router<AppState> {
    let json: Arc<str> = match openapi.to_pretty_json() {
        Ok(json) => json.into(),
        Err(error) => {
            tracing::error!(%error, "cannot serialize the OpenAPI document");
            "{}".into()
        }
    };
    Router::new()
        .route(
            "/v2/openapi.json",
            get(move || {
                let json = Arc::clone(&json);
                async move {
                    (
                        [(header::CONTENT_TYPE, "application/json")],
                        json.to_string(),
                    )
                }
            }),
        )
        .route("/docs", get(|| async { Html(DOCS_PAGE) }))
        .route("/bench/static/{bytes}", get(static_bytes))
}

/// A route that returns `bytes` bytes without touching auth or the database, used by the
/// load benchmark as the baseline. Enabled only with `bench_routes = true`.
async fn static_bytes(state: AppState, Path(bytes): Path<usize>) -> Response {
    static FILLER: [u8; 65_536] = [b'x'; 65_536];
    if !state.config.bench_routes || bytes > FILLER.len() {
        return ApiError::NotFound.into_response();
    }
    (
        [(header::CONTENT_TYPE, crate::api::jsonapi::CONTENT_TYPE)],
        &FILLER[..bytes],
    )
        .into_response()
}
