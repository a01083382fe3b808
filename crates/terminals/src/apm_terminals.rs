//! APM Terminals' Import Availability API (developer portal product 5; SOURCES.md §A.2 #2:
//! high for the product, its parameters and its display names, **low for the JSON keys**,
//! which sit behind the portal's sign-up).
//!
//! One lookup is one call for one facility: `GET {base_url}/import-availability?assetId=
//! A,B&facilityCode={facility_code}` with an OAuth2 client-credentials bearer token. A
//! connector serves the one facility its settings name (`facility_code`, a UN/LOCODE such as
//! `USLAX`), since the API takes one facility a call and the server knows each container's
//! terminal.
//!
//! The answer is read as an array of containers (or one under `containers`, `data`,
//! `items` or `importAvailability`). Each display name is tried under its likely keys:
//!
//! | display name | keys tried | becomes |
//! | --- | --- | --- |
//! | Container | `containerId`, `assetId`, `containerNumber`, `equipmentId` | the container |
//! | Ready for Delivery | `readyForDelivery`, `isReadyForDelivery` | `availability` |
//! | Container Holds | `containerHolds`, `holds` | `holds` |
//! | Storage Paid Through Date | `storagePaidThroughDate`, `storagePaidThrough` | `last_free_day` |
//! | Demurrage Owed | `demurrageOwed`, `demurrageAmount` | a demurrage fee when above zero |
//! | Appointment Date | `appointmentDate`, `appointmentDateTime` | `appointment_at` |
//! | Facility Out | `facilityOut`, `facilityOutDate`, `gateOutDate` | `full_out_at` |
//! | Yard Location | `yardLocation`, `location` | `location` |

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde_json::Value;
use tidemark_domain::Clock;
use url::Url;

use crate::connector::{ContainerQuery, TerminalConnector, TerminalError, check_batch};
use crate::http::{self, Credentials, drift};
use crate::profile::{ConfigError, Configured, TerminalProfile};
use crate::read;
use crate::status::{Fee, FeeKind, TerminalStatus};

/// The APM Terminals connector for one facility.
pub struct ApmTerminals {
    configured: Configured,
    /// `{base_url}/import-availability`.
    url: Url,
    facility_code: String,
    credentials: Credentials,
    http: reqwest::Client,
    clock: Arc<dyn Clock>,
}

impl ApmTerminals {
    /// Needs `facility_code` in the settings.
    pub fn new(configured: Configured, clock: Arc<dyn Clock>) -> Result<Self, ConfigError> {
        let missing = |key: &str| ConfigError::Missing {
            profile: configured.profile.id.clone(),
            key: key.to_owned(),
        };
        let url = http::url_under(
            configured
                .base_url
                .as_ref()
                .ok_or_else(|| missing("base_url"))?,
            &["import-availability"],
        );
        let facility_code = configured
            .facility_code
            .as_deref()
            .ok_or_else(|| missing("facility_code"))?
            .to_ascii_uppercase();
        Ok(Self {
            credentials: Credentials::of(&configured, Arc::clone(&clock))?,
            http: http::client(&configured.profile.id)?,
            url,
            facility_code,
            configured,
            clock,
        })
    }
}

#[async_trait]
impl TerminalConnector for ApmTerminals {
    fn profile(&self) -> &TerminalProfile {
        &self.configured.profile
    }

    async fn lookup(&self, batch: &[ContainerQuery]) -> Result<Vec<TerminalStatus>, TerminalError> {
        check_batch(self.profile(), batch)?;
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let assets: Vec<&str> = batch.iter().map(|q| q.container.as_str()).collect();
        let mut url = self.url.clone();
        url.query_pairs_mut()
            .append_pair("assetId", &assets.join(","))
            .append_pair("facilityCode", &self.facility_code);
        let request = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json");
        let answer = self
            .credentials
            .send(&self.http, request)
            .await?
            .success()?;
        let checked_at = self.clock.now();
        parse(
            &answer.json()?,
            batch,
            checked_at,
            self.configured.time_zone,
            self.profile().currency_code(),
        )
    }
}

/// The statuses in an Import Availability answer, for the containers of `batch`.
pub fn parse(
    answer: &Value,
    batch: &[ContainerQuery],
    checked_at: DateTime<Utc>,
    zone: Tz,
    currency_code: &str,
) -> Result<Vec<TerminalStatus>, TerminalError> {
    let items = read::items(
        answer,
        &["containers", "data", "items", "importAvailability"],
    )
    .ok_or_else(|| drift("no array of containers", answer.to_string().as_bytes()))?;
    let mut statuses = Vec::new();
    for item in items {
        let drift_here = |why: String| drift(&why, item.to_string().as_bytes());
        let container = read::field(
            item,
            &["containerId", "assetId", "containerNumber", "equipmentId"],
        )
        .and_then(read::container)
        .ok_or_else(|| drift_here("an item without a readable container number".to_owned()))?;
        let Some(query) = batch.iter().find(|q| q.container == container) else {
            continue;
        };
        let mut status = TerminalStatus::new(query.container.clone(), checked_at);
        if let Some(ready) = read::field(item, &["readyForDelivery", "isReadyForDelivery"]) {
            status.availability = read::flag(ready).map_err(drift_here)?;
        }
        if let Some(holds) = read::field(item, &["containerHolds", "holds"]) {
            status.holds = read::holds(holds).map_err(drift_here)?;
        }
        if let Some(day) = read::field(item, &["storagePaidThroughDate", "storagePaidThrough"]) {
            status.last_free_day = read::date(day).map_err(drift_here)?;
        }
        if let Some(owed) = read::field(item, &["demurrageOwed", "demurrageAmount"]) {
            let cents = read::cents(owed).map_err(drift_here)?;
            if let Some(cents) = cents.filter(|&c| c > 0) {
                status.fees.push(Fee {
                    kind: FeeKind::Demurrage,
                    amount_cents: cents,
                    currency_code: currency_code.to_owned(),
                    description: format!(
                        "Demurrage Owed: {}",
                        read::text(owed).unwrap_or_default()
                    ),
                });
            }
        }
        if let Some(at) = read::field(item, &["appointmentDate", "appointmentDateTime"]) {
            status.appointment_at = read::instant(at, zone).map_err(drift_here)?;
        }
        if let Some(at) = read::field(item, &["facilityOut", "facilityOutDate", "gateOutDate"])
            // A bare yes/no says it left without saying when.
            && read::flag(at).is_err()
        {
            status.full_out_at = read::instant(at, zone).map_err(drift_here)?;
        }
        status.location = read::text_field(item, &["yardLocation", "location"]);
        status.raw = item.clone();
        statuses.push(status);
    }
    Ok(statuses)
}
