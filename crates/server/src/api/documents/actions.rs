//! Re-running a document's background steps: `reclassify`, `reextract`, `relink`, and
//! `rotate`. Each queues a job and answers `202 {"status": "accepted"}`, as Terminal49.

use axum::body::to_bytes;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::extract::{Path, parse_uuid};
use crate::api::jsonapi;
use crate::app::AppState;
use crate::use_cases::documents::classify::DocumentType;
use crate::use_cases::documents::process::{self, Action};
use crate::use_cases::documents::rotate::{self, RotateError};

use super::input::media_type;

/// The body of `reclassify` (optional): a type to set instead of classifying again.
#[derive(utoipa::ToSchema)]
#[expect(dead_code, reason = "documents the body's shape")]
pub struct ReclassifyInput {
    /// A code of `GET /v2/documents/types`; also read from `data.attributes.document_type`.
    document_type: Option<String>,
}

/// The body of `rotate`.
#[derive(utoipa::ToSchema)]
#[expect(dead_code, reason = "documents the body's shape")]
pub struct RotateInput {
    /// Clockwise: 90, 180 or 270; also read from `data.attributes.degrees`.
    degrees: i64,
}

impl From<RotateError> for ApiError {
    fn from(error: RotateError) -> Self {
        match error {
            RotateError::Degrees => Self::Invalid(vec![FieldError::pointer(
                "/degrees",
                "invalid_rotation",
                error.to_string(),
            )]),
            RotateError::NotRotatable(_) => Self::Invalid(vec![FieldError::pointer(
                "",
                "not_rotatable",
                format!("{error}."),
            )]),
            RotateError::Store(error) => error.into(),
        }
    }
}

fn accepted() -> Response {
    (
        StatusCode::ACCEPTED,
        axum::Json(json!({"status": "accepted"})),
    )
        .into_response()
}

/// The body's member `name`, at the top level or in `data.attributes`; `None` for an
/// empty body. A body must be JSON.
async fn body_member(
    state: &AppState,
    request: Request,
    name: &str,
) -> Result<Option<Value>, ApiError> {
    let json_type = matches!(
        media_type(&request).as_str(),
        "application/json" | jsonapi::CONTENT_TYPE
    );
    let limit = state.config.max_body_bytes;
    let bytes = to_bytes(request.into_body(), limit)
        .await
        .map_err(|_| ApiError::PayloadTooLarge { limit })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    if !json_type {
        return Err(ApiError::UnsupportedMediaType);
    }
    let body: Value = serde_json::from_slice(&bytes).map_err(|error| {
        ApiError::BadRequest(vec![FieldError::pointer(
            "",
            "malformed_json",
            format!("The body is not valid JSON: {error}."),
        )])
    })?;
    if !body.is_object() {
        return Err(ApiError::BadRequest(vec![FieldError::pointer(
            "",
            "invalid",
            "The body must be a JSON object.",
        )]));
    }
    let value = body
        .get(name)
        .or_else(|| body.pointer(&format!("/data/attributes/{name}")))
        .filter(|v| !v.is_null())
        .cloned();
    Ok(value)
}

/// Re-classify a document: its type again from its text, or the type given in the body
/// (`document_type`); the extracted fields follow the type.
#[utoipa::path(
    post, path = "/v2/documents/{id}/reclassify", tag = "Documents",
    params(("id" = Uuid, Path)),
    request_body(content = Option<ReclassifyInput>, description = "Optional: `{\"document_type\": \"arrival_notice\"}`"),
    responses(
        (status = 202, description = "Queued: `{\"status\": \"accepted\"}`", body = Object),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 413, body = ErrorDocument), (status = 415, body = ErrorDocument),
        (status = 422, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn reclassify(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let id = parse_uuid(&id)?;
    let document_type = match body_member(&state, request, "document_type").await? {
        None => None,
        Some(Value::String(code)) => Some(code.trim().parse::<DocumentType>().map_err(|_| {
            ApiError::Invalid(vec![FieldError::pointer(
                "/document_type",
                "invalid",
                format!("{code:?} is not a document type; GET /v2/documents/types lists them."),
            )])
        })?),
        Some(_) => {
            return Err(ApiError::Invalid(vec![FieldError::pointer(
                "/document_type",
                "invalid",
                "document_type must be a string.",
            )]));
        }
    };
    process::request(
        &state,
        principal.account_id,
        id,
        Action::Reclassify { document_type },
    )
    .await?;
    Ok(accepted())
}

/// Re-extract a document's fields (`last_document_representation`); its type and links
/// stay.
#[utoipa::path(
    post, path = "/v2/documents/{id}/reextract", tag = "Documents",
    params(("id" = Uuid, Path)),
    responses(
        (status = 202, description = "Queued: `{\"status\": \"accepted\"}`", body = Object),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn reextract(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    process::request(
        &state,
        principal.account_id,
        parse_uuid(&id)?,
        Action::Reextract,
    )
    .await?;
    Ok(accepted())
}

/// Re-link a document to the account's shipments and containers whose numbers it
/// mentions (added to its links; none is removed).
#[utoipa::path(
    post, path = "/v2/documents/{id}/relink", tag = "Documents",
    params(("id" = Uuid, Path)),
    responses(
        (status = 202, description = "Queued: `{\"status\": \"accepted\"}`", body = Object),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn relink(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    process::request(
        &state,
        principal.account_id,
        parse_uuid(&id)?,
        Action::Relink,
    )
    .await?;
    Ok(accepted())
}

/// Rotate the pages of a PDF document clockwise by `degrees` (90, 180, 270). The rotated
/// file becomes the document's bytes; the uploaded one is kept.
#[utoipa::path(
    post, path = "/v2/documents/{id}/rotate", tag = "Documents",
    params(("id" = Uuid, Path)),
    request_body(content = RotateInput, description = "`{\"degrees\": 90}`"),
    responses(
        (status = 202, description = "Queued: `{\"status\": \"accepted\"}`", body = Object),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 413, body = ErrorDocument), (status = 415, body = ErrorDocument),
        (status = 422, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn rotate(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    request: Request,
) -> Result<Response, ApiError> {
    let id = parse_uuid(&id)?;
    let degrees = match body_member(&state, request, "degrees").await? {
        Some(Value::Number(n)) => n.as_i64().ok_or(RotateError::Degrees)?,
        _ => return Err(RotateError::Degrees.into()),
    };
    rotate::request(&state, principal.account_id, id, degrees).await?;
    Ok(accepted())
}
