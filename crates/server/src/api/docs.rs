//! The OpenAPI document (generated from the handlers' annotations) at `/v2/openapi.json`,
//! and a self-contained docs page at `/docs` that needs no network access.

use std::sync::{Arc, LazyLock};

use crate::api::extract::Path;
use axum::Router;
use axum::http::header;
use axum::middleware;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{InfoBuilder, OpenApi, OpenApiBuilder};

use crate::api::error::ApiError;
use crate::app::AppState;
use crate::console::{assets, security_headers};

/// The docs page; its script and stylesheet are console assets (named by their content),
/// so the page runs under the console's CSP, with no inline script or style.
static DOCS_PAGE: LazyLock<String> = LazyLock::new(|| {
    include_str!("docs.html")
        .replace("{docs_css}", &assets::docs_css())
        .replace("{docs_js}", &assets::docs_js())
});

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
    (
        "EDI Messages",
        "Status EDI as lines and terminals send it (X12 315 and 322, EDIFACT IFTSTA), handed \
         over as the raw body or picked up from a folder, SFTP or email. Each accepted \
         transaction updates the tracking requests its numbers name, as a carrier's answer \
         would; `GET …/acknowledgement` gives the 997 or CONTRL to send back.",
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
    let json: Arc<str> = match serde_json::to_value(&openapi)
        .map(conform)
        .and_then(|document| serde_json::to_string_pretty(&document))
    {
        Ok(json) => json.into(),
        Err(error) => {
            tracing::error!(%error, "cannot serialize the OpenAPI document");
            "{}".into()
        }
    };
    let docs = Router::new()
        .route("/docs", get(|| async { Html(DOCS_PAGE.as_str()) }))
        .layer(middleware::from_fn(security_headers::add));
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
        .merge(docs)
        .route("/bench/static/{bytes}", get(static_bytes))
}

/// Successes that are plain JSON rather than a JSON:API document: (path, method, status).
const PLAIN_JSON_SUCCESSES: &[(&str, &str, &str)] = &[
    ("/v2/containers/{id}/map_geojson", "get", "200"),
    ("/v2/documents/types", "get", "200"),
];

/// Statuses every `/v2` operation can answer whatever its annotation says: a malformed
/// query or header (400), no or a wrong key (401), a missing resource (404), the rate limit
/// (429), a request over its deadline or a store that is away (503).
const EVERY_OPERATION: &[(&str, &str)] = &[
    (
        "400",
        "The request is malformed: a query parameter, a header or the JSON.",
    ),
    ("401", "No API key, or one that is unknown or revoked."),
    ("404", "No such resource in the key's account."),
    (
        "429",
        "The key's (or, without one, the address's) rate limit is spent.",
    ),
    (
        "503",
        "The request ran past its deadline, or the database is unavailable.",
    ),
];

/// What a write can answer besides.
const EVERY_WRITE: &[(&str, &str)] = &[
    ("403", "The key is read-only."),
    (
        "409",
        "The request conflicts with the resource's state or an idempotency key.",
    ),
    (
        "422",
        "The request is understood but its values are not valid.",
    ),
];

/// What an operation that takes a body can answer besides.
const EVERY_BODY: &[(&str, &str)] = &[
    ("413", "The body is larger than `max_body_bytes`."),
    (
        "415",
        "The body is not sent as `application/json` or `application/vnd.api+json`.",
    ),
];

/// Makes the generated document say what the server does, in one place rather than in
/// every annotation: JSON:API answers are `application/vnd.api+json` (not utoipa's
/// default `application/json`); bodies are accepted as either JSON type; the statuses the
/// shared layers answer (authentication, rate limit, body checks, timeouts) are listed on
/// every operation they guard; pages start at 1; each operation has its own `operationId`
/// (see [`operation_id`]). Property-based runs (`scripts/schemathesis.sh`) hold the server
/// to this document.
fn conform(mut document: serde_json::Value) -> serde_json::Value {
    use serde_json::{Value, json};
    let error_body = json!({"application/vnd.api+json": {"schema": {
        "$ref": "#/components/schemas/ErrorDocument"}}});
    let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) else {
        return document;
    };
    for (path, item) in paths.iter_mut() {
        let Some(operations) = item.as_object_mut() else {
            continue;
        };
        for (method, operation) in operations.iter_mut() {
            if let Some(operation) = operation.as_object_mut() {
                operation.insert("operationId".into(), json!(operation_id(method, path)));
            }
            let takes_body = operation.get("requestBody").is_some();
            if let Some(content) = operation
                .pointer_mut("/requestBody/content")
                .and_then(Value::as_object_mut)
                && let Some(plain) = content.get("application/json").cloned()
            {
                content.entry("application/vnd.api+json").or_insert(plain);
            }
            for parameter in operation
                .get_mut("parameters")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                let name = parameter.get("name").and_then(Value::as_str);
                if matches!(name, Some("page[number]" | "page[size]"))
                    && let Some(schema) = parameter.get_mut("schema").and_then(Value::as_object_mut)
                {
                    schema.insert("minimum".into(), json!(1));
                }
            }
            let Some(responses) = operation
                .get_mut("responses")
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            for (status, response) in responses.iter_mut() {
                let plain = PLAIN_JSON_SUCCESSES.contains(&(
                    path.as_str(),
                    method.as_str(),
                    status.as_str(),
                ));
                if let Some(content) = response.get_mut("content").and_then(Value::as_object_mut)
                    && !plain
                    && let Some(schema) = content.remove("application/json")
                {
                    content.insert("application/vnd.api+json".into(), schema);
                }
            }
            if !path.starts_with("/v2/") {
                continue;
            }
            let is_write = matches!(method.as_str(), "post" | "patch" | "put" | "delete");
            let extra = EVERY_OPERATION
                .iter()
                .chain(if is_write { EVERY_WRITE } else { &[] })
                .chain(if takes_body { EVERY_BODY } else { &[] });
            for (status, description) in extra {
                responses.entry(*status).or_insert_with(
                    || json!({"description": description, "content": error_body.clone()}),
                );
            }
        }
    }
    document
}

/// An operation's `operationId`, unique as OpenAPI requires, in the style of Terminal49's
/// (`get-containers-id-raw_events`): the method and the path without `/v2` and braces.
/// utoipa names operations after their handlers, and many are `list` or `show`: a client
/// generator, or a tester that follows links by `operationId` (schemathesis does), would
/// take every `list` for the first one.
fn operation_id(method: &str, path: &str) -> String {
    let segments = path
        .strip_prefix("/v2")
        .unwrap_or(path)
        .split('/')
        .filter(|segment| !segment.is_empty())
        .map(|segment| segment.trim_start_matches('{').trim_end_matches('}'));
    std::iter::once(method)
        .chain(segments)
        .collect::<Vec<_>>()
        .join("-")
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
