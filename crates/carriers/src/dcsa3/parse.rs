//! Reading a DCSA Track & Trace 3.0 `GET /v3/events` body (`{"events": [...]}`) into the
//! same [`CarrierSnapshot`] the 2.2 parser produces, so nothing downstream knows the version.
//!
//! A 3.0 event says what it is in `eventClassification` (`eventTypeCode`,
//! `eventClassifierCode` and one of `transportEventTypeCode`, `equipmentEventTypeCode`,
//! `shipmentEventTypeCode`), where in `eventLocation`, which documents in
//! `shipmentDetails.documentReference` and `additionalDocumentReferences`, which vessel in
//! `transportDetails.transportCall`, and which container in `equipmentDetails`
//! (`reference/dcsa/TNT_v3.0.0-draft.yaml`).
//!
//! IoT and reefer events (`eventTypeCode` `IOT` with `iotEventTypeCode`, `REEFER` with
//! `reeferEventTypeCode`) are read like the others, with the container their
//! `equipmentDetails` name: they are no milestone, but they are the carrier's word about the
//! box and are kept as it sent them.
//!
//! Drift is handled as in 2.2 ([`crate::dcsa::parse_events`]): every field is read leniently,
//! and one event that cannot be read (an unknown code, a missing time) is left out and
//! listed in [`CarrierSnapshot::skipped`] while the others are kept; only a body that is not
//! a list of events is an error.
//!
//! Early drafts of 3.0.0 (the conformance tool's answers of January 2026) kept 2.2's names
//! inside `transportDetails.transportCall` (`transportCallID`, `exportVoyageNumber`,
//! `vessel.vesselName`, …); those are read where the 3.0.0 names are absent.
//!
//! A retracted event (`isRetracted: true`) is left out without being listed: it is the
//! carrier withdrawing an event, not drift. An event stored from an earlier poll stays stored.
//!
//! The 2023 Beta (`reference/dcsa/tnt_v3.0.0-Beta-1.yaml`, what DCSA's reference
//! implementation serves) wraps each event as `{"metadata": …, "payload": …}` with 2.2-like
//! payload fields; such an item is rewritten into the shape above first
//! ([`from_beta`]), and one with `metadata.retractedEventID` is a retraction.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::dcsa::parse::{
    describe, lenient_integer, lenient_list, lenient_object, lenient_string, normalize,
    parse_datetime, spec_keys,
};
use crate::event::{
    CarrierError, CarrierEvent, CarrierSnapshot, Classifier, DcsaCode, DocumentReference,
    DocumentType, EmptyIndicator, EventKind, ModeOfTransport, Reference, RouteHint, TransportCall,
};

/// Parses a DCSA T&T 3.0 events response or notification.
///
/// The body is `{"events": [...]}`; a bare array of 3.0 events is read too. Returns
/// `UnexpectedPayload` when it is neither; events that cannot be read are left out and
/// described in [`CarrierSnapshot::skipped`].
pub fn parse_events(body: &[u8]) -> Result<CarrierSnapshot, CarrierError> {
    let items = event_items(body)?;

    let mut snapshot = CarrierSnapshot::default();
    for (index, item) in items.into_iter().enumerate() {
        match read_event(item) {
            Ok(Some(event)) => snapshot.events.push(event),
            Ok(None) => {}
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

/// The envelope of a response: its events, and the errors a producer may add beside them.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    events: Option<Vec<&'a RawValue>>,
}

fn event_items(body: &[u8]) -> Result<Vec<&RawValue>, CarrierError> {
    if let Ok(envelope) = serde_json::from_slice::<Envelope<'_>>(body)
        && let Some(events) = envelope.events
    {
        return Ok(events);
    }
    if let Ok(items) = serde_json::from_slice::<Vec<&RawValue>>(body) {
        return Ok(items);
    }
    Err(match serde_json::from_slice::<Value>(body) {
        Err(e) => CarrierError::UnexpectedPayload(format!("the body is not JSON: {e}")),
        Ok(Value::Object(members)) if members.contains_key("events") => {
            CarrierError::UnexpectedPayload(format!(
                "expected events to be an array, got {}",
                describe(&members["events"])
            ))
        }
        Ok(Value::Object(_)) => CarrierError::UnexpectedPayload(
            "expected an object with events, got an object without".to_owned(),
        ),
        Ok(document) => CarrierError::UnexpectedPayload(format!(
            "expected an object with events, got {}",
            describe(&document)
        )),
    })
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

/// The event, `None` for a retracted one, or why it was left out.
fn read_event(item: &RawValue) -> Result<Option<CarrierEvent>, Skip> {
    let value: Value = serde_json::from_str(item.get()).map_err(|e| Skip {
        event_id: None,
        reason: e.to_string(),
    })?;
    // Known fields are read in any case, as in 2.2 (`unLocationCode`, `eventId`).
    let value = match spec_keys(value, FIELDS_3_0) {
        Value::Object(members) if members.get("metadata").is_some_and(Value::is_object) => {
            from_beta(&members)
        }
        Value::Object(members) => Value::Object(members),
        other => {
            return Err(Skip {
                event_id: None,
                reason: format!("expected an object, got {}", describe(&other)),
            });
        }
    };
    // Every field of RawEvent is optional and lenient, so an object always deserializes.
    let raw = RawEvent::deserialize(value).map_err(|e| Skip {
        event_id: None,
        reason: e.to_string(),
    })?;
    if raw.is_retracted == Some(true) {
        return Ok(None);
    }
    let event_id = raw.event_id.clone();
    build_event(raw)
        .map(Some)
        .map_err(|reason| Skip { event_id, reason })
}

fn build_event(raw: RawEvent) -> Result<CarrierEvent, String> {
    let classification = raw
        .event_classification
        .ok_or("eventClassification is missing")?;
    let kind_text = classification
        .event_type_code
        .ok_or("eventClassification.eventTypeCode is missing")?;
    let kind = EventKind::parse(&normalize(&kind_text))
        .ok_or_else(|| format!("unknown eventTypeCode {kind_text:?}"))?;

    let (code_field, code_text) = match kind {
        EventKind::Transport => (
            "transportEventTypeCode",
            classification.transport_event_type_code,
        ),
        EventKind::Equipment => (
            "equipmentEventTypeCode",
            classification.equipment_event_type_code,
        ),
        EventKind::Shipment => (
            "shipmentEventTypeCode",
            classification.shipment_event_type_code,
        ),
        EventKind::Iot => ("iotEventTypeCode", classification.iot_event_type_code),
        EventKind::Reefer => ("reeferEventTypeCode", classification.reefer_event_type_code),
    };
    let code_text = code_text.ok_or_else(|| format!("{code_field} is missing"))?;
    let dcsa_code = DcsaCode::parse(&normalize(&code_text))
        .filter(|code| code.kind() == kind)
        .ok_or_else(|| format!("unknown {code_field} {code_text:?}"))?;

    let classifier_text = classification
        .event_classifier_code
        .ok_or("eventClassifierCode is missing")?;
    let classifier = Classifier::parse(&normalize(&classifier_text))
        .ok_or_else(|| format!("unknown eventClassifierCode {classifier_text:?}"))?;

    let datetime_text = raw.event_date_time.ok_or("eventDateTime is missing")?;
    let event_datetime = parse_datetime(&datetime_text)?;
    // When the carrier last recorded the event; metadata, so an unreadable one is dropped.
    let event_created_datetime = raw
        .event_updated_date_time
        .or(raw.event_created_date_time)
        .and_then(|text| parse_datetime(&text).ok());

    let location = raw.event_location.unwrap_or_default();
    let transport_call = raw
        .transport_details
        .and_then(|details| details.transport_call)
        .map(|call| call.build(&location))
        .or_else(|| location.bare_call());

    let shipment = raw.shipment_details.unwrap_or_default();
    let mut document_references: Vec<DocumentReference> = Vec::new();
    let listed = shipment
        .document_reference
        .into_iter()
        .chain(
            shipment
                .additional_document_references
                .into_iter()
                .filter_map(|value| RawTypedReference::deserialize(value).ok()),
        )
        .filter_map(|reference| {
            Some(DocumentReference {
                document_type: DocumentType::parse(&normalize(&reference.type_code?))?,
                value: reference.reference?,
            })
        });
    for reference in listed {
        if !document_references.contains(&reference) {
            document_references.push(reference);
        }
    }
    let references = shipment
        .shipment_references
        .into_iter()
        .filter_map(|value| {
            let reference = RawTypedReference::deserialize(value).ok()?;
            Some(Reference {
                reference_type: normalize(&reference.type_code?),
                value: reference.reference?,
            })
        })
        .collect();

    let equipment = raw.equipment_details.unwrap_or_default();
    // The most specific word wins: a transshipment move, then the place's role, then the
    // side of the route the move is on.
    let route_hint = if raw.is_transshipment_move == Some(true) {
        Some(RouteHint::Transshipment)
    } else {
        shipment
            .shipment_location_type
            .as_deref()
            .and_then(RouteHint::from_location_type)
            .or_else(|| {
                equipment
                    .movement_type
                    .as_deref()
                    .and_then(RouteHint::from_movement_type)
            })
    };
    Ok(CarrierEvent {
        event_id: raw.event_id,
        kind,
        dcsa_code,
        classifier,
        event_datetime,
        event_created_datetime,
        equipment_reference: equipment.equipment_reference,
        iso_equipment_code: equipment.iso_equipment_code,
        // An unknown indicator is dropped rather than failing the event, as in 2.2.
        empty_indicator: equipment
            .empty_indicator_code
            .and_then(|text| EmptyIndicator::parse(&normalize(&text))),
        // The event's place, else its call's, as in 2.2.
        un_location_code: location.un_location_code.or_else(|| {
            transport_call
                .as_ref()
                .and_then(|call| call.un_location_code.clone())
        }),
        location_name: location.location_name,
        transport_call,
        document_references,
        references,
        route_hint,
    })
}

/// Every field name the 3.0 parser reads (the draft's, then the Beta-1 envelope's), in the
/// spec's spelling.
const FIELDS_3_0: &[&str] = &[
    "eventID",
    "isRetracted",
    "eventDateTime",
    "eventUpdatedDateTime",
    "eventCreatedDateTime",
    "eventLocation",
    "eventClassification",
    "shipmentDetails",
    "transportDetails",
    "equipmentDetails",
    "eventTypeCode",
    "eventClassifierCode",
    "transportEventTypeCode",
    "equipmentEventTypeCode",
    "shipmentEventTypeCode",
    "iotEventTypeCode",
    "reeferEventTypeCode",
    "locationName",
    "UNLocationCode",
    "facilityTypeCode",
    "facility",
    "facilityCode",
    "facilityCodeListProvider",
    "documentReference",
    "additionalDocumentReferences",
    "shipmentReferences",
    "shipmentLocationType",
    "isTransshipmentMove",
    "typeCode",
    "reference",
    "transportCall",
    "transportCallReference",
    "transportCallSequenceNumber",
    "modeOfTransport",
    "serviceCodeOrReference",
    "exportVoyageNumberOrReference",
    "importVoyageNumberOrReference",
    "vesselTransport",
    "carrierServiceCode",
    "carrierVoyageNumber",
    "vesselIMONumber",
    "vesselName",
    "equipmentReference",
    "ISOEquipmentCode",
    "emptyIndicatorCode",
    "movementType",
    // Early 3.0.0 drafts: 2.2's names inside transportDetails.transportCall.
    "transportCallID",
    "exportVoyageNumber",
    "importVoyageNumber",
    // Beta-1.
    "metadata",
    "payload",
    "retractedEventID",
    "eventType",
    "location",
    "documentTypeCode",
    "relatedDocumentReferences",
    "references",
    "type",
    "value",
    "vessel",
    "name",
    "carrierExportVoyageNumber",
    "carrierImportVoyageNumber",
];

/// A Beta-1 event (`{"metadata": …, "payload": …}`) in the shape the rest of this module
/// reads. Fields of the wrong type are carried over as they are, and read leniently later.
fn from_beta(item: &Map<String, Value>) -> Value {
    let empty = Map::new();
    let object = |value: Option<&Value>| value.and_then(Value::as_object).cloned();
    let metadata = item
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let payload = item
        .get("payload")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let field =
        |from: &Map<String, Value>, name: &str| from.get(name).cloned().unwrap_or(Value::Null);
    let mut event = Map::new();
    event.insert("eventID".into(), field(metadata, "eventID"));
    if metadata
        .get("retractedEventID")
        .is_some_and(|id| !id.is_null())
    {
        event.insert("isRetracted".into(), Value::Bool(true));
        return Value::Object(event);
    }
    event.insert("eventDateTime".into(), field(payload, "eventDateTime"));
    event.insert(
        "eventUpdatedDateTime".into(),
        field(metadata, "eventCreatedDateTime"),
    );
    event.insert(
        "eventClassification".into(),
        json!({
            "eventTypeCode": field(metadata, "eventType"),
            "eventClassifierCode": field(payload, "eventClassifierCode"),
            "transportEventTypeCode": field(payload, "transportEventTypeCode"),
            "equipmentEventTypeCode": field(payload, "equipmentEventTypeCode"),
            "shipmentEventTypeCode": field(payload, "shipmentEventTypeCode"),
        }),
    );

    let call = object(payload.get("transportCall")).unwrap_or_default();
    // The event's place, else its transport call's, as 2.2 reads it.
    let place = object(payload.get("eventLocation"))
        .or_else(|| object(call.get("location")))
        .unwrap_or_default();
    event.insert(
        "eventLocation".into(),
        json!({
            "locationName": field(&place, "locationName"),
            "UNLocationCode": field(&place, "UNLocationCode"),
            "facilityTypeCode": place
                .get("facilityTypeCode")
                .or_else(|| call.get("facilityTypeCode"))
                .cloned()
                .unwrap_or(Value::Null),
            "facility": {
                "facilityCode": field(&place, "facilityCode"),
                "facilityCodeListProvider": field(&place, "facilityCodeListProvider"),
            },
        }),
    );

    let typed = |list: Option<&Value>| -> Vec<Value> {
        list.and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_object)
                    .map(|item| json!({"typeCode": field(item, "type"), "reference": field(item, "value")}))
                    .collect()
            })
            .unwrap_or_default()
    };
    event.insert(
        "shipmentDetails".into(),
        json!({
            "documentReference": {
                "typeCode": field(payload, "documentTypeCode"),
                "reference": field(payload, "documentReference"),
            },
            "additionalDocumentReferences": typed(payload.get("relatedDocumentReferences")),
            "shipmentReferences": typed(payload.get("references")),
        }),
    );
    if !call.is_empty() {
        let vessel = object(call.get("vessel")).unwrap_or_default();
        event.insert(
            "transportDetails".into(),
            json!({"transportCall": {
                "transportCallReference": field(&call, "transportCallReference"),
                "transportCallSequenceNumber": field(&call, "transportCallSequenceNumber"),
                "modeOfTransport": field(&call, "modeOfTransport"),
                "serviceCodeOrReference": {"carrierServiceCode": field(&call, "carrierServiceCode")},
                "exportVoyageNumberOrReference": {
                    "carrierVoyageNumber": field(&call, "carrierExportVoyageNumber"),
                },
                "importVoyageNumberOrReference": {
                    "carrierVoyageNumber": field(&call, "carrierImportVoyageNumber"),
                },
                "vesselTransport": {
                    "vesselIMONumber": field(&vessel, "vesselIMONumber"),
                    "vesselName": field(&vessel, "name"),
                },
            }}),
        );
    }
    event.insert(
        "isTransshipmentMove".into(),
        field(payload, "isTransshipmentMove"),
    );
    event.insert(
        "equipmentDetails".into(),
        json!({
            "equipmentReference": field(payload, "equipmentReference"),
            "ISOEquipmentCode": field(payload, "ISOEquipmentCode"),
            "emptyIndicatorCode": field(payload, "emptyIndicatorCode"),
        }),
    );
    Value::Object(event)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEvent {
    #[serde(rename = "eventID", default, deserialize_with = "lenient_string")]
    event_id: Option<String>,
    #[serde(default, deserialize_with = "lenient_bool")]
    is_retracted: Option<bool>,
    #[serde(default, deserialize_with = "lenient_string")]
    event_date_time: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    event_updated_date_time: Option<String>,
    /// Not in 3.0; some producers keep 2.2's name.
    #[serde(default, deserialize_with = "lenient_string")]
    event_created_date_time: Option<String>,
    #[serde(default, deserialize_with = "lenient_object")]
    event_location: Option<RawLocation>,
    #[serde(default, deserialize_with = "lenient_object")]
    event_classification: Option<RawClassification>,
    #[serde(default, deserialize_with = "lenient_object")]
    shipment_details: Option<RawShipmentDetails>,
    #[serde(default, deserialize_with = "lenient_object")]
    transport_details: Option<RawTransportDetails>,
    #[serde(default, deserialize_with = "lenient_object")]
    equipment_details: Option<RawEquipmentDetails>,
    /// Beta-1's flag on an equipment event, carried over by [`from_beta`].
    #[serde(default, deserialize_with = "lenient_bool")]
    is_transshipment_move: Option<bool>,
}

/// A boolean that also takes `"true"` / `"false"`; anything else reads as absent.
fn lenient_bool<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<bool>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::Bool(flag) => Some(flag),
        Value::String(text) => text.trim().to_ascii_lowercase().parse().ok(),
        _ => None,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawClassification {
    #[serde(default, deserialize_with = "lenient_string")]
    event_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    event_classifier_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    transport_event_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    equipment_event_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    shipment_event_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    iot_event_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    reefer_event_type_code: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawLocation {
    #[serde(default, deserialize_with = "lenient_string")]
    location_name: Option<String>,
    #[serde(
        rename = "UNLocationCode",
        default,
        deserialize_with = "lenient_string"
    )]
    un_location_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    facility_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_object")]
    facility: Option<RawFacility>,
}

impl RawLocation {
    /// The terminal's SMDG code; a facility code only means something with its code list, and
    /// an absent list is taken as SMDG, as in 2.2.
    fn smdg_code(&self) -> Option<String> {
        let facility = self.facility.as_ref()?;
        let is_smdg = facility
            .facility_code_list_provider
            .as_deref()
            .is_none_or(|provider| normalize(provider) == "SMDG");
        facility.facility_code.clone().filter(|_| is_smdg)
    }

    /// A call at the event's place when the event has no transport details but says what kind
    /// of facility it happened at, which the milestone rules read (a rail ramp, say).
    fn bare_call(&self) -> Option<TransportCall> {
        self.facility_type_code.as_ref()?;
        Some(TransportCall {
            un_location_code: self.un_location_code.clone(),
            facility_smdg_code: self.smdg_code(),
            facility_type_code: self.facility_type_code.as_deref().map(normalize),
            ..TransportCall::default()
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawFacility {
    #[serde(default, deserialize_with = "lenient_string")]
    facility_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    facility_code_list_provider: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawShipmentDetails {
    #[serde(default, deserialize_with = "lenient_object")]
    document_reference: Option<RawTypedReference>,
    #[serde(default, deserialize_with = "lenient_list")]
    additional_document_references: Vec<Value>,
    #[serde(default, deserialize_with = "lenient_list")]
    shipment_references: Vec<Value>,
    #[serde(default, deserialize_with = "lenient_string")]
    shipment_location_type: Option<String>,
}

/// `{"typeCode": …, "reference": …}`, the shape of 3.0's document and shipment references.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawTypedReference {
    #[serde(default, deserialize_with = "lenient_string")]
    type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    reference: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawTransportDetails {
    #[serde(default, deserialize_with = "lenient_object")]
    transport_call: Option<RawTransportCall>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawTransportCall {
    #[serde(default, deserialize_with = "lenient_string")]
    transport_call_reference: Option<String>,
    #[serde(default, deserialize_with = "lenient_integer")]
    transport_call_sequence_number: Option<i64>,
    #[serde(default, deserialize_with = "lenient_string")]
    mode_of_transport: Option<String>,
    #[serde(default, deserialize_with = "lenient_object")]
    service_code_or_reference: Option<RawService>,
    #[serde(default, deserialize_with = "lenient_object")]
    export_voyage_number_or_reference: Option<RawVoyage>,
    #[serde(default, deserialize_with = "lenient_object")]
    import_voyage_number_or_reference: Option<RawVoyage>,
    #[serde(default, deserialize_with = "lenient_object")]
    vessel_transport: Option<RawVessel>,
    // 2.2's names, which early 3.0.0 drafts kept inside the transport call.
    #[serde(
        rename = "transportCallID",
        default,
        deserialize_with = "lenient_string"
    )]
    transport_call_id: Option<String>,
    #[serde(
        rename = "UNLocationCode",
        default,
        deserialize_with = "lenient_string"
    )]
    un_location_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    facility_type_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    carrier_service_code: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    export_voyage_number: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    import_voyage_number: Option<String>,
    /// 2.2's deprecated single voyage, the export voyage.
    #[serde(default, deserialize_with = "lenient_string")]
    carrier_voyage_number: Option<String>,
    #[serde(default, deserialize_with = "lenient_object")]
    vessel: Option<RawVessel>,
}

impl RawTransportCall {
    /// The call, placed where the event is: 3.0 keeps the place in `eventLocation` (a call
    /// of an early draft that names its own place is placed there when the event is not).
    /// Each 3.0.0 member is read first, then its 2.2 name.
    fn build(self, location: &RawLocation) -> TransportCall {
        let vessel = self.vessel_transport.unwrap_or_default();
        let draft_vessel = self.vessel.unwrap_or_default();
        let facility_type_code = location
            .facility_type_code
            .as_deref()
            .or(self.facility_type_code.as_deref())
            .map(normalize);
        TransportCall {
            transport_call_id: self.transport_call_reference.or(self.transport_call_id),
            sequence_number: self.transport_call_sequence_number,
            un_location_code: location.un_location_code.clone().or(self.un_location_code),
            facility_smdg_code: location.smdg_code(),
            facility_type_code,
            facility_name: None,
            mode_of_transport: self
                .mode_of_transport
                .and_then(|text| ModeOfTransport::parse(&normalize(&text))),
            vessel_imo: vessel.imo.or(draft_vessel.imo),
            vessel_name: vessel.name.or(draft_vessel.name),
            carrier_service_code: self
                .service_code_or_reference
                .and_then(|service| service.carrier_service_code)
                .or(self.carrier_service_code),
            carrier_export_voyage_number: self
                .export_voyage_number_or_reference
                .and_then(|voyage| voyage.carrier_voyage_number)
                .or(self.export_voyage_number)
                .or(self.carrier_voyage_number),
            carrier_import_voyage_number: self
                .import_voyage_number_or_reference
                .and_then(|voyage| voyage.carrier_voyage_number)
                .or(self.import_voyage_number),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawService {
    #[serde(default, deserialize_with = "lenient_string")]
    carrier_service_code: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawVoyage {
    #[serde(default, deserialize_with = "lenient_string")]
    carrier_voyage_number: Option<String>,
}

#[derive(Default, Deserialize)]
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

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEquipmentDetails {
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
    #[serde(default, deserialize_with = "lenient_string")]
    movement_type: Option<String>,
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use serde_json::json;

    use super::*;

    /// A file of `../shared/reference/dcsa/samples`, found from the nearest ancestor of this
    /// crate that has `shared` beside it (the main checkout or a worktree of it).
    fn sample(name: &str) -> Vec<u8> {
        let relative = format!("shared/reference/dcsa/samples/{name}");
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .map(|dir| dir.join(&relative))
            .find(|path| path.exists())
            .unwrap_or_else(|| panic!("{relative} not found beside any parent directory"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn parse_json(value: &Value) -> Result<CarrierSnapshot, CarrierError> {
        parse_events(value.to_string().as_bytes())
    }

    fn load_event() -> Value {
        json!({
            "eventID": "e-1",
            "eventDateTime": "2026-01-20T14:15:00+01:00",
            "eventUpdatedDateTime": "2026-01-20T14:20:00Z",
            "eventLocation": {
                "locationName": "Euromax",
                "UNLocationCode": "NLRTM",
                "facilityTypeCode": "POTE",
                "facility": {"facilityCode": "ECTDE", "facilityCodeListProvider": "SMDG"}
            },
            "eventClassification": {
                "eventTypeCode": "EQUIPMENT",
                "eventClassifierCode": "ACT",
                "equipmentEventTypeCode": "LOAD"
            },
            "shipmentDetails": {
                "documentReference": {"typeCode": "TRD", "reference": "HHL71800000"},
                "additionalDocumentReferences": [{"typeCode": "BKG", "reference": "ABC709951"}],
                "shipmentReferences": [{"typeCode": "PO", "reference": "PO-42"}]
            },
            "transportDetails": {"transportCall": {
                "transportCallReference": "tc-1",
                "transportCallSequenceNumber": 2,
                "modeOfTransport": "VESSEL",
                "serviceCodeOrReference": {"carrierServiceCode": "FE1"},
                "exportVoyageNumberOrReference": {"carrierVoyageNumber": "2103S"},
                "importVoyageNumberOrReference": {"carrierVoyageNumber": "2103N"},
                "vesselTransport": {"vesselIMONumber": 9321483, "vesselName": "King of the Seas"}
            }},
            "equipmentDetails": {
                "equipmentReference": "APZU4812090",
                "ISOEquipmentCode": "22GP",
                "emptyIndicatorCode": "LADEN"
            }
        })
    }

    fn events(value: Value) -> Value {
        json!({ "events": value })
    }

    #[test]
    fn the_sample_response_reads_its_shipment_transport_equipment_iot_and_reefer_events() {
        let snapshot = parse_events(&sample("tnt-300-response.json")).expect("a valid body");

        let codes: Vec<_> = snapshot
            .events
            .iter()
            .map(|event| (event.kind, event.dcsa_code, event.classifier))
            .collect();
        assert_eq!(
            codes,
            [
                (EventKind::Shipment, DcsaCode::Conf, Classifier::Actual),
                (EventKind::Transport, DcsaCode::Depa, Classifier::Actual),
                (EventKind::Equipment, DcsaCode::Gtin, Classifier::Actual),
                (EventKind::Iot, DcsaCode::Detc, Classifier::Actual),
                (EventKind::Reefer, DcsaCode::Meas, Classifier::Actual),
            ]
        );
        assert!(snapshot.skipped.is_empty(), "{:?}", snapshot.skipped);
        let confirmed = &snapshot.events[0];
        assert_eq!(
            confirmed
                .document_numbers(DocumentType::Booking)
                .collect::<Vec<_>>(),
            ["ABC709951"]
        );
        assert_eq!(
            confirmed
                .document_numbers(DocumentType::TransportDocument)
                .collect::<Vec<_>>(),
            ["HHL71800000"]
        );
        let departed = &snapshot.events[1];
        assert_eq!(departed.un_location_code.as_deref(), Some("GBSOU"));
        let call = departed.transport_call.as_ref().expect("a transport call");
        assert_eq!(call.transport_call_id.as_deref(), Some("tc-67890-def"));
        assert_eq!(call.vessel_imo.as_deref(), Some("7654321"));
        assert_eq!(call.vessel_name.as_deref(), Some("Example Vessel Beta"));
        assert_eq!(call.mode_of_transport, Some(ModeOfTransport::Vessel));
        assert_eq!(call.carrier_export_voyage_number.as_deref(), Some("V002E"));
        assert_eq!(call.carrier_import_voyage_number.as_deref(), Some("V002N"));
        assert_eq!(call.carrier_service_code.as_deref(), Some("SVC002"));
        assert_eq!(call.facility_type_code.as_deref(), Some("POTE"));
        let gated_in = &snapshot.events[2];
        assert_eq!(gated_in.equipment_reference.as_deref(), Some("APZU4812090"));
        assert_eq!(gated_in.iso_equipment_code.as_deref(), Some("45G1"));
        assert_eq!(gated_in.empty_indicator, Some(EmptyIndicator::Empty));
        assert_eq!(
            gated_in.location_name.as_deref(),
            Some("Example Warehouse Facility")
        );
    }

    /// A 3.0.0 IoT event: a door of `APZU4812090` opened, somewhere given by coordinates.
    fn iot_event() -> Value {
        json!({
            "eventID": "iot-1",
            "eventDateTime": "2026-01-20T16:45:00Z",
            "eventLocation": {"geoCoordinate": {"latitude": "52.3676", "longitude": "4.9041"}},
            "eventClassification": {
                "eventTypeCode": "IOT",
                "eventClassifierCode": "ACT",
                "iotEventTypeCode": "DETC"
            },
            "equipmentDetails": {"equipmentReference": "APZU4812090", "ISOEquipmentCode": "22GP"},
            "iotDetails": {"iotEventCode": "DRO"}
        })
    }

    /// A 3.0.0 reefer event: `APZU4812090`'s temperatures measured at New York.
    fn reefer_event() -> Value {
        json!({
            "eventID": "reefer-1",
            "eventDateTime": "2026-01-20T18:00:00Z",
            "eventLocation": {"UNLocationCode": "USNYC", "facilityTypeCode": "POTE"},
            "eventClassification": {
                "eventTypeCode": "REEFER",
                "eventClassifierCode": "ACT",
                "reeferEventTypeCode": "MEAS"
            },
            "equipmentDetails": {"equipmentReference": "APZU4812090", "ISOEquipmentCode": "45R1"},
            "reeferDetails": {"temperatureUnit": "CEL", "ambientMeasuredTemperature": 22.3}
        })
    }

    #[test]
    fn an_iot_event_is_read_as_an_event_about_its_container() {
        let snapshot = parse_json(&events(json!([iot_event()]))).expect("a valid body");

        assert!(snapshot.skipped.is_empty(), "{:?}", snapshot.skipped);
        let event = &snapshot.events[0];
        assert_eq!(event.kind, EventKind::Iot);
        assert_eq!(event.dcsa_code, DcsaCode::Detc);
        assert_eq!(event.equipment_reference.as_deref(), Some("APZU4812090"));
        assert_eq!(event.un_location_code, None);
    }

    #[test]
    fn a_reefer_event_is_read_with_its_place_and_container() {
        let snapshot = parse_json(&events(json!([reefer_event()]))).expect("a valid body");

        assert!(snapshot.skipped.is_empty(), "{:?}", snapshot.skipped);
        let event = &snapshot.events[0];
        assert_eq!(event.kind, EventKind::Reefer);
        assert_eq!(event.dcsa_code, DcsaCode::Meas);
        assert_eq!(event.equipment_reference.as_deref(), Some("APZU4812090"));
        assert_eq!(event.un_location_code.as_deref(), Some("USNYC"));
        assert_eq!(snapshot.unreadable().map(|e| e.to_string()), None);
    }

    #[test]
    fn a_reefer_adjustment_is_read_too() {
        let mut adjusted = reefer_event();
        adjusted["eventClassification"]["reeferEventTypeCode"] = json!("ADJU");

        let snapshot = parse_json(&events(json!([adjusted]))).expect("a valid body");

        assert_eq!(snapshot.events[0].dcsa_code, DcsaCode::Adju);
    }

    #[test]
    fn an_iot_or_reefer_event_with_a_code_of_another_family_is_drift() {
        let mut iot_with_equipment_code = iot_event();
        iot_with_equipment_code["eventClassification"]["iotEventTypeCode"] = json!("LOAD");
        let mut reefer_without_code = reefer_event();
        reefer_without_code["eventClassification"]
            .as_object_mut()
            .map(|c| c.remove("reeferEventTypeCode"));

        let snapshot = parse_json(&events(json!([
            iot_with_equipment_code,
            reefer_without_code
        ])))
        .expect("the list itself is fine");

        assert!(snapshot.events.is_empty());
        assert_eq!(
            snapshot.skipped,
            [
                "event 0 (iot-1): unknown iotEventTypeCode \"LOAD\"",
                "event 1 (reefer-1): reeferEventTypeCode is missing",
            ]
        );
    }

    #[test]
    fn the_movement_type_is_the_carriers_word_on_the_side_of_the_route() {
        let with_movement = |movement: &str| {
            let mut event = load_event();
            event["equipmentDetails"]["movementType"] = json!(movement);
            let snapshot = parse_json(&events(json!([event]))).expect("a valid body");
            snapshot.events[0].route_hint
        };

        assert_eq!(with_movement("IMPORT"), Some(RouteHint::ImportMove));
        assert_eq!(with_movement("export"), Some(RouteHint::ExportMove));
        assert_eq!(
            with_movement("TRANSSHIPMENT"),
            Some(RouteHint::Transshipment)
        );
        assert_eq!(with_movement("SIDEWAYS"), None);
    }

    #[test]
    fn the_place_role_outranks_the_movement_type() {
        let mut event = load_event();
        event["equipmentDetails"]["movementType"] = json!("EXPORT");
        event["shipmentDetails"]["shipmentLocationType"] = json!("POL");

        let snapshot = parse_json(&events(json!([event]))).expect("a valid body");

        assert_eq!(
            snapshot.events[0].route_hint,
            Some(RouteHint::PortOfLoading)
        );
    }

    #[test]
    fn an_early_drafts_2_2_names_inside_the_transport_call_are_read() {
        let mut draft = load_event();
        draft["transportDetails"] = json!({"transportCall": {
            "transportCallID": "tc-1",
            "transportCallSequenceNumber": 2,
            "carrierServiceCode": "FE1",
            "exportVoyageNumber": "2103S",
            "importVoyageNumber": "2103N",
            "UNLocationCode": "NLRTM",
            "facilityTypeCode": "POTE",
            "modeOfTransport": "VESSEL",
            "vessel": {"vesselIMONumber": "9321483", "vesselName": "King of the Seas"}
        }});

        let from_draft = parse_json(&events(json!([draft]))).expect("a valid body");
        let from_spec = parse_json(&events(json!([load_event()]))).expect("a valid body");

        assert!(from_draft.skipped.is_empty(), "{:?}", from_draft.skipped);
        assert_eq!(from_draft, from_spec);
    }

    #[test]
    fn the_3_0_0_names_of_a_transport_call_win_over_the_drafts() {
        let mut both = load_event();
        both["transportDetails"]["transportCall"]["exportVoyageNumber"] = json!("OLD1");
        both["transportDetails"]["transportCall"]["vessel"] = json!({"vesselName": "Old Name"});

        let snapshot = parse_json(&events(json!([both]))).expect("a valid body");

        let call = snapshot.events[0].transport_call.as_ref().expect("a call");
        assert_eq!(call.carrier_export_voyage_number.as_deref(), Some("2103S"));
        assert_eq!(call.vessel_name.as_deref(), Some("King of the Seas"));
    }

    #[test]
    fn an_event_without_a_place_of_its_own_is_placed_at_its_drafts_call() {
        let mut draft = load_event();
        draft
            .as_object_mut()
            .expect("an object")
            .remove("eventLocation");
        draft["transportDetails"]["transportCall"]["UNLocationCode"] = json!("NLRTM");

        let snapshot = parse_json(&events(json!([draft]))).expect("a valid body");

        assert_eq!(
            snapshot.events[0].un_location_code.as_deref(),
            Some("NLRTM")
        );
    }

    #[test]
    fn the_sample_notifications_read_one_event_each() {
        let cases = [
            ("tnt-300-request-equipment.json", DcsaCode::Load),
            ("tnt-300-request-shipment.json", DcsaCode::Conf),
            ("tnt-300-request-transport.json", DcsaCode::Arri),
        ];

        for (name, code) in cases {
            let snapshot = parse_events(&sample(name)).expect("a valid body");

            assert_eq!(snapshot.events.len(), 1, "{name}");
            assert_eq!(snapshot.events[0].dcsa_code, code, "{name}");
            assert!(
                snapshot.skipped.is_empty(),
                "{name}: {:?}",
                snapshot.skipped
            );
        }
    }

    #[test]
    fn an_equipment_event_reads_into_the_same_event_as_its_2_2_form() {
        let v2 = json!([{
            "eventID": "e-1",
            "eventCreatedDateTime": "2026-01-20T14:20:00Z",
            "eventType": "EQUIPMENT",
            "eventClassifierCode": "ACT",
            "eventDateTime": "2026-01-20T14:15:00+01:00",
            "equipmentEventTypeCode": "LOAD",
            "equipmentReference": "APZU4812090",
            "ISOEquipmentCode": "22GP",
            "emptyIndicatorCode": "LADEN",
            "eventLocation": {"UNLocationCode": "NLRTM", "locationName": "Euromax"},
            "transportCall": {
                "transportCallID": "tc-1",
                "transportCallSequenceNumber": 2,
                "UNLocationCode": "NLRTM",
                "facilityCode": "ECTDE",
                "facilityCodeListProvider": "SMDG",
                "facilityTypeCode": "POTE",
                "modeOfTransport": "VESSEL",
                "carrierServiceCode": "FE1",
                "exportVoyageNumber": "2103S",
                "importVoyageNumber": "2103N",
                "vessel": {"vesselIMONumber": "9321483", "vesselName": "King of the Seas"}
            },
            "documentReferences": [
                {"documentReferenceType": "TRD", "documentReferenceValue": "HHL71800000"},
                {"documentReferenceType": "BKG", "documentReferenceValue": "ABC709951"}
            ],
            "references": [{"referenceType": "PO", "referenceValue": "PO-42"}]
        }]);

        let from_v3 = parse_json(&events(json!([load_event()]))).expect("a valid body");
        let from_v2 = crate::dcsa::parse_events(v2.to_string().as_bytes()).expect("valid");

        assert_eq!(from_v3, from_v2);
        assert_eq!(
            from_v3.events[0].event_datetime,
            Utc.with_ymd_and_hms(2026, 1, 20, 13, 15, 0).unwrap()
        );
    }

    #[test]
    fn a_retracted_event_is_left_out_without_counting_as_drift() {
        let retracted = json!({"eventID": "e-0", "isRetracted": true});

        let snapshot = parse_json(&events(json!([retracted, load_event()]))).expect("valid");

        assert_eq!(snapshot.events.len(), 1);
        assert!(snapshot.skipped.is_empty());
    }

    #[test]
    fn unknown_codes_and_malformed_events_skip_only_themselves() {
        let mut unknown_code = load_event();
        unknown_code["eventClassification"]["equipmentEventTypeCode"] = json!("WXYZ");
        let mut wrong_family = load_event();
        wrong_family["eventClassification"]["equipmentEventTypeCode"] = json!("ARRI");
        let mut unknown_classifier = load_event();
        unknown_classifier["eventClassification"]["eventClassifierCode"] = json!("REQ");
        let mut no_classification = load_event();
        no_classification["eventClassification"] = json!("EQUIPMENT");
        let mut local_time = load_event();
        local_time["eventDateTime"] = json!("2026-01-20T14:15:00");

        let snapshot = parse_json(&events(json!([
            unknown_code,
            load_event(),
            wrong_family,
            unknown_classifier,
            no_classification,
            local_time,
            null,
            "LOAD"
        ])))
        .expect("the list itself is fine");

        assert_eq!(snapshot.events.len(), 1);
        assert_eq!(
            snapshot.skipped,
            [
                "event 0 (e-1): unknown equipmentEventTypeCode \"WXYZ\"",
                "event 2 (e-1): unknown equipmentEventTypeCode \"ARRI\"",
                "event 3 (e-1): unknown eventClassifierCode \"REQ\"",
                "event 4 (e-1): eventClassification is missing",
                "event 5 (e-1): date-time \"2026-01-20T14:15:00\" has no UTC offset",
                "event 6: expected an object, got null",
                "event 7: expected an object, got a string",
            ]
        );
    }

    #[test]
    fn unknown_fields_and_malformed_optional_parts_are_ignored() {
        let mut event = load_event();
        event["somethingNew"] = json!({"nested": [1, 2]});
        event["equipmentDetails"]["emptyIndicatorCode"] = json!("HALF");
        event["transportDetails"]["transportCall"]["vesselTransport"] = json!("a string");
        event["transportDetails"]["transportCall"]["modeOfTransport"] = json!("ZEPPELIN");
        event["shipmentDetails"]["additionalDocumentReferences"] =
            json!([{"typeCode": "XYZ", "reference": "lost"}, 7, {"typeCode": "BKG"}]);
        event["shipmentDetails"]["shipmentReferences"] = json!({"typeCode": "PO"});

        let snapshot = parse_json(&events(json!([event]))).expect("valid");

        let event = &snapshot.events[0];
        assert_eq!(event.empty_indicator, None);
        let call = event.transport_call.as_ref().expect("a call");
        assert_eq!(call.vessel_imo, None);
        assert_eq!(call.mode_of_transport, None);
        assert_eq!(
            event.document_references,
            [DocumentReference {
                document_type: DocumentType::TransportDocument,
                value: "HHL71800000".to_owned()
            }]
        );
        assert!(event.references.is_empty());
        assert!(snapshot.skipped.is_empty());
    }

    #[test]
    fn an_event_without_transport_details_keeps_its_facility_type() {
        let mut event = load_event();
        event
            .as_object_mut()
            .expect("an object")
            .remove("transportDetails");
        event["eventLocation"]["facilityTypeCode"] = json!("ramp");

        let snapshot = parse_json(&events(json!([event]))).expect("valid");

        assert_eq!(snapshot.events[0].facility_type_code(), Some("RAMP"));
        assert_eq!(snapshot.events[0].mode_of_transport(), None);
    }

    /// `value` with every object key, at any depth, in lower case.
    fn lower_cased(value: &Value) -> Value {
        match value {
            Value::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(key, value)| (key.to_lowercase(), lower_cased(value)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(lower_cased).collect()),
            other => other.clone(),
        }
    }

    #[test]
    fn known_fields_are_read_in_any_case() {
        let mut msc = load_event();
        msc["eventLocation"]["unLocationCode"] = json!("BEANR");
        if let Some(location) = msc["eventLocation"].as_object_mut() {
            location.remove("UNLocationCode");
        }
        msc["eventId"] = msc["eventID"].take();
        if let Some(event) = msc.as_object_mut() {
            event.remove("eventID");
        }

        let spec = parse_json(&events(json!([load_event()]))).expect("a valid body");
        let lower = parse_json(&events(json!([lower_cased(&load_event())]))).expect("valid");
        let msc = parse_json(&events(json!([msc]))).expect("a valid body");

        assert!(spec.skipped.is_empty(), "{:?}", spec.skipped);
        assert_eq!(lower, spec);
        assert_eq!(msc.events[0].event_id.as_deref(), Some("e-1"));
        assert_eq!(msc.events[0].un_location_code.as_deref(), Some("BEANR"));
    }

    #[test]
    fn the_beta_1_shape_reads_into_the_same_event() {
        let beta = json!([
            {"metadata": {"eventID": "e-0", "eventType": "EQUIPMENT",
                          "retractedEventID": "e-older"}},
            {
                "metadata": {
                    "eventID": "e-1",
                    "eventCreatedDateTime": "2026-01-20T14:20:00Z",
                    "eventType": "EQUIPMENT",
                    "publisher": {"partyName": "CMA CGM"},
                    "publisherRole": "CA"
                },
                "payload": {
                    "eventClassifierCode": "ACT",
                    "eventDateTime": "2026-01-20T14:15:00+01:00",
                    "equipmentEventTypeCode": "LOAD",
                    "equipmentReference": "APZU4812090",
                    "ISOEquipmentCode": "22GP",
                    "emptyIndicatorCode": "LADEN",
                    "eventLocation": {
                        "locationName": "Euromax", "UNLocationCode": "NLRTM",
                        "facilityCode": "ECTDE", "facilityCodeListProvider": "SMDG"
                    },
                    "transportCall": {
                        "transportCallReference": "tc-1",
                        "transportCallSequenceNumber": 2,
                        "modeOfTransport": "VESSEL",
                        "facilityTypeCode": "POTE",
                        "carrierServiceCode": "FE1",
                        "carrierExportVoyageNumber": "2103S",
                        "carrierImportVoyageNumber": "2103N",
                        "vessel": {"vesselIMONumber": "9321483", "name": "King of the Seas"}
                    },
                    "relatedDocumentReferences": [
                        {"type": "TRD", "value": "HHL71800000"},
                        {"type": "BKG", "value": "ABC709951"}
                    ],
                    "references": [{"type": "PO", "value": "PO-42"}]
                }
            }
        ]);

        let from_beta = parse_json(&beta).expect("a valid body");
        let from_draft = parse_json(&events(json!([load_event()]))).expect("a valid body");

        assert!(from_beta.skipped.is_empty(), "{:?}", from_beta.skipped);
        assert_eq!(from_beta, from_draft);
    }

    #[test]
    fn a_bare_array_of_3_0_events_is_read_too() {
        let snapshot = parse_json(&json!([load_event()])).expect("valid");

        assert_eq!(snapshot.events.len(), 1);
    }

    #[test]
    fn bodies_that_are_not_lists_of_events_are_unexpected_payloads() {
        let cases = [
            (b"<html>502</html>".to_vec(), None),
            (b"".to_vec(), None),
            (
                json!({"feedbackElements": [{"severity": "ERROR", "message": "no"}]})
                    .to_string()
                    .into_bytes(),
                Some("expected an object with events, got an object without"),
            ),
            (
                json!({"events": {"eventID": "1"}}).to_string().into_bytes(),
                Some("expected events to be an array, got an object"),
            ),
            (
                b"42".to_vec(),
                Some("expected an object with events, got a number"),
            ),
        ];

        for (body, message) in cases {
            let result = parse_events(&body);

            let Err(CarrierError::UnexpectedPayload(text)) = result else {
                panic!("expected UnexpectedPayload, got {result:?}");
            };
            if let Some(message) = message {
                assert_eq!(text, message);
            }
        }
    }

    #[test]
    fn an_empty_list_is_a_snapshot_without_events() {
        let snapshot = parse_events(br#"{"events": []}"#).expect("valid");

        assert_eq!(snapshot, CarrierSnapshot::default());
    }

    #[test]
    fn deeply_nested_or_huge_garbage_does_not_panic() {
        let deep = format!(
            r#"{{"events": {}{}}}"#,
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        let many: Vec<Value> = (0..1_000)
            .map(|i| json!({"eventClassification": i, "eventDateTime": [i]}))
            .collect();

        let deep_result = parse_events(deep.as_bytes());
        let many_result = parse_json(&events(Value::Array(many)));

        assert!(
            deep_result.is_ok() || matches!(deep_result, Err(CarrierError::UnexpectedPayload(_)))
        );
        assert_eq!(many_result.expect("a list").skipped.len(), 1_000);
    }
}
