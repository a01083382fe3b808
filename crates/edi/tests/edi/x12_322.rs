//! X12 322 Terminal Operations and Intermodal Ramp Activity (Hamburg Süd MIG examples).

use chrono::NaiveDate;
use tidemark_carriers::{Classifier, DcsaCode, EmptyIndicator, EventKind};
use tidemark_edi::{LocationRole, NotAnEvent, RailLeg, Railroad, TerminalEffect};

use crate::{local, only_status, read_fixture, transaction, utc};

const FREE_DAY: &str = "x12_4010_322_hamsud_last_free_day.edi";
const ARRIVAL: &str = "x12_4010_322_hamsud_rail_arrival.edi";
const RAIL_LOADED: &str = "x12_4010_322_hamsud_rail_loaded.edi";

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
    // R4*5 and R4*7 both name USCHI: the status is at the destination rail terminal.
    assert_eq!(
        status.location_role,
        Some(LocationRole::DestinationRailTerminal)
    );
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
    // LT at Saint Paul, Minnesota (R4-08 `MN`): Central time.
    assert_eq!(time.zone.as_deref(), Some("America/Chicago"));
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

/// The rail-arrival 322 with `from` replaced by `to`.
fn arrival_with(from: &str, to: &str) -> tidemark_edi::Interchange {
    let text = String::from_utf8(crate::fixture(ARRIVAL)).expect("UTF-8");
    assert!(text.contains(from), "{from}");
    tidemark_edi::read(text.replace(from, to).as_bytes()).expect("readable")
}

#[test]
fn a_ramps_local_time_is_read_in_the_state_its_r4_names_not_in_a_namesakes_zone() {
    // R4*5*UN*USSTP*SAINT PAUL*US***MN: Saint Paul, Minnesota, whatever place elsewhere the
    // port table files under USSTP. 21:45:20 CDT (UTC-5).
    let interchange = read_fixture(ARRIVAL);
    let status = only_status(&interchange);
    let time = status.time.as_ref().expect("Q5 date");
    assert_eq!(time.utc, Some(utc(2016, 5, 27, 2, 45, 20)));
    assert_eq!(status.location.subdivision.as_deref(), Some("US-MN"));
}

#[test]
fn the_n7_level_estimates_are_read_in_the_zone_of_the_place_the_status_is_at() {
    // DTM*371*20160528*091200*LT, DTM*017*20160529*080000*LT at Saint Paul, Minnesota (CDT).
    let interchange = read_fixture(ARRIVAL);
    let status = only_status(&interchange);
    let utcs: Vec<_> = status.other_times.iter().map(|t| t.time.utc).collect();
    assert_eq!(
        utcs,
        [
            Some(utc(2016, 5, 28, 14, 12, 0)),
            Some(utc(2016, 5, 29, 13, 0, 0)),
            Some(utc(2016, 5, 28, 21, 0, 0)),
        ]
    );
    for dated in &status.other_times {
        assert_eq!(dated.time.zone.as_deref(), Some("America/Chicago"));
    }
}

#[test]
fn an_n7_level_estimate_at_the_port_is_not_read_in_the_inland_destinations_zone() {
    // The rail load is at Long Beach (R4*5 USLGB, CA); its DTM*371 16:00 LT is Long Beach
    // time (PDT, UTC-7), not Chicago's though the R4*7 destination is there.
    let interchange = read_fixture(RAIL_LOADED);
    let status = &transaction(&interchange, 0).statuses[0];
    let estimate = &status.other_times[0];
    assert_eq!(estimate.qualifier, "371");
    assert_eq!(estimate.time.zone.as_deref(), Some("America/Los_Angeles"));
    assert_eq!(estimate.time.utc, Some(utc(2016, 5, 28, 23, 0, 0)));
}

#[test]
fn an_n7_level_dtm_with_its_own_time_code_is_read_in_that_zone() {
    // DTM-04 `ET` wins over the place's zone: 09:12 EDT is 13:12 UTC.
    let interchange = arrival_with("DTM*371*20160528*091200*LT", "DTM*371*20160528*091200*ET");
    let status = only_status(&interchange);
    assert_eq!(
        status.other_times[0].time.utc,
        Some(utc(2016, 5, 28, 13, 12, 0))
    );
    // DTM-04 `UT`: the time is UTC already.
    let interchange = arrival_with("DTM*371*20160528*091200*LT", "DTM*371*20160528*091200*UT");
    assert_eq!(
        only_status(&interchange).other_times[0].time.utc,
        Some(utc(2016, 5, 28, 9, 12, 0))
    );
}

#[test]
fn an_n7_level_dtm_without_an_activity_r4_is_read_in_the_q5_state_not_another_r4s() {
    // Without R4*5 the status is at the Q5's SAINT PAUL, MN; the other R4s (Long Beach,
    // Chicago) are other places and lend it no zone. 09:12 CDT is 14:12 UTC.
    let interchange = arrival_with("R4*5*UN*USSTP*SAINT PAUL*US***MN~", "");
    let status = only_status(&interchange);
    assert_eq!(status.location.locode, None);
    assert_eq!(status.location.subdivision.as_deref(), Some("US-MN"));
    assert_eq!(
        status.other_times[0].time.utc,
        Some(utc(2016, 5, 28, 14, 12, 0))
    );
    assert_eq!(
        status.time.as_ref().and_then(|t| t.utc),
        Some(utc(2016, 5, 27, 2, 45, 20))
    );
}

#[test]
fn a_ramp_named_by_its_city_in_a_state_of_two_zones_is_read_in_its_namesakes_zone() {
    // No R4*5, and the Q5 names the city EL PASO, TX: Texas spans two zones, but UN/LOCODE's
    // El Paso in Texas (USELP) is Mountain time. 21:45:20 MDT is 03:45:20 UTC.
    let text = String::from_utf8(crate::fixture(ARRIVAL))
        .expect("UTF-8")
        .replace("R4*5*UN*USSTP*SAINT PAUL*US***MN~", "")
        .replace("**SAINT PAUL*MN*US~", "**EL PASO*TX*US~");
    let interchange = tidemark_edi::read(text.as_bytes()).expect("readable");
    let status = only_status(&interchange);
    assert_eq!(status.location.other_id.as_deref(), Some("EL PASO"));
    assert_eq!(status.location.subdivision.as_deref(), Some("US-TX"));
    let time = status.time.as_ref().expect("Q5 date");
    assert_eq!(time.zone.as_deref(), Some("America/Denver"));
    assert_eq!(time.utc, Some(utc(2016, 5, 27, 3, 45, 20)));
}

const OUTGATE: &str = "x12_4010_322_hamsud_outgate.edi";

#[test]
fn a_status_at_the_destination_rail_terminal_names_the_inland_destination() {
    // OA at USCHI, which R4*7 names as the destination rail intermodal terminal (X12
    // element 115 code 7): the inland destination of the rail leg.
    let interchange = read_fixture(OUTGATE);
    let status = only_status(&interchange);
    assert_eq!(
        status.location_role,
        Some(LocationRole::DestinationRailTerminal)
    );
    let event = status.to_carrier_event().expect("OA is a gate-out");
    assert_eq!(event.dcsa_code, DcsaCode::Gtot);
    assert_eq!(event.empty_indicator, Some(EmptyIndicator::Laden));
    assert_eq!(
        event.route_hint,
        Some(tidemark_carriers::RouteHint::PlaceOfDelivery)
    );
}

#[test]
fn a_status_at_the_origin_rail_terminal_says_nothing_of_the_ocean_route() {
    // AL at USLGB, R4*6: the origin rail intermodal terminal, the port's ramp on an import
    // and an inland one on an export: no route hint either way.
    let interchange = read_fixture(RAIL_LOADED);
    let status = &transaction(&interchange, 0).statuses[0];
    assert_eq!(status.location_role, Some(LocationRole::OriginRailTerminal));
    let event = status.to_carrier_event().expect("AL is a rail load");
    assert_eq!(event.route_hint, None);
}
