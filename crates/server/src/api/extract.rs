//! axum's extractors with [`ApiError`] as their rejection, so malformed paths get a
//! JSON:API error rather than axum's plain-text one.

use axum::extract::FromRequestParts;
use axum::extract::rejection::PathRejection;

use crate::api::error::ApiError;

/// Like `axum::extract::Path`; a segment that cannot be decoded or parsed is a 404, since
/// no resource can live at such a path.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct Path<T>(pub T);

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        tracing::debug!(%rejection, "unusable path segment");
        Self::NotFound
    }
}

/// A resource id taken from a path segment or a body field: anything but a UUID is a 404,
/// as [`Path`] answers for a `Uuid` segment.
pub fn parse_uuid(segment: &str) -> Result<uuid::Uuid, ApiError> {
    uuid::Uuid::parse_str(segment).map_err(|_| ApiError::NotFound)
}
