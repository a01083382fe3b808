//! Console sessions: signing in with an API key gives a signed, expiring, `HttpOnly`,
//! `SameSite=Strict` cookie naming the key (never the secret). Every page re-checks that the
//! key is still live, so revoking it ends its sessions, and that the session was not signed
//! out (signing out records the cookie as ended in the store, so a copy taken earlier stops
//! working on every process). Forms carry a token bound to the session (CSRF), checked on
//! every POST. Every request of a session counts against its key's rate limits, the same
//! buckets as the API's.

use axum::extract::MatchedPath;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Duration, Utc};
use tidemark_domain::{AccountId, ApiKeyId, ApiKeyScope};
use uuid::Uuid;

use super::pages::PageError;
use crate::app::AppState;
use crate::parts::documents::signing::Purpose;
use crate::parts::rate_limit::Bucket;
use crate::use_cases::accounts::keys::{self, KeyRejected};

pub const COOKIE: &str = "tidemark_session";

/// How long a session lasts after signing in.
pub const LIFETIME: Duration = Duration::hours(12);

/// A signed-in console user: an API key of an account.
#[derive(Clone, Debug)]
pub struct Session {
    pub account_id: AccountId,
    pub key_id: ApiKeyId,
    pub scope: ApiKeyScope,
    expires: i64,
    /// The token every form of this session carries.
    pub csrf: String,
    /// Names the session in the store's ended sessions: a hash of its cookie's signature
    /// (the store never holds what would let someone sign in).
    token_hash: String,
}

impl Session {
    pub fn can_write(&self) -> bool {
        self.scope.can_write()
    }

    /// Whether a submitted form token is this session's.
    pub fn form_token_matches(&self, token: &str) -> bool {
        constant_time_eq(token.as_bytes(), self.csrf.as_bytes())
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The `Set-Cookie` value that starts a session for `key` at `now`.
pub async fn start(
    state: &AppState,
    account: AccountId,
    key: ApiKeyId,
    now: DateTime<Utc>,
) -> Result<HeaderValue, tidemark_store::StoreError> {
    let signing = state.signing_key().await?;
    let expires = now + LIFETIME;
    let signature = signing.sign(Purpose::ConsoleSession, key.0, expires);
    let secure = if state.config.public_url.starts_with("https:") {
        "; Secure"
    } else {
        ""
    };
    let value = format!(
        "{COOKIE}={}.{}.{}.{signature}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
        account.0,
        key.0,
        expires.timestamp(),
        LIFETIME.num_seconds(),
    );
    Ok(HeaderValue::from_str(&value).expect("ids, digits and hex are valid header text"))
}

/// The `Set-Cookie` value that ends the session.
pub fn end() -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
    ))
    .expect("static text")
}

fn cookie_value(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value)
}

/// The parts of a well-formed cookie: account, key, expiry, signature.
fn parse(value: &str) -> Option<(Uuid, Uuid, i64, &str)> {
    let mut parts = value.split('.');
    let account = Uuid::parse_str(parts.next()?).ok()?;
    let key = Uuid::parse_str(parts.next()?).ok()?;
    let expires = parts.next()?.parse().ok()?;
    let signature = parts.next()?;
    parts
        .next()
        .is_none()
        .then_some((account, key, expires, signature))
}

/// A session's name among ended sessions.
fn token_hash(signature: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(signature.as_bytes()))
}

/// The rate-limit bucket of a console request: the API's default bucket, except refreshes,
/// which their handler counts in their own bucket as the API does. (The numbers a Track
/// form submits are each counted as tracking requests by the Track page.)
fn bucket(parts: &Parts) -> Option<Bucket> {
    let path = parts
        .extensions
        .get::<MatchedPath>()
        .map(MatchedPath::as_str);
    match path {
        Some("/shipments/{id}/refresh") => None,
        _ => Some(Bucket::Default),
    }
}

/// Not signed in (or the session expired, or its key was revoked): go to the sign-in page.
pub struct SignInFirst;

impl IntoResponse for SignInFirst {
    fn into_response(self) -> Response {
        Redirect::to("/sign-in").into_response()
    }
}

impl axum::extract::FromRequestParts<AppState> for Session {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let (account, key, expires, signature) = cookie_value(&parts.headers)
            .and_then(parse)
            .ok_or_else(|| SignInFirst.into_response())?;
        let signing = state
            .signing_key()
            .await
            .map_err(|error| super::pages::error_page(&error.into()))?;
        if !signing.verify(
            Purpose::ConsoleSession,
            key,
            expires,
            signature,
            state.clock.now(),
        ) {
            return Err(SignInFirst.into_response());
        }
        let live = match keys::live_key(state, AccountId(account), ApiKeyId(key)).await {
            Ok(live) => live,
            Err(KeyRejected::Unknown) => return Err(SignInFirst.into_response()),
            Err(KeyRejected::Store(error)) => {
                return Err(super::pages::error_page(&error.into()));
            }
        };
        let token_hash = token_hash(signature);
        match state.store.console_session_ended(&token_hash).await {
            Ok(false) => {}
            Ok(true) => return Err(SignInFirst.into_response()),
            Err(error) => return Err(super::pages::error_page(&error.into())),
        }
        if let Some(bucket) = bucket(parts) {
            let limit = bucket.limit(state.rate_limits.default_limit());
            let status = state
                .rate_limits
                .check(live.id, bucket.name(), limit, state.clock.now());
            if !status.allowed {
                return Err(super::pages::error_page(&PageError::TooManyRequests {
                    retry_after_seconds: status.reset_seconds,
                }));
            }
        }
        let expires_at = DateTime::from_timestamp(expires, 0).unwrap_or_default();
        Ok(Self {
            account_id: live.account_id,
            key_id: live.id,
            scope: live.scope,
            expires,
            csrf: signing.sign(Purpose::ConsoleForm, key, expires_at),
            token_hash,
        })
    }
}

impl Session {
    /// When the session ends (unix seconds).
    pub fn expires(&self) -> i64 {
        self.expires
    }

    /// Ends this session in the store, so its cookie is refused from now on, wherever it
    /// was copied to.
    pub async fn end(&self, state: &AppState) -> Result<(), tidemark_store::StoreError> {
        let expires_at = DateTime::from_timestamp(self.expires, 0).unwrap_or_default();
        state
            .store
            .end_console_session(&self.token_hash, expires_at, state.clock.now())
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_names_account_key_expiry_and_signature() {
        let account = Uuid::from_u128(1);
        let key = Uuid::from_u128(2);
        let value = format!("{account}.{key}.1700000000.abcdef");
        assert_eq!(parse(&value), Some((account, key, 1_700_000_000, "abcdef")));
    }

    #[test]
    fn a_cookie_with_extra_or_missing_parts_is_refused() {
        assert_eq!(parse("a.b.c"), None);
        let value = format!("{}.{}.1.ab.cd", Uuid::nil(), Uuid::nil());
        assert_eq!(parse(&value), None);
    }

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("other=1; tidemark_session=abc; x=2"),
        );
        assert_eq!(cookie_value(&headers), Some("abc"));
    }
}
