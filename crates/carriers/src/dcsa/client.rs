//! The DCSA Track & Trace 2.2 connector: `GET {base}/v2/events` for one reference, page
//! after page, parsed with [`parse_events`].
//!
//! HTTP outcomes become the [`CarrierError`] variant that decides the retry: 404 is
//! `NotFound`, 429 is `RateLimited` (with `Retry-After` in seconds), 5xx, timeouts and
//! connection failures are `Unavailable`, and any other answer we cannot use is
//! `UnexpectedPayload`. Refused credentials (401, 403) are `CredentialsRefused`: an operator
//! fixes them, and the poll should then succeed. A 200 whose events could none of them be
//! read is a snapshot that says so ([`CarrierSnapshot::unreadable`]), its skipped events kept
//! for drift diagnostics.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{ACCEPT, HeaderMap, RETRY_AFTER};
#[cfg(test)]
use reqwest::header::{HeaderName, HeaderValue};
use reqwest::{Response, StatusCode};
use url::Url;

use super::parse_events;
use crate::auth::{AuthError, Authenticator, ClientAuth, OAuth2Settings};
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
    /// Credentials built from a carrier profile ([`crate::auth`]): any number of headers,
    /// or an OAuth2 token on the injected clock, shared with other connectors.
    Authenticator(Authenticator),
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
            Self::Authenticator(auth) => auth.fmt(f),
        }
    }
}

/// Why a [`DcsaClient`] could not be built: a configuration mistake, reported at startup.
#[derive(Debug, thiserror::Error)]
pub enum DcsaClientError {
    #[error("the carrier base URL {0} cannot take a path")]
    BaseUrl(String),
    #[error("the events path {0:?} is not a path of plain segments (such as /v2/events)")]
    EventsPath(String),
    #[error("the auth header is not a valid HTTP header: {0}")]
    AuthHeader(#[from] AuthError),
    #[error("could not build the HTTP client: {0}")]
    Http(#[from] reqwest::Error),
}

/// A carrier that speaks DCSA Track & Trace 2.2.
pub struct DcsaClient {
    scac: String,
    /// `{base}/v2/events`.
    events_url: Url,
    auth: Authenticator,
    http: reqwest::Client,
    /// Whether requests carry `tidemarkEpoch`, a parameter only the sandbox carrier defines:
    /// set by [`DcsaClient::for_sandbox`] alone, since a real carrier's gateway may refuse
    /// a parameter it does not know, and the request's creation time is none of its business.
    sends_sandbox_epoch: bool,
}

impl fmt::Debug for DcsaClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DcsaClient")
            .field("scac", &self.scac)
            .field("events_url", &self.events_url.as_str())
            .field("sends_sandbox_epoch", &self.sends_sandbox_epoch)
            .finish_non_exhaustive()
    }
}

impl DcsaClient {
    /// The connector for the sandbox carrier (SCAC `TEST`) under `base_url`: no credentials,
    /// and each query's [`TrackingQuery::sandbox_epoch`] sent as `tidemarkEpoch`, which lays
    /// out the sandbox's voyages. No other connector sends it.
    pub fn for_sandbox(base_url: Url) -> Result<Self, DcsaClientError> {
        let mut client = Self::new(crate::sandbox::SCAC, base_url, DcsaAuth::None)?;
        client.sends_sandbox_epoch = true;
        Ok(client)
    }

    /// `tidemarkEpoch` for a query, when this connector talks to the sandbox and the query
    /// has an epoch.
    pub(crate) fn sandbox_epoch_param(&self, query: &TrackingQuery) -> Option<String> {
        query
            .sandbox_epoch
            .filter(|_| self.sends_sandbox_epoch)
            .map(|epoch| epoch.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
    }

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
        let events_url = url_under(&base_url, DEFAULT_PATH)?;
        let auth = match auth {
            DcsaAuth::None => Authenticator::none(),
            DcsaAuth::Header { name, value } => Authenticator::headers(vec![(name, value)])?,
            DcsaAuth::OAuth2ClientCredentials {
                token_url,
                client_id,
                client_secret,
                scope,
            } => Authenticator::oauth2(
                OAuth2Settings {
                    token_url,
                    client_id,
                    client_secret,
                    scope,
                    audience: None,
                    client_auth: ClientAuth::Basic,
                },
                None,
                Vec::new(),
                std::sync::Arc::new(tidemark_domain::SystemClock),
            )?,
            DcsaAuth::Authenticator(auth) => auth,
        };
        Ok(Self {
            scac: scac.into(),
            events_url,
            auth,
            http,
            sends_sandbox_epoch: false,
        })
    }

    /// The same client asking at `path` under the base URL (a line's own gateway path, such
    /// as CMA CGM's `/operation/trackandtrace/v1/events`) instead of `/v2/events`.
    pub fn at_path(self, base_url: &Url, path: &str) -> Result<Self, DcsaClientError> {
        Ok(Self {
            events_url: url_under(base_url, path)?,
            ..self
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
        let request = self.auth.apply(&self.http, request).await?;
        let response = request.send().await.map_err(transport_error)?;
        let status = response.status();
        if !status.is_success() {
            if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
                // The token may have been revoked early: fetch a new one next time.
                self.auth.refused().await;
            }
            return Err(status_error(status, response.headers()));
        }
        let headers = response.headers().clone();
        let body = read_body(response).await?;
        Ok((body, headers))
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
            // Only the sandbox defines it (see `for_sandbox`).
            if let Some(epoch) = self.sandbox_epoch_param(query) {
                pairs.append_pair("tidemarkEpoch", &epoch);
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

/// Where DCSA puts 2.2's events under a carrier's base URL.
pub const DEFAULT_PATH: &str = "/v2/events";

/// `path` (`/v2/events`, `/operation/trackandtrace/v1/events`…) appended to `base_url`'s
/// path, without the base's query or fragment. A path of other than plain segments (`..`,
/// a query, a scheme) is refused: it names a place under the base, nothing else.
pub(crate) fn url_under(base_url: &Url, path: &str) -> Result<Url, DcsaClientError> {
    let segments =
        plain_segments(path).ok_or_else(|| DcsaClientError::EventsPath(path.to_owned()))?;
    let mut url = base_url.clone();
    url.path_segments_mut()
        .map_err(|()| DcsaClientError::BaseUrl(base_url.to_string()))?
        .pop_if_empty()
        .extend(segments);
    url.set_query(None);
    url.set_fragment(None);
    Ok(url)
}

/// The segments of an events path made of plain segments only (letters, digits, `-`, `_`,
/// `.`, `~`; no `.` or `..`, no query): `None` for anything else, which would name a place
/// outside the carrier's base URL. Operators' `events_path` settings are checked with it.
pub fn plain_segments(path: &str) -> Option<Vec<&str>> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let plain = |segment: &&str| {
        *segment != "."
            && *segment != ".."
            && segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~'))
    };
    (!segments.is_empty() && segments.iter().all(plain)).then_some(segments)
}

/// The error for a response that is not a success.
pub(crate) fn status_error(status: StatusCode, headers: &HeaderMap) -> CarrierError {
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

async fn read_body(response: Response) -> Result<Vec<u8>, CarrierError> {
    read_body_limited(response, MAX_BODY_BYTES).await
}

/// The body, or an error once it grows beyond `limit` bytes.
pub(crate) async fn read_body_limited(
    mut response: Response,
    limit: usize,
) -> Result<Vec<u8>, CarrierError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
        if body.len() + chunk.len() > limit {
            return Err(CarrierError::UnexpectedPayload(format!(
                "the body is larger than {limit} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A request that got no answer: retry later. reqwest's message names only the outer error,
/// so the causes are appended.
pub(crate) fn transport_error(error: reqwest::Error) -> CarrierError {
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
