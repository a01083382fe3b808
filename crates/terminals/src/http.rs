//! What the HTTP adapters share: the client, credentials on requests, and HTTP outcomes
//! read as [`TerminalError`]s.
//!
//! 401 and 403 are `CredentialsRefused` (and drop a cached OAuth2 token, so the next call
//! fetches a new one); 429 is `RateLimited` with `Retry-After` in seconds; 408, 5xx,
//! timeouts and connection failures are `Unavailable`; any other answer that is not a
//! success (a 400 for a parameter the terminal does not take, a 404 for a path that is not
//! there) is `Drift`: the profile's idea of the API is wrong, and the answer is kept in the
//! error's text.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::{RequestBuilder, StatusCode};
use tidemark_carriers::CarrierError;
use tidemark_carriers::auth::{Authenticator, ClientAuth, OAuth2Settings};
use tidemark_domain::Clock;
use url::Url;

use crate::connector::TerminalError;
use crate::profile::{AuthScheme, ConfigError, Configured};

/// How long one request may take, connection included.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(30);
/// Largest body read, so a broken terminal cannot exhaust memory.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// How much of an unexpected answer a `Drift` error keeps.
const EXCERPT_CHARS: usize = 2_000;

/// An HTTP client for one connector, with the process's TLS provider installed.
pub(crate) fn client(profile: &str) -> Result<reqwest::Client, ConfigError> {
    tidemark_carriers::tls::install_provider();
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| ConfigError::Invalid {
            profile: profile.to_owned(),
            key: "http".to_owned(),
            reason: format!("could not build the HTTP client: {e}"),
        })
}

/// Credentials ready to put on requests; an OAuth2 token is cached by the carriers' shared
/// [`Authenticator`] until 30 seconds before it expires, one fetch per expiry.
#[derive(Clone)]
pub(crate) enum Credentials {
    /// `?{parameter}={value}` on every URL (the Port of Virginia's `key`).
    Query { parameter: String, value: String },
    /// Headers or an OAuth2 bearer token.
    Auth(Authenticator),
}

impl std::fmt::Debug for Credentials {
    // The key stays out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Query { parameter, .. } => f
                .debug_struct("Query")
                .field("parameter", parameter)
                .field("value", &"[redacted]")
                .finish(),
            Self::Auth(auth) => auth.fmt(f),
        }
    }
}

impl Credentials {
    /// The credentials the profile's auth scheme names, from the operator's settings
    /// (`configure` already checked they are given).
    pub(crate) fn of(configured: &Configured, clock: Arc<dyn Clock>) -> Result<Self, ConfigError> {
        let profile = &configured.profile;
        let credential = |key: &str| {
            configured
                .settings
                .credential(key)
                .map(str::to_owned)
                .ok_or_else(|| ConfigError::Missing {
                    profile: profile.id.clone(),
                    key: key.to_owned(),
                })
        };
        let invalid = |reason: String| ConfigError::Invalid {
            profile: profile.id.clone(),
            key: "auth".to_owned(),
            reason,
        };
        Ok(match &profile.auth.scheme {
            AuthScheme::None => Self::Auth(Authenticator::none()),
            AuthScheme::Query {
                parameter,
                credential: key,
            } => Self::Query {
                parameter: parameter.clone(),
                value: credential(key)?,
            },
            AuthScheme::Header {
                header,
                credential: key,
            } => Self::Auth(
                Authenticator::headers(vec![(header.clone(), credential(key)?)])
                    .map_err(|e| invalid(e.to_string()))?,
            ),
            AuthScheme::OAuth2 {
                client_id,
                client_secret,
            } => {
                let token_url =
                    configured
                        .token_url
                        .clone()
                        .ok_or_else(|| ConfigError::Missing {
                            profile: profile.id.clone(),
                            key: "token_url".to_owned(),
                        })?;
                Self::Auth(
                    Authenticator::oauth2(
                        OAuth2Settings {
                            token_url,
                            client_id: credential(client_id)?,
                            client_secret: credential(client_secret)?,
                            scope: None,
                            audience: None,
                            // RFC 6749 §2.3.1; Keycloak (Navis cloud) and API gateways take it.
                            client_auth: ClientAuth::Basic,
                        },
                        None,
                        Vec::new(),
                        clock,
                    )
                    .map_err(|e| invalid(e.to_string()))?,
                )
            }
        })
    }

    /// Puts a query-parameter credential on `url`.
    pub(crate) fn on_url(&self, url: &mut Url) {
        if let Self::Query { parameter, value } = self {
            url.query_pairs_mut().append_pair(parameter, value);
        }
    }

    /// Sends `request` with the credentials on it and reads the answer, whatever its status.
    /// A 401 or 403 drops a cached token. Errors here are transport errors only.
    pub(crate) async fn send(
        &self,
        http: &reqwest::Client,
        request: RequestBuilder,
    ) -> Result<Answer, TerminalError> {
        let request = match self {
            Self::Query { .. } => request,
            Self::Auth(auth) => auth.apply(http, request).await.map_err(from_carrier)?,
        };
        let mut response = request.send().await.map_err(transport_error)?;
        let status = response.status();
        if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
            && let Self::Auth(auth) = self
        {
            auth.refused().await;
        }
        let headers = response.headers().clone();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(TerminalError::Drift(format!(
                    "the answer is larger than {MAX_BODY_BYTES} bytes"
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            headers,
            body,
        })
    }
}

/// A terminal's answer, read whole.
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    /// The answer when it is a success, else the error its status stands for.
    pub(crate) fn success(self) -> Result<Self, TerminalError> {
        if self.status.is_success() {
            Ok(self)
        } else {
            Err(self.error())
        }
    }

    /// The error a non-success status stands for.
    pub(crate) fn error(&self) -> TerminalError {
        let status = self.status;
        match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => TerminalError::CredentialsRefused(
                format!("the terminal answered {status}: {}", excerpt(&self.body)),
            ),
            StatusCode::TOO_MANY_REQUESTS => TerminalError::RateLimited {
                retry_after: retry_after(&self.headers),
            },
            StatusCode::REQUEST_TIMEOUT => {
                TerminalError::Unavailable(format!("the terminal answered {status}"))
            }
            status if status.is_server_error() => TerminalError::Unavailable(format!(
                "the terminal answered {status}: {}",
                excerpt(&self.body)
            )),
            status => drift(&format!("the terminal answered {status}"), &self.body),
        }
    }

    /// The body as JSON, or `Drift`.
    pub(crate) fn json(&self) -> Result<serde_json::Value, TerminalError> {
        serde_json::from_slice(&self.body)
            .map_err(|e| drift(&format!("the answer is not JSON ({e})"), &self.body))
    }
}

/// `Drift` saying `reason`, with the start of `body`.
pub(crate) fn drift(reason: &str, body: &[u8]) -> TerminalError {
    TerminalError::Drift(format!("{reason}; the answer began: {}", excerpt(body)))
}

/// The start of a body, as text.
pub(crate) fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut cut: String = text.chars().take(EXCERPT_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

/// `Retry-After` in seconds. The HTTP-date form is rare for APIs and would need the clock;
/// it reads as absent, and the caller backs off as usual.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?;
    text.trim().parse().ok().map(Duration::from_secs)
}

/// A request that got no answer: retry later. The URL is left out of the message (it may
/// carry the Port of Virginia's key); reqwest's message names only the outer error, so the
/// causes are appended.
fn transport_error(error: reqwest::Error) -> TerminalError {
    let error = error.without_url();
    let mut message = if error.is_timeout() {
        format!("timed out after {}s", TIMEOUT.as_secs())
    } else {
        error.to_string()
    };
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    TerminalError::Unavailable(message)
}

/// The carriers' auth errors (token endpoint answers) as terminal errors.
fn from_carrier(error: CarrierError) -> TerminalError {
    match error {
        CarrierError::CredentialsRefused(why) => TerminalError::CredentialsRefused(why),
        CarrierError::RateLimited { retry_after } => TerminalError::RateLimited { retry_after },
        CarrierError::Unavailable(why) => TerminalError::Unavailable(why),
        CarrierError::UnexpectedPayload(why) => TerminalError::Drift(why),
        CarrierError::NotFound => {
            TerminalError::Drift("the OAuth2 token endpoint is not there (404)".to_owned())
        }
    }
}

/// `path` appended to `base`'s path (its query and fragment dropped).
pub(crate) fn url_under(base: &Url, path: &[&str]) -> Url {
    let mut url = base.clone();
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.pop_if_empty().extend(path);
    }
    url.set_query(None);
    url.set_fragment(None);
    url
}
