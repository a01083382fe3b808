//! Two parcel carriers' IFTSTA, read for what an ocean-status reader must survive and keep:
//! a postal network's D.04A (statuses in the carrier's own list with their words, places as
//! postal codes with the town and its country) and UPS's D.07B inside a UNG group (no status
//! event, only a category; the place at consignment level; times with seconds). Neither names
//! a container, so neither gives an event to file.

use tidemark_edi::{LocationRole, Note};

use crate::{local, read_fixture, transaction, utc};

const POSTI: &str = "iftsta_d04a_posti_free_text_statuses.edi";
const UPS: &str = "iftsta_d07b_ups_functional_group.edi";

#[test]
fn five_messages_give_seven_statuses_in_the_carriers_own_list() {
    let interchange = read_fixture(POSTI);
    assert_eq!(interchange.transactions.len(), 5);
    assert_eq!(interchange.errors().count(), 0);
    let statuses: Vec<_> = interchange.statuses().collect();
    let codes: Vec<&str> = statuses.iter().map(|s| s.code.as_str()).collect();
    assert_eq!(codes, ["S", "V", "S", "I", "I", "Q", "Q"]);
    for status in &statuses {
        // Agency 87 (the carrier's list): `I` is no X12 in-gate, `S` and `Q` no 315 codes.
        assert_eq!(status.code_agency.as_deref(), Some("87"));
        assert!(status.to_carrier_event().is_err(), "{}", status.code);
        assert_eq!(status.references.container, None);
    }
}

#[test]
fn a_status_keeps_its_words_and_its_consignment_reference() {
    let interchange = read_fixture(POSTI);
    let first = transaction(&interchange, 0);
    let words: Vec<Option<&str>> = first
        .statuses
        .iter()
        .map(|s| s.description.as_deref())
        .collect();
    assert_eq!(
        words,
        [
            Some("REFORWARDED"),
            Some("ERROR OCCURRED IN PROCESSING"),
            Some("REFORWARDED")
        ]
    );
    assert!(
        first.statuses[0]
            .references
            .other
            .contains(&("CU".to_owned(), "171577008".to_owned()))
    );
    let office = &transaction(&interchange, 3).statuses[0];
    assert_eq!(
        office.description.as_deref(),
        Some("ARRIVED AT POST OFFICE")
    );
}

#[test]
fn a_postal_code_place_keeps_its_code_list_and_its_countrys_zone() {
    let interchange = read_fixture(POSTI);
    let vantaa = &transaction(&interchange, 0).statuses[0];
    let place = &vantaa.location;
    assert_eq!(place.locode, None);
    assert_eq!(place.name.as_deref(), Some("VANTAA"));
    assert_eq!(place.other_id.as_deref(), Some("01530"));
    assert_eq!(place.other_qualifier.as_deref(), Some("16"));
    assert_eq!(place.country.as_deref(), Some("FI"));
    let time = vantaa.time.as_ref().expect("DTM+78");
    assert_eq!(time.local, local(2020, 2, 25, 17, 28, 0));
    // Vantaa, Finland: UTC+2 in February.
    assert_eq!(time.zone.as_deref(), Some("Europe/Helsinki"));
    assert_eq!(time.utc, Some(utc(2020, 2, 25, 15, 28, 0)));
    let oslo = &transaction(&interchange, 1).statuses[0];
    assert_eq!(oslo.location.country.as_deref(), Some("NO"));
    assert_eq!(
        oslo.time.as_ref().and_then(|t| t.utc),
        Some(utc(2020, 2, 25, 16, 9, 0))
    );
}

#[test]
fn a_header_date_with_month_25_fails_nothing() {
    let interchange = read_fixture(POSTI);
    for index in 0..5 {
        let message = transaction(&interchange, index);
        assert!(
            !message
                .notes
                .iter()
                .any(|note| matches!(note, Note::NoTimeZone(_))),
            "{:?}",
            message.notes
        );
    }
}

#[test]
fn a_ung_group_around_two_messages_is_read_with_its_count() {
    let interchange = read_fixture(UPS);
    assert!(interchange.notes.is_empty(), "{:?}", interchange.notes);
    assert_eq!(interchange.envelope.sender_id, "EURPROD");
    assert_eq!(interchange.groups.len(), 1);
    assert_eq!(interchange.groups[0].functional_id, "IFTSTA");
    assert_eq!(interchange.groups[0].version, "D:07B");
    assert_eq!(interchange.transactions.len(), 2);
    assert_eq!(transaction(&interchange, 1).group, Some(0));
}

#[test]
fn an_sts_with_only_a_category_has_an_empty_code_never_a_315_one() {
    let interchange = read_fixture(UPS);
    for message in [transaction(&interchange, 0), transaction(&interchange, 1)] {
        assert!(message.notes.contains(&Note::EmptyStatusCode));
        let status = &message.statuses[0];
        assert_eq!(status.code, "");
        assert!(status.is_drift());
        assert!(status.to_carrier_event().is_err());
    }
}

#[test]
fn the_consignments_place_is_the_place_of_a_status_that_names_none() {
    let interchange = read_fixture(UPS);
    let first = &transaction(&interchange, 0).statuses[0];
    assert_eq!(first.location.name.as_deref(), Some("WENDLINGEN"));
    assert_eq!(first.location.locode, None);
    assert_eq!(
        first.port_calls[0].role,
        LocationRole::Other("14".to_owned())
    );
    let second = &transaction(&interchange, 1).statuses[0];
    assert_eq!(second.location.name.as_deref(), Some("BRUSSELS"));
}

#[test]
fn a_format_204_time_keeps_its_seconds_and_stays_local_without_a_zone() {
    let interchange = read_fixture(UPS);
    let time = transaction(&interchange, 0).statuses[0]
        .time
        .clone()
        .expect("DTM+78");
    assert_eq!(time.local, local(2016, 7, 14, 17, 37, 46));
    assert!(time.has_time);
    // "DE" after the town is no country code list (C519 without 162): no zone is guessed.
    assert_eq!(time.utc, None);
}

const UPS_CLEARING: &str = "iftsta_d07b_ups_clearing_agency_free_text.edi";

#[test]
fn release_words_in_an_ftx_are_text_never_a_customs_release() {
    let interchange = read_fixture(UPS_CLEARING);
    assert_eq!(interchange.transactions.len(), 2);
    assert_eq!(interchange.errors().count(), 0);
    for status in interchange.statuses() {
        // "…AT THE CLEARING AGENCY AWAITING FINAL RELEASE." is an FTX remark: no status words.
        assert_eq!(status.code, "");
        assert_eq!(status.description, None);
        assert!(status.mapping.is_none());
        assert!(status.terminal_facts().is_none());
        assert!(status.to_carrier_event().is_err());
        assert_eq!(status.location.name.as_deref(), Some("BASEL"));
        assert_eq!(
            status.time.as_ref().map(|t| t.local),
            Some(local(2016, 1, 23, 2, 37, 27))
        );
    }
}
