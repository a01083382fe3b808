//! `Idempotency-Key` on `POST`: the first response to a key is stored for 24 hours and
//! replayed to any retry with the same key and body, so a client that lost a response can
//! retry without creating a second resource. Failures the client should retry (5xx) are
//! not stored. The body is read whole to fingerprint it, within the route's own limit (a
//! document upload's is the document size).

use axum::body::{Body, to_bytes};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use tidemark_store::IdempotencyState;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorSource, FieldError};
use crate::app::AppState;

pub const HEADER: &str = "idempotency-key";
const MAX_KEY_LENGTH: usize = 255;

fn header_error(code: &'static str, detail: &str) -> ApiError {
    ApiError::BadRequest(vec![FieldError {
        source: ErrorSource::Header("Idempotency-Key".to_owned()),
        code,
        detail: detail.to_owned(),
        meta: None,
    }])
}

pub async fn idempotency(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let Some(raw_key) = request.headers().get(HEADER) else {
        return next.run(request).await;
    };
    let key = match raw_key.to_str() {
        Ok(key) if !key.trim().is_empty() && key.len() <= MAX_KEY_LENGTH => key.trim().to_owned(),
        _ => {
            return header_error(
                "invalid_idempotency_key",
                "Idempotency-Key must be 1 to 255 visible ASCII characters.",
            )
            .into_response();
        }
    };
    let Some(principal) = request.extensions().get::<Principal>().copied() else {
        return next.run(request).await;
    };
    let limit = body_limit(&state, &request);
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, limit).await else {
        return ApiError::PayloadTooLarge { limit }.into_response();
    };
    let mut hasher = Sha256::new();
    hasher.update(parts.uri.path().as_bytes());
    hasher.update([0]);
    hasher.update(parts.uri.query().unwrap_or("").as_bytes());
    hasher.update([0]);
    hasher.update(&bytes);
    let fingerprint = hex::encode(hasher.finalize());

    let now = state.clock.now();
    match state
        .store
        .begin_idempotent_request(principal.account_id, &key, &fingerprint, now)
        .await
    {
        Err(error) => ApiError::from(error).into_response(),
        Ok(IdempotencyState::InProgress) => ApiError::Conflict {
            code: "idempotency_key_in_use",
            detail: "A request with this Idempotency-Key is still being processed.".to_owned(),
        }
        .into_response(),
        Ok(IdempotencyState::Completed {
            fingerprint: first,
            status,
            body,
        }) => {
            if first == fingerprint {
                replay(status, body)
            } else {
                ApiError::Invalid(vec![FieldError {
                    source: ErrorSource::Header("Idempotency-Key".to_owned()),
                    code: "idempotency_key_reused",
                    detail: "This Idempotency-Key was used for a different request.".to_owned(),
                    meta: None,
                }])
                .into_response()
            }
        }
        Ok(IdempotencyState::Started) => {
            let mut guard = ReleaseOnDrop {
                store: std::sync::Arc::clone(&state.store),
                account: principal.account_id,
                key: Some(key.clone()),
            };
            let response = next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
            guard.key = None;
            remember(&state, principal, &key, response).await
        }
    }
}

/// The most bytes buffered to fingerprint a request: the route's own body limit. An upload
/// (`POST /v2/documents`) carries a document of up to `max_document_bytes`, with the form's
/// other fields and framing (up to `max_body_bytes` more); every other body is JSON.
fn body_limit(state: &AppState, request: &Request) -> usize {
    let path = request
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str);
    match path {
        Some(crate::api::documents::UPLOAD_PATH) => state
            .config
            .max_document_bytes
            .saturating_add(state.config.max_body_bytes),
        Some(crate::api::edi_messages::PATH) => crate::use_cases::edi::MAX_BYTES,
        _ => state.config.max_body_bytes,
    }
}

fn replay(status: u16, body: Vec<u8>) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(crate::api::jsonapi::CONTENT_TYPE),
    );
    headers.insert("idempotent-replayed", HeaderValue::from_static("true"));
    response
}

/// Stores the response for replay, or releases the key if the client should retry.
async fn remember(
    state: &AppState,
    principal: Principal,
    key: &str,
    response: Response,
) -> Response {
    let (parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, usize::MAX).await else {
        let _ = state
            .store
            .abandon_idempotent_request(principal.account_id, key)
            .await;
        return ApiError::Internal(anyhow::anyhow!("response body unreadable")).into_response();
    };
    // Errors the client fixes by changing the request's framing (size, content type), and
    // server errors, are not replayed: the retry deserves a fresh answer.
    let retryable = parts.status.is_server_error()
        || parts.status == StatusCode::PAYLOAD_TOO_LARGE
        || parts.status == StatusCode::UNSUPPORTED_MEDIA_TYPE;
    let outcome = if retryable {
        state
            .store
            .abandon_idempotent_request(principal.account_id, key)
            .await
    } else {
        state
            .store
            .complete_idempotent_request(principal.account_id, key, parts.status.as_u16(), &bytes)
            .await
    };
    if let Err(error) = outcome {
        tracing::warn!(error = ?error, "cannot record the idempotent response");
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// Releases a reserved key if the request never finishes (timeout, disconnect, panic), so
/// the client's retry is not told "in progress" for a day.
struct ReleaseOnDrop {
    store: std::sync::Arc<dyn tidemark_store::Store>,
    account: tidemark_domain::AccountId,
    /// `None` once the request finished and its outcome is being recorded.
    key: Option<String>,
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        let Some(key) = self.key.take() else {
            return;
        };
        let (store, account) = (std::sync::Arc::clone(&self.store), self.account);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(error) = store.abandon_idempotent_request(account, &key).await {
                    tracing::warn!(error = ?error, "cannot release an unfinished idempotency key");
                }
            });
        }
    }
}
