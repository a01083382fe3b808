//! What Tidemark knows about each terminal source, as data: the profiles of `profiles.toml`
//! (facilities, protocol, auth, base URL, token URL, batch size, budget, push, identifiers),
//! each fact with its source and confidence from `reference/terminals-edi/SOURCES.md`; and
//! the operator's [`Settings`] (credentials and overrides), which [`TerminalProfile::configure`]
//! lays over a profile. An overridden fact keeps its place in the profile with the
//! confidence [`Confidence::Configured`], so a report shows what is in force and who said so.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use url::Url;

pub use tidemark_carriers::profile::RateBudget;

/// The reviewed profiles, embedded at build time and parsed once (unit-tested below).
const PROFILES: &str = include_str!("../profiles.toml");

/// How sure the reference is of a fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    High,
    Medium,
    Low,
    /// Nobody published it: Tidemark's working assumption (an absent value is unknown).
    Assumed,
    /// The operator's setting, which replaced the profile's fact. Never in `profiles.toml`.
    Configured,
}

/// One fact about a terminal source: its value (absent when unknown), the reference's
/// confidence and where it comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

impl<T> Fact<T> {
    /// The operator's value, replacing the profile's.
    fn configured(value: T, key: &str) -> Self {
        Self {
            value: Some(value),
            confidence: Confidence::Configured,
            source: format!("the operator's setting `{key}`"),
        }
    }
}

/// Which adapter reads a source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// [`crate::port_of_virginia`].
    PortOfVirginia,
    /// [`crate::apm_terminals`].
    ApmTerminals,
    /// [`crate::port_houston`].
    PortHouston,
    /// [`crate::emodal`].
    EmodalSprintpass,
    /// [`crate::sandbox`].
    Sandbox,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PortOfVirginia => "port-of-virginia",
            Self::ApmTerminals => "apm-terminals",
            Self::PortHouston => "port-houston",
            Self::EmodalSprintpass => "emodal-sprintpass",
            Self::Sandbox => "sandbox",
        }
    }
}

/// What a lookup names a container by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Identifier {
    Container,
    BillOfLading,
}

/// A terminal a source reaches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Facility {
    /// The port's UN/LOCODE, e.g. `USORF`.
    pub locode: String,
    /// The terminal's SMDG code or the source's own code for it (APM's `facilityCode`,
    /// eModal's `port_cd`), when known.
    #[serde(default)]
    pub code: Option<String>,
    /// The CBP FIRMS code, when known.
    #[serde(default)]
    pub firms: Option<String>,
    /// The terminal's SMDG code, when `code` is the source's own (APM's LOCODE, Port
    /// Houston's) rather than SMDG's: what matches it to the terminal a carrier names.
    #[serde(default)]
    pub smdg: Option<String>,
    pub name: String,
    /// The IANA time zone its local times are in.
    #[serde(default)]
    pub time_zone: Option<String>,
}

/// How a source wants to be told who is asking; each names the credential keys it needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum AuthScheme {
    /// No credentials (the sandbox).
    None,
    /// The credential in a query parameter (`?key=…`).
    Query {
        parameter: String,
        credential: String,
    },
    /// The credential in a header (`X-API-Key: …`).
    Header { header: String, credential: String },
    /// OAuth2 client credentials at the profile's `token_url`; the token as a bearer token.
    #[serde(rename = "oauth2")]
    OAuth2 {
        client_id: String,
        client_secret: String,
    },
}

impl AuthScheme {
    /// `none`, `query`, `header` or `oauth2`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Query { .. } => "query",
            Self::Header { .. } => "header",
            Self::OAuth2 { .. } => "oauth2",
        }
    }

    /// The credential keys the operator must set.
    pub fn credential_keys(&self) -> Vec<&str> {
        match self {
            Self::None => vec![],
            Self::Query { credential, .. } | Self::Header { credential, .. } => {
                vec![credential.as_str()]
            }
            Self::OAuth2 {
                client_id,
                client_secret,
            } => vec![client_id.as_str(), client_secret.as_str()],
        }
    }
}

/// An auth scheme with its source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthOption {
    #[serde(flatten)]
    pub scheme: AuthScheme,
    pub confidence: Confidence,
    pub source: String,
}

/// One terminal source, as `profiles.toml` describes it (and, once configured, with the
/// operator's overrides in place).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TerminalProfile {
    /// The profile's id, such as `port_of_virginia` (the table's key).
    #[serde(skip_deserializing)]
    pub id: String,
    pub name: String,
    pub facilities: Fact<Vec<Facility>>,
    pub protocol: Fact<Protocol>,
    /// Absent for the sandbox, which calls no one.
    #[serde(default)]
    pub base_url: Option<Fact<String>>,
    /// For OAuth2 sources only.
    #[serde(default)]
    pub token_url: Option<Fact<String>>,
    pub batch_size: Fact<usize>,
    pub requests_per_minute: Fact<u32>,
    pub requests_per_day: Fact<u32>,
    pub can_push: Fact<bool>,
    pub identifiers: Fact<Vec<Identifier>>,
    pub currency_code: Fact<String>,
    pub auth: AuthOption,
}

impl TerminalProfile {
    /// The adapter that reads this source.
    pub fn protocol(&self) -> Option<Protocol> {
        self.protocol.value
    }

    /// The most containers one lookup may name. A profile always has one (checked at load).
    pub fn batch_size(&self) -> usize {
        self.batch_size.value.unwrap_or(1).max(1)
    }

    /// The rate budget in force; `None` parts are unlimited (or unpublished).
    pub fn budget(&self) -> RateBudget {
        RateBudget {
            per_minute: self.requests_per_minute.value,
            per_day: self.requests_per_day.value,
        }
    }

    /// Whether a lookup must name the container's bill of lading too.
    pub fn needs_bill_of_lading(&self) -> bool {
        self.identifiers
            .value
            .as_ref()
            .is_some_and(|ids| ids.contains(&Identifier::BillOfLading))
    }

    /// The currency of the source's fees (`USD` when the profile does not say).
    pub fn currency_code(&self) -> &str {
        self.currency_code.value.as_deref().unwrap_or("USD")
    }

    /// The profile with the operator's settings laid over it, checked: overrides replace
    /// their facts, the base URL and token URL must be known and be URLs, the credentials
    /// the auth scheme names must be given, and the time zone must exist.
    pub fn configure(&self, settings: &Settings) -> Result<Configured, ConfigError> {
        let error = |key: &str, reason: String| ConfigError::Invalid {
            profile: self.id.clone(),
            key: key.to_owned(),
            reason,
        };
        let mut profile = self.clone();
        if let Some(url) = &settings.base_url {
            profile.base_url = Some(Fact::configured(url.trim().to_owned(), "base_url"));
        }
        if let Some(url) = &settings.token_url {
            profile.token_url = Some(Fact::configured(url.trim().to_owned(), "token_url"));
        }
        if let Some(size) = settings.batch_size {
            if size == 0 {
                return Err(error("batch_size", "must be at least 1".to_owned()));
            }
            profile.batch_size = Fact::configured(size, "batch_size");
        }
        if let Some(n) = settings.requests_per_minute {
            profile.requests_per_minute = Fact::configured(n, "requests_per_minute");
        }
        if let Some(n) = settings.requests_per_day {
            profile.requests_per_day = Fact::configured(n, "requests_per_day");
        }
        let protocol = profile.protocol().ok_or_else(|| ConfigError::Missing {
            profile: self.id.clone(),
            key: "protocol".to_owned(),
        })?;
        let url_of = |fact: &Option<Fact<String>>, key: &str| -> Result<Url, ConfigError> {
            let text = fact
                .as_ref()
                .and_then(|fact| fact.value.as_deref())
                .ok_or_else(|| ConfigError::Missing {
                    profile: self.id.clone(),
                    key: key.to_owned(),
                })?;
            let url = Url::parse(text).map_err(|e| error(key, format!("{text:?}: {e}")))?;
            if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
                return Err(error(key, format!("{text:?} is not an http(s) URL")));
            }
            Ok(url)
        };
        let base_url = match protocol {
            Protocol::Sandbox => None,
            _ => Some(url_of(&profile.base_url, "base_url")?),
        };
        let token_url = match profile.auth.scheme {
            AuthScheme::OAuth2 { .. } => Some(url_of(&profile.token_url, "token_url")?),
            _ => None,
        };
        for key in profile.auth.scheme.credential_keys() {
            if settings.credential(key).is_none() {
                return Err(ConfigError::Missing {
                    profile: self.id.clone(),
                    key: key.to_owned(),
                });
            }
        }
        let facility_code = settings
            .facility_code
            .as_deref()
            .map(str::trim)
            .filter(|code| !code.is_empty())
            .map(str::to_owned);
        let time_zone = match &settings.time_zone {
            Some(name) => name
                .trim()
                .parse::<Tz>()
                .map_err(|_| error("time_zone", format!("{name:?} is not an IANA time zone")))?,
            None => profile.zone_of(facility_code.as_deref()),
        };
        // A facility code naming one of the profile's facilities (by its code or LOCODE:
        // APM's `USLAX`, Port Houston's `BCT`) narrows the source to that facility, so it is
        // asked only about the boxes bound for it (one APM app per facility).
        if let Some(code) = facility_code.as_deref() {
            let named: Vec<Facility> = profile
                .facilities
                .value
                .iter()
                .flatten()
                .filter(|f| {
                    f.code
                        .as_deref()
                        .is_some_and(|c| c.eq_ignore_ascii_case(code))
                        || f.locode.eq_ignore_ascii_case(code)
                })
                .cloned()
                .collect();
            if !named.is_empty() {
                profile.facilities = Fact::configured(named, "facility_code");
            }
        }
        Ok(Configured {
            profile,
            base_url,
            token_url,
            facility_code,
            time_zone,
            settings: settings.clone(),
        })
    }

    /// The zone of the facility named `code` (by its code or LOCODE), else the zone all the
    /// facilities share, else UTC.
    fn zone_of(&self, code: Option<&str>) -> Tz {
        let facilities = self.facilities.value.as_deref().unwrap_or_default();
        let zone = |facility: &Facility| {
            facility
                .time_zone
                .as_deref()
                .and_then(|name| name.parse::<Tz>().ok())
        };
        if let Some(code) = code {
            let named = facilities.iter().find(|f| {
                f.code
                    .as_deref()
                    .is_some_and(|c| c.eq_ignore_ascii_case(code))
                    || f.locode.eq_ignore_ascii_case(code)
            });
            if let Some(tz) = named.and_then(zone) {
                return tz;
            }
        }
        let mut zones = facilities.iter().map(zone);
        match zones.next() {
            Some(Some(first)) if zones.all(|z| z == Some(first)) => first,
            _ => Tz::UTC,
        }
    }
}

/// A profile with the operator's settings in force: what an adapter is built from.
#[derive(Clone, Debug)]
pub struct Configured {
    /// The profile, overridden facts marked [`Confidence::Configured`].
    pub profile: TerminalProfile,
    /// Where the adapter's paths go (`None` for the sandbox).
    pub base_url: Option<Url>,
    /// The OAuth2 token endpoint (OAuth2 sources only).
    pub token_url: Option<Url>,
    /// The facility the connector asks about (APM's `facilityCode`, eModal's `port_cd`).
    pub facility_code: Option<String>,
    /// The zone local times without an offset are read in.
    pub time_zone: Tz,
    /// The settings, for the credentials.
    pub settings: Settings,
}

/// What the operator gives for one terminal source: credentials, and overrides of the
/// profile's facts. Unset fields keep the profile's. `Debug` hides the secrets.
#[derive(Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub api_key: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub username: Option<String>,
    pub password: Option<String>,
    pub base_url: Option<String>,
    pub token_url: Option<String>,
    pub requests_per_minute: Option<u32>,
    pub requests_per_day: Option<u32>,
    pub batch_size: Option<usize>,
    /// The facility a connector asks about: APM Terminals' `facilityCode` (a UN/LOCODE,
    /// one connector per facility), eModal's `port_cd` (to start orchestrations) and Port
    /// Houston's `facility` (`BCT` or `BPT`; optional, both terminals are searched without).
    pub facility_code: Option<String>,
    /// The IANA zone of the terminal's local times, when the profile's facilities do not
    /// settle it.
    pub time_zone: Option<String>,
}

impl Settings {
    /// The credential named `key` (`api_key`, `client_id`, …), when given and not blank.
    pub fn credential(&self, key: &str) -> Option<&str> {
        let value = match key {
            "api_key" => &self.api_key,
            "client_id" => &self.client_id,
            "client_secret" => &self.client_secret,
            "username" => &self.username,
            "password" => &self.password,
            _ => return None,
        };
        value.as_deref().map(str::trim).filter(|v| !v.is_empty())
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secret = |value: &Option<String>| value.as_ref().map(|_| "[redacted]");
        f.debug_struct("Settings")
            .field("api_key", &secret(&self.api_key))
            .field("client_id", &self.client_id)
            .field("client_secret", &secret(&self.client_secret))
            .field("username", &self.username)
            .field("password", &secret(&self.password))
            .field("base_url", &self.base_url)
            .field("token_url", &self.token_url)
            .field("requests_per_minute", &self.requests_per_minute)
            .field("requests_per_day", &self.requests_per_day)
            .field("batch_size", &self.batch_size)
            .field("facility_code", &self.facility_code)
            .field("time_zone", &self.time_zone)
            .finish()
    }
}

/// Why a connector cannot be built: a configuration mistake, reported at start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("no terminal profile is called {0:?}")]
    UnknownProfile(String),
    #[error("terminal {profile}: set `{key}`")]
    Missing { profile: String, key: String },
    #[error("terminal {profile}: `{key}` {reason}")]
    Invalid {
        profile: String,
        key: String,
        reason: String,
    },
}

/// Why `profiles.toml` is wrong (a test catches it before release).
#[derive(Debug, thiserror::Error)]
#[error("profiles.toml: {0}")]
pub struct ProfileError(String);

/// Every terminal profile, by id.
#[derive(Clone, Debug)]
pub struct Profiles {
    profiles: Vec<TerminalProfile>,
}

impl Profiles {
    /// The embedded profiles. Parsing them is checked by a unit test, so a failure here
    /// cannot ship; it still degrades to no profiles rather than panicking.
    pub fn embedded() -> &'static Self {
        static PARSED: OnceLock<Profiles> = OnceLock::new();
        PARSED.get_or_init(|| Self::parse(PROFILES).unwrap_or(Self { profiles: vec![] }))
    }

    pub fn parse(text: &str) -> Result<Self, ProfileError> {
        let raw: BTreeMap<String, TerminalProfile> =
            toml::from_str(text).map_err(|e| ProfileError(e.to_string()))?;
        let mut profiles = Vec::new();
        for (id, mut profile) in raw {
            profile.id = id;
            check(&profile)?;
            profiles.push(profile);
        }
        Ok(Self { profiles })
    }

    /// Every profile, sorted by id.
    pub fn all(&self) -> &[TerminalProfile] {
        &self.profiles
    }

    /// The profile called `id`.
    pub fn get(&self, id: &str) -> Option<&TerminalProfile> {
        let id = id.trim();
        self.profiles.iter().find(|p| p.id == id)
    }
}

fn check(profile: &TerminalProfile) -> Result<(), ProfileError> {
    let bad = |why: String| Err(ProfileError(format!("{}: {why}", profile.id)));
    let Some(protocol) = profile.protocol() else {
        return bad("has no protocol".to_owned());
    };
    if profile.batch_size.value.is_none_or(|size| size == 0) {
        return bad("needs a batch_size of at least 1".to_owned());
    }
    if protocol != Protocol::Sandbox && profile.base_url.is_none() {
        return bad("needs a base_url fact (without a value when unknown)".to_owned());
    }
    let oauth2 = matches!(profile.auth.scheme, AuthScheme::OAuth2 { .. });
    if oauth2 != profile.token_url.is_some() {
        return bad("a token_url fact goes with oauth2 auth, and only there".to_owned());
    }
    for fact in [&profile.base_url, &profile.token_url]
        .into_iter()
        .flatten()
    {
        if let Some(url) = &fact.value
            && Url::parse(url).is_err()
        {
            return bad(format!("{url:?} is not a URL"));
        }
    }
    for facility in profile.facilities.value.iter().flatten() {
        if let Some(zone) = &facility.time_zone
            && zone.parse::<Tz>().is_err()
        {
            return bad(format!("{zone:?} is not an IANA time zone"));
        }
    }
    if profile
        .identifiers
        .value
        .as_ref()
        .is_none_or(|ids| !ids.contains(&Identifier::Container))
    {
        return bad("every lookup names the container: identifiers must hold container".to_owned());
    }
    // Facts without a value must say they are assumed: nothing unknown passes as known.
    let unknown_but_sure = [
        (
            "base_url",
            profile
                .base_url
                .as_ref()
                .map(|f| (f.value.is_none(), f.confidence)),
        ),
        (
            "token_url",
            profile
                .token_url
                .as_ref()
                .map(|f| (f.value.is_none(), f.confidence)),
        ),
        (
            "requests_per_minute",
            Some((
                profile.requests_per_minute.value.is_none(),
                profile.requests_per_minute.confidence,
            )),
        ),
        (
            "requests_per_day",
            Some((
                profile.requests_per_day.value.is_none(),
                profile.requests_per_day.confidence,
            )),
        ),
    ];
    for (field, fact) in unknown_but_sure {
        if let Some((true, confidence)) = fact
            && confidence != Confidence::Assumed
        {
            return bad(format!(
                "{field} has no value, so its confidence is \"assumed\""
            ));
        }
    }
    let facts = [
        profile.facilities.confidence,
        profile.protocol.confidence,
        profile.batch_size.confidence,
        profile.auth.confidence,
    ];
    if facts.contains(&Confidence::Configured) {
        return bad("\"configured\" is the operator's, not the profile's".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profiles() -> Profiles {
        Profiles::parse(PROFILES).expect("profiles.toml parses and passes its checks")
    }

    #[test]
    fn the_embedded_profiles_parse_and_cover_the_issue_s_five_sources() {
        let profiles = profiles();

        let ids: Vec<&str> = profiles.all().iter().map(|p| p.id.as_str()).collect();

        assert_eq!(
            ids,
            [
                "apm_terminals",
                "emodal",
                "port_houston",
                "port_of_virginia",
                "sandbox"
            ]
        );
        assert_eq!(Profiles::embedded().all().len(), 5);
    }

    #[test]
    fn port_of_virginia_needs_the_bill_of_lading_and_takes_100_a_call() {
        let profiles = profiles();
        let pov = profiles.get("port_of_virginia").unwrap();

        assert!(pov.needs_bill_of_lading());
        assert_eq!(pov.batch_size(), 100);
        assert_eq!(
            pov.auth.scheme,
            AuthScheme::Query {
                parameter: "key".to_owned(),
                credential: "api_key".to_owned()
            }
        );
    }

    #[test]
    fn overrides_replace_facts_and_say_they_are_the_operator_s() {
        let profiles = profiles();
        let houston = profiles.get("port_houston").unwrap();
        let settings = Settings {
            client_id: Some("me".to_owned()),
            client_secret: Some("s3cret".to_owned()),
            base_url: Some("https://api.houston.test/v1".to_owned()),
            batch_size: Some(10),
            requests_per_minute: Some(30),
            ..Settings::default()
        };

        let configured = houston.configure(&settings).unwrap();

        assert_eq!(configured.profile.batch_size(), 10);
        assert_eq!(
            configured.profile.batch_size.confidence,
            Confidence::Configured
        );
        assert_eq!(
            configured.profile.budget(),
            RateBudget {
                per_minute: Some(30),
                per_day: Some(20000)
            }
        );
        assert_eq!(
            configured.base_url.unwrap().as_str(),
            "https://api.houston.test/v1"
        );
        assert_eq!(configured.time_zone, chrono_tz::America::Chicago);
    }

    #[test]
    fn an_unknown_base_url_must_be_set_by_the_operator() {
        let profiles = profiles();
        let houston = profiles.get("port_houston").unwrap();
        let settings = Settings {
            client_id: Some("me".to_owned()),
            client_secret: Some("s3cret".to_owned()),
            ..Settings::default()
        };

        let error = houston.configure(&settings).unwrap_err();

        assert_eq!(
            error,
            ConfigError::Missing {
                profile: "port_houston".to_owned(),
                key: "base_url".to_owned()
            }
        );
    }

    #[test]
    fn missing_credentials_are_named() {
        let profiles = profiles();
        let emodal = profiles.get("emodal").unwrap();
        let settings = Settings {
            base_url: Some("https://emodal.test".to_owned()),
            ..Settings::default()
        };

        let error = emodal.configure(&settings).unwrap_err();

        assert!(error.to_string().contains("api_key"), "{error}");
    }

    #[test]
    fn apm_s_time_zone_follows_the_facility() {
        let profiles = profiles();
        let apm = profiles.get("apm_terminals").unwrap();
        let settings = |facility: Option<&str>| Settings {
            client_id: Some("me".to_owned()),
            client_secret: Some("s3cret".to_owned()),
            token_url: Some("https://auth.apm.test/token".to_owned()),
            facility_code: facility.map(str::to_owned),
            ..Settings::default()
        };

        let la = apm.configure(&settings(Some("uslax"))).unwrap();
        let unnamed = apm.configure(&settings(None)).unwrap();

        assert_eq!(la.time_zone, chrono_tz::America::Los_Angeles);
        assert_eq!(unnamed.time_zone, Tz::UTC);
    }

    #[test]
    fn a_facility_code_narrows_the_source_to_that_facility() {
        let profiles = profiles();
        let apm = profiles.get("apm_terminals").unwrap();
        let settings = |facility: Option<&str>| Settings {
            client_id: Some("me".to_owned()),
            client_secret: Some("s3cret".to_owned()),
            token_url: Some("https://auth.apm.test/token".to_owned()),
            facility_code: facility.map(str::to_owned),
            ..Settings::default()
        };
        let ports = |facility: Option<&str>| -> Vec<String> {
            let configured = apm.configure(&settings(facility)).unwrap();
            let facilities = configured.profile.facilities.value.unwrap_or_default();
            facilities.into_iter().map(|f| f.locode).collect()
        };

        assert_eq!(ports(Some("usnwk")), ["USNYC"]);
        assert_eq!(ports(Some("USLAX")), ["USLAX"]);
        assert_eq!(ports(None).len(), 4);
        assert_eq!(
            ports(Some("XXXXX")).len(),
            4,
            "an unknown code narrows nothing"
        );
    }

    #[test]
    fn an_unknown_value_marked_as_known_is_refused() {
        let text = PROFILES.replace(
            "base_url = { confidence = \"assumed\", source = \"§A.2 #3",
            "base_url = { confidence = \"high\", source = \"§A.2 #3",
        );

        let error = Profiles::parse(&text).unwrap_err();

        assert!(error.to_string().contains("base_url"), "{error}");
    }

    #[test]
    fn settings_never_show_their_secrets() {
        let settings = Settings {
            api_key: Some("hunter2".to_owned()),
            client_secret: Some("s3cret".to_owned()),
            password: Some("pa55".to_owned()),
            ..Settings::default()
        };

        let text = format!("{settings:?}");

        assert!(
            !text.contains("hunter2") && !text.contains("s3cret") && !text.contains("pa55"),
            "{text}"
        );
    }
}
