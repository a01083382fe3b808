//! Public X12 315 samples from senders the first fixtures did not cover: a forwarding system's
//! two 315s under one control number, and a carrier's release with CR LF line ends and a `|`
//! component separator. Each expectation is what an EDI coordinator reads from the message.

use tidemark_carriers::{Classifier, DcsaCode, EmptyIndicator, ModeOfTransport, RouteHint};
use tidemark_edi::{HoldKind, HoldStatus, LocationRole};

use crate::{local, read_fixture, transaction, utc};

const GOFREIGHT: &str = "x12_4010_315_gofreight_two_sets_same_control.edi";
const WWSU: &str = "x12_4010_315_wwsu_carrier_release_crlf.edi";

#[test]
fn two_315s_sharing_a_control_number_are_both_read() {
    let interchange = read_fixture(GOFREIGHT);
    assert_eq!(interchange.envelope.sender_id, "GOFREIGHT");
    assert_eq!(interchange.envelope.separators.component, '^');
    assert_eq!(interchange.envelope.separators.repetition, None);
    assert_eq!(interchange.transactions.len(), 2);
    assert_eq!(transaction(&interchange, 0).control_number, "0001");
    assert_eq!(transaction(&interchange, 1).control_number, "0001");
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
    let codes: Vec<&str> = interchange.statuses().map(|s| s.code.as_str()).collect();
    assert_eq!(codes, ["VD", "AE"]);
}

#[test]
fn a_departure_whose_only_date_there_is_estimated_reads_as_estimated() {
    let interchange = read_fixture(GOFREIGHT);
    let departure = &transaction(&interchange, 0).statuses[0];
    assert_eq!(departure.location.locode.as_deref(), Some("VNHPH"));
    assert_eq!(departure.location.name.as_deref(), Some("HAIPHONG"));
    let time = departure.time.as_ref().expect("the B4 date");
    assert_eq!(time.local, local(2022, 12, 17, 0, 0, 0));
    assert!(time.has_time);
    // The tz database gives northern Viet Nam (Hanoi, Haiphong) Bangkok's zone: UTC+7.
    assert_eq!(time.zone.as_deref(), Some("Asia/Bangkok"));
    assert_eq!(time.utc, Some(utc(2022, 12, 16, 17, 0, 0)));
    // Haiphong's only date in the message, the same day and hour, is qualified 139.
    assert_eq!(departure.classifier, Classifier::Estimated);
    assert_eq!(departure.location_role, Some(LocationRole::Loading));
}

#[test]
fn a_forwarders_315_gives_container_vessel_and_references_as_sent() {
    let interchange = read_fixture(GOFREIGHT);
    let departure = &transaction(&interchange, 0).statuses[0];
    let references = &departure.references;
    assert_eq!(references.container.as_deref(), Some("HASU4316170"));
    assert!(departure.container_valid);
    assert_eq!(references.bills_of_lading, ["BL_NO"]);
    assert_eq!(references.bookings, ["BOOKING_NO"]);
    assert_eq!(departure.iso_size_type.as_deref(), Some("40HC"));
    assert_eq!(departure.empty_indicator, Some(EmptyIndicator::Laden));
    let transport = departure.transport.as_ref().expect("Q2");
    assert_eq!(transport.name.as_deref(), Some("CAP SAN MARCO"));
    assert_eq!(transport.voyage.as_deref(), Some("371S"));
    assert_eq!(transport.imo, None);
    assert_eq!(transport.code, None);
}

#[test]
fn an_n9_sca_that_is_no_scac_names_no_line() {
    let interchange = read_fixture(GOFREIGHT);
    let departure = &transaction(&interchange, 0).statuses[0];
    // `SCAC_CODE` is a placeholder, and the sender GOFREIGHT is no SCAC either.
    assert_eq!(departure.references.scac, None);
    assert!(
        departure
            .references
            .other
            .contains(&("SCA".to_owned(), "SCAC_CODE".to_owned()))
    );
}

#[test]
fn a_receipt_place_given_as_a_city_is_kept_as_a_city() {
    let interchange = read_fixture(GOFREIGHT);
    let departure = &transaction(&interchange, 0).statuses[0];
    let receipt = &departure.port_calls[0];
    assert_eq!(receipt.role, LocationRole::Receipt);
    assert_eq!(receipt.location.locode, None);
    assert_eq!(receipt.location.other_id.as_deref(), Some("HAIPHONG"));
    assert_eq!(receipt.location.other_qualifier.as_deref(), Some("CI"));
}

#[test]
fn a_load_where_the_place_is_receipt_and_loading_is_a_port_of_loading_event() {
    let interchange = read_fixture(GOFREIGHT);
    let load = &transaction(&interchange, 1).statuses[0];
    assert_eq!(load.code, "AE");
    assert_eq!(load.references.container.as_deref(), Some("TRHU6936090"));
    assert_eq!(load.references.bookings, Vec::<String>::new());
    assert_eq!(load.location.locode.as_deref(), Some("SGSIN"));
    assert_eq!(load.location_role, Some(LocationRole::Loading));
    assert_eq!(load.classifier, Classifier::Estimated);
    let event = load.to_carrier_event().expect("AE is a DCSA event");
    assert_eq!(event.dcsa_code, DcsaCode::Load);
    assert_eq!(event.route_hint, Some(RouteHint::PortOfLoading));
    // Midnight in Singapore (UTC+8).
    assert_eq!(event.event_datetime, utc(2022, 12, 25, 16, 0, 0));
}

#[test]
fn a_q2_that_names_no_vessel_gives_no_vessel() {
    let interchange = read_fixture(GOFREIGHT);
    let load = &transaction(&interchange, 1).statuses[0];
    let vessel = load.transport.as_ref();
    assert_eq!(vessel.and_then(|t| t.name.clone()), None);
    assert_eq!(vessel.and_then(|t| t.imo.clone()), None);
    assert_eq!(vessel.and_then(|t| t.voyage.clone()), None);
}

#[test]
fn crlf_line_ends_and_a_bar_component_separator_read_as_any_other() {
    let interchange = read_fixture(WWSU);
    let separators = &interchange.envelope.separators;
    assert_eq!(separators.component, '|');
    assert_eq!(separators.segment, '~');
    assert!(separators.line_breaks);
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
    let transaction = transaction(&interchange, 0);
    assert_eq!(transaction.control_number, "512584431");
    assert!(transaction.notes.is_empty(), "{:?}", transaction.notes);
    assert_eq!(transaction.segments.len(), 27);
}

#[test]
fn a_carrier_release_lifts_the_freight_hold_at_its_place() {
    let interchange = read_fixture(WWSU);
    let release = &transaction(&interchange, 0).statuses[0];
    assert_eq!(release.code, "CR");
    assert_eq!(release.location.locode.as_deref(), Some("USSEA"));
    assert_eq!(release.location.name.as_deref(), Some("SEATTLE, WA"));
    let time = release.time.as_ref().expect("the B4 date");
    assert_eq!(time.local, local(2023, 3, 4, 12, 42, 0));
    // Seattle in March before the clocks change: UTC-8.
    assert_eq!(time.utc, Some(utc(2023, 3, 4, 20, 42, 0)));
    assert_eq!(release.classifier, Classifier::Actual);
    assert!(
        release.to_carrier_event().is_err(),
        "a release is no DCSA event"
    );
    let facts = release.terminal_facts().expect("CR is a terminal fact");
    assert_eq!(facts.container.as_deref(), Some("CXRU1255022"));
    assert_eq!(facts.holds.len(), 1);
    assert_eq!(facts.holds[0].kind, HoldKind::Freight);
    assert_eq!(facts.holds[0].status, HoldStatus::Released);
}

#[test]
fn a_container_written_with_a_space_and_a_dash_is_one_number() {
    let interchange = read_fixture(WWSU);
    let release = &transaction(&interchange, 0).statuses[0];
    assert_eq!(release.references.container.as_deref(), Some("CXRU1255022"));
    assert!(release.container_valid);
    assert_eq!(release.iso_size_type.as_deref(), Some("45R1"));
    assert_eq!(release.empty_indicator, Some(EmptyIndicator::Laden));
}

#[test]
fn sixteen_n9s_give_bill_booking_line_seal_and_the_rest_as_sent() {
    let interchange = read_fixture(WWSU);
    let references = &transaction(&interchange, 0).statuses[0].references;
    assert_eq!(references.bills_of_lading, ["ET027SWSZ003"]);
    assert_eq!(references.bookings, ["H22CAB01901"]);
    assert_eq!(references.scac.as_deref(), Some("WWSU"));
    assert_eq!(references.seals, ["TCF132786"]);
    let qualifiers: Vec<&str> = references.other.iter().map(|(q, _)| q.as_str()).collect();
    assert_eq!(
        qualifiers,
        ["CT", "ZZ", "4F", "4F", "4F", "4F", "SI", "HB", "SE", "82"]
    );
}

#[test]
fn a_q2_gives_imo_voyage_and_name_around_its_other_elements() {
    let interchange = read_fixture(WWSU);
    let transport = transaction(&interchange, 0).statuses[0]
        .transport
        .clone()
        .expect("Q2");
    assert_eq!(transport.mode, Some(ModeOfTransport::Vessel));
    assert_eq!(transport.imo.as_deref(), Some("9301469"));
    assert_eq!(transport.voyage.as_deref(), Some("027W"));
    assert_eq!(transport.name.as_deref(), Some("ETOILE"));
    assert_eq!(transport.code, None);
}

#[test]
fn a_release_at_the_place_of_receipt_and_loading_is_at_the_port_of_loading() {
    let interchange = read_fixture(WWSU);
    let release = &transaction(&interchange, 0).statuses[0];
    assert_eq!(release.location_role, Some(LocationRole::Loading));
}

#[test]
fn pacific_time_codes_hold_even_for_a_port_in_japan() {
    let interchange = read_fixture(WWSU);
    let release = &transaction(&interchange, 0).statuses[0];
    let calls: Vec<(LocationRole, Option<&str>)> = release
        .port_calls
        .iter()
        .map(|call| (call.role.clone(), call.location.locode.as_deref()))
        .collect();
    assert_eq!(
        calls,
        [
            (LocationRole::Receipt, Some("USSEA")),
            (LocationRole::Loading, Some("USSEA")),
            (LocationRole::Discharge, Some("JPSMZ")),
            (LocationRole::FinalDelivery, Some("JPSMZ")),
        ]
    );
    let loading = &release.port_calls[1].times[0];
    assert_eq!(loading.classifier, Some(Classifier::Actual));
    assert_eq!(loading.time_code.as_deref(), Some("PT"));
    assert_eq!(loading.time.utc, Some(utc(2023, 2, 6, 2, 42, 0)));
    let discharge = &release.port_calls[2].times[0];
    // 19:42 Pacific standard time, as the sender coded it.
    assert_eq!(discharge.time.utc, Some(utc(2023, 3, 4, 3, 42, 0)));
    let delivery = &release.port_calls[3].times[0];
    assert_eq!(delivery.classifier, Some(Classifier::Estimated));
}

const OUTGATE: &str = "x12_4010_322_hamsud_outgate.edi";
const RAIL_LOADED: &str = "x12_4010_322_hamsud_rail_loaded.edi";
const INGATE_SPLC: &str = "x12_4010_322_1edisource_ingate_splc.edi";

#[test]
fn a_ramps_out_gate_is_a_laden_gate_out_at_the_ramp() {
    let interchange = read_fixture(OUTGATE);
    let transaction = transaction(&interchange, 0);
    assert!(transaction.notes.is_empty(), "{:?}", transaction.notes);
    let status = &transaction.statuses[0];
    assert_eq!(status.code, "OA");
    assert_eq!(status.location.locode.as_deref(), Some("USCHI"));
    assert_eq!(
        status.location.name.as_deref(),
        Some("BNSF CHICAGO (LOGISTICS PARK)")
    );
    let time = status.time.as_ref().expect("the Q5 date");
    assert_eq!(time.local, local(2016, 6, 10, 10, 45, 20));
    // Chicago in June: UTC-5.
    assert_eq!(time.utc, Some(utc(2016, 6, 10, 15, 45, 20)));
    assert_eq!(status.references.container.as_deref(), Some("HASU4316170"));
    assert_eq!(status.references.bills_of_lading, ["A5GEMEN1976X"]);
    assert_eq!(status.references.bookings, ["6PHLSA1234"]);
    assert_eq!(status.empty_indicator, Some(EmptyIndicator::Laden));
    assert_eq!(status.rail_carrier_scac.as_deref(), Some("BNSF"));
    let event = status.to_carrier_event().expect("OA is a gate out");
    assert_eq!(event.dcsa_code, DcsaCode::Gtot);
    assert_eq!(event.empty_indicator, Some(EmptyIndicator::Laden));
    assert_eq!(event.mode_of_transport(), Some(ModeOfTransport::Rail));
}

#[test]
fn the_seal_numbers_of_an_m7_are_the_containers_seals() {
    let interchange = read_fixture(OUTGATE);
    let status = &transaction(&interchange, 0).statuses[0];
    assert_eq!(status.references.seals, ["SN1234567", "SN1234568"]);
}

#[test]
fn a_rail_load_at_the_port_is_a_rail_load_event_there() {
    let interchange = read_fixture(RAIL_LOADED);
    let transaction = transaction(&interchange, 0);
    // As published, SE01 counts 12 of the set's 14 segments.
    assert_eq!(
        transaction.notes,
        [tidemark_edi::Note::SegmentCount {
            declared: "12".to_owned(),
            counted: 14
        }]
    );
    let status = &transaction.statuses[0];
    assert_eq!(status.code, "AL");
    assert_eq!(status.location.locode.as_deref(), Some("USLGB"));
    let time = status.time.as_ref().expect("the Q5 date");
    assert_eq!(time.local, local(2016, 5, 24, 7, 30, 0));
    assert_eq!(time.utc, Some(utc(2016, 5, 24, 14, 30, 0)));
    assert_eq!(status.references.seals, ["SN1234567", "SN1234568"]);
    let event = status.to_carrier_event().expect("AL is a load");
    assert_eq!(event.dcsa_code, DcsaCode::Load);
    assert_eq!(event.mode_of_transport(), Some(ModeOfTransport::Rail));
    let estimates: Vec<(&str, Option<Classifier>, chrono::NaiveDateTime)> = status
        .other_times
        .iter()
        .map(|dated| (dated.qualifier.as_str(), dated.classifier, dated.time.local))
        .collect();
    assert_eq!(
        estimates,
        [
            (
                "371",
                Some(Classifier::Estimated),
                local(2016, 5, 28, 16, 0, 0)
            ),
            ("830", None, local(2016, 5, 28, 16, 0, 0)),
        ]
    );
}

#[test]
fn a_generic_322_with_its_envelope_faults_is_still_read() {
    let interchange = read_fixture(INGATE_SPLC);
    assert_eq!(interchange.envelope.version, "00400");
    assert_eq!(interchange.groups[0].functional_id, "NL");
    assert_eq!(
        interchange.notes,
        [tidemark_edi::Note::EnvelopeControlNumber {
            trailer: "IEA",
            header_value: "000003438".to_owned(),
            trailer_value: "0000000012".to_owned(),
        }]
    );
    let transaction = transaction(&interchange, 0);
    assert_eq!(
        transaction.notes,
        [tidemark_edi::Note::SegmentCount {
            declared: "10".to_owned(),
            counted: 11
        }]
    );
}

#[test]
fn an_in_gate_coded_gi_is_kept_raw_as_drift() {
    let interchange = read_fixture(INGATE_SPLC);
    let status = &transaction(&interchange, 0).statuses[0];
    assert_eq!(status.code, "GI");
    // `GI` is 1 EDI Source's example code; it was not found in the element-157 lists searched
    // (Stedi's X12 002040 and 003010 pages, a public terminal-315 parser's full table), where
    // the in-gate is `I`. Kept raw.
    assert!(status.is_drift());
    assert_eq!(interchange.drift().count(), 1);
    let time = status.time.as_ref().expect("the Q5 date");
    assert_eq!(time.local, local(2009, 9, 25, 1, 12, 0));
    // ET in September: UTC-4.
    assert_eq!(time.utc, Some(utc(2009, 9, 25, 5, 12, 0)));
}

#[test]
fn a_place_given_as_a_splc_is_kept_with_its_qualifier_and_name() {
    let interchange = read_fixture(INGATE_SPLC);
    let status = &transaction(&interchange, 0).statuses[0];
    assert_eq!(status.location.locode, None);
    assert_eq!(status.location.other_id.as_deref(), Some("218317"));
    assert_eq!(status.location.other_qualifier.as_deref(), Some("SL"));
    assert_eq!(status.location.name.as_deref(), Some("PITCAIRN"));
}

#[test]
fn a_chassis_number_without_a_check_digit_gets_none_invented() {
    let interchange = read_fixture(INGATE_SPLC);
    let status = &transaction(&interchange, 0).statuses[0];
    // `Z` is ISO 6346's category for chassis and trailers: the number stays as sent.
    assert_eq!(status.references.container.as_deref(), Some("ABCZ544037"));
    assert!(!status.container_valid);
    assert_eq!(status.rail_carrier_scac, None);
}

#[test]
fn a_typographic_apostrophe_in_utf8_stays_text() {
    let interchange = read_fixture(INGATE_SPLC);
    let transaction = transaction(&interchange, 0);
    assert!(
        transaction
            .segments
            .iter()
            .any(|segment| segment == "N1*MC*JOE\u{2019}S TRUCKING COMPANY*2*JTCI")
    );
}
