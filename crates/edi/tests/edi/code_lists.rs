//! Status codes keyed by sender, code list and code (SOURCES.md B.3): an IFTSTA STS code goes
//! through the X12 315 table only when it is an element-157 code — its C555 names agency
//! `22` as CargoSmart does (`STS+1+VD::22`), or names no list and is not digits only. A code of another named list (UN/
//! EDIFACT's, `ZZZ` mutually defined, a carrier's private list such as `HS`) is not read
//! through the 315 table because it spells a 315 code; it is the sender's table's, its
//! words', or drift. UN/EDIFACT's own list, UN/ECE Recommendation 24 (agency `6`, codes of
//! digits), has rows of its own, also read for an STS that names no list and sends a number
//! its sender's own table has no row for.

use tidemark_carriers::{DcsaCode, ModeOfTransport};
use tidemark_edi::{CodeList, CodeTable, Interchange, Reader};

use crate::{fixture, only_status, reader_with_senders_table};

const RAIL: &str = "iftsta_d00b_rail_departed.edi";
const SAMPLE_STS: &str = "STS+1+P::HS:Rail Departed from In-Transit Locat'";

/// The D.00B sample (sender `SENDER`) with `sts` in place of its STS, read by `reader`.
fn read_with(reader: &Reader, sts: &str) -> Interchange {
    let text = String::from_utf8(fixture(RAIL)).expect("ASCII");
    assert!(text.contains(SAMPLE_STS));
    reader
        .read(text.replace(SAMPLE_STS, sts).as_bytes())
        .expect("readable")
}

fn read(sts: &str) -> Interchange {
    read_with(&Reader::new(), sts)
}

#[test]
fn a_315_code_naming_no_list_goes_through_the_315_table() {
    let interchange = read("STS+1+VD'");
    let status = only_status(&interchange);
    let row = status.mapping.as_ref().expect("VD is a 315 code");
    assert_eq!(row.event, Some(DcsaCode::Depa));
    assert_eq!(row.mode, Some(ModeOfTransport::Vessel));
}

#[test]
fn a_315_code_under_agency_22_goes_through_the_315_table() {
    // CargoSmart's way (SOURCES.md B.3).
    let interchange = read("STS+1+AE::22'");
    let row = only_status(&interchange).mapping.as_ref().expect("AE");
    assert_eq!(row.event, Some(DcsaCode::Load));
}

#[test]
fn a_code_of_a_carriers_private_list_is_not_read_through_the_315_table() {
    // `VD` spells the 315 vessel departure, but list `HS` is the sender's own: without a table
    // for it or words, it is drift.
    let interchange = read("STS+1+VD::HS'");
    let status = only_status(&interchange);
    assert_eq!(status.code_agency.as_deref(), Some("HS"));
    assert!(status.is_drift(), "{:?}", status.mapping);
    assert_eq!(interchange.drift().count(), 1);
}

#[test]
fn a_code_of_the_un_list_is_not_read_through_the_315_table() {
    // Agency 6 (UN/ECE): UN/EDIFACT's own status list, whose codes are not element 157's.
    let interchange = read("STS+1+AE::6'");
    assert!(only_status(&interchange).is_drift());
}

#[test]
fn a_recommendation_24_code_under_agency_6_is_read_through_its_own_rows() {
    let interchange = read("STS+1+12::6'");
    let status = only_status(&interchange);
    let row = status.mapping.as_ref().expect("12: cleared by customs");
    assert_eq!(row.event, Some(DcsaCode::Cusr));
    let facts = status.terminal_facts().expect("a customs release");
    assert_eq!(facts.holds.len(), 1);
    assert_eq!(facts.holds[0].status, tidemark_edi::HoldStatus::Released);
}

#[test]
fn a_number_naming_no_list_is_recommendation_24_and_letters_stay_element_157() {
    let departed = read("STS+1+24'");
    let row = only_status(&departed)
        .mapping
        .clone()
        .expect("24: departure");
    assert_eq!(row.event, Some(DcsaCode::Depa));
    assert_eq!(row.list.as_deref(), Some("6"));
    let unloaded = read("STS+1+29'");
    assert_eq!(
        only_status(&unloaded)
            .mapping
            .as_ref()
            .and_then(|r| r.event),
        Some(DcsaCode::Disc)
    );
    // A number Recommendation 24 gives no row (31: en route) stays an unknown code.
    assert!(only_status(&read("STS+1+31'")).is_drift());
    // Under a carrier's own list a number is that list's, not Recommendation 24's.
    assert!(only_status(&read("STS+1+24::HS'")).is_drift());
    assert_eq!(
        CodeList::of_sts(None, None, "21"),
        CodeList::Unnamed { digits: true },
        "digits naming no list"
    );
    assert_eq!(
        CodeList::of_sts(None, None, "VD"),
        CodeList::Unnamed { digits: false }
    );
    assert_eq!(
        CodeList::of_sts(None, Some("6"), "21"),
        CodeList::Named("6")
    );
    assert_eq!(
        CodeList::of_sts(Some("24"), None, "21"),
        CodeList::Named("6")
    );
    assert_eq!(CodeList::of_sts(None, Some("22"), "1"), CodeList::X12);
    assert_eq!(
        CodeList::of_sts(None, Some("87"), "1"),
        CodeList::Named("87")
    );
}

#[test]
fn an_x12_numeric_status_code_is_never_read_as_recommendation_24() {
    // Element 157 has numbers too (`2` returned to the carrier's terminal); a 315's code is
    // element 157's whatever its shape.
    let text = String::from_utf8(crate::fixture("x12_4010_315_hamsud_discharged.edi"))
        .expect("ASCII")
        .replace("B4***UV*", "B4***1*");
    let interchange = tidemark_edi::read(text.as_bytes()).expect("readable");
    let status = interchange.statuses().next().expect("one status");
    assert_eq!(status.code, "1");
    assert!(status.is_drift());
}

#[test]
fn a_mutually_defined_code_is_not_read_through_the_315_table() {
    let interchange = read("STS+1+AV::ZZZ'");
    let status = only_status(&interchange);
    assert!(status.is_drift());
    assert!(
        status.terminal_facts().is_none(),
        "no availability from ZZZ AV"
    );
}

#[test]
fn a_list_named_only_by_its_identifier_is_a_named_list() {
    // C555 1131 without 3055.
    let interchange = read("STS+1+VD:CARRIERLIST'");
    let status = only_status(&interchange);
    assert_eq!(status.code_list.as_deref(), Some("CARRIERLIST"));
    assert!(status.is_drift());
}

#[test]
fn a_private_list_code_is_still_read_from_its_own_words() {
    let interchange = read("STS+1+VD::HS:Rail Departed from In-Transit Locat'");
    let row = only_status(&interchange)
        .mapping
        .as_ref()
        .expect("read from its words");
    assert!(row.source.starts_with("the sender's own words: "));
    assert_eq!(row.mode, Some(ModeOfTransport::Rail));
}

#[test]
fn a_senders_row_for_one_list_answers_only_for_that_list() {
    let reader = reader_with_senders_table(
        r#"
        [[code]]
        code = "VD"
        list = "ZZZ"
        meaning = "Vessel delay notice"
        event = "DEPA"
        classifier = "EST"
        source = "the sender's IFTSTA guide"
        "#,
    );
    let own = read_with(&reader, "STS+1+VD::ZZZ'");
    let row = only_status(&own)
        .mapping
        .as_ref()
        .expect("the sender's row");
    assert_eq!(row.source, "the sender's IFTSTA guide");
    let x12 = read_with(&reader, "STS+1+VD::22'");
    let row = only_status(&x12).mapping.as_ref().expect("the 315 row");
    assert_ne!(row.source, "the sender's IFTSTA guide");
    let other = read_with(&reader, "STS+1+VD::HS'");
    assert!(only_status(&other).is_drift(), "neither ZZZ nor 315");
}

#[test]
fn a_senders_row_naming_no_list_answers_for_all_its_lists() {
    let reader = reader_with_senders_table(
        r#"
        [[code]]
        code = "VD"
        meaning = "Rail departed"
        event = "DEPA"
        mode = "RAIL"
        source = "the sender's IFTSTA guide"
        "#,
    );
    for sts in ["STS+1+VD::HS'", "STS+1+VD'", "STS+1+VD::22'"] {
        let interchange = read_with(&reader, sts);
        let row = only_status(&interchange).mapping.as_ref().expect(sts);
        assert_eq!(row.source, "the sender's IFTSTA guide", "{sts}");
    }
}

#[test]
fn the_same_code_may_have_a_row_per_list_but_not_two_for_one() {
    let two_lists = r#"
        [[code]]
        code = "VD"
        list = "ZZZ"
        meaning = "a"
        event = "DEPA"
        source = "guide"
        [[code]]
        code = "VD"
        list = "HS"
        meaning = "b"
        event = "ARRI"
        source = "guide"
    "#;
    assert!(CodeTable::parse(two_lists).is_ok());
    let twice = two_lists.replace("\"HS\"", "\"ZZZ\"");
    assert!(CodeTable::parse(&twice).is_err());
}

#[test]
fn the_list_of_an_sts_is_its_agency_else_its_identifier() {
    assert_eq!(CodeList::of_edifact(None, None), CodeList::X12);
    assert_eq!(CodeList::of_edifact(None, Some("22")), CodeList::X12);
    assert_eq!(
        CodeList::of_edifact(Some("X"), Some("HS")),
        CodeList::Named("HS")
    );
    assert_eq!(CodeList::of_edifact(Some("X"), None), CodeList::Named("X"));
    assert_eq!(CodeList::of_edifact(Some(" "), Some("")), CodeList::X12);
}

#[test]
fn a_senders_row_for_list_22_answers_for_its_315_codes_only() {
    let reader = reader_with_senders_table(
        r#"
        [[code]]
        code = "ZX"
        list = "22"
        meaning = "Vessel departed (the sender's extra 315 code)"
        event = "DEPA"
        source = "the sender's IFTSTA guide"
        "#,
    );
    for sts in ["STS+1+ZX::22'", "STS+1+ZX'"] {
        let interchange = read_with(&reader, sts);
        assert!(!only_status(&interchange).is_drift(), "{sts}");
    }
    assert!(only_status(&read_with(&reader, "STS+1+ZX::HS'")).is_drift());
}

#[test]
fn loads_on_a_feeder_a_barge_or_a_truck_are_element_157_loads_with_their_mode() {
    for (code, mode) in [
        ("AP", ModeOfTransport::Vessel),
        ("AO", ModeOfTransport::Barge),
        ("AM", ModeOfTransport::Truck),
    ] {
        let text = String::from_utf8(crate::fixture("x12_4010_315_hamsud_discharged.edi"))
            .expect("ASCII")
            .replace("B4***UV*", &format!("B4***{code}*"));
        let interchange = tidemark_edi::read(text.as_bytes()).expect("readable");
        let status = interchange.statuses().next().expect("one status");
        assert!(!status.is_drift(), "{code}");
        let event = status.to_carrier_event().expect("a load");
        assert_eq!(event.dcsa_code, DcsaCode::Load, "{code}");
        assert_eq!(event.mode_of_transport(), Some(mode), "{code}");
    }
}

#[test]
fn a_322_departed_terminal_location_at_a_rail_ramp_is_an_out_gate_not_a_rail_departure() {
    // Hamburg Süd's 322 guide lists Q5 `P`, "Departed Terminal Location": the box left the
    // ramp's gate, as `OA` says, not on a train.
    let text = String::from_utf8(crate::fixture("x12_4010_322_hamsud_rail_arrival.edi"))
        .expect("ASCII")
        .replace("Q5*A*", "Q5*P*");
    let interchange = tidemark_edi::read(text.as_bytes()).expect("readable");
    let status = interchange.statuses().next().expect("one status");
    assert_eq!(status.code, "P");
    let row = status.mapping.as_ref().expect("P has a row");
    assert_eq!(row.event, Some(DcsaCode::Gtot));
    assert_eq!(row.mode, None, "the code says no mode of its own");
    let event = status.to_carrier_event().expect("an out-gate");
    assert_eq!(event.dcsa_code, DcsaCode::Gtot);
    // The same out-gate as `OA` at that ramp.
    let out_gate = tidemark_edi::read(text.replace("Q5*P*", "Q5*OA*").as_bytes())
        .expect("readable")
        .statuses()
        .next()
        .expect("one status")
        .to_carrier_event()
        .expect("an out-gate");
    assert_eq!(event.dcsa_code, out_gate.dcsa_code);
    assert_eq!(event.mode_of_transport(), out_gate.mode_of_transport());
}

#[test]
fn a_senders_element_157_row_for_a_number_comes_before_recommendation_24_for_an_sts_naming_no_list()
{
    // Element 157 has numbers too: this sender's `1` is the 315's "delivered short", not
    // Recommendation 24's "arrival completed".
    let reader = reader_with_senders_table(
        r#"
        [[code]]
        code = "1"
        list = "22"
        meaning = "Delivered short (the sender's element-157 code)"
        event = "DROP"
        source = "the sender's IFTSTA guide"
        "#,
    );
    let own = read_with(&reader, "STS+1+1'");
    let row = only_status(&own)
        .mapping
        .as_ref()
        .expect("the sender's row");
    assert_eq!(row.source, "the sender's IFTSTA guide");
    assert_eq!(row.event, Some(DcsaCode::Drop));
    // Named as Recommendation 24's, the number is that list's.
    let unece = read_with(&reader, "STS+1+1::6'");
    let row = only_status(&unece)
        .mapping
        .as_ref()
        .expect("the Rec 24 row");
    assert_eq!(row.event, Some(DcsaCode::Arri));
    // Another sender's number naming no list is still Recommendation 24's.
    let other = read("STS+1+1'");
    let row = only_status(&other)
        .mapping
        .as_ref()
        .expect("the Rec 24 row");
    assert_eq!(row.list.as_deref(), Some("6"));
}

#[test]
fn an_sts_naming_recommendation_24_by_its_list_identifier_is_read_through_its_rows() {
    // C555 1131 `24` without an agency: the list is named, not guessed from the code.
    let departed = read("STS+1+24:24'");
    let row = only_status(&departed)
        .mapping
        .as_ref()
        .expect("24: departure completed");
    assert_eq!(row.event, Some(DcsaCode::Depa));
    assert_eq!(row.list.as_deref(), Some("6"));
}
