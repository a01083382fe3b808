//! The sandbox carrier's DCSA Track & Trace endpoints: 2.2's `GET /v2/events` and 3.0's
//! `GET /v3/events`, serving the same voyages.
//!
//! 3.0 is asked by `documentReference` (with `documentTypeCodes` `TRD` or `BKG`; the later
//! drafts' `transportDocumentReference` and `carrierBookingReference` work too) and answers
//! `{"events": [...]}` in 3.0's shape, ten events a page, the next page linked by a relative
//! `Next-Page` link that repeats the query with its `cursor`.
//!
//! Beyond the spec:
//! - `tidemarkEpoch` (RFC 3339) says when tracking started; voyages are laid out from it.
//!   Tidemark's connector sends the tracking request's creation time. Without it the epoch is
//!   the start of the current UTC day, so a voyage stays put for a day.
//! - Over 2.2, an unknown number is a 404 with a DCSA error body, not an empty list, so that
//!   Tidemark can tell "not found" from "nothing yet"; over 3.0 it is 200 with no events, as
//!   3.0.0 says.
//! - Pages are cut from the events as they stood when the first page was asked for: the
//!   cursor carries that time, so a voyage moving on between two pages cannot skip or repeat
//!   events. The cursor goes out as `Next-Page-Cursor` (T&T 3.0's name, which Tidemark's
//!   connector reads) and as `Next-Page` (2.2's), likewise for the current page.
//! - Only the reference and paging parameters are read; DCSA's other filters are ignored.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{OriginalUri, RawQuery, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use tidemark_domain::Clock;

use super::{DcsaEvent, Sandbox};
use crate::carrier::ReferenceKind;

/// The T&T versions served, sent in `API-Version`.
const API_VERSION: &str = "2.2.0";
const API_VERSION_3: &str = "3.0.0";
const DEFAULT_LIMIT: usize = 100;
/// 3.0 pages are small, so that clients page through a voyage.
const DEFAULT_LIMIT_3: usize = 10;
/// DCSA lets a producer cap the page size; larger limits are served in pages of this size.
const MAX_LIMIT: usize = 1_000;

#[derive(Clone)]
struct SandboxState {
    sandbox: Arc<Sandbox>,
    clock: Arc<dyn Clock>,
}

/// The sandbox carrier's DCSA T&T routes: `GET /v2/events` (2.2) and `GET /v3/events` (3.0).
pub fn router(sandbox: Arc<Sandbox>, clock: Arc<dyn Clock>) -> Router {
    Router::new()
        .route("/v2/events", get(list_events_v2))
        .route("/v3/events", get(list_events_v3))
        // 3.0.0's own path (its spec names `/events` under the server's address).
        .route("/events", get(list_events_v3))
        .with_state(SandboxState { sandbox, clock })
}

/// Which T&T version a request came in on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Version {
    V2_2,
    V3_0,
}

impl Version {
    fn api_version(self) -> &'static str {
        match self {
            Self::V2_2 => API_VERSION,
            Self::V3_0 => API_VERSION_3,
        }
    }
}

/// The parameters the sandbox reads.
#[derive(Default)]
struct EventsQuery {
    document_reference: Option<String>,
    document_type_codes: Option<String>,
    transport_document_reference: Option<String>,
    carrier_booking_reference: Option<String>,
    equipment_reference: Option<String>,
    limit: Option<String>,
    cursor: Option<String>,
    epoch: Option<String>,
}

impl EventsQuery {
    fn parse(raw: Option<&str>) -> Self {
        let mut query = Self::default();
        for (name, value) in url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
            let value = Some(value.trim().to_owned()).filter(|value| !value.is_empty());
            let slot = match name.as_ref() {
                "documentReference" => &mut query.document_reference,
                "documentTypeCodes" => &mut query.document_type_codes,
                "transportDocumentReference" => &mut query.transport_document_reference,
                "carrierBookingReference" => &mut query.carrier_booking_reference,
                "equipmentReference" => &mut query.equipment_reference,
                "limit" => &mut query.limit,
                "cursor" => &mut query.cursor,
                "tidemarkEpoch" => &mut query.epoch,
                _ => continue,
            };
            *slot = value;
        }
        query
    }
}

async fn list_events_v2(
    State(state): State<SandboxState>,
    method: Method,
    OriginalUri(uri): OriginalUri,
    RawQuery(raw): RawQuery,
) -> Response {
    list_events(Version::V2_2, &state, &method, &uri, raw.as_deref())
}

async fn list_events_v3(
    State(state): State<SandboxState>,
    method: Method,
    OriginalUri(uri): OriginalUri,
    RawQuery(raw): RawQuery,
) -> Response {
    list_events(Version::V3_0, &state, &method, &uri, raw.as_deref())
}

fn list_events(
    version: Version,
    state: &SandboxState,
    method: &Method,
    uri: &axum::http::Uri,
    raw: Option<&str>,
) -> Response {
    let now = state.clock.now();
    let fail = |status: StatusCode, reason: &str, message: String| {
        // T&T 3.0.0 answers a reference it does not know with 200 and no events (a 404
        // there means a wrong address); 2.2 with a 404.
        if version == Version::V3_0 && status == StatusCode::NOT_FOUND {
            return (
                [("api-version", API_VERSION_3)],
                Json(serde_json::json!({"events": []})),
            )
                .into_response();
        }
        dcsa_error(
            version,
            status,
            method,
            &uri.to_string(),
            now,
            reason,
            message,
        )
    };
    let query = EventsQuery::parse(raw);

    if version == Version::V3_0
        && let Some(codes) = &query.document_type_codes
        && !codes
            .split(',')
            .any(|code| matches!(code.trim(), "TRD" | "BKG"))
    {
        return fail(
            StatusCode::NOT_FOUND,
            "notFound",
            format!(
                "the sandbox finds shipments by bill of lading (TRD) or booking (BKG), not {codes}"
            ),
        );
    }
    let document_reference = query
        .document_reference
        .as_ref()
        .filter(|_| version == Version::V3_0);
    let reference = match (
        document_reference.or(query.transport_document_reference.as_ref()),
        &query.carrier_booking_reference,
    ) {
        (Some(bl), Some(booking)) if !bl.eq_ignore_ascii_case(booking) => {
            return fail(
                StatusCode::NOT_FOUND,
                "notFound",
                format!("no shipment has bill of lading {bl} and booking {booking}"),
            );
        }
        (Some(reference), _) | (None, Some(reference)) => reference.clone(),
        (None, None) if query.equipment_reference.is_some() => {
            return fail(
                StatusCode::NOT_FOUND,
                "notFound",
                "the sandbox finds shipments by transportDocumentReference or \
                 carrierBookingReference; equipmentReference only narrows them down"
                    .to_owned(),
            );
        }
        (None, None) => {
            return fail(
                StatusCode::BAD_REQUEST,
                "invalidQuery",
                "one of transportDocumentReference, carrierBookingReference or \
                 equipmentReference is required"
                    .to_owned(),
            );
        }
    };
    let default_limit = match version {
        Version::V2_2 => DEFAULT_LIMIT,
        Version::V3_0 => DEFAULT_LIMIT_3,
    };
    let limit = match query.limit.as_deref().map(str::parse::<usize>) {
        None => default_limit,
        Some(Ok(limit)) if limit >= 1 => limit.min(MAX_LIMIT),
        Some(_) => {
            return fail(
                StatusCode::BAD_REQUEST,
                "invalidQuery",
                "limit must be a positive integer".to_owned(),
            );
        }
    };
    let page = match query.cursor.as_deref() {
        None => Page::first(now),
        Some(cursor) => match Page::decode(cursor) {
            Some(page) => page,
            None => {
                return fail(
                    StatusCode::BAD_REQUEST,
                    "invalidCursor",
                    "the cursor is not one this server issued".to_owned(),
                );
            }
        },
    };
    let epoch = match query.epoch.as_deref().map(DateTime::parse_from_rfc3339) {
        None => start_of_day(now),
        Some(Ok(epoch)) => epoch.with_timezone(&Utc),
        Some(Err(e)) => {
            return fail(
                StatusCode::BAD_REQUEST,
                "invalidQuery",
                format!("tidemarkEpoch must be an RFC 3339 date-time: {e}"),
            );
        }
    };

    let Some(voyage) =
        state
            .sandbox
            .voyage_for_reference(ReferenceKind::BillOfLading, &reference, epoch)
    else {
        return fail(
            StatusCode::NOT_FOUND,
            "notFound",
            format!("no shipment is known by {reference}"),
        );
    };
    let mut events = voyage.events_until(page.as_of);
    if let Some(container) = &query.equipment_reference {
        let on_voyage = voyage
            .containers()
            .iter()
            .any(|c| c.number.as_str().eq_ignore_ascii_case(container));
        if !on_voyage {
            return fail(
                StatusCode::NOT_FOUND,
                "notFound",
                format!("container {container} is not on shipment {reference}"),
            );
        }
        // Vessel events have no container; they stay, as they tell where the container is.
        events.retain(|event: &DcsaEvent| {
            event
                .equipment_reference
                .as_deref()
                .is_none_or(|number| number.eq_ignore_ascii_case(container))
        });
    }

    let start = page.offset.min(events.len());
    let end = start.saturating_add(limit).min(events.len());
    if version == Version::V3_0 {
        return v3_page(uri, raw, &page, &events, start, end);
    }
    let mut headers = HeaderMap::new();
    headers.insert("api-version", HeaderValue::from_static(API_VERSION));
    set_cursor(&mut headers, ["current-page-cursor", "current-page"], &page);
    if end < events.len() {
        let next = Page {
            offset: end,
            as_of: page.as_of,
        };
        set_cursor(&mut headers, ["next-page-cursor", "next-page"], &next);
    }
    (StatusCode::OK, headers, Json(&events[start..end])).into_response()
}

/// Where a page starts, and the time the events are taken at.
struct Page {
    offset: usize,
    as_of: DateTime<Utc>,
}

impl Page {
    fn first(now: DateTime<Utc>) -> Self {
        Self {
            offset: 0,
            // Whole seconds, so that the cursor's time is this very time.
            as_of: DateTime::from_timestamp(now.timestamp(), 0).unwrap_or(now),
        }
    }

    /// The cursor: `offset.seconds`, base64url-encoded to keep clients from building one.
    fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{}.{}", self.offset, self.as_of.timestamp()))
    }

    fn decode(cursor: &str) -> Option<Self> {
        let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let (offset, seconds) = text.split_once('.')?;
        Some(Self {
            offset: offset.parse().ok()?,
            as_of: DateTime::from_timestamp(seconds.parse().ok()?, 0)?,
        })
    }
}

fn set_cursor(headers: &mut HeaderMap, names: [&'static str; 2], page: &Page) {
    // base64url is always a valid header value.
    if let Ok(value) = HeaderValue::from_str(&page.encode()) {
        for name in names {
            headers.insert(HeaderName::from_static(name), value.clone());
        }
    }
}

/// A 3.0 page: `{"events": [...]}`, and a relative `Next-Page` link repeating the query with
/// the next page's cursor when there is more.
fn v3_page(
    uri: &axum::http::Uri,
    raw: Option<&str>,
    page: &Page,
    events: &[DcsaEvent],
    start: usize,
    end: usize,
) -> Response {
    let mut headers = HeaderMap::new();
    headers.insert("api-version", HeaderValue::from_static(API_VERSION_3));
    if end < events.len() {
        let next = Page {
            offset: end,
            as_of: page.as_of,
        };
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
            if name != "cursor" {
                query.append_pair(&name, &value);
            }
        }
        query.append_pair("cursor", &next.encode());
        let link = format!("{}?{}", uri.path(), query.finish());
        if let Ok(value) = HeaderValue::from_str(&link) {
            headers.insert(HeaderName::from_static("next-page"), value);
        }
    }
    let body = serde_json::json!({
        "events": events[start..end].iter().map(v3_event).collect::<Vec<_>>(),
    });
    (StatusCode::OK, headers, Json(body)).into_response()
}

/// A sandbox event in T&T 3.0's shape: the place in `eventLocation`, the codes in
/// `eventClassification`, the documents in `shipmentDetails`, the vessel in
/// `transportDetails` and the container in `equipmentDetails`.
fn v3_event(event: &DcsaEvent) -> serde_json::Value {
    use serde_json::{Map, Value, json};

    let seconds = |at: &DateTime<Utc>| at.to_rfc3339_opts(SecondsFormat::Secs, true);
    let call = &event.transport_call;
    let mut classification = Map::new();
    classification.insert("eventTypeCode".into(), json!(event.event_type.as_str()));
    classification.insert(
        "eventClassifierCode".into(),
        json!(event.event_classifier_code.as_str()),
    );
    if let Some(code) = event.transport_event_type_code {
        classification.insert("transportEventTypeCode".into(), json!(code.as_str()));
    }
    if let Some(code) = event.equipment_event_type_code {
        classification.insert("equipmentEventTypeCode".into(), json!(code.as_str()));
    }

    let mut transport_call = Map::new();
    transport_call.insert(
        "transportCallReference".into(),
        json!(call.transport_call_id.to_string()),
    );
    transport_call.insert(
        "transportCallSequenceNumber".into(),
        json!(call.transport_call_sequence_number),
    );
    transport_call.insert(
        "modeOfTransport".into(),
        json!(call.mode_of_transport.as_str()),
    );
    if let Some(service) = &call.carrier_service_code {
        transport_call.insert(
            "serviceCodeOrReference".into(),
            json!({ "carrierServiceCode": service }),
        );
    }
    if let Some(voyage) = &call.export_voyage_number {
        transport_call.insert(
            "exportVoyageNumberOrReference".into(),
            json!({ "carrierVoyageNumber": voyage }),
        );
    }
    if let Some(voyage) = &call.import_voyage_number {
        transport_call.insert(
            "importVoyageNumberOrReference".into(),
            json!({ "carrierVoyageNumber": voyage }),
        );
    }
    if let Some(vessel) = &call.vessel {
        transport_call.insert(
            "vesselTransport".into(),
            json!({
                "vesselIMONumber": vessel.vessel_imo_number,
                "vesselName": vessel.vessel_name,
            }),
        );
    }

    let mut out = Map::new();
    out.insert("eventID".into(), json!(event.event_id.to_string()));
    out.insert(
        "eventDateTime".into(),
        json!(seconds(&event.event_date_time)),
    );
    out.insert(
        "eventUpdatedDateTime".into(),
        json!(seconds(&event.event_created_date_time)),
    );
    let mut location = json!({
        "UNLocationCode": call.un_location_code,
        "facilityTypeCode": call.facility_type_code,
    });
    if let (Some(code), Some(provider)) = (&call.facility_code, call.facility_code_list_provider) {
        location["facility"] = json!({
            "facilityCode": code,
            "facilityCodeListProvider": provider,
        });
    }
    out.insert("eventLocation".into(), location);
    out.insert("eventClassification".into(), Value::Object(classification));
    // In the sandbox's order (booking, then bill of lading), as in the spec's example.
    let mut documents: Vec<Value> = event
        .document_references
        .iter()
        .map(|reference| {
            json!({
                "typeCode": reference.document_reference_type.as_str(),
                "reference": reference.document_reference_value,
            })
        })
        .collect();
    if !documents.is_empty() {
        let first = documents.remove(0);
        out.insert(
            "shipmentDetails".into(),
            json!({ "documentReference": first, "additionalDocumentReferences": documents }),
        );
    }
    out.insert(
        "transportDetails".into(),
        json!({ "transportCall": Value::Object(transport_call) }),
    );
    if let Some(container) = &event.equipment_reference {
        let mut equipment = Map::new();
        equipment.insert("equipmentReference".into(), json!(container));
        if let Some(code) = &event.iso_equipment_code {
            equipment.insert("ISOEquipmentCode".into(), json!(code));
        }
        if let Some(empty) = event.empty_indicator_code {
            equipment.insert("emptyIndicatorCode".into(), json!(empty.as_str()));
        }
        out.insert("equipmentDetails".into(), Value::Object(equipment));
    }
    Value::Object(out)
}

fn start_of_day(now: DateTime<Utc>) -> DateTime<Utc> {
    now.date_naive()
        .and_hms_opt(0, 0, 0)
        .map_or(now, |midnight| midnight.and_utc())
}

/// DCSA's error body (`error` in the T&T 2.2 spec).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DcsaErrorBody {
    http_method: String,
    request_uri: String,
    status_code: u16,
    status_code_text: String,
    error_date_time: String,
    errors: Vec<DcsaSubError>,
}

#[derive(Serialize)]
struct DcsaSubError {
    reason: String,
    message: String,
}

fn dcsa_error(
    version: Version,
    status: StatusCode,
    method: &Method,
    uri: &str,
    now: DateTime<Utc>,
    reason: &str,
    message: String,
) -> Response {
    let body = DcsaErrorBody {
        http_method: method.to_string(),
        request_uri: uri.to_owned(),
        status_code: status.as_u16(),
        status_code_text: status.canonical_reason().unwrap_or_default().to_owned(),
        error_date_time: now.to_rfc3339_opts(SecondsFormat::Secs, true),
        errors: vec![DcsaSubError {
            reason: reason.to_owned(),
            message,
        }],
    };
    let headers = [("api-version", version.api_version())];
    (status, headers, Json(body)).into_response()
}
