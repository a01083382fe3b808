//! The Port of Virginia's Import Availability API (NIT, VIG; SOURCES.md §A.2 #1). Its public
//! docs (https://subscriptions.portofvirginia.com/Docs/ImportAvailability, high) give the
//! endpoints, the single lookup's answer in full and the bulk answer's shape.
//!
//! One lookup is one bulk call: `POST {base_url}/import-availability?key={api_key}` with
//! `[{"equipmentId": container, "referenceId": bill of lading}, …]` (up to 100; the API
//! needs both numbers). The docs answer it with a list of `{equipmentId, referenceId, data,
//! message}`: `data` is the import availability object (the single `GET`'s answer, which
//! names the container `container`), `message` "the reason why import availability data was
//! not populated". A flat item carrying the object's fields itself, the single lookup's
//! object alone, and a list under `data`, `results` or `importAvailability` are read too.
//! The object's fields:
//!
//! | field | becomes |
//! | --- | --- |
//! | `shipmentStatus` ("Available", …) | `availability`: "Available" is true, any other word false |
//! | `shipmentAction` (an X12 315 code; the docs' example pairs "Available" with `UV`) | `availability` only when `shipmentStatus` is absent: `AV` true, `DN` false |
//! | `holds[]` (texts or objects) | `holds`, kinds read from the terminal's words |
//! | `freeTimeExpiration` | `last_free_day` |
//! | `outTime` / `emptyReturnTime` (`2022-02-15T18:16:13.973`) | `full_out_at` / `empty_returned_at` (local times in Norfolk) |
//! | `yardBlock` | `location` |
//!
//! An item whose `data` is empty (only `message`) says nothing: the container is absent.
//! Other fields (`terminal`, `carrierScac`, `weight` as text, `voyageVesselName`, …) stay in
//! `raw`.

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
    let items = read::items(
        answer,
        &["data", "results", "importAvailability"],
        &["equipmentId", "container"],
    )
    .ok_or_else(|| drift("no list of containers", body.as_bytes()))?;
    let mut statuses = Vec::new();
    for item in items {
        let drift_here = |why: String| drift(&why, item.to_string().as_bytes());
        if !item.is_object() {
            return Err(drift_here("an item is not an object".to_owned()));
        }
        // The bulk answer's item: {equipmentId, referenceId, data, message}; a flat item
        // (the single lookup's object, or an older shape) carries the facts itself.
        let facts = read::field(item, &["data"])
            .filter(|data| data.is_object())
            .unwrap_or(item);
        let number = read::field(item, &["equipmentId", "container"])
            .or_else(|| read::field(facts, &["container", "equipmentId"]))
            .ok_or_else(|| drift_here("an item without equipmentId or container".to_owned()))?;
        let Some(query) = read::query_for(number, batch).map_err(&drift_here)? else {
            continue;
        };
        if !FACTS
            .iter()
            .any(|name| read::field(facts, &[name]).is_some())
        {
            // Not populated: the port's `message` says why (an unknown container, a bill
            // of lading that does not match it); the container is absent.
            continue;
        }
        let mut status = TerminalStatus::new(query.container.clone(), checked_at);
        let status_text = read::text_field(facts, &["shipmentStatus"]);
        let action = read::text_field(facts, &["shipmentAction"]);
        status.availability = match (&status_text, action.as_deref()) {
            (Some(text), _) => Some(says_available(text)),
            (None, Some("AV")) => Some(true),
            (None, Some("DN")) => Some(false),
            (None, _) => None,
        };
        if let Some(holds) = read::field(facts, &["holds"]) {
            status.holds = read::holds(holds).map_err(&drift_here)?;
        }
        if let Some(day) = read::field(facts, &["freeTimeExpiration"]) {
            status.last_free_day = read::date(day).map_err(&drift_here)?;
        }
        if let Some(at) = read::field(facts, &["outTime"]) {
            status.full_out_at = read::instant(at, zone).map_err(&drift_here)?;
        }
        if let Some(at) = read::field(facts, &["emptyReturnTime"]) {
            status.empty_returned_at = read::instant(at, zone).map_err(&drift_here)?;
        }
        status.location = read::text_field(facts, &["yardBlock"]);
        status.raw = item.clone();
        statuses.push(status);
    }
    Ok(statuses)
}

/// The fields of a populated import availability object; an item with none of them says
/// nothing about the container.
const FACTS: [&str; 7] = [
    "shipmentStatus",
    "shipmentAction",
    "holds",
    "freeTimeExpiration",
    "outTime",
    "emptyReturnTime",
    "yardBlock",
];

/// `shipmentStatus` read as availability: "Available" (in any case, with more words after
/// it) is available; "Not Available", "Unavailable" and every other word are not.
fn says_available(text: &str) -> bool {
    let text = text.trim().to_ascii_uppercase();
    text.starts_with("AVAILABLE")
}
