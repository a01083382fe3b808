//! No input makes the reader panic: every prefix of every fixture, bytes flipped in them,
//! and arbitrary bytes behind a valid header.

use proptest::prelude::*;
use tidemark_edi::ack::{AckControl, AckError, edifact_contrl, x12_997};
use tidemark_edi::{Interchange, Syntax};

use crate::{fixture, local};

const FIXTURES: &[&str] = &[
    "x12_4010_315_hamsud_discharged.edi",
    "x12_4010_315_cmacgm_departed_loaded.edi",
    "x12_4010_315_two_groups_one_broken.edi",
    "x12_4010_322_hamsud_last_free_day.edi",
    "x12_4010_322_hamsud_rail_arrival.edi",
    "x12_5010_315_transshipment_arrival.edi",
    "x12_7010_315_empty_arrival_crlf.edi",
    "iftsta_d99b_cargosmart_departed.edi",
    "iftsta_d99b_cargosmart_departed_una.edi",
    "iftsta_d00b_rail_departed.edi",
];

/// Everything a caller may do with a result, so that a panic anywhere would show.
fn exercise(interchange: &Interchange) {
    for status in interchange.statuses() {
        let _ = status.to_carrier_event();
        let _ = status.terminal_facts();
    }
    for error in interchange.errors() {
        let _ = error.to_string();
    }
    for note in &interchange.notes {
        let _ = note.to_string();
    }
    let control = AckControl {
        interchange_control_number: 1,
        group_control_number: 1,
        at: local(2024, 1, 1, 0, 0, 0),
    };
    let ack = match interchange.syntax {
        Syntax::X12 => x12_997(interchange, &control),
        Syntax::Edifact => edifact_contrl(interchange, &control),
    };
    // Input read without its interchange header has no envelope to answer; anything else
    // is acknowledged.
    let bare = interchange
        .notes
        .iter()
        .any(|note| matches!(note, tidemark_edi::Note::MissingEnvelopeHeader(_)));
    match ack {
        Err(AckError::NoEnvelope(_)) => assert!(bare),
        other => assert!(other.is_ok() && !bare, "{other:?}"),
    }
}

fn read_and_exercise(bytes: &[u8]) {
    if let Ok(interchange) = tidemark_edi::read(bytes) {
        exercise(&interchange);
    }
}

#[test]
fn every_prefix_of_every_fixture_reads_or_fails_without_panic() {
    for name in FIXTURES {
        let bytes = fixture(name);
        for end in 0..=bytes.len() {
            read_and_exercise(bytes.get(..end).unwrap_or_default());
        }
    }
}

#[test]
fn every_suffix_of_every_fixture_reads_or_fails_without_panic() {
    for name in FIXTURES {
        let bytes = fixture(name);
        for start in 0..=bytes.len() {
            read_and_exercise(bytes.get(start..).unwrap_or_default());
        }
    }
}

#[test]
fn a_truncated_interchange_keeps_what_came_before_the_cut() {
    let bytes = fixture("x12_4010_315_two_groups_one_broken.edi");
    let text = String::from_utf8(bytes).expect("ASCII");
    let cut = text.find("GS*QO*HAMSUD").expect("the second group");
    let interchange = tidemark_edi::read(text.get(..cut).unwrap_or_default().as_bytes())
        .expect("the header is whole");
    assert_eq!(interchange.statuses().count(), 1);
    assert_eq!(interchange.errors().count(), 1);
    assert!(!interchange.notes.is_empty(), "the missing IEA is noted");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn flipped_bytes_never_panic(
        which in 0..FIXTURES.len(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let mut bytes = fixture(FIXTURES[which]);
        for (index, value) in flips {
            let at = index.index(bytes.len());
            if let Some(byte) = bytes.get_mut(at) {
                *byte = value;
            }
        }
        read_and_exercise(&bytes);
    }

    #[test]
    fn arbitrary_bytes_after_a_valid_header_never_panic(
        which in 0..FIXTURES.len(),
        tail in proptest::collection::vec(any::<u8>(), 0..400),
    ) {
        let bytes = fixture(FIXTURES[which]);
        let mut input = bytes.get(..bytes.len().min(120)).unwrap_or_default().to_vec();
        input.extend(tail);
        read_and_exercise(&input);
    }

    #[test]
    fn arbitrary_segments_of_separators_never_panic(
        text in "(ISA|UNA|UNB|ST|SE|GS|GE|B4|Q5|N7|R4|DTM|STS|LOC|EQD|TDT|UNH|UNT|[*~:+'?>\\r\\n0-9A-Z]){0,200}",
    ) {
        read_and_exercise(text.as_bytes());
        read_and_exercise(format!("UNB+UNOC:3+A+B+1+1'{text}").as_bytes());
        read_and_exercise(
            format!("ISA*00*          *00*          *ZZ*A              *ZZ*B              *240101*0000*U*00401*000000001*0*P*>~{text}")
                .as_bytes(),
        );
    }
}
