//! The reviewed code table and what each kind of code does to a status.

use chrono::NaiveDate;
use tidemark_carriers::{Classifier, DcsaCode, EmptyIndicator, ModeOfTransport};
use tidemark_edi::{CodeTable, FeeKind, HoldKind, HoldStatus, TerminalEffect};

use crate::{fixture, only_status, utc};

/// The 322 free-time fixture with another Q5 status code.
fn status_322(code: &str) -> tidemark_edi::StatusReport {
    let text = String::from_utf8(fixture("x12_4010_322_hamsud_last_free_day.edi")).expect("ASCII");
    let changed = text.replace("Q5*NF*", &format!("Q5*{code}*"));
    let interchange = tidemark_edi::read(changed.as_bytes()).expect("readable");
    only_status(&interchange).clone()
}

#[test]
fn gate_and_rail_codes_map_to_the_dcsa_events_of_sources_md() {
    let table = CodeTable::embedded();
    let event = |code: &str| {
        let row = table
            .get(code)
            .unwrap_or_else(|| panic!("{code} is in the table"));
        (row.event, row.empty, row.mode)
    };
    use DcsaCode::*;
    use EmptyIndicator::{Empty, Laden};
    use ModeOfTransport::{Rail, Vessel};
    assert_eq!(event("EE"), (Some(Gtot), Some(Empty), None));
    assert_eq!(event("I"), (Some(Gtin), None, None));
    assert_eq!(event("AE"), (Some(Load), None, Some(Vessel)));
    assert_eq!(event("VD"), (Some(Depa), None, Some(Vessel)));
    assert_eq!(event("VA"), (Some(Arri), None, Some(Vessel)));
    assert_eq!(event("UV"), (Some(Disc), None, Some(Vessel)));
    assert_eq!(event("OA"), (Some(Gtot), Some(Laden), None));
    assert_eq!(event("RD"), (Some(Gtin), Some(Empty), None));
    assert_eq!(event("AL"), (Some(Load), None, Some(Rail)));
    assert_eq!(event("RL"), (Some(Depa), None, Some(Rail)));
    assert_eq!(event("AR"), (Some(Arri), None, Some(Rail)));
    assert_eq!(event("UR"), (Some(Disc), None, Some(Rail)));
    assert_eq!(event("D"), (Some(Drop), None, None));
    assert_eq!(event("X1"), (Some(Drop), None, None));
    assert_eq!(event("A"), (Some(Arri), None, None));
}

#[test]
fn delay_codes_are_estimates_whatever_their_date_says() {
    let status = status_322("E");
    assert_eq!(status.classifier, Classifier::Estimated);
    let event = status.to_carrier_event().expect("E is an arrival estimate");
    assert_eq!(event.dcsa_code, DcsaCode::Arri);
    assert_eq!(event.classifier, Classifier::Estimated);
}

#[test]
fn an_empty_out_is_empty_whatever_the_equipment_segment_says() {
    let event = status_322("EE").to_carrier_event().expect("EE is an event");
    assert_eq!(event.dcsa_code, DcsaCode::Gtot);
    assert_eq!(event.empty_indicator, Some(EmptyIndicator::Empty));
}

#[test]
fn available_and_not_available_set_availability() {
    let available = status_322("AV");
    assert_eq!(
        available.terminal_facts().and_then(|f| f.available),
        Some(true)
    );
    assert_eq!(
        available.to_carrier_event().map(|e| e.dcsa_code),
        Ok(DcsaCode::Avpu)
    );
    assert_eq!(
        status_322("DN").terminal_facts().and_then(|f| f.available),
        Some(false)
    );
}

#[test]
fn customs_holds_and_releases_are_terminal49_holds() {
    let hold = status_322("PA").terminal_facts().expect("a hold");
    assert_eq!(hold.holds.len(), 1);
    assert_eq!(hold.holds[0].kind, HoldKind::Customs);
    assert_eq!(hold.holds[0].status, HoldStatus::Hold);
    assert_eq!(hold.holds[0].code, "PA");
    let usda = status_322("PL").terminal_facts().expect("a hold");
    assert_eq!(usda.holds[0].kind, HoldKind::Usda);
    let released = status_322("CT").terminal_facts().expect("a release");
    assert_eq!(released.holds[0].kind, HoldKind::Customs);
    assert_eq!(released.holds[0].status, HoldStatus::Released);
    let freight = status_322("CR").terminal_facts().expect("a release");
    assert_eq!(freight.holds[0].kind, HoldKind::Freight);
    assert_eq!(freight.holds[0].status, HoldStatus::Released);
    assert_eq!(
        status_322("PA").to_carrier_event().map(|e| e.dcsa_code),
        Ok(DcsaCode::Cusi)
    );
}

#[test]
fn a_hold_the_sender_calls_vacis_is_a_vacis_hold() {
    let mut status = status_322("PA");
    status.description = Some("VACIS EXAM".to_owned());
    let facts = status.terminal_facts().expect("a hold");
    assert_eq!(facts.holds[0].kind, HoldKind::Vacis);
    assert!(facts.holds[0].description.contains("VACIS EXAM"));
}

#[test]
fn free_time_expired_starts_demurrage_without_an_amount() {
    let facts = status_322("FT").terminal_facts().expect("a terminal fact");
    assert!(facts.free_time_expired);
    assert_eq!(facts.fees.len(), 1);
    assert_eq!(facts.fees[0].kind, FeeKind::Demurrage);
    assert_eq!(facts.fees[0].amount, None);
}

#[test]
fn a_pickup_appointment_is_a_time_in_utc() {
    let facts = status_322("AA").terminal_facts().expect("a terminal fact");
    assert_eq!(facts.appointment_at, Some(utc(2016, 6, 25, 17, 0, 0)));
    assert_eq!(facts.last_free_day, None::<NaiveDate>);
}

#[test]
fn an_unknown_code_is_drift_and_neither_event_nor_fact() {
    let status = status_322("ZZ");
    assert!(status.is_drift());
    assert!(status.terminal_facts().is_none());
    assert!(status.to_carrier_event().is_err());
}

#[test]
fn codes_that_hand_custody_between_carriers_stay_drift_and_a_departure_does_not() {
    // Element 157 as Stedi lists it for X12 002002/002040 has `J` "Delivered to Connecting
    // Line", `P` "Departure from Location" and `R` "Received from Prior Carrier"
    // (https://stedi.com/edi/x12-002040/element/157). Hamburg Süd's 4010 322 guide lists them
    // as Q5 codes still (`P` "Departed Terminal Location",
    // https://stedi.com/app/guides/view/hamburg-sud/322/01H4G43PEREDTCJSKG3ETDHJVA): `P`, the
    // box leaving the terminal, is an out-gate (GTOT); `J` and `R`, a handover between
    // carriers, have no DCSA event and stay raw — a sender's table can map them.
    for code in ["J", "R"] {
        let status = status_322(code);
        assert!(status.is_drift(), "{code}");
        assert!(status.to_carrier_event().is_err(), "{code}");
        assert!(status.terminal_facts().is_none(), "{code}");
    }
    let departed = status_322("P");
    assert!(!departed.is_drift());
    let event = departed.to_carrier_event().expect("an out-gate");
    assert_eq!(event.dcsa_code, DcsaCode::Gtot);
}

#[test]
fn a_notify_code_stays_drift() {
    // `NT` "Notification" (Hamburg Süd's 322 guide; "Notify" in the open-source terminal-315
    // parser SOURCES.md B.2 cites): a notice, no event, no terminal fact.
    let status = status_322("NT");
    assert!(status.is_drift());
    assert!(status.terminal_facts().is_none());
}

#[test]
fn every_terminal_row_names_its_effect() {
    for row in CodeTable::embedded().rows() {
        if matches!(
            row.terminal,
            Some(TerminalEffect::Hold | TerminalEffect::Release)
        ) {
            assert!(row.hold.is_some(), "{}", row.code);
        }
    }
}
