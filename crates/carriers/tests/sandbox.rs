//! The sandbox carrier's voyages: deterministic, plausible, and readable by our own DCSA parser.

use std::collections::HashMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use tidemark_carriers::dcsa::{
    JourneyStage, LegContext, LocationRole, parse_events, t49_event_name,
};
use tidemark_carriers::sandbox::{DcsaEvent, Sandbox, SandboxTerminal, Voyage, builtin_ports};
use tidemark_carriers::{Classifier, DcsaCode, EmptyIndicator, ReferenceKind};
use tidemark_domain::ContainerNumber;
use uuid::Uuid;

/// An estimate's time and when it was issued.
type Published = (DateTime<Utc>, DateTime<Utc>);

fn sandbox() -> Sandbox {
    Sandbox::new(builtin_ports())
}

fn epoch() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 6, 1, 9, 30, 0)
        .single()
        .expect("a valid date")
}

fn sample_numbers() -> Vec<String> {
    (0..200).map(|i| format!("TEST{i:05}")).collect()
}

fn voyage(number: &str) -> Voyage {
    sandbox()
        .voyage(number, epoch())
        .expect("a TEST number has a voyage")
}

/// Long after every voyage of the sample has ended.
fn the_end() -> DateTime<Utc> {
    epoch() + Duration::days(120)
}

fn body(events: &[DcsaEvent]) -> Vec<u8> {
    serde_json::to_vec(events).expect("events serialize")
}

#[test]
fn the_same_number_and_epoch_give_the_same_voyage() {
    let first = voyage("TEST-TR-SUCCEEDED");
    let second = voyage("test-tr-succeeded");

    assert_eq!(
        first.events_until(the_end()),
        second.events_until(the_end())
    );
    assert_eq!(first.containers(), second.containers());
    assert_eq!(
        first.vessel_position(epoch() + Duration::hours(6)),
        second.vessel_position(epoch() + Duration::hours(6))
    );
}

#[test]
fn a_later_epoch_moves_the_same_voyage_in_time() {
    let early = voyage("TEST123456");
    let late = sandbox()
        .voyage("TEST123456", epoch() + Duration::days(10))
        .expect("a voyage");

    let early_events = early.events_until(the_end());
    let late_events = late.events_until(the_end() + Duration::days(10));

    assert_eq!(early_events.len(), late_events.len());
    for (a, b) in early_events.iter().zip(&late_events) {
        assert_eq!(a.event_id, b.event_id);
        assert_eq!(a.event_date_time + Duration::days(10), b.event_date_time);
    }
}

#[test]
fn different_numbers_give_different_voyages() {
    let voyages: Vec<Voyage> = sample_numbers().iter().map(|n| voyage(n)).collect();

    let mut containers = HashMap::new();
    for voyage in &voyages {
        for container in voyage.containers() {
            containers.insert(container.number.clone(), voyage.number().to_owned());
        }
    }
    let total: usize = voyages.iter().map(|v| v.containers().len()).sum();
    let routes: std::collections::HashSet<(String, String)> = voyages
        .iter()
        .map(|v| {
            (
                v.port_of_lading().locode.clone(),
                v.port_of_discharge().locode.clone(),
            )
        })
        .collect();
    // Serials are six digits from a hash: a clash or two in 400 containers is possible.
    assert!(
        containers.len() + 3 >= total,
        "{} of {total}",
        containers.len()
    );
    assert!(routes.len() > 50, "{} routes", routes.len());
    assert_ne!(
        voyage("TEST00001").events_until(the_end()),
        voyage("TEST00002").events_until(the_end())
    );
}

#[test]
fn test_tr_failed_is_not_found() {
    let sandbox = sandbox();

    assert!(sandbox.voyage("TEST-TR-FAILED", epoch()).is_none());
    assert!(sandbox.voyage("test-tr-failed", epoch()).is_none());
}

#[test]
fn numbers_that_are_not_test_numbers_are_not_found() {
    let sandbox = sandbox();

    for number in ["MAEU123456789", "TES", "TEST1", "XTEST12345", ""] {
        assert!(sandbox.voyage(number, epoch()).is_none(), "{number}");
    }
}

#[test]
fn container_numbers_are_not_references_the_sandbox_can_find() {
    let container = voyage("TEST-TR-SUCCEEDED").containers()[0].number.clone();

    let found =
        sandbox().voyage_for_reference(ReferenceKind::Equipment, container.as_str(), epoch());
    let by_booking =
        sandbox().voyage_for_reference(ReferenceKind::Booking, "TEST-TR-SUCCEEDED", epoch());

    assert!(found.is_none());
    assert!(by_booking.is_some());
}

#[test]
fn container_numbers_are_valid_iso_6346_with_known_size_types() {
    for number in sample_numbers() {
        let voyage = voyage(&number);

        assert!((1..=3).contains(&voyage.containers().len()));
        for container in voyage.containers() {
            assert_eq!(
                ContainerNumber::parse(container.number.as_str()),
                Ok(container.number.clone())
            );
            assert_eq!(container.number.owner_code(), "TDM");
            assert!(["45G1", "22G1", "42G1"].contains(&container.iso_equipment_code.as_str()));
        }
    }
}

#[test]
fn imo_numbers_have_valid_check_digits_and_legs_change_vessel() {
    for number in sample_numbers() {
        let voyage = voyage(&number);

        for leg in voyage.legs() {
            let digits: Vec<u32> = leg
                .vessel
                .imo
                .chars()
                .map(|c| c.to_digit(10).expect("IMO numbers are digits"))
                .collect();
            assert_eq!(digits.len(), 7, "{}", leg.vessel.imo);
            let sum: u32 = digits[..6]
                .iter()
                .zip([7, 6, 5, 4, 3, 2])
                .map(|(d, w)| d * w)
                .sum();
            assert_eq!(sum % 10, digits[6], "{}", leg.vessel.imo);
            assert_eq!(leg.vessel.mmsi.len(), 9);
            assert!(!leg.vessel.name.is_empty());
        }
        if let [first, second] = voyage.legs() {
            assert_ne!(first.vessel.imo, second.vessel.imo);
        }
    }
}

#[test]
fn ports_of_lading_and_discharge_are_distinct_and_far_apart() {
    for number in sample_numbers() {
        let voyage = voyage(&number);

        assert_ne!(voyage.port_of_lading(), voyage.port_of_discharge());
        let distance: f64 = voyage.legs().iter().map(|leg| leg.distance_nm).sum();
        assert!(distance > 1_500.0, "{number}: {distance} nm");
    }
}

#[test]
fn events_are_in_time_order_and_no_actual_event_is_after_now() {
    for number in sample_numbers().iter().take(50) {
        let voyage = voyage(number);

        for hours in (-24 * 20..24 * 80).step_by(37) {
            let now = epoch() + Duration::hours(hours);
            let events = voyage.events_until(now);

            assert!(
                events.is_sorted_by_key(|event| event.event_date_time),
                "{number} at {now}"
            );
            for event in &events {
                assert!(event.event_created_date_time <= now, "{number}: {event:?}");
                if event.event_classifier_code == Classifier::Actual {
                    assert!(event.event_date_time <= now, "{number}: {event:?}");
                }
            }
        }
    }
}

#[test]
fn as_the_clock_moves_more_actual_events_appear_and_earlier_ones_never_change() {
    for number in sample_numbers().iter().take(30) {
        let voyage = voyage(number);
        let mut seen: HashMap<Uuid, DcsaEvent> = HashMap::new();
        let mut actual_counts = Vec::new();

        for hours in (0..24 * 80).step_by(11) {
            let events = voyage.events_until(epoch() + Duration::hours(hours));
            let actual: Vec<&DcsaEvent> = events
                .iter()
                .filter(|event| event.event_classifier_code == Classifier::Actual)
                .collect();
            for event in &actual {
                if let Some(earlier) = seen.get(&event.event_id) {
                    assert_eq!(earlier, *event, "{number}");
                }
                seen.insert(event.event_id, (*event).clone());
            }
            // Nothing published is ever withdrawn.
            assert!(
                seen.values()
                    .all(|old| actual.iter().any(|new| new.event_id == old.event_id))
            );
            actual_counts.push(actual.len());
        }

        assert!(actual_counts.is_sorted(), "{number}: {actual_counts:?}");
        assert!(
            actual_counts.last() > actual_counts.first(),
            "{number}: {actual_counts:?}"
        );
    }
}

#[test]
fn every_event_eventually_becomes_actual_and_estimates_stop() {
    let voyage = voyage("TEST-TR-SUCCEEDED");

    let events = voyage.events_until(the_end());

    assert!(
        events
            .iter()
            .all(|e| e.event_classifier_code == Classifier::Actual)
    );
    let last = events.last().expect("events");
    assert_eq!(last.equipment_event_type_code, Some(DcsaCode::Gtin));
    assert_eq!(last.empty_indicator_code, Some(EmptyIndicator::Empty));
}

#[test]
fn an_estimate_keeps_its_event_id_while_its_time_changes() {
    let mut numbers_with_a_moving_estimate = 0;
    for number in sample_numbers().iter().take(60) {
        let voyage = voyage(number);
        // Per estimate: its successive (time, issued at) pairs.
        let mut estimates: HashMap<Uuid, Vec<Published>> = HashMap::new();

        for hours in (-24 * 20..24 * 80).step_by(7) {
            for event in voyage.events_until(epoch() + Duration::hours(hours)) {
                if event.event_classifier_code == Classifier::Estimated {
                    let history = estimates.entry(event.event_id).or_default();
                    let entry = (event.event_date_time, event.event_created_date_time);
                    if history.last() != Some(&entry) {
                        history.push(entry);
                    }
                }
            }
        }

        let moved = estimates.values().any(|history| {
            history.len() > 1
                && history
                    .windows(2)
                    .all(|w| w[0].1 < w[1].1 && w[0].0 < w[1].0)
        });
        if moved {
            numbers_with_a_moving_estimate += 1;
        }
    }

    assert!(
        numbers_with_a_moving_estimate >= 20,
        "{numbers_with_a_moving_estimate} of 60"
    );
}

#[test]
fn about_half_have_a_transshipment_and_most_have_a_vessel_at_sea_six_hours_after_the_epoch() {
    let voyages: Vec<Voyage> = sample_numbers().iter().map(|n| voyage(n)).collect();

    let transshipments = voyages
        .iter()
        .filter(|v| v.transshipment_port().is_some())
        .count();
    let at_sea: Vec<_> = voyages
        .iter()
        .filter_map(|v| v.vessel_position(epoch() + Duration::hours(6)))
        .collect();

    assert!(
        (70..=130).contains(&transshipments),
        "{transshipments} of 200"
    );
    assert!(at_sea.len() >= 120, "{} of 200", at_sea.len());
    for position in &at_sea {
        assert!((-90.0..=90.0).contains(&position.latitude));
        assert!((-180.0..=180.0).contains(&position.longitude));
        assert!((0.0..360.0).contains(&position.heading_degrees));
        assert!((8.0..=18.5).contains(&position.speed_knots), "{position:?}");
    }
}

#[test]
fn a_vessel_position_exists_only_between_departure_and_arrival() {
    let voyage = voyage("TEST-TR-SUCCEEDED");
    let leg = &voyage.legs()[0];

    let before = voyage.vessel_position(leg.departure - Duration::minutes(1));
    let leaving = voyage.vessel_position(leg.departure).expect("at sea");
    let arriving = voyage
        .vessel_position(leg.arrival - Duration::seconds(1))
        .expect("at sea");
    let after = voyage.vessel_position(leg.arrival + Duration::minutes(1));

    assert!(before.is_none() && after.is_none());
    assert_eq!(leaving.imo, leg.vessel.imo);
    assert!((leaving.latitude - leg.from.latitude).abs() < 1e-6);
    assert!((arriving.latitude - leg.to.latitude).abs() < 0.05);
    assert!((arriving.longitude - leg.to.longitude).abs() < 0.05);
}

#[test]
fn every_generated_event_parses_with_dcsa_parse_events_with_no_skips() {
    for number in sample_numbers().iter().take(60) {
        let voyage = voyage(number);

        for hours in [-24 * 10, 0, 6, 24 * 7, 24 * 30, 24 * 90] {
            let events = voyage.events_until(epoch() + Duration::hours(hours));

            let snapshot = parse_events(&body(&events)).expect("an array of events");

            assert!(
                snapshot.skipped.is_empty(),
                "{number}: {:?}",
                snapshot.skipped
            );
            assert_eq!(snapshot.events.len(), events.len());
            for (parsed, sent) in snapshot.events.iter().zip(&events) {
                assert_eq!(parsed.event_id, Some(sent.event_id.to_string()));
                assert_eq!(parsed.event_datetime, sent.event_date_time);
                assert!(parsed.un_location_code.is_some());
                assert!(
                    parsed
                        .document_numbers(tidemark_carriers::DocumentType::TransportDocument)
                        .eq([voyage.number()])
                );
            }
        }
    }
}

#[test]
fn every_actual_event_maps_to_a_terminal49_milestone() {
    for number in sample_numbers().iter().take(60) {
        let voyage = voyage(number);
        let role = |locode: &str| {
            if locode == voyage.port_of_lading().locode {
                LocationRole::PortOfLading
            } else if locode == voyage.port_of_discharge().locode {
                LocationRole::PortOfDischarge
            } else {
                LocationRole::Transshipment
            }
        };
        let snapshot = parse_events(&body(&voyage.events_until(the_end()))).expect("events");

        for event in &snapshot.events {
            let locode = event.un_location_code.as_deref().expect("a place");
            let stage = if event.dcsa_code == DcsaCode::Gtin
                && event.empty_indicator == Some(EmptyIndicator::Empty)
            {
                JourneyStage::AfterFullOut
            } else {
                JourneyStage::Underway
            };
            let context = LegContext::at(role(locode)).in_stage(stage);

            assert!(
                t49_event_name(event, &context).is_some(),
                "{number}: {event:?}"
            );
        }
    }
}

#[test]
fn test_tr_succeeded_shows_a_transshipment_a_vessel_at_sea_and_a_slipping_estimate() {
    for days in 0..30 {
        let epoch = epoch() + Duration::days(days) + Duration::minutes(days * 97);
        let voyage = sandbox()
            .voyage("TEST-TR-SUCCEEDED", epoch)
            .expect("a voyage");

        let last = voyage.legs().last().expect("legs");

        assert!(voyage.transshipment_port().is_some());
        assert!(voyage.vessel_position(epoch + Duration::hours(6)).is_some());
        assert!(last.delay > Duration::zero());
    }
}

/// A voyage of a sandbox whose every port has one terminal, `terminal`.
fn voyage_calling_at(terminal: &SandboxTerminal) -> Voyage {
    let ports = builtin_ports()
        .into_iter()
        .map(|mut port| {
            port.terminals = vec![terminal.clone()];
            port
        })
        .collect();
    Sandbox::new(ports)
        .voyage("TEST-TR-SUCCEEDED", epoch())
        .expect("a voyage")
}

#[test]
fn a_terminal_with_an_smdg_code_is_named_by_its_code() {
    let terminal = SandboxTerminal {
        name: "Coded Terminal".to_owned(),
        smdg_code: Some("CODED".to_owned()),
    };
    let events = voyage_calling_at(&terminal).events_until(the_end());

    let at_terminals: Vec<&DcsaEvent> = events
        .iter()
        .filter(|e| e.transport_call.facility_type_code == "POTE")
        .collect();
    assert!(!at_terminals.is_empty());
    for event in &at_terminals {
        let call = &event.transport_call;
        assert_eq!(call.facility_code.as_deref(), Some("CODED"));
        assert_eq!(call.facility_code_list_provider, Some("SMDG"));
        assert_eq!(call.other_facility, None);
    }
    let parsed = parse_events(&body(&events)).expect("our events parse");
    assert!(parsed.events.iter().all(|e| {
        let call = e.transport_call.as_ref().expect("every event has a call");
        let at_terminal = call.facility_type_code.as_deref() == Some("POTE");
        call.facility_smdg_code.as_deref() == at_terminal.then_some("CODED")
    }));
}

#[test]
fn a_terminal_without_a_code_is_named_by_name_and_a_depot_not_at_all() {
    let terminal = SandboxTerminal {
        name: "Named Terminal".to_owned(),
        smdg_code: None,
    };
    let events = voyage_calling_at(&terminal).events_until(the_end());

    for event in &events {
        let call = &event.transport_call;
        let at_terminal = call.facility_type_code == "POTE";
        assert_eq!(call.facility_code, None);
        assert_eq!(
            call.other_facility.as_deref(),
            at_terminal.then_some("Named Terminal")
        );
    }
    assert!(
        events
            .iter()
            .any(|e| e.transport_call.facility_type_code == "DEPO")
    );
}
