//! X12 315 Status Details (Ocean), 4010, 5010 and 7010 envelopes.

use tidemark_carriers::{
    Classifier, DcsaCode, DocumentType, EmptyIndicator, EventKind, ModeOfTransport, RouteHint,
};
use tidemark_edi::{LocationRole, NotAnEvent, Note, Syntax};

use crate::{fixture, local, only_status, read_fixture, transaction, utc};

const HAMSUD: &str = "x12_4010_315_hamsud_discharged.edi";
const CMA: &str = "x12_4010_315_cmacgm_departed_loaded.edi";
const TANGER: &str = "x12_5010_315_transshipment_arrival.edi";
const LOCKBOURNE: &str = "x12_7010_315_empty_arrival_crlf.edi";

#[test]
fn a_4010_interchange_without_line_breaks_gives_its_envelope_facts() {
    let interchange = read_fixture(HAMSUD);
    assert_eq!(interchange.syntax, Syntax::X12);
    let envelope = &interchange.envelope;
    assert_eq!(envelope.sender_qualifier.as_deref(), Some("ZZ"));
    assert_eq!(envelope.sender_id, "HAMSUD");
    assert_eq!(envelope.receiver_id, "GSCL");
    assert_eq!(envelope.control_number, "000720857");
    assert_eq!(envelope.version, "00401");
    assert!(!envelope.test);
    assert_eq!(envelope.separators.element, '*');
    assert_eq!(envelope.separators.component, '>');
    assert_eq!(envelope.separators.segment, '~');
    assert_eq!(envelope.separators.repetition, None);
    assert!(!envelope.separators.line_breaks);
    assert_eq!(interchange.groups.len(), 1);
    assert_eq!(interchange.groups[0].functional_id, "QO");
    assert_eq!(interchange.groups[0].control_number, "720857");
    assert_eq!(interchange.groups[0].version, "004010");
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
}

#[test]
fn a_315_discharge_reads_its_status_place_and_time() {
    let interchange = read_fixture(HAMSUD);
    let transaction = transaction(&interchange, 0);
    assert_eq!(transaction.set_id, "315");
    assert_eq!(transaction.control_number, "1883403");
    // Querétaro is inland, in no port table: UN/LOCODE's places give its zone.
    assert!(transaction.notes.is_empty(), "{:?}", transaction.notes);
    assert_eq!(transaction.segments.len(), 19);
    assert_eq!(
        transaction.segments[1],
        "B4***UV*20221121*0124**MRSU*437163*L*45G1*MXZLO*UN*9"
    );

    let status = only_status(&interchange);
    assert_eq!(status.code, "UV");
    assert_eq!(
        status.mapping.as_ref().and_then(|row| row.event),
        Some(DcsaCode::Disc)
    );
    assert_eq!(status.classifier, Classifier::Actual);
    assert_eq!(status.location.locode.as_deref(), Some("MXZLO"));
    assert_eq!(status.location.name.as_deref(), Some("MANZANILLO"));
    assert_eq!(status.location_role, Some(LocationRole::Discharge));
    let time = status.time.as_ref().expect("a status time");
    assert_eq!(time.local, local(2022, 11, 21, 1, 24, 0));
    assert_eq!(time.zone.as_deref(), Some("America/Mexico_City"));
    assert_eq!(time.utc, Some(utc(2022, 11, 21, 7, 24, 0)));
}

#[test]
fn a_315_gives_its_references_equipment_and_vessel() {
    let interchange = read_fixture(HAMSUD);
    let status = only_status(&interchange);
    let references = &status.references;
    assert_eq!(references.bills_of_lading, ["SUDUN2SL008733AF"]);
    assert_eq!(references.bookings, ["2SOL008733"]);
    assert_eq!(references.container.as_deref(), Some("MRSU4371639"));
    assert!(status.container_valid);
    assert_eq!(references.scac.as_deref(), Some("SUDU"));
    assert_eq!(references.seals, ["5512862"]);
    assert_eq!(status.iso_size_type.as_deref(), Some("45G1"));
    assert_eq!(status.empty_indicator, Some(EmptyIndicator::Laden));
    let transport = status.transport.as_ref().expect("Q2");
    assert_eq!(transport.name.as_deref(), Some("MAERSK STEPNICA"));
    assert_eq!(transport.imo.as_deref(), Some("9352004"));
    assert_eq!(transport.voyage.as_deref(), Some("242S"));
    assert_eq!(transport.mode, Some(ModeOfTransport::Vessel));
}

#[test]
fn each_r4_loop_is_a_port_call_with_actual_or_estimated_times() {
    let interchange = read_fixture(HAMSUD);
    let status = only_status(&interchange);
    let calls: Vec<(LocationRole, Option<&str>)> = status
        .port_calls
        .iter()
        .map(|call| (call.role.clone(), call.location.locode.as_deref()))
        .collect();
    assert_eq!(
        calls,
        [
            (LocationRole::Loading, Some("KRPUS")),
            (LocationRole::Discharge, Some("MXZLO")),
            (LocationRole::FinalDelivery, Some("MXQRO")),
            (LocationRole::Activity, Some("MXZLO")),
        ]
    );
    let pusan = &status.port_calls[0].times[0];
    assert_eq!(pusan.qualifier, "140");
    assert_eq!(pusan.classifier, Some(Classifier::Actual));
    // 12:55 in Busan (UTC+9).
    assert_eq!(pusan.time.utc, Some(utc(2022, 11, 3, 3, 55, 0)));
    let queretaro = &status.port_calls[2].times[0];
    assert_eq!(queretaro.classifier, Some(Classifier::Estimated));
    assert_eq!(queretaro.time.local, local(2022, 11, 25, 23, 0, 0));
    // Central Mexico, UTC-6 (no daylight saving after October 2022).
    assert_eq!(queretaro.time.zone.as_deref(), Some("America/Mexico_City"));
    assert_eq!(queretaro.time.utc, Some(utc(2022, 11, 26, 5, 0, 0)));
}

#[test]
fn a_315_discharge_becomes_a_dcsa_disc_event() {
    let interchange = read_fixture(HAMSUD);
    let event = only_status(&interchange)
        .to_carrier_event()
        .expect("UV is a DCSA event");
    assert_eq!(event.kind, EventKind::Equipment);
    assert_eq!(event.dcsa_code, DcsaCode::Disc);
    assert_eq!(event.classifier, Classifier::Actual);
    assert_eq!(event.event_datetime, utc(2022, 11, 21, 7, 24, 0));
    assert_eq!(event.equipment_reference.as_deref(), Some("MRSU4371639"));
    assert_eq!(event.iso_equipment_code.as_deref(), Some("45G1"));
    assert_eq!(event.empty_indicator, Some(EmptyIndicator::Laden));
    assert_eq!(event.un_location_code.as_deref(), Some("MXZLO"));
    assert_eq!(event.mode_of_transport(), Some(ModeOfTransport::Vessel));
    assert_eq!(event.route_hint, Some(RouteHint::PortOfDischarge));
    let call = event.transport_call.as_ref().expect("a transport call");
    assert_eq!(call.vessel_imo.as_deref(), Some("9352004"));
    assert_eq!(call.carrier_export_voyage_number.as_deref(), Some("242S"));
    assert_eq!(
        event
            .document_numbers(DocumentType::TransportDocument)
            .collect::<Vec<_>>(),
        ["SUDUN2SL008733AF"]
    );
    assert_eq!(
        event
            .document_numbers(DocumentType::Booking)
            .collect::<Vec<_>>(),
        ["2SOL008733"]
    );
}

#[test]
fn the_same_status_read_twice_has_the_same_event_id() {
    let first = only_status(&read_fixture(HAMSUD)).to_carrier_event();
    let second = only_status(&read_fixture(HAMSUD)).to_carrier_event();
    let id = first.expect("an event").event_id;
    assert!(id.is_some());
    assert_eq!(id, second.expect("an event").event_id);
}

#[test]
fn two_transactions_in_one_group_read_separately_with_newline_terminators() {
    let interchange = read_fixture(CMA);
    assert!(interchange.envelope.separators.line_breaks);
    assert_eq!(interchange.transactions.len(), 2);
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
    let codes: Vec<&str> = interchange.statuses().map(|s| s.code.as_str()).collect();
    assert_eq!(codes, ["VD", "AE"]);
    let events: Vec<DcsaCode> = interchange
        .statuses()
        .map(|status| status.to_carrier_event().expect("an event").dcsa_code)
        .collect();
    assert_eq!(events, [DcsaCode::Depa, DcsaCode::Load]);
}

#[test]
fn a_vessel_departure_is_read_at_its_activity_location_in_local_time() {
    let interchange = read_fixture(CMA);
    let departure = transaction(&interchange, 0)
        .statuses
        .first()
        .expect("a status");
    assert_eq!(departure.location.locode.as_deref(), Some("HKHKG"));
    assert_eq!(
        departure.location.name.as_deref(),
        Some("COSCO HIT TERMINAL LTD")
    );
    assert_eq!(departure.location_role, Some(LocationRole::Activity));
    // 12:42 in Hong Kong (UTC+8).
    assert_eq!(
        departure.time.as_ref().and_then(|t| t.utc),
        Some(utc(2018, 10, 12, 4, 42, 0))
    );
    assert_eq!(
        departure.references.container.as_deref(),
        Some("CMAU5127498")
    );
    assert_eq!(departure.iso_size_type.as_deref(), Some("4500"));
    assert_eq!(departure.references.scac, None, "CMACGM is no SCAC");
    let transport = departure.transport.as_ref().expect("Q2");
    assert_eq!(transport.imo.as_deref(), Some("9450612"));
    assert_eq!(transport.voyage.as_deref(), Some("0PG23E1MA"));
    assert_eq!(transport.name.as_deref(), Some("CMA CGM LA SCALA"));
}

#[test]
fn a_dtm_without_time_code_is_read_in_its_places_zone() {
    let interchange = read_fixture(CMA);
    let departure = transaction(&interchange, 0)
        .statuses
        .first()
        .expect("a status");
    let laem_chabang = departure
        .port_calls
        .iter()
        .find(|call| call.role == LocationRole::Loading)
        .expect("R4*L");
    // DTM*140*20180922*1200 with no time code, at Laem Chabang (UTC+7).
    assert_eq!(
        laem_chabang.times[0].time.utc,
        Some(utc(2018, 9, 22, 5, 0, 0))
    );
}

#[test]
fn a_5010_envelope_reads_like_a_4010_one() {
    let interchange = read_fixture(TANGER);
    assert_eq!(interchange.envelope.version, "00501");
    assert_eq!(interchange.envelope.separators.repetition, Some('^'));
    assert_eq!(interchange.groups[0].version, "005010");
    let status = only_status(&interchange);
    assert_eq!(status.code, "VA");
    assert_eq!(
        status.mapping.as_ref().and_then(|row| row.event),
        Some(DcsaCode::Arri)
    );
}

#[test]
fn an_arrival_at_an_r4_transshipment_port_is_a_transshipment() {
    let interchange = read_fixture(TANGER);
    let status = only_status(&interchange);
    assert_eq!(status.location.locode.as_deref(), Some("MAPTM"));
    assert_eq!(
        status.location.name.as_deref(),
        Some("APM TERMINALS TANGER MED")
    );
    assert_eq!(status.location_role, Some(LocationRole::Transshipment));
    let transport = status.transport.as_ref().expect("Q2");
    assert_eq!(transport.imo.as_deref(), Some("9633999"));
    assert_eq!(transport.name.as_deref(), Some("CAP SAN MALEAS"));
}

#[test]
fn a_transshipment_arrival_at_a_port_missing_from_the_port_table_is_read_in_its_countrys_zone() {
    // Tanger Med is in no port table; Morocco has one zone (tzdata's zone.tab), UTC+1
    // outside Ramadan.
    let interchange = read_fixture(TANGER);
    let status = only_status(&interchange);
    let time = status.time.as_ref().expect("a status time");
    assert_eq!(time.local, local(2022, 11, 14, 14, 50, 0));
    assert_eq!(time.zone.as_deref(), Some("Africa/Casablanca"));
    assert_eq!(time.utc, Some(utc(2022, 11, 14, 13, 50, 0)));
    let event = status.to_carrier_event().expect("VA is an event");
    assert_eq!(event.dcsa_code, DcsaCode::Arri);
    assert_eq!(event.event_datetime, utc(2022, 11, 14, 13, 50, 0));
    let notes = &transaction(&interchange, 0).notes;
    assert!(
        !notes.contains(&Note::NoTimeZone("MAPTM".to_owned())),
        "{notes:?}"
    );
}

/// The LOCKBOURNE sample with `from` replaced by `to`.
fn lockbourne_with(from: &str, to: &str) -> tidemark_edi::Interchange {
    let text = String::from_utf8(fixture(LOCKBOURNE)).expect("ASCII");
    assert!(text.contains(from), "{from}");
    tidemark_edi::read(text.replace(from, to).as_bytes()).expect("readable")
}

#[test]
fn a_city_status_place_is_read_in_the_zone_of_its_only_namesake_in_the_routes_country() {
    // B4-11/12 `LOCKBOURNE`/`CI`: no UN/LOCODE, no state, no country. Every R4 of the
    // transaction is in the United States (USMEM, USDAL), and UN/LOCODE's one US place of
    // that name is Lockbourne, Ohio (USLCK), wholly Eastern: 08:07 EDT is 12:07 UTC.
    let interchange = read_fixture(LOCKBOURNE);
    let status = only_status(&interchange);
    let time = status.time.as_ref().expect("a status time");
    assert_eq!(time.local, local(2022, 9, 1, 8, 7, 0));
    assert_eq!(time.zone.as_deref(), Some("America/New_York"));
    assert_eq!(time.utc, Some(utc(2022, 9, 1, 12, 7, 0)));
    let notes = &transaction(&interchange, 0).notes;
    assert!(notes.is_empty(), "{notes:?}");
}

#[test]
fn a_vessel_arrival_at_a_city_with_a_known_zone_is_an_event() {
    let interchange = read_fixture(LOCKBOURNE);
    let event = only_status(&interchange)
        .to_carrier_event()
        .expect("VA with a UTC time is an arrival");
    assert_eq!(event.dcsa_code, DcsaCode::Arri);
    assert_eq!(event.event_datetime, utc(2022, 9, 1, 12, 7, 0));
    assert_eq!(event.empty_indicator, Some(EmptyIndicator::Empty));
    // The place is named, not coded: no UN/LOCODE is invented for it.
    assert_eq!(event.un_location_code, None);
}

#[test]
fn a_city_whose_namesakes_lie_in_several_zones_keeps_its_local_time_and_says_why() {
    // Portland: Maine, Oregon, Arkansas, Indiana… no one zone, and no state to choose.
    let interchange = lockbourne_with("*LOCKBOURNE*CI*", "*PORTLAND*CI*");
    let status = only_status(&interchange);
    let time = status.time.as_ref().expect("a status time");
    assert_eq!(time.local, local(2022, 9, 1, 8, 7, 0));
    assert_eq!(time.utc, None);
    assert_eq!(
        status.to_carrier_event(),
        Err(NotAnEvent::NoUtcTime("VA".to_owned()))
    );
    let notes = &transaction(&interchange, 0).notes;
    assert!(
        notes.iter().any(|note| matches!(
            note,
            Note::NoZoneForCity { city, country, .. }
                if city == "PORTLAND" && country.as_deref() == Some("US")
        )),
        "{notes:?}"
    );
}

#[test]
fn a_city_not_listed_in_the_routes_country_is_not_guessed() {
    let interchange = lockbourne_with("*LOCKBOURNE*CI*", "*NOWHERE ATALL*CI*");
    let status = only_status(&interchange);
    assert_eq!(status.time.as_ref().and_then(|time| time.utc), None);
    let notes = &transaction(&interchange, 0).notes;
    assert!(
        notes
            .iter()
            .any(|note| matches!(note, Note::NoZoneForCity { .. })),
        "{notes:?}"
    );
}

#[test]
fn a_city_on_a_route_through_several_countries_names_no_country_and_is_not_guessed() {
    // The port of loading moved to Vancouver: the route no longer says which country
    // LOCKBOURNE is in.
    let interchange = lockbourne_with("R4*L*UN*USMEM*", "R4*L*UN*CAVAN*");
    let status = only_status(&interchange);
    assert_eq!(status.time.as_ref().and_then(|time| time.utc), None);
    let notes = &transaction(&interchange, 0).notes;
    assert!(
        notes.iter().any(|note| matches!(
            note,
            Note::NoZoneForCity { city, country: None, .. } if city == "LOCKBOURNE"
        )),
        "{notes:?}"
    );
}

#[test]
fn a_city_status_whose_activity_dtm_gives_a_time_code_is_read_in_that_zone() {
    // An activity R4 naming the same city, whose DTM says Pacific time: no place zone is
    // needed. 08:07 PDT is 15:07 UTC.
    let text = String::from_utf8(fixture(LOCKBOURNE))
        .expect("ASCII")
        .replace("*LOCKBOURNE*CI*", "*PORTLAND*CI*")
        .replace(
            "SE*9*00001~",
            "R4*5*CI*PORTLAND*PORTLAND*US~\r\nDTM*140*20220901*0807*PT~\r\nSE*11*00001~",
        );
    let interchange = tidemark_edi::read(text.as_bytes()).expect("readable");
    let status = only_status(&interchange);
    let time = status.time.as_ref().expect("a status time");
    assert_eq!(time.utc, Some(utc(2022, 9, 1, 15, 7, 0)));
}

#[test]
fn a_trailer_whose_control_number_differs_is_noted_not_fatal() {
    let interchange = read_fixture(TANGER);
    let notes = &transaction(&interchange, 0).notes;
    assert!(
        notes.contains(&Note::TrailerControlNumber {
            header: "33366799".to_owned(),
            trailer: "33366742".to_owned(),
        }),
        "{notes:?}"
    );
}

#[test]
fn two_valid_but_different_container_numbers_keep_the_b4_one_and_are_noted() {
    let interchange = read_fixture(TANGER);
    let status = only_status(&interchange);
    assert_eq!(status.references.container.as_deref(), Some("TCKU7248807"));
    let notes = &transaction(&interchange, 0).notes;
    assert!(
        notes.contains(&Note::ConflictingContainer {
            kept: "TCKU7248807".to_owned(),
            other: "TCKU7248999".to_owned(),
        }),
        "{notes:?}"
    );
}

#[test]
fn a_7010_envelope_with_crlf_terminators_reads() {
    let interchange = read_fixture(LOCKBOURNE);
    assert_eq!(interchange.envelope.version, "00701");
    assert_eq!(interchange.groups[0].version, "007010");
    assert!(interchange.envelope.separators.line_breaks);
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
    let status = only_status(&interchange);
    assert_eq!(status.code, "VA");
    assert_eq!(status.empty_indicator, Some(EmptyIndicator::Empty));
    assert_eq!(status.references.container.as_deref(), Some("GMCU6094137"));
    // As published, the check digit 7 does not match GMCU609413 (it would be 5).
    assert!(!status.container_valid);
    let transport = status.transport.as_ref().expect("Q2");
    assert_eq!(transport.imo.as_deref(), Some("9330141"));
    assert_eq!(transport.voyage.as_deref(), Some("202N"));
    assert_eq!(transport.name.as_deref(), Some("MARIM"));
}

#[test]
fn a_city_status_location_is_kept_as_named_with_its_qualifier() {
    let interchange = read_fixture(LOCKBOURNE);
    let status = only_status(&interchange);
    assert_eq!(status.location.locode, None);
    assert_eq!(status.location.other_id.as_deref(), Some("LOCKBOURNE"));
    assert_eq!(status.location.other_qualifier.as_deref(), Some("CI"));
    // The country it was looked up in is the route's, not the segment's: none is recorded.
    assert_eq!(status.location.country, None);
    assert_eq!(status.location.subdivision, None);
}

#[test]
fn crlf_lf_and_no_line_breaks_read_the_same_statuses() {
    let crlf = crate::fixture(LOCKBOURNE);
    let text = String::from_utf8(crlf.clone()).expect("ASCII");
    let lf = text.replace("\r\n", "\n");
    let none = text.replace("\r\n", "");
    let read = |bytes: &[u8]| {
        tidemark_edi::read(bytes)
            .expect("readable")
            .statuses()
            .cloned()
            .collect::<Vec<_>>()
    };
    let expected = read(&crlf);
    assert_eq!(read(lf.as_bytes()), expected);
    assert_eq!(read(none.as_bytes()), expected);
}

#[test]
fn other_separators_declared_in_the_isa_read_the_same() {
    let text = String::from_utf8(crate::fixture(HAMSUD)).expect("ASCII");
    let swapped = text.replace('*', "|").replace('~', "\n");
    let original = tidemark_edi::read(text.as_bytes()).expect("readable");
    let other = tidemark_edi::read(swapped.as_bytes()).expect("readable");
    assert_eq!(other.envelope.separators.element, '|');
    assert_eq!(other.envelope.separators.segment, '\n');
    let codes = |interchange: &tidemark_edi::Interchange| {
        interchange
            .statuses()
            .map(|s| (s.code.clone(), s.time.clone(), s.references.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(codes(&other), codes(&original));
}

#[test]
fn a_us_time_code_is_read_in_that_zone() {
    let text = String::from_utf8(crate::fixture(HAMSUD)).expect("ASCII");
    // The activity location's DTM with Pacific time instead of local time.
    let pacific = text.replace("DTM*140*20221121*012400*LT", "DTM*140*20221121*012400*PT");
    let interchange = tidemark_edi::read(pacific.as_bytes()).expect("readable");
    let status = only_status(&interchange);
    // 01:24 PST (UTC-8) in November.
    assert_eq!(
        status.time.as_ref().and_then(|t| t.utc),
        Some(utc(2022, 11, 21, 9, 24, 0))
    );
}

/// The Hamburg Süd discharge with one more N9.
fn hamsud_with_n9(n9: &str) -> tidemark_edi::Interchange {
    let text = String::from_utf8(fixture(HAMSUD)).expect("ASCII");
    let text = text.replace("N9*SN*5512862~", &format!("N9*SN*5512862~{n9}~"));
    tidemark_edi::read(text.as_bytes()).expect("an interchange")
}

#[test]
fn a_315_n9_rr_names_the_rail_carrier() {
    let interchange = hamsud_with_n9("N9*RR*FXE");
    let status = only_status(&interchange);
    assert_eq!(status.rail_carrier_scac.as_deref(), Some("FXE"));
}

#[test]
fn a_vessel_discharge_leaves_its_railroads_leg_to_its_place() {
    let interchange = hamsud_with_n9("N9*RR*FXE");
    let status = only_status(&interchange);
    let railroad = status.railroad().expect("N9*RR");
    assert_eq!(railroad.leg, None);
    let facts = status.railroad_facts().expect("UV is no terminal code");
    assert!(facts.railroad_only);
    assert_eq!(facts.location.as_deref(), Some("MXZLO"));
}

#[test]
fn an_n9_rr_that_is_no_scac_names_no_rail_carrier() {
    let interchange = hamsud_with_n9("N9*RR*FERROMEX SA DE CV");
    let status = only_status(&interchange);
    assert_eq!(status.rail_carrier_scac, None);
    assert_eq!(status.railroad_facts(), None);
}
