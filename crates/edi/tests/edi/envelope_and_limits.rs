//! Interchanges with many groups and transactions, broken transactions, and the limits.

use tidemark_edi::{Fault, Limits, Note, ReadError, Reader, SegmentRef};

use crate::{fixture, read_fixture};

const BROKEN: &str = "x12_4010_315_two_groups_one_broken.edi";

#[test]
fn every_group_is_listed_with_its_control_number() {
    let interchange = read_fixture(BROKEN);
    let groups: Vec<(&str, &str, &str)> = interchange
        .groups
        .iter()
        .map(|group| {
            (
                group.functional_id.as_str(),
                group.sender.as_str(),
                group.control_number.as_str(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [("QO", "CMACGM", "81466"), ("QO", "HAMSUD", "720857")]
    );
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
}

#[test]
fn a_broken_transaction_fails_alone_and_the_others_are_read() {
    let interchange = read_fixture(BROKEN);
    assert_eq!(interchange.transactions.len(), 3);
    let codes: Vec<&str> = interchange.statuses().map(|s| s.code.as_str()).collect();
    assert_eq!(codes, ["VD", "UV"]);
    let errors: Vec<_> = interchange.errors().collect();
    assert_eq!(errors.len(), 1);
    let error = errors[0];
    assert_eq!(error.index, 1);
    assert_eq!(error.group, Some(0));
    assert_eq!(error.set_id.as_deref(), Some("315"));
    assert_eq!(error.control_number.as_deref(), Some("0002"));
    assert_eq!(error.fault, Fault::MissingSegment("B4"));
    assert_eq!(
        error.segments.first().map(String::as_str),
        Some("ST*315*0002")
    );
    assert_eq!(
        error.to_string(),
        "transaction #2 (315 control number 0002): required segment B4 is missing"
    );
    let third = interchange.transactions[2].as_ref().expect("read");
    assert_eq!(third.group, Some(1));
    assert_eq!(third.control_number, "1883403");
}

#[test]
fn a_transaction_without_trailer_is_named_with_where_it_stopped() {
    let text =
        String::from_utf8(fixture("x12_4010_315_cmacgm_departed_loaded.edi")).expect("ASCII");
    // The first SE is lost: ST 0001 runs into ST 0002.
    let cut = text.replacen("SE*18*0001~\n", "", 1);
    let interchange = tidemark_edi::read(cut.as_bytes()).expect("readable");
    let error = interchange.errors().next().expect("an error");
    assert_eq!(error.control_number.as_deref(), Some("0001"));
    assert_eq!(error.fault, Fault::MissingTrailer("ST"));
    assert_eq!(
        error.segment,
        Some(SegmentRef {
            position: 17,
            tag: "DTM".to_owned()
        })
    );
    let read: Vec<&str> = interchange.statuses().map(|s| s.code.as_str()).collect();
    assert_eq!(read, ["AE"]);
    // Both transactions count towards GE01, read or not.
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
}

#[test]
fn an_unsupported_transaction_set_is_an_error_of_its_own() {
    let text = String::from_utf8(fixture("x12_4010_315_hamsud_discharged.edi")).expect("ASCII");
    let other = text.replace("ST*315*", "ST*214*");
    let interchange = tidemark_edi::read(other.as_bytes()).expect("readable");
    let error = interchange.errors().next().expect("an error");
    assert_eq!(error.fault, Fault::Unsupported("214".to_owned()));
}

#[test]
fn group_and_interchange_counts_that_disagree_are_noted() {
    let text = String::from_utf8(fixture("x12_4010_315_hamsud_discharged.edi")).expect("ASCII");
    let miscounted = text
        .replace("GE*1*720857", "GE*3*720858")
        .replace("IEA*1*000720857", "IEA*2*000720857");
    let interchange = tidemark_edi::read(miscounted.as_bytes()).expect("readable");
    assert_eq!(
        interchange.notes,
        [
            Note::EnvelopeCount {
                trailer: "GE",
                declared: "3".to_owned(),
                counted: 1,
            },
            Note::EnvelopeControlNumber {
                trailer: "GE",
                header_value: "720857".to_owned(),
                trailer_value: "720858".to_owned(),
            },
            Note::EnvelopeCount {
                trailer: "IEA",
                declared: "2".to_owned(),
                counted: 1,
            },
        ]
    );
    assert_eq!(interchange.statuses().count(), 1);
}

#[test]
fn input_over_the_size_limit_is_refused() {
    let reader = Reader::new().with_limits(Limits {
        max_bytes: 100,
        ..Limits::default()
    });
    assert_eq!(
        reader.read(&fixture(BROKEN)),
        Err(ReadError::TooLarge {
            bytes: fixture(BROKEN).len(),
            limit: 100
        })
    );
}

#[test]
fn input_over_the_segment_limit_is_refused() {
    let reader = Reader::new().with_limits(Limits {
        max_segments: 10,
        ..Limits::default()
    });
    assert_eq!(
        reader.read(&fixture(BROKEN)),
        Err(ReadError::TooManySegments { limit: 10 })
    );
    assert_eq!(
        reader.read(&fixture("iftsta_d00b_rail_departed.edi")),
        Err(ReadError::TooManySegments { limit: 10 })
    );
}

#[test]
fn input_over_the_transaction_limit_is_refused() {
    let reader = Reader::new().with_limits(Limits {
        max_transactions: 2,
        ..Limits::default()
    });
    assert_eq!(
        reader.read(&fixture(BROKEN)),
        Err(ReadError::TooManyTransactions { limit: 2 })
    );
}

#[test]
fn input_that_is_no_edi_is_refused() {
    assert_eq!(tidemark_edi::read(b"hello"), Err(ReadError::NotEdi));
    assert_eq!(tidemark_edi::read(b""), Err(ReadError::NotEdi));
    assert!(matches!(
        tidemark_edi::read(b"ISA*00*"),
        Err(ReadError::Envelope(_))
    ));
}

#[test]
fn a_byte_order_mark_and_leading_blank_lines_are_skipped() {
    let mut input = b"\xEF\xBB\xBF\r\n".to_vec();
    input.extend(fixture("iftsta_d99b_cargosmart_departed.edi"));
    assert_eq!(
        tidemark_edi::read(&input)
            .expect("readable")
            .statuses()
            .count(),
        1
    );
}
