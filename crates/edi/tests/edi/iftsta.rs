//! EDIFACT IFTSTA D.99B and D.00B, with and without UNA.

use tidemark_carriers::{
    Classifier, DcsaCode, EmptyIndicator, EventKind, ModeOfTransport, RouteHint,
};
use tidemark_edi::{LocationRole, Note, RailLeg, Syntax};

use crate::{
    fixture, local, only_status, read_fixture, reader_with_senders_table, transaction, utc,
};

const CARGOSMART: &str = "iftsta_d99b_cargosmart_departed.edi";
const CARGOSMART_UNA: &str = "iftsta_d99b_cargosmart_departed_una.edi";
const RAIL: &str = "iftsta_d00b_rail_departed.edi";

#[test]
fn a_d99b_interchange_without_una_gives_its_envelope_facts() {
    let interchange = read_fixture(CARGOSMART);
    assert_eq!(interchange.syntax, Syntax::Edifact);
    let envelope = &interchange.envelope;
    assert_eq!(envelope.sender_id, "IITTRR");
    assert_eq!(envelope.sender_qualifier.as_deref(), Some("ZZZ"));
    assert_eq!(envelope.receiver_id, "999999");
    assert_eq!(envelope.control_number, "6771");
    assert_eq!(envelope.version, "UNOC:2");
    assert_eq!(envelope.date, "110419");
    assert_eq!(envelope.time, "0540");
    assert_eq!(envelope.separators.release, Some('?'));
    assert!(!envelope.separators.line_breaks);
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
    let message = transaction(&interchange, 0);
    assert_eq!(message.set_id, "IFTSTA");
    assert_eq!(message.control_number, "1");
    assert_eq!(message.version, "D:99B");
    assert_eq!(message.segments.len(), 18);
}

#[test]
fn an_sts_with_a_315_code_goes_through_the_315_table() {
    let interchange = read_fixture(CARGOSMART);
    let status = only_status(&interchange);
    assert_eq!(status.code, "VD");
    assert_eq!(status.code_agency.as_deref(), Some("22"));
    assert_eq!(
        status.mapping.as_ref().and_then(|row| row.event),
        Some(DcsaCode::Depa)
    );
    assert!(!status.is_drift());
}

#[test]
fn an_iftsta_status_reads_its_place_vessel_and_equipment() {
    let interchange = read_fixture(CARGOSMART);
    let status = only_status(&interchange);
    assert_eq!(status.location.locode.as_deref(), Some("CNXGG"));
    assert_eq!(status.location.name.as_deref(), Some("XINGANG"));
    assert_eq!(status.location_role, Some(LocationRole::Loading));
    let time = status.time.as_ref().expect("DTM+334");
    assert_eq!(time.local, local(2099, 4, 17, 23, 0, 0));
    assert_eq!(status.classifier, Classifier::Actual);
    let transport = status.transport.as_ref().expect("TDT+20");
    assert_eq!(transport.mode, Some(ModeOfTransport::Vessel));
    assert_eq!(transport.voyage.as_deref(), Some("9996R"));
    assert_eq!(transport.imo.as_deref(), Some("9999999"));
    assert_eq!(transport.name.as_deref(), Some("DUMP VESSEL"));
    assert_eq!(status.references.container.as_deref(), Some("ABCD1234567"));
    assert!(!status.container_valid, "D is no ISO 6346 category");
    assert_eq!(status.iso_size_type.as_deref(), Some("42G0"));
    assert_eq!(status.empty_indicator, Some(EmptyIndicator::Laden));
    assert_eq!(status.references.bills_of_lading, ["1234567890AB"]);
    assert_eq!(status.references.bookings, ["1234567890AB"]);
    assert_eq!(status.references.scac.as_deref(), Some("ABCD"));
}

/// A port call as `(role, LOCODE, [(DTM qualifier, classifier)])`.
type Call<'a> = (
    LocationRole,
    Option<&'a str>,
    Vec<(&'a str, Option<Classifier>)>,
);

#[test]
fn iftsta_route_locations_carry_their_estimated_times() {
    let interchange = read_fixture(CARGOSMART);
    let status = only_status(&interchange);
    let calls: Vec<Call> = status
        .port_calls
        .iter()
        .map(|call| {
            (
                call.role.clone(),
                call.location.locode.as_deref(),
                call.times
                    .iter()
                    .map(|dated| (dated.qualifier.as_str(), dated.classifier))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            (LocationRole::Activity, Some("CNXGG"), vec![]),
            (
                LocationRole::Loading,
                Some("CNXGG"),
                vec![("133", Some(Classifier::Estimated))]
            ),
            (
                LocationRole::Discharge,
                Some("USLGB"),
                vec![("132", Some(Classifier::Estimated))]
            ),
            (LocationRole::FinalDelivery, Some("USHOU"), vec![]),
        ]
    );
    // DTM+132:209905120000:203 at Long Beach (UTC-7 in May).
    assert_eq!(
        status.port_calls[2].times[0].time.utc,
        Some(utc(2099, 5, 12, 7, 0, 0))
    );
}

#[test]
fn an_iftsta_departure_at_a_known_port_becomes_a_dcsa_departure() {
    // Xingang is not in the reference data's ports; Tianjin (CNTSN) is.
    let text = String::from_utf8(fixture(CARGOSMART)).expect("ASCII");
    let tianjin = text.replace("LOC+175+CNXGG", "LOC+175+CNTSN");
    let interchange = tidemark_edi::read(tianjin.as_bytes()).expect("readable");
    let event = only_status(&interchange)
        .to_carrier_event()
        .expect("VD is an event");
    assert_eq!(event.kind, EventKind::Transport);
    assert_eq!(event.dcsa_code, DcsaCode::Depa);
    // 23:00 in Tianjin (UTC+8).
    assert_eq!(event.event_datetime, utc(2099, 4, 17, 15, 0, 0));
    assert_eq!(event.mode_of_transport(), Some(ModeOfTransport::Vessel));
    assert_eq!(event.route_hint, None, "CNTSN is only the activity place");
    assert_eq!(
        event.transport_call.and_then(|call| call.vessel_imo),
        Some("9999999".to_owned())
    );
}

#[test]
fn a_una_with_crlf_reads_the_same_as_the_default_separators() {
    let plain = read_fixture(CARGOSMART);
    let with_una = read_fixture(CARGOSMART_UNA);
    assert!(with_una.envelope.separators.line_breaks);
    assert_eq!(with_una.envelope.control_number, "6771");
    assert_eq!(
        with_una.statuses().cloned().collect::<Vec<_>>(),
        plain.statuses().cloned().collect::<Vec<_>>()
    );
    assert!(with_una.notes.is_empty(), "{:?}", with_una.notes);
}

#[test]
fn a_una_declaring_other_characters_reads_the_same() {
    let text = String::from_utf8(fixture(CARGOSMART)).expect("ASCII");
    let other = format!(
        "UNA|*.\\ ~{}",
        text.replace('+', "*").replace(':', "|").replace('\'', "~")
    );
    let plain = read_fixture(CARGOSMART);
    let declared = tidemark_edi::read(other.as_bytes()).expect("readable");
    assert_eq!(declared.envelope.separators.element, '*');
    assert_eq!(declared.envelope.separators.release, Some('\\'));
    assert_eq!(
        declared.statuses().cloned().collect::<Vec<_>>(),
        plain.statuses().cloned().collect::<Vec<_>>()
    );
}

#[test]
fn a_d00b_message_with_a_private_code_is_kept_raw_and_read_from_its_words() {
    let interchange = read_fixture(RAIL);
    let message = transaction(&interchange, 0);
    assert_eq!(message.version, "D:00B");
    assert_eq!(message.control_number, "2805567");
    assert!(
        message
            .notes
            .iter()
            .all(|note| !matches!(note, Note::SegmentCount { .. }))
    );
    let status = only_status(&interchange);
    assert_eq!(status.code, "P");
    assert_eq!(status.code_agency.as_deref(), Some("HS"));
    assert_eq!(
        status.description.as_deref(),
        Some("Rail Departed from In-Transit Locat")
    );
    // `P::HS` is of Hamburg Süd's own list, never read through the 315 table
    // (crate::code_lists); it is in no table, and its words say "rail departed"
    // (crate::own_words).
    assert!(!status.is_drift());
    assert_eq!(interchange.drift().count(), 0);
    let row = status.mapping.as_ref().expect("read from the words");
    assert_eq!(row.event, Some(DcsaCode::Depa));
    assert_eq!(row.mode, Some(ModeOfTransport::Rail));
    assert!(row.source.starts_with("the sender's own words: "));
}

#[test]
fn a_d00b_status_prefers_its_own_references_to_the_headers() {
    let interchange = read_fixture(RAIL);
    let status = only_status(&interchange);
    assert_eq!(status.references.container.as_deref(), Some("TRHU4561222"));
    assert_eq!(status.references.bills_of_lading, ["ABCD224O4023815X"]);
    assert_eq!(status.references.bookings, ["24O4023815"]);
    assert_eq!(status.references.scac.as_deref(), Some("ABCD"));
    assert_eq!(status.location.locode.as_deref(), Some("USSYR"));
    assert_eq!(status.location.name.as_deref(), Some("SYRACUSE"));
    assert_eq!(
        status.time.as_ref().map(|time| time.local),
        Some(local(2022, 11, 19, 7, 10, 0))
    );
    let transport = status.transport.as_ref().expect("TDT");
    assert_eq!(transport.mode, Some(ModeOfTransport::Rail));
    assert_eq!(transport.name.as_deref(), Some("CSX TRANSPORTATION"));
    assert_eq!(status.iso_size_type.as_deref(), Some("45G1"));
}

#[test]
fn a_rail_departure_from_an_inland_town_is_read_in_its_zone_and_is_an_event() {
    // Syracuse, NY (USSYR) is no port: UN/LOCODE's places put it in New York's zone. 07:10
    // on 19 November 2022 is EST, UTC-5.
    let interchange = read_fixture(RAIL);
    let status = only_status(&interchange);
    let time = status.time.as_ref().expect("DTM+334");
    assert_eq!(time.zone.as_deref(), Some("America/New_York"));
    assert_eq!(time.utc, Some(utc(2022, 11, 19, 12, 10, 0)));
    let event = status.to_carrier_event().expect("a rail departure");
    assert_eq!(event.dcsa_code, DcsaCode::Depa);
    assert_eq!(event.event_datetime, utc(2022, 11, 19, 12, 10, 0));
    assert_eq!(event.un_location_code.as_deref(), Some("USSYR"));
}

#[test]
fn a_d00b_route_gives_actual_and_estimated_times_per_place() {
    let interchange = read_fixture(RAIL);
    let status = only_status(&interchange);
    let cartagena = status
        .port_calls
        .iter()
        .find(|call| call.role == LocationRole::Loading)
        .expect("LOC+9");
    assert_eq!(cartagena.location.locode.as_deref(), Some("COCTG"));
    assert_eq!(cartagena.times[0].qualifier, "186");
    assert_eq!(cartagena.times[0].classifier, Some(Classifier::Actual));
    // 14:15 in Cartagena, Colombia (UTC-5).
    assert_eq!(
        cartagena.times[0].time.utc,
        Some(utc(2022, 11, 9, 19, 15, 0))
    );
    let new_york = status
        .port_calls
        .iter()
        .find(|call| call.role == LocationRole::Discharge)
        .expect("LOC+11");
    let qualifiers: Vec<&str> = new_york
        .times
        .iter()
        .map(|t| t.qualifier.as_str())
        .collect();
    assert_eq!(qualifiers, ["178", "133"]);
    assert!(
        status
            .port_calls
            .iter()
            .any(|call| call.role == LocationRole::Other("29".to_owned()))
    );
}

#[test]
fn a_senders_own_table_maps_its_private_code() {
    let reader = reader_with_senders_table(
        r#"
        [[code]]
        code = "P"
        meaning = "Rail departed from in-transit location"
        event = "DEPA"
        mode = "RAIL"
        source = "the sender's IFTSTA guide"
        "#,
    );
    let interchange = reader.read(&fixture(RAIL)).expect("readable");
    let status = only_status(&interchange);
    assert!(!status.is_drift());
    assert_eq!(interchange.drift().count(), 0);
    let with_zone = {
        // Syracuse is not in the reference data; the test gives the status a zone.
        let text = String::from_utf8(fixture(RAIL)).expect("ASCII");
        text.replace("DTM+334:202211190710:203", "DTM+334:202211190710+0500:303")
            .replace("+0500", "-0500")
    };
    let interchange = reader.read(with_zone.as_bytes()).expect("readable");
    let event = only_status(&interchange)
        .to_carrier_event()
        .expect("P is now an event");
    assert_eq!(event.dcsa_code, DcsaCode::Depa);
    assert_eq!(event.mode_of_transport(), Some(ModeOfTransport::Rail));
    assert_eq!(event.event_datetime, utc(2022, 11, 19, 12, 10, 0));
    assert_eq!(
        event.route_hint, None::<RouteHint>,
        "Syracuse is only the activity place"
    );
}

#[test]
fn a_unz_reference_that_differs_from_the_unb_one_is_noted() {
    let interchange = read_fixture(RAIL);
    assert!(
        interchange.notes.contains(&Note::EnvelopeControlNumber {
            trailer: "UNZ",
            header_value: "2803570".to_owned(),
            trailer_value: "2805570".to_owned(),
        }),
        "{:?}",
        interchange.notes
    );
}

#[test]
fn a_rail_tdt_names_its_carrier_by_the_c040_carrier_code() {
    let interchange = read_fixture(RAIL);
    let status = only_status(&interchange);
    // TDT+1++2+25+ABCD:172::SENDER-COMP: mode 2 (rail), carrier ABCD from code list 172.
    assert_eq!(status.rail_carrier_scac.as_deref(), Some("ABCD"));
}

#[test]
fn a_rail_departure_names_the_railroad_of_the_leg_leaving_the_port() {
    let interchange = read_fixture(RAIL);
    let railroad = only_status(&interchange).railroad().expect("a rail TDT");
    assert_eq!(railroad.scac, "ABCD");
    assert_eq!(railroad.leg, Some(RailLeg::FromPort));
}

#[test]
fn a_vessel_tdt_names_no_railroad() {
    let interchange = read_fixture(CARGOSMART);
    let status = only_status(&interchange);
    assert_eq!(status.rail_carrier_scac, None);
    assert_eq!(status.railroad(), None);
}

#[test]
fn an_eqd_before_the_consignments_first_status_is_the_container_of_its_statuses() {
    // IFTSTA releases after D.99B carry the consignment's equipment in the CNI group, before
    // its STS groups (`CNI`, `EQD`, `STS`…): each status naming none is about it.
    let text = String::from_utf8(fixture(RAIL)).expect("ASCII");
    let eqd = "EQD+CN+TRHU4561222+45G1:102:5+++5'";
    assert!(text.contains(eqd));
    let moved = text
        .replace(eqd, "")
        .replace("CNI+1'", &format!("CNI+1'\n{eqd}"));
    let interchange = tidemark_edi::read(moved.as_bytes()).expect("readable");
    let status = only_status(&interchange);
    assert_eq!(status.references.container.as_deref(), Some("TRHU4561222"));
    assert_eq!(status.iso_size_type.as_deref(), Some("45G1"));
    assert_eq!(status.empty_indicator, Some(EmptyIndicator::Laden));
    assert!(
        !transaction(&interchange, 0)
            .notes
            .iter()
            .any(|note| matches!(note, Note::ConflictingContainer { .. })),
        "the status's RFF+EQ names the same container"
    );
}

#[test]
fn a_status_naming_one_of_its_consignments_two_containers_is_about_that_one_only() {
    // The status says `RFF+EQ:TRHU4561222`: the consignment's other container did not
    // depart by rail from Syracuse.
    let text = String::from_utf8(fixture(RAIL)).expect("ASCII");
    let eqd = "EQD+CN+TRHU4561222+45G1:102:5+++5'";
    let moved = text.replace(eqd, "").replace(
        "CNI+1'",
        &format!("CNI+1'\n{eqd}\nEQD+CN+MSKU9070323+22G1+++4'"),
    );
    let interchange = tidemark_edi::read(moved.as_bytes()).expect("readable");
    let status = only_status(&interchange);
    assert_eq!(status.references.container.as_deref(), Some("TRHU4561222"));
    // The consignment's EQD for that container still gives its size-type and fullness.
    assert_eq!(status.iso_size_type.as_deref(), Some("45G1"));
    assert_eq!(status.empty_indicator, Some(EmptyIndicator::Laden));
}

#[test]
fn a_consignments_two_containers_give_each_of_its_statuses_naming_none_twice() {
    let text = String::from_utf8(fixture(RAIL)).expect("ASCII");
    let eqd = "EQD+CN+TRHU4561222+45G1:102:5+++5'";
    let moved = text
        .replace(eqd, "")
        .replace("RFF+EQ:TRHU4561222'", "")
        .replace(
            "CNI+1'",
            &format!("CNI+1'\n{eqd}\nEQD+CN+MSKU9070323+22G1+++4'"),
        );
    let interchange = tidemark_edi::read(moved.as_bytes()).expect("readable");
    let containers: Vec<Option<&str>> = interchange
        .statuses()
        .map(|status| status.references.container.as_deref())
        .collect();
    assert_eq!(containers, [Some("TRHU4561222"), Some("MSKU9070323")]);
    let second = interchange.statuses().nth(1).expect("two statuses");
    assert_eq!(second.empty_indicator, Some(EmptyIndicator::Empty));
}
