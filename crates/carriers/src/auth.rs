//! How a connector proves who it is to a carrier: any number of headers filled from the
//! operator's credentials, or an OAuth2 client-credentials token (beside such headers).
//!
//! One [`Authenticator`] serves every worker of a process (it is shared by the connector
//! and cheap to clone), so an OAuth2 token is fetched once and reused by all of them; it
//! is renewed [`TOKEN_MARGIN`] before it expires, by the injected clock, and dropped when
//! the carrier answers 401 or 403 so the next call fetches a new one.

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{RequestBuilder, StatusCode};
use serde::Deserialize;
use tidemark_domain::Clock;
use tokio::sync::Mutex;
use url::Url;

use crate::event::CarrierError;

/// A token is renewed this long before it expires, so it does not expire in flight.
pub const TOKEN_MARGIN: Duration = Duration::seconds(30);
/// Lifetime assumed for a token whose response gives none.
const DEFAULT_TOKEN_LIFETIME: Duration = Duration::minutes(5);
/// How long a token request may take.
const TOKEN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
/// The largest token response read.
const MAX_TOKEN_BYTES: usize = 64 * 1024;

/// Why credentials cannot be used: a configuration mistake, reported at start.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("{0:?} is not a valid HTTP header name")]
    HeaderName(String),
    #[error("the value of header {0} is not a valid HTTP header value")]
    HeaderValue(String),
}

/// How the OAuth2 client proves itself at the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientAuth {
    /// HTTP Basic (RFC 6749 §2.3.1).
    Basic,
    /// `client_id` and `client_secret` in the form body (Maersk's and CMA CGM's style).
    Form,
}

/// An OAuth2 client-credentials grant.
#[derive(Clone)]
pub struct OAuth2Settings {
    pub token_url: Url,
    pub client_id: String,
    pub client_secret: String,
    pub scope: Option<String>,
    pub audience: Option<String>,
    pub client_auth: ClientAuth,
}

impl fmt::Debug for OAuth2Settings {
    // The secret stays out of logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth2Settings")
            .field("token_url", &self.token_url.as_str())
            .field("client_id", &self.client_id)
            .field("client_secret", &"[redacted]")
            .field("scope", &self.scope)
            .field("audience", &self.audience)
            .finish()
    }
}

/// Credentials ready to put on requests; clones share one token cache.
#[derive(Clone)]
pub struct Authenticator {
    inner: Arc<Inner>,
}

enum Inner {
    None,
    Headers(Vec<(HeaderName, HeaderValue)>),
    OAuth2(Box<OAuth2Client>),
}

struct OAuth2Client {
    settings: OAuth2Settings,
    /// Where the token goes; `None` is `Authorization: Bearer …`.
    token_header: Option<HeaderName>,
    /// Sent on every call and on the token request.
    headers: Vec<(HeaderName, HeaderValue)>,
    clock: Arc<dyn Clock>,
    token: Mutex<Option<CachedToken>>,
}

struct CachedToken {
    value: String,
    renew_at: DateTime<Utc>,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    expires_in: Option<serde_json::Value>,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.inner {
            Inner::None => f.write_str("Authenticator::None"),
            Inner::Headers(headers) => f
                .debug_tuple("Authenticator::Headers")
                .field(&headers.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>())
                .finish(),
            Inner::OAuth2(client) => f
                .debug_tuple("Authenticator::OAuth2")
                .field(&client.settings)
                .finish(),
        }
    }
}

fn header_pairs(pairs: Vec<(String, String)>) -> Result<Vec<(HeaderName, HeaderValue)>, AuthError> {
    pairs
        .into_iter()
        .map(|(name, value)| {
            let header = HeaderName::from_bytes(name.trim().as_bytes())
                .map_err(|_| AuthError::HeaderName(name.clone()))?;
            let mut value = HeaderValue::from_str(value.trim())
                .map_err(|_| AuthError::HeaderValue(name.clone()))?;
            value.set_sensitive(true);
            Ok((header, value))
        })
        .collect()
}

impl Authenticator {
    /// No credentials (the sandbox carrier).
    pub fn none() -> Self {
        Self {
            inner: Arc::new(Inner::None),
        }
    }

    /// Fixed headers, `(name, value)`, on every call.
    pub fn headers(pairs: Vec<(String, String)>) -> Result<Self, AuthError> {
        Ok(Self {
            inner: Arc::new(Inner::Headers(header_pairs(pairs)?)),
        })
    }

    /// An OAuth2 token in `token_header` (`Authorization: Bearer` when `None`), with the
    /// fixed `headers` beside it, renewed by `clock`.
    pub fn oauth2(
        settings: OAuth2Settings,
        token_header: Option<String>,
        headers: Vec<(String, String)>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, AuthError> {
        let token_header = token_header
            .filter(|name| !name.trim().eq_ignore_ascii_case("authorization"))
            .map(|name| {
                HeaderName::from_bytes(name.trim().as_bytes())
                    .map_err(|_| AuthError::HeaderName(name))
            })
            .transpose()?;
        Ok(Self {
            inner: Arc::new(Inner::OAuth2(Box::new(OAuth2Client {
                settings,
                token_header,
                headers: header_pairs(headers)?,
                clock,
                token: Mutex::new(None),
            }))),
        })
    }

    /// `none`, `headers` or `oauth2`.
    pub fn kind(&self) -> &'static str {
        match &*self.inner {
            Inner::None => "none",
            Inner::Headers(_) => "headers",
            Inner::OAuth2(_) => "oauth2",
        }
    }

    /// The request with the credentials on it; fetches a token first when needed.
    pub async fn apply(
        &self,
        http: &reqwest::Client,
        request: RequestBuilder,
    ) -> Result<RequestBuilder, CarrierError> {
        Ok(match &*self.inner {
            Inner::None => request,
            Inner::Headers(headers) => headers.iter().fold(request, |request, (name, value)| {
                request.header(name, value)
            }),
            Inner::OAuth2(client) => {
                let token = client.token(http).await?;
                let request = client
                    .headers
                    .iter()
                    .fold(request, |request, (name, value)| {
                        request.header(name, value)
                    });
                match &client.token_header {
                    None => request.bearer_auth(token),
                    Some(name) => request.header(name, token),
                }
            }
        })
    }

    /// The carrier refused a call (401, 403): forget the token so the next call asks anew.
    pub async fn refused(&self) {
        if let Inner::OAuth2(client) = &*self.inner {
            *client.token.lock().await = None;
        }
    }
}

impl OAuth2Client {
    /// The cached token, or a new one. The lock is held across the token request, so
    /// concurrent calls wait for one token instead of each asking for their own.
    async fn token(&self, http: &reqwest::Client) -> Result<String, CarrierError> {
        let Self {
            settings,
            headers,
            clock,
            token,
            ..
        } = self;
        let mut cached = token.lock().await;
        if let Some(current) = cached.as_ref()
            && clock.now() < current.renew_at
        {
            return Ok(current.value.clone());
        }
        // Built before the request: the serializer is not `Send`.
        let form = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "client_credentials");
            if settings.client_auth == ClientAuth::Form {
                form.append_pair("client_id", &settings.client_id);
                form.append_pair("client_secret", &settings.client_secret);
            }
            if let Some(scope) = &settings.scope {
                form.append_pair("scope", scope);
            }
            if let Some(audience) = &settings.audience {
                form.append_pair("audience", audience);
            }
            form.finish()
        };
        let mut request = http
            .post(settings.token_url.clone())
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form)
            .timeout(TOKEN_TIMEOUT);
        if settings.client_auth == ClientAuth::Basic {
            request = request.basic_auth(&settings.client_id, Some(&settings.client_secret));
        }
        let request = headers.iter().fold(request, |request, (name, value)| {
            request.header(name, value)
        });
        let asked_at = clock.now();
        let mut response = request.send().await.map_err(|error| {
            CarrierError::Unavailable(format!("the OAuth2 token endpoint did not answer: {error}"))
        })?;
        let status = response.status();
        if !status.is_success() {
            return Err(
                if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
                    CarrierError::Unavailable(format!(
                        "the OAuth2 token endpoint answered {status}"
                    ))
                } else {
                    // Unknown client, wrong secret, wrong scope: ours to fix.
                    CarrierError::CredentialsRefused(format!(
                        "the OAuth2 token endpoint refused the client credentials ({status})"
                    ))
                },
            );
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| {
            CarrierError::Unavailable(format!("reading the OAuth2 token response: {error}"))
        })? {
            if body.len() + chunk.len() > MAX_TOKEN_BYTES {
                return Err(CarrierError::Unavailable(
                    "the OAuth2 token response is too large".to_owned(),
                ));
            }
            body.extend_from_slice(&chunk);
        }
        let parsed: TokenResponse = serde_json::from_slice(&body).map_err(|e| {
            CarrierError::Unavailable(format!("unreadable OAuth2 token response: {e}"))
        })?;
        // Some servers send `expires_in` as a string.
        let lifetime = parsed
            .expires_in
            .and_then(|value| match value {
                serde_json::Value::Number(n) => n.as_i64(),
                serde_json::Value::String(s) => s.trim().parse().ok(),
                _ => None,
            })
            .filter(|&seconds| seconds > 0)
            .map_or(DEFAULT_TOKEN_LIFETIME, Duration::seconds);
        let value = parsed.access_token;
        *cached = Some(CachedToken {
            value: value.clone(),
            renew_at: asked_at + lifetime - TOKEN_MARGIN,
        });
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use chrono::TimeZone;
    use tidemark_domain::MockClock;
    use wiremock::matchers::{body_string_contains, header, method, path};
    use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

    use super::*;

    /// A token endpoint that hands out `token-1`, `token-2`, … valid for 300 seconds.
    struct Tokens(AtomicUsize);

    impl Respond for Tokens {
        fn respond(&self, _: &Request) -> ResponseTemplate {
            let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
            ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "access_token": format!("token-{n}"), "token_type": "Bearer", "expires_in": 300
            }))
        }
    }

    async fn token_server() -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/token"))
            .and(body_string_contains("grant_type=client_credentials"))
            .and(body_string_contains("client_id=me"))
            .and(body_string_contains("client_secret=s3cret"))
            .and(header("Consumer-Key", "k"))
            .respond_with(Tokens(AtomicUsize::new(0)))
            .mount(&server)
            .await;
        server
    }

    fn client(server: &MockServer, clock: Arc<MockClock>) -> Authenticator {
        Authenticator::oauth2(
            OAuth2Settings {
                token_url: Url::parse(&format!("{}/token", server.uri())).unwrap(),
                client_id: "me".to_owned(),
                client_secret: "s3cret".to_owned(),
                scope: None,
                audience: None,
                client_auth: ClientAuth::Form,
            },
            None,
            vec![("Consumer-Key".to_owned(), "k".to_owned())],
            clock,
        )
        .unwrap()
    }

    async fn bearer(auth: &Authenticator) -> String {
        let http = reqwest::Client::new();
        let request = auth
            .apply(&http, http.get("http://carrier.test/"))
            .await
            .unwrap()
            .build()
            .unwrap();
        request.headers()["authorization"]
            .to_str()
            .unwrap()
            .to_owned()
    }

    fn clock() -> Arc<MockClock> {
        Arc::new(MockClock::new(
            Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap(),
        ))
    }

    #[tokio::test]
    async fn a_token_is_shared_by_clones_until_thirty_seconds_before_it_expires() {
        crate::tls::install_provider();
        let server = token_server().await;
        let clock = clock();
        let auth = client(&server, Arc::clone(&clock));
        let worker = auth.clone();

        let first = bearer(&auth).await;
        clock.advance(Duration::seconds(269));
        let still = bearer(&worker).await;
        clock.advance(Duration::seconds(1));
        let renewed = bearer(&worker).await;

        assert_eq!(first, "Bearer token-1");
        assert_eq!(still, "Bearer token-1");
        assert_eq!(renewed, "Bearer token-2");
    }

    #[tokio::test]
    async fn a_refused_call_drops_the_token() {
        crate::tls::install_provider();
        let server = token_server().await;
        let auth = client(&server, clock());

        bearer(&auth).await;
        auth.refused().await;

        assert_eq!(bearer(&auth).await, "Bearer token-2");
    }

    #[tokio::test]
    async fn a_token_endpoint_that_rejects_the_client_is_refused_credentials() {
        crate::tls::install_provider();
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(401))
            .mount(&server)
            .await;
        let auth = client(&server, clock());
        let http = reqwest::Client::new();

        let error = auth
            .apply(&http, http.get("http://carrier.test/"))
            .await
            .unwrap_err();

        assert!(
            matches!(error, CarrierError::CredentialsRefused(_)),
            "{error:?}"
        );
    }

    #[tokio::test]
    async fn headers_are_all_sent_and_never_shown() {
        let auth = Authenticator::headers(vec![
            ("X-IBM-Client-Id".to_owned(), "id".to_owned()),
            ("X-IBM-Client-Secret".to_owned(), "hunter2".to_owned()),
        ])
        .unwrap();
        let http = reqwest::Client::new();

        let request = auth
            .apply(&http, http.get("http://carrier.test/"))
            .await
            .unwrap()
            .build()
            .unwrap();

        assert_eq!(request.headers()["x-ibm-client-id"], "id");
        assert_eq!(request.headers()["x-ibm-client-secret"], "hunter2");
        assert!(!format!("{auth:?}").contains("hunter2"));
    }
}
