//! `[edi]`: interchanges received by channels the server watches itself. Each
//! `[[edi.inbound]]` is a folder whose complete files are read as interchanges and filed
//! under `account` ([`crate::use_cases::edi::folder`]). Keys nothing takes stop start-up
//! with the setting's name, as the top level's do.
//!
//! A list of tables has no natural environment form: the environment gives it either whole
//! (`TIDEMARK_EDI__INBOUND='[{dir="/srv/edi/acme", account="acme"}]'`) or entry by entry,
//! numbered from 0 (`TIDEMARK_EDI__INBOUND__0__DIR=/srv/edi/acme`); either replaces the
//! file's list. Settings are named in that numbered form.

use std::collections::BTreeMap;
use std::path::PathBuf;

use figment::value::Value;
use serde::Deserialize;

use super::{ConfigError, invalid};

/// `[edi]` as read, before validation.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct RawEdi {
    /// Read by hand ([`inbound_entries`]), so each entry's settings are named with its
    /// number.
    inbound: Option<Value>,
    /// Refused by name, as the top level's.
    #[serde(flatten)]
    unknown: BTreeMap<String, serde::de::IgnoredAny>,
}

/// EDI channels (`[edi]`, `TIDEMARK_EDI__*`).
#[derive(Clone, Debug, Default)]
pub struct EdiConfig {
    /// Watched folders (`[[edi.inbound]]`), in the order configured.
    pub inbound: Vec<InboundFolder>,
}

/// A watched folder (`[[edi.inbound]]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InboundFolder {
    /// The folder whose files are taken; `processed/` and `rejected/` are made in it.
    pub dir: PathBuf,
    /// The account (by name) its interchanges are filed under; made if missing.
    pub account: String,
    /// Transactions naming nothing tracked start tracking requests of their own.
    pub create_shipments: bool,
}

impl RawEdi {
    pub(super) fn validate(self) -> Result<EdiConfig, ConfigError> {
        if let Some(key) = self.unknown.keys().next() {
            return Err(invalid(
                &format!("edi__{key}"),
                format!("unknown setting `edi.{key}`"),
            ));
        }
        let mut inbound: Vec<InboundFolder> = Vec::new();
        for (index, entry) in inbound_entries(self.inbound)? {
            let folder = inbound_folder(index, &entry)?;
            if let Some(first) = inbound.iter().position(|f| f.dir == folder.dir) {
                return Err(invalid(
                    &format!("edi__inbound__{index}__dir"),
                    format!(
                        "{} is already watched by edi.inbound entry {first}: two watchers \
                         would take the same files",
                        folder.dir.display()
                    ),
                ));
            }
            inbound.push(folder);
        }
        Ok(EdiConfig { inbound })
    }
}

/// The entries of `edi.inbound` with their numbers: a list (the file's `[[edi.inbound]]`,
/// or the whole list in one variable), or a table keyed by number (one variable per key).
fn inbound_entries(value: Option<Value>) -> Result<Vec<(usize, Value)>, ConfigError> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(_, entries)) => Ok(entries.into_iter().enumerate().collect()),
        Some(Value::Dict(_, entries)) => {
            let mut numbered = Vec::new();
            for (key, entry) in entries {
                let index = key.trim().parse::<usize>().map_err(|_| {
                    invalid(
                        &format!("edi__inbound__{key}"),
                        format!(
                            "expected a list of tables ([[edi.inbound]]), or entries numbered \
                             from 0; {key:?} is not a number"
                        ),
                    )
                })?;
                numbered.push((index, entry));
            }
            numbered.sort_by_key(|(index, _)| *index);
            Ok(numbered)
        }
        // An empty environment variable.
        Some(Value::String(_, text)) if text.trim().is_empty() => Ok(Vec::new()),
        Some(_) => Err(invalid(
            "edi__inbound",
            "expected a list of tables ([[edi.inbound]] with dir and account)",
        )),
    }
}

fn inbound_folder(index: usize, entry: &Value) -> Result<InboundFolder, ConfigError> {
    let name = |key: &str| format!("edi__inbound__{index}__{key}");
    let Value::Dict(_, dict) = entry else {
        return Err(invalid(
            &format!("edi__inbound__{index}"),
            "expected a table with dir and account",
        ));
    };
    if let Some(key) = dict
        .keys()
        .find(|key| !["dir", "account", "create_shipments"].contains(&key.as_str()))
    {
        return Err(invalid(
            &name(key),
            format!("unknown setting `{key}` of edi.inbound entry {index}"),
        ));
    }
    let text = |key: &str| -> Result<Option<String>, ConfigError> {
        match dict.get(key) {
            None => Ok(None),
            Some(Value::String(_, text)) => Ok(Some(text.trim().to_owned())),
            Some(_) => Err(invalid(&name(key), "expected text")),
        }
    };
    let dir = text("dir")?
        .filter(|dir| !dir.is_empty())
        .ok_or_else(|| invalid(&name("dir"), "required: the folder to watch"))?;
    if dir.contains('\0') {
        return Err(invalid(&name("dir"), "not a path"));
    }
    let account = text("account")?
        .filter(|account| !account.is_empty())
        .ok_or_else(|| {
            invalid(
                &name("account"),
                "required: the account (by name) the folder's interchanges are filed under",
            )
        })?;
    let create_shipments = match dict.get("create_shipments") {
        None => false,
        Some(value) => value
            .to_bool_lossy()
            .ok_or_else(|| invalid(&name("create_shipments"), "expected true or false"))?,
    };
    Ok(InboundFolder {
        dir: PathBuf::from(dir),
        account,
        create_shipments,
    })
}

#[cfg(test)]
mod tests {
    use figment::Figment;
    use figment::providers::{Format, Serialized, Toml};

    use crate::config::{Config, ConfigError, DEFAULTS};

    fn load(toml: &str) -> Result<Config, ConfigError> {
        Config::from_figment(&Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(toml)))
    }

    #[test]
    fn no_folder_is_watched_by_default() {
        assert!(Config::from_pairs(&[]).unwrap().edi.inbound.is_empty());
    }

    #[test]
    fn watched_folders_are_read_with_their_account_and_create_shipments_off_by_default() {
        let config = load(
            "[[edi.inbound]]\ndir = \"/srv/edi/acme\"\naccount = \"acme\"\n\
             [[edi.inbound]]\ndir = \"/srv/edi/globex\"\naccount = \"globex\"\n\
             create_shipments = true",
        )
        .unwrap();

        let inbound = &config.edi.inbound;
        assert_eq!(inbound.len(), 2);
        assert_eq!(inbound[0].dir, std::path::Path::new("/srv/edi/acme"));
        assert_eq!(inbound[0].account, "acme");
        assert!(!inbound[0].create_shipments);
        assert_eq!(inbound[1].account, "globex");
        assert!(inbound[1].create_shipments);
    }

    #[test]
    fn a_folder_without_its_dir_or_account_stops_start_up_naming_the_setting() {
        let no_dir = load("[[edi.inbound]]\naccount = \"acme\"").unwrap_err();
        let blank_dir = load("[[edi.inbound]]\ndir = \" \"\naccount = \"acme\"").unwrap_err();
        let no_account = load(
            "[[edi.inbound]]\ndir = \"/a\"\naccount = \"acme\"\n[[edi.inbound]]\ndir = \"/b\"",
        )
        .unwrap_err();

        assert_eq!(no_dir.setting, "TIDEMARK_EDI__INBOUND__0__DIR");
        assert_eq!(blank_dir.setting, "TIDEMARK_EDI__INBOUND__0__DIR");
        assert_eq!(no_account.setting, "TIDEMARK_EDI__INBOUND__1__ACCOUNT");
    }

    #[test]
    fn an_unknown_edi_setting_stops_start_up_naming_it() {
        let top = Config::from_pairs(&[("edi.outbound", "x")]).unwrap_err();
        let entry = load("[[edi.inbound]]\ndir = \"/a\"\naccount = \"acme\"\ndirectory = \"/b\"")
            .unwrap_err();

        assert_eq!(top.setting, "TIDEMARK_EDI__OUTBOUND");
        assert_eq!(entry.setting, "TIDEMARK_EDI__INBOUND__0__DIRECTORY");
        assert!(entry.reason.contains("directory"), "{}", entry.reason);
    }

    #[test]
    fn bad_values_stop_start_up_naming_the_setting() {
        let flag =
            load("[[edi.inbound]]\ndir = \"/a\"\naccount = \"a\"\ncreate_shipments = \"maybe\"")
                .unwrap_err();
        let twice = load(
            "[[edi.inbound]]\ndir = \"/a\"\naccount = \"a\"\n\
             [[edi.inbound]]\ndir = \"/a\"\naccount = \"b\"",
        )
        .unwrap_err();
        let not_a_list = load("[edi]\ninbound = \"/a\"").unwrap_err();

        assert_eq!(flag.setting, "TIDEMARK_EDI__INBOUND__0__CREATE_SHIPMENTS");
        assert_eq!(twice.setting, "TIDEMARK_EDI__INBOUND__1__DIR");
        assert_eq!(not_a_list.setting, "TIDEMARK_EDI__INBOUND");
    }

    #[test]
    fn the_environment_gives_folders_numbered_or_as_one_list() {
        // What `TIDEMARK_EDI__INBOUND__1__DIR=/b`, `…__1__ACCOUNT=globex`,
        // `…__0__DIR=/a`, `…__0__ACCOUNT=acme` and `…__0__CREATE_SHIPMENTS=true` become.
        let numbered = Figment::from(Toml::string(DEFAULTS))
            .merge(Serialized::global("edi.inbound.1.dir", "/b"))
            .merge(Serialized::global("edi.inbound.1.account", "globex"))
            .merge(Serialized::global("edi.inbound.0.dir", "/a"))
            .merge(Serialized::global("edi.inbound.0.account", "acme"))
            .merge(Serialized::global("edi.inbound.0.create_shipments", "true"));
        // What `TIDEMARK_EDI__INBOUND=[{dir="/a", account="acme"}]` becomes.
        let value: figment::value::Value = "[{dir=\"/a\", account=\"acme\"}]".parse().unwrap();
        let whole =
            Figment::from(Toml::string(DEFAULTS)).merge(Serialized::global("edi.inbound", value));

        let numbered = Config::from_figment(&numbered).unwrap().edi.inbound;
        let whole = Config::from_figment(&whole).unwrap().edi.inbound;

        assert_eq!(numbered.len(), 2);
        assert_eq!(numbered[0].account, "acme");
        assert!(numbered[0].create_shipments);
        assert_eq!(numbered[1].dir, std::path::Path::new("/b"));
        assert_eq!(whole.len(), 1);
        assert_eq!(whole[0].account, "acme");
    }

    #[test]
    fn a_numbered_variables_dir_and_account_are_plain_text_under_the_files_keys() {
        use figment::value::UncasedStr;

        let dir = UncasedStr::new("EDI__INBOUND__0__DIR");
        let account = UncasedStr::new("EDI__INBOUND__12__ACCOUNT");
        let flag = UncasedStr::new("EDI__INBOUND__0__CREATE_SHIPMENTS");

        assert_eq!(
            crate::config::environment_key(dir).as_str(),
            "edi.inbound.0.dir"
        );
        assert!(crate::config::is_text_key(dir));
        assert!(crate::config::is_text_key(account));
        assert!(!crate::config::is_text_key(flag));
    }

    #[test]
    fn a_folder_entry_that_is_not_numbered_names_itself() {
        let error = Config::from_figment(
            &Figment::from(Toml::string(DEFAULTS))
                .merge(Serialized::global("edi.inbound.first.dir", "/a")),
        )
        .unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_EDI__INBOUND__FIRST");
    }
}
