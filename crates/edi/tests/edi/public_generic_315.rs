//! A generated 315 example as an EDI services page prints it: its ISA lost ISA16 (the
//! sub-element separator) and its blanks, every element holds a placeholder, the last segment
//! has no terminator. It is read with what it says; nothing in it is fatal.

use tidemark_edi::{LocationRole, Note};

use crate::{local, read_fixture, transaction, utc};

const GEDIMS: &str = "x12_4010_315_gedims_generic_no_isa16.edi";

#[test]
fn an_isa_without_isa16_is_read_with_its_terminator_and_the_loss_noted() {
    let interchange = read_fixture(GEDIMS);
    assert_eq!(interchange.notes, [Note::MissingSubElementSeparator('>')]);
    let envelope = &interchange.envelope;
    assert_eq!(envelope.sender_id, "1234567890");
    assert_eq!(envelope.receiver_id, "999999999");
    assert_eq!(envelope.control_number, "000000014");
    assert_eq!(envelope.separators.element, '*');
    assert_eq!(envelope.separators.segment, '~');
    assert!(envelope.separators.line_breaks);
    assert_eq!(interchange.groups.len(), 1);
    assert_eq!(interchange.groups[0].functional_id, "NL");
    let set = transaction(&interchange, 0);
    assert_eq!(set.control_number, "0001");
    assert_eq!(set.segments.len(), 18);
}

#[test]
fn an_element_157_code_tidemark_does_not_map_stays_raw_as_drift() {
    let interchange = read_fixture(GEDIMS);
    let status = &transaction(&interchange, 0).statuses[0];
    // `2`: "Returned to Carrier's Terminal" in element 157; no ocean milestone.
    assert_eq!(status.code, "2");
    assert!(status.is_drift());
    assert!(status.to_carrier_event().is_err());
    let time = status.time.as_ref().expect("B4-04/05");
    assert_eq!(time.local, local(2012, 1, 27, 15, 5, 0));
    assert_eq!(time.utc, None, "no time code, no UN/LOCODE: kept local");
}

#[test]
fn placeholders_stay_text_and_name_no_valid_container() {
    let interchange = read_fixture(GEDIMS);
    let status = &transaction(&interchange, 0).statuses[0];
    assert!(!status.container_valid);
    assert_eq!(status.location.locode, None);
    assert_eq!(
        status.location.other_id.as_deref(),
        Some("Location Identifier")
    );
    assert_eq!(status.location.other_qualifier.as_deref(), Some("A"));
    assert!(
        status
            .references
            .other
            .contains(&("01".to_owned(), "Reference Identification".to_owned()))
    );
    let vessel = status.transport.as_ref().expect("Q2");
    assert_eq!(vessel.code.as_deref(), Some("VESSEL C"));
    assert_eq!(vessel.imo, None);
}

#[test]
fn a_final_port_of_discharge_keeps_its_dates_in_the_iso_offset_of_time_code_01() {
    let interchange = read_fixture(GEDIMS);
    let status = &transaction(&interchange, 0).statuses[0];
    assert_eq!(status.port_calls.len(), 1);
    let port = &status.port_calls[0];
    assert_eq!(port.role, LocationRole::FinalPortOfDischarge);
    assert_eq!(port.location.name.as_deref(), Some("Port Name"));
    assert_eq!(port.times.len(), 10);
    let first = &port.times[0].time;
    assert_eq!(first.local, local(2012, 1, 27, 15, 5, 16));
    // Time code 01: ISO P01, UTC+1.
    assert_eq!(first.utc, Some(utc(2012, 1, 27, 14, 5, 16)));
    // HHMMSSD (`1505160`, tenths of a second) is read to the second.
    let tenths = &port.times[6].time;
    assert_eq!(tenths.local, local(2012, 1, 27, 15, 5, 16));
}
