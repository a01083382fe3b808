//! Reading a DCSA Track & Trace 2.2 `GET /v2/events` body (a JSON array of transport,
//! equipment and shipment events) into a [`CarrierSnapshot`].
//!
//! Carriers stretch the spec: fields go missing, codes from later versions appear, numbers come
//! as strings and strings as numbers, and field names change case (MSC writes `unLocationCode`
//! and `eventId` for `UNLocationCode` and `eventID`). So every known field is read in any case
//! (unknown ones are ignored), every field is read leniently, and one unreadable event is
//! skipped (and listed) rather than failing the poll; only a body that is not an array of
//! events is an error.

use std::fmt;

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::event::{
    CarrierError, CarrierEvent, CarrierSnapshot, Classifier, DcsaCode, DocumentReference,
    DocumentType, EmptyIndicator, EventKind, ModeOfTransport, Reference, RouteHint, TransportCall,
};

/// Parses a DCSA T&T 2.2 events response.
///
/// Returns `UnexpectedPayload` when the body is not JSON or not an array; events inside the
/// array that cannot be read are left out and described in [`CarrierSnapshot::skipped`].
pub fn parse_events(body: &[u8]) -> Result<CarrierSnapshot, CarrierError> {
    // Each event is kept as its raw text and read straight into `RawEvent`: building a
    // `Value` tree first cost a sixth of applying a carrier's events.
    let items: Vec<&RawValue> = serde_json::from_slice(body).map_err(|_| not_events(body))?;

    let mut snapshot = CarrierSnapshot::default();
    for (index, item) in items.into_iter().enumerate() {
        match read_event(item) {
            Ok(event) => snapshot.events.push(event),
            Err(skip) => {
                snapshot.skipped.push(skip.describe(index));
                snapshot
                    .skipped_raw
                    .push(crate::event::clip_raw(item.get()));
            }
        }
    }
    Ok(snapshot)
}

/// Says what is wrong with a body that is not an array of JSON values.
fn not_events(body: &[u8]) -> CarrierError {
    match serde_json::from_slice::<Value>(body) {
        Err(e) => CarrierError::UnexpectedPayload(format!("the body is not JSON: {e}")),
        Ok(document) => CarrierError::UnexpectedPayload(format!(
            "expected a JSON array of events, got {}",
            describe(&document)
        )),
    }
}

/// Why one event was left out.
struct Skip {
    event_id: Option<String>,
    reason: String,
}

impl Skip {
    fn describe(&self, index: usize) -> String {
        match &self.event_id {
            Some(id) => format!("event {index} ({id}): {}", self.reason),
            None => format!("event {index}: {}", self.reason),
        }
    }
}

fn read_event(item: &RawValue) -> Result<CarrierEvent, Skip> {
    // Only an object is read directly (serde would also read a struct from an array); the
    // rest, and objects the direct read refuses (a repeated key, say), go through a `Value`,
    // which says what the item is and keeps the last of repeated keys.
    // An event with a known field in another case (`unLocationCode`) goes through the
    // `Value`, where its keys are put in the spec's spelling.
    let direct = (item.get().trim_start().starts_with('{')
        && !has_miscased_key(item.get(), FIELDS_2_2))
    .then(|| serde_json::from_str::<RawEvent>(item.get()).ok())
    .flatten();
    let raw = match direct {
        Some(raw) => raw,
        None => read_through_value(item)?,
    };
    let event_id = raw.event_id.clone();
    build_event(raw).map_err(|reason| Skip { event_id, reason })
}

fn read_through_value(item: &RawValue) -> Result<RawEvent, Skip> {
    let item: Value = serde_json::from_str(item.get()).map_err(|e| Skip {
        event_id: None,
        reason: e.to_string(),
    })?;
    let item = spec_keys(item, FIELDS_2_2);
    if !item.is_object() {
        return Err(Skip {
            event_id: None,
            reason: format!("expected an object, got {}", describe(&item)),
        });
    }
    // Every field of RawEvent is optional and lenient, so an object always deserializes;
    // the fallback only guards against that changing.
    RawEvent::deserialize(item).map_err(|e| Skip {
        event_id: None,
        reason: e.to_string(),
    })
}

fn build_event(raw: RawEvent) -> Result<CarrierEvent, String> {
    let kind_text = raw.event_type.ok_or("eventType is missing")?;
    // 2.2 has three families; IoT and reefer events are 3.0's, and unknown here.
    let kind = EventKind::parse(&normalize(&kind_text))
        .filter(|kind| {
            matches!(
                kind,
                EventKind::Transport | EventKind::Equipment | EventKind::Shipment
            )
        })
        .ok_or_else(|| format!("unknown eventType {kind_text:?}"))?;

    let (code_field, code_text) = match kind {
        EventKind::Transport => ("transportEventTypeCode", raw.transport_event_type_code),
        EventKind::Shipment => ("shipmentEventTypeCode", raw.shipment_event_type_code),
        EventKind::Equipment | EventKind::Iot | EventKind::Reefer => {
            ("equipmentEventTypeCode", raw.equipment_event_type_code)
        }
    };
    // `eventTypeCode` is the deprecated spelling of all three.
    let code_text = code_text
        .or(raw.event_type_code)
        .ok_or_else(|| format!("{code_field} is missing"))?;
    let dcsa_code = DcsaCode::parse(&normalize(&code_text))
        .filter(|code| code.kind() == kind)
        .ok_or_else(|| format!("unknown {code_field} {code_text:?}"))?;

    let datetime_text = raw.event_date_time.ok_or("eventDateTime is missing")?;
    let event_datetime = parse_datetime(&datetime_text)?;
    // The creation time is metadata: an unreadable one is dropped, not the event.
    let event_created_datetime = raw
        .event_created_date_time
        .and_then(|text| parse_datetime(&text).ok());

    let classifier = match raw.event_classifier_code {
        Some(text) => Classifier::parse(&normalize(&text))
            .ok_or_else(|| format!("unknown eventClassifierCode {text:?}"))?,
        // Some carriers leave it out (an MSC sample does): an event recorded after it
        // happened is what happened; one dated after it was recorded is an estimate.
        None => match event_created_datetime {
            Some(created) if event_datetime > created => Classifier::Estimated,
            _ => Classifier::Actual,
        },
    };

    let event_place = raw
        .event_location
        .as_ref()
        .and_then(|location| location.un_location_code.clone());
    let call_place = match raw.transport_call.as_ref().map(RawTransportCall::place) {
        None => None,
        Some(Ok(place)) => place,
        // The event's own place stands; only its call's is unreadable.
        Some(Err(_)) if event_place.is_some() => None,
        Some(Err(reason)) => return Err(reason),
    };
    let un_location_code = event_place.or_else(|| call_place.clone());
    let transport_call = raw.transport_call.map(|call| call.build(call_place));

    let mut document_references: Vec<DocumentReference> = raw
        .document_references
        .into_iter()
        .filter_map(|value| {
            let reference = RawDocumentReference::deserialize(value).ok()?;
            Some(DocumentReference {
                document_type: DocumentType::parse(&normalize(&reference.document_type?))?,
                value: reference.value?,
            })
        })
        .collect();
    // A shipment event reports the status of `documentID`; list it with the others so that
    // callers find booking and BL numbers in one place.
    let subject = raw
        .document_type_code
        .and_then(|text| DocumentType::parse(&normalize(&text)))
        .zip(raw.document_id);
    if let Some((document_type, value)) = subject {
        let reference = DocumentReference {
            document_type,
            value,
        };
        if !document_references.contains(&reference) {
            document_references.push(reference);
        }
    }

    let references = raw
        .references
        .into_iter()
        .filter_map(|value| {
            let reference = RawReference::deserialize(value).ok()?;
            Some(Reference {
                reference_type: reference.reference_type?,
                value: reference.value?,
            })
        })
        .collect();

    Ok(CarrierEvent {
        event_id: raw.event_id,
        kind,
        dcsa_code,
        classifier,
        event_datetime,
        event_created_datetime,
        equipment_reference: raw.equipment_reference,
        iso_equipment_code: raw.iso_equipment_code,
        // An unknown indicator is dropped rather than failing the event: the mapping then
        // treats it as unknown.
        empty_indicator: raw
            .empty_indicator_code
            .and_then(|text| EmptyIndicator::parse(&normalize(&text))),
        un_location_code,
        location_name: raw
            .event_location
            .and_then(|location| location.location_name),
        transport_call,
        document_references,
        references,
        route_hint: carrier_hint(raw.carrier_specific_data.as_ref()),
    })
}

/// Every field name the 2.2 parser reads, in the spec's spelling.
const FIELDS_2_2: &[&str] = &[
    // The event.
    "eventID",
    "eventCreatedDateTime",
    "eventType",
    "eventClassifierCode",
    "eventDateTime",
    "transportEventTypeCode",
    "equipmentEventTypeCode",
    "shipmentEventTypeCode",
    "eventTypeCode",
    "equipmentReference",
    "ISOEquipmentCode",
    "emptyIndicatorCode",
    "eventLocation",
    "transportCall",
    "documentReferences",
    "references",
    "documentID",
    "documentTypeCode",
    // Locations.
    "UNLocationCode",
    "locationName",
    // The transport call.
    "transportCallID",
    "transportCallSequenceNumber",
    "location",
    "facilityCode",
    "facilityCodeListProvider",
    "facilityTypeCode",
    "otherFacility",
    "modeOfTransport",
    "vessel",
    "carrierServiceCode",
    "carrierSpecificData",
    "carrierVoyageNumber",
    "exportVoyageNumber",
    "importVoyageNumber",
    "vesselIMONumber",
    "vesselName",
    // References.
    "documentReferenceType",
    "documentReferenceValue",
    "referenceType",
    "referenceValue",
];

/// The spec's spelling of `key` when it is one of `fields` in another case.
fn miscased<'a>(key: &str, fields: &[&'a str]) -> Option<&'a str> {
    if fields.contains(&key) {
        return None;
    }
    fields
        .iter()
        .find(|field| field.eq_ignore_ascii_case(key))
        .copied()
}

/// `value` with every object key (at any depth) that is one of `fields` in another case
/// written in the spec's spelling. Where both spellings are present, the spec's wins.
pub(crate) fn spec_keys(value: Value, fields: &[&str]) -> Value {
    match value {
        Value::Object(members) => {
            let mut renamed = Map::with_capacity(members.len());
            let mut miscased_members = Vec::new();
            for (key, value) in members {
                let value = spec_keys(value, fields);
                match miscased(&key, fields) {
                    Some(field) => miscased_members.push((field, value)),
                    None => {
                        renamed.insert(key, value);
                    }
                }
            }
            for (field, value) in miscased_members {
                renamed.entry(field).or_insert(value);
            }
            Value::Object(renamed)
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| spec_keys(item, fields))
                .collect(),
        ),
        other => other,
    }
}

/// Whether the JSON text has, at any depth, an object key that is one of `fields` in another
/// case. One pass over the text that builds nothing, so events in the spec's spelling keep
/// the direct read.
pub(crate) fn has_miscased_key(json: &str, fields: &[&str]) -> bool {
    let mut finder = KeyFinder {
        fields,
        found: false,
    };
    let mut deserializer = serde_json::Deserializer::from_str(json);
    // Text that is not JSON has no such key; the read proper reports it.
    (&mut finder).deserialize(&mut deserializer).is_ok() && finder.found
}

/// Walks a JSON document looking for mis-cased keys.
struct KeyFinder<'f> {
    fields: &'f [&'f str],
    found: bool,
}

impl<'de> DeserializeSeed<'de> for &mut KeyFinder<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for &mut KeyFinder<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(&mut *self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(miscased_key) = map.next_key_seed(KeyCheck(self.fields))? {
            self.found |= miscased_key;
            map.next_value_seed(&mut *self)?;
        }
        Ok(())
    }
}

/// Reads one object key: whether it is a known field in another case.
struct KeyCheck<'f>(&'f [&'f str]);

impl<'de> DeserializeSeed<'de> for KeyCheck<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for KeyCheck<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E>(self, key: &str) -> Result<bool, E> {
        Ok(miscased(key, self.0).is_some())
    }
}

/// Reads a DCSA date-time into UTC.
///
/// DCSA sends ISO 8601 with an offset (`2019-11-12T07:41:00+08:30`, `…Z`); some carriers drop
/// the colon in the offset. A local time without an offset, or a bare date, cannot be placed
/// in UTC without knowing the place's time zone, which this crate does not, so such events are
/// skipped with a reason that says so.
pub(crate) fn parse_datetime(text: &str) -> Result<DateTime<Utc>, String> {
    let text = text.trim();
    if let Ok(datetime) = DateTime::parse_from_rfc3339(text) {
        return Ok(datetime.with_timezone(&Utc));
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%dT%H:%M%z"] {
        if let Ok(datetime) = DateTime::parse_from_str(text, format) {
            return Ok(datetime.with_timezone(&Utc));
        }
    }
    let is_local = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").is_ok()
        || NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").is_ok()
        || NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok();
    if is_local {
        Err(format!("date-time {text:?} has no UTC offset"))
    } else {
        Err(format!("unreadable date-time {text:?}"))
    }
}

/// Codes compare after trimming and uppercasing: case slips are not worth losing an event.
pub(crate) fn normalize(code: &str) -> String {
    code.trim().to_ascii_uppercase()
}

pub(crate) fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A string field that also takes numbers (IMO numbers and voyages are sometimes sent as
/// numbers) and reads anything else, or a blank string, as absent.
pub(crate) fn lenient_string<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::String(text) if !text.trim().is_empty() => Some(text.trim().to_owned()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    })
}

/// An integer field that also takes a numeric string; anything else reads as absent.
pub(crate) fn lenient_integer<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<i64>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::Number(number) => number.as_i64(),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    })
}

/// A nested object that reads as absent when it is not the expected shape.
pub(crate) fn lenient_object<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let value = Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).ok())
}

/// A list whose items are read one by one, so one bad item does not lose the rest.
pub(crate) fn lenient_list<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<Value>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::Array(items) => items,
        _ => Vec::new(),
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEvent {
    #[serde(rename = "eventID", default, deserialize_with = "lenient_string")]
    event_id: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    event_created_date_time: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    event_type: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    event_classifier_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    event_date_time: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    transport_event_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    equipment_event_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    shipment_event_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    event_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    equipment_reference: Option<String>,
    #[serde(
        rename = "ISOEquipmentCode",
        default,
        deserialize_with = "lenient_string"
    )]
    iso_equipment_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    empty_indicator_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_object")]
    event_location: Option<RawLocation>,
    #[serde(default, deserialize_with = "lenient_object")]
    transport_call: Option<RawTransportCall>,
    #[serde(default, deserialize_with = "lenient_list")]
    document_references: Vec<Value>,
    #[serde(default, deserialize_with = "lenient_list")]
    references: Vec<Value>,
    #[serde(rename = "documentID", default, deserialize_with = "lenient_string")]
    document_id: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    document_type_code: Option<String>,
    /// A carrier's own additions (CMA CGM's `transportationPhase`), read for route hints.
    #[serde(default)]
    carrier_specific_data: Option<Value>,
}

/// What a carrier's own data says of the event's place: CMA CGM marks the calls of a
/// transshipment with `transportationPhase: "Transshipment"`.
fn carrier_hint(data: Option<&Value>) -> Option<RouteHint> {
    let phase = data?
        .as_object()?
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case("transportationPhase"))?
        .1
        .as_str()?;
    phase
        .trim()
        .eq_ignore_ascii_case("transshipment")
        .then_some(RouteHint::Transshipment)
}

#[derive(Deserialize)]
struct RawLocation {
    #[serde(
        rename = "UNLocationCode",
        default,
        deserialize_with = "lenient_string"
    )]
    un_location_code: Option<String>,
    #[serde(rename = "locationName", default, deserialize_with = "lenient_string")]
    location_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawTransportCall {
    #[serde(
        rename = "transportCallID",
        default,
        deserialize_with = "lenient_string"
    )]
    transport_call_id: Option<String>,
    #[serde(default, deserialize_with = "lenient_integer")]
    transport_call_sequence_number: Option<i64>,
    #[serde(
        rename = "UNLocationCode",
        default,
        deserialize_with = "lenient_string"
    )]
    un_location_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_object")]
    location: Option<RawLocation>,
    #[serde(default, deserialize_with = "lenient_string")]
    facility_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    facility_code_list_provider: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    facility_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    other_facility: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    mode_of_transport: Option<String>,
    #[serde(default, deserialize_with = "lenient_object")]
    vessel: Option<RawVessel>,
    #[serde(default, deserialize_with = "lenient_string")]
    carrier_service_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    carrier_voyage_number: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    export_voyage_number: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    import_voyage_number: Option<String>,
}

impl RawTransportCall {
    /// The call's UN/LOCODE: its own, else its location's. Where the two disagree, the one
    /// that starts with a country's code; when neither does, the place cannot be told, and
    /// that is the reason given.
    fn place(&self) -> Result<Option<String>, String> {
        let own = self.un_location_code.as_deref();
        let located = self
            .location
            .as_ref()
            .and_then(|location| location.un_location_code.as_deref());
        let (Some(own), Some(located)) = (own, located) else {
            return Ok(own.or(located).map(str::to_owned));
        };
        if own.eq_ignore_ascii_case(located) || names_a_country(own) {
            return Ok(Some(own.to_owned()));
        }
        if names_a_country(located) {
            return Ok(Some(located.to_owned()));
        }
        Err(format!(
            "transportCall.UNLocationCode {own:?} and its location's {located:?} disagree, \
             and neither names a country"
        ))
    }

    /// The call, placed at `place` (see [`RawTransportCall::place`]).
    fn build(self, place: Option<String>) -> TransportCall {
        // A facility code only means something with its code list; an absent list is taken as
        // SMDG, the list DCSA uses for terminals.
        let is_smdg = self
            .facility_code_list_provider
            .as_deref()
            .is_none_or(|provider| normalize(provider) == "SMDG");
        let (vessel_imo, vessel_name) = match self.vessel {
            Some(vessel) => (vessel.imo, vessel.name),
            None => (None, None),
        };
        TransportCall {
            transport_call_id: self.transport_call_id,
            sequence_number: self.transport_call_sequence_number,
            un_location_code: place,
            facility_smdg_code: self.facility_code.filter(|_| is_smdg),
            facility_type_code: self.facility_type_code.map(|code| normalize(&code)),
            facility_name: self.other_facility,
            mode_of_transport: self
                .mode_of_transport
                .and_then(|text| ModeOfTransport::parse(&normalize(&text))),
            vessel_imo,
            vessel_name,
            carrier_service_code: self.carrier_service_code,
            carrier_export_voyage_number: self.export_voyage_number.or(self.carrier_voyage_number),
            carrier_import_voyage_number: self.import_voyage_number,
        }
    }
}

/// ISO 3166-1's alpha-2 country codes, and UN/LOCODE's `XZ` (installations in
/// international waters): the first two letters of every UN/LOCODE.
const COUNTRY_CODES: &str = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ \
    BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ \
    CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ \
    EC EE EG EH ER ES ET FI FJ FK FM FO FR \
    GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU \
    ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ \
    LA LB LC LI LK LR LS LT LU LV LY \
    MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ \
    NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY \
    QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ \
    TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ \
    VA VC VE VG VI VN VU WF WS XZ YE YT ZA ZM ZW";

/// Whether a location code starts with a country's code, as a UN/LOCODE does.
fn names_a_country(code: &str) -> bool {
    let country = code.trim().get(..2).map(str::to_ascii_uppercase);
    country.is_some_and(|country| COUNTRY_CODES.split_whitespace().any(|c| c == country))
}

#[derive(Deserialize)]
struct RawVessel {
    #[serde(
        rename = "vesselIMONumber",
        default,
        deserialize_with = "lenient_string"
    )]
    imo: Option<String>,
    #[serde(rename = "vesselName", default, deserialize_with = "lenient_string")]
    name: Option<String>,
}

#[derive(Deserialize)]
struct RawDocumentReference {
    #[serde(
        rename = "documentReferenceType",
        default,
        deserialize_with = "lenient_string"
    )]
    document_type: Option<String>,
    #[serde(
        rename = "documentReferenceValue",
        default,
        deserialize_with = "lenient_string"
    )]
    value: Option<String>,
}

#[derive(Deserialize)]
struct RawReference {
    #[serde(rename = "referenceType", default, deserialize_with = "lenient_string")]
    reference_type: Option<String>,
    #[serde(
        rename = "referenceValue",
        default,
        deserialize_with = "lenient_string"
    )]
    value: Option<String>,
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Timelike};
    use serde_json::json;

    use super::*;

    fn parse_json(value: &Value) -> Result<CarrierSnapshot, CarrierError> {
        parse_events(value.to_string().as_bytes())
    }

    fn equipment_event() -> Value {
        json!({
            "eventID": "e-1",
            "eventCreatedDateTime": "2024-03-01T10:00:00Z",
            "eventType": "EQUIPMENT",
            "eventClassifierCode": "ACT",
            "eventDateTime": "2024-03-01T08:30:00+08:00",
            "equipmentEventTypeCode": "LOAD",
            "equipmentReference": "CSQU3054383",
            "emptyIndicatorCode": "LADEN",
            "transportCall": {
                "transportCallID": "tc-1",
                "UNLocationCode": "CNSHA",
                "modeOfTransport": "VESSEL",
                "vessel": {"vesselIMONumber": 9321483, "vesselName": "King of the Seas"}
            }
        })
    }

    /// `equipment_event` whose call is at `own` and whose call's location is at `located`,
    /// with no event location of its own.
    fn with_call_places(own: &str, located: &str) -> Value {
        let mut event = equipment_event();
        event["transportCall"]["UNLocationCode"] = json!(own);
        event["transportCall"]["location"] = json!({"UNLocationCode": located});
        event
    }

    #[test]
    fn an_event_placed_by_a_call_whose_two_codes_disagree_and_name_no_country_is_drift() {
        let snapshot = parse_json(&json!([with_call_places("XYABC", "XYBCD")])).expect("a list");

        assert!(snapshot.events.is_empty());
        assert_eq!(
            snapshot.skipped,
            [
                "event 0 (e-1): transportCall.UNLocationCode \"XYABC\" and its location's \
              \"XYBCD\" disagree, and neither names a country"
            ]
        );
    }

    #[test]
    fn an_event_with_a_place_of_its_own_keeps_it_when_its_calls_codes_cannot_be_told_apart() {
        let mut event = with_call_places("XYBCD", "XYCDE");
        event["eventLocation"] = json!({"UNLocationCode": "NLRTM"});

        let snapshot = parse_json(&json!([event])).expect("a list");

        let event = &snapshot.events[0];
        assert_eq!(event.un_location_code.as_deref(), Some("NLRTM"));
        let call = event.transport_call.as_ref().expect("a call");
        assert_eq!(call.un_location_code, None);
    }

    #[test]
    fn where_a_calls_two_codes_disagree_the_one_naming_a_country_is_its_place() {
        let snapshot = parse_json(&json!([
            with_call_places("XYABC", "CNSHA"),
            with_call_places("CNSHA", "XYABC"),
        ]))
        .expect("a list");

        let places: Vec<_> = snapshot
            .events
            .iter()
            .map(|e| e.un_location_code.as_deref())
            .collect();
        assert_eq!(places, [Some("CNSHA"), Some("CNSHA")]);
    }

    #[test]
    fn where_a_calls_two_codes_both_name_countries_its_own_code_is_its_place() {
        let snapshot = parse_json(&json!([with_call_places("USNYC", "USEWR")])).expect("a list");

        assert_eq!(
            snapshot.events[0].un_location_code.as_deref(),
            Some("USNYC")
        );
    }

    #[test]
    fn a_body_that_is_not_json_is_an_unexpected_payload() {
        let result = parse_events(b"<html>502 Bad Gateway</html>");

        assert!(matches!(result, Err(CarrierError::UnexpectedPayload(_))));
    }

    #[test]
    fn an_empty_body_is_an_unexpected_payload() {
        let result = parse_events(b"");

        assert!(matches!(result, Err(CarrierError::UnexpectedPayload(_))));
    }

    #[test]
    fn a_json_object_instead_of_an_array_is_an_unexpected_payload() {
        let body = json!({"httpMethod": "GET", "statusCode": 400, "errors": []});

        let result = parse_json(&body);

        let Err(CarrierError::UnexpectedPayload(message)) = result else {
            panic!("expected UnexpectedPayload, got {result:?}");
        };
        assert_eq!(message, "expected a JSON array of events, got an object");
    }

    #[test]
    fn an_empty_array_is_a_snapshot_without_events() {
        let snapshot = parse_events(b"[]").expect("an empty list is valid");

        assert_eq!(snapshot, CarrierSnapshot::default());
    }

    #[test]
    fn an_equipment_event_is_read_with_its_transport_call() {
        let snapshot = parse_json(&json!([equipment_event()])).expect("valid body");

        let event = &snapshot.events[0];
        assert_eq!(event.kind, EventKind::Equipment);
        assert_eq!(event.dcsa_code, DcsaCode::Load);
        assert_eq!(event.classifier, Classifier::Actual);
        assert_eq!(
            event.event_datetime,
            Utc.with_ymd_and_hms(2024, 3, 1, 0, 30, 0).unwrap()
        );
        assert_eq!(event.empty_indicator, Some(EmptyIndicator::Laden));
        assert_eq!(event.un_location_code.as_deref(), Some("CNSHA"));
        let call = event.transport_call.as_ref().expect("has a transport call");
        assert_eq!(call.mode_of_transport, Some(ModeOfTransport::Vessel));
        // Sent as a number; kept as the string it stands for.
        assert_eq!(call.vessel_imo.as_deref(), Some("9321483"));
        assert!(snapshot.skipped.is_empty());
    }

    #[test]
    fn unknown_codes_skip_only_their_event() {
        let mut unknown_code = equipment_event();
        unknown_code["equipmentEventTypeCode"] = json!("WXYZ");
        let mut unknown_type = equipment_event();
        unknown_type["eventType"] = json!("REEFER");
        let mut unknown_classifier = equipment_event();
        unknown_classifier["eventClassifierCode"] = json!("REQ");
        let mut wrong_family = equipment_event();
        wrong_family["equipmentEventTypeCode"] = json!("ARRI");

        let snapshot = parse_json(&json!([
            unknown_code,
            equipment_event(),
            unknown_type,
            unknown_classifier,
            wrong_family
        ]))
        .expect("the array itself is fine");

        assert_eq!(snapshot.events.len(), 1);
        assert_eq!(
            snapshot.skipped,
            [
                "event 0 (e-1): unknown equipmentEventTypeCode \"WXYZ\"",
                "event 2 (e-1): unknown eventType \"REEFER\"",
                "event 3 (e-1): unknown eventClassifierCode \"REQ\"",
                "event 4 (e-1): unknown equipmentEventTypeCode \"ARRI\"",
            ]
        );
    }

    #[test]
    fn events_without_a_readable_timestamp_are_skipped_with_the_reason() {
        let mut missing = equipment_event();
        missing
            .as_object_mut()
            .expect("an object")
            .remove("eventDateTime");
        let mut local = equipment_event();
        local["eventDateTime"] = json!("2024-03-01T08:30:00");
        let mut date_only = equipment_event();
        date_only["eventDateTime"] = json!("2024-03-01");
        let mut garbage = equipment_event();
        garbage["eventDateTime"] = json!("yesterday");
        let mut wrong_type = equipment_event();
        wrong_type["eventDateTime"] = json!({"at": 1});

        let snapshot = parse_json(&json!([missing, local, date_only, garbage, wrong_type]))
            .expect("the array itself is fine");

        assert!(snapshot.events.is_empty());
        assert_eq!(
            snapshot.skipped,
            [
                "event 0 (e-1): eventDateTime is missing",
                "event 1 (e-1): date-time \"2024-03-01T08:30:00\" has no UTC offset",
                "event 2 (e-1): date-time \"2024-03-01\" has no UTC offset",
                "event 3 (e-1): unreadable date-time \"yesterday\"",
                "event 4 (e-1): eventDateTime is missing",
            ]
        );
    }

    #[test]
    fn offsets_are_read_in_the_forms_carriers_send() {
        let cases = [
            ("2019-11-12T07:41:00+08:30", (2019, 11, 11, 23, 11, 0)),
            ("2021-01-09T14:12:56Z", (2021, 1, 9, 14, 12, 56)),
            ("2021-01-09T14:12:56.123-05:00", (2021, 1, 9, 19, 12, 56)),
            ("2021-01-09T14:12:56+0100", (2021, 1, 9, 13, 12, 56)),
            ("2021-01-09T14:12+01:00", (2021, 1, 9, 13, 12, 0)),
        ];

        for (text, (y, mo, d, h, mi, s)) in cases {
            let parsed = parse_datetime(text).map(|dt| dt.with_timezone(&Utc));

            let expected = Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap();
            assert_eq!(
                parsed.map(|dt| dt.with_nanosecond(0).unwrap()),
                Ok(expected),
                "{text}"
            );
        }
    }

    #[test]
    fn a_repeated_key_counts_once_with_its_last_value() {
        let event = equipment_event().to_string();
        let repeated = event.replacen('{', r#"{"eventType": "SHIPMENT","#, 1);

        let snapshot = parse_events(format!("[{repeated}]").as_bytes()).expect("an array");

        assert_eq!(snapshot.events.len(), 1, "{:?}", snapshot.skipped);
    }

    #[test]
    fn items_that_are_not_objects_are_skipped() {
        let snapshot = parse_json(&json!([null, 42, "ARRI", [1], equipment_event()]))
            .expect("the array itself is fine");

        assert_eq!(snapshot.events.len(), 1);
        assert_eq!(
            snapshot.skipped,
            [
                "event 0: expected an object, got null",
                "event 1: expected an object, got a number",
                "event 2: expected an object, got a string",
                "event 3: expected an object, got an array",
            ]
        );
    }

    #[test]
    fn malformed_optional_fields_are_dropped_not_fatal() {
        let mut event = equipment_event();
        event["emptyIndicatorCode"] = json!("HALF");
        event["eventCreatedDateTime"] = json!("not a time");
        event["transportCall"]["modeOfTransport"] = json!("ZEPPELIN");
        event["transportCall"]["vessel"] = json!("King of the Seas");
        event["transportCall"]["transportCallSequenceNumber"] = json!("2");
        event["documentReferences"] = json!([
            {"documentReferenceType": "BKG", "documentReferenceValue": "ABC123"},
            {"documentReferenceType": "XYZ", "documentReferenceValue": "lost"},
            "not an object",
            {"documentReferenceType": "TRD"}
        ]);
        event["references"] = json!({"referenceType": "PO"});

        let snapshot = parse_json(&json!([event])).expect("valid body");

        let event = &snapshot.events[0];
        assert_eq!(event.empty_indicator, None);
        assert_eq!(event.event_created_datetime, None);
        let call = event.transport_call.as_ref().expect("has a transport call");
        assert_eq!(call.mode_of_transport, None);
        assert_eq!(call.vessel_imo, None);
        assert_eq!(call.sequence_number, Some(2));
        assert_eq!(
            event.document_references,
            [DocumentReference {
                document_type: DocumentType::Booking,
                value: "ABC123".to_owned()
            }]
        );
        assert!(event.references.is_empty());
    }

    #[test]
    fn a_shipment_event_lists_its_document_among_the_references() {
        let body = json!([{
            "eventType": "SHIPMENT",
            "eventClassifierCode": "ACT",
            "eventDateTime": "2024-03-01T08:30:00Z",
            "shipmentEventTypeCode": "ISSU",
            "documentID": "MAEU123456789",
            "documentTypeCode": "TRD"
        }]);

        let snapshot = parse_json(&body).expect("valid body");

        let event = &snapshot.events[0];
        assert_eq!(event.dcsa_code, DcsaCode::Issu);
        assert_eq!(
            event
                .document_numbers(DocumentType::TransportDocument)
                .collect::<Vec<_>>(),
            ["MAEU123456789"]
        );
    }

    #[test]
    fn the_deprecated_event_type_code_still_names_the_event() {
        let mut event = equipment_event();
        event
            .as_object_mut()
            .expect("an object")
            .remove("equipmentEventTypeCode");
        event["eventTypeCode"] = json!("disc");

        let snapshot = parse_json(&json!([event])).expect("valid body");

        assert_eq!(snapshot.events[0].dcsa_code, DcsaCode::Disc);
    }

    #[test]
    fn the_location_comes_from_the_event_location_before_the_transport_call() {
        let mut event = equipment_event();
        event["eventLocation"] = json!({"UNLocationCode": "CNNGB", "locationName": "Ningbo depot"});
        let mut nested = equipment_event();
        nested["transportCall"]
            .as_object_mut()
            .expect("an object")
            .remove("UNLocationCode");
        nested["transportCall"]["location"] = json!({"UNLocationCode": "CNYTN"});

        let snapshot = parse_json(&json!([event, nested])).expect("valid body");

        assert_eq!(
            snapshot.events[0].un_location_code.as_deref(),
            Some("CNNGB")
        );
        assert_eq!(
            snapshot.events[0].location_name.as_deref(),
            Some("Ningbo depot")
        );
        assert_eq!(
            snapshot.events[1].un_location_code.as_deref(),
            Some("CNYTN")
        );
    }

    /// An event with every field the parser reads, in the spec's spelling.
    fn full_event() -> Value {
        json!({
            "eventID": "e-9",
            "eventCreatedDateTime": "2024-03-01T10:00:00Z",
            "eventType": "EQUIPMENT",
            "eventClassifierCode": "ACT",
            "eventDateTime": "2024-03-01T08:30:00Z",
            "equipmentEventTypeCode": "DISC",
            "equipmentReference": "MSCU1234566",
            "ISOEquipmentCode": "45G1",
            "emptyIndicatorCode": "LADEN",
            "eventLocation": {"UNLocationCode": "NLRTM", "locationName": "Rotterdam"},
            "transportCall": {
                "transportCallID": "tc-9",
                "transportCallSequenceNumber": 2,
                "UNLocationCode": "NLRTM",
                "facilityCode": "ECTDE",
                "facilityCodeListProvider": "SMDG",
                "facilityTypeCode": "POTE",
                "otherFacility": "ECT Delta",
                "modeOfTransport": "VESSEL",
                "vessel": {"vesselIMONumber": "9321483", "vesselName": "MSC Gulsun"},
                "carrierServiceCode": "AE7",
                "carrierVoyageNumber": "412W",
                "exportVoyageNumber": "412W",
                "importVoyageNumber": "413E"
            },
            "documentReferences": [
                {"documentReferenceType": "BKG", "documentReferenceValue": "BKG9"}
            ],
            "references": [{"referenceType": "FF", "referenceValue": "REF9"}],
            "documentID": "BL9",
            "documentTypeCode": "TRD"
        })
    }

    /// `value` with every object key, at any depth, rewritten by `case`.
    fn recased(value: &Value, case: fn(&str) -> String) -> Value {
        match value {
            Value::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(key, value)| (case(key), recased(value, case)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| recased(v, case)).collect()),
            other => other.clone(),
        }
    }

    #[test]
    fn an_msc_event_with_un_location_code_and_event_id_keeps_its_place_and_id() {
        let msc = json!({
            "eventId": "msc-1",
            "eventType": "TRANSPORT",
            "eventClassifierCode": "ACT",
            "eventDateTime": "2024-03-01T08:30:00Z",
            "transportEventTypeCode": "ARRI",
            "eventLocation": {"unLocationCode": "BEANR", "locationName": "Antwerp"},
            "transportCall": {
                "transportCallId": "tc-msc",
                "unLocationCode": "BEANR",
                "modeOfTransport": "VESSEL"
            }
        });

        let snapshot = parse_json(&json!([msc])).expect("valid body");

        let event = &snapshot.events[0];
        assert_eq!(event.event_id.as_deref(), Some("msc-1"));
        assert_eq!(event.un_location_code.as_deref(), Some("BEANR"));
        let call = event.transport_call.as_ref().expect("has a transport call");
        assert_eq!(call.un_location_code.as_deref(), Some("BEANR"));
        assert_eq!(call.transport_call_id.as_deref(), Some("tc-msc"));
    }

    #[test]
    fn every_known_field_is_read_in_any_case() {
        let spec = parse_json(&json!([full_event()])).expect("valid body");
        let lower =
            parse_json(&json!([recased(&full_event(), str::to_lowercase)])).expect("valid body");
        let upper =
            parse_json(&json!([recased(&full_event(), str::to_uppercase)])).expect("valid body");

        assert!(spec.skipped.is_empty(), "{:?}", spec.skipped);
        assert_eq!(spec.events[0].references.len(), 1);
        assert_eq!(lower, spec);
        assert_eq!(upper, spec);
    }

    #[test]
    fn the_specs_spelling_wins_over_another_case_and_unknown_fields_are_ignored() {
        let mut event = equipment_event();
        event["transportCall"]["unLocationCode"] = json!("DEHAM");
        event["eventid"] = json!("other");
        event["carrierSpecificField"] = json!({"UNLocationCode": "XXXXX"});

        let snapshot = parse_json(&json!([event])).expect("valid body");

        assert_eq!(snapshot.events[0].event_id.as_deref(), Some("e-1"));
        assert_eq!(
            snapshot.events[0].un_location_code.as_deref(),
            Some("CNSHA")
        );
    }

    #[test]
    fn deeply_nested_or_huge_garbage_does_not_panic() {
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        let mut many = Vec::new();
        for i in 0..1_000 {
            many.push(json!({"eventType": i, "eventDateTime": [i]}));
        }

        let deep_result = parse_events(deep.as_bytes());
        let many_result = parse_json(&Value::Array(many));

        // The outer array is read; the item nested too deeply to read is skipped.
        assert_eq!(deep_result.expect("an array").skipped.len(), 1);
        assert_eq!(many_result.expect("an array").skipped.len(), 1_000);
    }
}
