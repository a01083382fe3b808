//! `[terminals.<name>]`: a container terminal's connection, for the profiles of
//! `tidemark_terminals::profile` (`port_of_virginia`, `apm_terminals`, `port_houston`,
//! `emodal`; the `sandbox` is always there and takes no settings). Operators give the
//! credentials the profile names (`api_key`, or `client_id` and `client_secret`) and may
//! override its facts (`base_url`, `token_url`, `requests_per_minute`, `requests_per_day`,
//! `batch_size`, `facility_code`, `time_zone`). In the environment:
//! `TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__API_KEY`. A table is named after its profile, or
//! named freely with a `profile` key (`[terminals.apm_pier400]`, `profile =
//! "apm_terminals"`), so that one profile can be configured several times (two accounts,
//! or one APM app per facility); the name is the terminal's id. An unknown profile, a key
//! nothing takes and a missing credential stop start-up with the setting's name.

use std::collections::BTreeMap;

use figment::value::{Dict, Value};
use tidemark_terminals::profile::{
    AuthScheme, ConfigError as ProfileConfigError, Profiles, Protocol, Settings, TerminalProfile,
};

use super::{ConfigError, invalid};

/// One terminal's settings as read: any keys, checked against its profile.
pub type RawTerminal = BTreeMap<String, Value>;

/// The credential keys of [`Settings`].
const CREDENTIAL_KEYS: &[&str] = &[
    "api_key",
    "client_id",
    "client_secret",
    "username",
    "password",
];

/// The overrides of [`Settings`], which every profile but the sandbox takes (`token_url`
/// only with OAuth2).
const OVERRIDE_KEYS: &[&str] = &[
    "base_url",
    "token_url",
    "requests_per_minute",
    "requests_per_day",
    "batch_size",
    "facility_code",
    "time_zone",
];

/// A configured terminal source.
#[derive(Clone, Debug)]
pub struct TerminalConfig {
    /// The terminal's id: its table's name (`port_of_virginia`, `apm_pier400`), under which
    /// its calls, asks and state are kept.
    pub name: String,
    /// The profile's id, such as `port_of_virginia`: the table's name, or its `profile`.
    pub profile_id: String,
    /// The operator's settings (`Debug` hides the secrets), from which the connector is
    /// built.
    pub settings: Settings,
    /// The profile with the settings laid over it: overridden facts carry the confidence
    /// `configured`.
    pub profile: TerminalProfile,
}

/// A profile id as the operator may write it (`Port-Of-Virginia`), as the profiles name it.
pub fn normalize_id(id: &str) -> String {
    id.trim().to_lowercase().replace('-', "_")
}

/// The setting `key` of terminal `id`, as [`invalid`] takes it:
/// `terminals__port_of_virginia__api_key`, shown as `TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__API_KEY`.
pub fn setting(id: &str, key: &str) -> String {
    format!("terminals__{id}__{key}")
}

/// The variable an operator sets for `key` of terminal `id`.
pub fn variable(id: &str, key: &str) -> String {
    format!("TIDEMARK_{}", setting(id, key).to_uppercase())
}

/// The keys an operator must give to connect `profile` with nothing else set: its
/// credentials, then `base_url` and `token_url` where the profile does not know them.
pub fn required_keys(profile: &TerminalProfile) -> Vec<&str> {
    let mut keys = profile.auth.scheme.credential_keys();
    let unknown = |fact: &Option<tidemark_terminals::profile::Fact<String>>| {
        fact.as_ref().is_some_and(|fact| fact.value.is_none())
    };
    if unknown(&profile.base_url) {
        keys.push("base_url");
    }
    if unknown(&profile.token_url) {
        keys.push("token_url");
    }
    keys
}

/// Where to get `profile`'s credentials and addresses: its auth source, and the first
/// address its protocol's source names (the docs).
pub fn where_to_get(profile: &TerminalProfile) -> String {
    let docs = profile
        .protocol
        .source
        .split_whitespace()
        .find(|word| word.starts_with("https://"))
        .map(|url| url.trim_end_matches([',', ')', ';', ':', '.']));
    match docs {
        Some(docs) => format!("{} (docs: {docs})", profile.auth.source),
        None => profile.auth.source.clone(),
    }
}

/// The terminals' tables with their ids normalized (`[terminals.Port-Of-Virginia]` is
/// `port_of_virginia`), so the file and `TIDEMARK_TERMINALS__…` merge into one terminal.
pub(super) fn normalize_ids(dict: &mut Dict) -> Result<(), ConfigError> {
    if let Some(Value::Dict(tag, terminals)) = dict.remove("terminals") {
        let mut normalized = Dict::new();
        for (id, terminal) in terminals {
            let key = normalize_id(&id);
            if normalized.insert(key.clone(), terminal).is_some() {
                return Err(invalid(
                    &format!("terminals__{key}"),
                    "the terminal is configured twice",
                ));
            }
        }
        dict.insert("terminals".to_owned(), Value::Dict(tag, normalized));
    }
    Ok(())
}

/// Refuses two terminals of one profile with the same account (the same `api_key`, or
/// the same `client_id`): they would share its budget while each counted its own calls.
pub(super) fn refuse_shared_accounts(terminals: &[TerminalConfig]) -> Result<(), ConfigError> {
    for (at, terminal) in terminals.iter().enumerate() {
        let Some((key, value)) = account(terminal) else {
            continue;
        };
        if let Some(first) = terminals.iter().take(at).find(|other| {
            other.profile_id == terminal.profile_id && account(other) == Some((key, value))
        }) {
            return Err(invalid(
                &setting(&terminal.name, key),
                format!(
                    "the same account as terminal {}: two tables of one account would share \
                     its budget while each counted its own calls",
                    first.name
                ),
            ));
        }
    }
    Ok(())
}

/// The account a terminal's settings sign in as: its `api_key`, else its `client_id`.
fn account(terminal: &TerminalConfig) -> Option<(&'static str, &str)> {
    [
        ("api_key", &terminal.settings.api_key),
        ("client_id", &terminal.settings.client_id),
    ]
    .into_iter()
    .find_map(|(key, value)| Some((key, value.as_deref()?)))
}

/// A terminal's keys, read one at a time.
struct Keys<'a> {
    id: &'a str,
    raw: RawTerminal,
}

impl Keys<'_> {
    fn invalid(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        invalid(&setting(self.id, key), reason)
    }

    /// A key's text; numbers and booleans are read as written (environment values are
    /// plain text, and a numeric key is still a key).
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

    /// A whole number of at least 1.
    fn count<T: std::str::FromStr + PartialEq + Default>(
        &mut self,
        key: &str,
    ) -> Result<Option<T>, ConfigError> {
        let Some(text) = self.text(key)? else {
            return Ok(None);
        };
        match text.parse::<T>() {
            Ok(n) if n == T::default() => Err(self.invalid(key, "must be at least 1")),
            Ok(n) => Ok(Some(n)),
            Err(_) => Err(self.invalid(key, format!("{text:?} is not a whole number"))),
        }
    }
}

/// Checks one `[terminals.<name>]` table: named after its profile, or naming it with a
/// `profile` key.
pub fn validate_terminal(name: &str, raw: RawTerminal) -> Result<TerminalConfig, ConfigError> {
    let name = normalize_id(name);
    let profiles = Profiles::embedded();
    let mut keys = Keys { id: &name, raw };
    let named = keys.text("profile")?.map(|profile| normalize_id(&profile));
    let id = match named {
        // A table named after a profile that names another would mislead.
        Some(named) if named != name && profiles.get(&name).is_some() => {
            return Err(keys.invalid(
                "profile",
                format!(
                    "the table {name} is the {name} profile's; name another table to \
                     configure {named}"
                ),
            ));
        }
        Some(named) if named == "sandbox" => {
            return Err(keys.invalid(
                "profile",
                "the sandbox terminal is built in and takes no settings",
            ));
        }
        Some(named) => {
            if profiles.get(&named).is_none() {
                let known: Vec<&str> = profiles
                    .all()
                    .iter()
                    .map(|p| p.id.as_str())
                    .filter(|p| *p != "sandbox")
                    .collect();
                return Err(keys.invalid(
                    "profile",
                    format!(
                        "no terminal profile is called {named:?}; the terminals are {}",
                        known.join(", ")
                    ),
                ));
            }
            named
        }
        None => name.clone(),
    };
    let first_key = keys.raw.keys().next().cloned();
    let Some(profile) = profiles.get(&id) else {
        let known: Vec<&str> = profiles
            .all()
            .iter()
            .map(|p| p.id.as_str())
            .filter(|p| *p != "sandbox")
            .collect();
        let reason = format!(
            "no terminal profile is called {id:?}; the terminals are {}",
            known.join(", ")
        );
        return Err(match &first_key {
            Some(key) => keys.invalid(key, reason),
            None => invalid(&format!("terminals__{name}"), reason),
        });
    };
    // Unknown keys first: a typo is named even when something else is missing too.
    if let Some(key) = keys.raw.keys().find(|key| {
        !CREDENTIAL_KEYS.contains(&key.as_str()) && !OVERRIDE_KEYS.contains(&key.as_str())
    }) {
        return Err(keys.invalid(key, format!("unknown setting `{key}` for terminal {name}")));
    }
    if profile.protocol() == Some(Protocol::Sandbox) {
        let reason = "the sandbox terminal is built in and takes no settings";
        return Err(match &first_key {
            Some(key) => keys.invalid(key, reason),
            None => invalid(&format!("terminals__{name}"), reason),
        });
    }
    let needed = profile.auth.scheme.credential_keys();
    let oauth2 = matches!(profile.auth.scheme, AuthScheme::OAuth2 { .. });
    if let Some(key) = keys.raw.keys().find(|key| {
        (CREDENTIAL_KEYS.contains(&key.as_str()) && !needed.contains(&key.as_str()))
            || (key.as_str() == "token_url" && !oauth2)
    }) {
        return Err(keys.invalid(
            key,
            format!(
                "`{key}` does not apply to {}'s {} authentication, which takes {}",
                profile.name,
                profile.auth.scheme.kind(),
                if needed.is_empty() {
                    "nothing".to_owned()
                } else {
                    needed.join(" and ")
                }
            ),
        ));
    }
    let settings = Settings {
        api_key: keys.text("api_key")?,
        client_id: keys.text("client_id")?,
        client_secret: keys.text("client_secret")?,
        username: keys.text("username")?,
        password: keys.text("password")?,
        base_url: keys.text("base_url")?,
        token_url: keys.text("token_url")?,
        requests_per_minute: keys.count("requests_per_minute")?,
        requests_per_day: keys.count("requests_per_day")?,
        batch_size: keys.count("batch_size")?,
        facility_code: keys.text("facility_code")?,
        time_zone: keys.text("time_zone")?,
    };
    if let Some(missing) = needed.iter().find(|key| settings.credential(key).is_none()) {
        return Err(keys.invalid(
            missing,
            format!(
                "required: {} authenticates with {} ({}); {}",
                profile.name,
                needed.join(" and "),
                profile.auth.scheme.kind(),
                where_to_get(profile)
            ),
        ));
    }
    let configured = profile.configure(&settings).map_err(|error| match error {
        ProfileConfigError::Missing { key, .. } => {
            let source = match key.as_str() {
                "base_url" => profile.base_url.as_ref().map(|f| f.source.as_str()),
                "token_url" => profile.token_url.as_ref().map(|f| f.source.as_str()),
                _ => None,
            };
            keys.invalid(
                &key,
                format!(
                    "required: {}'s address is not published{}",
                    profile.name,
                    source.map_or_else(String::new, |s| format!(" ({s})"))
                ),
            )
        }
        ProfileConfigError::Invalid { key, reason, .. } => keys.invalid(&key, reason),
        ProfileConfigError::UnknownProfile(_) => keys.invalid("base_url", error.to_string()),
    })?;
    Ok(TerminalConfig {
        name,
        profile_id: id,
        settings,
        profile: configured.profile,
    })
}

#[cfg(test)]
mod tests {
    use figment::Figment;
    use figment::providers::{Format, Serialized, Toml};
    use figment::value::UncasedStr;
    use tidemark_terminals::profile::Confidence;

    use super::super::{Config, DEFAULTS, environment_key, is_text_key, upper_case_scacs};
    use super::*;

    fn config(toml: &str) -> Result<Config, ConfigError> {
        let figment = Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(toml));
        Config::from_figment(&figment)
    }

    #[test]
    fn a_terminal_is_configured_with_its_credential_and_overrides() {
        let config = config(
            "[terminals.port_of_virginia]\napi_key = \"hunter2\"\n\
             base_url = \"https://pov.example/api\"\nrequests_per_minute = 30\nbatch_size = 50",
        )
        .unwrap();

        assert_eq!(config.terminals.len(), 1);
        let pov = &config.terminals[0];
        assert_eq!(pov.profile_id, "port_of_virginia");
        assert_eq!(pov.settings.api_key.as_deref(), Some("hunter2"));
        assert_eq!(pov.profile.batch_size(), 50);
        assert_eq!(pov.profile.budget().per_minute, Some(30));
        let base_url = pov.profile.base_url.as_ref().unwrap();
        assert_eq!(base_url.value.as_deref(), Some("https://pov.example/api"));
        assert_eq!(base_url.confidence, Confidence::Configured);
        assert!(!format!("{config:?}").contains("hunter2"));
    }

    #[test]
    fn no_terminals_table_is_no_terminal() {
        assert!(config("").unwrap().terminals.is_empty());
    }

    #[test]
    fn a_misspelt_key_is_refused_with_its_name() {
        let error =
            config("[terminals.port_of_virginia]\napi_key = \"k\"\napi_ky = \"k\"").unwrap_err();

        assert_eq!(
            error.setting,
            "TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__API_KY"
        );
    }

    #[test]
    fn an_unknown_profile_is_refused_with_its_name_and_the_known_ones() {
        let error = config("[terminals.port_of_nowhere]\napi_key = \"k\"").unwrap_err();
        let empty = config("[terminals.nowhere]").unwrap_err();

        assert_eq!(
            error.setting,
            "TIDEMARK_TERMINALS__PORT_OF_NOWHERE__API_KEY"
        );
        assert!(
            error.reason.contains("port_of_virginia"),
            "{}",
            error.reason
        );
        assert_eq!(empty.setting, "TIDEMARK_TERMINALS__NOWHERE");
    }

    #[test]
    fn a_missing_credential_is_named_with_where_to_get_it() {
        let nothing = config("[terminals.port_of_virginia]\nbatch_size = 10").unwrap_err();
        let half = config(
            "[terminals.apm_terminals]\nclient_id = \"me\"\n\
             token_url = \"https://auth.apm.example/token\"",
        )
        .unwrap_err();

        assert_eq!(
            nothing.setting,
            "TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__API_KEY"
        );
        assert!(
            nothing
                .reason
                .contains("API key as the `key` query parameter"),
            "{}",
            nothing.reason
        );
        assert!(
            nothing
                .reason
                .contains("https://subscriptions.portofvirginia.com/Docs/ImportAvailability"),
            "{}",
            nothing.reason
        );
        assert_eq!(
            half.setting,
            "TIDEMARK_TERMINALS__APM_TERMINALS__CLIENT_SECRET"
        );
        assert!(
            half.reason.contains("client_id and client_secret"),
            "{}",
            half.reason
        );
    }

    #[test]
    fn an_unpublished_address_must_be_given() {
        let houston = config("[terminals.port_houston]\nclient_id = \"me\"\nclient_secret = \"s\"")
            .unwrap_err();
        let apm = config("[terminals.apm_terminals]\nclient_id = \"me\"\nclient_secret = \"s\"")
            .unwrap_err();

        assert_eq!(
            houston.setting,
            "TIDEMARK_TERMINALS__PORT_HOUSTON__BASE_URL"
        );
        assert!(
            houston.reason.contains("downloadable PDF"),
            "{}",
            houston.reason
        );
        assert_eq!(apm.setting, "TIDEMARK_TERMINALS__APM_TERMINALS__TOKEN_URL");
    }

    #[test]
    fn keys_the_profile_does_not_take_are_named() {
        let client_id = config("[terminals.port_of_virginia]\napi_key = \"k\"\nclient_id = \"me\"")
            .unwrap_err();
        let token_url = config(
            "[terminals.emodal]\napi_key = \"k\"\nbase_url = \"https://e.example\"\n\
             token_url = \"https://e.example/token\"",
        )
        .unwrap_err();
        let sandbox = config("[terminals.sandbox]\nbatch_size = 5").unwrap_err();

        assert_eq!(
            client_id.setting,
            "TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__CLIENT_ID"
        );
        assert!(
            client_id.reason.contains("takes api_key"),
            "{}",
            client_id.reason
        );
        assert_eq!(token_url.setting, "TIDEMARK_TERMINALS__EMODAL__TOKEN_URL");
        assert_eq!(sandbox.setting, "TIDEMARK_TERMINALS__SANDBOX__BATCH_SIZE");
    }

    #[test]
    fn bad_values_name_their_setting() {
        let zero =
            config("[terminals.port_of_virginia]\napi_key = \"k\"\nbatch_size = 0").unwrap_err();
        let zone = config(
            "[terminals.port_of_virginia]\napi_key = \"k\"\ntime_zone = \"America/Norfolk\"",
        )
        .unwrap_err();
        let url = config("[terminals.port_of_virginia]\napi_key = \"k\"\nbase_url = \"pov\"")
            .unwrap_err();

        assert_eq!(
            zero.setting,
            "TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__BATCH_SIZE"
        );
        assert_eq!(
            zone.setting,
            "TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__TIME_ZONE"
        );
        assert_eq!(
            url.setting,
            "TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__BASE_URL"
        );
    }

    #[test]
    fn a_table_naming_its_profile_is_another_terminal_of_that_profile() {
        let config = config(
            "[terminals.apm_pier400]\nprofile = \"apm_terminals\"\nclient_id = \"a\"\n\
             client_secret = \"s\"\ntoken_url = \"https://auth.apm.example/token\"\n\
             facility_code = \"USLAX\"\n\
             [terminals.APM-Elizabeth]\nprofile = \"APM-Terminals\"\nclient_id = \"b\"\n\
             client_secret = \"s\"\ntoken_url = \"https://auth.apm.example/token\"\n\
             facility_code = \"USNWK\"\n\
             [terminals.port_of_virginia]\napi_key = \"k\"",
        )
        .unwrap();

        let terminals: Vec<(&str, &str)> = config
            .terminals
            .iter()
            .map(|t| (t.name.as_str(), t.profile_id.as_str()))
            .collect();
        assert_eq!(
            terminals,
            [
                ("apm_elizabeth", "apm_terminals"),
                ("apm_pier400", "apm_terminals"),
                ("port_of_virginia", "port_of_virginia"),
            ]
        );
        assert_eq!(
            config.terminals[0].settings.facility_code.as_deref(),
            Some("USNWK")
        );
    }

    #[test]
    fn the_environment_names_a_tables_profile_as_the_file_does() {
        let figment = Figment::from(Toml::string(DEFAULTS))
            .merge(Serialized::global(
                "terminals.pov_north.profile",
                "port_of_virginia",
            ))
            .merge(Serialized::global("terminals.pov_north.api_key", "0123"));

        let config = Config::from_figment(&figment).unwrap();

        assert_eq!(config.terminals.len(), 1);
        assert_eq!(config.terminals[0].name, "pov_north");
        assert_eq!(config.terminals[0].profile_id, "port_of_virginia");
    }

    #[test]
    fn a_named_tables_unknown_profile_or_misspelt_key_is_named_under_its_name() {
        let profile =
            config("[terminals.apm_pier400]\nprofile = \"apm_terminal\"\nclient_id = \"a\"")
                .unwrap_err();
        let key = config("[terminals.apm_pier400]\nprofile = \"apm_terminals\"\nclinet_id = \"a\"")
            .unwrap_err();
        let sandbox = config("[terminals.demo]\nprofile = \"sandbox\"").unwrap_err();

        assert_eq!(profile.setting, "TIDEMARK_TERMINALS__APM_PIER400__PROFILE");
        assert!(
            profile.reason.contains("apm_terminals"),
            "{}",
            profile.reason
        );
        assert_eq!(key.setting, "TIDEMARK_TERMINALS__APM_PIER400__CLINET_ID");
        assert_eq!(sandbox.setting, "TIDEMARK_TERMINALS__DEMO__PROFILE");
    }

    #[test]
    fn a_table_named_after_a_profile_cannot_name_another() {
        let error = config(
            "[terminals.port_houston]\nprofile = \"apm_terminals\"\nclient_id = \"a\"\n\
             client_secret = \"s\"",
        )
        .unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_TERMINALS__PORT_HOUSTON__PROFILE");
    }

    #[test]
    fn two_tables_of_one_account_are_refused() {
        let error = config(
            "[terminals.port_of_virginia]\napi_key = \"k\"\n\
             [terminals.pov_north]\nprofile = \"port_of_virginia\"\napi_key = \"k\"",
        )
        .unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_TERMINALS__POV_NORTH__API_KEY");
        assert!(
            error.reason.contains("port_of_virginia"),
            "{}",
            error.reason
        );
    }

    #[test]
    fn an_environment_variable_names_a_terminal_key_as_the_file_does() {
        let name = UncasedStr::new("TERMINALS__PORT_OF_VIRGINIA__API_KEY");

        assert_eq!(
            environment_key(name).as_str(),
            "terminals.port_of_virginia.api_key"
        );
        assert!(is_text_key(name), "a key such as 0123 stays text");
    }

    #[test]
    fn the_environment_completes_a_terminal_of_the_file_whatever_the_case_of_its_id() {
        let file = upper_case_scacs(Toml::string(
            "[terminals.Port-Of-Virginia]\nbase_url = \"https://file.example\"",
        ))
        .unwrap();
        // What `TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__API_KEY=0123` and `…__BATCH_SIZE=25`
        // become: plain text.
        let environment = [
            Serialized::global("terminals.port_of_virginia.api_key", "0123"),
            Serialized::global("terminals.port_of_virginia.batch_size", "25"),
        ];
        let mut figment = Figment::from(Toml::string(DEFAULTS)).merge(file);
        for variable in environment {
            figment = figment.merge(variable);
        }

        let config = Config::from_figment(&figment).unwrap();

        assert_eq!(config.terminals.len(), 1);
        let pov = &config.terminals[0];
        assert_eq!(pov.settings.api_key.as_deref(), Some("0123"));
        assert_eq!(
            pov.settings.base_url.as_deref(),
            Some("https://file.example")
        );
        assert_eq!(pov.profile.batch_size(), 25);
    }
}
