//! The sandbox terminal's story, at several instants after discharge.

use std::collections::HashMap;

use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use tidemark_terminals::sandbox::{self, SandboxTerminal};
use tidemark_terminals::{FeeKind, HoldKind, HoldStatus, TerminalConnector};

use crate::helpers::{clock, container, query};

/// MSCU1234566's serial ends in 6: it is released. Its quiet spell is 4 to 8 hours.
const RELEASED: &str = "MSCU1234566";
/// MSCU1234571's serial ends in 7: never released.
const STUCK: &str = "MSCU1234571";

fn discharged() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 6, 10, 6, 0, 0).unwrap()
}

fn at(hours: i64) -> DateTime<Utc> {
    discharged() + Duration::hours(hours)
}

#[test]
fn for_the_first_hours_after_discharge_the_terminal_says_nothing() {
    let status = sandbox::status_at(&container(RELEASED), discharged(), at(3));

    assert_eq!(status, None);
}

#[test]
fn first_a_pending_customs_hold_then_a_hold_and_not_available() {
    let pending = sandbox::status_at(&container(RELEASED), discharged(), at(9)).unwrap();
    let held = sandbox::status_at(&container(RELEASED), discharged(), at(21)).unwrap();

    assert_eq!(pending.availability, Some(false));
    assert_eq!(pending.holds[0].kind, HoldKind::Customs);
    assert_eq!(pending.holds[0].status, HoldStatus::Pending);
    assert_eq!(held.holds[0].status, HoldStatus::Hold);
    assert_eq!(held.availability, Some(false));
    assert_eq!(held.last_free_day, None);
}

#[test]
fn once_released_it_is_available_with_a_last_free_day_four_days_after_discharge() {
    let status = sandbox::status_at(&container(RELEASED), discharged(), at(40)).unwrap();

    assert_eq!(status.availability, Some(true));
    assert!(status.holds.is_empty(), "a released hold is removed");
    assert_eq!(status.last_free_day, NaiveDate::from_ymd_opt(2024, 6, 14));
    assert!(status.fees.is_empty());
    assert!(status.location.as_deref().unwrap().starts_with("SBX-"));
}

#[test]
fn each_day_past_the_last_free_day_adds_demurrage() {
    let one_day = Utc.with_ymd_and_hms(2024, 6, 15, 12, 0, 0).unwrap();
    let three_days = Utc.with_ymd_and_hms(2024, 6, 17, 12, 0, 0).unwrap();

    let first = sandbox::status_at(&container(RELEASED), discharged(), one_day).unwrap();
    let third = sandbox::status_at(&container(RELEASED), discharged(), three_days).unwrap();

    assert_eq!(first.fees[0].kind, FeeKind::Demurrage);
    assert_eq!(first.fees[0].amount_cents, 15_000);
    assert_eq!(third.fees[0].amount_cents, 45_000);
    assert_eq!(
        third.appointment_at.unwrap().to_rfc3339(),
        "2024-06-15T10:00:00+00:00"
    );
}

#[test]
fn a_serial_ending_in_seven_is_never_released_and_runs_up_demurrage() {
    let later = Utc.with_ymd_and_hms(2024, 7, 1, 0, 0, 0).unwrap();

    let status = sandbox::status_at(&container(STUCK), discharged(), later).unwrap();

    assert!(sandbox::never_released(&container(STUCK)));
    assert_eq!(status.availability, Some(false));
    assert_eq!(status.holds[0].status, HoldStatus::Hold);
    assert_eq!(status.last_free_day, NaiveDate::from_ymd_opt(2024, 6, 14));
    assert_eq!(status.fees[0].amount_cents, 17 * 15_000);
    assert_eq!(status.raw["sandbox"]["never_released"], true);
}

#[test]
fn the_story_is_the_same_every_time() {
    let first = sandbox::status_at(&container(RELEASED), discharged(), at(30));
    let second = sandbox::status_at(&container(RELEASED), discharged(), at(30));

    assert_eq!(first, second);
}

#[tokio::test]
async fn the_connector_answers_for_the_containers_whose_discharge_it_knows() {
    let clock = clock();
    let now = chrono::Utc.with_ymd_and_hms(2024, 6, 21, 15, 0, 0).unwrap();
    let terminal = SandboxTerminal::with_discharges(
        clock,
        HashMap::from([(container(RELEASED), now - Duration::days(2))]),
    );

    let statuses = terminal
        .lookup(&[query(RELEASED, None), query(STUCK, None)])
        .await
        .unwrap();

    assert_eq!(
        statuses.len(),
        1,
        "no discharge time, no answer: {statuses:?}"
    );
    assert_eq!(statuses[0].container_number.as_str(), RELEASED);
    assert_eq!(statuses[0].checked_at, now);
    assert_eq!(terminal.profile().id, "sandbox");
}
