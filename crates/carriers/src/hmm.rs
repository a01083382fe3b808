//! HMM's own Track & Trace gateway ("dcsaCargoTracking v1"): `GET {base}{events_path}`
//! (`https://apigw.hmm21.com/gateway/dcsaCargoTracking/v1/cargo-tracking-dcsa`) with
//! `carrierBookingReference` and `equipmentReference` together, and the static header
//! `x-Gateway-APIKey`. Its answer is "DCSA-based" but not a DCSA event list: one object with
//! `shipment`, `transport` and `equipment` summaries and `shipmentEvent[]`,
//! `transportEvent[]`, `equipmentEvent[]` and `transportCall[]` arrays, read here into the
//! same [`CarrierEvent`]s as DCSA's.
//!
//! From `reference/carriers/CARRIERS.md` §1.10 and the 200 example of HMM's portal Swagger.
//! What is known, and how sure:
//! - both references are required in one call (medium): a Tidemark request knows one number,
//!   so the other is sent empty (whether HMM's production gateway answers a booking without
//!   its container is not known; its example answer names no container at all);
//! - no B/L lookup (medium): a bill of lading is not asked for;
//! - no paging, no `API-Version` (none documented);
//! - the answer's spellings are loose (low): `eventType` `Shipment`, `emptyIndicatorCode`
//!   `Laden`, `modeOfTransport` `Truck` or `VESSEL`, `eventLocation` a bare UN/LOCODE or an
//!   object, `facilityTypeCode` sometimes a facility code (`KRPUSPNC`, UN/LOCODE + SMDG
//!   code): each is read whatever its case, and a facility type that is not one of DCSA's
//!   is taken for what it is, not as a type;
//! - `transport.loadTransportCallId` and `dischargeTransportCallId` name the calls in
//!   `transportCall[]` where the cargo is loaded and discharged: the events at those places
//!   are at the port of loading and of discharge.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use reqwest::StatusCode;
use reqwest::header::ACCEPT;
use serde_json::{Map, Value};
use url::Url;

use crate::auth::Authenticator;
use crate::carrier::{Carrier, ReferenceKind, TrackingQuery};
use crate::event::{
    CarrierError, CarrierEvent, CarrierSnapshot, Classifier, DcsaCode, DocumentReference,
    DocumentType, EmptyIndicator, EventKind, ModeOfTransport, RouteHint, TransportCall, clip_raw,
};

/// Where HMM's gateway serves the tracking under its host.
pub const DEFAULT_PATH: &str = "/gateway/dcsaCargoTracking/v1/cargo-tracking-dcsa";
/// The booking parameter.
pub const BOOKING_PARAM: &str = "carrierBookingReference";
/// The container parameter.
pub const EQUIPMENT_PARAM: &str = "equipmentReference";

const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// DCSA's facility type codes; anything else in `facilityTypeCode` is not a type.
const FACILITY_TYPES: &[&str] = &[
    "BOCR", "CLOC", "COFS", "COYA", "OFFD", "DEPO", "INTE", "POTE", "RAMP", "BRTH", "PBPL",
];

/// Why an [`HmmClient`] could not be built: a configuration mistake, reported at start.
#[derive(Debug, thiserror::Error)]
pub enum HmmClientError {
    #[error("the base URL {0} cannot take a path")]
    BaseUrl(String),
    #[error("the events path {0:?} is not a path of plain segments (such as {DEFAULT_PATH})")]
    EventsPath(String),
    #[error("could not build the HTTP client: {0}")]
    Http(#[from] reqwest::Error),
}

/// HMM's tracking connector.
pub struct HmmClient {
    scac: String,
    events_url: Url,
    auth: Authenticator,
    http: reqwest::Client,
}

impl fmt::Debug for HmmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HmmClient")
            .field("scac", &self.scac)
            .field("events_url", &self.events_url.as_str())
            .finish_non_exhaustive()
    }
}

impl HmmClient {
    /// A connector for `scac` (HDMU) at `events_path` under `base_url` ([`DEFAULT_PATH`]
    /// when `None`; `/` for the base URL itself), authenticated by `auth` (HMM's
    /// `x-Gateway-APIKey` header).
    pub fn new(
        scac: impl Into<String>,
        base_url: &Url,
        events_path: Option<&str>,
        auth: Authenticator,
    ) -> Result<Self, HmmClientError> {
        let path = events_path.unwrap_or(DEFAULT_PATH);
        let events_url = if path == crate::connector::BASE_URL_ITSELF {
            let mut url = base_url.clone();
            url.set_query(None);
            url.set_fragment(None);
            url
        } else {
            crate::dcsa::client::url_under(base_url, path).map_err(|e| match e {
                crate::dcsa::DcsaClientError::BaseUrl(url) => HmmClientError::BaseUrl(url),
                _ => HmmClientError::EventsPath(path.to_owned()),
            })?
        };
        crate::tls::install_provider();
        let http = reqwest::Client::builder().timeout(TIMEOUT).build()?;
        Ok(Self {
            scac: scac.into(),
            events_url,
            auth,
            http,
        })
    }

    /// The URL asking for `query`: the number it knows, and the other reference HMM requires
    /// sent empty. `None` for a bill of lading, which HMM cannot be asked for.
    pub fn url_for(&self, query: &TrackingQuery) -> Option<Url> {
        let number = query.reference.trim();
        let (booking, equipment) = match query.reference_kind {
            ReferenceKind::Booking => (number, ""),
            ReferenceKind::Equipment => ("", number),
            ReferenceKind::BillOfLading => return None,
        };
        let mut url = self.events_url.clone();
        url.query_pairs_mut()
            .append_pair(BOOKING_PARAM, booking)
            .append_pair(EQUIPMENT_PARAM, equipment);
        Some(url)
    }
}

#[async_trait]
impl Carrier for HmmClient {
    fn scac(&self) -> &str {
        &self.scac
    }

    async fn fetch(&self, query: &TrackingQuery) -> Result<CarrierSnapshot, CarrierError> {
        // HMM has no B/L lookup (CARRIERS.md §1.10): nothing to ask.
        let Some(url) = self.url_for(query) else {
            return Err(CarrierError::NotFound);
        };
        let request = self
            .http
            .get(url)
            .header(ACCEPT, "application/json")
            .timeout(TIMEOUT);
        let request = self.auth.apply(&self.http, request).await?;
        let response = request
            .send()
            .await
            .map_err(crate::dcsa::client::transport_error)?;
        let status = response.status();
        if !status.is_success() {
            if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
                self.auth.refused().await;
                return Err(CarrierError::CredentialsRefused(format!(
                    "HMM answered {status} (check api_key, HMM's x-Gateway-APIKey)"
                )));
            }
            return Err(crate::dcsa::client::status_error(
                status,
                response.headers(),
            ));
        }
        let body = crate::dcsa::client::read_body_limited(response, MAX_BODY_BYTES).await?;
        let mut snapshot = parse_answer(&body, query)?;
        snapshot.keep_about(query);
        Ok(snapshot)
    }
}

/// The calls of `transportCall[]`, by `transportCallID`.
type Calls<'a> = HashMap<String, &'a Map<String, Value>>;

/// What the whole answer says about every event: the booking, the container, and the
/// places of the load and discharge calls.
struct Summary {
    booking: Option<String>,
    container: Option<String>,
    iso_code: Option<String>,
    load_call: Option<String>,
    discharge_call: Option<String>,
    load_place: Option<String>,
    discharge_place: Option<String>,
}

/// Reads HMM's answer into carrier events. An event that cannot be read is skipped with its
/// raw JSON; the others are kept. An answer with no events (`[]`, `{}`) is an empty
/// snapshot; anything but an object or an empty list is not HMM's answer.
pub fn parse_answer(body: &[u8], query: &TrackingQuery) -> Result<CarrierSnapshot, CarrierError> {
    let answer: Value = serde_json::from_slice(body)
        .map_err(|e| CarrierError::UnexpectedPayload(format!("not HMM's tracking answer: {e}")))?;
    let answer = match answer {
        Value::Object(answer) => answer,
        Value::Array(items) if items.is_empty() => return Ok(CarrierSnapshot::default()),
        Value::Null => return Ok(CarrierSnapshot::default()),
        _ => {
            return Err(CarrierError::UnexpectedPayload(
                "HMM's tracking answer is an object of event arrays".to_owned(),
            ));
        }
    };
    let calls: Calls<'_> = objects(&answer, "transportCall")
        .filter_map(|call| Some((text(call, "transportCallID")?, call)))
        .collect();
    let transport = answer.get("transport").and_then(Value::as_object);
    let equipment = answer.get("equipment").and_then(Value::as_object);
    let shipment = answer.get("shipment").and_then(Value::as_object);
    let call_place = |key: &str| {
        let id = text(transport?, key)?;
        locode(calls.get(&id)?.get("UNLocationCode"))
    };
    let summary = Summary {
        booking: shipment
            .and_then(|s| text(s, "carrierBookingReference"))
            .or_else(|| {
                (query.reference_kind == ReferenceKind::Booking)
                    .then(|| query.reference.trim().to_owned())
            }),
        container: equipment.and_then(|e| text(e, "equipmentReference")),
        iso_code: equipment.and_then(|e| text(e, "ISOEquipmentCode")),
        load_call: transport.and_then(|t| text(t, "loadTransportCallId")),
        discharge_call: transport.and_then(|t| text(t, "dischargeTransportCallId")),
        load_place: call_place("loadTransportCallId"),
        discharge_place: call_place("dischargeTransportCallId"),
    };
    let mut snapshot = CarrierSnapshot::default();
    for (key, kind) in [
        ("shipmentEvent", EventKind::Shipment),
        ("transportEvent", EventKind::Transport),
        ("equipmentEvent", EventKind::Equipment),
    ] {
        for raw in answer
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let event = match raw.as_object() {
                Some(item) => event(item, kind, &calls, &summary),
                None => Err(format!("an entry of {key} that is not an object")),
            };
            match event {
                Ok(event) => snapshot.events.push(event),
                Err(why) => {
                    snapshot.skipped.push(why);
                    snapshot.skipped_raw.push(clip_raw(&raw.to_string()));
                }
            }
        }
    }
    Ok(snapshot)
}

fn objects<'a>(
    answer: &'a Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a Map<String, Value>> {
    answer
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

fn text(object: &Map<String, Value>, key: &str) -> Option<String> {
    object
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn upper(object: &Map<String, Value>, key: &str) -> Option<String> {
    text(object, key).map(|t| t.to_ascii_uppercase())
}

/// A UN/LOCODE: a bare string (`"KRPUS"`) or an object's `UNLocationCode`, when it has the
/// shape of one (two letters, three letters or digits).
fn locode(value: Option<&Value>) -> Option<String> {
    let text = match value? {
        Value::String(text) => text.as_str(),
        Value::Object(object) => object.get("UNLocationCode")?.as_str()?,
        _ => return None,
    };
    let code = text.trim().to_ascii_uppercase();
    let shaped = code.len() == 5
        && code.chars().take(2).all(|c| c.is_ascii_alphabetic())
        && code.chars().skip(2).all(|c| c.is_ascii_alphanumeric());
    shaped.then_some(code)
}

fn time(object: &Map<String, Value>, key: &str) -> Result<Option<DateTime<Utc>>, String> {
    let Some(at) = text(object, key) else {
        return Ok(None);
    };
    DateTime::parse_from_rfc3339(&at)
        .map(|at| Some(at.with_timezone(&Utc)))
        .map_err(|_| format!("{key} {at:?} is not a date and time with its offset"))
}

/// The event's transport call, completed from `transportCall[]` by its id.
fn transport_call(
    item: &Map<String, Value>,
    calls: &Calls<'_>,
) -> Option<(TransportCall, Option<String>)> {
    let own = item.get("transportCall").and_then(Value::as_object);
    let listed = own
        .and_then(|call| text(call, "transportCallID"))
        .and_then(|id| calls.get(&id).copied());
    if own.is_none() && listed.is_none() {
        return None;
    }
    // A field of the event's own call, else of the listed call.
    let field = |key: &str| {
        own.and_then(|call| text(call, key))
            .or_else(|| listed.and_then(|call| text(call, key)))
    };
    let vessel = own
        .and_then(|call| call.get("vessel"))
        .or_else(|| listed.and_then(|call| call.get("vessel")))
        .and_then(Value::as_object);
    let place = own
        .and_then(|call| locode(call.get("UNLocationCode")))
        .or_else(|| listed.and_then(|call| locode(call.get("UNLocationCode"))));
    let facility_type = field("facilityTypeCode")
        .map(|t| t.to_ascii_uppercase())
        .filter(|t| FACILITY_TYPES.contains(&t.as_str()));
    // `KRPUSPNC`: the place's UN/LOCODE, then the terminal's SMDG code.
    let smdg = field("facilityCode").and_then(|code| {
        let code = code.to_ascii_uppercase();
        let rest = code.strip_prefix(place.as_deref()?)?;
        (!rest.is_empty() && rest.len() <= 6 && rest.chars().all(|c| c.is_ascii_alphanumeric()))
            .then(|| rest.to_owned())
    });
    let call = TransportCall {
        transport_call_id: field("transportCallID"),
        sequence_number: own
            .and_then(|call| call.get("transportCallSequenceNumber"))
            .or_else(|| listed.and_then(|call| call.get("transportCallSequenceNumber")))
            .and_then(Value::as_i64),
        un_location_code: place.clone(),
        facility_smdg_code: smdg,
        facility_type_code: facility_type,
        facility_name: field("otherFacility"),
        mode_of_transport: field("modeOfTransport")
            .and_then(|m| ModeOfTransport::parse(&m.to_ascii_uppercase())),
        vessel_imo: vessel.and_then(|v| text(v, "vesselIMONumber")),
        vessel_name: vessel.and_then(|v| text(v, "vesselName")),
        carrier_service_code: field("carrierServiceCode"),
        carrier_export_voyage_number: field("exportVoyageNumber")
            .or_else(|| field("carrierVoyageNumber")),
        carrier_import_voyage_number: field("importVoyageNumber"),
    };
    Some((call, place))
}

/// One event of `shipmentEvent[]`, `transportEvent[]` or `equipmentEvent[]`.
fn event(
    item: &Map<String, Value>,
    kind: EventKind,
    calls: &Calls<'_>,
    summary: &Summary,
) -> Result<CarrierEvent, String> {
    let id = text(item, "eventID");
    let named = || id.as_deref().unwrap_or("without an id").to_owned();
    let code_key = match kind {
        EventKind::Shipment => "shipmentEventTypeCode",
        EventKind::Transport => "transportEventTypeCode",
        _ => "equipmentEventTypeCode",
    };
    let code_text =
        upper(item, code_key).ok_or_else(|| format!("event {} has no {code_key}", named()))?;
    let code = DcsaCode::parse(&code_text)
        .filter(|code| code.kind() == kind)
        .ok_or_else(|| {
            format!(
                "event {}: {code_key} {code_text:?} is not one of DCSA's",
                named()
            )
        })?;
    let classifier_text = upper(item, "eventClassifierCode").unwrap_or_default();
    let classifier = match classifier_text.as_str() {
        // Evergreen-style spelling of the plan.
        "PLAN" => Some(Classifier::Planned),
        other => Classifier::parse(other),
    }
    .ok_or_else(|| {
        format!(
            "event {}: eventClassifierCode {classifier_text:?} is not ACT, EST or PLN",
            named()
        )
    })?;
    let at = time(item, "eventDateTime")?
        .ok_or_else(|| format!("event {} has no eventDateTime", named()))?;
    let created = time(item, "eventCreatedDateTime").ok().flatten();
    let call = transport_call(item, calls);
    let un_location_code = locode(item.get("eventLocation"))
        .or_else(|| call.as_ref().and_then(|(_, place)| place.clone()));
    let call_id = call
        .as_ref()
        .and_then(|(call, _)| call.transport_call_id.clone());
    // The load call's place is the port of loading, the discharge call's the port of
    // discharge: by the call's id, else by the place.
    let at_call = |id: &Option<String>, place: &Option<String>| {
        (call_id.is_some() && call_id == *id)
            || (un_location_code.is_some() && un_location_code == *place)
    };
    let route_hint = if at_call(&summary.load_call, &summary.load_place) {
        Some(RouteHint::PortOfLoading)
    } else if at_call(&summary.discharge_call, &summary.discharge_place) {
        Some(RouteHint::PortOfDischarge)
    } else {
        None
    };
    let mut document_references = Vec::new();
    if let Some(booking) = &summary.booking {
        document_references.push(DocumentReference {
            document_type: DocumentType::Booking,
            value: booking.clone(),
        });
    }
    if let (Some(value), Some(document_type)) = (
        text(item, "documentId").or_else(|| text(item, "documentID")),
        upper(item, "documentTypeCode").and_then(|t| DocumentType::parse(&t)),
    ) && !document_references
        .iter()
        .any(|d| d.document_type == document_type && d.value == value)
    {
        document_references.push(DocumentReference {
            document_type,
            value,
        });
    }
    let equipment = kind == EventKind::Equipment;
    Ok(CarrierEvent {
        event_id: id,
        kind,
        dcsa_code: code,
        classifier,
        event_datetime: at,
        event_created_datetime: created,
        equipment_reference: text(item, "equipmentReference")
            .or_else(|| summary.container.clone())
            .filter(|_| equipment),
        iso_equipment_code: text(item, "ISOEquipmentCode")
            .or_else(|| summary.iso_code.clone())
            .filter(|_| equipment),
        empty_indicator: upper(item, "emptyIndicatorCode").and_then(|e| EmptyIndicator::parse(&e)),
        un_location_code,
        location_name: None,
        transport_call: call.map(|(call, _)| call),
        document_references,
        references: Vec::new(),
        route_hint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn booking() -> TrackingQuery {
        TrackingQuery {
            reference_kind: ReferenceKind::Booking,
            reference: "SELM96466400".to_owned(),
            sandbox_epoch: None,
        }
    }

    /// HMM's portal example (its Swagger's 200 answer).
    fn example() -> Value {
        serde_json::json!({
          "shipment": {"eventID": "CTP20111600055683", "carrierBookingReference": "SELM96466400",
                       "deliveryDateTime": "2021-02-25T00:47:00-07:00", "carrierID": "HDMU"},
          "transport": {"eventID": "CTP20111600055683", "transportName": "MOL CELEBRATION",
                        "modeOfTransportCode": "Vessel", "loadTransportCallId": "SELM964664001M1KRPUS",
                        "dischargeTransportCallId": "SELM964664001M1USOAK", "vesselImoNumber": "9321251"},
          "equipment": {"ISOEquipmentCode": "45G1"},
          "shipmentEvent": [{"eventID": "WEBSELM964664001", "eventCreatedDateTime": "2020-11-13T18:07:22+09:00",
                             "eventType": "Shipment", "eventClassifierCode": "ACT",
                             "eventDateTime": "2020-11-13T18:07:22+09:00", "shipmentEventTypeCode": "RECE",
                             "documentId": "SELM96466400", "documentTypeCode": "CBR"}],
          "transportEvent": [{"eventID": "CTP201116000556832011", "eventType": "Transport",
                              "eventClassifierCode": "ACT", "eventDateTime": "2021-01-14T16:43:00+09:00",
                              "transportEventTypeCode": "ARRI",
                              "transportCall": {"facilityTypeCode": "KRPUSPNC", "modeOfTransport": "Truck",
                                                "UNLocationCode": "KRPUS", "location": "KRPUS"}}],
          "equipmentEvent": [{"eventID": "CTP201116000556832011", "eventType": "Equipment",
                              "eventDateTime": "2021-01-14T16:43:00+09:00", "eventClassifierCode": "ACT",
                              "equipmentEventTypeCode": "GTIN", "ISOEquipmentCode": "45G1",
                              "emptyIndicatorCode": "Laden", "eventLocation": "KRPUS",
                              "transportCall": {"UNLocationCode": "KRPUS", "facilityCode": "KRPUSPNC",
                                                "facilityTypeCode": "POTE", "modeOfTransport": "Truck",
                                                "otherFacility": "1448 SEOUNGBUK-DONG, GANSEO-GU, BUSAN, KOREA "}}],
          "transportCall": [{"transportCallID": "SELM964664001M1KRPUS", "carrierServiceCode": "PS6",
                             "exportVoyageNumber": "0080E", "transportCallSequenceNumber": 1,
                             "UNLocationCode": "KRPUS", "facilityCode": "KRPUSPNC", "modeOfTransport": "VESSEL",
                             "vessel": {"vesselIMONumber": "9321251", "vesselName": "MOL CELEBRATION"}}]
        })
    }

    fn read(answer: &Value) -> CarrierSnapshot {
        parse_answer(answer.to_string().as_bytes(), &booking()).unwrap()
    }

    #[test]
    fn each_of_hmms_event_arrays_is_read_as_its_dcsa_kind() {
        let snapshot = read(&example());

        let read: Vec<(EventKind, DcsaCode)> = snapshot
            .events
            .iter()
            .map(|e| (e.kind, e.dcsa_code))
            .collect();
        assert_eq!(
            read,
            [
                (EventKind::Shipment, DcsaCode::Rece),
                (EventKind::Transport, DcsaCode::Arri),
                (EventKind::Equipment, DcsaCode::Gtin),
            ]
        );
        assert!(snapshot.skipped.is_empty());
    }

    #[test]
    fn hmms_loose_spellings_are_read_whatever_their_case() {
        let snapshot = read(&example());

        let gate_in = &snapshot.events[2];
        assert_eq!(gate_in.empty_indicator, Some(EmptyIndicator::Laden));
        assert_eq!(gate_in.mode_of_transport(), Some(ModeOfTransport::Truck));
        assert_eq!(gate_in.un_location_code.as_deref(), Some("KRPUS"));
        assert_eq!(
            gate_in.event_datetime.to_rfc3339(),
            "2021-01-14T07:43:00+00:00"
        );
    }

    #[test]
    fn a_facility_code_in_the_facility_type_is_not_taken_for_a_type() {
        let snapshot = read(&example());

        assert_eq!(snapshot.events[1].facility_type_code(), None);
        assert_eq!(snapshot.events[2].facility_type_code(), Some("POTE"));
    }

    #[test]
    fn a_facility_code_of_the_places_unlocode_and_a_terminal_code_gives_the_smdg_code() {
        let snapshot = read(&example());

        let call = snapshot.events[2].transport_call.as_ref().unwrap();
        assert_eq!(call.facility_smdg_code.as_deref(), Some("PNC"));
    }

    #[test]
    fn the_load_calls_place_is_the_port_of_loading() {
        let snapshot = read(&example());

        assert!(
            snapshot.events[1..]
                .iter()
                .all(|e| e.route_hint == Some(RouteHint::PortOfLoading))
        );
        assert_eq!(snapshot.events[0].route_hint, None);
    }

    #[test]
    fn an_event_naming_a_listed_call_takes_its_vessel_voyage_and_service() {
        let mut answer = example();
        answer["equipmentEvent"][0]["equipmentEventTypeCode"] = "LOAD".into();
        answer["equipmentEvent"][0]["transportCall"] =
            serde_json::json!({"transportCallID": "SELM964664001M1KRPUS"});

        let snapshot = read(&answer);

        let call = snapshot.events[2].transport_call.as_ref().unwrap();
        assert_eq!(call.vessel_name.as_deref(), Some("MOL CELEBRATION"));
        assert_eq!(call.vessel_imo.as_deref(), Some("9321251"));
        assert_eq!(call.carrier_export_voyage_number.as_deref(), Some("0080E"));
        assert_eq!(call.carrier_service_code.as_deref(), Some("PS6"));
        assert_eq!(
            snapshot.events[2].un_location_code.as_deref(),
            Some("KRPUS")
        );
    }

    #[test]
    fn an_equipment_event_without_a_container_names_none() {
        let snapshot = read(&example());

        assert_eq!(snapshot.events[2].equipment_reference, None);
        assert_eq!(
            snapshot.events[2].iso_equipment_code.as_deref(),
            Some("45G1")
        );
    }

    #[test]
    fn every_event_is_about_the_answers_booking() {
        let snapshot = read(&example());

        assert!(snapshot.events.iter().all(|e| {
            e.document_numbers(DocumentType::Booking)
                .eq(["SELM96466400"])
        }));
        assert!(
            snapshot.events[0]
                .document_numbers(DocumentType::CarrierBookingRequest)
                .eq(["SELM96466400"])
        );
    }

    #[test]
    fn an_event_with_a_code_of_another_kind_is_skipped_with_its_reason() {
        let mut answer = example();
        answer["transportEvent"][0]["transportEventTypeCode"] = "GTIN".into();

        let snapshot = read(&answer);

        assert_eq!(snapshot.events.len(), 2);
        assert!(
            snapshot.skipped[0].contains("GTIN"),
            "{:?}",
            snapshot.skipped
        );
        assert_eq!(snapshot.skipped_raw.len(), 1);
    }

    #[test]
    fn an_empty_list_is_an_answer_without_events() {
        let snapshot = parse_answer(b"[]", &booking()).unwrap();

        assert_eq!(snapshot, CarrierSnapshot::default());
    }

    #[test]
    fn an_answer_that_is_not_an_object_is_unexpected() {
        let error = parse_answer(b"\"nope\"", &booking()).unwrap_err();

        assert!(
            matches!(error, CarrierError::UnexpectedPayload(_)),
            "{error:?}"
        );
    }
}
