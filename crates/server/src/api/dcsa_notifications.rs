//! `/callbacks/dcsa/{scac}`: where carriers push DCSA Track & Trace events (2.2's array or
//! 3.0's `{"events": [...]}`). Outside `/v2` and its API keys: the carrier proves itself with
//! the subscription's signature.

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;

use crate::api::error::{ApiError, FieldError};
use crate::api::extract::Path;
use crate::app::AppState;
use crate::use_cases::tracking::push::{self, PushError};

pub fn router() -> Router<AppState> {
    Router::new().route(
        "/callbacks/dcsa/{scac}",
        post(receive).head(|| async { StatusCode::NO_CONTENT }),
    )
}

impl From<PushError> for ApiError {
    fn from(error: PushError) -> Self {
        match error {
            // Alike, so the callback does not tell which carriers are configured.
            PushError::UnknownCarrier | PushError::BadSignature => Self::Unauthorized,
            PushError::Malformed(detail) => {
                Self::BadRequest(vec![FieldError::pointer("", "malformed_events", detail)])
            }
            PushError::Store(error) => error.into(),
        }
    }
}

/// Accepts a push: 204 once the concerned tracking requests are queued for a poll.
async fn receive(
    state: AppState,
    Path(scac): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let signature = headers
        .get("notification-signature")
        .and_then(|value| value.to_str().ok());
    let queued = push::receive(
        &state,
        &state.config.carriers,
        &state.recent_pushes,
        &scac,
        signature,
        &body,
    )
    .await?;
    tracing::info!(%scac, queued, "carrier push received");
    Ok(StatusCode::NO_CONTENT)
}
