//! `[[edi.sftp]]`: SFTP mailboxes polled for interchanges
//! ([`crate::use_cases::edi::sftp`]). Each entry names the server (`host`, `port`), the
//! login (`user`, with `password` or `private_key_file`), the key the server must show
//! (`host_key`), the folder read (`remote_dir`), the account its interchanges are filed
//! under and how often it is polled. Read by hand, as `[[edi.inbound]]`: a key nothing takes
//! stops start-up with its name, and so does a private key file that cannot be read.
//!
//! The server's key is always checked: `host_key` is required, either the key itself (an
//! OpenSSH public key line, `ssh-ed25519 AAAA…`, or a `known_hosts` line) or its SHA-256
//! fingerprint (`SHA256:…`, as `ssh-keygen -lf` prints it). There is no setting to trust
//! any key. Secrets (the password, the key and its passphrase) never show in `Debug`.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use figment::value::Value;
use russh::keys::ssh_key::Fingerprint;
use russh::keys::{HashAlg, PrivateKey, PublicKey};

use super::{ConfigError, invalid};

/// The keys an entry may have.
const KEYS: &[&str] = &[
    "host",
    "port",
    "user",
    "password",
    "private_key_file",
    "private_key_passphrase",
    "host_key",
    "remote_dir",
    "account",
    "interval_seconds",
    "create_shipments",
    "after",
];

/// The keys whose environment values are text whatever they look like.
pub(super) const TEXT_KEYS: &[&str] = &[
    "host",
    "user",
    "password",
    "private_key_file",
    "private_key_passphrase",
    "host_key",
    "remote_dir",
    "account",
];

/// How often a mailbox is polled unless `interval_seconds` says otherwise.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

/// A polled SFTP mailbox (`[[edi.sftp]]`).
#[derive(Clone)]
pub struct SftpMailbox {
    pub host: String,
    /// 22 unless set.
    pub port: u16,
    pub user: String,
    /// Tried after the key, when both are set.
    pub password: Option<String>,
    /// Read and decoded at start-up (`private_key_file`, `private_key_passphrase`).
    pub private_key: Option<Arc<PrivateKey>>,
    /// The file the key was read from, for logs.
    pub private_key_file: Option<PathBuf>,
    /// What the server's key must be.
    pub host_key: HostKey,
    /// The folder whose files are taken (as the server names it); `processed/` and
    /// `rejected/` are made in it.
    pub remote_dir: String,
    /// The account (by name) its interchanges are filed under; made if missing.
    pub account: String,
    pub interval: Duration,
    /// Transactions naming nothing tracked start tracking requests of their own.
    pub create_shipments: bool,
    pub after: AfterTaken,
}

impl SftpMailbox {
    /// `sftp://user@host:port/dir`, without secrets: what logs name the mailbox by.
    pub fn url(&self) -> String {
        let dir = self.remote_dir.trim_start_matches('/');
        format!("sftp://{}@{}:{}/{dir}", self.user, self.host, self.port)
    }
}

impl fmt::Debug for SftpMailbox {
    // The password, the key and its passphrase are never shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SftpMailbox")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("private_key_file", &self.private_key_file)
            .field("host_key", &self.host_key)
            .field("remote_dir", &self.remote_dir)
            .field("account", &self.account)
            .field("interval", &self.interval)
            .field("create_shipments", &self.create_shipments)
            .field("after", &self.after)
            .finish_non_exhaustive()
    }
}

/// The key an SFTP server must show (`host_key`).
#[derive(Clone, PartialEq, Eq)]
pub enum HostKey {
    /// The key itself.
    Key(Box<PublicKey>),
    /// Its fingerprint (SHA-256 or SHA-512).
    Fingerprint(Fingerprint),
}

impl HostKey {
    /// Reads an OpenSSH public key line (`ssh-ed25519 AAAA… comment`), a `known_hosts` line
    /// (`host ssh-ed25519 AAAA…`) or a fingerprint (`SHA256:…`).
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.starts_with("SHA256:") || text.starts_with("SHA512:") {
            return text
                .parse::<Fingerprint>()
                .map(Self::Fingerprint)
                .map_err(|error| format!("not a fingerprint: {error}"));
        }
        if text.starts_with("MD5:") {
            return Err("an MD5 fingerprint is not accepted: give the SHA256 one \
                        (ssh-keygen -lf) or the key itself"
                .to_owned());
        }
        let key = PublicKey::from_openssh(text).or_else(|first| {
            // A known_hosts line: the host names first.
            match text.split_once(char::is_whitespace) {
                Some((_, rest)) => PublicKey::from_openssh(rest.trim()).map_err(|_| first),
                None => Err(first),
            }
        });
        key.map(|key| Self::Key(Box::new(key))).map_err(|error| {
            format!(
                "expected an OpenSSH public key line (ssh-ed25519 AAAA…) or a SHA256 \
                 fingerprint (SHA256:…): {error}"
            )
        })
    }

    /// Whether `key` is the one expected.
    pub fn matches(&self, key: &PublicKey) -> bool {
        match self {
            Self::Key(expected) => expected.key_data() == key.key_data(),
            Self::Fingerprint(expected) => key.fingerprint(expected.algorithm()) == *expected,
        }
    }
}

impl fmt::Debug for HostKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Key(key) => write!(
                f,
                "HostKey({} {})",
                key.algorithm(),
                key.fingerprint(HashAlg::Sha256)
            ),
            Self::Fingerprint(fingerprint) => write!(f, "HostKey({fingerprint})"),
        }
    }
}

/// What becomes of a remote file once its interchange is stored (`after`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AfterTaken {
    /// Moved to `processed/` (or `rejected/`, beside its reason).
    #[default]
    Move,
    /// Removed. A file refused unread (not EDI, too large), whose bytes are stored nowhere,
    /// still goes to `rejected/`.
    Delete,
}

/// A number that is whole and not negative (TOML's integers are signed).
fn whole_number(number: figment::value::Num) -> Option<u128> {
    number
        .to_u128()
        .or_else(|| number.to_i128().and_then(|n| u128::try_from(n).ok()))
}

/// Reads one `[[edi.sftp]]` entry.
pub(super) fn mailbox(index: usize, entry: &Value) -> Result<SftpMailbox, ConfigError> {
    let name = |key: &str| format!("edi__sftp__{index}__{key}");
    let Value::Dict(_, dict) = entry else {
        return Err(invalid(
            &format!("edi__sftp__{index}"),
            "expected a table with host, user, host_key, remote_dir and account",
        ));
    };
    if let Some(key) = dict.keys().find(|key| !KEYS.contains(&key.as_str())) {
        return Err(invalid(
            &name(key),
            format!("unknown setting `{key}` of edi.sftp entry {index}"),
        ));
    }
    // Secrets are not trimmed: a password may end in a space.
    let raw = |key: &str| -> Result<Option<String>, ConfigError> {
        match dict.get(key) {
            None => Ok(None),
            Some(Value::String(_, text)) => Ok(Some(text.clone())),
            Some(Value::Num(_, number)) => Ok(number
                .to_u128()
                .map(|n| n.to_string())
                .or_else(|| number.to_i128().map(|n| n.to_string()))),
            Some(_) => Err(invalid(&name(key), "expected text")),
        }
    };
    let text = |key: &str| -> Result<Option<String>, ConfigError> {
        Ok(raw(key)?
            .map(|text| text.trim().to_owned())
            .filter(|text| !text.is_empty()))
    };
    let required = |key: &str, what: &str| -> Result<String, ConfigError> {
        text(key)?.ok_or_else(|| invalid(&name(key), format!("required: {what}")))
    };
    let host = required("host", "the SFTP server's host name or address")?;
    if host.contains(|c: char| c.is_whitespace() || c == '/' || c == '@') {
        return Err(invalid(&name("host"), "expected a host name or address"));
    }
    let port = match dict.get("port") {
        None => 22,
        Some(value) => value
            .to_num()
            .and_then(whole_number)
            .or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()))
            .and_then(|n| u16::try_from(n).ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| invalid(&name("port"), "expected a port number (1 to 65535)"))?,
    };
    let user = required("user", "the user name to log in as")?;
    let password = raw("password")?.filter(|p| !p.is_empty());
    let passphrase = raw("private_key_passphrase")?.filter(|p| !p.is_empty());
    let private_key_file = text("private_key_file")?.map(PathBuf::from);
    let private_key = match &private_key_file {
        None => {
            if passphrase.is_some() {
                return Err(invalid(
                    &name("private_key_passphrase"),
                    "set without private_key_file",
                ));
            }
            None
        }
        Some(file) => {
            let contents = std::fs::read_to_string(file).map_err(|error| {
                invalid(
                    &name("private_key_file"),
                    format!("cannot read {}: {error}", file.display()),
                )
            })?;
            // The decoder's error never holds the key or the passphrase.
            let key = russh::keys::decode_secret_key(&contents, passphrase.as_deref()).map_err(
                |error| {
                    invalid(
                        &name("private_key_file"),
                        format!(
                            "{} is not an OpenSSH private key that can be opened{}: {error}",
                            file.display(),
                            if passphrase.is_some() {
                                " with private_key_passphrase"
                            } else {
                                ""
                            }
                        ),
                    )
                },
            )?;
            Some(Arc::new(key))
        }
    };
    if password.is_none() && private_key.is_none() {
        return Err(invalid(
            &name("password"),
            "required: a password or a private_key_file to log in with",
        ));
    }
    let host_key = HostKey::parse(&required(
        "host_key",
        "the server's public key (an OpenSSH public key line or its SHA256 fingerprint, \
         as `ssh-keyscan` and `ssh-keygen -lf` print them); no key is trusted unseen",
    )?)
    .map_err(|reason| invalid(&name("host_key"), reason))?;
    let remote_dir = required("remote_dir", "the remote folder to take files from")?;
    if remote_dir.contains(['\0', '\n', '\r']) {
        return Err(invalid(&name("remote_dir"), "not a path"));
    }
    let remote_dir = if remote_dir.len() > 1 {
        remote_dir.trim_end_matches('/').to_owned()
    } else {
        remote_dir
    };
    let account = required(
        "account",
        "the account (by name) the mailbox's interchanges are filed under",
    )?;
    let interval = match dict.get("interval_seconds") {
        None => DEFAULT_INTERVAL,
        Some(value) => value
            .to_num()
            .and_then(whole_number)
            .or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()))
            .and_then(|n| u64::try_from(n).ok())
            .filter(|n| (1..=86_400).contains(n))
            .map(Duration::from_secs)
            .ok_or_else(|| {
                invalid(
                    &name("interval_seconds"),
                    "expected a number of seconds from 1 to 86400",
                )
            })?,
    };
    let create_shipments = match dict.get("create_shipments") {
        None => false,
        Some(value) => value
            .to_bool_lossy()
            .ok_or_else(|| invalid(&name("create_shipments"), "expected true or false"))?,
    };
    let after = match text("after")?.map(|a| a.to_ascii_lowercase()).as_deref() {
        None | Some("move") => AfterTaken::Move,
        Some("delete") => AfterTaken::Delete,
        Some(_) => {
            return Err(invalid(&name("after"), "expected \"move\" or \"delete\""));
        }
    };
    Ok(SftpMailbox {
        host,
        port,
        user,
        password,
        private_key,
        private_key_file,
        host_key,
        remote_dir,
        account,
        interval,
        create_shipments,
        after,
    })
}

#[cfg(test)]
mod tests {
    use figment::Figment;
    use figment::providers::{Format, Serialized, Toml};
    use russh::keys::ssh_key::private::Ed25519Keypair;

    use super::*;
    use crate::config::{Config, DEFAULTS};

    fn load(toml: &str) -> Result<Config, ConfigError> {
        Config::from_figment(&Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(toml)))
    }

    fn key(seed: u8) -> PrivateKey {
        PrivateKey::from(Ed25519Keypair::from_seed(&[seed; 32]))
    }

    fn host_key_line() -> String {
        key(1).public_key().to_openssh().unwrap()
    }

    /// An entry with everything required but `leave_out`, plus `extra` lines.
    fn entry(leave_out: &str, extra: &str) -> String {
        let line = host_key_line();
        let mut toml = "[[edi.sftp]]\n".to_owned();
        for (key, value) in [
            ("host", "sftp.example.com".to_owned()),
            ("user", "edi".to_owned()),
            ("password", "hunter2".to_owned()),
            ("host_key", line),
            ("remote_dir", "/outbox/".to_owned()),
            ("account", "acme".to_owned()),
        ] {
            if key != leave_out {
                toml.push_str(&format!("{key} = {value:?}\n"));
            }
        }
        toml.push_str(extra);
        toml
    }

    #[test]
    fn a_mailbox_is_read_with_its_defaults() {
        let config = load(&entry("", "")).unwrap();

        let sftp = &config.edi.sftp;
        assert_eq!(sftp.len(), 1);
        let mailbox = &sftp[0];
        assert_eq!(mailbox.host, "sftp.example.com");
        assert_eq!(mailbox.port, 22);
        assert_eq!(mailbox.user, "edi");
        assert_eq!(mailbox.password.as_deref(), Some("hunter2"));
        assert_eq!(mailbox.remote_dir, "/outbox");
        assert_eq!(mailbox.account, "acme");
        assert_eq!(mailbox.interval, DEFAULT_INTERVAL);
        assert!(!mailbox.create_shipments);
        assert_eq!(mailbox.after, AfterTaken::Move);
        assert!(mailbox.host_key.matches(key(1).public_key()));
        assert!(!mailbox.host_key.matches(key(2).public_key()));
        assert_eq!(mailbox.url(), "sftp://edi@sftp.example.com:22/outbox");
        assert!(Config::from_pairs(&[]).unwrap().edi.sftp.is_empty());
    }

    #[test]
    fn every_setting_is_read() {
        let config = load(&entry(
            "",
            "port = 2222\ninterval_seconds = 300\ncreate_shipments = true\nafter = \"delete\"\n",
        ))
        .unwrap();

        let mailbox = &config.edi.sftp[0];
        assert_eq!(mailbox.port, 2222);
        assert_eq!(mailbox.interval, Duration::from_secs(300));
        assert!(mailbox.create_shipments);
        assert_eq!(mailbox.after, AfterTaken::Delete);
    }

    #[test]
    fn an_unknown_key_stops_start_up_naming_it() {
        let error = load(&entry("", "insecure_accept_any_host_key = true\n")).unwrap_err();

        assert_eq!(
            error.setting,
            "TIDEMARK_EDI__SFTP__0__INSECURE_ACCEPT_ANY_HOST_KEY"
        );
        assert!(
            error.reason.contains("insecure_accept_any_host_key"),
            "{}",
            error.reason
        );
    }

    #[test]
    fn a_missing_host_user_account_folder_or_host_key_stops_start_up_naming_it() {
        for key in ["host", "user", "account", "remote_dir", "host_key"] {
            let error = load(&entry(key, "")).unwrap_err();
            assert_eq!(
                error.setting,
                format!("TIDEMARK_EDI__SFTP__0__{}", key.to_uppercase()),
                "{key}"
            );
            assert!(error.reason.starts_with("required"), "{}", error.reason);
        }
    }

    #[test]
    fn a_password_or_a_private_key_is_required() {
        let error = load(&entry("password", "")).unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_EDI__SFTP__0__PASSWORD");
        assert!(
            error.reason.contains("private_key_file"),
            "{}",
            error.reason
        );
    }

    #[test]
    fn a_private_key_file_is_read_at_start_up_and_one_that_cannot_be_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("id_ed25519");
        std::fs::write(
            &file,
            key(3)
                .to_openssh(russh::keys::ssh_key::LineEnding::LF)
                .unwrap()
                .as_bytes(),
        )
        .unwrap();
        let garbage = dir.path().join("garbage");
        std::fs::write(&garbage, "-----BEGIN OPENSSH PRIVATE KEY-----\nnope\n").unwrap();
        let missing = dir.path().join("missing");

        let good = load(&entry(
            "password",
            &format!("private_key_file = {:?}\n", file.display().to_string()),
        ))
        .unwrap();
        let errors: Vec<ConfigError> = [&garbage, &missing]
            .iter()
            .map(|path| {
                load(&entry(
                    "password",
                    &format!("private_key_file = {:?}\n", path.display().to_string()),
                ))
                .unwrap_err()
            })
            .collect();
        let passphrase_alone = load(&entry("", "private_key_passphrase = \"x\"\n")).unwrap_err();

        let mailbox = &good.edi.sftp[0];
        assert!(mailbox.password.is_none());
        assert_eq!(
            mailbox.private_key.as_ref().unwrap().public_key(),
            key(3).public_key()
        );
        for (error, path) in errors.iter().zip([&garbage, &missing]) {
            assert_eq!(error.setting, "TIDEMARK_EDI__SFTP__0__PRIVATE_KEY_FILE");
            assert!(
                error.reason.contains(&path.display().to_string()),
                "{}",
                error.reason
            );
        }
        assert_eq!(
            passphrase_alone.setting,
            "TIDEMARK_EDI__SFTP__0__PRIVATE_KEY_PASSPHRASE"
        );
    }

    #[test]
    fn a_host_key_is_a_public_key_line_a_known_hosts_line_or_a_sha256_fingerprint() {
        let public = key(1).public_key().clone();
        let line = public.to_openssh().unwrap();
        let fingerprint = public.fingerprint(HashAlg::Sha256).to_string();

        for text in [
            line.clone(),
            format!("{line} someone@somewhere"),
            format!("sftp.example.com,10.0.0.1 {line}"),
            fingerprint.clone(),
        ] {
            let host_key = HostKey::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert!(host_key.matches(&public), "{text}");
            assert!(!host_key.matches(key(2).public_key()), "{text}");
        }
        for text in ["", "ssh-ed25519", "SHA256:???", "MD5:aa:bb", "yes"] {
            assert!(HostKey::parse(text).is_err(), "{text}");
        }
        let error = load(&entry("host_key", "host_key = \"trust me\"\n")).unwrap_err();
        assert_eq!(error.setting, "TIDEMARK_EDI__SFTP__0__HOST_KEY");
    }

    #[test]
    fn bad_values_stop_start_up_naming_the_setting() {
        let cases = [
            ("port = 0\n", "PORT"),
            ("port = 70000\n", "PORT"),
            ("interval_seconds = 0\n", "INTERVAL_SECONDS"),
            ("after = \"archive\"\n", "AFTER"),
            ("create_shipments = \"maybe\"\n", "CREATE_SHIPMENTS"),
        ];
        for (extra, setting) in cases {
            let error = load(&entry("", extra)).unwrap_err();
            assert_eq!(
                error.setting,
                format!("TIDEMARK_EDI__SFTP__0__{setting}"),
                "{extra}"
            );
        }
        let twice = load(&format!("{}{}", entry("", ""), entry("", ""))).unwrap_err();
        assert_eq!(twice.setting, "TIDEMARK_EDI__SFTP__1__REMOTE_DIR");
        let not_a_list = load("[edi]\nsftp = \"x\"").unwrap_err();
        assert_eq!(not_a_list.setting, "TIDEMARK_EDI__SFTP");
    }

    #[test]
    fn secrets_never_show_in_debug() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("id_ed25519");
        let private = key(4);
        let pem = private
            .to_openssh(russh::keys::ssh_key::LineEnding::LF)
            .unwrap();
        std::fs::write(&file, pem.as_bytes()).unwrap();
        let config = load(&entry(
            "",
            &format!("private_key_file = {:?}\n", file.display().to_string()),
        ))
        .unwrap();

        let shown = format!("{:?} {:?}", config.edi, config);

        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
        let body: String = pem.lines().nth(1).unwrap().chars().take(20).collect();
        assert!(!shown.contains(&body), "{shown}");
        assert!(shown.contains("sftp.example.com"), "{shown}");
    }

    #[test]
    fn the_environment_gives_mailboxes_numbered_with_secrets_as_written() {
        use figment::value::UncasedStr;

        // What `TIDEMARK_EDI__SFTP__0__PASSWORD=0123 ` and the others become.
        let numbered = Figment::from(Toml::string(DEFAULTS))
            .merge(Serialized::global("edi.sftp.0.host", "sftp.example.com"))
            .merge(Serialized::global("edi.sftp.0.user", "edi"))
            .merge(Serialized::global("edi.sftp.0.password", "0123 "))
            .merge(Serialized::global("edi.sftp.0.host_key", host_key_line()))
            .merge(Serialized::global("edi.sftp.0.remote_dir", "/"))
            .merge(Serialized::global("edi.sftp.0.account", "acme"))
            .merge(Serialized::global("edi.sftp.0.interval_seconds", "30"));

        let sftp = Config::from_figment(&numbered).unwrap().edi.sftp;

        assert_eq!(sftp[0].password.as_deref(), Some("0123 "));
        assert_eq!(sftp[0].remote_dir, "/");
        assert_eq!(sftp[0].interval, Duration::from_secs(30));
        for key in [
            "EDI__SFTP__0__PASSWORD",
            "EDI__SFTP__3__HOST_KEY",
            "EDI__SFTP__0__USER",
            "EDI__SFTP__0__PRIVATE_KEY_PASSPHRASE",
        ] {
            assert!(crate::config::is_text_key(UncasedStr::new(key)), "{key}");
        }
        assert!(!crate::config::is_text_key(UncasedStr::new(
            "EDI__SFTP__0__PORT"
        )));
    }
}
