//! Settings: embedded `defaults.toml`, then an optional config file, then `TIDEMARK_*`
//! environment variables. [`Config::load`] validates everything and names the offending
//! setting, so a bad deployment fails at start rather than on the first request.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use figment::providers::{Env, Format, Serialized, Toml};
use figment::value::{Dict, Uncased, UncasedStr, Value};
use figment::{Figment, Profile, Provider};
use serde::Deserialize;
use url::Url;

const DEFAULTS: &str = include_str!("defaults.toml");

mod carriers;
mod edi;
mod email;
pub mod error;
mod sftp;
pub mod terminals;

pub use carriers::{CarrierAuth, CarrierConfig};
pub use edi::{EdiConfig, InboundFolder, SenderCodeTable};
pub use email::{EmailConfig, ImapConfig};
pub use error::ConfigError;
pub use sftp::{AfterTaken, HostKey, SftpMailbox};
pub use terminals::TerminalConfig;

/// The settings as read, before validation; a setting not listed here stops start-up.
#[derive(Debug, Deserialize)]
struct RawConfig {
    #[serde(default)]
    carriers: std::collections::BTreeMap<String, carriers::RawCarrier>,
    #[serde(default)]
    terminals: std::collections::BTreeMap<String, terminals::RawTerminal>,
    listen: String,
    database_url: String,
    storage_url: String,
    public_url: String,
    webhooks_allow_private: bool,
    webhook_egress_ips: TextOrList,
    rate_limit_per_minute: u32,
    log_format: String,
    log_level: String,
    max_body_bytes: usize,
    request_timeout_seconds: u64,
    auth_cache_seconds: u64,
    database_max_connections: usize,
    database_shipment_cache_entries: usize,
    worker_concurrency: usize,
    job_lease_seconds: u64,
    job_heartbeat_seconds: u64,
    job_timeout_seconds: u64,
    job_poll_milliseconds: u64,
    bench_routes: bool,
    sandbox_carrier_url: String,
    tracking_poll_seconds: u64,
    tracking_poll_near_milestone_seconds: u64,
    tracking_poll_at_sea_seconds: u64,
    scheduler_tick_seconds: u64,
    demo_time_scale: u32,
    ais_sources: String,
    ais_position_interval_seconds: u64,
    ais_retention_days: u32,
    ais_batch_size: usize,
    sandbox_ais_seconds: u64,
    vessel_service_speed_knots: f64,
    max_document_bytes: usize,
    signing_secret: String,
    signed_url_seconds: u64,
    #[serde(default)]
    email: email::RawEmail,
    #[serde(default)]
    edi: edi::RawEdi,
    #[serde(flatten)]
    limits: crate::limits::RawLimits,
    /// Whatever no field above took: refused by name in [`Config::from_figment`]. (serde's
    /// `deny_unknown_fields` does nothing once a struct has a flattened field.)
    #[serde(flatten)]
    unknown: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
}

/// A list setting, written as a TOML array or as one comma-separated string (the form an
/// environment variable takes).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum TextOrList {
    Text(String),
    List(Vec<String>),
}

impl TextOrList {
    fn items(&self) -> Vec<&str> {
        let items: Vec<&str> = match self {
            Self::Text(text) => text.split(',').collect(),
            Self::List(list) => list.iter().map(String::as_str).collect(),
        };
        items
            .into_iter()
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .collect()
    }
}

/// `webhook_egress_ips`: IP addresses, each kept in its canonical text form.
fn parse_egress_ips(list: &TextOrList) -> Result<Vec<std::net::IpAddr>, ConfigError> {
    let mut ips = Vec::new();
    for item in list.items() {
        let ip: std::net::IpAddr = item.parse().map_err(|_| {
            invalid(
                "webhook_egress_ips",
                format!("{item:?}: expected an IPv4 or IPv6 address"),
            )
        })?;
        if !ips.contains(&ip) {
            ips.push(ip);
        }
    }
    Ok(ips)
}

/// Where AIS NMEA sentences come from (`ais_sources`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AisSource {
    /// Connect to a TCP feed (`tcp://host:port`), reconnecting when it drops.
    Tcp(String),
    /// Listen for datagrams (`udp://bind-address:port`).
    Udp(SocketAddr),
    /// Read a file of sentences once (`file://path`).
    File(PathBuf),
}

impl fmt::Display for AisSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tcp(address) => write!(f, "tcp://{address}"),
            Self::Udp(address) => write!(f, "udp://{address}"),
            Self::File(path) => write!(f, "file://{}", path.display()),
        }
    }
}

fn parse_ais_sources(text: &str) -> Result<Vec<AisSource>, ConfigError> {
    let bad = |item: &str, why: &str| invalid("ais_sources", format!("{item:?}: {why}"));
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| {
            if let Some(address) = item.strip_prefix("tcp://") {
                let port_ok = address
                    .rsplit_once(':')
                    .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
                if port_ok {
                    Ok(AisSource::Tcp(address.to_owned()))
                } else {
                    Err(bad(item, "expected tcp://HOST:PORT"))
                }
            } else if let Some(address) = item.strip_prefix("udp://") {
                address
                    .parse()
                    .map(AisSource::Udp)
                    .map_err(|_| bad(item, "expected udp://IP:PORT to listen on"))
            } else if let Some(path) = item.strip_prefix("file://") {
                if path.is_empty() {
                    Err(bad(item, "expected file://PATH"))
                } else {
                    Ok(AisSource::File(PathBuf::from(path)))
                }
            } else {
                Err(bad(item, "expected tcp://, udp:// or file://"))
            }
        })
        .collect()
}

/// AIS ingest and vessel settings.
#[derive(Clone, Debug)]
pub struct AisConfig {
    pub sources: Vec<AisSource>,
    /// At most one stored track point per vessel per this interval.
    pub position_interval: chrono::Duration,
    /// Track points older than this are purged.
    pub retention_days: u32,
    /// Positions written per transaction at most.
    pub batch_size: usize,
    /// How often the sandbox's vessels report their position; `None`: never.
    pub sandbox_interval: Option<std::time::Duration>,
    /// Pace of future positions when neither an ETA nor a recent speed is known.
    pub service_speed_knots: f64,
}

/// Which database backend to use, chosen by the URL scheme.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    Sqlite(PathBuf),
    Postgres(String),
}

impl fmt::Debug for DatabaseUrl {
    // PostgreSQL URLs may carry a password: show only the scheme and host part.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sqlite(path) => write!(f, "sqlite://{}", path.display()),
            Self::Postgres(url) => match Url::parse(url) {
                Ok(url) => write!(
                    f,
                    "postgres://{}{}",
                    url.host_str().unwrap_or(""),
                    url.port().map(|p| format!(":{p}")).unwrap_or_default()
                ),
                Err(_) => f.write_str("postgres://…"),
            },
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    Json,
    Pretty,
}

/// Validated settings.
#[derive(Clone, Debug)]
pub struct Config {
    pub listen: SocketAddr,
    pub database_url: DatabaseUrl,
    pub storage_url: Url,
    /// Base of absolute links, without a trailing slash.
    pub public_url: String,
    pub webhooks_allow_private: bool,
    /// The addresses webhook deliveries leave from, as this installation's operator
    /// declares them (`GET /v2/webhooks/ips`); empty by default.
    pub webhook_egress_ips: Vec<std::net::IpAddr>,
    pub rate_limit_per_minute: u32,
    pub log_format: LogFormat,
    pub log_level: String,
    pub max_body_bytes: usize,
    pub request_timeout: std::time::Duration,
    pub auth_cache_ttl: chrono::Duration,
    pub database_max_connections: usize,
    pub database_shipment_cache_entries: usize,
    pub worker_concurrency: usize,
    /// A claim's lease, renewed every `job_heartbeat` while its job runs.
    pub job_lease: chrono::Duration,
    pub job_heartbeat: std::time::Duration,
    /// An attempt running longer is abandoned and retried.
    pub job_time_limit: std::time::Duration,
    pub job_poll_interval: std::time::Duration,
    /// Serves `/bench/static/{bytes}` for the load benchmark's baseline.
    pub bench_routes: bool,
    /// Where the `TEST` carrier is; `None` runs it inside this process.
    pub sandbox_carrier_url: Option<Url>,
    /// How often a tracked shipment is polled when neither near a milestone nor at sea
    /// (`tracking_poll_seconds`); see [`Config::poll_intervals`].
    pub tracking_poll_interval: chrono::Duration,
    /// How often a shipment near a milestone is polled (arrival within 48 hours, or
    /// arrived and not done).
    pub tracking_poll_near_milestone_interval: chrono::Duration,
    /// How often a shipment at sea with a distant ETA is polled.
    pub tracking_poll_at_sea_interval: chrono::Duration,
    /// How often the scheduler looks for due polls.
    pub scheduler_tick: std::time::Duration,
    /// Runs the process's clock this many times faster than real time (demos only).
    pub demo_time_scale: u32,
    /// The largest document accepted (413 beyond).
    pub max_document_bytes: usize,
    /// Signs download links and direct uploads: the key of `signing_secret`, or `None`
    /// when that is empty: then a secret generated once is kept in the database
    /// ([`Signer`](crate::parts::documents::signing::Signer)).
    pub signing_key: Option<crate::parts::documents::signing::SigningKey>,
    /// How long a signed download or upload link holds.
    pub signed_url_ttl: chrono::Duration,
    /// Real carriers' DCSA connections (`[carriers.SCAC]` in the config file).
    pub carriers: Vec<CarrierConfig>,
    /// Container terminals' connections (`[terminals.<name>]`, named after their profile or
    /// naming it with `profile`), sorted by name; the sandbox terminal is built in and never
    /// listed.
    pub terminals: Vec<TerminalConfig>,
    /// AIS ingest and vessel settings.
    pub ais: AisConfig,
    /// Bounds on connections, uploads' extraction and unauthenticated clients.
    pub limits: crate::limits::Limits,
    /// Documents received by email.
    pub email: EmailConfig,
    /// EDI channels the server watches itself (`[[edi.inbound]]` folders).
    pub edi: EdiConfig,
}

fn invalid(key: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError {
        setting: format!("TIDEMARK_{}", key.to_uppercase()),
        reason: reason.into(),
    }
}

impl Config {
    /// How often each priority of tracked shipment is polled.
    pub fn poll_intervals(&self) -> tidemark_domain::carriers::PollIntervals {
        tidemark_domain::carriers::PollIntervals {
            near_milestone: self.tracking_poll_near_milestone_interval,
            routine: self.tracking_poll_interval,
            at_sea: self.tracking_poll_at_sea_interval,
        }
    }

    /// Reads defaults, the optional file and the environment.
    pub fn load(file: Option<&Path>) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Toml::string(DEFAULTS));
        if let Some(file) = file {
            if !file.exists() {
                return Err(ConfigError {
                    setting: "--config".to_owned(),
                    reason: format!("{} does not exist", file.display()),
                });
            }
            figment = figment.merge(upper_case_scacs(Toml::file(file))?);
        }
        figment = figment.merge(environment());
        for (key, value) in text_environment() {
            figment = figment.merge(Serialized::default(&key, value));
        }
        Self::from_figment(&figment)
    }

    /// Defaults with overrides given as `(key, value)` pairs; used by tests and benchmarks,
    /// which must not read the environment.
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Toml::string(DEFAULTS));
        for (key, value) in pairs {
            figment = figment.merge(Toml::string(&format!("{key} = {}", toml_value(value))));
        }
        Self::from_figment(&figment)
    }

    fn from_figment(figment: &Figment) -> Result<Self, ConfigError> {
        let raw: RawConfig = figment.extract().map_err(|error| {
            // Named as the environment variable: `__` between a table and its keys.
            let key = error.path.join("__");
            ConfigError {
                setting: if key.is_empty() {
                    "configuration".to_owned()
                } else {
                    format!("TIDEMARK_{}", key.to_uppercase())
                },
                reason: error.kind.to_string(),
            }
        })?;
        if let Some(key) = raw.unknown.keys().next() {
            return Err(invalid(key, format!("unknown setting `{key}`")));
        }
        raw.validate()
    }
}

/// `TIDEMARK_*` variables, `__` nesting like a table does in the file:
/// `TIDEMARK_CARRIERS__MAEU__BASE_URL` is `base_url` of `[carriers.MAEU]`.
fn environment() -> Env {
    Env::prefixed("TIDEMARK_")
        .ignore(&["config", "test_postgres_url"])
        .filter(|key| !is_text_key(key))
        .lowercase(false)
        .map(environment_key)
}

fn is_carrier_key(key: &UncasedStr) -> bool {
    key.as_str().to_lowercase().starts_with("carriers__")
}

fn is_terminal_key(key: &UncasedStr) -> bool {
    key.as_str().to_lowercase().starts_with("terminals__")
}

/// Variables whose values are plain text whatever they look like: a carrier's, a
/// terminal's, and the IMAP mailbox's user and password.
fn is_text_key(key: &UncasedStr) -> bool {
    is_carrier_key(key)
        || is_terminal_key(key)
        || ["email__imap_username", "email__imap_password"]
            .iter()
            .any(|text| key.as_str().eq_ignore_ascii_case(text))
        || is_edi_folder_text_key(key)
}

/// A watched EDI folder's `dir` or `account`, a code table's `sender` or `file`, or an SFTP
/// mailbox's text settings (host, user, password, key, folder, …), given entry by entry
/// (`TIDEMARK_EDI__INBOUND__0__DIR`, `TIDEMARK_EDI__SFTP__0__PASSWORD`): a path, a name, an
/// id or a secret, whatever it looks like.
fn is_edi_folder_text_key(key: &UncasedStr) -> bool {
    let key = key.as_str().to_lowercase();
    (key.starts_with("edi__inbound__") && (key.ends_with("__dir") || key.ends_with("__account")))
        || (key.starts_with("edi__code_tables__")
            && (key.ends_with("__sender") || key.ends_with("__file")))
        || (key.starts_with("edi__sftp__")
            && sftp::TEXT_KEYS
                .iter()
                .any(|text| key.ends_with(&format!("__{text}"))))
}

/// `TIDEMARK_CARRIERS__*` and the IMAP credentials as `(key path, text)`: plain text (a
/// secret such as `[abc]` or `0123` stays as written), read by their checks.
fn text_environment() -> Vec<(String, String)> {
    Env::prefixed("TIDEMARK_")
        .filter(is_text_key)
        .lowercase(false)
        .map(environment_key)
        .iter()
        .map(|(key, value)| (key.as_str().to_owned(), value))
        .collect()
}

/// A variable's name (without the prefix) as a key path: segments split on `__`,
/// lower-cased, except the SCAC of a carrier, which is upper-cased as in
/// [`upper_case_scacs`] so both forms name the same carrier.
fn environment_key(name: &UncasedStr) -> Uncased<'_> {
    let segments = name
        .as_str()
        .split("__")
        .enumerate()
        .map(|(index, segment)| {
            if index == 1 && name.as_str().to_lowercase().starts_with("carriers__") {
                segment.trim().to_uppercase()
            } else {
                segment.trim().to_lowercase()
            }
        })
        .collect::<Vec<_>>();
    segments.join(".").into()
}

/// The provider's data with the SCACs under `carriers` upper-cased, so `[carriers.maeu]`
/// in a file and `TIDEMARK_CARRIERS__MAEU__*` merge into one carrier; likewise the profile
/// ids under `terminals` lower-cased (`[terminals.Port_Of_Virginia]`).
fn upper_case_scacs(provider: impl Provider) -> Result<Serialized<Dict>, ConfigError> {
    let mut data = provider.data().map_err(|error| ConfigError {
        setting: "--config".to_owned(),
        reason: error.to_string(),
    })?;
    let mut dict = data.remove(&Profile::Default).unwrap_or_default();
    if let Some(Value::Dict(tag, carriers)) = dict.remove("carriers") {
        let mut upper = Dict::new();
        for (scac, carrier) in carriers {
            let key = scac.trim().to_uppercase();
            if upper.insert(key.clone(), carrier).is_some() {
                return Err(invalid(
                    &format!("carriers__{key}"),
                    "the carrier is configured twice",
                ));
            }
        }
        dict.insert("carriers".to_owned(), Value::Dict(tag, upper));
    }
    terminals::normalize_ids(&mut dict)?;
    Ok(Serialized::defaults(dict))
}

/// Quotes a value for TOML unless it is a number or boolean.
fn toml_value(value: &str) -> String {
    if value.parse::<i64>().is_ok() || value == "true" || value == "false" {
        value.to_owned()
    } else {
        format!("{value:?}")
    }
}

impl RawConfig {
    fn validate(self) -> Result<Config, ConfigError> {
        let listen: SocketAddr = self.listen.parse().map_err(|_| {
            invalid(
                "listen",
                format!("{:?} is not a host:port address", self.listen),
            )
        })?;
        let database_url = parse_database_url(&self.database_url)?;
        let storage_url = Url::parse(&self.storage_url)
            .ok()
            .filter(|url| matches!(url.scheme(), "file" | "s3" | "memory"))
            .ok_or_else(|| {
                invalid(
                    "storage_url",
                    "expected file://DIR, s3://BUCKET/PREFIX or memory://",
                )
            })?;
        let public_url = if self.public_url.trim().is_empty() {
            format!("http://{listen}")
        } else {
            let url = Url::parse(self.public_url.trim())
                .ok()
                .filter(|url| matches!(url.scheme(), "http" | "https") && url.has_host())
                .ok_or_else(|| invalid("public_url", "expected an absolute http(s) URL"))?;
            url.as_str().trim_end_matches('/').to_owned()
        };
        if self.rate_limit_per_minute == 0 {
            return Err(invalid("rate_limit_per_minute", "must be at least 1"));
        }
        let log_format = match self.log_format.as_str() {
            "json" => LogFormat::Json,
            "pretty" => LogFormat::Pretty,
            other => {
                return Err(invalid(
                    "log_format",
                    format!("{other:?} is not json or pretty"),
                ));
            }
        };
        if tracing_subscriber::EnvFilter::try_new(&self.log_level).is_err() {
            return Err(invalid("log_level", "not a valid tracing filter"));
        }
        positive("max_body_bytes", self.max_body_bytes)?;
        positive("request_timeout_seconds", self.request_timeout_seconds)?;
        positive("database_max_connections", self.database_max_connections)?;
        positive("worker_concurrency", self.worker_concurrency)?;
        positive("job_lease_seconds", self.job_lease_seconds)?;
        positive("job_heartbeat_seconds", self.job_heartbeat_seconds)?;
        positive("job_timeout_seconds", self.job_timeout_seconds)?;
        if self.job_lease_seconds <= self.job_heartbeat_seconds {
            return Err(invalid(
                "job_lease_seconds",
                format!(
                    "must be longer than job_heartbeat_seconds ({}), or living workers lose \
                     their jobs between heartbeats",
                    self.job_heartbeat_seconds
                ),
            ));
        }
        positive("job_poll_milliseconds", self.job_poll_milliseconds)?;
        positive("tracking_poll_seconds", self.tracking_poll_seconds)?;
        positive(
            "tracking_poll_near_milestone_seconds",
            self.tracking_poll_near_milestone_seconds,
        )?;
        positive(
            "tracking_poll_at_sea_seconds",
            self.tracking_poll_at_sea_seconds,
        )?;
        positive("scheduler_tick_seconds", self.scheduler_tick_seconds)?;
        positive("demo_time_scale", self.demo_time_scale)?;
        positive(
            "ais_position_interval_seconds",
            self.ais_position_interval_seconds,
        )?;
        positive("ais_retention_days", self.ais_retention_days)?;
        positive("ais_batch_size", self.ais_batch_size)?;
        if !(self.vessel_service_speed_knots.is_finite()
            && (1.0..=40.0).contains(&self.vessel_service_speed_knots))
        {
            return Err(invalid(
                "vessel_service_speed_knots",
                "must be between 1 and 40",
            ));
        }
        let ais = AisConfig {
            sources: parse_ais_sources(&self.ais_sources)?,
            position_interval: seconds(self.ais_position_interval_seconds),
            retention_days: self.ais_retention_days,
            batch_size: self.ais_batch_size,
            sandbox_interval: (self.sandbox_ais_seconds > 0)
                .then(|| std::time::Duration::from_secs(self.sandbox_ais_seconds)),
            service_speed_knots: self.vessel_service_speed_knots,
        };
        positive("max_document_bytes", self.max_document_bytes)?;
        positive("signed_url_seconds", self.signed_url_seconds)?;
        crate::parts::documents::storage::Storage::from_url(&storage_url)
            .map_err(|error| invalid("storage_url", error.to_string()))?;
        let carriers = self
            .carriers
            .into_iter()
            .map(|(scac, raw)| carriers::validate_carrier(&scac, raw))
            .collect::<Result<Vec<_>, _>>()?;
        let terminals = self
            .terminals
            .into_iter()
            .map(|(id, raw)| terminals::validate_terminal(&id, raw))
            .collect::<Result<Vec<_>, _>>()?;
        terminals::refuse_shared_accounts(&terminals)?;
        let sandbox_carrier_url = match self.sandbox_carrier_url.trim() {
            "" => None,
            url => Some(
                Url::parse(url)
                    .ok()
                    .filter(|url| matches!(url.scheme(), "http" | "https"))
                    .ok_or_else(|| invalid("sandbox_carrier_url", "expected an http(s) URL"))?,
            ),
        };
        Ok(Config {
            listen,
            database_url,
            storage_url,
            public_url,
            webhooks_allow_private: self.webhooks_allow_private,
            webhook_egress_ips: parse_egress_ips(&self.webhook_egress_ips)?,
            rate_limit_per_minute: self.rate_limit_per_minute,
            log_format,
            log_level: self.log_level,
            max_body_bytes: self.max_body_bytes,
            request_timeout: std::time::Duration::from_secs(self.request_timeout_seconds),
            auth_cache_ttl: seconds(self.auth_cache_seconds),
            database_max_connections: self.database_max_connections,
            database_shipment_cache_entries: self.database_shipment_cache_entries,
            worker_concurrency: self.worker_concurrency,
            job_lease: seconds(self.job_lease_seconds),
            job_heartbeat: std::time::Duration::from_secs(self.job_heartbeat_seconds),
            job_time_limit: std::time::Duration::from_secs(self.job_timeout_seconds),
            job_poll_interval: std::time::Duration::from_millis(self.job_poll_milliseconds),
            bench_routes: self.bench_routes,
            sandbox_carrier_url,
            tracking_poll_interval: seconds(self.tracking_poll_seconds),
            tracking_poll_near_milestone_interval: seconds(
                self.tracking_poll_near_milestone_seconds,
            ),
            tracking_poll_at_sea_interval: seconds(self.tracking_poll_at_sea_seconds),
            scheduler_tick: std::time::Duration::from_secs(self.scheduler_tick_seconds),
            demo_time_scale: self.demo_time_scale,
            max_document_bytes: self.max_document_bytes,
            signing_key: Some(self.signing_secret.trim())
                .filter(|s| !s.is_empty())
                .map(crate::parts::documents::signing::SigningKey::from_secret),
            signed_url_ttl: seconds(self.signed_url_seconds),
            carriers,
            terminals,
            ais,
            limits: self.limits.validate()?,
            email: self.email.validate()?,
            edi: self.edi.validate()?,
        })
    }
}

fn seconds(value: u64) -> chrono::Duration {
    chrono::Duration::seconds(i64::try_from(value).unwrap_or(i64::MAX / 1000))
}

fn positive<T: PartialEq + Default>(key: &str, value: T) -> Result<(), ConfigError> {
    if value == T::default() {
        Err(invalid(key, "must be greater than zero"))
    } else {
        Ok(())
    }
}

fn parse_database_url(value: &str) -> Result<DatabaseUrl, ConfigError> {
    if value.starts_with("postgres://") || value.starts_with("postgresql://") {
        return Url::parse(value)
            .ok()
            .filter(Url::has_host)
            .map(|_| DatabaseUrl::Postgres(value.to_owned()))
            .ok_or_else(|| invalid("database_url", "not a valid postgres:// URL"));
    }
    tidemark_store_sqlite::SqliteStore::path_from_url(value)
        .map(DatabaseUrl::Sqlite)
        .ok_or_else(|| {
            invalid(
                "database_url",
                "expected sqlite://PATH or postgres://USER@HOST:PORT/DB",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tidemark_carriers::profile::Protocol;

    #[test]
    fn defaults_are_the_documented_embedded_setup() {
        let config = Config::from_pairs(&[]).unwrap();

        assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(
            config.database_url,
            DatabaseUrl::Sqlite(PathBuf::from("./tidemark-data/tidemark.db"))
        );
        assert_eq!(
            config.storage_url.as_str(),
            "file://./tidemark-data/documents"
        );
        assert_eq!(config.public_url, "http://127.0.0.1:8080");
        assert!(!config.webhooks_allow_private);
        assert_eq!(config.rate_limit_per_minute, 100);
    }

    #[test]
    fn a_postgres_url_selects_postgres() {
        let config =
            Config::from_pairs(&[("database_url", "postgres://u:secret@db:5432/tidemark")])
                .unwrap();

        assert!(matches!(config.database_url, DatabaseUrl::Postgres(_)));
        assert!(!format!("{config:?}").contains("secret"));
    }

    #[test]
    fn an_unknown_database_scheme_names_the_setting() {
        let error = Config::from_pairs(&[("database_url", "mysql://x")]).unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_DATABASE_URL");
    }

    #[test]
    fn a_malformed_listen_address_names_the_setting() {
        let error = Config::from_pairs(&[("listen", "localhost")]).unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_LISTEN");
    }

    #[test]
    fn a_value_of_the_wrong_type_names_the_setting() {
        let error = Config::from_pairs(&[("rate_limit_per_minute", "lots")]).unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_RATE_LIMIT_PER_MINUTE");
    }

    #[test]
    fn a_carrier_is_configured_with_a_header_credential() {
        let figment = Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(
            "[carriers.maeu]\nbase_url = \"https://api.example.com/track\"\n\
             auth_header = \"Consumer-Key\"\nauth_value = \"hunter2\"",
        ));

        let config = Config::from_figment(&figment).unwrap();

        assert_eq!(config.carriers.len(), 1);
        assert_eq!(config.carriers[0].scac, "MAEU");
        assert!(matches!(
            config.carriers[0].auth,
            CarrierAuth::Header { .. }
        ));
        assert!(!format!("{config:?}").contains("hunter2"));
    }

    #[test]
    fn a_carrier_with_half_a_credential_names_the_setting() {
        let figment = Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(
            "[carriers.MAEU]\nbase_url = \"https://api.example.com\"\nauth_header = \"X\"",
        ));

        let error = Config::from_figment(&figment).unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_CARRIERS__MAEU__AUTH_HEADER");
    }

    #[test]
    fn a_carriers_budget_is_read_and_a_zero_budget_names_the_setting() {
        let budgeted = Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(
            "[carriers.KMTU]\nbase_url = \"https://api.example.com\"\n\
             requests_per_minute = 10\nrequests_per_day = 6000",
        ));
        let zero = Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(
            "[carriers.KMTU]\nbase_url = \"https://api.example.com\"\nrequests_per_day = 0",
        ));

        let config = Config::from_figment(&budgeted).unwrap();
        let error = Config::from_figment(&zero).unwrap_err();

        assert_eq!(
            config.carriers[0].budget,
            tidemark_carriers::profile::RateBudget {
                per_minute: Some(10),
                per_day: Some(6000),
            }
        );
        assert_eq!(error.setting, "TIDEMARK_CARRIERS__KMTU__REQUESTS_PER_DAY");
    }

    fn carrier(toml: &str) -> Result<CarrierConfig, ConfigError> {
        let figment = Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(toml));
        Config::from_figment(&figment).map(|config| config.carriers[0].clone())
    }

    #[test]
    fn hapag_lloyd_needs_only_its_client_id_and_secret() {
        let hlcu =
            carrier("[carriers.HLCU]\nclient_id = \"id\"\nclient_secret = \"hunter2\"").unwrap();

        assert_eq!(hlcu.protocol, tidemark_carriers::profile::Protocol::Dcsa22);
        assert_eq!(hlcu.base_url.as_str(), "https://api.hlag.com/hlag/external");
        assert_eq!(
            hlcu.auth,
            CarrierAuth::Headers(vec![
                ("X-IBM-Client-Id".to_owned(), "id".to_owned()),
                ("X-IBM-Client-Secret".to_owned(), "hunter2".to_owned()),
            ])
        );
        assert_eq!(
            hlcu.budget,
            tidemark_carriers::profile::RateBudget {
                per_minute: Some(10),
                per_day: Some(6000)
            }
        );
        assert!(!format!("{hlcu:?}").contains("hunter2"));
    }

    #[test]
    fn a_missing_credential_stops_start_up_with_its_name() {
        let error = carrier("[carriers.HLCU]\nclient_id = \"id\"").unwrap_err();
        let nothing = carrier("[carriers.HLCU]\nrequests_per_minute = 5").unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_CARRIERS__HLCU__CLIENT_SECRET");
        assert_eq!(nothing.setting, "TIDEMARK_CARRIERS__HLCU__CLIENT_ID");
    }

    #[test]
    fn every_profile_fact_can_be_overridden_per_scac() {
        let hlcu = carrier(
            "[carriers.HLCU]\nclient_id = \"id\"\nclient_secret = \"s\"\n\
             base_url = \"http://127.0.0.1:9/hl\"\nrequests_per_minute = 150\n\
             requests_per_day = 100000\ndcsa_version = \"3.0\"",
        )
        .unwrap();
        let bad_version = carrier(
            "[carriers.HLCU]\nclient_id = \"i\"\nclient_secret = \"s\"\ndcsa_version = \"2.1\"",
        )
        .unwrap_err();

        assert_eq!(hlcu.base_url.as_str(), "http://127.0.0.1:9/hl");
        assert_eq!(hlcu.protocol, tidemark_carriers::profile::Protocol::Dcsa30);
        assert_eq!(hlcu.budget.per_minute, Some(150));
        assert_eq!(hlcu.budget.per_day, Some(100_000));
        assert_eq!(bad_version.setting, "TIDEMARK_CARRIERS__HLCU__DCSA_VERSION");
    }

    #[test]
    fn an_unknown_key_of_a_profiled_carrier_is_refused_with_its_name() {
        let error = carrier(
            "[carriers.HLCU]\nclient_id = \"i\"\nclient_secret = \"s\"\nclient_secert = \"s\"",
        )
        .unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_CARRIERS__HLCU__CLIENT_SECERT");
    }

    #[test]
    fn a_line_whose_api_address_is_unpublished_asks_for_its_base_url() {
        let error =
            carrier("[carriers.EGLV]\nclient_id = \"i\"\nclient_secret = \"s\"").unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_CARRIERS__EGLV__BASE_URL");
    }

    #[test]
    fn an_oauth2_line_takes_its_token_url_from_the_profile_and_serves_its_brands() {
        let cmdu = carrier("[carriers.CMDU]\nclient_id = \"i\"\nclient_secret = \"s\"").unwrap();
        let brand = carrier("[carriers.ANNU]\napi_key = \"k\"").unwrap_err();

        assert!(matches!(
            &cmdu.auth,
            CarrierAuth::OAuth2 { token_url, .. }
                if token_url.as_str() == "https://auth.cma-cgm.com/as/token.oauth2"
        ));
        assert_eq!(cmdu.serves, ["11DX", "ANNU", "APLU"]);
        assert_eq!(brand.setting, "TIDEMARK_CARRIERS__ANNU__API_KEY");
        assert!(brand.reason.contains("[carriers.CMDU]"), "{}", brand.reason);
    }

    #[test]
    fn maersk_takes_its_consumer_key_and_cosco_its_two_keys() {
        let maeu = carrier("[carriers.MAEU]\nconsumer_key = \"k\"").unwrap();
        let cosu = carrier("[carriers.COSU]\napi_key = \"a\"\nsecret_key = \"s\"").unwrap();

        assert_eq!(
            maeu.auth,
            CarrierAuth::Headers(vec![("Consumer-Key".to_owned(), "k".to_owned())])
        );
        assert_eq!(cosu.auth.kind(), "cosco-hmac");
        assert_eq!(cosu.budget.per_day, Some(1000));
    }

    #[test]
    fn a_line_without_an_api_cannot_be_configured_with_credentials_alone() {
        let error = carrier("[carriers.WHLC]\napi_key = \"k\"").unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_CARRIERS__WHLC__API_KEY");
    }

    #[test]
    fn a_private_api_of_a_line_without_a_public_one_is_dcsa_2_2_in_the_generic_form() {
        let whlc = carrier(
            "[carriers.WHLC]\nbase_url = \"https://gateway.example/whl\"\n\
             auth_header = \"X-Key\"\nauth_value = \"k\"",
        )
        .unwrap();

        assert_eq!(whlc.protocol, tidemark_carriers::profile::Protocol::Dcsa22);
        assert_eq!(whlc.auth.kind(), "header");
    }

    #[test]
    fn the_poll_intervals_by_priority_are_settings() {
        let config = Config::from_pairs(&[
            ("tracking_poll_near_milestone_seconds", "600"),
            ("tracking_poll_at_sea_seconds", "43200"),
        ])
        .unwrap();

        let intervals = config.poll_intervals();

        assert_eq!(intervals.near_milestone, chrono::Duration::minutes(10));
        assert_eq!(intervals.routine, chrono::Duration::hours(1));
        assert_eq!(intervals.at_sea, chrono::Duration::hours(12));
        assert_eq!(
            Config::from_pairs(&[("tracking_poll_at_sea_seconds", "0")])
                .unwrap_err()
                .setting,
            "TIDEMARK_TRACKING_POLL_AT_SEA_SECONDS"
        );
    }

    #[test]
    fn an_unknown_carrier_is_refused() {
        let figment = Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(
            "[carriers.ZZZZ]\nbase_url = \"https://x.example\"",
        ));

        let error = Config::from_figment(&figment).unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_CARRIERS__ZZZZ__BASE_URL");
    }

    #[test]
    fn an_environment_variable_names_a_carrier_key_as_the_file_does() {
        assert_eq!(
            environment_key(UncasedStr::new("CARRIERS__maeu__BASE_URL")).as_str(),
            "carriers.MAEU.base_url"
        );
        assert_eq!(
            environment_key(UncasedStr::new("RATE_LIMIT_PER_MINUTE")).as_str(),
            "rate_limit_per_minute"
        );
    }

    #[test]
    fn the_environment_overrides_a_carrier_of_the_file_whatever_the_case_of_its_scac() {
        let file = upper_case_scacs(Toml::string(
            "[carriers.maeu]\nbase_url = \"https://file.example\"\n\
             auth_header = \"Consumer-Key\"\nauth_value = \"k\"",
        ))
        .unwrap();
        // What `TIDEMARK_CARRIERS__MAEU__BASE_URL` becomes.
        let environment = Serialized::global("carriers.MAEU.base_url", "https://env.example");
        let figment = Figment::from(Toml::string(DEFAULTS))
            .merge(file)
            .merge(environment);

        let config = Config::from_figment(&figment).unwrap();

        assert_eq!(config.carriers.len(), 1);
        assert_eq!(config.carriers[0].base_url.as_str(), "https://env.example/");
        assert!(matches!(
            config.carriers[0].auth,
            CarrierAuth::Header { .. }
        ));
    }

    #[test]
    fn an_unknown_key_of_a_carrier_is_refused_with_its_name() {
        let figment = Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(
            "[carriers.MAEU]\nbase_url = \"https://x.example\"\nbase_ulr = \"typo\"",
        ));

        let error = Config::from_figment(&figment).unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_CARRIERS__MAEU__BASE_ULR");
    }

    #[test]
    fn a_carriers_dcsa_version_is_2_2_unless_set_to_3_0_quoted_or_not() {
        let config = |version: &str| {
            let figment = Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(&format!(
                "[carriers.KMTU]\nbase_url = \"https://x.example\"\n{version}"
            )));
            Config::from_figment(&figment).map(|config| config.carriers[0].protocol)
        };

        assert_eq!(config("").unwrap(), Protocol::Dcsa22);
        assert_eq!(config("dcsa_version = \"2.2\"").unwrap(), Protocol::Dcsa22);
        assert_eq!(config("dcsa_version = \"3.0\"").unwrap(), Protocol::Dcsa30);
        assert_eq!(config("dcsa_version = 3.0").unwrap(), Protocol::Dcsa30);
        assert_eq!(config("dcsa_version = 2.2").unwrap(), Protocol::Dcsa22);
        assert_eq!(
            config("dcsa_version = \"3.0-beta-1\"").unwrap(),
            Protocol::Dcsa30Beta1
        );
    }

    #[test]
    fn maersk_speaks_3_0_beta_1_and_cma_cgm_has_its_own_events_path() {
        let maersk = carrier("[carriers.MAEU]\nconsumer_key = \"k\"").unwrap();
        let cma = carrier("[carriers.CMDU]\napi_key = \"k\"").unwrap();

        assert_eq!(maersk.protocol, Protocol::Dcsa30Beta1);
        assert_eq!(maersk.events_path, None);
        assert_eq!(
            cma.events_path.as_deref(),
            Some("/operation/trackandtrace/v1/events")
        );
    }

    #[test]
    fn an_events_path_overrides_the_profiles_and_a_bad_one_names_the_setting() {
        let given =
            carrier("[carriers.CMDU]\napi_key = \"k\"\nevents_path = \"/tnt/v2/events\"").unwrap();
        let bad =
            carrier("[carriers.CMDU]\napi_key = \"k\"\nevents_path = \"/../x?y=1\"").unwrap_err();

        assert_eq!(given.events_path.as_deref(), Some("/tnt/v2/events"));
        assert_eq!(bad.setting, "TIDEMARK_CARRIERS__CMDU__EVENTS_PATH");
    }

    #[test]
    fn a_dcsa_version_we_do_not_speak_names_the_setting() {
        for version in ["\"2.1\"", "3.1", "\"three\"", "true"] {
            let figment = Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(&format!(
                "[carriers.KMTU]\nbase_url = \"https://x.example\"\ndcsa_version = {version}"
            )));

            let error = Config::from_figment(&figment).unwrap_err();

            assert_eq!(
                error.setting, "TIDEMARK_CARRIERS__KMTU__DCSA_VERSION",
                "{version}"
            );
        }
    }

    #[test]
    fn webhook_egress_ips_are_empty_by_default() {
        let config = Config::from_pairs(&[]).unwrap();

        assert!(config.webhook_egress_ips.is_empty());
    }

    #[test]
    fn webhook_egress_ips_are_read_from_a_list_or_a_comma_separated_variable() {
        let file = Figment::from(Toml::string(DEFAULTS)).merge(Toml::string(
            "webhook_egress_ips = [\"203.0.113.7\", \"2001:db8::1\"]",
        ));
        // What `TIDEMARK_WEBHOOK_EGRESS_IPS=203.0.113.7, 2001:db8::1,203.0.113.7` becomes.
        let environment = Figment::from(Toml::string(DEFAULTS)).merge(Serialized::global(
            "webhook_egress_ips",
            "203.0.113.7, 2001:db8::1,203.0.113.7",
        ));

        for figment in [file, environment] {
            let config = Config::from_figment(&figment).unwrap();
            let ips: Vec<String> = config
                .webhook_egress_ips
                .iter()
                .map(ToString::to_string)
                .collect();
            assert_eq!(ips, ["203.0.113.7", "2001:db8::1"]);
        }
    }

    #[test]
    fn the_dcsa_version_can_come_from_the_environment() {
        // What `TIDEMARK_CARRIERS__KMTU__DCSA_VERSION=3.0` becomes: the environment provider
        // reads the value as TOML would, here a number.
        let value: Value = "3.0".parse().unwrap();
        let figment = Figment::from(Toml::string(DEFAULTS))
            .merge(Serialized::global(
                "carriers.KMTU.base_url",
                "https://x.example",
            ))
            .merge(Serialized::global("carriers.KMTU.dcsa_version", value));

        let config = Config::from_figment(&figment).unwrap();

        assert_eq!(config.carriers[0].protocol, Protocol::Dcsa30);
    }

    #[test]
    fn a_webhook_egress_ip_that_is_not_an_address_is_refused_with_the_settings_name() {
        let error =
            Config::from_pairs(&[("webhook_egress_ips", "203.0.113.7,example.com")]).unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_WEBHOOK_EGRESS_IPS");
        assert!(error.reason.contains("example.com"), "{}", error.reason);
    }

    #[test]
    fn an_unknown_setting_is_refused_with_its_name() {
        let error = Config::from_pairs(&[("rate_limit_per_hour", "5")]).unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_RATE_LIMIT_PER_HOUR");
    }

    #[test]
    fn a_lease_no_longer_than_the_heartbeat_names_the_lease() {
        let error =
            Config::from_pairs(&[("job_lease_seconds", "3"), ("job_heartbeat_seconds", "3")])
                .unwrap_err();

        assert_eq!(error.setting, "TIDEMARK_JOB_LEASE_SECONDS");
    }

    #[test]
    fn the_public_url_loses_its_trailing_slash() {
        let config = Config::from_pairs(&[("public_url", "https://track.example.com/")]).unwrap();

        assert_eq!(config.public_url, "https://track.example.com");
    }
}
