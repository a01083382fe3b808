//! Variants the standards allow that the public samples do not show, on messages written
//! here from the segment definitions (X12 element 1250 and 623, the 315 R4 loop of 5010 and
//! later, the IFTSTA status group): each test says which variant it stands for.

use tidemark_carriers::{Classifier, EmptyIndicator};
use tidemark_edi::{LocationRole, read};

use crate::{local, utc};

/// A 315 interchange around `body` (the segments between ST and SE, `~`-terminated).
fn x12_315(body: &str) -> Vec<u8> {
    let count = body.matches('~').count() + 2;
    format!(
        "ISA*00*          *00*          *ZZ*SENDER         *ZZ*RECEIVER       *230101*1200*^*00501*000000001*0*P*>~\
         GS*QO*SENDER*RECEIVER*20230101*1200*1*X*005010~ST*315*0001~{body}SE*{count}*0001~GE*1*1~IEA*1*000000001~"
    )
    .into_bytes()
}

/// An IFTSTA D.99B interchange around `body` (the segments between UNH and UNT).
fn iftsta(body: &str) -> Vec<u8> {
    let count = body.matches('\'').count() + 2;
    format!(
        "UNB+UNOA:2+SENDER:ZZZ+RECEIVER:ZZZ+230101:1200+1'UNH+1+IFTSTA:D:99B:UN'{body}UNT+{count}+1'UNZ+1+1'"
    )
    .into_bytes()
}

#[test]
fn a_dtm_giving_its_date_and_time_as_a_period_is_read() {
    // DTM05 `DT` (CCYYMMDDHHMM) with the value in DTM06, DTM02 and DTM03 left empty.
    let interchange = read(&x12_315(
        "B4***VA*20230105*0800**MSCU*123456*L*45G1*USLAX*UN~R4*5*UN*USLAX*LOS ANGELES*US~DTM*140***LT*DT*202301050800~",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    let arrival = &status.port_calls[0].times[0];
    assert_eq!(arrival.time.local, local(2023, 1, 5, 8, 0, 0));
    assert_eq!(arrival.classifier, Some(Classifier::Actual));
    assert_eq!(arrival.time.utc, Some(utc(2023, 1, 5, 16, 0, 0)));
}

#[test]
fn a_v9_inside_an_r4_loop_does_not_end_it() {
    let interchange = read(&x12_315(
        "B4***VD*20230105*0800**MSCU*123456*L*45G1*CNSHA*UN~R4*L*UN*CNSHA*SHANGHAI*CN~DTM*139*20230104*2000*LT~V9*VD~DTM*140*20230105*0800*LT~",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    assert_eq!(status.port_calls[0].times.len(), 2);
    // The actual departure at the status place and day makes the status actual.
    assert_eq!(status.classifier, Classifier::Actual);
}

#[test]
fn a_numbered_time_code_reads_as_its_offset_from_utc() {
    // Element 623 `08` is ISO P08: UTC+8.
    let interchange = read(&x12_315(
        "B4***AE*20230105*0800**MSCU*123456*L*45G1*CNSHA*UN~R4*5*UN*CNSHA*SHANGHAI*CN~DTM*140*20230105*0800*08~",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    let time = status.time.as_ref().expect("a time");
    assert_eq!(time.zone.as_deref(), Some("+08:00"));
    assert_eq!(time.utc, Some(utc(2023, 1, 5, 0, 0, 0)));
}

#[test]
fn a_vessel_code_written_with_an_imo_prefix_is_the_imo_number() {
    let interchange = read(&x12_315(
        "B4***VD*20230105*0800**MSCU*123456*L*45G1*CNSHA*UN~Q2*IMO9352004********242S***I*MAERSK STEPNICA~",
    ))
    .expect("readable");
    let transport = interchange
        .statuses()
        .next()
        .and_then(|s| s.transport.clone());
    let transport = transport.expect("Q2");
    assert_eq!(transport.imo.as_deref(), Some("9352004"));
    assert_eq!(transport.code, None);
}

#[test]
fn an_iftsta_status_naming_two_containers_is_one_status_per_container() {
    let interchange = read(&iftsta(
        "BGM+23+REF1+9'CNI+1+BL1'STS+1+AE::ZZZ:LOADED ON VESSEL'RFF+BM:BL1'DTM+334:202301050800:203'LOC+175+CNSHA:139:6'\
         TDT+20+242S+1++:172+++9352004:146:11:MAERSK STEPNICA'EQD+CN+MRSU4371639+45G1:102:5+++5'EQD+CN+TRHU6936090+22G1:102:5+++4'",
    ))
    .expect("readable");
    let statuses: Vec<_> = interchange.statuses().collect();
    assert_eq!(statuses.len(), 2);
    assert_eq!(
        statuses
            .iter()
            .map(|s| s.references.container.as_deref())
            .collect::<Vec<_>>(),
        [Some("MRSU4371639"), Some("TRHU6936090")]
    );
    assert_eq!(statuses[0].iso_size_type.as_deref(), Some("45G1"));
    assert_eq!(statuses[1].iso_size_type.as_deref(), Some("22G1"));
    assert_eq!(statuses[0].empty_indicator, Some(EmptyIndicator::Laden));
    assert_eq!(statuses[1].empty_indicator, Some(EmptyIndicator::Empty));
    for status in &statuses {
        assert_eq!(status.code, "AE");
        assert_eq!(status.references.bills_of_lading, ["BL1"]);
        assert_eq!(status.location.locode.as_deref(), Some("CNSHA"));
        assert_eq!(
            status.time.as_ref().map(|t| t.utc),
            Some(Some(utc(2023, 1, 5, 0, 0, 0)))
        );
        assert!(status.container_valid);
    }
}

#[test]
fn an_iftsta_status_without_loc_175_is_at_its_one_own_loc() {
    // The status group's LOC says where the status occurred, whatever its qualifier.
    let interchange = read(&iftsta(
        "BGM+23+REF1+9'CNI+1+BL1'STS+1+UV'DTM+334:202301050800:203'LOC+11+NLRTM:139:6:ROTTERDAM'EQD+CN+MRSU4371639'",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    assert_eq!(status.location.locode.as_deref(), Some("NLRTM"));
    assert_eq!(status.location.name.as_deref(), Some("ROTTERDAM"));
    assert_eq!(status.location_role, Some(LocationRole::Discharge));
    assert_eq!(
        status.time.as_ref().and_then(|t| t.utc),
        Some(utc(2023, 1, 5, 7, 0, 0))
    );
}

#[test]
fn an_iftsta_status_with_several_own_locs_and_no_175_names_no_place() {
    let interchange = read(&iftsta(
        "BGM+23+REF1+9'CNI+1+BL1'STS+1+VD'DTM+334:202301050800:203'LOC+9+CNSHA:139:6'LOC+11+NLRTM:139:6'EQD+CN+MRSU4371639'",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    assert_eq!(status.location.locode, None);
    assert_eq!(status.port_calls.len(), 2);
}

#[test]
fn an_iftsta_date_sent_without_its_time_under_a_time_format_keeps_the_date() {
    let interchange = read(&iftsta(
        "BGM+23+REF1+9'CNI+1+BL1'STS+1+OA'DTM+334:20230105:203'LOC+175+USLAX:139:6'EQD+CN+MRSU4371639'",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    let time = status.time.as_ref().expect("the date");
    assert_eq!(time.local, local(2023, 1, 5, 0, 0, 0));
    assert!(!time.has_time);
}

#[test]
fn a_315_naming_its_vessel_in_a_v1_instead_of_q2_gives_that_vessel() {
    let interchange = read(&x12_315(
        "B4***VD*20230105*0800**MSCU*123456*L*45G1*CNSHA*UN~V1*9352004*MAERSK STEPNICA*DK*242S~",
    ))
    .expect("readable");
    let transport = interchange
        .statuses()
        .next()
        .and_then(|s| s.transport.clone());
    let transport = transport.expect("V1");
    assert_eq!(transport.name.as_deref(), Some("MAERSK STEPNICA"));
    assert_eq!(transport.imo.as_deref(), Some("9352004"));
    assert_eq!(transport.voyage.as_deref(), Some("242S"));
}

#[test]
fn an_iftsta_place_of_destination_is_the_place_of_delivery() {
    let interchange = read(&iftsta(
        "BGM+23+REF1+9'CNI+1+BL1'STS+1+D'DTM+334:202301050800:203'LOC+175+USCHI:139:6'\
         TDT+20+242S+1'LOC+8+USCHI:139:6'EQD+CN+MRSU4371639'",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    assert_eq!(status.location_role, Some(LocationRole::FinalDelivery));
}

#[test]
fn a_master_bill_of_lading_is_a_bill_of_lading() {
    let interchange = read(&x12_315(
        "B4***VD*20230105*0800**MSCU*123456*L*45G1*CNSHA*UN~N9*MB*MEDUAB123456~",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    assert_eq!(status.references.bills_of_lading, ["MEDUAB123456"]);
}

#[test]
fn a_railcar_eqd_beside_the_container_makes_no_status_of_its_own() {
    let interchange = read(&iftsta(
        "BGM+23+REF1+9'CNI+1+BL1'STS+1+AL'DTM+334:202301050800:203'LOC+175+USLAX:139:6'\
         EQD+RR+TTGX123456'EQD+CN+MRSU4371639+45G1:102:5+++5'",
    ))
    .expect("readable");
    let statuses: Vec<_> = interchange.statuses().collect();
    assert_eq!(statuses.len(), 1);
    assert_eq!(
        statuses[0].references.container.as_deref(),
        Some("MRSU4371639")
    );
}

#[test]
fn a_status_change_date_after_the_status_loc_is_still_the_status_time() {
    let interchange = read(&iftsta(
        "BGM+23+REF1+9'CNI+1+BL1'STS+1+UV'LOC+11+NLRTM:139:6'DTM+334:202301050800:203'EQD+CN+MRSU4371639'",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    assert_eq!(status.location.locode.as_deref(), Some("NLRTM"));
    assert_eq!(
        status.time.as_ref().and_then(|t| t.utc),
        Some(utc(2023, 1, 5, 7, 0, 0))
    );
}

#[test]
fn an_x12_interchange_ending_its_segments_with_line_breaks_alone_reads_as_with_tildes() {
    let original = crate::fixture("x12_4010_315_hamsud_discharged.edi");
    let expected = read(&original).expect("readable");
    for line_end in ["\n", "\r\n"] {
        let text = String::from_utf8(original.clone()).expect("ASCII");
        let rewritten = text.replace('~', line_end);
        let interchange = read(rewritten.as_bytes()).expect("readable");
        assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
        let statuses: Vec<_> = interchange.statuses().collect();
        let wanted: Vec<_> = expected.statuses().collect();
        assert_eq!(statuses, wanted, "{line_end:?}");
    }
}

#[test]
fn a_file_of_two_x12_interchanges_reads_both_with_their_own_senders() {
    let mut bytes = crate::fixture("x12_4010_315_hamsud_discharged.edi");
    bytes.extend_from_slice(b"\r\n");
    bytes.extend(crate::fixture("x12_4010_315_cmacgm_departed_loaded.edi"));
    let interchange = read(&bytes).expect("readable");
    assert_eq!(
        interchange.notes,
        [tidemark_edi::Note::FurtherInterchange {
            sender: "CMACGM".to_owned(),
            control_number: "000081466".to_owned(),
        }]
    );
    assert_eq!(interchange.groups.len(), 2);
    let statuses: Vec<(&str, &str)> = interchange
        .statuses()
        .map(|status| (status.sender.as_str(), status.code.as_str()))
        .collect();
    assert_eq!(
        statuses,
        [("HAMSUD", "UV"), ("CMACGM", "VD"), ("CMACGM", "AE")]
    );
}

#[test]
fn each_interchange_of_a_file_is_listed_with_its_own_envelope_groups_and_sets() {
    let mut bytes = crate::fixture("x12_4010_315_hamsud_discharged.edi");
    bytes.extend(crate::fixture("x12_4010_315_cmacgm_departed_loaded.edi"));
    let interchange = read(&bytes).expect("readable");
    let parts: Vec<(&str, &str, std::ops::Range<usize>, std::ops::Range<usize>)> = interchange
        .parts
        .iter()
        .map(|part| {
            (
                part.envelope.sender_id.as_str(),
                part.envelope.control_number.as_str(),
                part.groups.clone(),
                part.transactions.clone(),
            )
        })
        .collect();
    assert_eq!(
        parts,
        [
            ("HAMSUD", "000720857", 0..1, 0..1),
            ("CMACGM", "000081466", 1..2, 1..3),
        ]
    );
    assert_eq!(interchange.parts[0].envelope, interchange.envelope);
}

#[test]
fn an_input_of_one_interchange_is_one_part() {
    let interchange =
        read(&crate::fixture("iftsta_d99b_cargosmart_departed.edi")).expect("readable");
    assert_eq!(interchange.parts.len(), 1);
    assert_eq!(interchange.parts[0].envelope, interchange.envelope);
    assert_eq!(interchange.parts[0].transactions, 0..1);
}

#[test]
fn a_file_of_two_edifact_interchanges_reads_both() {
    let mut bytes = crate::fixture("iftsta_d99b_cargosmart_departed.edi");
    bytes.extend(crate::fixture("iftsta_d99b_cargosmart_departed_una.edi"));
    let interchange = read(&bytes).expect("readable");
    assert_eq!(
        interchange.notes,
        [tidemark_edi::Note::FurtherInterchange {
            sender: "IITTRR".to_owned(),
            control_number: "6771".to_owned(),
        }]
    );
    assert_eq!(interchange.statuses().count(), 2);
}

#[test]
fn the_main_carriages_carrier_names_the_line_when_no_nad_does() {
    let interchange = read(&iftsta(
        "BGM+23+REF1+9'CNI+1+BL1'STS+1+VD'DTM+334:202301050800:203'LOC+175+CNSHA:139:6'\
         TDT+20+242S+1++MAEU:172:182+++9352004:146:11:MAERSK STEPNICA'EQD+CN+MRSU4371639'",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    assert_eq!(status.references.scac.as_deref(), Some("MAEU"));
}

#[test]
fn the_dtm_at_the_b4s_own_date_and_time_decides_actual_or_estimated() {
    // The place's estimated arrival that morning, then the actual one at the B4's time.
    let interchange = read(&x12_315(
        "B4***VA*20230105*0800**MSCU*123456*L*45G1*USLAX*UN~R4*D*UN*USLAX*LOS ANGELES*US~DTM*139*20230105*0600*LT~DTM*140*20230105*0800*LT~",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    assert_eq!(status.classifier, Classifier::Actual);
}

#[test]
fn a_date_at_the_status_place_under_another_of_its_roles_counts() {
    // USSEA is the place of receipt (a January date) and of loading (the B4's day).
    let interchange = read(&x12_315(
        "B4***AE*20230205*1842**CXRU*125502*L*45R1*USSEA*UN~R4*R*UN*USSEA*SEATTLE*US~DTM*140*20230131*1134*PT~R4*L*UN*USSEA*SEATTLE*US~DTM*139*20230205*1842*PT~",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    assert_eq!(status.classifier, Classifier::Estimated);
    let time = status.time.as_ref().expect("a time");
    assert_eq!(time.zone.as_deref(), Some("America/Los_Angeles"));
}

#[test]
fn many_containers_on_a_long_route_are_copied_only_within_a_bound() {
    // 2,000 LOCs and 2,000 EQDs in one status: copying the route to every container would
    // hold four million port calls.
    let mut body = String::from("BGM+23+REF1+9'CNI+1+BL1'STS+1+AE'DTM+334:202301050800:203'");
    body.push_str("LOC+175+CNSHA:139:6'TDT+20+242S+1'");
    for _ in 0..2000 {
        body.push_str("LOC+9+CNSHA:139:6'");
    }
    for _ in 0..2000 {
        body.push_str("EQD+CN+MRSU4371639'");
    }
    let interchange = read(&iftsta(&body)).expect("readable");
    let statuses: Vec<_> = interchange.statuses().collect();
    assert!(
        !statuses.is_empty() && statuses.len() < 2000,
        "{}",
        statuses.len()
    );
    let copied: usize = statuses.iter().map(|s| s.port_calls.len()).sum();
    assert!(copied <= 2001 + 200_000, "{copied}");
}

#[test]
fn header_references_are_copied_into_many_statuses_only_within_a_bound() {
    // 1,000 header bills and 1,000 statuses: a million copies if every status took them all.
    let mut body = String::from("BGM+23+REF1+9'");
    for index in 0..1000 {
        body.push_str(&format!("RFF+BM:BL{index}'"));
    }
    body.push_str("CNI+1'");
    for _ in 0..1000 {
        body.push_str("STS+1+AE'DTM+334:202301050800:203'LOC+175+CNSHA:139:6'EQD+CN+MRSU4371639'");
    }
    let interchange = read(&iftsta(&body)).expect("readable");
    assert_eq!(interchange.statuses().count(), 1000);
    let first = interchange.statuses().next().expect("a status");
    assert_eq!(first.references.bills_of_lading.len(), 1000);
    let copied: usize = interchange
        .statuses()
        .map(|s| s.references.bills_of_lading.len())
        .sum();
    assert!(copied <= 200_000, "{copied}");
}

#[test]
fn place_of_acceptance_and_bill_of_lading_ports_take_the_roles_of_receipt_loading_and_discharge() {
    use tidemark_edi::LocationRole;
    // X12 element 115: A place of acceptance, J and K the bill of lading's ports of loading
    // and discharge (contractual); UN/EDIFACT 3227: 10 place of acceptance, 12 port of
    // discharge.
    for (code, role) in [
        ("A", LocationRole::Receipt),
        ("J", LocationRole::Loading),
        ("K", LocationRole::Discharge),
    ] {
        assert_eq!(LocationRole::from_r4(code), role, "R4 {code}");
    }
    assert_eq!(LocationRole::from_loc("10"), LocationRole::Receipt);
    assert_eq!(LocationRole::from_loc("12"), LocationRole::Discharge);
    // Codes that name no role of the shipment's route stay as sent.
    assert_eq!(
        LocationRole::from_r4("I"),
        LocationRole::Other("I".to_owned())
    );
    assert_eq!(
        LocationRole::from_loc("5"),
        LocationRole::Other("5".to_owned())
    );
}
