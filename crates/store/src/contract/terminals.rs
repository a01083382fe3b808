//! Whom a terminal is asked about: [`Store::containers_awaiting_pickup`].

#![expect(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use chrono::{DateTime, Duration, Utc};
use tidemark_domain::tracking_update::TrackingUpdate;
use tidemark_domain::{AccountId, ContainerId, SequentialIds, ShipmentId};
use uuid::Uuid;

use super::{TestBackend, account_in, departed_voyage, t0, tracked};
use crate::{Store, TerminalSelection};

/// Expands this part's cases; called by [`store_contract_tests!`](crate::store_contract_tests).
#[macro_export]
macro_rules! terminal_contract_tests {
    ($backend:path) => {
        $crate::store_contract_tests!(@cases_in terminals $backend;
            discharged_containers_are_asked_until_out_and_not_again_within_their_interval,
            a_container_asked_before_its_discharge_is_asked_again_once_discharged,
            containers_arriving_within_the_look_ahead_are_asked_at_their_own_interval,
            discharged_containers_come_first_then_the_nearest_arrivals,
            a_batch_kept_for_arrivals_leaves_the_discharged_out,
            a_container_whose_pod_terminal_another_terminal_reaches_is_left_out,
            the_selection_keeps_to_the_terminals_ports_and_line,
            one_terminals_ask_does_not_hold_off_another_terminal,
            a_terminals_own_latest_ask_holds_it_off_for_its_interval,
            each_selected_container_comes_with_its_shipments_bill_of_lading,
            asks_of_containers_out_returned_or_no_longer_tracked_are_forgotten_by_housekeeping,
            an_ask_of_a_container_that_is_not_there_is_not_kept,
        );
    };
}

/// Now, in these cases: well after the voyage was recorded.
fn now() -> DateTime<Utc> {
    t0() + Duration::days(40)
}

/// The terminal asking in these cases, unless a case says otherwise.
const PIER: &str = "pier";

/// What a terminal's check asks by default: recheck after 15 minutes once discharged, after
/// an hour before, from three days before arrival.
fn selection() -> TerminalSelection<'static> {
    TerminalSelection {
        terminal: PIER,
        ports: None,
        scac: None,
        other_terminals: &[],
        discharged_checked_before: now() - Duration::minutes(15),
        arriving_checked_before: now() - Duration::hours(1),
        arriving_by: now() + Duration::days(3),
        arriving_only: false,
        limit: 10,
    }
}

/// How a shipment's first container stands (its second is always out already).
#[derive(Clone, Copy, Default)]
struct Case {
    eta: Option<DateTime<Utc>>,
    arrived: Option<DateTime<Utc>>,
    discharged: Option<DateTime<Utc>>,
    full_out: Option<DateTime<Utc>>,
    /// When [`PIER`] last asked about it (never, when `None`).
    checked: Option<DateTime<Utc>>,
    pod_terminal: Option<Uuid>,
    stopped: bool,
}

/// A tracked shipment (MAEU, POD NLRTM) whose first container stands as `case` says.
async fn shipment(
    store: &dyn Store,
    ids: &SequentialIds,
    account: AccountId,
    number: &str,
    case: Case,
) -> ShipmentId {
    let (_, update) = tracked(store, ids, account, number, departed_voyage()).await;
    let mut shipment = store.shipment(account, update.shipment.id).await.unwrap();
    shipment.pod_eta_at = case.eta;
    shipment.pod_terminal_id = case.pod_terminal;
    if case.stopped {
        shipment.line_tracking_stopped_at = Some(now() - Duration::days(1));
        shipment.line_tracking_stopped_reason = Some("user".to_owned());
    }
    let mut containers = store.containers_of_shipment(shipment.id).await.unwrap();
    for (index, container) in containers.iter_mut().enumerate() {
        if index == 0 {
            container.pod_arrived_at = case.arrived;
            container.pod_discharged_at = case.discharged;
            container.pod_full_out_at = case.full_out;
            if let Some(at) = case.checked {
                store
                    .record_terminal_asks(PIER, &[container.id], at)
                    .await
                    .unwrap();
            }
        } else {
            container.pod_discharged_at = Some(now() - Duration::days(2));
            container.pod_full_out_at = Some(now() - Duration::days(1));
        }
    }
    let request = store
        .tracking_request(account, shipment.tracking_request_id)
        .await
        .unwrap();
    let id = shipment.id;
    let update = TrackingUpdate {
        changed_containers: containers,
        ..TrackingUpdate::shipment_only(shipment)
    };
    store
        .record_tracking_result(&request, request.updated_at, Some(&update), &[])
        .await
        .unwrap();
    id
}

/// The shipments of the selected containers, in the order given.
async fn asked(store: &dyn Store, selection: &TerminalSelection<'_>) -> Vec<ShipmentId> {
    store
        .containers_awaiting_pickup(selection)
        .await
        .unwrap()
        .into_iter()
        .map(|candidate| candidate.container.shipment_id)
        .collect()
}

pub async fn discharged_containers_are_asked_until_out_and_not_again_within_their_interval(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let store = store.as_ref();
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let discharged = Some(now() - Duration::hours(5));
    let never_asked = shipment(
        store,
        &ids,
        acme,
        "TERM-D1",
        Case {
            discharged,
            ..Case::default()
        },
    )
    .await;
    let asked_20_minutes_ago = Some(now() - Duration::minutes(20));
    let due = shipment(
        store,
        &ids,
        acme,
        "TERM-D2",
        Case {
            discharged,
            checked: asked_20_minutes_ago,
            ..Case::default()
        },
    )
    .await;
    let asked_5_minutes_ago = Some(now() - Duration::minutes(5));
    shipment(
        store,
        &ids,
        acme,
        "TERM-D3",
        Case {
            discharged,
            checked: asked_5_minutes_ago,
            ..Case::default()
        },
    )
    .await;
    let out = Some(now() - Duration::hours(1));
    shipment(
        store,
        &ids,
        acme,
        "TERM-D4",
        Case {
            discharged,
            full_out: out,
            ..Case::default()
        },
    )
    .await;
    shipment(
        store,
        &ids,
        acme,
        "TERM-D5",
        Case {
            discharged,
            stopped: true,
            ..Case::default()
        },
    )
    .await;

    let selected = asked(store, &selection()).await;

    assert_eq!(
        selected,
        [never_asked, due],
        "never asked first, then the longest unasked"
    );
}

pub async fn a_container_asked_before_its_discharge_is_asked_again_once_discharged(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let store = store.as_ref();
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let asked_10_minutes_ago = Some(now() - Duration::minutes(10));
    shipment(
        store,
        &ids,
        acme,
        "TERM-B1",
        Case {
            discharged: Some(now() - Duration::hours(1)),
            checked: asked_10_minutes_ago,
            ..Case::default()
        },
    )
    .await;
    let asked_before_discharge = shipment(
        store,
        &ids,
        acme,
        "TERM-B2",
        Case {
            discharged: Some(now() - Duration::minutes(5)),
            checked: asked_10_minutes_ago,
            ..Case::default()
        },
    )
    .await;
    let asked_long_ago = shipment(
        store,
        &ids,
        acme,
        "TERM-B3",
        Case {
            discharged: Some(now() - Duration::hours(3)),
            checked: Some(now() - Duration::hours(2)),
            ..Case::default()
        },
    )
    .await;

    let selected = asked(store, &selection()).await;

    assert_eq!(
        selected,
        [asked_before_discharge, asked_long_ago],
        "the ask before its discharge counts as none; the box asked since waits its interval"
    );
}

pub async fn containers_arriving_within_the_look_ahead_are_asked_at_their_own_interval(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let store = store.as_ref();
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let in_two_days = shipment(
        store,
        &ids,
        acme,
        "TERM-A1",
        Case {
            eta: Some(now() + Duration::days(2)),
            ..Case::default()
        },
    )
    .await;
    shipment(
        store,
        &ids,
        acme,
        "TERM-A2",
        Case {
            eta: Some(now() + Duration::days(4)),
            ..Case::default()
        },
    )
    .await;
    let tomorrow = Some(now() + Duration::days(1));
    shipment(
        store,
        &ids,
        acme,
        "TERM-A3",
        Case {
            eta: tomorrow,
            checked: Some(now() - Duration::minutes(30)),
            ..Case::default()
        },
    )
    .await;
    let asked_an_hour_ago = shipment(
        store,
        &ids,
        acme,
        "TERM-A4",
        Case {
            eta: tomorrow,
            checked: Some(now() - Duration::minutes(61)),
            ..Case::default()
        },
    )
    .await;
    let arrived = shipment(
        store,
        &ids,
        acme,
        "TERM-A5",
        Case {
            arrived: Some(now() - Duration::hours(2)),
            ..Case::default()
        },
    )
    .await;
    shipment(store, &ids, acme, "TERM-A6", Case::default()).await;

    let selected = asked(store, &selection()).await;

    assert_eq!(
        selected,
        [arrived, asked_an_hour_ago, in_two_days],
        "within three days of arrival (an arrival counts), not asked within the hour, \
         nearest first; no arrival known, not asked"
    );
}

pub async fn discharged_containers_come_first_then_the_nearest_arrivals(backend: &dyn TestBackend) {
    let store = backend.store();
    let store = store.as_ref();
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let arriving = shipment(
        store,
        &ids,
        acme,
        "TERM-O1",
        Case {
            eta: Some(now() - Duration::hours(1)),
            ..Case::default()
        },
    )
    .await;
    let discharged = Some(now() - Duration::hours(3));
    let asked_long_ago = shipment(
        store,
        &ids,
        acme,
        "TERM-O2",
        Case {
            discharged,
            checked: Some(now() - Duration::hours(2)),
            ..Case::default()
        },
    )
    .await;
    let never_asked = shipment(
        store,
        &ids,
        acme,
        "TERM-O3",
        Case {
            discharged,
            ..Case::default()
        },
    )
    .await;

    let all = asked(store, &selection()).await;
    let two = asked(
        store,
        &TerminalSelection {
            limit: 2,
            ..selection()
        },
    )
    .await;

    assert_eq!(all, [never_asked, asked_long_ago, arriving]);
    assert_eq!(
        two,
        [never_asked, asked_long_ago],
        "a batch fills with the discharged first"
    );
}

pub async fn a_batch_kept_for_arrivals_leaves_the_discharged_out(backend: &dyn TestBackend) {
    let store = backend.store();
    let store = store.as_ref();
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let nearest = shipment(
        store,
        &ids,
        acme,
        "TERM-A1",
        Case {
            eta: Some(now() + Duration::hours(2)),
            ..Case::default()
        },
    )
    .await;
    let later = shipment(
        store,
        &ids,
        acme,
        "TERM-A2",
        Case {
            eta: Some(now() + Duration::days(2)),
            ..Case::default()
        },
    )
    .await;
    shipment(
        store,
        &ids,
        acme,
        "TERM-A3",
        Case {
            discharged: Some(now() - Duration::hours(3)),
            ..Case::default()
        },
    )
    .await;

    let arrivals = asked(
        store,
        &TerminalSelection {
            arriving_only: true,
            ..selection()
        },
    )
    .await;

    assert_eq!(arrivals, [nearest, later]);
}

pub async fn a_container_whose_pod_terminal_another_terminal_reaches_is_left_out(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let store = store.as_ref();
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let theirs = Uuid::from_u128(0x7e41_0000_0000_5000_8000_0000_0000_00a1);
    let unclaimed = Uuid::from_u128(0x7e41_0000_0000_5000_8000_0000_0000_00a2);
    let discharged = Some(now() - Duration::hours(3));
    let at_theirs = shipment(
        store,
        &ids,
        acme,
        "TERM-T1",
        Case {
            discharged,
            pod_terminal: Some(theirs),
            ..Case::default()
        },
    )
    .await;
    let at_unclaimed = shipment(
        store,
        &ids,
        acme,
        "TERM-T2",
        Case {
            discharged,
            pod_terminal: Some(unclaimed),
            ..Case::default()
        },
    )
    .await;
    let unnamed = shipment(
        store,
        &ids,
        acme,
        "TERM-T3",
        Case {
            discharged,
            ..Case::default()
        },
    )
    .await;
    let others = [theirs];

    let mut selected = asked(
        store,
        &TerminalSelection {
            other_terminals: &others,
            ..selection()
        },
    )
    .await;
    let mut unfiltered = asked(store, &selection()).await;
    selected.sort();
    unfiltered.sort();

    let mut expected = vec![at_unclaimed, unnamed];
    expected.sort();
    assert_eq!(selected, expected);
    let mut everyone = vec![at_theirs, at_unclaimed, unnamed];
    everyone.sort();
    assert_eq!(unfiltered, everyone);
}

pub async fn the_selection_keeps_to_the_terminals_ports_and_line(backend: &dyn TestBackend) {
    let store = backend.store();
    let store = store.as_ref();
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let discharged = Some(now() - Duration::hours(3));
    let at_rotterdam = shipment(
        store,
        &ids,
        acme,
        "TERM-P1",
        Case {
            discharged,
            ..Case::default()
        },
    )
    .await;
    let norfolk = ["USORF".to_owned()];
    let rotterdam = ["USORF".to_owned(), "NLRTM".to_owned()];

    let elsewhere = asked(
        store,
        &TerminalSelection {
            ports: Some(&norfolk),
            ..selection()
        },
    )
    .await;
    let here = asked(
        store,
        &TerminalSelection {
            ports: Some(&rotterdam),
            scac: Some("MAEU"),
            ..selection()
        },
    )
    .await;
    let other_line = asked(
        store,
        &TerminalSelection {
            scac: Some("TEST"),
            ..selection()
        },
    )
    .await;

    assert!(elsewhere.is_empty());
    assert_eq!(here, [at_rotterdam]);
    assert!(other_line.is_empty());
}

/// The first container of a shipment made by [`shipment`] (the one its case describes).
async fn first_container(store: &dyn Store, shipment: ShipmentId) -> ContainerId {
    store.containers_of_shipment(shipment).await.unwrap()[0].id
}

pub async fn one_terminals_ask_does_not_hold_off_another_terminal(backend: &dyn TestBackend) {
    let store = backend.store();
    let store = store.as_ref();
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let discharged = shipment(
        store,
        &ids,
        acme,
        "TERM-S1",
        Case {
            discharged: Some(now() - Duration::hours(3)),
            ..Case::default()
        },
    )
    .await;
    let container = first_container(store, discharged).await;
    store
        .record_terminal_asks("emodal", &[container], now() - Duration::minutes(5))
        .await
        .unwrap();

    let selected = asked(store, &selection()).await;

    assert_eq!(
        selected,
        [discharged],
        "eModal asked five minutes ago; the pier never did, so it asks now"
    );
}

pub async fn a_terminals_own_latest_ask_holds_it_off_for_its_interval(backend: &dyn TestBackend) {
    let store = backend.store();
    let store = store.as_ref();
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let discharged = shipment(
        store,
        &ids,
        acme,
        "TERM-S2",
        Case {
            discharged: Some(now() - Duration::hours(3)),
            checked: Some(now() - Duration::minutes(20)),
            ..Case::default()
        },
    )
    .await;
    let container = first_container(store, discharged).await;
    store
        .record_terminal_asks(PIER, &[container], now() - Duration::minutes(5))
        .await
        .unwrap();

    let now_selected = asked(store, &selection()).await;
    let eleven_minutes_on = now() + Duration::minutes(11);
    let later_selected = asked(
        store,
        &TerminalSelection {
            discharged_checked_before: eleven_minutes_on - Duration::minutes(15),
            ..selection()
        },
    )
    .await;

    assert!(
        now_selected.is_empty(),
        "asked five minutes ago (its ask of twenty minutes ago replaced): not yet again"
    );
    assert_eq!(
        later_selected,
        [discharged],
        "more than fifteen minutes after its last ask, asked again"
    );
}

pub async fn each_selected_container_comes_with_its_shipments_bill_of_lading(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let store = store.as_ref();
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let discharged = Case {
        discharged: Some(now() - Duration::hours(3)),
        ..Case::default()
    };
    let first = shipment(store, &ids, acme, "TERM-B1", discharged).await;
    let second = shipment(store, &ids, acme, "TERM-B2", discharged).await;

    let selected = store
        .containers_awaiting_pickup(&selection())
        .await
        .unwrap();

    let mut bills: Vec<(ShipmentId, &str)> = selected
        .iter()
        .map(|candidate| {
            (
                candidate.container.shipment_id,
                candidate.bill_of_lading_number.as_str(),
            )
        })
        .collect();
    bills.sort_unstable();
    let mut expected = vec![(first, "TERM-B1"), (second, "TERM-B2")];
    expected.sort_unstable();
    assert_eq!(bills, expected, "each with its own shipment's bill");
    for (shipment_id, bill) in &expected {
        let stored = store.shipment(acme, *shipment_id).await.unwrap();
        assert_eq!(stored.bill_of_lading_number, *bill);
    }
}

/// Rewrites the first container of a shipment made by [`shipment`] (and the shipment) as
/// `change` says, as a carrier's answer would.
async fn changed(
    store: &dyn Store,
    account: AccountId,
    id: ShipmentId,
    change: impl FnOnce(&mut tidemark_domain::Shipment, &mut tidemark_domain::Container),
) {
    let mut shipment = store.shipment(account, id).await.unwrap();
    let mut containers = store.containers_of_shipment(id).await.unwrap();
    change(&mut shipment, &mut containers[0]);
    let request = store
        .tracking_request(account, shipment.tracking_request_id)
        .await
        .unwrap();
    let update = TrackingUpdate {
        changed_containers: containers,
        ..TrackingUpdate::shipment_only(shipment)
    };
    store
        .record_tracking_result(&request, request.updated_at, Some(&update), &[])
        .await
        .unwrap();
}

pub async fn asks_of_containers_out_returned_or_no_longer_tracked_are_forgotten_by_housekeeping(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let store = store.as_ref();
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let discharged = Case {
        discharged: Some(now() - Duration::hours(3)),
        ..Case::default()
    };
    let mut shipments = Vec::new();
    for number in ["TERM-F1", "TERM-F2", "TERM-F3", "TERM-F4"] {
        shipments.push(shipment(store, &ids, acme, number, discharged).await);
    }
    let mut containers = Vec::new();
    for id in &shipments {
        containers.push(first_container(store, *id).await);
    }
    let asked_at = now() - Duration::minutes(20);
    for terminal in [PIER, "emodal"] {
        store
            .record_terminal_asks(terminal, &containers, asked_at)
            .await
            .unwrap();
    }
    let [waiting, picked_up, returned, stopped] = containers[..] else {
        unreachable!("four containers");
    };
    changed(store, acme, shipments[1], |_, container| {
        container.pod_full_out_at = Some(now() - Duration::hours(1));
    })
    .await;
    changed(store, acme, shipments[2], |_, container| {
        container.pod_full_out_at = Some(now() - Duration::hours(2));
        container.empty_terminated_at = Some(now() - Duration::hours(1));
    })
    .await;
    changed(store, acme, shipments[3], |shipment, _| {
        shipment.line_tracking_stopped_at = Some(now() - Duration::hours(1));
        shipment.line_tracking_stopped_reason = Some("user".to_owned());
    })
    .await;
    store
        .record_terminal_asks(PIER, &[waiting], now())
        .await
        .unwrap();
    let kept_before = store.terminal_asks("emodal").await.unwrap().len();

    let forgotten = store.forget_finished_terminal_asks().await.unwrap();

    let kept = |asks: Vec<(ContainerId, DateTime<Utc>)>| -> Vec<ContainerId> {
        asks.into_iter().map(|(id, _)| id).collect()
    };
    assert_eq!(kept_before, 4, "nothing forgotten by recording asks");
    assert_eq!(forgotten, 6, "three containers' asks, by two terminals");
    assert_eq!(
        store.terminal_asks(PIER).await.unwrap(),
        [(waiting, now())],
        "the pier's asks of {picked_up:?}, {returned:?} and {stopped:?} forgotten"
    );
    assert_eq!(
        kept(store.terminal_asks("emodal").await.unwrap()),
        [waiting],
        "every terminal's, not only the one recording"
    );
}

pub async fn an_ask_of_a_container_that_is_not_there_is_not_kept(backend: &dyn TestBackend) {
    let store = backend.store();
    let store = store.as_ref();
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let discharged = shipment(
        store,
        &ids,
        acme,
        "TERM-G1",
        Case {
            discharged: Some(now() - Duration::hours(3)),
            ..Case::default()
        },
    )
    .await;
    let there = first_container(store, discharged).await;
    let gone = ContainerId(Uuid::from_u128(0xdead));

    store
        .record_terminal_asks(PIER, &[there, gone], now())
        .await
        .unwrap();

    assert_eq!(store.terminal_asks(PIER).await.unwrap(), [(there, now())]);
}
