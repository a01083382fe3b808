//! The Port of Virginia's Import Availability API (NIT, VIG; SOURCES.md §A.2 #1, high for
//! the endpoints and field names, medium for the JSON envelope).
//!
//! One lookup is one bulk call: `POST {base_url}/import-availability?key={api_key}` with
//! `[{"equipmentId": container, "referenceId": bill of lading}, …]` (up to 100; the API
//! needs both numbers). The answer is read as an array of objects, one per container (or
//! such an array under `data`, `results` or `importAvailability`), each with the docs'
//! fields:
//!
//! | field | becomes |
//! | --- | --- |
//! | `shipmentStatus` ("Available", …) | `availability`: "Available" is true, any other word false |
//! | `shipmentAction` (an X12 315 code) | `availability` when `shipmentStatus` is absent: `AV` true, `DN` false |
//! | `holds[]` (texts or objects) | `holds`, kinds read from the terminal's words |
//! | `freeTimeExpiration` | `last_free_day` |
//! | `outTime` / `emptyReturnTime` | `full_out_at` / `empty_returned_at` (local times in Norfolk) |
//! | `yardBlock` | `location` |
//!
//! An item that carries only an error message (`error`, `errorMessage`, `message`) and no
//! status is a container the port does not know: it is left out.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde_json::{Value, json};
use tidemark_domain::Clock;
use url::Url;

use crate::connector::{ContainerQuery, TerminalConnector, TerminalError, check_batch};
use crate::http::{self, Credentials, drift};
use crate::profile::{ConfigError, Configured, TerminalProfile};
use crate::read;
use crate::status::TerminalStatus;

/// The Port of Virginia connector.
pub struct PortOfVirginia {
    configured: Configured,
    /// `{base_url}/import-availability`, without the key.
    url: Url,
    credentials: Credentials,
    http: reqwest::Client,
    clock: Arc<dyn Clock>,
}

impl PortOfVirginia {
    pub fn new(configured: Configured, clock: Arc<dyn Clock>) -> Result<Self, ConfigError> {
        let missing = || ConfigError::Missing {
            profile: configured.profile.id.clone(),
            key: "base_url".to_owned(),
        };
        let url = http::url_under(
            configured.base_url.as_ref().ok_or_else(missing)?,
            &["import-availability"],
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
impl TerminalConnector for PortOfVirginia {
    fn profile(&self) -> &TerminalProfile {
        &self.configured.profile
    }

    async fn lookup(&self, batch: &[ContainerQuery]) -> Result<Vec<TerminalStatus>, TerminalError> {
        check_batch(self.profile(), batch)?;
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let body: Vec<Value> = batch
            .iter()
            .map(|query| {
                json!({
                    "equipmentId": query.container.as_str(),
                    "referenceId": query.bill_of_lading,
                })
            })
            .collect();
        let mut url = self.url.clone();
        self.credentials.on_url(&mut url);
        let request = self
            .http
            .post(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(Value::Array(body).to_string());
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
        )
    }
}

/// The statuses in an Import Availability answer, for the containers of `batch`.
pub fn parse(
    answer: &Value,
    batch: &[ContainerQuery],
    checked_at: DateTime<Utc>,
    zone: Tz,
) -> Result<Vec<TerminalStatus>, TerminalError> {
    let body = answer.to_string();
    let items = read::items(answer, &["data", "results", "importAvailability"])
        .ok_or_else(|| drift("no array of containers", body.as_bytes()))?;
    let mut statuses = Vec::new();
    for item in items {
        let drift_here = |why: String| drift(&why, item.to_string().as_bytes());
        if !item.is_object() {
            return Err(drift_here("an item is not an object".to_owned()));
        }
        let container = read::field(item, &["equipmentId"])
            .and_then(read::container)
            .ok_or_else(|| drift_here("an item without a readable equipmentId".to_owned()))?;
        let Some(query) = batch.iter().find(|q| q.container == container) else {
            continue;
        };
        let status_text = read::text_field(item, &["shipmentStatus"]);
        let action = read::text_field(item, &["shipmentAction"]);
        let error = read::text_field(item, &["error", "errorMessage", "message"]);
        if status_text.is_none() && action.is_none() && error.is_some() {
            continue;
        }
        let mut status = TerminalStatus::new(query.container.clone(), checked_at);
        status.availability = match (&status_text, action.as_deref()) {
            (Some(text), _) => Some(text.eq_ignore_ascii_case("available")),
            (None, Some("AV")) => Some(true),
            (None, Some("DN")) => Some(false),
            (None, _) => None,
        };
        if let Some(holds) = read::field(item, &["holds"]) {
            status.holds = read::holds(holds).map_err(drift_here)?;
        }
        if let Some(day) = read::field(item, &["freeTimeExpiration"]) {
            status.last_free_day = read::date(day).map_err(drift_here)?;
        }
        if let Some(at) = read::field(item, &["outTime"]) {
            status.full_out_at = read::instant(at, zone).map_err(drift_here)?;
        }
        if let Some(at) = read::field(item, &["emptyReturnTime"]) {
            status.empty_returned_at = read::instant(at, zone).map_err(drift_here)?;
        }
        status.location = read::text_field(item, &["yardBlock"]);
        status.raw = item.clone();
        statuses.push(status);
    }
    Ok(statuses)
}
