//! A public IFTSTA D.10B in a dialect the ocean samples do not have (syntax version 4,
//! ISO 8859-1 names, an STS without category, a mutually defined LOC qualifier, no
//! equipment): read whole, its status kept raw.

use tidemark_edi::Note;
use tidemark_edi::ack::{AckControl, edifact_contrl};

use crate::{local, only_status, read_fixture, transaction, utc};

const ROAD: &str = "iftsta_d10b_road_consignment_latin1.edi";

#[test]
fn a_syntax_version_4_envelope_with_latin1_names_is_read() {
    let interchange = read_fixture(ROAD);
    let envelope = &interchange.envelope;
    assert_eq!(envelope.sender_id, "5790000110018");
    assert_eq!(envelope.sender_qualifier.as_deref(), Some("14"));
    assert_eq!(envelope.receiver_id, "SEAFT.AFT006");
    assert_eq!(envelope.receiver_qualifier, None);
    assert_eq!(envelope.control_number, "31");
    assert_eq!(envelope.version, "UNOC:4");
    assert_eq!(envelope.date, "20151012");
    assert_eq!(envelope.time, "1354");
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
}

#[test]
fn a_d10b_message_whose_unt_miscounts_is_read_and_noted() {
    let interchange = read_fixture(ROAD);
    let message = transaction(&interchange, 0);
    assert_eq!(message.set_id, "IFTSTA");
    assert_eq!(message.version, "D:10B");
    assert_eq!(message.control_number, "45689");
    assert_eq!(
        message.notes,
        [Note::SegmentCount {
            declared: "18".to_owned(),
            counted: 39
        }]
    );
}

#[test]
fn an_sts_without_category_gives_its_status_code_kept_raw() {
    // `Z1` names no list and is no element-157 code: drift, never fatal.
    let interchange = read_fixture(ROAD);
    let status = only_status(&interchange);
    assert_eq!(status.code, "Z1");
    assert_eq!(status.code_agency, None);
    assert_eq!(status.code_list, None);
    assert!(status.is_drift());
    assert_eq!(interchange.drift().count(), 1);
}

#[test]
fn a_status_without_equipment_keeps_its_consignment_references() {
    let interchange = read_fixture(ROAD);
    let status = only_status(&interchange);
    assert_eq!(status.references.container, None);
    assert!(!status.container_valid);
    assert_eq!(status.references.bookings, ["123456"]);
}

#[test]
fn the_status_is_at_its_one_coded_loc_in_that_places_zone() {
    // DTM+334 10:20 at Landskrona, Sweden (LOC+Z01 SELAA): CEST, UTC+2.
    let interchange = read_fixture(ROAD);
    let status = only_status(&interchange);
    assert_eq!(status.location.locode.as_deref(), Some("SELAA"));
    let time = status.time.as_ref().expect("DTM+334");
    assert_eq!(time.local, local(2015, 8, 20, 10, 20, 0));
    assert_eq!(time.utc, Some(utc(2015, 8, 20, 8, 20, 0)));
}

#[test]
fn its_contrl_accepts_the_message() {
    let interchange = read_fixture(ROAD);
    let control = AckControl {
        interchange_control_number: 42,
        group_control_number: 7,
        at: local(2024, 1, 2, 3, 4, 0),
    };
    let ack = edifact_contrl(&interchange, &control).expect("an EDIFACT interchange");
    assert!(
        ack.contains("UCI+31+5790000110018:14+SEAFT.AFT006+7'"),
        "{ack}"
    );
    assert!(ack.contains("UCM+45689+IFTSTA:D:10B:UN+7'"), "{ack}");
}
