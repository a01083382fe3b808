//! [`ApiError`]: every failure of a request, rendered once, here, as a JSON:API error
//! document. 4xx errors say what was wrong and where (`source.pointer` for the body,
//! `source.parameter` for the query); 5xx errors are opaque and logged with their cause.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use tidemark_store::StoreError;
use utoipa::ToSchema;

/// Where in the request an error lies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorSource {
    /// A JSON pointer into the request body, such as `/data/attributes/scope`.
    Pointer(String),
    /// A query parameter, such as `page[size]`.
    Parameter(String),
    /// A request header, such as `Idempotency-Key` (JSON:API 1.1 `source.header`).
    Header(String),
}

/// One problem with a field of the request, for 400 and 422 responses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub source: ErrorSource,
    pub code: &'static str,
    pub detail: String,
    /// Anything more the client may use to fix the request (JSON:API `meta`).
    pub meta: Option<serde_json::Value>,
}

impl FieldError {
    pub fn pointer(
        pointer: impl Into<String>,
        code: &'static str,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            source: ErrorSource::Pointer(pointer.into()),
            code,
            detail: detail.into(),
            meta: None,
        }
    }

    pub fn parameter(
        parameter: impl Into<String>,
        code: &'static str,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            source: ErrorSource::Parameter(parameter.into()),
            code,
            detail: detail.into(),
            meta: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Malformed request: bad query parameter, unparsable JSON.
    #[error("bad request")]
    BadRequest(Vec<FieldError>),
    #[error("unauthorized")]
    Unauthorized,
    #[error("forbidden: {0}")]
    Forbidden(&'static str),
    /// Another account's resource is also `NotFound`: its existence is not revealed.
    #[error("not found")]
    NotFound,
    #[error("method not allowed")]
    MethodNotAllowed,
    /// The body's `data.type` is not the endpoint's resource type.
    #[error("conflicting resource type")]
    TypeMismatch {
        expected: &'static str,
        found: String,
    },
    #[error("conflict")]
    Conflict { code: &'static str, detail: String },
    #[error("payload too large")]
    PayloadTooLarge { limit: usize },
    #[error("unsupported media type")]
    UnsupportedMediaType,
    /// An endpoint that takes other bodies than JSON: what it takes, as a sentence.
    #[error("unsupported media type")]
    MediaTypeNotAccepted { accepted: &'static str },
    /// Well-formed but invalid input; several fields may be wrong at once.
    #[error("unprocessable entity")]
    Invalid(Vec<FieldError>),
    #[error("too many requests")]
    TooManyRequests { retry_after_seconds: u64 },
    #[error("service unavailable")]
    Unavailable,
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// The JSON:API error object. Absent members are sent as `null`, as Terminal49 does.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorObject {
    /// The HTTP status, as a string.
    pub status: String,
    pub title: &'static str,
    pub detail: Option<String>,
    pub code: Option<&'static str>,
    pub source: Option<ErrorSource>,
    /// Present only where an error has more to say, such as the carriers a number may
    /// belong to when its SCAC could not be inferred.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub meta: Option<serde_json::Value>,
}

/// `{"errors": [...]}`
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDocument {
    pub errors: Vec<ErrorObject>,
}

impl ApiError {
    pub fn parameter(parameter: &str, code: &'static str, detail: impl Into<String>) -> Self {
        Self::BadRequest(vec![FieldError::parameter(parameter, code, detail)])
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::TypeMismatch { .. } | Self::Conflict { .. } => StatusCode::CONFLICT,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType | Self::MediaTypeNotAccepted { .. } => {
                StatusCode::UNSUPPORTED_MEDIA_TYPE
            }
            Self::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn title(&self) -> &'static str {
        match self {
            Self::BadRequest(_) => "Bad Request",
            Self::Unauthorized => "Unauthorized",
            Self::Forbidden(_) => "Forbidden",
            Self::NotFound => "Not Found",
            Self::MethodNotAllowed => "Method Not Allowed",
            Self::TypeMismatch { .. } | Self::Conflict { .. } => "Conflict",
            Self::PayloadTooLarge { .. } => "Payload Too Large",
            Self::UnsupportedMediaType | Self::MediaTypeNotAccepted { .. } => {
                "Unsupported Media Type"
            }
            Self::Invalid(_) => "Unprocessable Entity",
            Self::TooManyRequests { .. } => "Too Many Requests",
            Self::Unavailable => "Service Unavailable",
            Self::Internal(_) => "Internal Server Error",
        }
    }

    fn document(&self) -> ErrorDocument {
        let status = self.status().as_u16().to_string();
        let title = self.title();
        let single = |code: Option<&'static str>, detail: Option<String>, source| ErrorDocument {
            errors: vec![ErrorObject {
                status: status.clone(),
                title,
                detail,
                code,
                source,
                meta: None,
            }],
        };
        match self {
            Self::BadRequest(errors) | Self::Invalid(errors) => ErrorDocument {
                errors: errors
                    .iter()
                    .map(|error| ErrorObject {
                        status: status.clone(),
                        title,
                        detail: Some(error.detail.clone()),
                        code: Some(error.code),
                        source: Some(error.source.clone()),
                        meta: error.meta.clone(),
                    })
                    .collect(),
            },
            Self::Unauthorized => single(
                Some("unauthorized"),
                Some("Invalid or missing API token.".to_owned()),
                None,
            ),
            Self::Forbidden(detail) => single(Some("forbidden"), Some((*detail).to_owned()), None),
            Self::NotFound => single(
                Some("not_found"),
                Some("The resource does not exist.".to_owned()),
                None,
            ),
            Self::MethodNotAllowed => single(
                Some("method_not_allowed"),
                Some("This method is not allowed on this resource.".to_owned()),
                None,
            ),
            Self::TypeMismatch { expected, found } => single(
                Some("type_mismatch"),
                Some(format!("Expected data.type {expected:?}, found {found:?}.")),
                Some(ErrorSource::Pointer("/data/type".to_owned())),
            ),
            Self::Conflict { code, detail } => single(Some(code), Some(detail.clone()), None),
            Self::PayloadTooLarge { limit } => single(
                Some("payload_too_large"),
                Some(format!("The request body is larger than {limit} bytes.")),
                None,
            ),
            Self::UnsupportedMediaType => single(
                Some("unsupported_media_type"),
                Some("Send the body as application/json or application/vnd.api+json.".to_owned()),
                None,
            ),
            Self::MediaTypeNotAccepted { accepted } => single(
                Some("unsupported_media_type"),
                Some((*accepted).to_owned()),
                None,
            ),
            Self::TooManyRequests {
                retry_after_seconds,
            } => single(
                Some("rate_limited"),
                Some(format!(
                    "Your API key has exceeded its rate limit. Try again in {retry_after_seconds} seconds."
                )),
                None,
            ),
            Self::Unavailable => single(
                Some("unavailable"),
                Some("The service cannot answer right now; try again shortly.".to_owned()),
                None,
            ),
            Self::Internal(_) => single(
                Some("internal_error"),
                Some("Something went wrong on our side; it has been logged.".to_owned()),
                None,
            ),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound => Self::NotFound,
            StoreError::Conflict { constraint } => Self::Conflict {
                code: "conflict",
                detail: format!("The change conflicts with existing data ({constraint})."),
            },
            StoreError::Backend(_) => Self::Internal(anyhow::Error::new(error)),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let Self::Internal(error) = &self {
            tracing::error!(error = ?error, "request failed");
        }
        let status = self.status();
        // Serialized here rather than by `jsonapi::json_body`, whose own failure is an
        // `ApiError`: the error document is plain data, and a last fallback keeps it JSON.
        let body = serde_json::to_vec(&self.document()).unwrap_or_else(|_| {
            br#"{"errors":[{"status":"500","title":"Internal Server Error"}]}"#.to_vec()
        });
        let content_type = [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(crate::resources::jsonapi::CONTENT_TYPE),
        )];
        let mut response = (status, content_type, body).into_response();
        if let Self::TooManyRequests {
            retry_after_seconds,
        } = self
        {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_seconds));
        }
        response
    }
}
