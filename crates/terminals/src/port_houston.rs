//! Port Houston's container availability on its Navis-cloud data-integration APIs
//! (Barbours Cut, Bayport; SOURCES.md §A.2 #3: high for the service names, the OAuth2 token
//! endpoint and the HTTP 200 `LoginError`; **low for the request and answer shapes**, which
//! are in a PDF on the port's page and were not read).
//!
//! One lookup is one call: `GET {base_url}/GetContainerAvailability?unitId=A,B` (up to 50)
//! with an OAuth2 client-credentials bearer token. The answer is read as an array of units
//! (or one under `units`, `containers`, `data` or `result`), keys tried in turn:
//!
//! | keys tried | becomes |
//! | --- | --- |
//! | `unitId`, `unitNbr`, `containerNumber` | the container |
//! | `available`, `isAvailable`, `availableForPickup` (yes/no) or `availability` (text) | `availability` |
//! | `roadImpediments`, `impediments`, `holds` | `holds` ("road impediments" are holds) |
//! | `lastFreeDay`, `lfd`, `storageLastFreeDay` | `last_free_day` |
//! | `yardPosition`, `position`, `location` | `location` |
//! | `timeOut`, `outTime`, `gateOutTime` | `full_out_at` |
//! | `appointmentTime`, `apptTime` | `appointment_at` |
//!
//! Port Houston's legacy LYNX service answers refused credentials with HTTP **200** and an
//! XML `<LoginError>`; any XML answer holding one is read as refused credentials, whichever
//! service sent it, never as data. Other XML is `Drift`.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde_json::Value;
use tidemark_domain::Clock;
use url::Url;

use crate::connector::{ContainerQuery, TerminalConnector, TerminalError, check_batch};
use crate::http::{self, Answer, Credentials, drift, excerpt};
use crate::profile::{ConfigError, Configured, TerminalProfile};
use crate::read;
use crate::status::TerminalStatus;

/// The Port Houston connector.
pub struct PortHouston {
    configured: Configured,
    /// `{base_url}/GetContainerAvailability`.
    url: Url,
    credentials: Credentials,
    http: reqwest::Client,
    clock: Arc<dyn Clock>,
}

impl PortHouston {
    pub fn new(configured: Configured, clock: Arc<dyn Clock>) -> Result<Self, ConfigError> {
        let missing = || ConfigError::Missing {
            profile: configured.profile.id.clone(),
            key: "base_url".to_owned(),
        };
        let url = http::url_under(
            configured.base_url.as_ref().ok_or_else(missing)?,
            &["GetContainerAvailability"],
        );
        Ok(Self {
            credentials: Credentials::of(&configured, Arc::clone(&clock))?,
            http: http::client(&configured.profile.id)?,
            url,
            configured,
            clock,
        })
    }
}

#[async_trait]
impl TerminalConnector for PortHouston {
    fn profile(&self) -> &TerminalProfile {
        &self.configured.profile
    }

    async fn lookup(&self, batch: &[ContainerQuery]) -> Result<Vec<TerminalStatus>, TerminalError> {
        check_batch(self.profile(), batch)?;
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let units: Vec<&str> = batch.iter().map(|q| q.container.as_str()).collect();
        let mut url = self.url.clone();
        url.query_pairs_mut()
            .append_pair("unitId", &units.join(","));
        let request = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json");
        let answer = self.credentials.send(&self.http, request).await?;
        login_error(&answer)?;
        let answer = answer.success()?;
        let checked_at = self.clock.now();
        parse(
            &answer.json()?,
            batch,
            checked_at,
            self.configured.time_zone,
        )
    }
}

/// `CredentialsRefused` for an answer that is an XML `LoginError`, whatever its status.
pub(crate) fn login_error(answer: &Answer) -> Result<(), TerminalError> {
    let text = String::from_utf8_lossy(&answer.body);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if text.starts_with('<') && text.contains("LoginError") {
        return Err(TerminalError::CredentialsRefused(format!(
            "Port Houston answered {} with a LoginError: {}",
            answer.status,
            excerpt(text.as_bytes())
        )));
    }
    Ok(())
}

/// The statuses in a `GetContainerAvailability` answer, for the containers of `batch`.
pub fn parse(
    answer: &Value,
    batch: &[ContainerQuery],
    checked_at: DateTime<Utc>,
    zone: Tz,
) -> Result<Vec<TerminalStatus>, TerminalError> {
    let items = read::items(answer, &["units", "containers", "data", "result"])
        .ok_or_else(|| drift("no array of units", answer.to_string().as_bytes()))?;
    let mut statuses = Vec::new();
    for item in items {
        let drift_here = |why: String| drift(&why, item.to_string().as_bytes());
        let container = read::field(item, &["unitId", "unitNbr", "containerNumber"])
            .and_then(read::container)
            .ok_or_else(|| drift_here("a unit without a readable unitId".to_owned()))?;
        let Some(query) = batch.iter().find(|q| q.container == container) else {
            continue;
        };
        let mut status = TerminalStatus::new(query.container.clone(), checked_at);
        if let Some(flag) = read::field(item, &["available", "isAvailable", "availableForPickup"]) {
            status.availability = read::flag(flag).map_err(drift_here)?;
        } else if let Some(text) = read::text_field(item, &["availability"]) {
            status.availability =
                Some(text.eq_ignore_ascii_case("available") || text.eq_ignore_ascii_case("yes"));
        }
        if let Some(holds) = read::field(item, &["roadImpediments", "impediments", "holds"]) {
            status.holds = read::holds(holds).map_err(drift_here)?;
        }
        if let Some(day) = read::field(item, &["lastFreeDay", "lfd", "storageLastFreeDay"]) {
            status.last_free_day = read::date(day).map_err(drift_here)?;
        }
        if let Some(at) = read::field(item, &["timeOut", "outTime", "gateOutTime"]) {
            status.full_out_at = read::instant(at, zone).map_err(drift_here)?;
        }
        if let Some(at) = read::field(item, &["appointmentTime", "apptTime"]) {
            status.appointment_at = read::instant(at, zone).map_err(drift_here)?;
        }
        status.location = read::text_field(item, &["yardPosition", "position", "location"]);
        status.raw = item.clone();
        statuses.push(status);
    }
    Ok(statuses)
}
