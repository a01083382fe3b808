//! `/v2/direct_uploads`: Terminal49's (Rails Active Storage's) direct upload flow.
//!
//! 1. `POST /v2/direct_uploads` with the file's name, size, content type and Base64 MD5
//!    checksum answers with a `signed_id` and an upload URL (signed, expiring, no API key).
//! 2. `PUT` the bytes to that URL: the size and checksum must match, and the bytes must be
//!    an accepted type.
//! 3. `POST /v2/documents` with `attributes.attached_document` = the `signed_id`.

use axum::Router;
use axum::body::to_bytes;
use axum::extract::{Query, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::put;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use md5::{Digest, Md5};
use serde::Deserialize;
use serde_json::{Value, json};
use tidemark_store::{DirectUpload, StoreError};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::documents::Signed;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::extract::Path;
use crate::api::jsonapi::timestamp;
use crate::app::AppState;
use crate::parts::documents::signing::Purpose;
use crate::use_cases::documents::filename::{sanitize, storage_key};
use crate::use_cases::documents::sniff::sniff;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(create))
}

/// The upload URL: signed, so it needs no API key.
pub fn public_router() -> Router<AppState> {
    Router::new().route("/v2/direct_uploads/{id}/content", put(upload_content))
}

/// What a client says of the file it will upload (Active Storage's `blob`).
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct NewDirectUpload {
    pub filename: Option<String>,
    pub byte_size: Option<Value>,
    /// Base64 of the MD5 digest of the bytes.
    pub checksum: Option<String>,
    pub content_type: Option<String>,
}

/// The members may come as Active Storage's `{blob: {...}}`, as JSON:API's
/// `{data: {attributes: {...}}}`, or at the top level.
fn members(body: &Value) -> (&'static str, Option<&Value>) {
    if let Some(blob) = body.get("blob") {
        ("/blob", Some(blob))
    } else if let Some(attributes) = body.get("data").and_then(|d| d.get("attributes")) {
        ("/data/attributes", Some(attributes))
    } else {
        ("", Some(body))
    }
}

/// Start a direct upload.
#[utoipa::path(
    post, path = "/v2/direct_uploads", tag = "Documents",
    request_body(content = NewDirectUpload, description = "`{blob: {filename, byte_size, checksum, content_type}}`"),
    responses(
        (status = 200, description = "`{id, signed_id, filename, byte_size, checksum, content_type, created_at, direct_upload: {url, headers}}`", body = Object),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 413, body = ErrorDocument),
        (status = 422, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn create(
    state: AppState,
    principal: Principal,
    request: Request,
) -> Result<Response, ApiError> {
    let limit = state.config.max_body_bytes;
    let bytes = to_bytes(request.into_body(), limit)
        .await
        .map_err(|_| ApiError::PayloadTooLarge { limit })?;
    let body: Value = serde_json::from_slice(&bytes).map_err(|error| {
        ApiError::BadRequest(vec![FieldError::pointer(
            "",
            "malformed_json",
            format!("The body is not valid JSON: {error}."),
        )])
    })?;
    let (at, members) = members(&body);
    let input: NewDirectUpload = members
        .cloned()
        .and_then(|m| serde_json::from_value(m).ok())
        .unwrap_or_default();
    let mut errors = Vec::new();
    let filename = input
        .filename
        .as_deref()
        .map(str::trim)
        .filter(|f| !f.is_empty() && !f.contains('\0'));
    if filename.is_none() {
        errors.push(FieldError::pointer(
            format!("{at}/filename"),
            "blank",
            "filename is required.",
        ));
    }
    let byte_size = input
        .byte_size
        .as_ref()
        .and_then(Value::as_u64)
        .filter(|n| *n >= 1);
    if byte_size.is_none() {
        errors.push(FieldError::pointer(
            format!("{at}/byte_size"),
            "invalid",
            "byte_size must be the file's size in bytes, an integer of at least 1.",
        ));
    }
    let checksum = input
        .checksum
        .as_deref()
        .map(str::trim)
        .filter(|c| STANDARD.decode(c).is_ok_and(|digest| digest.len() == 16));
    if checksum.is_none() {
        errors.push(FieldError::pointer(
            format!("{at}/checksum"),
            "invalid",
            "checksum must be the Base64 MD5 digest of the file (24 characters).",
        ));
    }
    let content_type = input
        .content_type
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty() && c.len() <= 255 && c.is_ascii())
        .unwrap_or("application/octet-stream");
    let (Some(filename), Some(byte_size), Some(checksum)) = (filename, byte_size, checksum) else {
        return Err(ApiError::Invalid(errors));
    };
    let max = state.config.max_document_bytes;
    if byte_size > u64::try_from(max).unwrap_or(u64::MAX) {
        return Err(ApiError::PayloadTooLarge { limit: max });
    }
    let id = state.ids.next_id();
    let now = state.clock.now();
    let expires = now + state.config.signed_url_ttl;
    let upload = DirectUpload {
        id,
        account_id: principal.account_id,
        created_by: Some(principal.key_id),
        file_name: sanitize(filename),
        declared_content_type: content_type.to_owned(),
        byte_size,
        checksum: checksum.to_owned(),
        // The upload's id becomes the document's; the extension is unknown until the
        // bytes are seen, so the key has none.
        storage_key: storage_key(principal.account_id.0, id, ""),
        uploaded_at: None,
        document_id: None,
        created_at: now,
        expires_at: expires,
    };
    let key = state.signing_key().await?;
    state.store.create_direct_upload(&upload).await?;
    let signature = key.sign(Purpose::Upload, id, expires);
    let url = format!(
        "{}/v2/direct_uploads/{id}/content?expires={}&signature={signature}",
        state.config.public_url,
        expires.timestamp()
    );
    Ok(axum::Json(json!({
        "id": id,
        "key": id,
        "filename": upload.file_name,
        "content_type": upload.declared_content_type,
        "byte_size": byte_size,
        "checksum": upload.checksum,
        "created_at": timestamp::format(now),
        "signed_id": key.signed_id(id),
        "direct_upload": {
            "url": url,
            "expires_at": timestamp::format(expires),
            "headers": {
                "Content-Type": upload.declared_content_type,
                "Content-MD5": upload.checksum,
            },
        },
    }))
    .into_response())
}

fn invalid(code: &'static str, detail: String) -> ApiError {
    ApiError::Invalid(vec![FieldError::pointer("", code, detail)])
}

/// `PUT` of a direct upload's bytes to its signed URL.
async fn upload_content(
    state: AppState,
    Path(id): Path<String>,
    query: Result<Query<Signed>, axum::extract::rejection::QueryRejection>,
    request: Request,
) -> Result<Response, ApiError> {
    let id = Uuid::parse_str(&id).map_err(|_| ApiError::NotFound)?;
    let Ok(Query(signed)) = query else {
        return Err(ApiError::Forbidden("This upload URL is not valid."));
    };
    if !signed.verify(&state, Purpose::Upload, id).await? {
        return Err(ApiError::Forbidden(
            "This upload URL is not valid or has expired; start a new direct upload.",
        ));
    }
    let upload = match state.store.direct_upload(id).await {
        Ok(upload) => upload,
        Err(StoreError::NotFound) => return Err(ApiError::NotFound),
        Err(error) => return Err(error.into()),
    };
    if upload.uploaded_at.is_some() {
        return Err(ApiError::Conflict {
            code: "already_uploaded",
            detail: "This direct upload already has its file.".to_owned(),
        });
    }
    let expected = usize::try_from(upload.byte_size).unwrap_or(usize::MAX);
    let Ok(bytes) = to_bytes(request.into_body(), expected).await else {
        return Err(invalid(
            "byte_size_mismatch",
            format!("The file has more than the {expected} bytes announced in byte_size."),
        ));
    };
    if bytes.len() != expected {
        return Err(invalid(
            "byte_size_mismatch",
            format!(
                "The file has {} bytes; byte_size announced {expected}.",
                bytes.len()
            ),
        ));
    }
    let checksum = STANDARD.encode(Md5::digest(&bytes));
    if checksum != upload.checksum {
        return Err(invalid(
            "checksum_mismatch",
            format!(
                "The file's MD5 checksum is {checksum}, not the {} announced.",
                upload.checksum
            ),
        ));
    }
    if let Err(reason) = sniff(
        &bytes,
        Some(&upload.declared_content_type),
        Some(&upload.file_name),
    ) {
        return Err(invalid("unsupported_file_type", format!("{reason}.")));
    }
    state
        .documents
        .put(&upload.storage_key, bytes)
        .await
        .map_err(|error| {
            ApiError::Internal(anyhow::Error::new(error).context("storing an upload"))
        })?;
    state
        .store
        .mark_direct_upload_uploaded(id, state.clock.now())
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
