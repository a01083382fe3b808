//! A private code's own words: an IFTSTA status whose code is in no table is read from the
//! description the sender gave it (STS C555 4404) through the reviewed phrases, says so, and
//! is never read when its words negate, plan or announce, or read two ways.

use tidemark_carriers::{DcsaCode, EmptyIndicator, ModeOfTransport};
use tidemark_edi::ack::{AckControl, edifact_contrl};
use tidemark_edi::{HoldKind, HoldStatus, Interchange, Note, StatusReport, TerminalEffect};

use crate::{
    fixture, local, only_status, read_fixture, reader_with_senders_table, transaction, utc,
};

const RAIL: &str = "iftsta_d00b_rail_departed.edi";
const SAMPLE_STS: &str = "STS+1+P::HS:Rail Departed from In-Transit Locat'";

/// The D.00B sample with another STS segment in place of its own.
fn with_sts(sts: &str) -> Vec<u8> {
    let text = String::from_utf8(fixture(RAIL)).expect("ASCII");
    assert!(text.contains(SAMPLE_STS));
    text.replace(SAMPLE_STS, sts).into_bytes()
}

/// The D.00B sample whose private code `P` comes with `words`, read by the default reader.
fn read_words(words: &str) -> Interchange {
    tidemark_edi::read(&with_sts(&format!("STS+1+P::HS:{words}'"))).expect("readable")
}

fn status_of(words: &str) -> StatusReport {
    only_status(&read_words(words)).clone()
}

/// What the words were read as: the event, its mode and its empty indicator.
fn reading(words: &str) -> Option<(DcsaCode, Option<ModeOfTransport>, Option<EmptyIndicator>)> {
    status_of(words).mapping.map(|row| {
        (
            row.event.expect("a reading is an event"),
            row.mode,
            row.empty,
        )
    })
}

fn assert_read(
    words: &[&str],
    expected: (DcsaCode, Option<ModeOfTransport>, Option<EmptyIndicator>),
) {
    for words in words {
        assert_eq!(reading(words), Some(expected), "{words:?}");
    }
}

fn assert_not_read(words: &[&str]) {
    for words in words {
        let status = status_of(words);
        assert!(
            status.is_drift(),
            "{words:?} was read as {:?}",
            status.mapping
        );
    }
}

use DcsaCode::*;
use EmptyIndicator::{Empty, Laden};
use ModeOfTransport::{Rail, Vessel};

#[test]
fn the_samples_private_code_is_read_from_its_own_words_and_says_so() {
    let interchange = read_fixture(RAIL);
    let status = only_status(&interchange);
    assert_eq!(status.code, "P");
    assert!(!status.is_drift());
    assert_eq!(interchange.drift().count(), 0);
    let row = status.mapping.as_ref().expect("read from the words");
    assert_eq!(row.code, "P");
    assert_eq!(row.event, Some(Depa));
    assert_eq!(row.mode, Some(Rail));
    assert_eq!(
        row.source,
        "the sender's own words: Rail Departed from In-Transit Locat"
    );
    assert!(row.meaning.contains("read from the sender's own words"));
    let notes = &transaction(&interchange, 0).notes;
    assert!(
        notes.iter().any(|note| matches!(
            note,
            Note::ReadFromWords { code, words, phrase, .. }
                if code == "P"
                    && words == "Rail Departed from In-Transit Locat"
                    && phrase == "rail departed"
        )),
        "{notes:?}"
    );
}

#[test]
fn a_private_code_without_words_stays_drift() {
    let interchange = tidemark_edi::read(&with_sts("STS+1+P::HS'")).expect("readable");
    assert!(only_status(&interchange).is_drift());
    assert_eq!(interchange.drift().count(), 1);
    assert!(
        !transaction(&interchange, 0)
            .notes
            .iter()
            .any(|note| matches!(note, Note::ReadFromWords { .. }))
    );
}

#[test]
fn words_nothing_in_the_phrases_reads_stay_drift() {
    assert_not_read(&[
        "Container weighed",
        "Departed",
        "Arrived",
        "Released",
        "XYZ",
    ]);
}

#[test]
fn a_status_read_from_its_words_becomes_a_rail_departure_event() {
    // Syracuse is not in the reference data; the test gives the status a zone.
    let text = String::from_utf8(fixture(RAIL)).expect("ASCII");
    let with_zone = text.replace("DTM+334:202211190710:203", "DTM+334:202211190710-0500:303");
    let interchange = tidemark_edi::read(with_zone.as_bytes()).expect("readable");
    let status = only_status(&interchange);
    assert_eq!(
        status.time.as_ref().map(|time| time.local),
        Some(local(2022, 11, 19, 7, 10, 0))
    );
    let event = status.to_carrier_event().expect("read as an event");
    assert_eq!(event.dcsa_code, Depa);
    assert_eq!(event.mode_of_transport(), Some(Rail));
    assert_eq!(event.event_datetime, utc(2022, 11, 19, 12, 10, 0));
    assert!(
        event
            .event_id
            .as_deref()
            .is_some_and(|id| id.starts_with("edi:SENDER:P:TRHU4561222:USSYR:")),
        "{:?}",
        event.event_id
    );
}

#[test]
fn rail_departed_and_rail_departure_read_as_a_rail_departure() {
    assert_read(
        &[
            "Rail departed",
            "RAIL DEPARTURE",
            "Departed by rail from ramp",
            "Train departed",
        ],
        (Depa, Some(Rail), None),
    );
}

#[test]
fn rail_arrived_and_rail_arrival_read_as_a_rail_arrival() {
    assert_read(
        &[
            "Rail arrived at destination",
            "Rail Arrival",
            "Arrived by rail",
        ],
        (Arri, Some(Rail), None),
    );
}

#[test]
fn loaded_on_rail_reads_as_a_rail_load() {
    assert_read(
        &[
            "Loaded on rail",
            "Container loaded on train",
            "Loaded onto rail",
        ],
        (Load, Some(Rail), None),
    );
}

#[test]
fn unloaded_from_rail_and_off_rail_read_as_a_rail_discharge() {
    assert_read(
        &[
            "Unloaded from rail",
            "Container off rail",
            "Off-Rail",
            "Discharged from rail",
        ],
        (Disc, Some(Rail), None),
    );
}

#[test]
fn loaded_on_vessel_and_loaded_onboard_read_as_a_vessel_load() {
    assert_read(
        &[
            "Loaded on vessel",
            "Loaded onboard",
            "Loaded on board",
            "Shipped on board",
        ],
        (Load, Some(Vessel), None),
    );
}

#[test]
fn vessel_departed_and_vessel_departure_read_as_a_vessel_departure() {
    assert_read(
        &[
            "Vessel departed",
            "Vessel Departure from POL",
            "vessel-departure",
        ],
        (Depa, Some(Vessel), None),
    );
}

#[test]
fn vessel_arrived_and_vessel_arrival_read_as_a_vessel_arrival() {
    assert_read(
        &["Vessel arrived", "Vessel arrival at port of discharge"],
        (Arri, Some(Vessel), None),
    );
}

#[test]
fn discharged_and_unloaded_from_vessel_read_as_a_vessel_discharge() {
    assert_read(
        &[
            "Discharged",
            "Container discharged at POD",
            "Unloaded from vessel",
        ],
        (Disc, Some(Vessel), None),
    );
}

#[test]
fn gate_out_and_out_gate_read_as_a_gate_out_full_when_the_words_say_so() {
    assert_read(&["Gate out", "Out-gate", "Outgate"], (Gtot, None, None));
    assert_read(
        &["Full out-gate", "Gate out (laden)"],
        (Gtot, None, Some(Laden)),
    );
}

#[test]
fn gate_in_and_in_gate_read_as_a_gate_in() {
    assert_read(
        &["Gate in", "In-gate", "Ingate at terminal"],
        (Gtin, None, None),
    );
}

#[test]
fn empty_returned_and_empty_in_read_as_an_empty_gate_in() {
    assert_read(
        &[
            "Empty returned",
            "Empty container returned to depot",
            "Empty in",
            "Empty in-gate",
            "Gate in empty",
        ],
        (Gtin, None, Some(Empty)),
    );
}

#[test]
fn empty_released_dispatched_and_out_read_as_an_empty_gate_out() {
    assert_read(
        &[
            "Empty released",
            "Empty equipment dispatched",
            "Empty out",
            "Empty gate out",
        ],
        (Gtot, None, Some(Empty)),
    );
}

#[test]
fn available_for_pick_up_or_delivery_reads_as_available() {
    assert_read(
        &[
            "Available for pick-up",
            "Available for pickup",
            "Available for delivery",
        ],
        (Avpu, None, None),
    );
    let facts = status_of("Available for Pick-Up").terminal_facts();
    assert_eq!(facts.and_then(|facts| facts.available), Some(true));
}

#[test]
fn customs_released_reads_as_a_customs_release() {
    assert_read(
        &["Customs released", "Released by customs"],
        (Cusr, None, None),
    );
    let status = status_of("Customs released");
    assert_eq!(
        status.mapping.as_ref().and_then(|row| row.terminal),
        Some(TerminalEffect::Release)
    );
    let facts = status.terminal_facts().expect("a release");
    assert_eq!(facts.holds[0].kind, HoldKind::Customs);
    assert_eq!(facts.holds[0].status, HoldStatus::Released);
}

#[test]
fn not_available_is_never_read_as_available() {
    assert_not_read(&[
        "Not available for pick-up",
        "NOT AVAILABLE FOR DELIVERY",
        "Unavailable for pickup",
        "Un-available for pick up",
        "Container isn?'t available for pickup",
        "No longer available for pickup",
    ]);
}

#[test]
fn not_released_is_never_read_as_a_customs_release() {
    assert_not_read(&[
        "Customs not released",
        "Not released by customs",
        "Customs release pending",
        "Customs hold",
        "Awaiting customs release",
        "Customs release requested",
    ]);
}

#[test]
fn estimates_plans_and_notices_are_never_read_as_what_they_announce() {
    assert_not_read(&[
        "Estimated vessel arrival",
        "Vessel arrival notice",
        "ETA vessel arrival",
        "Planned rail departure",
        "Vessel departure delayed",
        "Container to be loaded on vessel",
        "Rail departure cancelled",
    ]);
}

#[test]
fn words_that_read_as_two_different_events_are_not_read() {
    assert_not_read(&[
        "Discharged from vessel and loaded on rail",
        "Gate in / gate out",
        "Empty returned full",
    ]);
}

#[test]
fn in_transit_is_no_gate_in_and_empty_in_transit_no_empty_return() {
    assert_not_read(&["Empty in transit", "In-transit"]);
    assert_eq!(
        reading("Rail departed from in-transit location"),
        Some((Depa, Some(Rail), None))
    );
}

#[test]
fn a_word_cut_at_the_length_limit_is_read_only_as_a_phrase_it_begins() {
    // 35 characters, the limit of C555 4404, as the sample is.
    let cut = "Container at the pier Loaded on Ves";
    assert_eq!(cut.chars().count(), 35);
    assert_eq!(reading(cut), Some((Load, Some(Vessel), None)));
    assert_eq!(reading("Loaded on Ves"), None);
}

#[test]
fn a_senders_configured_table_wins_over_the_words() {
    let reader = reader_with_senders_table(
        r#"
        [[code]]
        code = "P"
        meaning = "Rail arrival at in-transit location (the sender's guide)"
        event = "ARRI"
        mode = "RAIL"
        source = "the sender's IFTSTA guide"
        "#,
    );
    let interchange = reader.read(&fixture(RAIL)).expect("readable");
    let row = only_status(&interchange).mapping.clone().expect("mapped");
    assert_eq!(row.event, Some(Arri));
    assert_eq!(row.source, "the sender's IFTSTA guide");
    assert!(
        !transaction(&interchange, 0)
            .notes
            .iter()
            .any(|note| matches!(note, Note::ReadFromWords { .. }))
    );
}

#[test]
fn a_code_of_the_shared_table_wins_over_the_words() {
    let interchange =
        tidemark_edi::read(&with_sts("STS+1+VD::22:Vessel arrived'")).expect("readable");
    let row = only_status(&interchange).mapping.clone().expect("mapped");
    assert_eq!(row.event, Some(Depa));
    assert_eq!(
        row.source,
        "https://www.stedi.com/edi/x12-003050/element/157"
    );
}

#[test]
fn a_status_with_words_and_no_code_is_read_and_its_missing_code_noted() {
    let interchange = tidemark_edi::read(&with_sts("STS+1+:::Vessel departed'")).expect("readable");
    let status = only_status(&interchange);
    assert_eq!(status.code, "");
    assert_eq!(
        status.mapping.as_ref().and_then(|row| row.event),
        Some(Depa)
    );
    let notes = &transaction(&interchange, 0).notes;
    assert!(notes.contains(&Note::EmptyStatusCode), "{notes:?}");
    assert!(
        notes
            .iter()
            .any(|note| matches!(note, Note::ReadFromWords { .. })),
        "{notes:?}"
    );
}

#[test]
fn an_x12_reason_code_is_never_read_as_words() {
    let text = String::from_utf8(fixture("x12_4010_322_hamsud_last_free_day.edi")).expect("ASCII");
    // Q5-05 is a reason code (element 1650); words there are not the code's description.
    let changed = text.replace(
        "Q5*NF*20160625*120000*LT**",
        "Q5*ZZ*20160625*120000*LT*VESSEL DEPARTED*",
    );
    assert_ne!(changed, text);
    let interchange = tidemark_edi::read(changed.as_bytes()).expect("readable");
    assert!(only_status(&interchange).is_drift());
}

#[test]
fn reading_words_leaves_the_contrl_acknowledgement_unchanged() {
    let control = AckControl {
        interchange_control_number: 7,
        group_control_number: 7,
        at: local(2026, 3, 1, 12, 0, 0),
    };
    let read = read_fixture(RAIL);
    let drift = tidemark_edi::read(&with_sts("STS+1+P::HS'")).expect("readable");
    let with_words = edifact_contrl(&read, &control).expect("a CONTRL");
    let without = edifact_contrl(&drift, &control).expect("a CONTRL");
    assert_eq!(with_words, without);
}
