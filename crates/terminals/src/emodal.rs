//! eModal / CargoSprint's SprintPass Pro Orchestration API, trace-only (SOURCES.md §A.2 #4:
//! high for the fields, which are the docs' own examples, and the `X-API-Key` header;
//! medium for the status path; low for the appointment's keys).
//!
//! SprintPass Pro reports on a container once a *trace-only orchestration* exists for it.
//! One lookup is one container (the batch size is 1):
//!
//! 1. `GET {base_url}/v1/orchestrations/trade-type/I/unit-nbr/{container}` reads its status.
//! 2. A 404 means no orchestration yet: when the settings name the port (`facility_code`,
//!    eModal's `port_cd`), `POST {base_url}/v1/orchestrations` starts one
//!    (`{"order": [{"trade_type": "I", "billoflading": …, "unit": {"unit_nbr": …},
//!    "locations": [{"port_cd": …}]}]}`) and the container is absent from this answer; the
//!    next lookup reads it. Without a port the container is simply absent.
//!
//! The status (the docs' notification object, its unit fields at the top or under
//! `unit_status`) is read as:
//!
//! | field | becomes |
//! | --- | --- |
//! | `unitstatusinfo.status_cd` | `availability`: `AV` (ready) true; `DN` (not ready), `OA` (gate out) false; other codes unsaid |
//! | `holdinfo[]` `{type, status, details[{holdreason_cd, holdreason_desc, release_dttm}]}` | `holds`: released entries and details left out; `PQ` customs, `FD` freight, `TM` TMF, other codes by `type` and words |
//! | `fee_receipts[]` `{fee_cd, fee_desc, fee_amt}` | `fees`: `4I` demurrage, `DWT` extended dwell time, others by words (these are fees paid through SprintPass: the fee the container ran up) |
//! | `lfdinfo.last_free_day` | `last_free_day` (`good_through_date`, paid-through, stays in `raw`) |
//! | `activity[]` `DPTRM` / `EMTRC` | `full_out_at` / `empty_returned_at` |
//! | `locations[].appointment` `{slot_start_dttm | appointment_dttm | start_dttm}` | `appointment_at` (guessed keys) |
//!
//! A status whose unit sections are all empty (the orchestration has not found the
//! container yet) is absent.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tidemark_domain::Clock;
use url::Url;

use crate::connector::{ContainerQuery, TerminalConnector, TerminalError, check_batch};
use crate::http::{self, Credentials, drift};
use crate::profile::{ConfigError, Configured, TerminalProfile};
use crate::read;
use crate::status::{Fee, FeeKind, Hold, HoldKind, HoldStatus, TerminalStatus};

/// Import, in SprintPass Pro's `trade_type`.
const IMPORT: &str = "I";

/// The eModal SprintPass Pro connector.
pub struct Emodal {
    configured: Configured,
    base_url: Url,
    credentials: Credentials,
    http: reqwest::Client,
    clock: Arc<dyn Clock>,
}

impl Emodal {
    pub fn new(configured: Configured, clock: Arc<dyn Clock>) -> Result<Self, ConfigError> {
        let base_url = configured
            .base_url
            .clone()
            .ok_or_else(|| ConfigError::Missing {
                profile: configured.profile.id.clone(),
                key: "base_url".to_owned(),
            })?;
        Ok(Self {
            credentials: Credentials::of(&configured, Arc::clone(&clock))?,
            http: http::client(&configured.profile.id)?,
            base_url,
            configured,
            clock,
        })
    }

    /// Reads one container's status; `None` when it has no orchestration or none found it.
    async fn status(
        &self,
        query: &ContainerQuery,
    ) -> Result<Option<TerminalStatus>, TerminalError> {
        let url = http::url_under(
            &self.base_url,
            &[
                "v1",
                "orchestrations",
                "trade-type",
                IMPORT,
                "unit-nbr",
                query.container.as_str(),
            ],
        );
        let request = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json");
        let answer = self.credentials.send(&self.http, request).await?;
        if answer.status == StatusCode::NOT_FOUND {
            self.start(query).await?;
            return Ok(None);
        }
        let answer = answer.success()?;
        let checked_at = self.clock.now();
        parse(
            &answer.json()?,
            query,
            checked_at,
            self.configured.time_zone,
            self.profile().currency_code(),
        )
    }

    /// Starts a trace-only orchestration for the container, when the port is known.
    async fn start(&self, query: &ContainerQuery) -> Result<(), TerminalError> {
        let Some(port) = &self.configured.facility_code else {
            return Ok(());
        };
        let mut order = json!({
            "trade_type": IMPORT,
            "unit": {"unit_nbr": query.container.as_str()},
            "locations": [{"port_cd": port}],
        });
        if let Some(bl) = &query.bill_of_lading {
            order["billoflading"] = json!(bl);
        }
        let request = self
            .http
            .post(http::url_under(&self.base_url, &["v1", "orchestrations"]))
            .header(reqwest::header::ACCEPT, "application/json")
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(json!({ "order": [order] }).to_string());
        self.credentials
            .send(&self.http, request)
            .await?
            .success()?;
        Ok(())
    }
}

#[async_trait]
impl TerminalConnector for Emodal {
    fn profile(&self) -> &TerminalProfile {
        &self.configured.profile
    }

    async fn lookup(&self, batch: &[ContainerQuery]) -> Result<Vec<TerminalStatus>, TerminalError> {
        check_batch(self.profile(), batch)?;
        let mut statuses = Vec::new();
        for query in batch {
            statuses.extend(self.status(query).await?);
        }
        Ok(statuses)
    }
}

/// The status in a unit-status answer for `query`'s container; `None` when the
/// orchestration has not found it yet.
pub fn parse(
    answer: &Value,
    query: &ContainerQuery,
    checked_at: DateTime<Utc>,
    zone: Tz,
    currency_code: &str,
) -> Result<Option<TerminalStatus>, TerminalError> {
    let drift_here = |why: String| drift(&why, answer.to_string().as_bytes());
    if !answer.is_object() {
        return Err(drift_here("the unit status is not an object".to_owned()));
    }
    let unit = read::field(answer, &["unit_status"]).unwrap_or(answer);
    const SECTIONS: [&str; 5] = [
        "unitstatusinfo",
        "holdinfo",
        "fee_receipts",
        "lfdinfo",
        "activity",
    ];
    let sections = || {
        SECTIONS
            .iter()
            .filter_map(|name| read::field(unit, &[name]))
    };
    if sections().all(|section| match section {
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }) {
        if read::field(answer, &["orchestration_status", "unit_status"]).is_some() {
            return Ok(None);
        }
        return Err(drift_here("no unit status sections".to_owned()));
    }
    if let Some(number) =
        read::field(unit, &["unitinfo"]).and_then(|info| read::field(info, &["unit_nbr"]))
        && !matches!(
            read::query_for(number, std::slice::from_ref(query)),
            Ok(Some(_))
        )
    {
        return Err(drift_here(format!(
            "asked about {}, answered about {number}",
            query.container
        )));
    }
    let mut status = TerminalStatus::new(query.container.clone(), checked_at);
    let code = read::field(unit, &["unitstatusinfo"])
        .and_then(|info| read::text_field(info, &["status_cd"]));
    status.availability = match code.as_deref() {
        Some("AV") => Some(true),
        Some("DN" | "OA") => Some(false),
        _ => None,
    };
    if let Some(holdinfo) = read::field(unit, &["holdinfo"]) {
        let holdinfo = holdinfo
            .as_array()
            .ok_or_else(|| drift_here("holdinfo is not an array".to_owned()))?;
        for entry in holdinfo {
            status.holds.extend(holds(entry));
        }
    }
    if let Some(receipts) = read::field(unit, &["fee_receipts"]) {
        let receipts = receipts
            .as_array()
            .ok_or_else(|| drift_here("fee_receipts is not an array".to_owned()))?;
        for receipt in receipts {
            status
                .fees
                .push(fee(receipt, currency_code).map_err(&drift_here)?);
        }
    }
    if let Some(lfd) =
        read::field(unit, &["lfdinfo"]).and_then(|info| read::field(info, &["last_free_day"]))
    {
        status.last_free_day = read::date(lfd).map_err(&drift_here)?;
    }
    for event in read::field(unit, &["activity"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let at = match read::field(event, &["event_dttm"]) {
            Some(at) => read::instant(at, zone).map_err(&drift_here)?,
            None => None,
        };
        match read::text_field(event, &["event_cd"]).as_deref() {
            Some("DPTRM") => status.full_out_at = at.or(status.full_out_at),
            Some("EMTRC") => status.empty_returned_at = at.or(status.empty_returned_at),
            _ => {}
        }
    }
    for location in read::field(unit, &["locations"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(appointment) = read::field(location, &["appointment", "appointmentinfo"])
            && let Some(at) = read::field(
                appointment,
                &["slot_start_dttm", "appointment_dttm", "start_dttm"],
            )
        {
            status.appointment_at = read::instant(at, zone).map_err(&drift_here)?;
        }
    }
    status.raw = answer.clone();
    Ok(Some(status))
}

/// The holds in force in one `holdinfo` entry: one per detail not yet released, or one for
/// the entry when it has no details.
fn holds(entry: &Value) -> Vec<Hold> {
    let kind_word = read::text_field(entry, &["type"]).unwrap_or_default();
    let Some(status) = read::text_field(entry, &["status"])
        .map_or(Some(HoldStatus::Hold), |s| HoldStatus::from_text(&s))
    else {
        return Vec::new();
    };
    let details: Vec<&Value> = read::field(entry, &["details"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|detail| read::field(detail, &["release_dttm"]).is_none())
        .collect();
    if details.is_empty() {
        return vec![Hold {
            kind: kind(&kind_word, None, ""),
            status,
            description: kind_word,
        }];
    }
    details
        .into_iter()
        .map(|detail| {
            let code = read::text_field(detail, &["holdreason_cd"]);
            let text = read::text_field(detail, &["holdreason_desc"]).unwrap_or_default();
            let description = match &code {
                Some(code) if *code != text && !text.is_empty() => format!("{code} - {text}"),
                Some(code) => code.clone(),
                None => text.clone(),
            };
            Hold {
                kind: kind(&kind_word, code.as_deref(), &text),
                status,
                description,
            }
        })
        .collect()
}

/// A hold's kind from SprintPass Pro's reason code (status_codes page), else its type, else
/// its words.
fn kind(kind_word: &str, code: Option<&str>, text: &str) -> HoldKind {
    match code {
        Some("PQ") => return HoldKind::Customs,
        Some("FD") => return HoldKind::Freight,
        Some("TM") => return HoldKind::Tmf,
        Some("CF" | "TC") => return HoldKind::Other,
        _ => {}
    }
    let words = HoldKind::from_text(text);
    match kind_word.to_ascii_uppercase().as_str() {
        // A customs hold may say it is an exam (VACIS) or an agriculture hold (USDA).
        "CUSTOMS" if matches!(words, HoldKind::Vacis | HoldKind::Usda) => words,
        "CUSTOMS" => HoldKind::Customs,
        "FREIGHT" => HoldKind::Freight,
        _ => words,
    }
}

/// One fee receipt.
fn fee(receipt: &Value, currency_code: &str) -> Result<Fee, String> {
    let code = read::text_field(receipt, &["fee_cd"]).unwrap_or_default();
    let text = read::text_field(receipt, &["fee_desc"]).unwrap_or_default();
    let amount = read::field(receipt, &["fee_amt"])
        .ok_or_else(|| format!("a fee receipt without fee_amt: {receipt}"))?;
    let kind = match code.as_str() {
        "4I" => FeeKind::Demurrage,
        "DWT" => FeeKind::ExtendedDwellTime,
        _ => FeeKind::from_text(&text),
    };
    Ok(Fee {
        kind,
        amount_cents: read::cents(amount)?
            .ok_or_else(|| format!("a fee receipt without an amount: {receipt}"))?,
        currency_code: currency_code.to_owned(),
        description: if text.is_empty() {
            code
        } else {
            format!("{code} - {text}")
        },
    })
}
