//! 997 and CONTRL built from what was read.

use tidemark_edi::ack::{AckControl, AckError, edifact_contrl, x12_997};

use crate::{local, read_fixture};

fn control() -> AckControl {
    AckControl {
        interchange_control_number: 42,
        group_control_number: 7,
        at: local(2024, 1, 2, 3, 4, 0),
    }
}

#[test]
fn a_997_accepts_good_sets_and_rejects_the_broken_one_per_group() {
    let interchange = read_fixture("x12_4010_315_two_groups_one_broken.edi");
    let ack = x12_997(&interchange, &control()).expect("an X12 interchange");
    let expected = "\
ISA*00*          *00*          *ZZ*OECGROUP       *ZZ*CMACGM         *240102*0304*U*00401*000000042*0*P*>~
GS*FA*OECGROUP*CMACGM*20240102*0304*7*X*004010~
ST*997*0001~
AK1*QO*81466~
AK2*315*0001~
AK5*A~
AK2*315*0002~
AK3*B4*2**3~
AK5*R*5~
AK9*P*2*2*1~
SE*9*0001~
ST*997*0002~
AK1*QO*720857~
AK2*315*1883403~
AK5*A~
AK9*A*1*1*1~
SE*6*0002~
GE*2*7~
IEA*1*000000042~
";
    assert_eq!(ack, expected);
}

#[test]
fn a_997_notes_a_trailer_mismatch_as_accepted_with_errors() {
    let interchange = read_fixture("x12_5010_315_transshipment_arrival.edi");
    let ack = x12_997(&interchange, &control()).expect("an X12 interchange");
    assert!(ack.starts_with("ISA*00*          *00*          *ZZ*XXXX           *ZZ*XXXX           *240102*0304*^*00501*000000042*0*P*>~"), "{ack}");
    assert!(ack.contains("AK1*QO*12359218*005010~"), "{ack}");
    assert!(
        ack.contains("AK2*315*33366799~AK5*E*3~AK9*E*1*1*1~"),
        "{ack}"
    );
}

#[test]
fn a_contrl_acknowledges_each_iftsta_message() {
    let interchange = read_fixture("iftsta_d00b_rail_departed.edi");
    let ack = edifact_contrl(&interchange, &control()).expect("an EDIFACT interchange");
    let expected = "\
UNB+UNOC:3+RECEIVER:ZZZ+SENDER:ZZZ+240102:0304+42'
UNH+1+CONTRL:D:3:UN'
UCI+2803570+SENDER:ZZZ+RECEIVER:ZZZ+7'
UCM+2805567+IFTSTA:D:00B:UN+7'
UNT+4+1'
UNZ+1+42'
";
    assert_eq!(ack, expected);
}

#[test]
fn a_contrl_rejects_a_message_without_status() {
    let text =
        "UNB+UNOC:3+A:ZZZ+B:ZZZ+240101:1200+9'UNH+5+IFTSTA:D:99B:UN'BGM+23+X+9'UNT+3+5'UNZ+1+9'";
    let interchange = tidemark_edi::read(text.as_bytes()).expect("readable");
    let ack = edifact_contrl(&interchange, &control()).expect("an EDIFACT interchange");
    assert!(ack.contains("UCM+5+IFTSTA:D:99B:UN+4+13'"), "{ack}");
}

#[test]
fn each_acknowledgement_needs_its_own_syntax() {
    let x12 = read_fixture("x12_4010_315_hamsud_discharged.edi");
    let edifact = read_fixture("iftsta_d99b_cargosmart_departed.edi");
    assert!(matches!(
        edifact_contrl(&x12, &control()),
        Err(AckError::WrongSyntax { .. })
    ));
    assert!(matches!(
        x12_997(&edifact, &control()),
        Err(AckError::WrongSyntax { .. })
    ));
}

#[test]
fn a_997_reads_back_as_x12() {
    let interchange = read_fixture("x12_4010_315_two_groups_one_broken.edi");
    let ack = x12_997(&interchange, &control()).expect("an X12 interchange");
    let read = tidemark_edi::read(ack.as_bytes()).expect("our 997 is X12");
    assert_eq!(read.envelope.sender_id, "OECGROUP");
    assert_eq!(read.envelope.control_number, "000000042");
    assert!(read.notes.is_empty(), "{:?}", read.notes);
    // 997 is not a status set: each is its own unsupported transaction.
    assert_eq!(read.errors().count(), 2);
}

/// Two fixtures' bytes one after the other, as a mailbox file holds them.
fn two_interchanges(first: &str, second: &str) -> tidemark_edi::Interchange {
    let mut bytes = crate::fixture(first);
    bytes.extend(crate::fixture(second));
    tidemark_edi::read(&bytes).expect("readable")
}

#[test]
fn a_file_of_two_x12_interchanges_gets_a_997_interchange_for_each() {
    let interchange = two_interchanges(
        "x12_4010_315_hamsud_discharged.edi",
        "x12_4010_315_cmacgm_departed_loaded.edi",
    );
    let ack = x12_997(&interchange, &control()).expect("an X12 interchange");
    // Each answers its own interchange's sender, groups and sets, under its own ISA13 and
    // GS06 (42/7, then 43/8), its sets numbered from 0001.
    let expected = "\
ISA*00*          *00*          *ZZ*GSCL           *ZZ*HAMSUD         *240102*0304*U*00401*000000042*0*P*>~
GS*FA*GSCL*HAMSUD*20240102*0304*7*X*004010~
ST*997*0001~
AK1*QO*720857~
AK2*315*1883403~
AK5*A~
AK9*A*1*1*1~
SE*6*0001~
GE*1*7~
IEA*1*000000042~
ISA*00*          *00*          *ZZ*OECGROUP       *ZZ*CMACGM         *240102*0304*U*00401*000000043*0*P*>~
GS*FA*OECGROUP*CMACGM*20240102*0304*8*X*004010~
ST*997*0001~
AK1*QO*81466~
AK2*315*0001~
AK5*A~
AK2*315*0002~
AK5*A~
AK9*A*2*2*2~
SE*8*0001~
GE*1*8~
IEA*1*000000043~
";
    assert_eq!(ack.replace('~', "~\n"), expected);
}

#[test]
fn a_rejected_set_is_answered_in_its_own_interchanges_997() {
    let interchange = two_interchanges(
        "x12_4010_315_hamsud_discharged.edi",
        "x12_4010_315_two_groups_one_broken.edi",
    );
    let ack = x12_997(&interchange, &control()).expect("an X12 interchange");
    let (first, second) = ack
        .split_once("IEA*1*000000042~")
        .expect("the first 997 interchange ends");
    assert!(first.contains("AK9*A*1*1*1~"), "{first}");
    assert!(!first.contains("AK5*R"), "{first}");
    assert!(second.starts_with("ISA*"), "{second}");
    assert!(
        second.contains("AK3*B4*2**3~AK5*R*5~AK9*P*2*2*1~"),
        "{second}"
    );
    assert!(second.ends_with("GE*2*8~IEA*1*000000043~"), "{second}");
}

#[test]
fn the_997s_of_several_interchanges_read_back_as_several_interchanges() {
    let interchange = two_interchanges(
        "x12_4010_315_hamsud_discharged.edi",
        "x12_4010_315_cmacgm_departed_loaded.edi",
    );
    let ack = x12_997(&interchange, &control()).expect("an X12 interchange");
    let read = tidemark_edi::read(ack.as_bytes()).expect("our 997s are X12");
    let numbers: Vec<(&str, &str)> = read
        .parts
        .iter()
        .map(|part| {
            (
                part.envelope.receiver_id.as_str(),
                part.envelope.control_number.as_str(),
            )
        })
        .collect();
    assert_eq!(numbers, [("HAMSUD", "000000042"), ("CMACGM", "000000043")]);
    // Trailers agree with their headers: no envelope notes beyond the further interchange.
    assert!(
        read.notes
            .iter()
            .all(|note| matches!(note, tidemark_edi::Note::FurtherInterchange { .. })),
        "{:?}",
        read.notes
    );
}

#[test]
fn a_further_997s_control_number_wraps_past_nine_digits_to_one() {
    let interchange = two_interchanges(
        "x12_4010_315_hamsud_discharged.edi",
        "x12_4010_315_cmacgm_departed_loaded.edi",
    );
    let control = AckControl {
        interchange_control_number: 999_999_999,
        group_control_number: 999_999_999,
        at: local(2024, 1, 2, 3, 4, 0),
    };
    let ack = x12_997(&interchange, &control).expect("an X12 interchange");
    assert!(ack.contains("*999999999*0*P*>~"), "{ack}");
    assert!(ack.contains("IEA*1*999999999~ISA*"), "{ack}");
    assert!(ack.contains("*000000001*0*P*>~"), "{ack}");
    assert!(ack.ends_with("GE*1*1~IEA*1*000000001~"), "{ack}");
}

#[test]
fn a_file_of_two_edifact_interchanges_gets_a_contrl_interchange_for_each() {
    // Both interchanges carry reference 6771 (as published); each CONTRL has its own.
    let interchange = two_interchanges(
        "iftsta_d99b_cargosmart_departed.edi",
        "iftsta_d99b_cargosmart_departed_una.edi",
    );
    let ack = edifact_contrl(&interchange, &control()).expect("an EDIFACT interchange");
    let expected = "\
UNB+UNOC:3+999999:ZZZ+IITTRR:ZZZ+240102:0304+42'
UNH+1+CONTRL:D:3:UN'
UCI+6771+IITTRR:ZZZ+999999:ZZZ+7'
UCM+1+IFTSTA:D:99B:UN+7'
UNT+4+1'
UNZ+1+42'
UNB+UNOC:3+999999:ZZZ+IITTRR:ZZZ+240102:0304+43'
UNH+1+CONTRL:D:3:UN'
UCI+6771+IITTRR:ZZZ+999999:ZZZ+7'
UCM+1+IFTSTA:D:99B:UN+7'
UNT+4+1'
UNZ+1+43'
";
    assert_eq!(ack.replace('\'', "'\n"), expected);
}

#[test]
fn a_contrl_answers_each_interchanges_messages_in_its_own_uci() {
    let bad =
        "UNB+UNOC:3+A:ZZZ+B:ZZZ+240101:1200+9'UNH+5+IFTSTA:D:99B:UN'BGM+23+X+9'UNT+3+5'UNZ+1+9'";
    let mut bytes = crate::fixture("iftsta_d00b_rail_departed.edi");
    bytes.extend_from_slice(bad.as_bytes());
    let interchange = tidemark_edi::read(&bytes).expect("readable");
    let ack = edifact_contrl(&interchange, &control()).expect("an EDIFACT interchange");
    let (first, second) = ack.split_once("UNZ+1+42'").expect("the first CONTRL ends");
    assert!(
        first.contains("UCI+2803570+SENDER:ZZZ+RECEIVER:ZZZ+7'"),
        "{first}"
    );
    assert!(first.contains("UCM+2805567+IFTSTA:D:00B:UN+7'"), "{first}");
    assert!(!first.contains("UCM+5+"), "{first}");
    assert!(second.contains("UCI+9+A:ZZZ+B:ZZZ+7'"), "{second}");
    assert!(second.contains("UCM+5+IFTSTA:D:99B:UN+4+13'"), "{second}");
    // The sample ends its segments with line breaks; the acknowledgement does too.
    assert!(second.ends_with("UNZ+1+43'\n"), "{second}");
}

#[test]
fn input_read_without_its_interchange_header_has_no_envelope_to_acknowledge() {
    // A bare ST…SE, a bare GS…GE, and a bare UNH…UNT as guides print them: no ISA06/ISA08 or
    // UNB parties to address, no control number to answer.
    let bare_st = read_fixture("x12_5010_315_bare_transaction_set.edi");
    assert!(
        bare_st
            .notes
            .contains(&tidemark_edi::Note::MissingEnvelopeHeader("ISA")),
        "{:?}",
        bare_st.notes
    );
    assert_eq!(
        x12_997(&bare_st, &control()),
        Err(AckError::NoEnvelope("ISA"))
    );
    let bare_gs = tidemark_edi::read(
        b"GS*QO*SENDER*RECEIVER*20230101*1200*1*X*005010~ST*315*0001~\
          B4***VD*20230105*0800**MSCU*123456*L*45G1*CNSHA*UN~SE*3*0001~GE*1*1~",
    )
    .expect("readable");
    assert_eq!(
        x12_997(&bare_gs, &control()),
        Err(AckError::NoEnvelope("ISA"))
    );
    let interchange = read_fixture("iftsta_d01b_eancom_bare_message_crlf.edi");
    assert_eq!(
        edifact_contrl(&interchange, &control()),
        Err(AckError::NoEnvelope("UNB"))
    );
}
