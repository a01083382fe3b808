//! The DCSA Track & Trace 3.0 connector: `GET {base}/v3/events` (or the line's own events
//! path) for one reference, page after page, parsed with [`parse_events`].
//!
//! Two query dialects share the name "3.0" ([`Dialect`]). DCSA's 3.0.0 asks by
//! `transportDocumentReference`, `carrierBookingReference` or `equipmentReference` and
//! carries the full version in `API-Version` (`3.0.0`); the 2023 Beta-1, which Maersk serves,
//! asks by `documentReference` with `documentTypeCodes` (`TRD`, `BKG`) and carries the major
//! version only (`3`). A strict server refuses the other dialect's names, and a lenient one
//! ignores them and answers for everything, so the dialect comes from the line's profile,
//! never from a guess. Pages follow the `Next-Page` response header, a link (absolute or
//! relative to the events URL) that must stay on the carrier's host, since our credentials go
//! with it; a `Next-Page-Cursor` header (3.0.0) is sent back as `cursor` beside the first
//! request's parameters.
//!
//! Authentication, TLS, timeouts and the mapping of HTTP answers onto [`CarrierError`] are
//! the 2.2 connector's ([`DcsaClient`]), which sends every request.

use std::fmt;

use async_trait::async_trait;
use reqwest::header::HeaderMap;
use url::Url;

use super::parse_events;
use crate::carrier::{Carrier, ReferenceKind, TrackingQuery};
use crate::dcsa::{DcsaAuth, DcsaClient, DcsaClientError};
use crate::event::{CarrierError, CarrierSnapshot};

/// The 3.0 query dialect a line speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// DCSA T&T 3.0.0: `transportDocumentReference`, `carrierBookingReference`,
    /// `equipmentReference`; `API-Version: 3.0.0`.
    #[default]
    V3_0_0,
    /// The 2023 Beta-1: `documentReference` with `documentTypeCodes`, `equipmentReference`;
    /// `API-Version: 3`.
    Beta1,
}

impl Dialect {
    /// What `API-Version` carries: the full version for 3.0.0, the major for Beta-1 (each
    /// as its spec says).
    fn api_version(self) -> &'static str {
        match self {
            Self::V3_0_0 => "3.0.0",
            Self::Beta1 => "3",
        }
    }
}
/// Pages followed at most: a shipment has tens of events, so more means a paging loop.
const MAX_PAGES: usize = 50;

/// A carrier that speaks DCSA Track & Trace 3.0.
pub struct Dcsa3Client {
    /// Sends the requests: auth, TLS, timeouts, errors.
    http: DcsaClient,
    /// The line's address, under which the events path goes.
    base_url: Url,
    /// `{base}/events` (3.0.0), `{base}/v3/events` (Beta-1), or the line's own path.
    events_url: Url,
    dialect: Dialect,
}

impl fmt::Debug for Dcsa3Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dcsa3Client")
            .field("scac", &self.http.scac())
            .field("events_url", &self.events_url.as_str())
            .field("dialect", &self.dialect)
            .finish_non_exhaustive()
    }
}

impl Dcsa3Client {
    /// A client for the carrier `scac` whose T&T API lives under `base_url` (the part before
    /// `/v3/events`), with its own HTTP client and a 30-second timeout.
    pub fn new(
        scac: impl Into<String>,
        base_url: Url,
        auth: DcsaAuth,
    ) -> Result<Self, DcsaClientError> {
        let events_url = events_url(&base_url, DEFAULT_PATH)?;
        Ok(Self {
            http: DcsaClient::new(scac, base_url.clone(), auth)?,
            base_url,
            events_url,
            dialect: Dialect::default(),
        })
    }

    /// The same client asking in `dialect`, at that dialect's path unless one was set with
    /// [`Self::at_path`] after this.
    #[must_use]
    pub fn speaking(self, dialect: Dialect) -> Self {
        let path = match dialect {
            Dialect::V3_0_0 => DEFAULT_PATH,
            Dialect::Beta1 => BETA_1_PATH,
        };
        let events_url = events_url(&self.base_url, path).unwrap_or(self.events_url);
        Self {
            dialect,
            events_url,
            ..self
        }
    }

    /// The same client asking at `path` under the base URL (`/operation/trackandtrace/v1/
    /// events`, say) instead of `/v3/events`.
    pub fn at_path(self, path: &str) -> Result<Self, DcsaClientError> {
        Ok(Self {
            events_url: events_url(&self.base_url, path)?,
            ..self
        })
    }

    /// The connector for the sandbox carrier's `/v3/events` under `base_url`: the only 3.0
    /// connector that sends `tidemarkEpoch` ([`DcsaClient::for_sandbox`]).
    pub fn for_sandbox(base_url: Url) -> Result<Self, DcsaClientError> {
        let events_url = events_url(&base_url, DEFAULT_PATH)?;
        Ok(Self {
            http: DcsaClient::for_sandbox(base_url.clone())?,
            base_url,
            events_url,
            dialect: Dialect::default(),
        })
    }

    /// The same, sharing the server's HTTP client.
    pub fn with_http_client(
        scac: impl Into<String>,
        base_url: Url,
        auth: DcsaAuth,
        http: reqwest::Client,
    ) -> Result<Self, DcsaClientError> {
        let events_url = events_url(&base_url, DEFAULT_PATH)?;
        Ok(Self {
            http: DcsaClient::with_http_client(scac, base_url.clone(), auth, http)?,
            base_url,
            events_url,
            dialect: Dialect::default(),
        })
    }

    /// The first page's URL for a query.
    fn first_page(&self, query: &TrackingQuery) -> Url {
        let mut url = self.events_url.clone();
        {
            let mut pairs = url.query_pairs_mut();
            let reference = query.reference.trim();
            match (self.dialect, query.reference_kind) {
                (Dialect::V3_0_0, ReferenceKind::BillOfLading) => {
                    pairs.append_pair("transportDocumentReference", reference);
                }
                (Dialect::V3_0_0, ReferenceKind::Booking) => {
                    pairs.append_pair("carrierBookingReference", reference);
                }
                (Dialect::Beta1, ReferenceKind::BillOfLading) => {
                    pairs.append_pair("documentReference", reference);
                    pairs.append_pair("documentTypeCodes", "TRD");
                }
                (Dialect::Beta1, ReferenceKind::Booking) => {
                    pairs.append_pair("documentReference", reference);
                    pairs.append_pair("documentTypeCodes", "BKG");
                }
                (_, ReferenceKind::Equipment) => {
                    pairs.append_pair("equipmentReference", reference);
                }
            }
            // Sent to the sandbox carrier only, as with 2.2 (`for_sandbox`).
            if let Some(epoch) = self.http.sandbox_epoch_param(query) {
                pairs.append_pair("tidemarkEpoch", &epoch);
            }
        }
        url
    }

    /// The next page's URL from a response's headers, if there is a next page.
    fn next_page(&self, first: &Url, headers: &HeaderMap) -> Result<Option<Url>, CarrierError> {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::trim)
                .filter(|value| !value.is_empty())
        };
        if let Some(link) = header("next-page") {
            // Some servers send the bare cursor in Next-Page, as some did with 2.2; a cursor
            // may hold a `/` (base64), so only a query, a leading `/` or a scheme make a link.
            let is_link = link.starts_with('/') || link.contains('?') || Url::parse(link).is_ok();
            if is_link {
                let next = self.events_url.join(link).map_err(|e| {
                    CarrierError::UnexpectedPayload(format!(
                        "the carrier's Next-Page is not a link ({e}): {link}"
                    ))
                })?;
                if next.origin() != self.events_url.origin() {
                    return Err(CarrierError::UnexpectedPayload(format!(
                        "the carrier's Next-Page points to another host: {link}"
                    )));
                }
                return Ok(Some(next));
            }
            return Ok(Some(with_cursor(first, link)));
        }
        Ok(header("next-page-cursor").map(|cursor| with_cursor(first, cursor)))
    }
}

/// Where DCSA 3.0.0 puts the events under a carrier's address: its spec's one resource is
/// `/events` (the version, if any, is part of the server's address).
pub const DEFAULT_PATH: &str = "/events";
/// Where the 2023 Beta-1 puts them (`/v3/events`, as Maersk and the sandbox serve them).
pub const BETA_1_PATH: &str = "/v3/events";

/// `path` (such as `/v3/events`) under `base_url`.
fn events_url(base_url: &Url, path: &str) -> Result<Url, DcsaClientError> {
    crate::dcsa::client::url_under(base_url, path)
}

/// The first page's URL with `cursor`: DCSA asks to repeat the first request's parameters.
fn with_cursor(first: &Url, cursor: &str) -> Url {
    let mut url = first.clone();
    url.query_pairs_mut().append_pair("cursor", cursor);
    url
}

#[async_trait]
impl Carrier for Dcsa3Client {
    fn scac(&self) -> &str {
        self.http.scac()
    }

    async fn fetch(&self, query: &TrackingQuery) -> Result<CarrierSnapshot, CarrierError> {
        let first = self.first_page(query);
        let mut snapshot = CarrierSnapshot::default();
        let mut url = first.clone();
        let mut seen = vec![url.clone()];
        for page in 1..=MAX_PAGES {
            let (body, headers) = match self.http.get(url, self.dialect.api_version()).await {
                // 3.0.0 answers an unknown reference with 200 and no events: a 404 is a
                // wrong address, to retry and fix, never a final "unknown number".
                Err(CarrierError::NotFound) if self.dialect == Dialect::V3_0_0 => {
                    return Err(CarrierError::UnexpectedPayload(format!(
                        "the carrier answered 404 at {}: DCSA 3.0.0 answers 200 for a \
                         reference it does not know, so check base_url and events_path",
                        self.events_url
                    )));
                }
                other => other?,
            };
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
            match self.next_page(&first, &headers)? {
                None => return Ok(snapshot),
                Some(next) if seen.contains(&next) => {
                    return Err(CarrierError::UnexpectedPayload(format!(
                        "the carrier's next page repeats ({next})"
                    )));
                }
                Some(next) => {
                    seen.push(next.clone());
                    url = next;
                }
            }
        }
        Err(CarrierError::UnexpectedPayload(format!(
            "more than {MAX_PAGES} pages of events"
        )))
    }
}

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderName, HeaderValue};

    use super::*;

    fn client() -> Dcsa3Client {
        Dcsa3Client::new(
            "ABCD",
            Url::parse("https://carrier.test/tnt/?x=1").expect("valid URL"),
            DcsaAuth::None,
        )
        .expect("valid configuration")
    }

    fn headers(name: &'static str, value: &'static str) -> HeaderMap {
        std::iter::once((
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        ))
        .collect()
    }

    fn query(kind: ReferenceKind, reference: &str) -> TrackingQuery {
        TrackingQuery {
            reference_kind: kind,
            reference: reference.to_owned(),
            sandbox_epoch: None,
        }
    }

    #[test]
    fn a_base_url_gets_3_0_0s_events_path_and_beta_1s_v3_events() {
        assert_eq!(
            client().events_url.as_str(),
            "https://carrier.test/tnt/events"
        );
        assert_eq!(
            client().speaking(Dialect::Beta1).events_url.as_str(),
            "https://carrier.test/tnt/v3/events"
        );
    }

    #[test]
    fn each_kind_of_number_is_asked_for_with_3_0_0s_parameters() {
        let client = client();

        let cases = [
            (
                ReferenceKind::BillOfLading,
                "transportDocumentReference=HHL1",
            ),
            (ReferenceKind::Booking, "carrierBookingReference=HHL1"),
            (ReferenceKind::Equipment, "equipmentReference=HHL1"),
        ];

        for (kind, expected) in cases {
            let url = client.first_page(&query(kind, " HHL1 "));

            assert_eq!(url.query(), Some(expected), "{kind:?}");
        }
    }

    #[test]
    fn a_beta_1_line_is_asked_with_document_reference_and_type_codes() {
        let client = client().speaking(Dialect::Beta1);

        let cases = [
            (
                ReferenceKind::BillOfLading,
                "documentReference=HHL1&documentTypeCodes=TRD",
            ),
            (
                ReferenceKind::Booking,
                "documentReference=HHL1&documentTypeCodes=BKG",
            ),
            (ReferenceKind::Equipment, "equipmentReference=HHL1"),
        ];

        for (kind, expected) in cases {
            let url = client.first_page(&query(kind, "HHL1"));

            assert_eq!(url.query(), Some(expected), "{kind:?}");
        }
    }

    #[test]
    fn a_line_with_its_own_events_path_is_asked_there() {
        let client = client()
            .at_path("/operation/trackandtrace/v1/events")
            .expect("a plain path");

        assert_eq!(
            client.events_url.as_str(),
            "https://carrier.test/tnt/operation/trackandtrace/v1/events"
        );
        assert!(client.at_path("/../admin").is_err());
        assert!(self::client().at_path("/events?x=1").is_err());
    }

    #[test]
    fn only_the_sandbox_connector_asks_with_the_epoch() {
        let epoch = chrono::DateTime::UNIX_EPOCH;
        let sent = TrackingQuery {
            sandbox_epoch: Some(epoch),
            ..query(ReferenceKind::Equipment, "APZU1")
        };
        let sandbox =
            Dcsa3Client::for_sandbox(Url::parse("https://sandbox.test/").expect("valid URL"))
                .expect("valid configuration");

        let real = client().first_page(&sent);
        let test = sandbox.first_page(&sent);

        assert_eq!(real.query(), Some("equipmentReference=APZU1"));
        assert_eq!(
            test.query(),
            Some("equipmentReference=APZU1&tidemarkEpoch=1970-01-01T00%3A00%3A00Z")
        );
    }

    #[test]
    fn next_page_links_are_followed_absolute_or_relative_on_the_same_host() {
        let client = client().speaking(Dialect::Beta1);
        let first = client.first_page(&query(ReferenceKind::Equipment, "APZU1"));

        let cases = [
            (
                headers("next-page", "https://carrier.test/tnt/v3/events?cursor=abc"),
                "https://carrier.test/tnt/v3/events?cursor=abc",
            ),
            (
                headers("next-page", "/tnt/v3/events?cursor=abc"),
                "https://carrier.test/tnt/v3/events?cursor=abc",
            ),
            (
                headers("next-page", "?cursor=abc"),
                "https://carrier.test/tnt/v3/events?cursor=abc",
            ),
            (
                headers("next-page", "fE9mZnNldA"),
                "https://carrier.test/tnt/v3/events?equipmentReference=APZU1&cursor=fE9mZnNldA",
            ),
            (
                headers("next-page", "fE9/ZnNldA=="),
                "https://carrier.test/tnt/v3/events?equipmentReference=APZU1&cursor=fE9%2FZnNldA%3D%3D",
            ),
            (
                headers("next-page-cursor", "c=1"),
                "https://carrier.test/tnt/v3/events?equipmentReference=APZU1&cursor=c%3D1",
            ),
        ];

        for (headers, expected) in cases {
            let next = client.next_page(&first, &headers).expect("a valid link");

            assert_eq!(next.map(String::from).as_deref(), Some(expected));
        }
    }

    #[test]
    fn a_next_page_on_another_host_is_refused() {
        let client = client();
        let first = client.first_page(&query(ReferenceKind::Equipment, "APZU1"));

        for link in [
            "https://evil.test/tnt/v3/events?cursor=abc",
            "//evil.test/v3/events",
            "http://carrier.test/tnt/v3/events?cursor=abc",
        ] {
            let result = client.next_page(&first, &headers("next-page", link));

            assert!(
                matches!(result, Err(CarrierError::UnexpectedPayload(_))),
                "{link}: {result:?}"
            );
        }
    }

    #[test]
    fn no_paging_header_means_the_last_page() {
        let client = client();
        let first = client.first_page(&query(ReferenceKind::Equipment, "APZU1"));

        let next = client
            .next_page(&first, &headers("next-page", " "))
            .expect("no error");

        assert_eq!(next, None);
    }
}
