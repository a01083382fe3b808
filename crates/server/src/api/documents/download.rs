//! A document's bytes: with an API key, or through a signed, expiring link that needs none.

use axum::body::Body;
use axum::extract::Query;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::json;
use tidemark_store::StoredDocument;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument};
use crate::api::extract::{Path, parse_uuid};
use crate::api::jsonapi::timestamp;
use crate::app::AppState;
use crate::parts::documents::signing::Purpose;
use crate::use_cases::documents::filename::{Disposition, content_disposition};

/// Download a document's bytes.
#[utoipa::path(
    get, path = "/v2/documents/{id}/download", tag = "Documents",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, description = "The file, with its content type"),
        (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn download(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let doc = state
        .store
        .document(principal.account_id, parse_uuid(&id)?)
        .await?;
    file_response(&state, &doc).await
}

/// A signed link to the document's bytes that needs no API key, for `signed_url_seconds`.
#[utoipa::path(
    get, path = "/v2/documents/{id}/download_url", tag = "Documents",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, description = "`{download_url, expires_at}`", body = Object),
        (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn download_url(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let doc = state
        .store
        .document(principal.account_id, parse_uuid(&id)?)
        .await?;
    let expires = state.clock.now() + state.config.signed_url_ttl;
    let url = signed_download_link(&state, &doc, expires).await?;
    Ok(axum::Json(json!({
        "download_url": url,
        "expires_at": timestamp::format(expires),
    }))
    .into_response())
}

/// The signed, expiring link to a document's bytes. The signature covers the document
/// and the expiry; the account only routes the lookup (ids are unique, so another account
/// finds nothing).
pub async fn signed_download_link(
    state: &AppState,
    doc: &StoredDocument,
    expires: DateTime<Utc>,
) -> Result<String, ApiError> {
    let signature = state
        .signing_key()
        .await?
        .sign(Purpose::Download, doc.id, expires);
    Ok(format!(
        "{}/v2/documents/{}/content?account={}&expires={}&signature={signature}",
        state.config.public_url,
        doc.id,
        doc.account_id,
        expires.timestamp()
    ))
}

#[derive(Debug, Deserialize)]
pub struct Signed {
    pub account: Option<String>,
    pub expires: Option<String>,
    pub signature: Option<String>,
}

impl Signed {
    /// Whether the link is signed for `purpose` and `id` and has not expired.
    pub async fn verify(
        &self,
        state: &AppState,
        purpose: Purpose,
        id: Uuid,
    ) -> Result<bool, ApiError> {
        let (Some(expires), Some(signature)) = (&self.expires, &self.signature) else {
            return Ok(false);
        };
        let Ok(expires) = expires.parse::<i64>() else {
            return Ok(false);
        };
        Ok(state
            .signing_key()
            .await?
            .verify(purpose, id, expires, signature, state.clock.now()))
    }
}

/// `GET` of a signed download link: the bytes, with no API key.
pub(super) async fn signed_download(
    state: AppState,
    Path(id): Path<String>,
    query: Result<Query<Signed>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let id = parse_uuid(&id)?;
    let Ok(Query(signed)) = query else {
        return Err(ApiError::Forbidden("This link is not valid."));
    };
    if !signed.verify(&state, Purpose::Download, id).await? {
        return Err(ApiError::Forbidden(
            "This link is not valid or has expired; ask for a new one at download_url.",
        ));
    }
    let account = signed
        .account
        .as_deref()
        .and_then(|a| Uuid::parse_str(a).ok())
        .ok_or(ApiError::NotFound)?;
    let doc = state
        .store
        .document(tidemark_domain::AccountId(account), id)
        .await?;
    file_response(&state, &doc).await
}

/// The bytes of `doc`, streamed, with headers that keep a browser from running them.
async fn file_response(state: &AppState, doc: &StoredDocument) -> Result<Response, ApiError> {
    let stream = match state.documents.stream(&doc.storage_key).await {
        Ok(stream) => stream,
        Err(crate::parts::documents::storage::StorageError::NotFound) => {
            return Err(ApiError::NotFound);
        }
        Err(error) => {
            return Err(ApiError::Internal(
                anyhow::Error::new(error).context("reading a document"),
            ));
        }
    };
    let disposition = content_disposition(&doc.file_name, Disposition::Attachment);
    let body = Body::from_stream(stream.map(|chunk| chunk.map_err(std::io::Error::other)));
    let mut response = body.into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, doc.content_type.as_str()),
        (header::CONTENT_DISPOSITION, disposition.as_str()),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; sandbox",
        ),
        (header::CACHE_CONTROL, "private, no-store"),
    ] {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(doc.size_bytes));
    Ok(response)
}
