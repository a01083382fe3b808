//! The DCSA Track & Trace 2.2 connector: `GET {base}/v2/events` for one reference, page
//! after page, parsed with [`parse_events`].
//!
//! HTTP outcomes become the [`CarrierError`] variant that decides the retry: 404 is
//! `NotFound`, 429 is `RateLimited` (with `Retry-After` in seconds), 5xx, timeouts and
//! connection failures are `Unavailable`, and any other answer we cannot use is
//! `UnexpectedPayload`. Refused credentials (401, 403) are `CredentialsRefused`: an operator
//! fixes them, and the poll should then succeed.

use std::fmt;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::header::{ACCEPT, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use reqwest::{RequestBuilder, Response, StatusCode};
use serde::Deserialize;
use tokio::sync::Mutex;
use url::Url;

use super::parse_events;
use crate::carrier::{Carrier, ReferenceKind, TrackingQuery};
use crate::event::{CarrierError, CarrierSnapshot};

/// The T&T version asked for in `API-Version`.
const API_VERSION: &str = "2.2.0";
/// How long one request may take, connection included.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Pages followed at most: a shipment has tens of events, so more means a cursor loop.
const MAX_PAGES: usize = 50;
/// Largest body read, so a broken carrier cannot exhaust memory.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// An OAuth2 token is renewed this long before it expires, so it does not expire in flight.
const TOKEN_MARGIN: Duration = Duration::from_secs(30);
/// Lifetime assumed for a token whose response gives none.
const DEFAULT_TOKEN_LIFETIME: Duration = Duration::from_secs(300);

/// How the connector proves who it is to the carrier.
#[derive(Clone)]
pub enum DcsaAuth {
    /// No credentials, as for the sandbox carrier.
    None,
    /// A fixed header, such as `Consumer-Key: …` or `Authorization: Bearer …`.
    Header { name: String, value: String },
    /// OAuth2 client credentials: a bearer token from `token_url`, authenticated with HTTP
    /// Basic (RFC 6749 §2.3.1), cached until shortly before it expires.
    OAuth2ClientCredentials {
        token_url: Url,
        client_id: String,
        client_secret: String,
        /// The `scope` to ask for, when the carrier wants one.
        scope: Option<String>,
    },
}

impl fmt::Debug for DcsaAuth {
    // Secrets stay out of logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("None"),
            Self::Header { name, .. } => f
                .debug_struct("Header")
                .field("name", name)
                .field("value", &"[redacted]")
                .finish(),
            Self::OAuth2ClientCredentials {
                token_url,
                client_id,
                scope,
                ..
            } => f
                .debug_struct("OAuth2ClientCredentials")
                .field("token_url", &token_url.as_str())
                .field("client_id", client_id)
                .field("client_secret", &"[redacted]")
                .field("scope", scope)
                .finish(),
        }
    }
}

/// Why a [`DcsaClient`] could not be built: a configuration mistake, reported at startup.
#[derive(Debug, thiserror::Error)]
pub enum DcsaClientError {
    #[error("the carrier base URL {0} cannot take a path")]
    BaseUrl(String),
    #[error("the auth header is not a valid HTTP header: {0}")]
    AuthHeader(String),
    #[error("could not build the HTTP client: {0}")]
    Http(#[from] reqwest::Error),
}

/// A carrier that speaks DCSA Track & Trace 2.2.
pub struct DcsaClient {
    scac: String,
    /// `{base}/v2/events`.
    events_url: Url,
    auth: Auth,
    http: reqwest::Client,
}

impl fmt::Debug for DcsaClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DcsaClient")
            .field("scac", &self.scac)
            .field("events_url", &self.events_url.as_str())
            .finish_non_exhaustive()
    }
}

/// [`DcsaAuth`] checked and ready to use.
enum Auth {
    None,
    Header(HeaderName, HeaderValue),
    OAuth2 {
        token_url: Url,
        client_id: String,
        client_secret: String,
        scope: Option<String>,
        token: Mutex<Option<CachedToken>>,
    },
}

struct CachedToken {
    value: String,
    renew_at: Instant,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl DcsaClient {
    /// A client for the carrier `scac` whose T&T API lives under `base_url` (the part before
    /// `/v2/events`), with its own HTTP client and a 30-second timeout.
    pub fn new(
        scac: impl Into<String>,
        base_url: Url,
        auth: DcsaAuth,
    ) -> Result<Self, DcsaClientError> {
        crate::tls::install_provider();
        let http = reqwest::Client::builder().timeout(TIMEOUT).build()?;
        Self::with_http_client(scac, base_url, auth, http)
    }

    /// The same, sharing the server's HTTP client; every request still times out after 30
    /// seconds.
    pub fn with_http_client(
        scac: impl Into<String>,
        base_url: Url,
        auth: DcsaAuth,
        http: reqwest::Client,
    ) -> Result<Self, DcsaClientError> {
        let mut events_url = base_url.clone();
        events_url
            .path_segments_mut()
            .map_err(|()| DcsaClientError::BaseUrl(base_url.to_string()))?
            .pop_if_empty()
            .extend(["v2", "events"]);
        events_url.set_query(None);
        events_url.set_fragment(None);
        let auth = match auth {
            DcsaAuth::None => Auth::None,
            DcsaAuth::Header { name, value } => {
                let name = HeaderName::from_bytes(name.trim().as_bytes())
                    .map_err(|e| DcsaClientError::AuthHeader(e.to_string()))?;
                let mut value = HeaderValue::from_str(value.trim())
                    .map_err(|e| DcsaClientError::AuthHeader(e.to_string()))?;
                value.set_sensitive(true);
                Auth::Header(name, value)
            }
            DcsaAuth::OAuth2ClientCredentials {
                token_url,
                client_id,
                client_secret,
                scope,
            } => Auth::OAuth2 {
                token_url,
                client_id,
                client_secret,
                scope,
                token: Mutex::new(None),
            },
        };
        Ok(Self {
            scac: scac.into(),
            events_url,
            auth,
            http,
        })
    }

    /// Fetches one page: its body and the cursor of the next page, if any.
    async fn page(&self, url: Url) -> Result<(Vec<u8>, Option<String>), CarrierError> {
        let (body, headers) = self.get(url, API_VERSION).await?;
        Ok((body, next_cursor(&headers)))
    }

    /// One authorized `GET` of `url` with `API-Version: {api_version}`: the body and the
    /// response headers of a success, else the [`CarrierError`] of the answer. The T&T 3.0
    /// connector (`crate::dcsa3`) sends its requests through here.
    pub(crate) async fn get(
        &self,
        url: Url,
        api_version: &str,
    ) -> Result<(Vec<u8>, HeaderMap), CarrierError> {
        let request = self
            .http
            .get(url)
            .header("API-Version", api_version)
            .header(ACCEPT, "application/json")
            .timeout(TIMEOUT);
        let request = self.authorize(request).await?;
        let response = request.send().await.map_err(transport_error)?;
        let status = response.status();
        if !status.is_success() {
            if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
                // The token may have been revoked early: fetch a new one next time.
                self.forget_token().await;
            }
            return Err(status_error(status, response.headers()));
        }
        let headers = response.headers().clone();
        let body = read_body(response).await?;
        Ok((body, headers))
    }

    async fn authorize(&self, request: RequestBuilder) -> Result<RequestBuilder, CarrierError> {
        Ok(match &self.auth {
            Auth::None => request,
            Auth::Header(name, value) => request.header(name.clone(), value.clone()),
            Auth::OAuth2 { .. } => request.bearer_auth(self.bearer_token().await?),
        })
    }

    /// The cached OAuth2 token, or a new one.
    async fn bearer_token(&self) -> Result<String, CarrierError> {
        let Auth::OAuth2 {
            token_url,
            client_id,
            client_secret,
            scope,
            token,
        } = &self.auth
        else {
            return Err(CarrierError::Unavailable(
                "no OAuth2 credentials configured".to_owned(),
            ));
        };
        // Held across the request, so concurrent polls wait for one token instead of each
        // asking for their own.
        let mut cached = token.lock().await;
        if let Some(current) = cached.as_ref()
            && Instant::now() < current.renew_at
        {
            return Ok(current.value.clone());
        }
        // Built before the request: the serializer is not `Send`.
        let form = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "client_credentials");
            if let Some(scope) = scope {
                form.append_pair("scope", scope);
            }
            form.finish()
        };
        let response = self
            .http
            .post(token_url.clone())
            .basic_auth(client_id, Some(client_secret))
            .header(ACCEPT, "application/json")
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(form)
            .timeout(TIMEOUT)
            .send()
            .await
            .map_err(transport_error)?;
        let status = response.status();
        if !status.is_success() {
            return Err(match status_error(status, response.headers()) {
                // The token endpoint not knowing us is a credentials problem, not a missing
                // shipment.
                CarrierError::NotFound
                | CarrierError::UnexpectedPayload(_)
                | CarrierError::CredentialsRefused(_) => CarrierError::CredentialsRefused(format!(
                    "the OAuth2 token endpoint refused the client credentials ({status})"
                )),
                other => other,
            });
        }
        let body = read_body(response).await?;
        let parsed: TokenResponse = serde_json::from_slice(&body).map_err(|e| {
            CarrierError::Unavailable(format!("unreadable OAuth2 token response: {e}"))
        })?;
        let lifetime = parsed
            .expires_in
            .map_or(DEFAULT_TOKEN_LIFETIME, Duration::from_secs);
        let value = parsed.access_token;
        *cached = Some(CachedToken {
            value: value.clone(),
            renew_at: Instant::now() + lifetime.saturating_sub(TOKEN_MARGIN),
        });
        Ok(value)
    }

    async fn forget_token(&self) {
        if let Auth::OAuth2 { token, .. } = &self.auth {
            *token.lock().await = None;
        }
    }
}

#[async_trait]
impl Carrier for DcsaClient {
    fn scac(&self) -> &str {
        &self.scac
    }

    async fn fetch(&self, query: &TrackingQuery) -> Result<CarrierSnapshot, CarrierError> {
        let mut url = self.events_url.clone();
        {
            let mut pairs = url.query_pairs_mut();
            let name = match query.reference_kind {
                ReferenceKind::BillOfLading => "transportDocumentReference",
                ReferenceKind::Booking => "carrierBookingReference",
                ReferenceKind::Equipment => "equipmentReference",
            };
            pairs.append_pair(name, query.reference.trim());
            if let Some(epoch) = query.sandbox_epoch {
                pairs.append_pair(
                    "tidemarkEpoch",
                    &epoch.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                );
            }
        }

        let mut snapshot = CarrierSnapshot::default();
        let mut cursor: Option<String> = None;
        let mut seen_cursors = Vec::new();
        for page in 1..=MAX_PAGES {
            // DCSA asks to repeat the first request's parameters alongside the cursor.
            let mut page_url = url.clone();
            if let Some(cursor) = &cursor {
                page_url.query_pairs_mut().append_pair("cursor", cursor);
            }
            let (body, next) = self.page(page_url).await?;
            let mut page_snapshot = parse_events(&body)?;
            snapshot.events.append(&mut page_snapshot.events);
            snapshot.skipped_raw.append(&mut page_snapshot.skipped_raw);
            snapshot
                .skipped
                .extend(page_snapshot.skipped.into_iter().map(|skip| {
                    if page == 1 {
                        skip
                    } else {
                        format!("page {page}, {skip}")
                    }
                }));
            match next {
                None => return Ok(snapshot),
                Some(next) if seen_cursors.contains(&next) => {
                    return Err(CarrierError::UnexpectedPayload(format!(
                        "the carrier's Next-Page-Cursor repeats ({next})"
                    )));
                }
                Some(next) => {
                    seen_cursors.push(next.clone());
                    cursor = Some(next);
                }
            }
        }
        Err(CarrierError::UnexpectedPayload(format!(
            "more than {MAX_PAGES} pages of events"
        )))
    }
}

/// The error for a response that is not a success.
fn status_error(status: StatusCode, headers: &HeaderMap) -> CarrierError {
    match status {
        StatusCode::NOT_FOUND => CarrierError::NotFound,
        StatusCode::TOO_MANY_REQUESTS => CarrierError::RateLimited {
            retry_after: retry_after(headers),
        },
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            CarrierError::CredentialsRefused(format!("the carrier answered {status}"))
        }
        StatusCode::REQUEST_TIMEOUT => {
            CarrierError::Unavailable(format!("the carrier answered {status}"))
        }
        status if status.is_server_error() => {
            CarrierError::Unavailable(format!("the carrier answered {status}"))
        }
        status => CarrierError::UnexpectedPayload(format!("the carrier answered {status}")),
    }
}

/// `Retry-After` in seconds. The HTTP-date form is rare for APIs and would need the clock;
/// it reads as absent, and the caller backs off as usual.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?;
    text.trim().parse().ok().map(Duration::from_secs)
}

/// The next page's cursor: T&T 3.0's `Next-Page-Cursor`, else 2.2's `Next-Page`, which some
/// servers fill with a link whose `cursor` parameter is the cursor.
fn next_cursor(headers: &HeaderMap) -> Option<String> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
            .filter(|value| !value.is_empty())
    };
    if let Some(cursor) = header("next-page-cursor") {
        return Some(cursor.to_owned());
    }
    let link = header("next-page")?;
    match link.split_once('?') {
        Some((_, query)) => url::form_urlencoded::parse(query.as_bytes())
            .find(|(name, _)| name == "cursor")
            .map(|(_, value)| value.into_owned()),
        None => Some(link.to_owned()),
    }
}

async fn read_body(mut response: Response) -> Result<Vec<u8>, CarrierError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(CarrierError::UnexpectedPayload(format!(
                "the body is larger than {MAX_BODY_BYTES} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A request that got no answer: retry later. reqwest's message names only the outer error,
/// so the causes are appended.
fn transport_error(error: reqwest::Error) -> CarrierError {
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
    CarrierError::Unavailable(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|&(name, value)| {
                (
                    HeaderName::from_static(name),
                    HeaderValue::from_static(value),
                )
            })
            .collect()
    }

    #[test]
    fn the_next_cursor_comes_from_either_header_or_a_link() {
        let cases = [
            (headers(&[("next-page-cursor", "abc")]), Some("abc")),
            (
                headers(&[("next-page", "https://x.test/v2/events?limit=5&cursor=c%3D1")]),
                Some("c=1"),
            ),
            (headers(&[("next-page", "fE9mZnNldA")]), Some("fE9mZnNldA")),
            (headers(&[("next-page-cursor", " ")]), None),
            (headers(&[]), None),
        ];

        for (headers, expected) in cases {
            assert_eq!(next_cursor(&headers).as_deref(), expected, "{headers:?}");
        }
    }

    #[test]
    fn a_base_url_with_or_without_a_trailing_slash_gets_the_events_path() {
        for base in ["https://carrier.test/tnt", "https://carrier.test/tnt/?x=1"] {
            let client =
                DcsaClient::new("ABCD", Url::parse(base).expect("valid URL"), DcsaAuth::None)
                    .expect("valid configuration");

            assert_eq!(
                client.events_url.as_str(),
                "https://carrier.test/tnt/v2/events"
            );
        }
    }

    #[test]
    fn debug_output_hides_secrets() {
        let auth = DcsaAuth::OAuth2ClientCredentials {
            token_url: Url::parse("https://auth.test/token").expect("valid URL"),
            client_id: "me".to_owned(),
            client_secret: "hunter2".to_owned(),
            scope: None,
        };
        let header = DcsaAuth::Header {
            name: "Consumer-Key".to_owned(),
            value: "s3cret".to_owned(),
        };

        let text = format!("{auth:?} {header:?}");

        assert!(
            !text.contains("hunter2") && !text.contains("s3cret"),
            "{text}"
        );
    }
}
