//! COSCO Shipping Lines' own tracking API (COP, not DCSA), behind the same [`Carrier`]
//! interface: `GET {base}/info/tracking/{number}?numberType=bl|bkg|cntr`, every request
//! signed with the account's API key and secret key, the answer mapped into the same
//! [`CarrierEvent`]s as DCSA's.
//!
//! From `reference/carriers/CARRIERS.md` §1.6 and COSCO's public `cop-cos/COP` repository
//! (README, cargo-tracking document, HMAC sample). The signature, as that sample builds it:
//!
//! ```text
//! X-Coscon-Date: <RFC 1123 date, GMT>\n
//! X-Coscon-Digest: SHA-256=<base64 SHA-256 of the body>\n
//! X-Coscon-Content-Md5: <nonce: hex MD5 of a random id>\n
//! <request line: "GET /service/info/tracking/… HTTP/1.1">
//! ```
//!
//! signed with HMAC over the secret key, base64, and sent as `X-Coscon-Authorization: hmac
//! username="<api key>",algorithm="hmac-sha256",headers="X-Coscon-Date X-Coscon-Digest
//! X-Coscon-Content-Md5 request-line",signature="<signature>"`, the nonce also in
//! `X-Coscon-Hmac`. COSCO's sample defaults to hmac-sha1 and lists hmac-sha256 among the
//! algorithms its gateway accepts; Tidemark uses hmac-sha256 (no SHA-1 in the build).
//! The gateway tolerates ±2 minutes of clock skew, so the date comes from the injected
//! clock, which must be the real one in production.
//!
//! Timestamps in COSCO's answers are local times without an offset (`2015-10-25 17:00`),
//! and places are names (`Aisa World Port Terminal,Yangon,Yangon,Myanmar`), not UN/LOCODEs
//! (confidence medium). Each name is looked up in Tidemark's port list ([`Place`]) for its
//! UN/LOCODE and IANA zone, and the local time read in that zone; a place whose zone cannot
//! be known leaves its event out as unreadable (kept for drift diagnostics) rather than
//! guessing its time.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use base64::Engine;
use chrono::{DateTime, LocalResult, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use hmac::{Hmac, Mac};
use md5::Digest as _;
use reqwest::StatusCode;
use reqwest::header::ACCEPT;
use serde::Deserialize;
use serde_json::Value;
use sha2::Digest as _;
use sha2::Sha256;
use tidemark_domain::Clock;
use tidemark_geo::reference::{PortFilter, ReferenceData};
use url::Url;

use crate::carrier::{Carrier, ReferenceKind, TrackingQuery};
use crate::event::{
    CarrierError, CarrierEvent, CarrierSnapshot, Classifier, DcsaCode, DocumentReference,
    DocumentType, EmptyIndicator, EventKind, ModeOfTransport, RouteHint, TransportCall,
    WordedStatus, clip_raw,
};

const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

pub const X_DATE: &str = "X-Coscon-Date";
pub const X_DIGEST: &str = "X-Coscon-Digest";
pub const X_CONTENT_MD5: &str = "X-Coscon-Content-Md5";
pub const X_AUTHORIZATION: &str = "X-Coscon-Authorization";
pub const X_HMAC: &str = "X-Coscon-Hmac";

/// A COSCO account's keys, issued by e-mail after COSCO's review.
#[derive(Clone)]
pub struct CoscoKeys {
    pub api_key: String,
    pub secret_key: String,
}

impl fmt::Debug for CoscoKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CoscoKeys")
            .field("api_key", &self.api_key)
            .field("secret_key", &"[redacted]")
            .finish()
    }
}

/// The headers that sign one request, and the string they sign (for tests and servers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub date: String,
    pub digest: String,
    pub nonce: String,
    pub authorization: String,
}

/// The canonical string COSCO's gateway signs.
pub fn signing_string(date: &str, digest: &str, nonce: &str, request_line: &str) -> String {
    format!("{X_DATE}: {date}\n{X_DIGEST}: {digest}\n{X_CONTENT_MD5}: {nonce}\n{request_line}")
}

/// The base64 HMAC-SHA256 of `text` under `secret`.
pub fn hmac_sha256_base64(secret: &str, text: &str) -> String {
    // HMAC takes keys of any length.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    mac.update(text.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// Signs a request line (`GET /service/info/tracking/X?numberType=cntr HTTP/1.1`) with
/// `body` at `now`, with the given nonce.
pub fn sign(
    keys: &CoscoKeys,
    request_line: &str,
    body: &[u8],
    now: DateTime<Utc>,
    nonce: &str,
) -> Signature {
    let date = now.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    let digest = format!(
        "SHA-256={}",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(body))
    );
    let signature = hmac_sha256_base64(
        &keys.secret_key,
        &signing_string(&date, &digest, nonce, request_line),
    );
    let authorization = format!(
        "hmac username=\"{}\",algorithm=\"hmac-sha256\",headers=\"{X_DATE} {X_DIGEST} \
         {X_CONTENT_MD5} request-line\",signature=\"{signature}\"",
        keys.api_key
    );
    Signature {
        date,
        digest,
        nonce: nonce.to_owned(),
        authorization,
    }
}

/// COSCO Shipping Lines' tracking connector.
pub struct CoscoClient {
    scac: String,
    base: Url,
    keys: CoscoKeys,
    clock: Arc<dyn Clock>,
    http: reqwest::Client,
}

impl fmt::Debug for CoscoClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CoscoClient")
            .field("scac", &self.scac)
            .field("base", &self.base.as_str())
            .finish_non_exhaustive()
    }
}

impl CoscoClient {
    /// A connector for `scac` (COSU) whose service address is `base`
    /// (`https://api.lines.coscoshipping.com/service`).
    pub fn new(
        scac: impl Into<String>,
        base: Url,
        keys: CoscoKeys,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, reqwest::Error> {
        crate::tls::install_provider();
        let http = reqwest::Client::builder().timeout(TIMEOUT).build()?;
        Ok(Self {
            scac: scac.into(),
            base,
            keys,
            clock,
            http,
        })
    }

    fn url_for(&self, query: &TrackingQuery) -> Result<Url, CarrierError> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| {
                CarrierError::Unavailable("the COSCO base URL cannot take a path".into())
            })?
            .pop_if_empty()
            .extend(["info", "tracking", query.reference.trim()]);
        let number_type = match query.reference_kind {
            ReferenceKind::BillOfLading => "bl",
            ReferenceKind::Booking => "bkg",
            ReferenceKind::Equipment => "cntr",
        };
        url.set_query(None);
        url.query_pairs_mut().append_pair("numberType", number_type);
        Ok(url)
    }
}

/// A random nonce in the shape COSCO's sample sends: 32 hex digits (MD5 of a random id).
fn nonce() -> String {
    let random: [u8; 16] = rand::random();
    hex::encode(md5::Md5::digest(random))
}

#[async_trait]
impl Carrier for CoscoClient {
    fn scac(&self) -> &str {
        &self.scac
    }

    async fn fetch(&self, query: &TrackingQuery) -> Result<CarrierSnapshot, CarrierError> {
        let url = self.url_for(query)?;
        let path_and_query = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        let request_line = format!("GET {path_and_query} HTTP/1.1");
        let signed = sign(&self.keys, &request_line, b"", self.clock.now(), &nonce());
        let response = self
            .http
            .get(url)
            .header(ACCEPT, "application/json")
            .header(X_DATE, &signed.date)
            .header(X_DIGEST, &signed.digest)
            .header(X_CONTENT_MD5, &signed.nonce)
            .header(X_AUTHORIZATION, &signed.authorization)
            .header(X_HMAC, &signed.nonce)
            .send()
            .await
            .map_err(crate::dcsa::client::transport_error)?;
        let status = response.status();
        if !status.is_success() {
            return Err(match status {
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                    CarrierError::CredentialsRefused(format!(
                        "COSCO answered {status} (check api_key, secret_key and the clock)"
                    ))
                }
                _ => crate::dcsa::client::status_error(status, response.headers()),
            });
        }
        let body = crate::dcsa::client::read_body_limited(response, MAX_BODY_BYTES).await?;
        parse_tracking(&body, query)
    }
}

#[derive(Deserialize)]
struct Envelope {
    code: Value,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    data: Option<Data>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    content: Option<Value>,
}

/// Reads COSCO's answer to a tracking query into carrier events. An event that cannot be
/// read (an unknown status, or a local time at a place Tidemark cannot put in a time zone)
/// is skipped with its raw JSON; the others are kept.
///
/// - A container answer's `containerCircleStatus` is the box's current cycle; its
///   `containerHistorys` are earlier cycles (other shipments) and are read only where they
///   fall inside the current cycle. Within the moves, an empty return followed by later moves
///   ends a cycle: it and everything before it belong to an earlier shipment.
/// - A bill of lading or booking answer gives each container's latest move
///   (`containerStatus`, an empty return before the shipment's first load is an earlier
///   cycle's), the vessel legs (`actualShipment`: shipped on board, departure, arrival and
///   discharge, and the estimates an actual has not yet replaced) and the estimated arrival
///   at the destination (`trackingPath.cgoAvailTm`).
pub fn parse_tracking(body: &[u8], query: &TrackingQuery) -> Result<CarrierSnapshot, CarrierError> {
    let envelope: Envelope = serde_json::from_slice(body).map_err(|e| {
        CarrierError::UnexpectedPayload(format!("not COSCO's tracking envelope: {e}"))
    })?;
    let ok = match &envelope.code {
        Value::Number(n) => n.as_i64() == Some(0),
        Value::String(s) => s.trim() == "0",
        _ => false,
    };
    if !ok {
        return Err(CarrierError::UnexpectedPayload(format!(
            "COSCO answered code {} ({})",
            envelope.code,
            envelope.message.unwrap_or_default()
        )));
    }
    let Some(data) = envelope.data else {
        return Err(CarrierError::NotFound);
    };
    let content = match (data.kind.as_deref(), data.content) {
        (Some("none") | None, _) | (_, None | Some(Value::Null)) => {
            return Err(CarrierError::NotFound);
        }
        (_, Some(content)) => content,
    };
    let documents = match query.reference_kind {
        ReferenceKind::BillOfLading => vec![DocumentReference {
            document_type: DocumentType::TransportDocument,
            value: query.reference.trim().to_owned(),
        }],
        ReferenceKind::Booking => vec![DocumentReference {
            document_type: DocumentType::Booking,
            value: query.reference.trim().to_owned(),
        }],
        ReferenceKind::Equipment => Vec::new(),
    };
    let mut snapshot = CarrierSnapshot::default();
    for container in array(&content, "containers") {
        container_moves(&mut snapshot, container, &documents);
    }
    let legs = legs(&content, &documents);
    // The shipment's first load or departure: an empty return before it ended another cycle.
    let shipment_began = legs
        .iter()
        .filter_map(|(_, event)| event.as_ref().ok())
        .filter(|e| e.classifier == Classifier::Actual)
        .filter(|e| matches!(e.dcsa_code, DcsaCode::Load | DcsaCode::Depa))
        .map(|e| e.event_datetime)
        .min();
    for group in array(&content, "containerStatus") {
        for item in array(group, "containers") {
            let event = equipment_event(item, "label", "locationDateTime", &documents, None);
            let earlier_cycle = event.as_ref().is_ok_and(|e| {
                is_empty_return(e) && shipment_began.is_some_and(|began| e.event_datetime < began)
            });
            if !earlier_cycle {
                push(&mut snapshot, item, event);
            }
        }
    }
    let containers = container_numbers(&content);
    for (raw, event) in legs {
        match event {
            // A move of the containers (shipped on board, discharged): one per container.
            Ok(event) if event.kind == EventKind::Equipment => {
                for number in &containers {
                    snapshot.events.push(CarrierEvent {
                        equipment_reference: Some(number.clone()),
                        ..event.clone()
                    });
                }
            }
            other => push(&mut snapshot, &raw, other),
        }
    }
    if let Some(path) = content.get("trackingPath")
        && let Some(event) = destination_eta(path, &content, &documents)
    {
        push(&mut snapshot, path, event);
    }
    Ok(snapshot)
}

/// Whether an event is an empty container's return, which ends its cycle.
fn is_empty_return(event: &CarrierEvent) -> bool {
    event.dcsa_code == DcsaCode::Gtin && event.empty_indicator == Some(EmptyIndicator::Empty)
}

/// One container of a container answer: its current cycle, and the history entries that fall
/// inside it (earlier cycles are other shipments and are left out).
fn container_moves(
    snapshot: &mut CarrierSnapshot,
    container: &Value,
    documents: &[DocumentReference],
) {
    let mut seen = std::collections::BTreeSet::new();
    let mut read = |item: &Value| {
        let id = text(item, "uuid");
        if let Some(id) = &id
            && !seen.insert(id.clone())
        {
            return None;
        }
        Some(equipment_event(
            item,
            "containerNumberStatus",
            "timeOfIssue",
            documents,
            id,
        ))
    };
    let current: Vec<(&Value, Result<CarrierEvent, String>)> =
        array(container, "containerCircleStatus")
            .filter_map(|item| Some((item, read(item)?)))
            .collect();
    let history: Vec<(&Value, Result<CarrierEvent, String>)> =
        array(container, "containerHistorys")
            .filter_map(|item| Some((item, read(item)?)))
            .collect();
    let cycle_start = current
        .iter()
        .filter_map(|(_, e)| e.as_ref().ok())
        .map(|e| e.event_datetime)
        .min();
    let mut moves = current;
    // A history entry counts only when it is known to fall inside the current cycle.
    moves.extend(history.into_iter().filter(|(_, event)| {
        event
            .as_ref()
            .is_ok_and(|e| cycle_start.is_some_and(|start| e.event_datetime >= start))
    }));
    // An empty return with moves after it ended an earlier cycle.
    let times: Vec<DateTime<Utc>> = moves
        .iter()
        .filter_map(|(_, e)| e.as_ref().ok())
        .map(|e| e.event_datetime)
        .collect();
    let cycle_ended = moves
        .iter()
        .filter_map(|(_, e)| e.as_ref().ok())
        .filter(|e| is_empty_return(e))
        .map(|e| e.event_datetime)
        .filter(|at| times.iter().any(|t| t > at))
        .max();
    for (item, event) in moves {
        let earlier = event
            .as_ref()
            .is_ok_and(|e| cycle_ended.is_some_and(|end| e.event_datetime <= end));
        if !earlier {
            push(snapshot, item, event);
        }
    }
}

/// The container numbers a bill of lading or booking answer lists.
fn container_numbers(content: &Value) -> Vec<String> {
    let mut numbers: Vec<String> = Vec::new();
    for group in array(content, "containerStatus") {
        for item in array(group, "containers") {
            if let Some(number) = text(item, "containerNumber")
                && !numbers.contains(&number)
            {
                numbers.push(number);
            }
        }
    }
    numbers
}

/// The vessel legs (`actualShipment`) as events, each with the leg it came from: shipped on
/// board (`actualShippingDate`, a load of each container) and departure at the leg's port of
/// loading, arrival and discharge (`actualDischargeDate`) at its port of discharge, and the
/// estimated departure and arrival while no actual has replaced them. The first leg's port
/// of loading is the shipment's, the last leg's port of discharge is the shipment's, and the
/// ports between are transshipments. Loads and discharges are returned without a container
/// (the caller makes one per container).
fn legs(
    content: &Value,
    documents: &[DocumentReference],
) -> Vec<(Value, Result<CarrierEvent, String>)> {
    let legs: Vec<&Value> = array(content, "actualShipment").collect();
    let path = content.get("trackingPath");
    let mut events = Vec::new();
    for (index, leg) in legs.iter().enumerate() {
        let first = index == 0;
        let last = index + 1 == legs.len();
        // The terminal the booking names at the first port of loading and the last port of
        // discharge (`Qingdao - QQCTU Qingdao Qianwan United Ctn`).
        let terminal = |key: &str, port: Option<&str>| {
            let (city, terminal) = path
                .and_then(|p| text(p, key))?
                .split_once(" - ")
                .map(|(c, t)| (c.trim().to_owned(), t.trim().to_owned()))?;
            port.is_some_and(|p| p.eq_ignore_ascii_case(&city))
                .then_some(terminal)
        };
        let loading_name = text(leg, "portOfLoading");
        let discharge_name = text(leg, "portOfDischarge");
        let loading = loading_name.as_deref().map(Place::read);
        // The leg's `city` (`Long Beach,United States`) names the port of discharge's country.
        let discharge = discharge_name
            .as_deref()
            .map(|name| match text(leg, "city") {
                Some(city)
                    if city
                        .split(',')
                        .next()
                        .is_some_and(|c| c.trim().eq_ignore_ascii_case(name)) =>
                {
                    Place::read(&city)
                }
                _ => Place::read(name),
            });
        let loading_terminal = if first {
            terminal("pol", loading_name.as_deref())
        } else {
            None
        };
        let discharge_terminal = if last {
            terminal("pod", discharge_name.as_deref())
        } else {
            None
        };
        let loading_hint = if first {
            RouteHint::PortOfLoading
        } else {
            RouteHint::Transshipment
        };
        let discharge_hint = if last {
            RouteHint::PortOfDischarge
        } else {
            RouteHint::Transshipment
        };
        let has = |key: &str| text(leg, key).is_some();
        let moves = [
            (
                "actualShippingDate",
                DcsaCode::Load,
                Classifier::Actual,
                true,
            ),
            (
                "actualDepartureDate",
                DcsaCode::Depa,
                Classifier::Actual,
                true,
            ),
            (
                "expectedDateOfDeparture",
                DcsaCode::Depa,
                Classifier::Estimated,
                !has("actualDepartureDate"),
            ),
            (
                "actualArrivalDate",
                DcsaCode::Arri,
                Classifier::Actual,
                true,
            ),
            // Kept beside the actual arrival: the last estimate stays the shipment's ETA
            // (`pod_eta_at`), as on a DCSA feed that sends both.
            (
                "estimatedDateOfArrival",
                DcsaCode::Arri,
                Classifier::Estimated,
                true,
            ),
            (
                "actualDischargeDate",
                DcsaCode::Disc,
                Classifier::Actual,
                true,
            ),
        ];
        for (field, code, classifier, wanted) in moves {
            let Some(at) = text(leg, field).filter(|_| wanted) else {
                continue;
            };
            let at_loading = matches!(code, DcsaCode::Load | DcsaCode::Depa);
            let (place, hint, facility) = if at_loading {
                (&loading, loading_hint, &loading_terminal)
            } else {
                (&discharge, discharge_hint, &discharge_terminal)
            };
            let event = match place {
                None => Err(format!("a leg's {field} without its port")),
                Some(place) => place.utc(&at, field).map(|at| CarrierEvent {
                    event_id: None,
                    kind: code.kind(),
                    dcsa_code: code,
                    classifier,
                    event_datetime: at,
                    event_created_datetime: None,
                    equipment_reference: None,
                    iso_equipment_code: None,
                    empty_indicator: (code.kind() == EventKind::Equipment)
                        .then_some(EmptyIndicator::Laden),
                    un_location_code: place.locode.clone(),
                    location_name: Some(place.name.clone()),
                    transport_call: Some(TransportCall {
                        un_location_code: place.locode.clone(),
                        facility_name: facility.clone(),
                        mode_of_transport: Some(ModeOfTransport::Vessel),
                        vessel_name: text(leg, "vesselName"),
                        carrier_service_code: text(leg, "service"),
                        carrier_export_voyage_number: text(leg, "voyageNo"),
                        ..TransportCall::default()
                    }),
                    document_references: documents.to_vec(),
                    references: Vec::new(),
                    route_hint: Some(hint),
                }),
            };
            events.push(((*leg).clone(), event));
        }
    }
    events
}

/// The estimated arrival at the destination where the cargo is delivered
/// (`trackingPath.cgoAvailTm`, "Estimated Time of Arrival to Take Delivery", at `toCity`):
/// by rail where COSCO flags a container's North American rail leg, else by road.
fn destination_eta(
    path: &Value,
    content: &Value,
    documents: &[DocumentReference],
) -> Option<Result<CarrierEvent, String>> {
    let at = text(path, "cgoAvailTm")?;
    let Some(place) = text(path, "toCity").map(|city| Place::read(&city)) else {
        return Some(Err("cgoAvailTm without toCity".to_owned()));
    };
    let by_rail = array(content, "containerStatus")
        .flat_map(|group| array(group, "containers"))
        .any(|item| item.get("isNorthAmericaRails").and_then(Value::as_bool) == Some(true));
    let mode = if by_rail {
        ModeOfTransport::Rail
    } else {
        ModeOfTransport::Truck
    };
    Some(place.utc(&at, "cgoAvailTm").map(|at| CarrierEvent {
        event_id: None,
        kind: EventKind::Transport,
        dcsa_code: DcsaCode::Arri,
        classifier: Classifier::Estimated,
        event_datetime: at,
        event_created_datetime: None,
        equipment_reference: None,
        iso_equipment_code: None,
        empty_indicator: None,
        un_location_code: place.locode.clone(),
        location_name: Some(place.name.clone()),
        transport_call: Some(TransportCall {
            un_location_code: place.locode.clone(),
            mode_of_transport: Some(mode),
            ..TransportCall::default()
        }),
        document_references: documents.to_vec(),
        references: Vec::new(),
        route_hint: Some(RouteHint::PlaceOfDelivery),
    }))
}

fn push(snapshot: &mut CarrierSnapshot, raw: &Value, event: Result<CarrierEvent, String>) {
    match event {
        Ok(event) => snapshot.events.push(event),
        Err(_) if let Some(worded) = worded_status(raw) => snapshot.worded.push(worded),
        Err(why) => {
            snapshot.skipped.push(why);
            snapshot.skipped_raw.push(clip_raw(&raw.to_string()));
        }
    }
}

/// A container's status that no DCSA code stands for ("Cargo Received"), kept in COSCO's
/// words when its time and place read as well as a coded status's would.
fn worded_status(item: &Value) -> Option<WordedStatus> {
    let (status, time_key) = [
        ("containerNumberStatus", "timeOfIssue"),
        ("label", "locationDateTime"),
    ]
    .into_iter()
    .find_map(|(status_key, time_key)| Some((text(item, status_key)?, time_key)))?;
    if status_code(&status).is_some() {
        return None;
    }
    let place = Place::read(&text(item, "location")?);
    let at = place.utc(&text(item, time_key)?, time_key).ok()?;
    Some(WordedStatus {
        // A status is a few words; more is not a status, and is cut rather than stored whole.
        words: status.chars().take(200).collect(),
        at,
        equipment_reference: text(item, "containerNumber"),
        un_location_code: place.locode,
        location_name: Some(place.name),
    })
}

fn array<'a>(value: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    value
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn text(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `2015-10-25 17:00` or `2015-10-25 17:00:00`: a wall-clock time, without its zone.
fn local_time(text: &str) -> Option<NaiveDateTime> {
    ["%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(text.trim(), format).ok())
}

/// A wall-clock time in `zone` as UTC: the earlier reading of a time the clocks show twice,
/// and an hour later for one in a spring-forward gap (as the clocks on the quay showed it).
fn in_zone(local: NaiveDateTime, zone: Tz) -> Option<DateTime<Utc>> {
    let pick = |result: LocalResult<DateTime<Tz>>| match result {
        LocalResult::Single(at) | LocalResult::Ambiguous(at, _) => Some(at.with_timezone(&Utc)),
        LocalResult::None => None,
    };
    pick(zone.from_local_datetime(&local)).or_else(|| {
        let later = local.checked_add_signed(chrono::TimeDelta::hours(1))?;
        pick(zone.from_local_datetime(&later))
    })
}

/// A place as COSCO writes it (`Aisa World Port Terminal,Yangon,Yangon,Myanmar`,
/// `Dallas ,Texas ,United States`, `Long Beach,United States`, `Qingdao`), with the
/// UN/LOCODE and time zone Tidemark's port list gives it. The city is looked up by name in
/// the named country; without a country, only a name one port alone has is taken. A place
/// not found keeps no UN/LOCODE, and its times can be read only in a country with one zone.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    /// What COSCO wrote.
    pub name: String,
    /// The facility before the city, when named (`Aisa World Port Terminal`).
    pub facility: Option<String>,
    pub locode: Option<String>,
    /// The IANA zone of the place, or of its country where the whole country has one.
    pub zone: Option<Tz>,
}

impl Place {
    /// Reads and resolves COSCO's place text.
    pub fn read(text: &str) -> Self {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let (facility, city, country) = match parts.as_slice() {
            [single] => match single.split_once(" - ") {
                Some((city, facility)) => (Some(facility.trim()), city.trim(), None),
                None => (None, *single, None),
            },
            [city, country] => (None, *city, Some(*country)),
            [city, _state, country] => (None, *city, Some(*country)),
            [.., city, _state, country] => {
                // The facility is everything before (its name may hold commas).
                let facility = text.rsplitn(4, ',').nth(3).map(str::to_owned);
                return Self::resolve(text, facility, city, Some(country));
            }
            [] => (None, "", None),
        };
        Self::resolve(text, facility.map(str::to_owned), city, country)
    }

    fn resolve(text: &str, facility: Option<String>, city: &str, country: Option<&str>) -> Self {
        let ports = PortNames::embedded();
        let codes = country.map(|c| ports.country_codes(c));
        let locode = ports.locode(city, codes.as_deref());
        let reference = ReferenceData::embedded();
        let zone = locode
            .as_deref()
            .and_then(|l| reference.time_zone_of_place(l))
            .or_else(|| {
                // "ZZZ": any other place in the country (UN/LOCODE's own convention).
                let country = codes.as_ref()?.first()?;
                reference.time_zone_of_place(&format!("{country}ZZZ"))
            })
            .and_then(|zone| zone.parse::<Tz>().ok());
        Self {
            name: text.trim().to_owned(),
            facility: facility
                .map(|f| f.trim().to_owned())
                .filter(|f| !f.is_empty()),
            locode,
            zone,
        }
    }

    /// COSCO's local time `at` (its field `field`) at this place, as UTC; why not, when the
    /// place's zone is not known (the time is then not guessed).
    fn utc(&self, at: &str, field: &str) -> Result<DateTime<Utc>, String> {
        let local = local_time(at).ok_or_else(|| format!("{field} {at:?} is not a COSCO date"))?;
        let zone = self.zone.ok_or_else(|| {
            format!(
                "{field} {at:?} is a local time at {:?}, a place whose time zone Tidemark \
                 does not know",
                self.name
            )
        })?;
        in_zone(local, zone).ok_or_else(|| format!("{field} {at:?} is not a time in {zone}"))
    }
}

/// The port list's names, for COSCO's place names.
struct PortNames {
    /// Lower-case port name: `(locode, country code)` of each port so named.
    by_name: HashMap<String, Vec<(String, String)>>,
    /// Lower-case country name: the ISO codes of the ports listed under it, the code of most
    /// of them first (the list files a Macau port under "China", say).
    countries: HashMap<String, Vec<String>>,
}

impl PortNames {
    fn embedded() -> &'static Self {
        static NAMES: OnceLock<PortNames> = OnceLock::new();
        NAMES.get_or_init(|| {
            let mut by_name: HashMap<String, Vec<(String, String)>> = HashMap::new();
            let mut counts: HashMap<String, HashMap<String, usize>> = HashMap::new();
            for port in ReferenceData::embedded().ports(&PortFilter::default()) {
                by_name
                    .entry(port.name.trim().to_lowercase())
                    .or_default()
                    .push((port.locode.clone(), port.country_code.clone()));
                *counts
                    .entry(port.country.trim().to_lowercase())
                    .or_default()
                    .entry(port.country_code.clone())
                    .or_default() += 1;
            }
            let countries = counts
                .into_iter()
                .map(|(name, codes)| {
                    let mut codes: Vec<(String, usize)> = codes.into_iter().collect();
                    codes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                    (name, codes.into_iter().map(|(code, _)| code).collect())
                })
                .collect();
            Self { by_name, countries }
        })
    }

    /// The ISO codes of a country named in English (or given as its code), the country's
    /// own first; empty when the name is not known.
    fn country_codes(&self, country: &str) -> Vec<String> {
        let country = country.trim();
        if let Some(codes) = self.countries.get(&country.to_lowercase()) {
            return codes.clone();
        }
        let is_code = country.len() == 2
            && self
                .countries
                .values()
                .flatten()
                .any(|c| c.eq_ignore_ascii_case(country));
        if is_code {
            vec![country.to_ascii_uppercase()]
        } else {
            Vec::new()
        }
    }

    /// The UN/LOCODE of the one port named `city`: among the country's ports when a country
    /// is named (none when that country is not known), else among all.
    fn locode(&self, city: &str, country: Option<&[String]>) -> Option<String> {
        let ports = self.by_name.get(&city.trim().to_lowercase())?;
        let candidates: Vec<&(String, String)> = match country {
            Some(codes) => ports.iter().filter(|(_, cc)| codes.contains(cc)).collect(),
            None => ports.iter().collect(),
        };
        match candidates.as_slice() {
            [(locode, _)] => Some(locode.clone()),
            _ => None,
        }
    }
}

/// A container move from COSCO's status text (`Loaded at First POL`, …), as DCSA codes.
pub fn status_code(status: &str) -> Option<(DcsaCode, EmptyIndicator)> {
    let status = status.trim().to_ascii_lowercase();
    let laden = EmptyIndicator::Laden;
    Some(if status.starts_with("empty equipment despatched") {
        (DcsaCode::Gtot, EmptyIndicator::Empty)
    } else if status.starts_with("empty equipment returned") {
        (DcsaCode::Gtin, EmptyIndicator::Empty)
    } else if status.starts_with("loaded at") {
        (DcsaCode::Load, laden)
    } else if status.starts_with("discharged at") {
        (DcsaCode::Disc, laden)
    } else if status.starts_with("gate-in") || status.starts_with("gate in") {
        (DcsaCode::Gtin, laden)
    } else if status.starts_with("gate-out") || status.starts_with("gate out") {
        (DcsaCode::Gtot, laden)
    } else {
        return None;
    })
}

/// Where in the route COSCO's status text puts the move: `… First POL`, `… T/S POL` and
/// `… T/S POD` (a transshipment), `… Last POD`, `… Final Hub` (the place of delivery), and
/// `Empty Equipment Returned`, which ends the box's cycle after delivery (the import side;
/// an earlier cycle's return is left out before this is read).
pub fn status_hint(status: &str) -> Option<RouteHint> {
    let status = status.trim().to_ascii_lowercase();
    if status.starts_with("empty equipment returned") {
        Some(RouteHint::ImportMove)
    } else if status.contains("t/s po") {
        Some(RouteHint::Transshipment)
    } else if status.contains("first pol") {
        Some(RouteHint::PortOfLoading)
    } else if status.contains("last pod") {
        Some(RouteHint::PortOfDischarge)
    } else if status.contains("final hub") {
        Some(RouteHint::PlaceOfDelivery)
    } else {
        None
    }
}

fn equipment_event(
    item: &Value,
    status_key: &str,
    time_key: &str,
    documents: &[DocumentReference],
    id: Option<String>,
) -> Result<CarrierEvent, String> {
    let status = text(item, status_key).ok_or_else(|| format!("a move without {status_key}"))?;
    let (code, empty) =
        status_code(&status).ok_or_else(|| format!("unknown COSCO status {status:?}"))?;
    let at_text = text(item, time_key).ok_or_else(|| format!("{status:?} without {time_key}"))?;
    let place = text(item, "location").map(|location| Place::read(&location));
    let at = match &place {
        Some(place) => place.utc(&at_text, time_key)?,
        None => {
            return Err(format!(
                "{status:?} without a location, so its local time cannot be read"
            ));
        }
    };
    let mode = match text(item, "transportation")
        .map(|t| t.to_ascii_lowercase())
        .as_deref()
    {
        Some("vessel") => Some(ModeOfTransport::Vessel),
        Some("truck") => Some(ModeOfTransport::Truck),
        Some("rail") => Some(ModeOfTransport::Rail),
        Some("barge") => Some(ModeOfTransport::Barge),
        _ if matches!(code, DcsaCode::Load | DcsaCode::Disc) => Some(ModeOfTransport::Vessel),
        _ => None,
    };
    let locode = place.as_ref().and_then(|p| p.locode.clone());
    let facility = place.as_ref().and_then(|p| p.facility.clone());
    let transport_call = (mode.is_some() || facility.is_some()).then(|| TransportCall {
        un_location_code: locode.clone(),
        facility_name: facility,
        mode_of_transport: mode,
        ..TransportCall::default()
    });
    Ok(CarrierEvent {
        event_id: id.map(|id| format!("COSU-{id}")),
        kind: EventKind::Equipment,
        dcsa_code: code,
        classifier: Classifier::Actual,
        event_datetime: at,
        event_created_datetime: None,
        equipment_reference: text(item, "containerNumber"),
        iso_equipment_code: None,
        empty_indicator: Some(empty),
        un_location_code: locode,
        location_name: place.map(|p| p.name),
        transport_call,
        document_references: documents.to_vec(),
        references: Vec::new(),
        route_hint: status_hint(&status),
    })
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use tidemark_domain::MockClock;
    use wiremock::matchers::{method, path, query_param};
    use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

    use super::*;

    fn keys() -> CoscoKeys {
        CoscoKeys {
            api_key: "my-api-key".to_owned(),
            secret_key: "my-secret".to_owned(),
        }
    }

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
    }

    /// COSCO's gateway, strictly: answers only a request whose signature, date and digest
    /// are right, as a gateway with the same keys would check them.
    struct StrictCosco {
        keys: CoscoKeys,
        now: DateTime<Utc>,
        body: Value,
    }

    impl Respond for StrictCosco {
        fn respond(&self, request: &Request) -> ResponseTemplate {
            let header = |name: &str| {
                request
                    .headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned()
            };
            let line = format!(
                "GET {}{} HTTP/1.1",
                request.url.path(),
                request
                    .url
                    .query()
                    .map(|q| format!("?{q}"))
                    .unwrap_or_default()
            );
            let (date, digest, nonce) = (header(X_DATE), header(X_DIGEST), header(X_CONTENT_MD5));
            let expected = hmac_sha256_base64(
                &self.keys.secret_key,
                &signing_string(&date, &digest, &nonce, &line),
            );
            let authorization = format!(
                "hmac username=\"{}\",algorithm=\"hmac-sha256\",headers=\"X-Coscon-Date \
                 X-Coscon-Digest X-Coscon-Content-Md5 request-line\",signature=\"{expected}\"",
                self.keys.api_key
            );
            let fresh = DateTime::parse_from_rfc2822(&date)
                .is_ok_and(|at| (at.with_timezone(&Utc) - self.now).num_seconds().abs() <= 120);
            let empty_digest = "SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";
            if header(X_AUTHORIZATION) != authorization
                || !fresh
                || digest != empty_digest
                || nonce.len() != 32
                || header(X_HMAC) != nonce
            {
                return ResponseTemplate::new(401);
            }
            ResponseTemplate::new(200).set_body_json(self.body.clone())
        }
    }

    fn container_answer() -> Value {
        serde_json::json!({"code": 0, "message": "success", "data": {"type": "cntr", "numberType": "cntr",
        "content": {"containers": [{
          "containerCircleStatus": [
            {"uuid": "3", "containerNumber": "CBHU4398907", "containerNumberStatus": "Discharged at Last POD",
             "location": "Aisa World Port Terminal,Yangon,Yangon,Myanmar", "timeOfIssue": "2015-10-25 17:00", "transportation": " "},
            {"uuid": "2", "containerNumber": "CBHU4398907", "containerNumberStatus": "Loaded at First POL",
             "location": "QQCTU Qingdao Qianwan United Ctn,Qingdao,Shandong,China", "timeOfIssue": "2015-09-24 18:15", "transportation": "Vessel"},
            {"uuid": "1", "containerNumber": "CBHU4398907", "containerNumberStatus": "Cargo Received",
             "location": "Qingdao", "timeOfIssue": "2015-09-19 21:31", "transportation": "Truck"}
          ],
          "container": {"containerNumber": "CBHU4398907"},
          "containerHistorys": [
            {"uuid": "2", "containerNumber": "CBHU4398907", "containerNumberStatus": "Loaded at First POL",
             "location": "Qingdao", "timeOfIssue": "2015-09-24 18:15", "transportation": "Vessel"}
          ]
        }]}}})
    }

    async fn server(answer: StrictCosco) -> MockServer {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/service/info/tracking/CBHU4398907"))
            .and(query_param("numberType", "cntr"))
            .respond_with(answer)
            .mount(&server)
            .await;
        server
    }

    fn query() -> TrackingQuery {
        TrackingQuery {
            reference_kind: ReferenceKind::Equipment,
            reference: "CBHU4398907".to_owned(),
            sandbox_epoch: None,
        }
    }

    fn client(server: &MockServer, keys: CoscoKeys) -> CoscoClient {
        CoscoClient::new(
            "COSU",
            Url::parse(&format!("{}/service", server.uri())).unwrap(),
            keys,
            Arc::new(MockClock::new(now())),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn a_signed_container_query_is_answered_and_mapped_into_dcsa_events() {
        let server = server(StrictCosco {
            keys: keys(),
            now: now(),
            body: container_answer(),
        })
        .await;

        let snapshot = client(&server, keys()).fetch(&query()).await.unwrap();

        let codes: Vec<_> = snapshot
            .events
            .iter()
            .map(|e| (e.dcsa_code, e.event_datetime.to_rfc3339()))
            .collect();
        assert_eq!(
            codes,
            [
                (DcsaCode::Disc, "2015-10-25T10:30:00+00:00".to_owned()),
                (DcsaCode::Load, "2015-09-24T10:15:00+00:00".to_owned()),
            ]
        );
        assert!(snapshot.skipped.is_empty(), "{:?}", snapshot.skipped);
        assert_eq!(
            snapshot.events[1].mode_of_transport(),
            Some(ModeOfTransport::Vessel)
        );
    }

    #[tokio::test]
    async fn a_status_no_dcsa_code_stands_for_is_kept_in_coscos_words() {
        let server = server(StrictCosco {
            keys: keys(),
            now: now(),
            body: container_answer(),
        })
        .await;

        let snapshot = client(&server, keys()).fetch(&query()).await.unwrap();

        assert_eq!(
            snapshot.worded,
            [WordedStatus {
                words: "Cargo Received".to_owned(),
                at: "2015-09-19T13:31:00Z".parse().unwrap(),
                equipment_reference: Some("CBHU4398907".to_owned()),
                un_location_code: Some("CNTAO".to_owned()),
                location_name: Some("Qingdao".to_owned()),
            }]
        );
    }

    #[test]
    fn a_status_without_a_readable_place_is_left_out_not_kept_in_words() {
        let item = serde_json::json!({"containerNumberStatus": "Cargo Received",
                          "timeOfIssue": "2015-09-19 21:31", "containerNumber": "CBHU4398907"});

        assert_eq!(worded_status(&item), None);
    }

    #[tokio::test]
    async fn a_wrong_secret_is_refused_credentials() {
        let server = server(StrictCosco {
            keys: keys(),
            now: now(),
            body: container_answer(),
        })
        .await;
        let wrong = CoscoKeys {
            secret_key: "not-it".to_owned(),
            ..keys()
        };

        let error = client(&server, wrong).fetch(&query()).await.unwrap_err();

        assert!(
            matches!(error, CarrierError::CredentialsRefused(_)),
            "{error:?}"
        );
    }

    fn booking_query() -> TrackingQuery {
        TrackingQuery {
            reference_kind: ReferenceKind::Booking,
            reference: "6103622780".to_owned(),
            sandbox_epoch: None,
        }
    }

    /// COSCO's documented booking answer, trimmed to what is read.
    fn booking_answer(leg: Value, latest: Value) -> Vec<u8> {
        serde_json::json!({"code": 0, "message": "success", "data": {"type": "bkg", "numberType": "both",
        "content": {
          "actualShipment": [leg],
          "trackingPath": {
            "fromCity": "Qingdao ,Shandong ,China", "toCity": "Dallas ,Texas ,United States",
            "cgoAvailTm": "2015-02-04 06:15",
            "pol": "Qingdao - QQCTU Qingdao Qianwan United Ctn",
            "pod": "Long Beach - Pacific Container Terminal"
          },
          "containerStatus": [{"label": "x", "containers": [latest]}]
        }}})
        .to_string()
        .into_bytes()
    }

    fn leg() -> Value {
        serde_json::json!({
          "vesselName": "COSCO PHILIPPINES", "voyageNo": "039E", "service": "CEN",
          "portOfLoading": "Qingdao", "actualDepartureDate": "2014-12-29 11:00",
          "expectedDateOfDeparture": "2014-12-29 17:00",
          "portOfDischarge": "Long Beach", "actualArrivalDate": "2015-01-27 05:24",
          "estimatedDateOfArrival": "2015-01-27 06:00", "actualShippingDate": "2014-12-29 07:59",
          "city": "Long Beach,United States", "actualDischargeDate": "2015-01-29 10:14"
        })
    }

    fn empty_returned_at_dallas(at: &str) -> Value {
        serde_json::json!({
          "containerNumber": "CBHU4398907", "label": "Empty Equipment Returned",
          "location": "Equipment Storage Services,Dallas,Texas,United States",
          "locationDateTime": at, "transportation": "Truck", "isNorthAmericaRails": false
        })
    }

    fn summary(snapshot: &CarrierSnapshot) -> Vec<String> {
        snapshot
            .events
            .iter()
            .map(|e| {
                format!(
                    "{} {} {} {} {}",
                    e.dcsa_code,
                    e.classifier,
                    e.event_datetime.format("%Y-%m-%dT%H:%MZ"),
                    e.un_location_code.as_deref().unwrap_or("-"),
                    e.equipment_reference.as_deref().unwrap_or("-"),
                )
            })
            .collect()
    }

    #[test]
    fn a_place_named_with_its_country_is_its_ports_unlocode_and_zone() {
        let place = Place::read("Aisa World Port Terminal,Yangon,Yangon,Myanmar");

        assert_eq!(place.locode.as_deref(), Some("MMRGN"));
        assert_eq!(place.facility.as_deref(), Some("Aisa World Port Terminal"));
        assert_eq!(place.zone, Some(chrono_tz::Asia::Yangon));
    }

    #[test]
    fn a_facility_name_with_a_comma_leaves_the_city_before_the_state_and_country() {
        let place = Place::read("Shanghai Shengdong (I), Yangshan,Shanghai,Shanghai,China");

        assert_eq!(place.locode.as_deref(), Some("CNSHA"));
        assert_eq!(
            place.facility.as_deref(),
            Some("Shanghai Shengdong (I), Yangshan")
        );
    }

    #[test]
    fn a_name_several_countries_ports_share_is_no_unlocode_without_its_country() {
        assert_eq!(Place::read("Portland").locode, None);
        assert_eq!(
            Place::read("Northwest Container Services Inc.,Portland,Oregon,United States")
                .locode
                .as_deref(),
            Some("USPWM")
        );
    }

    #[test]
    fn a_local_time_at_a_place_whose_zone_is_unknown_is_left_out_not_guessed() {
        let body = serde_json::json!({"code": 0, "data": {"type": "cntr", "content": {"containers": [{
        "containerCircleStatus": [
          {"uuid": "1", "containerNumber": "CBHU4398907", "containerNumberStatus": "Gate-out from Final Hub",
           "location": "Some Depot,Nowhere Town,Ohio,United States", "timeOfIssue": "2015-10-25 17:00"}
        ]}]}}});

        let snapshot = parse_tracking(body.to_string().as_bytes(), &query()).unwrap();

        assert!(snapshot.events.is_empty());
        assert!(
            snapshot.skipped[0].contains("time zone"),
            "{:?}",
            snapshot.skipped
        );
    }

    #[test]
    fn a_place_in_a_one_zone_country_takes_the_countrys_zone_without_a_unlocode() {
        let place = Place::read("Some Depot,Nowhere Town,Shandong,China");

        assert_eq!(place.locode, None);
        assert_eq!(place.zone, Some(chrono_tz::Asia::Shanghai));
    }

    #[test]
    fn the_containers_earlier_cycles_in_its_history_are_not_attached() {
        let body = serde_json::json!({"code": 0, "data": {"type": "cntr", "content": {"containers": [{
        "containerCircleStatus": [
          {"uuid": "b", "containerNumber": "CBHU4398907", "containerNumberStatus": "Loaded at First POL",
           "location": "QQCTU,Qingdao,Shandong,China", "timeOfIssue": "2015-09-24 18:15", "transportation": "Vessel"}
        ],
        "containerHistorys": [
          {"uuid": "a", "containerNumber": "CBHU4398907", "containerNumberStatus": "Empty Equipment Returned",
           "location": "Depot,Portland,Oregon,United States", "timeOfIssue": "2015-06-02 14:25"}
        ]}]}}});

        let snapshot = parse_tracking(body.to_string().as_bytes(), &query()).unwrap();

        assert_eq!(
            summary(&snapshot),
            ["LOAD ACT 2015-09-24T10:15Z CNTAO CBHU4398907"]
        );
        assert!(snapshot.skipped.is_empty());
    }

    #[test]
    fn an_empty_return_with_moves_after_it_ends_the_earlier_cycle() {
        let body = serde_json::json!({"code": 0, "data": {"type": "cntr", "content": {"containers": [{
        "containerCircleStatus": [
          {"uuid": "c", "containerNumber": "CBHU4398907", "containerNumberStatus": "Empty Equipment Despatched",
           "location": "Depot,Qingdao,Shandong,China", "timeOfIssue": "2015-09-16 10:40"},
          {"uuid": "b", "containerNumber": "CBHU4398907", "containerNumberStatus": "Empty Equipment Returned",
           "location": "Depot,Qingdao,Shandong,China", "timeOfIssue": "2015-09-02 10:40"},
          {"uuid": "a", "containerNumber": "CBHU4398907", "containerNumberStatus": "Discharged at Last POD",
           "location": "Terminal,Qingdao,Shandong,China", "timeOfIssue": "2015-08-30 10:40"}
        ]}]}}});

        let snapshot = parse_tracking(body.to_string().as_bytes(), &query()).unwrap();

        assert_eq!(
            summary(&snapshot),
            ["GTOT ACT 2015-09-16T02:40Z CNTAO CBHU4398907"]
        );
    }

    #[test]
    fn cosco_status_texts_say_where_in_the_route_a_move_is() {
        assert_eq!(
            status_hint("Loaded at First POL"),
            Some(RouteHint::PortOfLoading)
        );
        assert_eq!(
            status_hint("Discharged at T/S POD"),
            Some(RouteHint::Transshipment)
        );
        assert_eq!(
            status_hint("Loaded at T/S POL"),
            Some(RouteHint::Transshipment)
        );
        assert_eq!(
            status_hint("Discharged at Last POD"),
            Some(RouteHint::PortOfDischarge)
        );
        assert_eq!(
            status_hint("Gate-in at Final Hub"),
            Some(RouteHint::PlaceOfDelivery)
        );
        assert_eq!(
            status_hint("Empty Equipment Returned"),
            Some(RouteHint::ImportMove)
        );
        assert_eq!(status_hint("Empty Equipment Despatched"), None);
    }

    #[test]
    fn a_bookings_leg_is_shipped_departed_arrived_and_discharged_in_its_ports_local_time() {
        let body = booking_answer(leg(), empty_returned_at_dallas("2015-02-06 09:35"));

        let snapshot = parse_tracking(&body, &booking_query()).unwrap();

        let events = summary(&snapshot);
        for expected in [
            "LOAD ACT 2014-12-28T23:59Z CNTAO CBHU4398907",
            "DEPA ACT 2014-12-29T03:00Z CNTAO -",
            "ARRI ACT 2015-01-27T13:24Z USLGB -",
            "DISC ACT 2015-01-29T18:14Z USLGB CBHU4398907",
        ] {
            assert!(
                events.contains(&expected.to_owned()),
                "{expected} in {events:?}"
            );
        }
    }

    #[test]
    fn a_legs_vessel_voyage_and_route_place_go_with_its_events() {
        let body = booking_answer(leg(), empty_returned_at_dallas("2015-02-06 09:35"));

        let snapshot = parse_tracking(&body, &booking_query()).unwrap();

        let departure = snapshot
            .events
            .iter()
            .find(|e| e.dcsa_code == DcsaCode::Depa)
            .unwrap();
        let call = departure.transport_call.as_ref().unwrap();
        assert_eq!(call.vessel_name.as_deref(), Some("COSCO PHILIPPINES"));
        assert_eq!(call.carrier_export_voyage_number.as_deref(), Some("039E"));
        assert_eq!(
            call.facility_name.as_deref(),
            Some("QQCTU Qingdao Qianwan United Ctn")
        );
        assert_eq!(departure.route_hint, Some(RouteHint::PortOfLoading));
    }

    #[test]
    fn a_departure_estimate_an_actual_has_replaced_is_not_read() {
        let body = booking_answer(leg(), empty_returned_at_dallas("2015-02-06 09:35"));

        let snapshot = parse_tracking(&body, &booking_query()).unwrap();

        assert!(
            !snapshot
                .events
                .iter()
                .any(|e| e.classifier == Classifier::Estimated && e.dcsa_code == DcsaCode::Depa),
            "{:?}",
            summary(&snapshot)
        );
    }

    #[test]
    fn an_arrival_estimate_stays_beside_the_actual_arrival_as_the_lines_last_eta() {
        let body = booking_answer(leg(), empty_returned_at_dallas("2015-02-06 09:35"));

        let snapshot = parse_tracking(&body, &booking_query()).unwrap();

        let arrivals: Vec<Classifier> = snapshot
            .events
            .iter()
            .filter(|e| {
                e.dcsa_code == DcsaCode::Arri && e.route_hint != Some(RouteHint::PlaceOfDelivery)
            })
            .map(|e| e.classifier)
            .collect();
        assert_eq!(arrivals, [Classifier::Actual, Classifier::Estimated]);
    }

    #[test]
    fn an_estimated_arrival_without_an_actual_is_the_ports_eta() {
        let mut at_sea = leg();
        for field in ["actualArrivalDate", "actualDischargeDate"] {
            at_sea.as_object_mut().unwrap().remove(field);
        }
        let body = booking_answer(at_sea, empty_returned_at_dallas("2015-02-06 09:35"));

        let snapshot = parse_tracking(&body, &booking_query()).unwrap();

        assert!(summary(&snapshot).contains(&"ARRI EST 2015-01-27T14:00Z USLGB -".to_owned()));
    }

    #[test]
    fn the_cargos_availability_is_the_estimated_arrival_at_the_destination_by_road() {
        let body = booking_answer(leg(), empty_returned_at_dallas("2015-02-06 09:35"));

        let snapshot = parse_tracking(&body, &booking_query()).unwrap();

        let eta = snapshot
            .events
            .iter()
            .find(|e| e.route_hint == Some(RouteHint::PlaceOfDelivery))
            .unwrap();
        assert_eq!(
            summary(&CarrierSnapshot {
                events: vec![eta.clone()],
                ..CarrierSnapshot::default()
            }),
            ["ARRI EST 2015-02-04T12:15Z USDAL -"]
        );
        assert_eq!(eta.mode_of_transport(), Some(ModeOfTransport::Truck));
    }

    #[test]
    fn a_containers_empty_return_before_the_shipments_first_load_is_an_earlier_cycles() {
        let body = booking_answer(leg(), empty_returned_at_dallas("2014-12-01 09:35"));

        let snapshot = parse_tracking(&body, &booking_query()).unwrap();

        assert!(
            !snapshot.events.iter().any(is_empty_return),
            "{:?}",
            summary(&snapshot)
        );
    }

    #[test]
    fn a_containers_empty_return_after_the_voyage_is_kept_in_its_places_time() {
        let body = booking_answer(leg(), empty_returned_at_dallas("2015-02-06 09:35"));

        let snapshot = parse_tracking(&body, &booking_query()).unwrap();

        assert!(
            summary(&snapshot).contains(&"GTIN ACT 2015-02-06T15:35Z USDAL CBHU4398907".to_owned())
        );
    }

    #[test]
    fn an_unknown_number_is_not_found() {
        let body = br#"{"code": 0, "message": "success", "data": {"type": "none", "numberType": "none", "content": null}}"#;

        assert!(matches!(
            parse_tracking(body, &query()),
            Err(CarrierError::NotFound)
        ));
    }

    #[test]
    fn the_signature_covers_date_digest_nonce_and_request_line() {
        let signed = sign(
            &keys(),
            "GET /service/info/tracking/X?numberType=cntr HTTP/1.1",
            b"",
            now(),
            "0123456789abcdef0123456789abcdef",
        );

        assert_eq!(signed.date, "Sun, 01 Mar 2026 12:00:00 GMT");
        assert_eq!(
            signed.digest,
            "SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
        assert!(signed.authorization.starts_with(
            "hmac username=\"my-api-key\",algorithm=\"hmac-sha256\",headers=\"X-Coscon-Date \
             X-Coscon-Digest X-Coscon-Content-Md5 request-line\",signature=\""
        ));
    }
}
