//! Port Houston's container availability on its Navis-cloud data-integration APIs
//! (Barbours Cut, Bayport; SOURCES.md §A.2 #3: high for the OAuth2 token endpoint and the
//! legacy service's HTTP 200 `LoginError`). The port's specification is a PDF on
//! https://porthouston.com/toolbox/container-terminals/data-integration/ that was not read;
//! the request and the answer's fields follow two public clients of the API (medium; see
//! `tests/fixtures/port_houston/units.source.md`): the service the port calls
//! `GetContainerAvailability` is Navis EVP's unit inventory.
//!
//! One lookup is one call for one container: `GET {base_url}/inventory/units?operator=POHA
//! &predicate=unitId = {container}&fields=…` (plus `facility=BCT` or `BPT` when the settings
//! name one; without it both terminals are searched), base URL
//! `https://api.america.naviscloudops.com/v3/evp`, with an OAuth2 client-credentials bearer
//! token. The clients seen ask one unit a call; no list predicate is documented, so the
//! batch size is 1. The answer is read as a list of units under `content` (or the list
//! itself, or one under `data`, `items`, `results`, `units`, `containers` or `result`, or
//! one unit alone); a name with a dot is a nested field (`scope.facility_id`) or a key of
//! that name:
//!
//! | keys tried | becomes |
//! | --- | --- |
//! | `unitId`, `unitNbr`, `ctrId`, `containerNumber` | the container |
//! | `available`, `isAvailable`, `availableForPickup` (yes/no), `availability` (text) | `availability`, when the terminal says it |
//! | else `transitState` with `stoppedRoad` (also under `stopFlags`) | `availability`: in the yard (`S40_YARD`) and not stopped for road and no road impediment is true; stopped is false; advised, inbound, gone out (`S10`, `S20`, `S30`, `S50`, `S60`) false; other states unsaid |
//! | `impediments`, `roadImpediments`, `holds` | `holds` (texts, lists, objects; Navis calls holds impediments) |
//! | `lastFreeDay`, `lfd`, `storageLastFreeDay` | `last_free_day` (`lineLastFreeDay`, the line's, stays in `raw`) |
//! | `ufvPosition`, `lastKnownPosition.posName`, `yardPosition`, `position`, `location` | `location` |
//! | `timeOut`, `timestamps.timeOut`, `outTime`, `gateOutTime` | `full_out_at` |
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

/// Port Houston's operator code in Navis EVP, on every call (the public clients').
const OPERATOR: &str = "POHA";

/// The unit fields asked for: those the public clients ask (medium).
const FIELDS: &str = "unitId,category,freightKind,blNbr,transitState,stoppedRoad,stopFlags,\
impediments,lastFreeDay,lineLastFreeDay,timeIn,timeOut,ufvPosition,timestamps.timeIn,\
timestamps.timeOut,scope.facility_id";

/// The Port Houston connector.
pub struct PortHouston {
    configured: Configured,
    /// `{base_url}/inventory/units`.
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
            &["inventory", "units"],
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
        let predicate = match units.as_slice() {
            [unit] => format!("unitId = {unit}"),
            // A batch size raised by the operator: Navis's list predicate, unverified.
            units => format!("unitId in ({})", units.join(",")),
        };
        let mut url = self.url.clone();
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("operator", OPERATOR);
            if let Some(facility) = &self.configured.facility_code {
                query.append_pair("facility", &facility.to_ascii_uppercase());
            }
            query
                .append_pair("predicate", &predicate)
                .append_pair("fields", FIELDS);
        }
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

/// The statuses in a unit inventory (`GetContainerAvailability`) answer, for the containers
/// of `batch`.
pub fn parse(
    answer: &Value,
    batch: &[ContainerQuery],
    checked_at: DateTime<Utc>,
    zone: Tz,
) -> Result<Vec<TerminalStatus>, TerminalError> {
    let items = read::items(
        answer,
        &[
            "content",
            "data",
            "items",
            "results",
            "units",
            "containers",
            "result",
        ],
        UNIT,
    )
    .ok_or_else(|| drift("no list of units", answer.to_string().as_bytes()))?;
    let mut statuses = Vec::new();
    for item in items {
        let drift_here = |why: String| drift(&why, item.to_string().as_bytes());
        let number = read::field(item, UNIT)
            .ok_or_else(|| drift_here("a unit without a unitId".to_owned()))?;
        let Some(query) = read::query_for(number, batch).map_err(&drift_here)? else {
            continue;
        };
        let mut status = TerminalStatus::new(query.container.clone(), checked_at);
        if let Some(holds) = read::field(item, &["impediments", "roadImpediments", "holds"]) {
            status.holds = read::holds(holds).map_err(&drift_here)?;
        }
        status.availability = availability(item, !status.holds.is_empty()).map_err(&drift_here)?;
        if let Some(day) = read::field(item, &["lastFreeDay", "lfd", "storageLastFreeDay"]) {
            status.last_free_day = read::date(day).map_err(&drift_here)?;
        }
        if let Some(at) = read::field(
            item,
            &["timeOut", "timestamps.timeOut", "outTime", "gateOutTime"],
        ) {
            status.full_out_at = read::instant(at, zone).map_err(&drift_here)?;
        }
        if let Some(at) = read::field(item, &["appointmentTime", "apptTime"]) {
            status.appointment_at = read::instant(at, zone).map_err(&drift_here)?;
        }
        status.location = read::text_field(
            item,
            &[
                "ufvPosition",
                "lastKnownPosition.posName",
                "yardPosition",
                "position",
                "location",
            ],
        );
        status.raw = item.clone();
        statuses.push(status);
    }
    Ok(statuses)
}

/// The keys a unit's number is under.
const UNIT: &[&str] = &["unitId", "unitNbr", "ctrId", "containerNumber"];

/// Whether the unit can be picked up: the terminal's own flag or word when it gives one,
/// else its transit state and road stop (`held` says a road impediment is listed).
fn availability(item: &Value, held: bool) -> Result<Option<bool>, String> {
    if let Some(flag) = read::field(item, &["available", "isAvailable", "availableForPickup"]) {
        return read::flag(flag);
    }
    if let Some(text) = read::text_field(item, &["availability"]) {
        return Ok(Some(
            text.eq_ignore_ascii_case("available") || text.eq_ignore_ascii_case("yes"),
        ));
    }
    let stopped = match read::field(item, &["stoppedRoad", "stopFlags.stoppedRoad"]) {
        Some(flag) => read::flag(flag)?,
        None => None,
    };
    let Some(state) = read::text_field(item, &["transitState"]) else {
        return Ok(stopped.filter(|&s| s).map(|_| false));
    };
    let state = state.to_ascii_uppercase();
    Ok(if state.starts_with("S40") || state == "YARD" {
        Some(stopped != Some(true) && !held)
    } else if ["S10", "S20", "S30", "S50", "S60"]
        .iter()
        .any(|code| state.starts_with(code))
    {
        Some(false)
    } else {
        None
    })
}
