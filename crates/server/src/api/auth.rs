//! Authentication, authorization scope and rate limiting, as one middleware on `/v2`.
//!
//! `Authorization: Token <key>` (Terminal49's scheme) or `Bearer <key>`; the key is checked
//! by [`keys::authenticate`], which caches accepted keys per process.
//!
//! Failed authentication (no key, an unknown or revoked one) is counted per client address
//! (`unauthenticated_rate_limit_per_minute`); an address that has used it up gets `429`
//! for the rest of the window before any key it sends is looked at, so keys cannot be
//! guessed and a flood of 401s costs no database reads.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tidemark_domain::{AccountId, ApiKeyId, ApiKeyScope};

use crate::api::error::ApiError;
use crate::app::AppState;
use crate::parts::rate_limit::{AUTH_FAILURES, Bucket, RateLimitStatus, client_key};
use crate::use_cases::accounts::keys::{self, KeyRejected};

/// Who is calling: put in the request's extensions by [`authenticate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Principal {
    pub account_id: AccountId,
    pub key_id: ApiKeyId,
    pub scope: ApiKeyScope,
}

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<Self>()
            .copied()
            .ok_or(ApiError::Unauthorized)
    }
}

fn presented_key(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, key) = value.split_once(' ')?;
    (scheme.eq_ignore_ascii_case("token") || scheme.eq_ignore_ascii_case("bearer"))
        .then(|| key.trim())
        .filter(|key| !key.is_empty())
}

fn is_read(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Which rate-limit bucket a request counts against.
fn rate_limit_bucket(request: &Request) -> Bucket {
    let path = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(axum::extract::MatchedPath::as_str);
    match (request.method(), path) {
        (&Method::POST, Some("/v2/tracking_requests")) => Bucket::TrackingRequests,
        (&Method::PATCH, Some("/v2/containers/{id}/refresh")) => Bucket::Refresh,
        _ => Bucket::Default,
    }
}

fn set_rate_limit_headers(headers: &mut HeaderMap, status: &RateLimitStatus) {
    for (name, value) in [
        ("ratelimit-limit", status.limit.into()),
        ("ratelimit-remaining", status.remaining.into()),
        ("ratelimit-reset", status.reset_seconds),
    ] {
        headers.insert(name, HeaderValue::from(value));
    }
}

/// Checks the key, counts the request against the key's rate limit, refuses writes with a
/// read-only key, and makes the [`Principal`] available to handlers.
pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    // Requests that did not come through a socket (tests) have no address.
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| client_key(info.0.ip()));
    let limit = state.config.limits.unauthenticated_per_minute;
    if let Some(client) = client
        && state
            .client_limits
            .exhausted(client, AUTH_FAILURES, limit, state.clock.now())
    {
        return too_many_failures(client);
    }
    let Some(secret) = presented_key(request.headers()) else {
        return failed(&state, client);
    };
    let key = match keys::authenticate(&state, &state.auth, secret).await {
        Ok(key) => key,
        Err(KeyRejected::Unknown) => return failed(&state, client),
        Err(KeyRejected::Store(error)) => return ApiError::from(error).into_response(),
    };
    let bucket = rate_limit_bucket(&request);
    let limit = bucket.limit(state.rate_limits.default_limit());
    let status = state
        .rate_limits
        .check(key.id, bucket.name(), limit, state.clock.now());
    let mut response = if !status.allowed {
        ApiError::TooManyRequests {
            retry_after_seconds: status.reset_seconds,
        }
        .into_response()
    } else if !is_read(request.method()) && !key.scope.can_write() {
        ApiError::Forbidden("This API key is read-only.").into_response()
    } else {
        request.extensions_mut().insert(Principal {
            account_id: key.account_id,
            key_id: key.id,
            scope: key.scope,
        });
        next.run(request).await
    };
    set_rate_limit_headers(response.headers_mut(), &status);
    response
}

/// A failed authentication: counted against the client's address, then `401` (or `429`
/// if that was its last).
fn failed(state: &AppState, client: Option<IpAddr>) -> Response {
    let Some(client) = client else {
        return ApiError::Unauthorized.into_response();
    };
    let limit = state.config.limits.unauthenticated_per_minute;
    let status = state
        .client_limits
        .check(client, AUTH_FAILURES, limit, state.clock.now());
    if status.allowed {
        ApiError::Unauthorized.into_response()
    } else {
        too_many_failures(client)
    }
}

fn too_many_failures(client: IpAddr) -> Response {
    metrics::counter!("tidemark_auth_failures_refused_total").increment(1);
    tracing::debug!(%client, "too many failed authentications from this address");
    // The window is a rolling minute: a minute from now it has surely room again.
    ApiError::TooManyRequests {
        retry_after_seconds: 60,
    }
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn the_token_scheme_is_accepted() {
        assert_eq!(presented_key(&headers("Token tmk_abc")), Some("tmk_abc"));
    }

    #[test]
    fn the_bearer_scheme_is_accepted_in_any_case() {
        assert_eq!(presented_key(&headers("bearer tmk_abc")), Some("tmk_abc"));
    }

    #[test]
    fn other_schemes_and_bare_keys_are_not_keys() {
        assert_eq!(presented_key(&headers("Basic dXNlcg==")), None);
        assert_eq!(presented_key(&headers("tmk_abc")), None);
        assert_eq!(presented_key(&headers("Token ")), None);
    }
}
