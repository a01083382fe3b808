//! Public samples printed as guides and libraries print them: a message or a transaction set
//! on its own, without the interchange envelope around it, and a 315 whose B4 names no
//! status. Each is read with what it says, and what it lacks is noted, never fatal.

use tidemark_edi::{LocationRole, Note};

use crate::{local, read_fixture, transaction};

const EANCOM: &str = "iftsta_d01b_eancom_bare_message_crlf.edi";
const BARE_315: &str = "x12_5010_315_bare_transaction_set.edi";
const EMPTY_B4: &str = "x12_5010_315_b4_without_status_code.edi";

#[test]
fn an_x12_transaction_set_without_isa_or_gs_is_read_and_the_missing_envelope_noted() {
    let interchange = read_fixture(BARE_315);
    assert_eq!(interchange.notes, [Note::MissingEnvelopeHeader("ISA")]);
    assert_eq!(interchange.envelope.sender_id, "");
    assert_eq!(interchange.envelope.control_number, "");
    let separators = &interchange.envelope.separators;
    assert_eq!(separators.element, '*');
    assert_eq!(separators.segment, '~');
    assert!(interchange.groups.is_empty());
    let set = transaction(&interchange, 0);
    assert_eq!(set.set_id, "315");
    assert_eq!(set.control_number, "0001");
    assert_eq!(set.group, None);
    // SE*5 counts the five segments: no segment-count note.
    assert_eq!(set.notes, [Note::EmptyStatusCode]);
}

#[test]
fn a_b4_without_a_status_code_gives_a_status_with_an_empty_code_and_its_route() {
    for name in [BARE_315, EMPTY_B4] {
        let interchange = read_fixture(name);
        assert_eq!(interchange.errors().count(), 0, "{name}");
        let statuses: Vec<_> = interchange.statuses().collect();
        assert_eq!(statuses.len(), 1, "{name}");
        let status = statuses[0];
        assert_eq!(status.code, "");
        assert!(status.is_drift());
        assert!(status.to_carrier_event().is_err());
        assert_eq!(status.references.container, None);
        assert_eq!(status.time, None);
        let loading = &status.port_calls[0];
        assert_eq!(loading.role, LocationRole::Loading);
        assert_eq!(loading.location.locode.as_deref(), Some("USNYC"));
    }
    let bare = read_fixture(BARE_315);
    let status = bare.statuses().next().expect("one status");
    assert_eq!(status.port_calls.len(), 2);
    assert_eq!(status.port_calls[1].role, LocationRole::Discharge);
    assert_eq!(
        status.port_calls[1].location.locode.as_deref(),
        Some("USLAX")
    );
}

#[test]
fn a_5010_interchange_whose_only_315_has_an_empty_b4_is_accepted_whole() {
    let interchange = read_fixture(EMPTY_B4);
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
    assert_eq!(interchange.envelope.sender_id, "SENDER");
    assert_eq!(interchange.envelope.version, "00501");
    // ISA11 `U` is the standards identifier, not a repetition separator.
    assert_eq!(interchange.envelope.separators.repetition, None);
    assert_eq!(interchange.groups[0].version, "005010");
    let control = tidemark_edi::ack::AckControl {
        interchange_control_number: 42,
        group_control_number: 7,
        at: local(2024, 1, 2, 3, 4, 0),
    };
    let ack = tidemark_edi::ack::x12_997(&interchange, &control).expect("an X12 interchange");
    // The set is accepted: a B4 without B4-03 is valid X12.
    assert!(ack.contains("AK5*A"), "{ack}");
}

#[test]
fn an_edifact_message_without_unb_is_read_and_the_missing_envelope_noted() {
    let interchange = read_fixture(EANCOM);
    assert_eq!(interchange.notes, [Note::MissingEnvelopeHeader("UNB")]);
    assert_eq!(interchange.envelope.sender_id, "");
    assert!(interchange.envelope.separators.line_breaks);
    let message = transaction(&interchange, 0);
    assert_eq!(message.set_id, "IFTSTA");
    assert_eq!(message.control_number, "ME000021");
    assert_eq!(message.version, "D:01B");
    assert!(
        !message
            .notes
            .iter()
            .any(|note| matches!(note, Note::SegmentCount { .. })),
        "UNT+34 counts the message's 34 segments: {:?}",
        message.notes
    );
    let codes: Vec<&str> = interchange.statuses().map(|s| s.code.as_str()).collect();
    assert_eq!(codes, ["21", "31", "17", "49", "21", "21"]);
}

#[test]
fn text_that_only_looks_like_the_start_of_a_set_is_still_not_edi() {
    for text in [
        "ST",
        "STATUS REPORT FOLLOWS",
        "ST*315",
        "ST 315 0001~",
        "GS*QO*A*B",
        "UNHAPPY",
    ] {
        assert!(
            matches!(
                tidemark_edi::read(text.as_bytes()),
                Err(tidemark_edi::ReadError::NotEdi)
            ),
            "{text}"
        );
    }
}

#[test]
fn eancoms_numbered_statuses_are_read_as_recommendation_24_and_31_and_49_stay_unknown() {
    let interchange = read_fixture(EANCOM);
    let statuses: Vec<_> = interchange.statuses().collect();
    let delivered = statuses[0];
    let row = delivered
        .mapping
        .as_ref()
        .expect("21 is in Recommendation 24");
    assert_eq!(row.event, Some(tidemark_carriers::DcsaCode::Drop));
    assert_eq!(row.list.as_deref(), Some("6"));
    // No UN/LOCODE anywhere: the time stays local, so no event can be filed with a UTC time.
    let time = delivered.time.as_ref().expect("DTM+334");
    assert_eq!(time.local, local(2002, 2, 1, 14, 50, 0));
    assert_eq!(time.utc, None);
    assert!(delivered.to_carrier_event().is_err());
    assert!(
        delivered
            .references
            .other
            .contains(&("DQ".to_owned(), "5/2334".to_owned()))
    );
    // 17: customs clearance refused, a customs hold, at a place given only by its name.
    let refused = statuses[2];
    let facts = refused.terminal_facts().expect("a hold");
    assert_eq!(facts.holds.len(), 1);
    assert_eq!(facts.holds[0].kind, tidemark_edi::HoldKind::Customs);
    assert_eq!(
        refused.location.name.as_deref(),
        Some("H.MCUSTOMS AND EXCISE LONDON HEATHROW AIRPORT")
    );
    let drift: Vec<&str> = interchange.drift().map(|s| s.code.as_str()).collect();
    assert_eq!(drift, ["31", "49"]);
}

#[test]
fn a_status_whose_only_date_is_an_eancom_qualifier_keeps_it_as_its_time() {
    let interchange = read_fixture(EANCOM);
    let en_route = interchange.statuses().nth(1).expect("the second status");
    assert_eq!(en_route.code, "31");
    let time = en_route.time.as_ref().expect("DTM+40E");
    assert_eq!(time.local, local(2002, 2, 7, 0, 0, 0));
    assert!(!time.has_time);
}

#[test]
fn an_x12_group_without_isa_gives_its_statuses_the_gs_sender_and_notes_it() {
    // The empty-B4 sample's group, printed from its GS: GS02 names who sent it.
    let text = String::from_utf8(crate::fixture(EMPTY_B4)).expect("ASCII");
    let from_gs = text
        .get(text.find("GS*").expect("a GS")..text.find("IEA*").expect("an IEA"))
        .expect("GS to GE");
    let interchange = tidemark_edi::read(from_gs.as_bytes()).expect("readable");
    assert_eq!(
        interchange.notes,
        [
            Note::MissingEnvelopeHeader("ISA"),
            Note::SenderFromGroup {
                element: "GS02",
                sender: "SENDER".to_owned(),
            },
        ]
    );
    let status = interchange.statuses().next().expect("a status");
    assert_eq!(status.sender, "SENDER");
    // The interchange itself still has no envelope.
    assert_eq!(interchange.envelope.sender_id, "");
}

#[test]
fn an_edifact_group_without_unb_gives_its_statuses_the_ung_sender_and_notes_it() {
    // UPS's D.07B group printed from its UNG: UNG02 names who sent it.
    let text =
        String::from_utf8(crate::fixture("iftsta_d07b_ups_functional_group.edi")).expect("ASCII");
    let from_ung = text
        .get(text.find("UNG+").expect("a UNG")..)
        .expect("from the UNG");
    let interchange = tidemark_edi::read(from_ung.as_bytes()).expect("readable");
    assert!(
        interchange.notes.contains(&Note::SenderFromGroup {
            element: "UNG02",
            sender: "EURPROD".to_owned(),
        }),
        "{:?}",
        interchange.notes
    );
    let statuses: Vec<_> = interchange.statuses().collect();
    assert!(!statuses.is_empty());
    assert!(statuses.iter().all(|status| status.sender == "EURPROD"));
}
