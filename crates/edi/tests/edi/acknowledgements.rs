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
