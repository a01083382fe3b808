//! `[edi]`: interchanges received by channels the server watches itself, and how they are
//! read. Each `[[edi.inbound]]` is a folder whose complete files are read as interchanges
//! and filed under `account` ([`crate::use_cases::edi::folder`]). Each
//! `[[edi.code_tables]]` gives one interchange sender (`sender`, ISA06 / UNB sender id) its
//! own status codes from a file (`file`) in the format of `status_codes.toml`, looked up
//! before the shared table for that sender; the files are read and checked here, at
//! start-up. Keys nothing takes stop start-up with the setting's name, as the top level's
//! do.
//!
//! A list of tables has no natural environment form: the environment gives it either whole
//! (`TIDEMARK_EDI__INBOUND='[{dir="/srv/edi/acme", account="acme"}]'`) or entry by entry,
//! numbered from 0 (`TIDEMARK_EDI__INBOUND__0__DIR=/srv/edi/acme`); either replaces the
//! file's list. Settings are named in that numbered form.

use std::collections::BTreeMap;
use std::path::PathBuf;

use figment::value::Value;
use serde::Deserialize;
use tidemark_edi::{CodeTable, Reader};

use super::{ConfigError, invalid};

/// `[edi]` as read, before validation.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct RawEdi {
    /// Read by hand ([`entries`]), so each entry's settings are named with its number.
    inbound: Option<Value>,
    /// Read by hand, as `inbound`.
    code_tables: Option<Value>,
    /// Read by hand, as `inbound` ([`super::sftp`]).
    sftp: Option<Value>,
    /// Refused by name, as the top level's.
    #[serde(flatten)]
    unknown: BTreeMap<String, serde::de::IgnoredAny>,
}

/// EDI channels (`[edi]`, `TIDEMARK_EDI__*`).
#[derive(Clone, Debug, Default)]
pub struct EdiConfig {
    /// Watched folders (`[[edi.inbound]]`), in the order configured.
    pub inbound: Vec<InboundFolder>,
    /// Senders' own code tables (`[[edi.code_tables]]`), read and checked at start-up.
    pub code_tables: Vec<SenderCodeTable>,
    /// Polled SFTP mailboxes (`[[edi.sftp]]`), in the order configured.
    pub sftp: Vec<super::sftp::SftpMailbox>,
}

/// One sender's own status codes (`[[edi.code_tables]]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SenderCodeTable {
    /// The interchange sender (ISA06 / UNB sender id), trimmed.
    pub sender: String,
    /// The file the table was read from.
    pub file: PathBuf,
    pub table: CodeTable,
}

impl EdiConfig {
    /// The reader for received interchanges: the embedded code table, with each configured
    /// sender's table looked up first for that sender.
    pub fn reader(&self) -> Reader {
        let reader = Reader::new();
        if self.code_tables.is_empty() {
            return reader;
        }
        let codes = self
            .code_tables
            .iter()
            .fold(CodeTable::embedded().clone(), |codes, sender| {
                codes.with_sender(&sender.sender, sender.table.clone())
            });
        reader.with_codes(codes)
    }
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
        for (index, entry) in entries("inbound", self.inbound, "dir and account")? {
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
        let mut code_tables: Vec<SenderCodeTable> = Vec::new();
        for (index, entry) in entries("code_tables", self.code_tables, "sender and file")? {
            let table = sender_code_table(index, &entry)?;
            if let Some(first) = code_tables.iter().position(|t| t.sender == table.sender) {
                return Err(invalid(
                    &format!("edi__code_tables__{index}__sender"),
                    format!(
                        "sender {:?} already has a code table (edi.code_tables entry {first}): \
                         one table per sender",
                        table.sender
                    ),
                ));
            }
            code_tables.push(table);
        }
        let mut sftp: Vec<super::sftp::SftpMailbox> = Vec::new();
        for (index, entry) in entries(
            "sftp",
            self.sftp,
            "host, user, host_key, remote_dir and account",
        )? {
            let mailbox = super::sftp::mailbox(index, &entry)?;
            if let Some(first) = sftp.iter().position(|m| {
                m.host.eq_ignore_ascii_case(&mailbox.host)
                    && m.port == mailbox.port
                    && m.remote_dir == mailbox.remote_dir
            }) {
                return Err(invalid(
                    &format!("edi__sftp__{index}__remote_dir"),
                    format!(
                        "{} on {}:{} is already polled by edi.sftp entry {first}: two pollers \
                         would take the same files",
                        mailbox.remote_dir, mailbox.host, mailbox.port
                    ),
                ));
            }
            sftp.push(mailbox);
        }
        Ok(EdiConfig {
            inbound,
            code_tables,
            sftp,
        })
    }
}

/// The entries of `edi.<list>` with their numbers: a list (the file's `[[edi.<list>]]`, or
/// the whole list in one variable), or a table keyed by number (one variable per key).
pub(super) fn entries(
    list: &str,
    value: Option<Value>,
    keys: &str,
) -> Result<Vec<(usize, Value)>, ConfigError> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(_, entries)) => Ok(entries.into_iter().enumerate().collect()),
        Some(Value::Dict(_, entries)) => {
            let mut numbered = Vec::new();
            for (key, entry) in entries {
                let index = key.trim().parse::<usize>().map_err(|_| {
                    invalid(
                        &format!("edi__{list}__{key}"),
                        format!(
                            "expected a list of tables ([[edi.{list}]]), or entries numbered \
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
            &format!("edi__{list}"),
            format!("expected a list of tables ([[edi.{list}]] with {keys})"),
        )),
    }
}

/// A `[[edi.code_tables]]` entry: its sender, and its file read and checked.
fn sender_code_table(index: usize, entry: &Value) -> Result<SenderCodeTable, ConfigError> {
    let name = |key: &str| format!("edi__code_tables__{index}__{key}");
    let Value::Dict(_, dict) = entry else {
        return Err(invalid(
            &format!("edi__code_tables__{index}"),
            "expected a table with sender and file",
        ));
    };
    if let Some(key) = dict
        .keys()
        .find(|key| !["sender", "file"].contains(&key.as_str()))
    {
        return Err(invalid(
            &name(key),
            format!("unknown setting `{key}` of edi.code_tables entry {index}"),
        ));
    }
    // A sender id may look like a number (a DUNS): taken as written.
    let text = |key: &str| -> Result<Option<String>, ConfigError> {
        match dict.get(key) {
            None => Ok(None),
            Some(Value::String(_, text)) => Ok(Some(text.trim().to_owned())),
            Some(Value::Num(_, number)) if key == "sender" => Ok(number
                .to_u128()
                .map(|n| n.to_string())
                .or_else(|| number.to_i128().map(|n| n.to_string()))),
            Some(_) => Err(invalid(&name(key), "expected text")),
        }
    };
    let sender = text("sender")?
        .filter(|sender| !sender.is_empty())
        .ok_or_else(|| {
            invalid(
                &name("sender"),
                "required: the interchange sender (ISA06 / UNB sender id) the table is for",
            )
        })?;
    let file = text("file")?
        .filter(|file| !file.is_empty() && !file.contains('\0'))
        .ok_or_else(|| {
            invalid(
                &name("file"),
                "required: the path of the sender's code table (the format of status_codes.toml)",
            )
        })?;
    let file = PathBuf::from(file);
    let contents = std::fs::read_to_string(&file).map_err(|error| {
        invalid(
            &name("file"),
            format!("cannot read {}: {error}", file.display()),
        )
    })?;
    let table = CodeTable::parse(&contents).map_err(|error| {
        invalid(
            &name("file"),
            format!("{} is not a valid code table: {error}", file.display()),
        )
    })?;
    Ok(SenderCodeTable {
        sender,
        file,
        table,
    })
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

    /// A code table file for `P`, a rail departure, in a temporary folder.
    fn table_file(dir: &std::path::Path, name: &str, text: &str) -> String {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    const RAIL_DEPARTED: &str = "[[code]]\ncode = \"P\"\nmeaning = \"Rail departed\"\n\
                                 event = \"DEPA\"\nmode = \"RAIL\"\nsource = \"guide\"\n";

    #[test]
    fn a_senders_code_table_is_read_at_start_up_and_looked_up_first_for_that_sender() {
        let dir = tempfile::tempdir().unwrap();
        let file = table_file(dir.path(), "sender.toml", RAIL_DEPARTED);

        let config = load(&format!(
            "[[edi.code_tables]]\nsender = \" SENDER \"\nfile = {file:?}"
        ))
        .unwrap();

        let tables = &config.edi.code_tables;
        assert_eq!(tables.len(), 1);
        assert_eq!(tables[0].sender, "SENDER");
        assert_eq!(tables[0].file, std::path::Path::new(&file));
        let reader = config.edi.reader();
        let row = reader
            .codes()
            .lookup("SENDER", "P")
            .expect("the sender's row");
        assert_eq!(row.event, Some(tidemark_carriers::DcsaCode::Depa));
        // Another sender's `P` is the shared table's (element 157's out-gate), not this one.
        assert_ne!(
            reader
                .codes()
                .lookup("OTHER", "P")
                .map(|row| row.meaning.as_str()),
            Some("Rail departed")
        );
        assert!(reader.codes().lookup("OTHER", "VD").is_some());
    }

    #[test]
    fn no_sender_has_a_code_table_by_default() {
        let config = Config::from_pairs(&[]).unwrap();
        assert!(config.edi.code_tables.is_empty());
        // Every sender's codes are the shared table's.
        assert_eq!(
            config.edi.reader().codes().lookup("SENDER", "P"),
            tidemark_edi::CodeTable::embedded().get("P")
        );
    }

    #[test]
    fn a_code_table_that_cannot_be_read_or_parsed_stops_start_up_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.toml").display().to_string();
        let not_toml = table_file(dir.path(), "broken.toml", "[[code]\ncode = ");
        let bad_row = table_file(
            dir.path(),
            "bad.toml",
            "[[code]]\ncode = \"P\"\nmeaning = \"x\"\nsource = \"x\"\n",
        );
        let unknown_field = table_file(
            dir.path(),
            "unknown.toml",
            &format!("{RAIL_DEPARTED}colour = \"red\"\n"),
        );
        let good = table_file(dir.path(), "good.toml", RAIL_DEPARTED);

        let errors: Vec<ConfigError> = [&missing, &not_toml, &bad_row, &unknown_field]
            .iter()
            .map(|file| {
                load(&format!(
                    "[[edi.code_tables]]\nsender = \"A\"\nfile = {good:?}\n\
                     [[edi.code_tables]]\nsender = \"B\"\nfile = {file:?}"
                ))
                .unwrap_err()
            })
            .collect();

        for (error, file) in errors
            .iter()
            .zip([&missing, &not_toml, &bad_row, &unknown_field])
        {
            assert_eq!(error.setting, "TIDEMARK_EDI__CODE_TABLES__1__FILE");
            assert!(error.reason.contains(file.as_str()), "{}", error.reason);
        }
        assert!(
            errors[0].reason.contains("cannot read"),
            "{}",
            errors[0].reason
        );
        assert!(errors[2].reason.contains("\"P\""), "{}", errors[2].reason);
        assert!(errors[3].reason.contains("colour"), "{}", errors[3].reason);
    }

    #[test]
    fn a_code_table_entry_with_an_unknown_key_a_missing_key_or_a_sender_twice_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = table_file(dir.path(), "sender.toml", RAIL_DEPARTED);

        let unknown = load(&format!(
            "[[edi.code_tables]]\nsender = \"A\"\nfile = {file:?}\nagency = \"HS\""
        ))
        .unwrap_err();
        let no_sender = load(&format!("[[edi.code_tables]]\nfile = {file:?}")).unwrap_err();
        let no_file = load("[[edi.code_tables]]\nsender = \"A\"").unwrap_err();
        let twice = load(&format!(
            "[[edi.code_tables]]\nsender = \"A\"\nfile = {file:?}\n\
             [[edi.code_tables]]\nsender = \"A \"\nfile = {file:?}"
        ))
        .unwrap_err();
        let not_a_list = load("[edi]\ncode_tables = \"/a\"").unwrap_err();

        assert_eq!(unknown.setting, "TIDEMARK_EDI__CODE_TABLES__0__AGENCY");
        assert!(unknown.reason.contains("agency"), "{}", unknown.reason);
        assert_eq!(no_sender.setting, "TIDEMARK_EDI__CODE_TABLES__0__SENDER");
        assert_eq!(no_file.setting, "TIDEMARK_EDI__CODE_TABLES__0__FILE");
        assert_eq!(twice.setting, "TIDEMARK_EDI__CODE_TABLES__1__SENDER");
        assert!(twice.reason.contains("entry 0"), "{}", twice.reason);
        assert_eq!(not_a_list.setting, "TIDEMARK_EDI__CODE_TABLES");
    }

    #[test]
    fn the_environment_gives_code_tables_numbered_with_their_sender_as_written() {
        use figment::value::UncasedStr;

        let dir = tempfile::tempdir().unwrap();
        let file = table_file(dir.path(), "sender.toml", RAIL_DEPARTED);
        // What `TIDEMARK_EDI__CODE_TABLES__0__SENDER=0012345` and `…__0__FILE=…` become.
        let numbered = Figment::from(Toml::string(DEFAULTS))
            .merge(Serialized::global("edi.code_tables.0.sender", "0012345"))
            .merge(Serialized::global("edi.code_tables.0.file", file.as_str()));

        let tables = Config::from_figment(&numbered).unwrap().edi.code_tables;

        assert_eq!(tables.len(), 1);
        assert_eq!(tables[0].sender, "0012345");
        assert!(crate::config::is_text_key(UncasedStr::new(
            "EDI__CODE_TABLES__0__SENDER"
        )));
        assert!(crate::config::is_text_key(UncasedStr::new(
            "EDI__CODE_TABLES__3__FILE"
        )));
    }
}
