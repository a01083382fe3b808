//! The connector for a line, picked by its profile's protocol: DCSA T&T 2.2, DCSA T&T 3.0,
//! COSCO's own API, HMM's own gateway, or none (a line without a public tracking API, whose requests fail at
//! once with a clear reason).

use std::sync::Arc;

use async_trait::async_trait;
use tidemark_domain::Clock;
use url::Url;

use crate::auth::Authenticator;
use crate::carrier::{Carrier, TrackingQuery};
use crate::cosco::{CoscoClient, CoscoKeys};
use crate::dcsa::{DcsaAuth, DcsaClient};
use crate::dcsa3::{Dcsa3Client, Dialect};
use crate::event::{CarrierError, CarrierSnapshot};
use crate::hmm::HmmClient;
use crate::profile::Protocol;

/// What a connector authenticates with.
#[derive(Clone, Debug)]
pub enum Credentials {
    /// Headers or an OAuth2 token (DCSA lines).
    Auth(Authenticator),
    /// COSCO's signing keys.
    Cosco(CoscoKeys),
}

/// Why a connector cannot be built: a configuration mistake, reported at start.
#[derive(Debug, thiserror::Error)]
pub enum ConnectorError {
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Build(String),
}

/// Where a line's API is: its base URL, and the events path under it when the line does
/// not use DCSA's (`None`: `/v2/events` or `/v3/events` by protocol; [`BASE_URL_ITSELF`]:
/// the base URL itself, as ZIM's gateway serves them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub base_url: Url,
    pub events_path: Option<String>,
}

/// The events path that names the base URL itself (ZIM's `GET /` under
/// `https://apigw.zim.com/trackAndTrace-sandbox/v1`).
pub const BASE_URL_ITSELF: &str = "/";

/// Whether `path` is an events path a profile or an operator may give: [`BASE_URL_ITSELF`],
/// or plain segments starting with `/` (`/v2/events`, `/operation/trackandtrace/v1/events`);
/// nothing that could name a place outside the base URL (`..`, a query, a scheme).
pub fn is_events_path(path: &str) -> bool {
    path == BASE_URL_ITSELF
        || (path.starts_with('/') && crate::dcsa::plain_segments(path).is_some())
}

/// For events at the base URL itself: the base URL's parent and its last segment as a path
/// under it (`https://h/a/v1` is `https://h/a` and `/v1`), which is how the DCSA clients are
/// told where to ask. A base URL without a path segment has no parent to put it under.
fn parent_and_last(base_url: &Url) -> Result<(Url, String), String> {
    let segments: Vec<String> = base_url
        .path_segments()
        .map(|s| s.filter(|s| !s.is_empty()).map(str::to_owned).collect())
        .unwrap_or_default();
    let Some((last, parents)) = segments.split_last() else {
        return Err(format!(
            "events_path \"{BASE_URL_ITSELF}\" (the base URL itself) needs a base URL with a \
             path, not {base_url}"
        ));
    };
    let mut parent = base_url.clone();
    parent
        .path_segments_mut()
        .map_err(|()| format!("the base URL {base_url} cannot take a path"))?
        .clear()
        .extend(parents);
    Ok((parent, format!("/{last}")))
}

/// The base URL and events path the DCSA clients are built with: a path under the parent
/// for [`BASE_URL_ITSELF`], else as given.
fn dcsa_endpoint(
    base_url: &Url,
    events_path: Option<&str>,
) -> Result<(Url, Option<String>), String> {
    match events_path {
        Some(BASE_URL_ITSELF) => {
            let (parent, last) = parent_and_last(base_url)?;
            Ok((parent, Some(last)))
        }
        Some(path) if !is_events_path(path) => Err(format!(
            "events_path {path:?} is not a path of plain segments starting with / (or / for \
             the base URL itself)"
        )),
        other => Ok((base_url.clone(), other.map(str::to_owned))),
    }
}

impl Endpoint {
    /// DCSA's path under `base_url`.
    pub fn at(base_url: Url) -> Self {
        Self {
            base_url,
            events_path: None,
        }
    }
}

/// The connector of `scac` over `protocol` at `endpoint`.
pub fn connector(
    scac: &str,
    protocol: Protocol,
    endpoint: Endpoint,
    credentials: Credentials,
    clock: Arc<dyn Clock>,
) -> Result<Arc<dyn Carrier>, ConnectorError> {
    let build = |error: String| ConnectorError::Build(format!("the {scac} connector: {error}"));
    let Endpoint {
        base_url,
        events_path,
    } = endpoint;
    let dcsa_base = || dcsa_endpoint(&base_url, events_path.as_deref()).map_err(&build);
    let dcsa3 = |auth: Authenticator, dialect: Dialect| {
        let (base, path) = dcsa_base()?;
        let client = Dcsa3Client::new(scac, base, DcsaAuth::Authenticator(auth))
            .map_err(|e| build(e.to_string()))?
            .speaking(dialect);
        match &path {
            Some(path) => client.at_path(path).map_err(|e| build(e.to_string())),
            None => Ok(client),
        }
    };
    match (protocol, credentials) {
        (Protocol::Dcsa22, Credentials::Auth(auth)) => {
            let (base, path) = dcsa_base()?;
            let client = DcsaClient::new(scac, base.clone(), DcsaAuth::Authenticator(auth))
                .map_err(|e| build(e.to_string()))?;
            let client = match &path {
                Some(path) => client
                    .at_path(&base, path)
                    .map_err(|e| build(e.to_string()))?,
                None => client,
            };
            Ok(Arc::new(client))
        }
        (Protocol::Dcsa30, Credentials::Auth(auth)) => Ok(Arc::new(dcsa3(auth, Dialect::V3_0_0)?)),
        (Protocol::Dcsa30Beta1, Credentials::Auth(auth)) => {
            Ok(Arc::new(dcsa3(auth, Dialect::Beta1)?))
        }
        (Protocol::Hmm, Credentials::Auth(auth)) => Ok(Arc::new(
            HmmClient::new(scac, &base_url, events_path.as_deref(), auth)
                .map_err(|e| build(e.to_string()))?,
        )),
        (Protocol::Cosco, Credentials::Cosco(keys)) => Ok(Arc::new(
            CoscoClient::new(scac, base_url, keys, clock).map_err(|e| build(e.to_string()))?,
        )),
        (Protocol::None | Protocol::Edi, _) => Err(ConnectorError::Unsupported(format!(
            "{scac} has no public tracking API"
        ))),
        (protocol, _) => Err(ConnectorError::Unsupported(format!(
            "{scac}: these credentials do not fit protocol {}",
            protocol.as_str()
        ))),
    }
}

/// A line without a public tracking API: every request for it fails at once.
#[derive(Debug)]
pub struct NoApi {
    scac: String,
    reason: String,
}

impl NoApi {
    pub fn new(scac: &str, name: &str) -> Self {
        Self {
            scac: scac.to_owned(),
            reason: format!(
                "{name} ({scac}) has no public tracking API; Tidemark cannot track it \
                 (EDI or an aggregator are the only sources)"
            ),
        }
    }
}

#[async_trait]
impl Carrier for NoApi {
    fn scac(&self) -> &str {
        &self.scac
    }

    fn unavailable_reason(&self) -> Option<&str> {
        Some(&self.reason)
    }

    async fn fetch(&self, _: &TrackingQuery) -> Result<CarrierSnapshot, CarrierError> {
        Err(CarrierError::Unavailable(self.reason.clone()))
    }
}

/// A line whose status arrives only as EDI: nothing to call. Its requests wait for the
/// feed, and the poll reads what the feed stored instead of asking anyone.
#[derive(Debug)]
pub struct EdiFeed {
    scac: String,
}

impl EdiFeed {
    pub fn new(scac: &str) -> Self {
        Self {
            scac: scac.to_owned(),
        }
    }
}

#[async_trait]
impl Carrier for EdiFeed {
    fn scac(&self) -> &str {
        &self.scac
    }

    fn fed_by_edi(&self) -> bool {
        true
    }

    /// Nothing is published to fetch: what the line said is in its stored EDI messages.
    async fn fetch(&self, _: &TrackingQuery) -> Result<CarrierSnapshot, CarrierError> {
        Ok(CarrierSnapshot::default())
    }
}

#[cfg(test)]
mod tests {
    use tidemark_domain::SystemClock;

    use super::*;

    fn base() -> Url {
        Url::parse("https://carrier.test/tnt").unwrap()
    }

    #[tokio::test]
    async fn a_line_without_an_api_says_why_and_never_calls_anyone() {
        let no_api = NoApi::new("MATS", "Matson");
        let query = TrackingQuery {
            reference_kind: crate::ReferenceKind::BillOfLading,
            reference: "MATS123".to_owned(),
            sandbox_epoch: None,
        };

        assert!(
            no_api
                .unavailable_reason()
                .unwrap()
                .contains("no public tracking API")
        );
        assert!(no_api.fetch(&query).await.is_err());
    }

    #[test]
    fn the_base_url_itself_and_plain_paths_are_events_paths_and_nothing_else() {
        for path in ["/", "/v2/events", "/operation/trackandtrace/v1/events"] {
            assert!(is_events_path(path), "{path}");
        }
        for path in [
            "",
            "v2/events",
            "/../x",
            "/x?y=1",
            "//",
            "/a/./b",
            "https://x/y",
        ] {
            assert!(!is_events_path(path), "{path}");
        }
    }

    #[test]
    fn events_at_the_base_url_itself_are_asked_under_its_parent_at_its_last_segment() {
        let base = Url::parse("https://apigw.zim.example/trackAndTrace-sandbox/v1/").unwrap();

        let (parent, path) = dcsa_endpoint(&base, Some(BASE_URL_ITSELF)).unwrap();

        assert_eq!(
            parent.as_str(),
            "https://apigw.zim.example/trackAndTrace-sandbox"
        );
        assert_eq!(path.as_deref(), Some("/v1"));
    }

    #[test]
    fn the_connector_follows_the_protocol() {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let keys = CoscoKeys {
            api_key: "a".to_owned(),
            secret_key: "s".to_owned(),
        };

        let dcsa = connector(
            "HLCU",
            Protocol::Dcsa22,
            Endpoint::at(base()),
            Credentials::Auth(Authenticator::none()),
            Arc::clone(&clock),
        );
        let cosco = connector(
            "COSU",
            Protocol::Cosco,
            Endpoint::at(base()),
            Credentials::Cosco(keys.clone()),
            Arc::clone(&clock),
        );
        let mismatched = connector(
            "HLCU",
            Protocol::Dcsa22,
            Endpoint::at(base()),
            Credentials::Cosco(keys),
            Arc::clone(&clock),
        );
        let none = connector(
            "WHLC",
            Protocol::None,
            Endpoint::at(base()),
            Credentials::Auth(Authenticator::none()),
            clock,
        );

        assert_eq!(dcsa.unwrap().scac(), "HLCU");
        assert_eq!(cosco.unwrap().scac(), "COSU");
        assert!(mismatched.is_err());
        assert!(none.is_err());
    }
}
