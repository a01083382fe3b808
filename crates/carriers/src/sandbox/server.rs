//! The sandbox carrier's DCSA Track & Trace 2.2 endpoint, `GET /v2/events`.
//!
//! Beyond the spec:
//! - `tidemarkEpoch` (RFC 3339) says when tracking started; voyages are laid out from it.
//!   Tidemark's connector sends the tracking request's creation time. Without it the epoch is
//!   the start of the current UTC day, so a voyage stays put for a day.
//! - An unknown number is a 404 with a DCSA error body, not an empty list, so that Tidemark
//!   can tell "not found" from "nothing yet".
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

/// The T&T version served, sent in `API-Version`.
const API_VERSION: &str = "2.2.0";
const DEFAULT_LIMIT: usize = 100;
/// DCSA lets a producer cap the page size; larger limits are served in pages of this size.
const MAX_LIMIT: usize = 1_000;

#[derive(Clone)]
struct SandboxState {
    sandbox: Arc<Sandbox>,
    clock: Arc<dyn Clock>,
}

/// The sandbox carrier's DCSA T&T 2.2 routes: `GET /v2/events`.
pub fn router(sandbox: Arc<Sandbox>, clock: Arc<dyn Clock>) -> Router {
    Router::new()
        .route("/v2/events", get(list_events))
        .with_state(SandboxState { sandbox, clock })
}

/// The parameters the sandbox reads.
#[derive(Default)]
struct EventsQuery {
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

async fn list_events(
    State(state): State<SandboxState>,
    method: Method,
    OriginalUri(uri): OriginalUri,
    RawQuery(raw): RawQuery,
) -> Response {
    let now = state.clock.now();
    let fail = |status: StatusCode, reason: &str, message: String| {
        dcsa_error(status, &method, &uri.to_string(), now, reason, message)
    };
    let query = EventsQuery::parse(raw.as_deref());

    let reference = match (
        &query.transport_document_reference,
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
    let limit = match query.limit.as_deref().map(str::parse::<usize>) {
        None => DEFAULT_LIMIT,
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
    let headers = [("api-version", API_VERSION)];
    (status, headers, Json(body)).into_response()
}
