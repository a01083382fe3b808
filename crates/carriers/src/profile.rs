//! What Tidemark knows about each ocean line beyond its connection: the carrier profiles of
//! `profiles.toml` (protocol, default base URL, auth schemes, request types, rate budget,
//! paging, push), each fact with its source and confidence from `reference/carriers/
//! CARRIERS.md`. Operators then give credentials only (see the server's config).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// The reviewed profiles, embedded at build time and parsed once (unit-tested below).
const PROFILES: &str = include_str!("../profiles.toml");

/// A line's published limits on calls to its tracking API; `None` is unlimited (or
/// unpublished). Enforced across every worker process (`tidemark_domain::carriers::calls`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateBudget {
    pub per_minute: Option<u32>,
    pub per_day: Option<u32>,
}

/// How sure the reference is of a fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    High,
    Medium,
    Low,
    /// Nobody published it: Tidemark's working assumption (an absent value is unknown).
    Assumed,
}

/// One fact about a line: its value (absent when unknown), the reference's confidence and
/// where it comes from.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fact<T> {
    #[serde(default = "none")]
    pub value: Option<T>,
    pub confidence: Confidence,
    pub source: String,
}

fn none<T>() -> Option<T> {
    None
}

/// The protocol of a line's tracking API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
pub enum Protocol {
    #[serde(rename = "dcsa-2.2")]
    Dcsa22,
    /// DCSA T&T 3.0.0 (the redesigned query: `transportDocumentReference`, …).
    #[serde(rename = "dcsa-3.0")]
    Dcsa30,
    /// The 2023 Beta-1 of T&T 3.0 (`documentReference` + `documentTypeCodes`), which Maersk
    /// serves; answers are read as 3.0's.
    #[serde(rename = "dcsa-3.0-beta-1")]
    Dcsa30Beta1,
    /// COSCO's own COP API ([`crate::cosco`]).
    #[serde(rename = "cosco")]
    Cosco,
    /// HMM's own gateway ([`crate::hmm`]): booking and container together, its own answer
    /// shape.
    #[serde(rename = "hmm")]
    Hmm,
    /// No public tracking API; the line's status arrives as EDI (X12 315, IFTSTA) that the
    /// operator receives and hands to Tidemark (`/v2/edi_messages`, a folder, SFTP, email).
    /// Requests wait as `pending` until the first message names them.
    #[serde(rename = "edi")]
    Edi,
    /// No public tracking API and no feed: requests for the line fail at once as
    /// `data_unavailable`.
    #[serde(rename = "none")]
    None,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dcsa22 => "dcsa-2.2",
            Self::Dcsa30 => "dcsa-3.0",
            Self::Dcsa30Beta1 => "dcsa-3.0-beta-1",
            Self::Cosco => "cosco",
            Self::Hmm => "hmm",
            Self::Edi => "edi",
            Self::None => "none",
        }
    }

    /// Whether Tidemark calls the line's own API (not an EDI feed, not nothing).
    pub fn has_api(self) -> bool {
        !matches!(self, Self::Edi | Self::None)
    }
}

/// How a line pages long answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Paging {
    /// DCSA `Next-Page` headers or cursors.
    NextPageHeader,
    /// Only a `limit`; no way to the next page.
    LimitOnly,
    None,
}

/// A request header filled from a credential the operator gives.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CredentialHeader {
    /// The header's name, e.g. `X-IBM-Client-Id`.
    pub name: String,
    /// The credential key the operator sets, e.g. `client_id`.
    pub credential: String,
}

/// One way to authenticate to a line, naming the credential keys it needs.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum AuthScheme {
    /// Fixed headers, each from a credential.
    Headers { headers: Vec<CredentialHeader> },
    /// OAuth2 client credentials; the token goes in `token_header` (`Authorization: Bearer`
    /// by default), beside `headers`.
    #[serde(rename = "oauth2")]
    OAuth2 {
        /// The default token URL; absent when the line gives it at onboarding.
        #[serde(default)]
        token_url: Option<String>,
        #[serde(default)]
        scope: Option<String>,
        #[serde(default)]
        audience: Option<String>,
        /// The credential key of the client id.
        client_id: String,
        /// The credential key of the client secret.
        client_secret: String,
        #[serde(default)]
        token_header: Option<String>,
        #[serde(default)]
        headers: Vec<CredentialHeader>,
    },
    /// COSCO's HMAC-signed requests from an API key and a secret key.
    CoscoHmac { api_key: String, secret_key: String },
}

impl AuthScheme {
    /// `headers`, `oauth2` or `cosco-hmac`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Headers { .. } => "headers",
            Self::OAuth2 { .. } => "oauth2",
            Self::CoscoHmac { .. } => "cosco-hmac",
        }
    }

    /// The credential keys the operator must give for this scheme, in order.
    pub fn credential_keys(&self) -> Vec<&str> {
        let all: Vec<&str> = match self {
            Self::Headers { headers } => headers.iter().map(|h| h.credential.as_str()).collect(),
            Self::OAuth2 {
                client_id,
                client_secret,
                headers,
                ..
            } => [client_id.as_str(), client_secret.as_str()]
                .into_iter()
                .chain(headers.iter().map(|h| h.credential.as_str()))
                .collect(),
            Self::CoscoHmac {
                api_key,
                secret_key,
            } => vec![api_key.as_str(), secret_key.as_str()],
        };
        let mut keys = Vec::new();
        for key in all {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        keys
    }
}

/// An auth scheme with its source.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct AuthOption {
    #[serde(flatten)]
    pub scheme: AuthScheme,
    pub confidence: Confidence,
    pub source: String,
}

/// A line's API, as the reference describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct LineApi {
    pub protocol: Fact<Protocol>,
    pub base_url: Fact<String>,
    /// Where the events are under `base_url`, when the line does not use DCSA's path
    /// (`/v2/events`, `/v3/events`): CMA CGM's `/operation/trackandtrace/v1/events`, or
    /// `/` for the base URL itself (ZIM's).
    pub events_path: Option<Fact<String>>,
    /// `bill_of_lading`, `booking_number`, `container`.
    pub request_types: Fact<Vec<String>>,
    pub requests_per_minute: Fact<u32>,
    pub requests_per_day: Fact<u32>,
    pub paging: Fact<Paging>,
    pub can_push: Fact<bool>,
    /// The ways to authenticate, preferred first.
    pub auth: Vec<AuthOption>,
}

impl LineApi {
    pub fn protocol(&self) -> Protocol {
        self.protocol.value.unwrap_or(Protocol::None)
    }

    pub fn budget(&self) -> RateBudget {
        RateBudget {
            per_minute: self.requests_per_minute.value,
            per_day: self.requests_per_day.value,
        }
    }
}

/// One profile: a line with its API, or a brand served by its family's.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub scac: String,
    pub name: String,
    /// Other SCACs the line is known by here (PIL: `PCIU`).
    pub also: Vec<String>,
    pub kind: ProfileKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ProfileKind {
    Line(Box<LineApi>),
    /// Served by the API and credentials of the family's line.
    Brand {
        family: String,
        confidence: Confidence,
        source: String,
    },
}

impl Profile {
    /// The SCAC whose API and credentials serve this line: its own, or its family's.
    pub fn family(&self) -> &str {
        match &self.kind {
            ProfileKind::Line(_) => &self.scac,
            ProfileKind::Brand { family, .. } => family,
        }
    }
}

/// A line as written in `profiles.toml`, before checks.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: String,
    #[serde(default)]
    also: Vec<String>,
    #[serde(default)]
    family: Option<String>,
    #[serde(default)]
    confidence: Option<Confidence>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    protocol: Option<Fact<Protocol>>,
    #[serde(default)]
    base_url: Option<Fact<String>>,
    #[serde(default)]
    events_path: Option<Fact<String>>,
    #[serde(default)]
    request_types: Option<Fact<Vec<String>>>,
    #[serde(default)]
    requests_per_minute: Option<Fact<u32>>,
    #[serde(default)]
    requests_per_day: Option<Fact<u32>>,
    #[serde(default)]
    paging: Option<Fact<Paging>>,
    #[serde(default)]
    can_push: Option<Fact<bool>>,
    #[serde(default)]
    auth: Vec<AuthOption>,
}

/// Why `profiles.toml` is wrong (a test catches it before release).
#[derive(Debug, thiserror::Error)]
#[error("profiles.toml: {0}")]
pub struct ProfileError(String);

/// Every profile, by SCAC.
#[derive(Clone, Debug)]
pub struct Profiles {
    profiles: Vec<Profile>,
}

impl Profiles {
    /// The embedded profiles. Parsing them is checked by a unit test, so a failure here
    /// cannot ship; it still degrades to no profiles rather than panicking.
    pub fn embedded() -> &'static Self {
        static PARSED: OnceLock<Profiles> = OnceLock::new();
        PARSED.get_or_init(|| Self::parse(PROFILES).unwrap_or(Self { profiles: vec![] }))
    }

    pub fn parse(text: &str) -> Result<Self, ProfileError> {
        let raw: BTreeMap<String, RawProfile> =
            toml::from_str(text).map_err(|e| ProfileError(e.to_string()))?;
        let mut profiles = Vec::new();
        for (scac, raw) in raw {
            let missing = |field: &str| ProfileError(format!("{scac} has no {field}"));
            let kind = match raw.family {
                Some(family) => {
                    if raw.protocol.is_some()
                        || !raw.auth.is_empty()
                        || raw.base_url.is_some()
                        || raw.events_path.is_some()
                    {
                        return Err(ProfileError(format!(
                            "{scac} is a brand of {family}: it takes its family's API"
                        )));
                    }
                    ProfileKind::Brand {
                        family,
                        confidence: raw.confidence.ok_or_else(|| missing("confidence"))?,
                        source: raw.source.ok_or_else(|| missing("source"))?,
                    }
                }
                None => {
                    let line = LineApi {
                        protocol: raw.protocol.ok_or_else(|| missing("protocol"))?,
                        base_url: raw.base_url.ok_or_else(|| missing("base_url"))?,
                        events_path: raw.events_path,
                        request_types: raw.request_types.ok_or_else(|| missing("request_types"))?,
                        requests_per_minute: raw
                            .requests_per_minute
                            .ok_or_else(|| missing("requests_per_minute"))?,
                        requests_per_day: raw
                            .requests_per_day
                            .ok_or_else(|| missing("requests_per_day"))?,
                        paging: raw.paging.ok_or_else(|| missing("paging"))?,
                        can_push: raw.can_push.ok_or_else(|| missing("can_push"))?,
                        auth: raw.auth,
                    };
                    check_line(&scac, &line)?;
                    ProfileKind::Line(Box::new(line))
                }
            };
            profiles.push(Profile {
                scac,
                name: raw.name,
                also: raw.also,
                kind,
            });
        }
        let parsed = Self { profiles };
        for profile in &parsed.profiles {
            if let ProfileKind::Brand { family, .. } = &profile.kind
                && !matches!(
                    parsed.get(family).map(|p| &p.kind),
                    Some(ProfileKind::Line(_))
                )
            {
                return Err(ProfileError(format!(
                    "{}'s family {family} is not a line",
                    profile.scac
                )));
            }
        }
        Ok(parsed)
    }

    /// Every profile, sorted by SCAC.
    pub fn all(&self) -> &[Profile] {
        &self.profiles
    }

    /// The profile of a SCAC (or of one of its other SCACs), case-insensitive.
    pub fn get(&self, scac: &str) -> Option<&Profile> {
        let scac = scac.trim().to_ascii_uppercase();
        self.profiles
            .iter()
            .find(|p| p.scac == scac || p.also.contains(&scac))
    }

    /// The line whose API serves `scac`: its own profile's, or its family's.
    pub fn line_api(&self, scac: &str) -> Option<(&Profile, &LineApi)> {
        let profile = self.get(scac)?;
        let line = self.get(profile.family())?;
        match &line.kind {
            ProfileKind::Line(api) => Some((line, api)),
            ProfileKind::Brand { .. } => None,
        }
    }

    /// The brands (and other SCACs) served by the line `scac`, itself excluded.
    pub fn served_by(&self, scac: &str) -> Vec<&str> {
        let mut scacs = Vec::new();
        for profile in &self.profiles {
            if profile.family() == scac {
                if profile.scac != scac {
                    scacs.push(profile.scac.as_str());
                }
                scacs.extend(profile.also.iter().map(String::as_str));
            }
        }
        scacs
    }
}

fn check_line(scac: &str, line: &LineApi) -> Result<(), ProfileError> {
    let bad = |why: String| Err(ProfileError(format!("{scac}: {why}")));
    let protocol = line.protocol();
    if protocol.has_api() && line.auth.is_empty() {
        return bad("a line with an API needs at least one auth scheme".to_owned());
    }
    if let Some(url) = &line.base_url.value
        && url::Url::parse(url).is_err()
    {
        return bad(format!("base_url {url:?} is not a URL"));
    }
    if let Some(path) = line.events_path.as_ref().and_then(|p| p.value.as_ref())
        && !crate::connector::is_events_path(path)
    {
        return bad(format!(
            "events_path {path:?} must be plain segments starting with /, or / for the base \
             URL itself"
        ));
    }
    for kind in line.request_types.value.iter().flatten() {
        if !matches!(
            kind.as_str(),
            "bill_of_lading" | "booking_number" | "container"
        ) {
            return bad(format!("unknown request type {kind:?}"));
        }
    }
    for option in &line.auth {
        let cosco = matches!(option.scheme, AuthScheme::CoscoHmac { .. });
        if cosco != (protocol == Protocol::Cosco) {
            return bad("cosco-hmac goes with protocol cosco, and only there".to_owned());
        }
        for key in option.scheme.credential_keys() {
            if !is_credential_key(key) {
                return bad(format!("credential key {key:?} is not snake_case"));
            }
        }
    }
    // Facts without a value must say they are assumed: nothing unknown passes as known.
    let unknown_but_sure = [
        (
            "base_url",
            line.base_url.value.is_none(),
            line.base_url.confidence,
        ),
        (
            "requests_per_minute",
            line.requests_per_minute.value.is_none(),
            line.requests_per_minute.confidence,
        ),
        (
            "requests_per_day",
            line.requests_per_day.value.is_none(),
            line.requests_per_day.confidence,
        ),
        (
            "protocol",
            line.protocol.value.is_none(),
            line.protocol.confidence,
        ),
    ];
    for (field, absent, confidence) in unknown_but_sure {
        if absent && confidence != Confidence::Assumed {
            return bad(format!(
                "{field} has no value, so its confidence is \"assumed\""
            ));
        }
    }
    Ok(())
}

/// A credential key is a config key: lower-case letters, digits and `_`.
fn is_credential_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profiles() -> Profiles {
        Profiles::parse(PROFILES).expect("profiles.toml parses and passes its checks")
    }

    #[test]
    fn the_embedded_profiles_parse_and_cover_the_largest_lines() {
        let profiles = profiles();

        for scac in [
            "MAEU", "MSCU", "CMDU", "ANNU", "APLU", "COSU", "OOLU", "HLCU", "ONEY", "EGLV", "HDMU",
            "YMLU", "ZIMU", "WHLC", "PABV", "MATS", "SMLM",
        ] {
            assert!(profiles.get(scac).is_some(), "{scac} has a profile");
        }
        assert_eq!(Profiles::embedded().all().len(), profiles.all().len());
    }

    #[test]
    fn hapag_lloyd_takes_two_headers_from_client_id_and_client_secret() {
        let profiles = profiles();
        let (_, line) = profiles.line_api("hlcu").unwrap();

        assert_eq!(line.protocol(), Protocol::Dcsa22);
        assert_eq!(
            line.auth[0].scheme,
            AuthScheme::Headers {
                headers: vec![
                    CredentialHeader {
                        name: "X-IBM-Client-Id".to_owned(),
                        credential: "client_id".to_owned()
                    },
                    CredentialHeader {
                        name: "X-IBM-Client-Secret".to_owned(),
                        credential: "client_secret".to_owned()
                    },
                ]
            }
        );
        assert_eq!(
            line.budget(),
            RateBudget {
                per_minute: Some(10),
                per_day: Some(6000)
            }
        );
    }

    #[test]
    fn maersk_takes_a_consumer_key_header() {
        let profiles = profiles();
        let (_, line) = profiles.line_api("MAEU").unwrap();

        assert_eq!(line.auth[0].scheme.credential_keys(), ["consumer_key"]);
        assert!(
            matches!(&line.auth[0].scheme, AuthScheme::Headers { headers } if headers[0].name == "Consumer-Key")
        );
    }

    #[test]
    fn a_brand_is_served_by_its_familys_api() {
        let profiles = profiles();

        let (line, _) = profiles.line_api("ANNU").unwrap();

        assert_eq!(line.scac, "CMDU");
        assert!(profiles.served_by("CMDU").contains(&"ANNU"));
        assert_eq!(profiles.line_api("PCIU").unwrap().0.scac, "PABV");
    }

    #[test]
    fn lines_without_an_api_are_followed_by_edi() {
        let profiles = profiles();

        for scac in ["OOLU", "WHLC", "MATS", "PABV", "SMLM"] {
            assert_eq!(
                profiles.line_api(scac).unwrap().1.protocol(),
                Protocol::Edi,
                "{scac}"
            );
        }
    }

    #[test]
    fn an_unknown_value_marked_as_known_is_refused() {
        let text = r#"
[XXXX]
name = "X"
protocol = { value = "none", confidence = "low", source = "s" }
base_url = { confidence = "high", source = "s" }
request_types = { value = [], confidence = "low", source = "s" }
requests_per_minute = { confidence = "assumed", source = "s" }
requests_per_day = { confidence = "assumed", source = "s" }
paging = { value = "none", confidence = "low", source = "s" }
can_push = { value = false, confidence = "low", source = "s" }
"#;

        let error = Profiles::parse(text).unwrap_err();

        assert!(error.to_string().contains("base_url"), "{error}");
    }

    #[test]
    fn a_brand_of_an_unknown_family_is_refused() {
        let text =
            "[ANNU]\nname = \"ANL\"\nfamily = \"NOPE\"\nconfidence = \"low\"\nsource = \"s\"\n";

        assert!(Profiles::parse(text).is_err());
    }
}
