//! APM Terminals' Import Availability API (developer portal product 5; SOURCES.md §A.2 #2:
//! high for the product, its parameters and its display names). The portal's OpenAPI file
//! (`APMT Import Availability_14.yaml`, public but only its head was read) gives the path, the
//! hosts and the parameters; the answer's keys are from a public transcription of the
//! portal's field table (medium; see `tests/fixtures/apm_terminals/
//! import_availability_documented.source.md`).
//!
//! One lookup is one call for one facility: `GET {base_url}/import-availability?assetId=
//! A,B&facilityCode={facility_code}` with an OAuth2 client-credentials bearer token (the
//! portal's Apigee token endpoint, `{host}/oauth/client_credential/accesstoken?grant_type=
//! client_credentials`). A connector serves the one facility its settings name
//! (`facility_code`, a UN/LOCODE such as `USLAX`), since the API takes one facility a call.
//!
//! The answer is read as a list of containers (or one under `containers`, `data`, `items`
//! or `importAvailability`, or one container alone). Each display name is read under its
//! documented key first, then the spellings Tidemark guessed before the keys were found:
//!
//! | display name | keys tried | becomes |
//! | --- | --- | --- |
//! | Container | `containerId`, `assetId`, `containerNumber`, `equipmentId` | the container |
//! | Ready for Delivery | `readyForDelivery` (text, `Y`/`N` or yes/no), `isReadyForDelivery` | `availability` |
//! | Container Holds | `containerHolds` (text), `holds` | `holds` ("NONE" is none) |
//! | Storage Paid Through Date | `storagePaidThroughDate` (text), `storagePaidThrough` | `last_free_day` |
//! | Demurrage Owed | `demurrageOwed` (text), `demurrageAmount` | a demurrage fee when above zero |
//! | Appointment Date | `appointmentDateTimeLocal`, `appointmentDate`, `appointmentDateTime` | `appointment_at` (the facility's local time) |
//! | Facility Out | `facilityOutDateTimeLocal`, `facilityOut`, `facilityOutDate`, `gateOutDate` | `full_out_at` (local time) |
//! | Yard Location | `yardLocation`, `location` | `location` |
//!
//! `containerState`, `dischargeDateTimeLocal`, `vesselEtaDateTimeLocal`, `shippingLine` and
//! the rest stay in `raw`.

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
    const CONTAINER: &[&str] = &["containerId", "assetId", "containerNumber", "equipmentId"];
    let items = read::items(
        answer,
        &["containers", "data", "items", "importAvailability"],
        CONTAINER,
    )
    .ok_or_else(|| drift("no list of containers", answer.to_string().as_bytes()))?;
    let mut statuses = Vec::new();
    for item in items {
        let drift_here = |why: String| drift(&why, item.to_string().as_bytes());
        let number = read::field(item, CONTAINER)
            .ok_or_else(|| drift_here("an item without a container number".to_owned()))?;
        let Some(query) = read::query_for(number, batch).map_err(&drift_here)? else {
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
        if let Some(at) = read::field(
            item,
            &[
                "appointmentDateTimeLocal",
                "appointmentDate",
                "appointmentDateTime",
            ],
        ) {
            status.appointment_at = read::instant(at, zone).map_err(drift_here)?;
        }
        if let Some(at) = read::field(
            item,
            &[
                "facilityOutDateTimeLocal",
                "facilityOut",
                "facilityOutDate",
                "gateOutDate",
            ],
        )
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
