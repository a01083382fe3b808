//! The DCSA Conformance-Gateway sample response for T&T 2.2, read from the shared reference
//! data (not copied into the project).

use tidemark_carriers::dcsa::parse_events;
use tidemark_carriers::{Classifier, DcsaCode, DocumentType, EmptyIndicator, EventKind};

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/reference/dcsa/samples/tnt-220-response.json"
);

#[test]
fn the_dcsa_2_2_sample_response_parses_completely() {
    let body = std::fs::read(SAMPLE).expect("the shared DCSA sample is readable");

    let snapshot = parse_events(&body).expect("the sample is an array of events");

    assert_eq!(snapshot.events.len(), 7);
    assert!(snapshot.skipped.is_empty(), "{:?}", snapshot.skipped);
    insta::assert_json_snapshot!(snapshot);
}

#[test]
fn the_sample_events_carry_their_kinds_codes_and_references() {
    let body = std::fs::read(SAMPLE).expect("the shared DCSA sample is readable");

    let snapshot = parse_events(&body).expect("the sample is an array of events");

    let kinds: Vec<(EventKind, DcsaCode, Classifier)> = snapshot
        .events
        .iter()
        .map(|event| (event.kind, event.dcsa_code, event.classifier))
        .collect();
    assert_eq!(
        kinds,
        [
            (EventKind::Transport, DcsaCode::Arri, Classifier::Actual),
            (EventKind::Shipment, DcsaCode::Drft, Classifier::Actual),
            (EventKind::Equipment, DcsaCode::Load, Classifier::Estimated),
            (EventKind::Transport, DcsaCode::Arri, Classifier::Actual),
            (EventKind::Shipment, DcsaCode::Drft, Classifier::Actual),
            (EventKind::Equipment, DcsaCode::Load, Classifier::Estimated),
            (EventKind::Shipment, DcsaCode::Drft, Classifier::Actual),
        ]
    );
    let load = &snapshot.events[2];
    assert_eq!(load.equipment_reference.as_deref(), Some("APZU4812090"));
    assert_eq!(load.empty_indicator, Some(EmptyIndicator::Empty));
    // "+08:30" is a real offset in the sample: 07:41 local is 23:11 UTC the day before.
    assert_eq!(
        load.event_datetime.to_rfc3339(),
        "2019-11-11T23:11:00+00:00"
    );
    assert_eq!(
        load.document_numbers(DocumentType::Booking)
            .collect::<Vec<_>>(),
        ["ABC123123123"]
    );
    let call = load
        .transport_call
        .as_ref()
        .expect("the load has a transport call");
    assert_eq!(call.vessel_imo.as_deref(), Some("9321483"));
    assert_eq!(call.carrier_export_voyage_number.as_deref(), Some("2103S"));
    assert_eq!(call.carrier_import_voyage_number.as_deref(), Some("2103N"));
    assert_eq!(call.facility_smdg_code.as_deref(), Some("ADT"));
}
