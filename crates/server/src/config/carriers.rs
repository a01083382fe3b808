//! `[carriers.SCAC]`: a real line's connection. For a line with a built-in profile
//! (`tidemark_carriers::profile`) operators give credentials only, under the keys the
//! profile names (`client_id`, `client_secret` for Hapag-Lloyd, `consumer_key` for Maersk,
//! …); every profile fact can be overridden per SCAC. A line without a profile is
//! connected with the generic form: `base_url` and `auth_header`/`auth_value` or the OAuth2
//! keys. Keys nothing takes, and missing credentials, stop start-up with the setting's name.

use std::collections::BTreeMap;
use std::fmt;

use figment::value::Value;
use tidemark_carriers::auth::ClientAuth;
use tidemark_carriers::profile::{AuthScheme, LineApi, Profile, Profiles, Protocol, RateBudget};
use url::Url;

use super::{ConfigError, invalid};

/// One carrier's settings as read: any keys, checked against its profile.
pub type RawCarrier = BTreeMap<String, Value>;

/// Keys every carrier takes, profile or not.
const COMMON_KEYS: &[&str] = &[
    "base_url",
    "events_path",
    "dcsa_version",
    "requests_per_minute",
    "requests_per_day",
    "notification_secret",
    "token_url",
    "scope",
    "audience",
    "auth_header",
    "auth_value",
    "client_id",
    "client_secret",
];

/// How Tidemark authenticates to a carrier's API.
#[derive(Clone, PartialEq, Eq)]
pub enum CarrierAuth {
    None,
    /// The generic form's one header (`auth_header` = `auth_value`).
    Header {
        name: String,
        value: String,
    },
    /// A profile's headers, each from a credential: `(header, value)`.
    Headers(Vec<(String, String)>),
    OAuth2 {
        token_url: Url,
        client_id: String,
        client_secret: String,
        scope: Option<String>,
        audience: Option<String>,
        /// How the client authenticates at the token endpoint (HTTP Basic for the generic
        /// form, the form body for profiles).
        client_auth: ClientAuth,
        /// Where the token goes (`None`: `Authorization: Bearer`).
        token_header: Option<String>,
        /// Headers sent beside the token, `(header, value)`.
        headers: Vec<(String, String)>,
    },
    /// COSCO's signed requests.
    CoscoHmac {
        api_key: String,
        secret_key: String,
    },
}

impl CarrierAuth {
    /// `none`, `header`, `headers`, `oauth2` or `cosco-hmac`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Header { .. } => "header",
            Self::Headers(_) => "headers",
            Self::OAuth2 { .. } => "oauth2",
            Self::CoscoHmac { .. } => "cosco-hmac",
        }
    }
}

impl fmt::Debug for CarrierAuth {
    // Credentials never reach the logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("None"),
            Self::Header { name, .. } => write!(f, "Header({name}: …)"),
            Self::Headers(headers) => {
                let names: Vec<&str> = headers.iter().map(|(name, _)| name.as_str()).collect();
                write!(f, "Headers({})", names.join(", "))
            }
            Self::OAuth2 { token_url, .. } => write!(f, "OAuth2({token_url})"),
            Self::CoscoHmac { .. } => f.write_str("CoscoHmac(…)"),
        }
    }
}

/// A real carrier's connection.
#[derive(Clone, PartialEq, Eq)]
pub struct CarrierConfig {
    pub scac: String,
    pub protocol: Protocol,
    /// The part of the API's URL before `/v2/events` (DCSA) or `/info/tracking` (COSCO).
    pub base_url: Url,
    /// Where the events are under `base_url` when not at DCSA's path: the operator's
    /// `events_path`, else the profile's (CMA CGM's `/operation/trackandtrace/v1/events`).
    pub events_path: Option<String>,
    pub auth: CarrierAuth,
    /// The shared secret of the carrier's event subscription, which signs its pushes.
    pub notification_secret: Option<String>,
    /// The carrier's limits on our calls, shared by every worker process (the profile's,
    /// or `requests_per_minute`, `requests_per_day`; absent is unlimited).
    pub budget: RateBudget,
    /// Other SCACs this connection serves: the profile's brands (ANL and APL for CMA CGM).
    pub serves: Vec<String>,
    /// Whether a built-in profile supplied the defaults.
    pub from_profile: bool,
}

impl fmt::Debug for CarrierConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CarrierConfig")
            .field("scac", &self.scac)
            .field("protocol", &self.protocol.as_str())
            .field("base_url", &self.base_url.as_str())
            .field("events_path", &self.events_path)
            .field("auth", &self.auth)
            .field(
                "notification_secret",
                &self.notification_secret.as_ref().map(|_| "…"),
            )
            .field("budget", &self.budget)
            .field("serves", &self.serves)
            .finish()
    }
}

/// A carrier's keys, read and checked one at a time; what is left at the end is unknown.
struct Keys<'a> {
    scac: &'a str,
    raw: RawCarrier,
}

impl Keys<'_> {
    fn setting(&self, key: &str) -> String {
        format!("carriers__{}__{key}", self.scac)
    }

    fn invalid(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        invalid(&self.setting(key), reason)
    }

    fn has(&self, key: &str) -> bool {
        self.raw.contains_key(key)
    }

    /// A key's text; numbers and booleans are read as written (environment values are
    /// plain text, and a numeric client id is still an id).
    fn text(&mut self, key: &str) -> Result<Option<String>, ConfigError> {
        let Some(value) = self.raw.remove(key) else {
            return Ok(None);
        };
        let text = match value {
            Value::String(_, text) => text,
            Value::Char(_, c) => c.to_string(),
            Value::Bool(_, b) => b.to_string(),
            Value::Num(_, n) => n
                .to_u128()
                .map(|n| n.to_string())
                .or_else(|| n.to_i128().map(|n| n.to_string()))
                .or_else(|| n.to_f64().map(|n| n.to_string()))
                .unwrap_or_default(),
            _ => return Err(self.invalid(key, "expected a text value")),
        };
        let text = text.trim().to_owned();
        if text.is_empty() {
            return Err(self.invalid(key, "is empty"));
        }
        Ok(Some(text))
    }

    fn number(&mut self, key: &str) -> Result<Option<u32>, ConfigError> {
        let Some(text) = self.text(key)? else {
            return Ok(None);
        };
        match text.parse::<u32>() {
            Ok(0) => Err(self.invalid(key, "must be at least 1 (leave it out for no limit)")),
            Ok(n) => Ok(Some(n)),
            Err(_) => Err(self.invalid(key, format!("{text:?} is not a whole number"))),
        }
    }

    fn url(&mut self, key: &str) -> Result<Option<Url>, ConfigError> {
        let Some(text) = self.text(key)? else {
            return Ok(None);
        };
        Url::parse(&text)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https") && url.has_host())
            .map(Some)
            .ok_or_else(|| self.invalid(key, "expected an http(s) URL"))
    }
}

/// Checks one `[carriers.SCAC]` table.
pub fn validate_carrier(scac: &str, raw: RawCarrier) -> Result<CarrierConfig, ConfigError> {
    let scac = scac.trim().to_uppercase();
    let profiles = Profiles::embedded();
    let mut keys = Keys { scac: &scac, raw };
    // Unknown keys first: a typo is named even when something else is missing too.
    let profile = profiles.get(&scac);
    let line = profiles.line_api(&scac);
    let credential_keys: Vec<&str> = line
        .iter()
        .flat_map(|(_, api)| api.auth.iter())
        .flat_map(|option| option.scheme.credential_keys())
        .collect();
    if let Some(key) = keys.raw.keys().find(|key| {
        !COMMON_KEYS.contains(&key.as_str()) && !credential_keys.contains(&key.as_str())
    }) {
        return Err(keys.invalid(key, format!("unknown setting `{key}` for {scac}")));
    }
    if let Some(profile) = profile
        && profile.family() != profile.scac
    {
        let family = profile.family();
        return Err(keys.invalid(
            keys.raw.keys().next().map_or("base_url", String::as_str),
            format!(
                "{} ({scac}) is served by {family}'s API and credentials: configure \
                 [carriers.{family}] instead",
                profile.name
            ),
        ));
    }
    if profile.is_none()
        && tidemark_geo::reference::ReferenceData::embedded()
            .shipping_line(&scac)
            .is_none()
    {
        return Err(keys.invalid("base_url", format!("{scac} is not a known shipping line")));
    }
    let notification_secret = keys.text("notification_secret")?;
    // An empty or short secret would let anyone sign pushes.
    if notification_secret
        .as_deref()
        .is_some_and(|secret| secret.len() < 16)
    {
        return Err(keys.invalid("notification_secret", "must be at least 16 characters"));
    }
    let budget_override = (
        keys.number("requests_per_minute")?,
        keys.number("requests_per_day")?,
    );
    let dcsa_version = keys.text("dcsa_version")?;
    let events_path = events_path(&mut keys)?;
    let generic = keys.has("auth_header") || keys.has("auth_value");
    let (protocol, base_url, profile_events_path, auth, budget, serves, from_profile) = match line {
        // A line without an API may still be reached through the generic form (a private
        // API or a gateway).
        Some((profile, api)) if api.protocol().has_api() || keys.has("base_url") => {
            // A private API of a line without a public one is taken as DCSA 2.2.
            let default_protocol = match api.protocol() {
                protocol if protocol.has_api() => protocol,
                _ => Protocol::Dcsa22,
            };
            let protocol = protocol_of(&mut keys, default_protocol, dcsa_version)?;
            let base_url = match keys.url("base_url")? {
                Some(url) => url,
                None => api
                    .base_url
                    .value
                    .as_deref()
                    .and_then(|u| Url::parse(u).ok())
                    .ok_or_else(|| {
                        keys.invalid(
                            "base_url",
                            format!(
                                "required: {}'s API address is not published ({}); it is given \
                                 when the line approves your access",
                                profile.name, api.base_url.source
                            ),
                        )
                    })?,
            };
            let auth = if generic || !api.protocol().has_api() {
                generic_auth(&mut keys)?
            } else {
                profile_auth(&mut keys, profile, api)?
            };
            let profile_budget = api.budget();
            let budget = RateBudget {
                per_minute: budget_override.0.or(profile_budget.per_minute),
                per_day: budget_override.1.or(profile_budget.per_day),
            };
            let serves = profiles
                .served_by(&profile.scac)
                .into_iter()
                .map(str::to_owned)
                .collect();
            let profile_path = api
                .events_path
                .as_ref()
                .and_then(|path| path.value.clone())
                // A path another protocol's default would be wrong for, so only the
                // profile's own protocol takes it.
                .filter(|_| protocol == api.protocol());
            (protocol, base_url, profile_path, auth, budget, serves, true)
        }
        Some((profile, _)) => {
            return Err(keys.invalid(
                "base_url",
                format!(
                    "{} has no public tracking API; it is followed through the EDI it sends \
                     (POST /v2/edi_messages, a folder or email) and its requests wait as \
                     pending until then (give base_url and auth_header/auth_value to use a \
                     private DCSA 2.2 API)",
                    profile.name
                ),
            ));
        }
        None => {
            let protocol = protocol_of(&mut keys, Protocol::Dcsa22, dcsa_version)?;
            let base_url = keys
                .url("base_url")?
                .ok_or_else(|| keys.invalid("base_url", "required for a line without a profile"))?;
            let auth = generic_auth(&mut keys)?;
            let budget = RateBudget {
                per_minute: budget_override.0,
                per_day: budget_override.1,
            };
            (protocol, base_url, None, auth, budget, Vec::new(), false)
        }
    };
    if let Some(key) = keys.raw.keys().next() {
        return Err(keys.invalid(
            key,
            format!(
                "`{key}` does not apply to {scac}'s {} authentication",
                auth.kind()
            ),
        ));
    }
    Ok(CarrierConfig {
        scac,
        protocol,
        base_url,
        events_path: events_path.or(profile_events_path),
        auth,
        notification_secret,
        budget,
        serves,
        from_profile,
    })
}

/// The protocol, with `dcsa_version` ("2.2" or "3.0") overriding a DCSA line's.
fn protocol_of(
    keys: &mut Keys<'_>,
    protocol: Protocol,
    dcsa_version: Option<String>,
) -> Result<Protocol, ConfigError> {
    let Some(version) = dcsa_version else {
        return Ok(protocol);
    };
    if !matches!(
        protocol,
        Protocol::Dcsa22 | Protocol::Dcsa30 | Protocol::Dcsa30Beta1
    ) {
        return Err(keys.invalid(
            "dcsa_version",
            format!("the line speaks {}, not DCSA", protocol.as_str()),
        ));
    }
    // `3.0` unquoted (TOML, or a variable read as TOML) arrives as the number 3.
    match tidemark_carriers::DcsaVersion::parse(&version) {
        Some(tidemark_carriers::DcsaVersion::V2_2) => Ok(Protocol::Dcsa22),
        Some(tidemark_carriers::DcsaVersion::V3_0) => Ok(Protocol::Dcsa30),
        Some(tidemark_carriers::DcsaVersion::V3_0Beta1) => Ok(Protocol::Dcsa30Beta1),
        None => Err(keys.invalid(
            "dcsa_version",
            format!("{version:?} is not \"2.2\", \"3.0\" or \"3.0-beta-1\""),
        )),
    }
}

/// `events_path`: a path of plain segments starting with `/`, such as
/// `/operation/trackandtrace/v1/events`, or `/` for the base URL itself (ZIM's).
fn events_path(keys: &mut Keys<'_>) -> Result<Option<String>, ConfigError> {
    let Some(path) = keys.text("events_path")? else {
        return Ok(None);
    };
    if tidemark_carriers::connector::is_events_path(&path) {
        Ok(Some(path))
    } else {
        Err(keys.invalid(
            "events_path",
            "expected a path such as /v2/events (plain segments, starting with /), or / for \
             the base URL itself",
        ))
    }
}

/// The generic form: `auth_header` with `auth_value`, or `token_url` with `client_id` and
/// `client_secret` (HTTP Basic at the token endpoint), or nothing.
fn generic_auth(keys: &mut Keys<'_>) -> Result<CarrierAuth, ConfigError> {
    let name = keys.text("auth_header")?;
    let value = keys.text("auth_value")?;
    let token_url = keys.url("token_url")?;
    Ok(match (name, value, token_url) {
        (Some(name), Some(value), None) => CarrierAuth::Header { name, value },
        (None, None, Some(token_url)) => CarrierAuth::OAuth2 {
            token_url,
            client_id: keys
                .text("client_id")?
                .ok_or_else(|| keys.invalid("client_id", "required with token_url"))?,
            client_secret: keys
                .text("client_secret")?
                .ok_or_else(|| keys.invalid("client_secret", "required with token_url"))?,
            scope: keys.text("scope")?,
            audience: keys.text("audience")?,
            client_auth: ClientAuth::Basic,
            token_header: None,
            headers: Vec::new(),
        },
        (None, None, None) => CarrierAuth::None,
        _ => {
            return Err(keys.invalid(
                "auth_header",
                "give auth_header with auth_value, or token_url with client_id and client_secret",
            ));
        }
    })
}

/// The profile's first auth scheme whose credentials are all given.
fn profile_auth(
    keys: &mut Keys<'_>,
    profile: &Profile,
    api: &LineApi,
) -> Result<CarrierAuth, ConfigError> {
    // The complete scheme that uses the most of what was given (Maersk's OAuth2 over its
    // Consumer-Key alone when both are there); the earlier on a tie.
    let complete = api.auth.iter().filter(|option| {
        option
            .scheme
            .credential_keys()
            .iter()
            .all(|key| keys.has(key))
    });
    let Some(option) = complete
        .rev()
        .max_by_key(|option| option.scheme.credential_keys().len())
    else {
        // Name the first missing key of the scheme the operator started on (or the first).
        let option = api
            .auth
            .iter()
            .find(|option| {
                option
                    .scheme
                    .credential_keys()
                    .iter()
                    .any(|key| keys.has(key))
            })
            .or_else(|| api.auth.first());
        let missing = option
            .map(|option| option.scheme.credential_keys())
            .and_then(|needed| needed.into_iter().find(|key| !keys.has(key)))
            .unwrap_or("base_url");
        let ways: Vec<String> = api
            .auth
            .iter()
            .map(|option| option.scheme.credential_keys().join(" and "))
            .collect();
        return Err(keys.invalid(
            missing,
            format!(
                "required: {} ({}) authenticates with {}",
                profile.name,
                profile.scac,
                ways.join(", or ")
            ),
        ));
    };
    let credential = |keys: &mut Keys<'_>, key: &str| -> Result<String, ConfigError> {
        keys.text(key)?.ok_or_else(|| keys.invalid(key, "required"))
    };
    Ok(match &option.scheme {
        AuthScheme::Headers { headers } => {
            let mut pairs = Vec::new();
            for header in headers {
                pairs.push((header.name.clone(), credential(keys, &header.credential)?));
            }
            CarrierAuth::Headers(pairs)
        }
        AuthScheme::OAuth2 {
            token_url,
            scope,
            audience,
            client_id,
            client_secret,
            token_header,
            headers,
        } => {
            let token_url = match keys.url("token_url")? {
                Some(url) => url,
                None => token_url
                    .as_deref()
                    .and_then(|url| Url::parse(url).ok())
                    .ok_or_else(|| {
                        keys.invalid(
                            "token_url",
                            format!(
                                "required: {}'s token URL is not published ({})",
                                profile.name, option.source
                            ),
                        )
                    })?,
            };
            let mut pairs = Vec::new();
            for header in headers {
                pairs.push((header.name.clone(), credential(keys, &header.credential)?));
            }
            CarrierAuth::OAuth2 {
                token_url,
                client_id: credential(keys, client_id)?,
                client_secret: credential(keys, client_secret)?,
                scope: keys.text("scope")?.or_else(|| scope.clone()),
                audience: keys.text("audience")?.or_else(|| audience.clone()),
                client_auth: ClientAuth::Form,
                token_header: token_header.clone(),
                headers: pairs,
            }
        }
        AuthScheme::CoscoHmac {
            api_key,
            secret_key,
        } => CarrierAuth::CoscoHmac {
            api_key: credential(keys, api_key)?,
            secret_key: credential(keys, secret_key)?,
        },
    })
}

#[cfg(test)]
mod tests {
    use figment::value::{Tag, Value};

    use super::*;

    fn zim(events_path: Option<&str>) -> Result<CarrierConfig, ConfigError> {
        let mut raw = RawCarrier::new();
        for (key, value) in [
            (
                "base_url",
                Some("https://apigw.zim.example/trackAndTrace/v1"),
            ),
            ("subscription_key", Some("key")),
            ("events_path", events_path),
        ] {
            if let Some(value) = value {
                raw.insert(
                    key.to_owned(),
                    Value::String(Tag::Default, value.to_owned()),
                );
            }
        }
        validate_carrier("ZIMU", raw)
    }

    #[test]
    fn zims_events_are_at_its_base_url_itself_by_its_profile() {
        let config = zim(None).unwrap();

        assert_eq!(config.events_path.as_deref(), Some("/"));
    }

    #[test]
    fn an_events_path_of_slash_names_the_base_url_itself() {
        let config = zim(Some("/")).unwrap();

        assert_eq!(config.events_path.as_deref(), Some("/"));
    }

    #[test]
    fn an_events_path_that_is_not_understood_stops_start_up_naming_it() {
        for path in ["//", "v2/events", "/a/../b", ""] {
            let error = zim(Some(path)).unwrap_err().to_string();

            assert!(
                error.to_lowercase().contains("events_path"),
                "{path:?}: {error}"
            );
        }
    }
}
