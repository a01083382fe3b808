//! The interface every terminal connector offers the server, its errors, and [`connect`],
//! which builds the adapter a profile's protocol names.
//!
//! A lookup asks about a batch of containers in one call. A batch larger than the profile's
//! batch size is refused ([`TerminalError::BatchTooLarge`]) rather than split: each call
//! spends the terminal's rate budget (and with APM Terminals, money), which the caller
//! counts, so the caller sizes its batches from [`TerminalProfile::batch_size`] and a
//! silent split would spend calls it did not count.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tidemark_domain::{Clock, ContainerNumber};

use crate::profile::{ConfigError, Profiles, Protocol, Settings, TerminalProfile};
use crate::status::TerminalStatus;
use crate::{apm_terminals, emodal, port_houston, port_of_virginia};

/// One container to look up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerQuery {
    pub container: ContainerNumber,
    /// Its bill of lading; required by sources whose profile lists `bill_of_lading` among
    /// its identifiers (the Port of Virginia), sent where the source takes it (eModal).
    pub bill_of_lading: Option<String>,
}

impl ContainerQuery {
    pub fn new(container: ContainerNumber, bill_of_lading: Option<String>) -> Self {
        Self {
            container,
            bill_of_lading: bill_of_lading
                .map(|bl| bl.trim().to_owned())
                .filter(|bl| !bl.is_empty()),
        }
    }
}

/// Why a lookup failed as a whole. A container the terminal does not know is no error: it
/// is simply absent from the lookup's answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TerminalError {
    /// The terminal refuses our credentials (401, 403, a token endpoint that rejects the
    /// client, Port Houston's HTTP 200 `LoginError`): an operator must fix them.
    #[error("the terminal refused our credentials: {0}")]
    CredentialsRefused(String),
    /// The terminal asks us to slow down: retry after `retry_after` (from `Retry-After`),
    /// or with backoff.
    #[error("rate limited by the terminal")]
    RateLimited { retry_after: Option<Duration> },
    /// The terminal could not be reached or answered with a server error: retry later.
    #[error("the terminal is unavailable: {0}")]
    Unavailable(String),
    /// The answer is not what the profile expects (another shape, a field that does not
    /// read, an endpoint that is not there): the profile or the adapter needs a look. The
    /// text says what was wrong and keeps the start of the answer.
    #[error("the terminal's answer is not what its profile expects: {0}")]
    Drift(String),
    /// The caller's bug: more containers than the profile's batch size.
    #[error("{size} containers in one lookup, but this terminal takes at most {limit}")]
    BatchTooLarge { size: usize, limit: usize },
    /// The caller's bug: the source needs the container's bill of lading, and the query
    /// has none.
    #[error("this terminal needs the bill of lading of {0}")]
    MissingBillOfLading(ContainerNumber),
}

impl TerminalError {
    /// A short name for the variant, for logs and reports.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::CredentialsRefused(_) => "credentials_refused",
            Self::RateLimited { .. } => "rate_limited",
            Self::Unavailable(_) => "unavailable",
            Self::Drift(_) => "drift",
            Self::BatchTooLarge { .. } => "batch_too_large",
            Self::MissingBillOfLading(_) => "missing_bill_of_lading",
        }
    }
}

/// A terminal connector.
#[async_trait]
pub trait TerminalConnector: Send + Sync {
    /// The profile in force: the reviewed facts with the operator's overrides.
    fn profile(&self) -> &TerminalProfile;

    /// What the terminal says about each container of `batch` it knows, in any order;
    /// containers it does not know are absent.
    async fn lookup(&self, batch: &[ContainerQuery]) -> Result<Vec<TerminalStatus>, TerminalError>;
}

/// Refuses a batch the profile does not allow: too large, or without a bill of lading
/// where the source needs one. Every adapter calls it first.
pub fn check_batch(
    profile: &TerminalProfile,
    batch: &[ContainerQuery],
) -> Result<(), TerminalError> {
    let limit = profile.batch_size();
    if batch.len() > limit {
        return Err(TerminalError::BatchTooLarge {
            size: batch.len(),
            limit,
        });
    }
    if profile.needs_bill_of_lading()
        && let Some(query) = batch.iter().find(|q| q.bill_of_lading.is_none())
    {
        return Err(TerminalError::MissingBillOfLading(query.container.clone()));
    }
    Ok(())
}

/// The connector of the embedded profile `profile_id` with the operator's `settings`.
///
/// The sandbox terminal is not built here: it needs to know when each container was
/// discharged, which only the server knows (see [`crate::sandbox::SandboxTerminal::new`]).
pub fn connect(
    profile_id: &str,
    settings: &Settings,
    clock: Arc<dyn Clock>,
) -> Result<Arc<dyn TerminalConnector>, ConfigError> {
    let profile = Profiles::embedded()
        .get(profile_id)
        .ok_or_else(|| ConfigError::UnknownProfile(profile_id.to_owned()))?;
    connect_profile(profile, settings, clock)
}

/// The connector of `profile` (embedded or not) with the operator's `settings`.
pub fn connect_profile(
    profile: &TerminalProfile,
    settings: &Settings,
    clock: Arc<dyn Clock>,
) -> Result<Arc<dyn TerminalConnector>, ConfigError> {
    let configured = profile.configure(settings)?;
    Ok(match configured.profile.protocol() {
        Some(Protocol::PortOfVirginia) => {
            Arc::new(port_of_virginia::PortOfVirginia::new(configured, clock)?)
        }
        Some(Protocol::ApmTerminals) => {
            Arc::new(apm_terminals::ApmTerminals::new(configured, clock)?)
        }
        Some(Protocol::PortHouston) => Arc::new(port_houston::PortHouston::new(configured, clock)?),
        Some(Protocol::EmodalSprintpass) => Arc::new(emodal::Emodal::new(configured, clock)?),
        Some(Protocol::Sandbox) | None => {
            return Err(ConfigError::Invalid {
                profile: profile.id.clone(),
                key: "protocol".to_owned(),
                reason: "is built with sandbox::SandboxTerminal::new, which takes the discharge \
                         times"
                    .to_owned(),
            });
        }
    })
}
