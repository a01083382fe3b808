//! `[email]`: documents received by email, through the built-in SMTP receiver
//! (`smtp_listen`) and the IMAP mailbox poller (`imap_*`). Both file messages under the same
//! `account`, with the same `allowed_senders` and bounds (`max_message_bytes`,
//! `max_message_parts`, `max_message_depth`). Keys nothing takes
//! stop start-up with the setting's name, as the top level's do.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use serde::Deserialize;
use url::Url;

use super::{ConfigError, TextOrList, invalid};

/// The most SMTP sessions at once a setting may ask for (each may hold a whole message).
const MAX_SMTP_SESSIONS: usize = 10_000;

/// `[email]` as read, before validation.
#[derive(Debug, Deserialize)]
#[serde(default)]
pub(super) struct RawEmail {
    smtp_listen: String,
    account: String,
    allowed_senders: TextOrList,
    max_message_bytes: usize,
    max_message_parts: usize,
    max_message_depth: usize,
    smtp_max_sessions: usize,
    imap_url: String,
    imap_username: String,
    imap_password: String,
    imap_mailbox: String,
    imap_poll_seconds: u64,
    imap_mark_seen: bool,
    imap_move_to: String,
    /// Refused by name, as the top level's.
    #[serde(flatten)]
    unknown: BTreeMap<String, serde::de::IgnoredAny>,
}

impl Default for RawEmail {
    fn default() -> Self {
        Self {
            smtp_listen: String::new(),
            account: "default".to_owned(),
            allowed_senders: TextOrList::List(Vec::new()),
            max_message_bytes: 25 * 1024 * 1024,
            max_message_parts: 200,
            max_message_depth: 10,
            smtp_max_sessions: 16,
            imap_url: String::new(),
            imap_username: String::new(),
            imap_password: String::new(),
            imap_mailbox: "INBOX".to_owned(),
            imap_poll_seconds: 60,
            imap_mark_seen: true,
            imap_move_to: String::new(),
            unknown: BTreeMap::new(),
        }
    }
}

/// Documents received by email (`[email]`, `TIDEMARK_EMAIL__*`).
#[derive(Clone, Debug)]
pub struct EmailConfig {
    /// Where the built-in SMTP receiver listens; `None`: no receiver.
    pub smtp_listen: Option<SocketAddr>,
    /// The account received mail is filed under (by name).
    pub account: String,
    /// Senders allowed (addresses, or domains as `@example.com` or `example.com`), lower
    /// case; empty allows any sender.
    pub allowed_senders: Vec<String>,
    /// The largest message accepted (`552` beyond).
    pub max_message_bytes: usize,
    /// MIME parts a message may have (multiparts and enclosed messages counted); a message
    /// of more is recorded `rejected` without being parsed.
    pub max_message_parts: usize,
    /// How deep multiparts and enclosed messages may nest; deeper is recorded `rejected`.
    pub max_message_depth: usize,
    /// SMTP sessions served at once; more wait for a free one.
    pub smtp_max_sessions: usize,
    /// The mailbox polled for messages; `None`: no poller.
    pub imap: Option<ImapConfig>,
}

/// The IMAP mailbox polled for documents (`imap_*`): a plain struct of the `email` crate,
/// read and checked here.
pub use tidemark_email::imap::ImapConfig;

impl RawEmail {
    pub(super) fn validate(self) -> Result<EmailConfig, ConfigError> {
        if let Some(key) = self.unknown.keys().next() {
            return Err(invalid(
                &format!("email__{key}"),
                format!("unknown setting `email.{key}`"),
            ));
        }
        let smtp_listen = match self.smtp_listen.trim() {
            "" => None,
            text => Some(text.parse().map_err(|_| {
                invalid(
                    "email__smtp_listen",
                    format!("{text:?} is not a host:port address"),
                )
            })?),
        };
        if self.account.trim().is_empty() {
            return Err(invalid("email__account", "must name an account"));
        }
        for (setting, value) in [
            ("email__max_message_bytes", self.max_message_bytes),
            ("email__max_message_parts", self.max_message_parts),
            ("email__max_message_depth", self.max_message_depth),
            ("email__smtp_max_sessions", self.smtp_max_sessions),
        ] {
            if value == 0 {
                return Err(invalid(setting, "must be at least 1"));
            }
        }
        if self.smtp_max_sessions > MAX_SMTP_SESSIONS {
            return Err(invalid(
                "email__smtp_max_sessions",
                format!("must be at most {MAX_SMTP_SESSIONS}"),
            ));
        }
        let mut allowed_senders = Vec::new();
        for entry in self.allowed_senders.items() {
            let entry = entry.to_ascii_lowercase();
            let domain = entry.rsplit('@').next().unwrap_or_default();
            if domain.is_empty() || !domain.contains('.') || entry.contains(char::is_whitespace) {
                return Err(invalid(
                    "email__allowed_senders",
                    format!("{entry:?}: expected an address or a domain such as @example.com"),
                ));
            }
            allowed_senders.push(entry);
        }
        let imap = self.imap()?;
        Ok(EmailConfig {
            smtp_listen,
            account: self.account.trim().to_owned(),
            allowed_senders,
            max_message_bytes: self.max_message_bytes,
            max_message_parts: self.max_message_parts,
            max_message_depth: self.max_message_depth,
            smtp_max_sessions: self.smtp_max_sessions,
            imap,
        })
    }

    fn imap(&self) -> Result<Option<ImapConfig>, ConfigError> {
        let text = self.imap_url.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let bad_url = |why: &str| invalid("email__imap_url", format!("{text:?}: {why}"));
        let url = Url::parse(text).map_err(|_| bad_url("expected imaps://HOST[:PORT]"))?;
        let tls = match url.scheme() {
            "imaps" => true,
            "imap" => false,
            _ => return Err(bad_url("expected imaps://HOST[:PORT]")),
        };
        let host = url
            .host_str()
            .filter(|host| !host.is_empty())
            .ok_or_else(|| bad_url("names no host"))?
            .to_owned();
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad_url(
                "give the user and password in email.imap_username and email.imap_password",
            ));
        }
        if !matches!(url.path(), "" | "/") || url.query().is_some() || url.fragment().is_some() {
            return Err(bad_url(
                "expected no path: the mailbox is email.imap_mailbox",
            ));
        }
        if !tls && !is_loopback(&host) {
            return Err(bad_url(
                "imap:// has no TLS and is allowed only to a loopback host (tests); use imaps://",
            ));
        }
        let port = url.port().unwrap_or(if tls { 993 } else { 143 });
        let username = self.imap_username.trim();
        if username.is_empty() {
            return Err(invalid(
                "email__imap_username",
                "required with email.imap_url",
            ));
        }
        if self.imap_password.is_empty() {
            return Err(invalid(
                "email__imap_password",
                "required with email.imap_url",
            ));
        }
        let mailbox = self.imap_mailbox.trim();
        if mailbox.is_empty() || mailbox.contains(['\r', '\n']) {
            return Err(invalid("email__imap_mailbox", "must name a mailbox"));
        }
        if self.imap_poll_seconds == 0 {
            return Err(invalid(
                "email__imap_poll_seconds",
                "must be greater than zero",
            ));
        }
        let move_to = match self.imap_move_to.trim() {
            "" => None,
            folder if folder.contains(['\r', '\n']) => {
                return Err(invalid("email__imap_move_to", "must name a mailbox"));
            }
            folder if folder == mailbox => {
                return Err(invalid(
                    "email__imap_move_to",
                    "must be another mailbox than email.imap_mailbox",
                ));
            }
            folder => Some(folder.to_owned()),
        };
        Ok(Some(ImapConfig {
            host,
            port,
            tls,
            username: username.to_owned(),
            password: self.imap_password.clone(),
            mailbox: mailbox.to_owned(),
            poll_interval: Duration::from_secs(self.imap_poll_seconds),
            mark_seen: self.imap_mark_seen,
            move_to,
        }))
    }
}

/// `localhost`, or a loopback address (`127.0.0.0/8`, `::1`), as a URL writes it.
fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    #[test]
    fn an_unknown_email_setting_is_refused_with_its_name() {
        let error = Config::from_pairs(&[("email.smtp_port", "25")]).unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_EMAIL__SMTP_PORT");
    }

    #[test]
    fn email_settings_are_read_and_checked() {
        let config = Config::from_pairs(&[
            ("email.smtp_listen", "127.0.0.1:2525"),
            (
                "email.allowed_senders",
                "Ops@Forwarder.example, @carrier.example",
            ),
        ])
        .unwrap();
        assert_eq!(config.email.smtp_listen, "127.0.0.1:2525".parse().ok());
        assert_eq!(
            config.email.allowed_senders,
            ["ops@forwarder.example", "@carrier.example"]
        );
        assert_eq!(config.email.account, "default");
        assert!(Config::from_pairs(&[]).unwrap().email.smtp_listen.is_none());
        let error = Config::from_pairs(&[("email.smtp_listen", "port 25")]).unwrap_err();
        assert_eq!(error.setting, "TIDEMARK_EMAIL__SMTP_LISTEN");
        let error = Config::from_pairs(&[("email.allowed_senders", "nobody")]).unwrap_err();
        assert_eq!(error.setting, "TIDEMARK_EMAIL__ALLOWED_SENDERS");
    }

    fn imap(pairs: &[(&str, &str)]) -> Result<super::ImapConfig, String> {
        let mut all = vec![
            ("email.imap_username", "docs@forwarder.example"),
            ("email.imap_password", "hunter2"),
        ];
        all.extend_from_slice(pairs);
        Config::from_pairs(&all)
            .map(|config| config.email.imap.unwrap())
            .map_err(|error| error.setting)
    }

    #[test]
    fn message_bounds_default_to_200_parts_10_deep_and_16_sessions() {
        let config = Config::from_pairs(&[]).unwrap().email;

        assert_eq!(config.max_message_parts, 200);
        assert_eq!(config.max_message_depth, 10);
        assert_eq!(config.smtp_max_sessions, 16);
    }

    #[test]
    fn message_bounds_are_read() {
        let config = Config::from_pairs(&[
            ("email.max_message_parts", "50"),
            ("email.max_message_depth", "4"),
            ("email.smtp_max_sessions", "2"),
        ])
        .unwrap()
        .email;
        assert_eq!(
            (
                config.max_message_parts,
                config.max_message_depth,
                config.smtp_max_sessions
            ),
            (50, 4, 2)
        );
    }

    #[test]
    fn a_zero_or_excessive_message_bound_stops_start_up_naming_the_setting() {
        for setting in [
            "max_message_bytes",
            "max_message_parts",
            "max_message_depth",
            "smtp_max_sessions",
        ] {
            let key = format!("email.{setting}");
            let error = Config::from_pairs(&[(key.as_str(), "0")]).unwrap_err();
            assert_eq!(
                error.setting,
                format!("TIDEMARK_EMAIL__{}", setting.to_ascii_uppercase())
            );
        }
        let error = Config::from_pairs(&[("email.smtp_max_sessions", "10001")]).unwrap_err();
        assert_eq!(error.setting, "TIDEMARK_EMAIL__SMTP_MAX_SESSIONS");
    }

    #[test]
    fn a_misspelt_message_bound_stops_start_up_naming_it() {
        let misspelt = Config::from_pairs(&[("email.max_message_part", "50")]).unwrap_err();
        assert_eq!(misspelt.setting, "TIDEMARK_EMAIL__MAX_MESSAGE_PART");
    }

    #[test]
    fn the_imap_poller_is_off_unless_a_url_is_set() {
        assert!(Config::from_pairs(&[]).unwrap().email.imap.is_none());
    }

    #[test]
    fn an_imap_mailbox_is_reached_over_implicit_tls_on_993_by_default() {
        let config = imap(&[("email.imap_url", "imaps://imap.forwarder.example")]).unwrap();

        assert_eq!(config.host, "imap.forwarder.example");
        assert_eq!(config.port, 993);
        assert!(config.tls);
        assert_eq!(config.mailbox, "INBOX");
        assert_eq!(config.poll_interval, std::time::Duration::from_secs(60));
        assert!(config.mark_seen);
        assert_eq!(config.move_to, None);
        assert_eq!(
            config.mailbox_url(),
            "imap://docs%40forwarder.example@imap.forwarder.example:993/INBOX"
        );
        assert!(!format!("{config:?}").contains("hunter2"));
    }

    #[test]
    fn plain_imap_is_allowed_only_to_a_loopback_host() {
        let local = imap(&[("email.imap_url", "imap://127.0.0.1:1143")]).unwrap();
        let named = imap(&[("email.imap_url", "imap://localhost")]).unwrap();

        assert!(!local.tls);
        assert_eq!(local.port, 1143);
        assert_eq!(named.port, 143);
        assert_eq!(
            imap(&[("email.imap_url", "imap://imap.forwarder.example")]).unwrap_err(),
            "TIDEMARK_EMAIL__IMAP_URL"
        );
        assert_eq!(
            imap(&[("email.imap_url", "imap://10.0.0.1")]).unwrap_err(),
            "TIDEMARK_EMAIL__IMAP_URL"
        );
    }

    #[test]
    fn bad_imap_settings_stop_start_up_naming_the_setting() {
        let url = ("email.imap_url", "imaps://imap.forwarder.example");
        for (pairs, setting) in [
            (vec![("email.imap_url", "pop3://x.example")], "IMAP_URL"),
            (
                vec![("email.imap_url", "imaps://u:p@x.example")],
                "IMAP_URL",
            ),
            (
                vec![("email.imap_url", "imaps://x.example/INBOX")],
                "IMAP_URL",
            ),
            (vec![url, ("email.imap_username", " ")], "IMAP_USERNAME"),
            (vec![url, ("email.imap_password", "")], "IMAP_PASSWORD"),
            (
                vec![url, ("email.imap_poll_seconds", "0")],
                "IMAP_POLL_SECONDS",
            ),
            (vec![url, ("email.imap_mailbox", "")], "IMAP_MAILBOX"),
            (vec![url, ("email.imap_move_to", "INBOX")], "IMAP_MOVE_TO"),
            (
                vec![url, ("email.imap_mark_seen", "maybe")],
                "IMAP_MARK_SEEN",
            ),
            (vec![url, ("email.imap_folder", "Archive")], "IMAP_FOLDER"),
        ] {
            assert_eq!(
                imap(&pairs).unwrap_err(),
                format!("TIDEMARK_EMAIL__{setting}"),
                "{pairs:?}"
            );
        }
    }

    #[test]
    fn processed_messages_can_be_moved_and_left_unseen() {
        let config = imap(&[
            ("email.imap_url", "imaps://imap.forwarder.example:10993"),
            ("email.imap_mailbox", "Documents"),
            ("email.imap_move_to", "Documents/Filed"),
            ("email.imap_mark_seen", "false"),
            ("email.imap_poll_seconds", "300"),
        ])
        .unwrap();

        assert_eq!(config.port, 10993);
        assert_eq!(config.mailbox, "Documents");
        assert_eq!(config.move_to.as_deref(), Some("Documents/Filed"));
        assert!(!config.mark_seen);
        assert_eq!(config.poll_interval, std::time::Duration::from_secs(300));
    }
}
