//! The [`CarrierStore`](crate::CarrierStore) part of the contract.

#![expect(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::{Arc, Mutex};

use chrono::Duration;
use tidemark_domain::SequentialIds;
use tidemark_domain::carriers::{Acquire, CallOutcome, Limits, PollPriority};

use super::{TestBackend, account_in, save, t0, tracked};
use crate::PollSchedule;

/// Expands this part's cases; called by [`store_contract_tests!`](crate::store_contract_tests).
#[macro_export]
macro_rules! carrier_contract_tests {
    ($backend:path) => {
        $crate::store_contract_tests!(@cases_in carriers $backend;
            a_carriers_state_starts_fresh_and_is_read_back_as_changed,
            concurrent_callers_spend_one_budget_between_them,
            a_carriers_state_is_shared_by_every_process_on_the_database,
            due_shipments_follow_the_interval_of_their_priority,
        );
    };
}

const TEN_A_MINUTE: Limits = Limits {
    per_minute: Some(10),
    per_day: None,
};

pub async fn a_carriers_state_starts_fresh_and_is_read_back_as_changed(backend: &dyn TestBackend) {
    let store = backend.store();

    let written = store
        .change_carrier_state("HLCU", &|state| {
            state.record(t0(), &CallOutcome::CredentialsRefused("401".to_owned()));
        })
        .await
        .unwrap();
    let states = store.carrier_states().await.unwrap();

    assert_eq!(written.scac, "HLCU");
    assert_eq!(written.credentials_refused_at, Some(t0()));
    assert_eq!(states, vec![written]);
}

pub async fn concurrent_callers_spend_one_budget_between_them(backend: &dyn TestBackend) {
    let store = backend.store();
    let granted = Arc::new(Mutex::new(0));

    let mut tasks = Vec::new();
    for _ in 0..25 {
        let store = store.clone();
        let granted = granted.clone();
        tasks.push(tokio::spawn(async move {
            store
                .change_carrier_state("MAEU", &|state| {
                    if state.acquire(t0(), TEN_A_MINUTE, PollPriority::Routine) == Acquire::Go {
                        *granted.lock().unwrap() += 1;
                    }
                })
                .await
                .unwrap();
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }

    assert_eq!(*granted.lock().unwrap(), 10);
    let states = store.carrier_states().await.unwrap();
    assert_eq!(states[0].recent_calls.len(), 10);
}

pub async fn a_carriers_state_is_shared_by_every_process_on_the_database(
    backend: &dyn TestBackend,
) {
    let first = backend.store();
    let second = backend.reopen().await;
    for _ in 0..10 {
        first
            .change_carrier_state("MSCU", &|state| {
                state.acquire(t0(), TEN_A_MINUTE, PollPriority::Routine);
            })
            .await
            .unwrap();
    }
    let answer = Arc::new(Mutex::new(None));

    second
        .change_carrier_state("MSCU", &|state| {
            *answer.lock().unwrap() =
                Some(state.acquire(t0(), TEN_A_MINUTE, PollPriority::NewRequest));
        })
        .await
        .unwrap();

    assert!(matches!(
        *answer.lock().unwrap(),
        Some(Acquire::Wait { .. })
    ));
}

pub async fn due_shipments_follow_the_interval_of_their_priority(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let now = t0() + Duration::days(5);
    let polled = now - Duration::hours(2);
    let mut shipments = Vec::new();
    for number in ["TESTBL0001", "TESTBL0002", "TESTBL0003"] {
        let (_, update) = tracked(store.as_ref(), &ids, acme, number, Vec::new()).await;
        let mut shipment = update.shipment.clone();
        shipment.line_tracking_last_attempted_at = Some(polled);
        shipment.pol_atd_at = None;
        shipment.pod_ata_at = None;
        shipment.pod_eta_at = None;
        shipments.push(shipment);
    }
    // Arriving tomorrow: near its milestone. Sailed, arriving in three weeks: at sea.
    // Not sailed: routine.
    shipments[0].pol_atd_at = Some(now - Duration::days(10));
    shipments[0].pod_eta_at = Some(now + Duration::days(1));
    shipments[1].pol_atd_at = Some(now - Duration::days(1));
    shipments[1].pod_eta_at = Some(now + Duration::days(21));
    for shipment in &shipments {
        save(store.as_ref(), shipment.clone()).await;
    }
    let schedule = |near: i64, routine: i64, at_sea: i64| PollSchedule {
        now,
        arriving_by: now + Duration::hours(48),
        near_milestone_before: now - Duration::hours(near),
        routine_before: now - Duration::hours(routine),
        at_sea_before: now - Duration::hours(at_sea),
    };

    let due = |found: Vec<tidemark_domain::Shipment>| {
        let mut numbers: Vec<String> = found.into_iter().map(|s| s.bill_of_lading_number).collect();
        numbers.sort();
        numbers
    };
    let only_near = due(store
        .shipments_due("MAEU", &schedule(1, 3, 6), 10)
        .await
        .unwrap());
    let near_and_routine = due(store
        .shipments_due("MAEU", &schedule(1, 2, 6), 10)
        .await
        .unwrap());
    let all = due(store
        .shipments_due("MAEU", &schedule(1, 2, 2), 10)
        .await
        .unwrap());

    assert_eq!(only_near, ["TESTBL0001"]);
    assert_eq!(near_and_routine, ["TESTBL0001", "TESTBL0003"]);
    assert_eq!(all, ["TESTBL0001", "TESTBL0002", "TESTBL0003"]);
    let by_priority: Vec<String> = store
        .shipments_due("MAEU", &schedule(1, 2, 2), 10)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.bill_of_lading_number)
        .collect();
    // Polled two hours ago: near (1 h interval) is 2 intervals late, routine and at sea
    // (2 h) one; among equals the routine one goes first.
    assert_eq!(by_priority, ["TESTBL0001", "TESTBL0003", "TESTBL0002"]);
    let at_sea_late: Vec<String> = store
        .shipments_due("MAEU", &schedule(2, 2, 1), 10)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.bill_of_lading_number)
        .collect();
    assert_eq!(
        at_sea_late,
        ["TESTBL0002", "TESTBL0001", "TESTBL0003"],
        "a starved shipment at sea goes before punctual urgent ones"
    );
    assert!(
        store
            .shipments_due("HLCU", &schedule(1, 2, 2), 10)
            .await
            .unwrap()
            .is_empty()
    );
}
