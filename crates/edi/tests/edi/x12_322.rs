//! X12 322 Terminal Operations and Intermodal Ramp Activity (Hamburg Süd MIG examples).

use chrono::NaiveDate;
use tidemark_carriers::{Classifier, DcsaCode, EmptyIndicator, EventKind};
use tidemark_edi::{LocationRole, NotAnEvent, RailLeg, Railroad, TerminalEffect};
use tidemark_geo::reference::ReferenceData;

use crate::{local, only_status, read_fixture, transaction, utc};

const FREE_DAY: &str = "x12_4010_322_hamsud_last_free_day.edi";
const ARRIVAL: &str = "x12_4010_322_hamsud_rail_arrival.edi";

#[test]
fn a_non_fixed_width_isa_is_read() {
    let interchange = read_fixture(FREE_DAY);
    assert_eq!(interchange.envelope.sender_id, "HAMSUD");
    assert_eq!(interchange.envelope.receiver_id, "PARTNERID");
    assert_eq!(interchange.envelope.control_number, "053849086");
    assert_eq!(interchange.groups[0].functional_id, "SO");
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
    let transaction = transaction(&interchange, 0);
    assert_eq!(transaction.set_id, "322");
    assert!(transaction.notes.is_empty(), "{:?}", transaction.notes);
}

#[test]
fn a_322_free_time_status_gives_the_ramps_last_free_day() {
    let interchange = read_fixture(FREE_DAY);
    let status = only_status(&interchange);
    assert_eq!(status.code, "NF");
    assert_eq!(
        status.mapping.as_ref().and_then(|row| row.terminal),
        Some(TerminalEffect::LastFreeDay)
    );
    assert_eq!(status.location.locode.as_deref(), Some("USCHI"));
    assert_eq!(
        status.location.name.as_deref(),
        Some("BNSF CHICAGO (LOGISTICS PARK)")
    );
    assert_eq!(status.location_role, Some(LocationRole::Activity));
    let time = status.time.as_ref().expect("Q5 date");
    // 12:00 Chicago daylight time (UTC-5).
    assert_eq!(time.utc, Some(utc(2016, 6, 25, 17, 0, 0)));

    let facts = status.terminal_facts().expect("NF is a terminal fact");
    assert_eq!(facts.last_free_day, NaiveDate::from_ymd_opt(2016, 6, 25));
    assert_eq!(facts.container.as_deref(), Some("HASU4316170"));
    assert_eq!(facts.location.as_deref(), Some("USCHI"));
    assert!(facts.at_rail_ramp, "N1*RR names BNSF");
    assert_eq!(facts.available, None);
    assert!(facts.holds.is_empty());
    assert_eq!(
        status.to_carrier_event(),
        Err(NotAnEvent::NoEvent("NF".to_owned()))
    );
}

#[test]
fn a_322_equipment_comes_from_its_n7_and_w2() {
    let interchange = read_fixture(FREE_DAY);
    let status = only_status(&interchange);
    assert_eq!(status.references.container.as_deref(), Some("HASU4316170"));
    assert!(status.container_valid);
    assert_eq!(status.iso_size_type.as_deref(), Some("451G"));
    assert_eq!(status.empty_indicator, Some(EmptyIndicator::Laden));
    assert_eq!(status.references.bills_of_lading, ["A5GEMEN1976X"]);
    assert_eq!(status.references.bookings, ["6PHLSA1234"]);
    assert_eq!(status.references.scac, None, "PARTNERID is no SCAC");
}

#[test]
fn a_322_arrival_is_a_dcsa_arrival_with_its_n7_estimates() {
    let interchange = read_fixture(ARRIVAL);
    let status = only_status(&interchange);
    assert_eq!(status.code, "A");
    assert_eq!(status.location.locode.as_deref(), Some("USSTP"));
    let time = status.time.as_ref().expect("Q5 date");
    assert_eq!(time.local, local(2016, 5, 26, 21, 45, 20));
    // LT: the zone the reference data gives the place.
    assert_eq!(
        time.zone.as_deref(),
        ReferenceData::embedded().time_zone_of("USSTP")
    );
    let qualifiers: Vec<(&str, Option<Classifier>)> = status
        .other_times
        .iter()
        .map(|dated| (dated.qualifier.as_str(), dated.classifier))
        .collect();
    assert_eq!(
        qualifiers,
        [
            ("371", Some(Classifier::Estimated)),
            ("017", Some(Classifier::Estimated)),
            ("830", None),
        ]
    );
    assert_eq!(
        status.other_times[0].time.local,
        local(2016, 5, 28, 9, 12, 0)
    );
    let event = status.to_carrier_event().expect("A is an arrival");
    assert_eq!(event.kind, EventKind::Transport);
    assert_eq!(event.dcsa_code, DcsaCode::Arri);
    assert_eq!(event.route_hint, None);
}

#[test]
fn a_ramps_322_naming_its_railroad_is_a_rail_move() {
    let interchange = read_fixture(ARRIVAL);
    let status = only_status(&interchange);

    let transport = status.transport.as_ref().expect("N1*RR names the railroad");
    assert_eq!(
        transport.mode,
        Some(tidemark_carriers::ModeOfTransport::Rail)
    );
    assert_eq!(transport.code.as_deref(), Some("BNSF"));
    let event = status.to_carrier_event().expect("A is an arrival");
    assert_eq!(
        event.mode_of_transport(),
        Some(tidemark_carriers::ModeOfTransport::Rail)
    );
}

#[test]
fn a_322_names_its_railroad_by_the_scac_in_n1_rr() {
    let interchange = read_fixture(ARRIVAL);
    let status = only_status(&interchange);
    assert_eq!(status.rail_carrier_scac.as_deref(), Some("BNSF"));
}

#[test]
fn a_ramps_rail_arrival_names_the_railroad_of_the_inland_leg() {
    let interchange = read_fixture(ARRIVAL);
    let status = only_status(&interchange);
    assert_eq!(
        status.railroad(),
        Some(Railroad {
            scac: "BNSF".to_owned(),
            leg: Some(RailLeg::InlandDestination),
        })
    );
}

#[test]
fn a_rail_arrival_is_kept_among_the_facts_for_its_railroad_alone() {
    let interchange = read_fixture(ARRIVAL);
    let status = only_status(&interchange);
    assert_eq!(status.terminal_facts(), None, "A is no terminal code");
    let facts = status.railroad_facts().expect("N1*RR names BNSF");
    assert!(facts.railroad_only);
    assert_eq!(facts.container.as_deref(), Some("HASU4316170"));
    assert_eq!(facts.location.as_deref(), Some("USSTP"));
    assert_eq!(
        facts.railroad.map(|railroad| railroad.scac).as_deref(),
        Some("BNSF")
    );
    assert_eq!(facts.available, None);
    assert_eq!(facts.last_free_day, None);
}

#[test]
fn a_ramps_last_free_day_carries_its_railroad_for_the_inland_leg() {
    let interchange = read_fixture(FREE_DAY);
    let facts = only_status(&interchange)
        .terminal_facts()
        .expect("NF is a terminal fact");
    assert!(!facts.railroad_only);
    assert_eq!(
        facts.railroad,
        Some(Railroad {
            scac: "BNSF".to_owned(),
            leg: Some(RailLeg::InlandDestination),
        })
    );
}
