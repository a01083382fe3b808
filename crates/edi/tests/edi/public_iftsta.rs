//! Public IFTSTA samples beyond the first fixtures: CargoSmart's D.96A status reports, once
//! with line feeds as the only segment terminator and once with apostrophes. Each expectation
//! is what an EDI coordinator reads from the message.

use tidemark_carriers::{Classifier, EmptyIndicator, ModeOfTransport};
use tidemark_edi::{LocationRole, Syntax};

use crate::{local, read_fixture, transaction, utc};

const NEWLINES: &str = "iftsta_d96a_cargosmart_newline_terminated.edi";
const QUOTES: &str = "iftsta_d96a_cargosmart_arrivals.edi";

#[test]
fn an_edifact_interchange_ending_its_segments_with_line_feeds_alone_is_read() {
    let interchange = read_fixture(NEWLINES);
    assert_eq!(interchange.syntax, Syntax::Edifact);
    let envelope = &interchange.envelope;
    assert_eq!(envelope.sender_id, "XXXXXXXX");
    assert_eq!(envelope.receiver_id, "CCCCCCCCC");
    assert_eq!(envelope.receiver_qualifier.as_deref(), Some("01"));
    assert_eq!(envelope.control_number, "2031375");
    assert_eq!(envelope.version, "UNOA:2");
    assert!(envelope.test);
    assert_eq!(envelope.separators.segment, '\n');
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
    assert_eq!(interchange.transactions.len(), 5);
    assert_eq!(interchange.errors().count(), 0);
    for index in 0..5 {
        let message = transaction(&interchange, index);
        assert_eq!(message.version, "D:96A");
        assert!(message.notes.is_empty(), "{index}: {:?}", message.notes);
    }
    assert_eq!(interchange.statuses().count(), 10);
}

#[test]
fn a_number_from_no_named_list_is_read_as_recommendation_24_arrival_completed() {
    let interchange = read_fixture(NEWLINES);
    assert!(interchange.statuses().all(|status| status.code == "1"));
    assert!(
        interchange
            .statuses()
            .all(|status| status.code_agency.is_none())
    );
    // UN/EDIFACT C555 names UN/ECE Recommendation 24 for transport status: `1` is "Arrival,
    // completed", not an unknown code (element 157's codes are letters).
    assert_eq!(interchange.drift().count(), 0);
    let status = &transaction(&interchange, 0).statuses[0];
    let mapping = status.mapping.as_ref().expect("a Recommendation 24 row");
    assert_eq!(mapping.list.as_deref(), Some("6"));
    let event = status.to_carrier_event().expect("an arrival");
    assert_eq!(event.dcsa_code, tidemark_carriers::DcsaCode::Arri);
    assert_eq!(event.event_datetime, utc(2017, 1, 13, 4, 12, 0));
}

#[test]
fn a_d96a_status_is_at_its_routing_loc_when_it_has_no_loc_175() {
    let interchange = read_fixture(NEWLINES);
    let status = &transaction(&interchange, 0).statuses[0];
    assert_eq!(status.location.locode.as_deref(), Some("HKHKG"));
    assert_eq!(status.location.name.as_deref(), Some("HONG KONG"));
    // Hong Kong is the port of discharge (LOC+11) and the place of delivery (LOC+7).
    assert_eq!(status.location_role, Some(LocationRole::Discharge));
    let time = status.time.as_ref().expect("DTM+334");
    assert_eq!(time.local, local(2017, 1, 13, 12, 12, 0));
    assert_eq!(time.utc, Some(utc(2017, 1, 13, 4, 12, 0)));
    assert_eq!(status.classifier, Classifier::Actual);
}

#[test]
fn a_d96a_status_gives_its_references_carrier_vessel_and_equipment() {
    let interchange = read_fixture(NEWLINES);
    let status = &transaction(&interchange, 0).statuses[0];
    let references = &status.references;
    assert_eq!(references.bills_of_lading, ["JEQSATL161162937"]);
    assert_eq!(references.bookings, ["47738741"]);
    // The header's NAD+CA+EWN3 is no SCAC; the status's own carrier (agency 166) is.
    assert_eq!(references.scac.as_deref(), Some("HSSU"));
    let others: Vec<&str> = references.other.iter().map(|(q, _)| q.as_str()).collect();
    assert_eq!(others, ["CN", "IT", "OP"]);
    assert_eq!(references.container.as_deref(), Some("E1236154327"));
    assert!(!status.container_valid, "anonymised by the sample's author");
    assert_eq!(status.iso_size_type.as_deref(), Some("45G1"));
    assert_eq!(status.empty_indicator, Some(EmptyIndicator::Laden));
    let transport = status.transport.as_ref().expect("TDT+20");
    assert_eq!(transport.mode, Some(ModeOfTransport::Vessel));
    assert_eq!(transport.name.as_deref(), Some("MROA BETAGA"));
    assert_eq!(transport.imo.as_deref(), Some("9251999"));
    assert_eq!(transport.voyage.as_deref(), Some("031A"));
}

#[test]
fn each_consignment_of_a_message_is_a_status_of_its_own() {
    let interchange = read_fixture(NEWLINES);
    let message = transaction(&interchange, 1);
    let containers: Vec<Option<&str>> = message
        .statuses
        .iter()
        .map(|status| status.references.container.as_deref())
        .collect();
    assert_eq!(containers, [Some("SES695414"), Some("TTNU4434087")]);
    let second = &message.statuses[1];
    assert!(second.container_valid);
    assert_eq!(second.references.bookings, ["34652476"]);
    assert_eq!(second.references.scac.as_deref(), Some("JEQS"));
}

#[test]
fn the_d96a_transport_dates_after_its_last_loc_are_the_departure_and_arrival_of_the_voyage() {
    let interchange = read_fixture(NEWLINES);
    let status = &transaction(&interchange, 0).statuses[0];
    let calls: Vec<(LocationRole, Option<&str>, Vec<&str>)> = status
        .port_calls
        .iter()
        .map(|call| {
            (
                call.role.clone(),
                call.location.locode.as_deref(),
                call.times.iter().map(|t| t.qualifier.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            (LocationRole::Other("92".to_owned()), Some("HKHKG"), vec![]),
            // LOC+10: the place of acceptance, where the carrier took the box over.
            (LocationRole::Receipt, Some("USGXX"), vec![]),
            (LocationRole::Loading, Some("USCHS"), vec!["133", "186"]),
            (LocationRole::Discharge, Some("HKHKG"), vec!["178", "132"]),
            (LocationRole::FinalDelivery, Some("HKHKG"), vec![]),
        ]
    );
    let departure = &status.port_calls[2].times[1];
    assert_eq!(departure.classifier, Some(Classifier::Actual));
    // 16:00 in Charleston, South Carolina, in December: UTC-5.
    assert_eq!(departure.time.utc, Some(utc(2016, 12, 6, 21, 0, 0)));
    let estimated_departure = &status.port_calls[2].times[0];
    assert_eq!(estimated_departure.classifier, Some(Classifier::Estimated));
    assert!(!estimated_departure.time.has_time);
}

#[test]
fn the_same_interchange_with_apostrophes_reads_alike() {
    let interchange = read_fixture(QUOTES);
    assert_eq!(interchange.envelope.separators.segment, '\'');
    assert!(interchange.envelope.separators.line_breaks);
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
    assert_eq!(interchange.statuses().count(), 10);
    let status = &transaction(&interchange, 0).statuses[0];
    assert_eq!(status.references.scac.as_deref(), Some("MMEC"));
    assert_eq!(status.references.bills_of_lading, ["XXXXXXX161162937"]);
    assert_eq!(status.location.locode.as_deref(), Some("HKHKG"));
    let fourth = &transaction(&interchange, 3).statuses[0];
    assert_eq!(fourth.references.scac.as_deref(), Some("DDSU"));
    assert_eq!(fourth.references.container.as_deref(), Some("HLBU1138494"));
}
