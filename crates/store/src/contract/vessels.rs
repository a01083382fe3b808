//! The [`VesselStore`](crate::VesselStore) part of the contract.

#![expect(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use chrono::{DateTime, Duration, TimeZone, Utc};
use uuid::Uuid;

use super::TestBackend;
use crate::{AisPosition, Fix, StoreError, VesselIdentity};

/// Expands this part's cases; called by [`store_contract_tests!`](crate::store_contract_tests).
#[macro_export]
macro_rules! vessel_contract_tests {
    ($backend:path) => {
        $crate::store_contract_tests!(@cases_in vessels $backend;
            a_position_for_a_new_mmsi_creates_the_vessel_with_its_latest_fix,
            positions_closer_than_the_interval_are_thinned_but_the_latest_fix_moves,
            an_older_report_does_not_replace_the_latest_fix,
            a_track_is_read_by_time_range_oldest_first,
            a_vessel_from_carrier_data_is_found_by_imo_and_recorded_once,
            a_static_report_merges_an_mmsi_vessel_into_the_imo_vessel,
            old_positions_are_purged,
            vessels_are_found_by_several_imos,
            a_sampled_track_keeps_the_ends_and_spreads_the_rest_evenly,
        );
    };
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 11, 8, 0, 0, 0).unwrap()
}

fn fix(minutes: i64, lat: f64, lon: f64) -> Fix {
    Fix {
        timestamp: t0() + Duration::minutes(minutes),
        latitude: lat,
        longitude: lon,
        speed_knots: Some(12.5),
        course: Some(90.0),
        heading: Some(91.0),
    }
}

fn report(mmsi: &str, seed: u128, fix: Fix) -> AisPosition {
    AisPosition {
        mmsi: mmsi.to_owned(),
        fix,
        new_vessel_id: Uuid::from_u128(seed),
    }
}

fn identity(
    imo: Option<&str>,
    mmsi: Option<&str>,
    name: Option<&str>,
    seed: u128,
) -> VesselIdentity {
    VesselIdentity {
        imo: imo.map(str::to_owned),
        mmsi: mmsi.map(str::to_owned),
        name: name.map(str::to_owned),
        new_vessel_id: Uuid::from_u128(seed),
    }
}

fn all_time() -> (DateTime<Utc>, DateTime<Utc>) {
    (t0() - Duration::days(365), t0() + Duration::days(365))
}

pub async fn a_position_for_a_new_mmsi_creates_the_vessel_with_its_latest_fix(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let recorded = store
        .record_positions(
            &[
                report("244123000", 1, fix(0, 51.9, 4.1)),
                report("244123000", 2, fix(10, 52.0, 4.0)),
            ],
            Duration::seconds(60),
            t0(),
        )
        .await
        .unwrap();
    assert_eq!(recorded.new_vessels, 1);
    assert_eq!(recorded.stored, 2);

    let vessel = store.vessel(Uuid::from_u128(1)).await.unwrap();
    assert_eq!(vessel.mmsi.as_deref(), Some("244123000"));
    assert_eq!(vessel.imo, None);
    assert_eq!(vessel.latest, Some(fix(10, 52.0, 4.0)));
    assert!(matches!(
        store.vessel(Uuid::from_u128(2)).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn positions_closer_than_the_interval_are_thinned_but_the_latest_fix_moves(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let interval = Duration::minutes(5);
    let first = store
        .record_positions(
            &[
                report("244123000", 1, fix(0, 50.0, 4.0)),
                report("244123000", 1, fix(2, 50.1, 4.0)),
                report("244123000", 1, fix(5, 50.2, 4.0)),
            ],
            interval,
            t0(),
        )
        .await
        .unwrap();
    assert_eq!((first.stored, first.thinned), (2, 1));
    // The next batch is thinned against what the first one stored.
    let second = store
        .record_positions(&[report("244123000", 1, fix(7, 50.3, 4.0))], interval, t0())
        .await
        .unwrap();
    assert_eq!((second.stored, second.thinned), (0, 1));

    let (from, to) = all_time();
    let track = store
        .vessel_track(Uuid::from_u128(1), from, to, 100)
        .await
        .unwrap();
    assert_eq!(track, vec![fix(0, 50.0, 4.0), fix(5, 50.2, 4.0)]);
    let vessel = store.vessel(Uuid::from_u128(1)).await.unwrap();
    assert_eq!(vessel.latest, Some(fix(7, 50.3, 4.0)));
}

pub async fn an_older_report_does_not_replace_the_latest_fix(backend: &dyn TestBackend) {
    let store = backend.store();
    for minutes in [30, 10] {
        store
            .record_positions(
                &[report(
                    "244123000",
                    1,
                    fix(minutes, 50.0, f64::from(minutes as i32)),
                )],
                Duration::seconds(1),
                t0(),
            )
            .await
            .unwrap();
    }
    let vessel = store.vessel(Uuid::from_u128(1)).await.unwrap();
    assert_eq!(vessel.latest, Some(fix(30, 50.0, 30.0)));
}

pub async fn a_track_is_read_by_time_range_oldest_first(backend: &dyn TestBackend) {
    let store = backend.store();
    let reports: Vec<AisPosition> = (0..50)
        .rev()
        .map(|i| report("244123000", 1, fix(i * 10, 50.0 + i as f64 / 100.0, 4.0)))
        .collect();
    store
        .record_positions(&reports, Duration::seconds(60), t0())
        .await
        .unwrap();
    // Another vessel's track is not mixed in.
    store
        .record_positions(
            &[report("244999000", 2, fix(100, 1.0, 1.0))],
            Duration::seconds(60),
            t0(),
        )
        .await
        .unwrap();

    let track = store
        .vessel_track(
            Uuid::from_u128(1),
            t0() + Duration::minutes(100),
            t0() + Duration::minutes(200),
            100,
        )
        .await
        .unwrap();
    let minutes: Vec<i64> = track
        .iter()
        .map(|f| (f.timestamp - t0()).num_minutes())
        .collect();
    assert_eq!(minutes, (10..=20).map(|i| i * 10).collect::<Vec<_>>());
    let limited = store
        .vessel_track(Uuid::from_u128(1), t0(), t0() + Duration::days(1), 3)
        .await
        .unwrap();
    assert_eq!(limited.len(), 3);
    assert_eq!(limited[0].timestamp, t0());
}

pub async fn a_vessel_from_carrier_data_is_found_by_imo_and_recorded_once(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let first = store
        .record_vessel_identities(
            &[identity(Some("9811000"), None, Some("EVER ACE"), 1)],
            t0(),
        )
        .await
        .unwrap();
    let again = store
        .record_vessel_identities(&[identity(Some("9811000"), None, None, 2)], t0())
        .await
        .unwrap();
    assert_eq!(first[0].id, Uuid::from_u128(1));
    assert_eq!(again[0].id, Uuid::from_u128(1));
    assert_eq!(again[0].name.as_deref(), Some("EVER ACE"));
    let found = store.vessel_by_imo("9811000").await.unwrap();
    assert_eq!(found.id, Uuid::from_u128(1));
    assert!(matches!(
        store.vessel_by_imo("1234567").await,
        Err(StoreError::NotFound)
    ));
}

pub async fn a_static_report_merges_an_mmsi_vessel_into_the_imo_vessel(backend: &dyn TestBackend) {
    let store = backend.store();
    store
        .record_vessel_identities(
            &[identity(Some("9811000"), None, Some("EVER ACE"), 1)],
            t0(),
        )
        .await
        .unwrap();
    store
        .record_positions(
            &[
                report("353136000", 2, fix(0, 10.0, 100.0)),
                report("353136000", 2, fix(60, 10.5, 101.0)),
            ],
            Duration::seconds(60),
            t0(),
        )
        .await
        .unwrap();

    let merged = store
        .record_vessel_identities(
            &[identity(
                Some("9811000"),
                Some("353136000"),
                Some("EVER ACE"),
                3,
            )],
            t0(),
        )
        .await
        .unwrap();

    assert_eq!(merged[0].id, Uuid::from_u128(1));
    assert_eq!(merged[0].mmsi.as_deref(), Some("353136000"));
    assert_eq!(merged[0].latest, Some(fix(60, 10.5, 101.0)));
    assert!(matches!(
        store.vessel(Uuid::from_u128(2)).await,
        Err(StoreError::NotFound)
    ));
    let (from, to) = all_time();
    let track = store
        .vessel_track(Uuid::from_u128(1), from, to, 100)
        .await
        .unwrap();
    assert_eq!(track.len(), 2);
    // Later positions for the MMSI land on the merged vessel.
    store
        .record_positions(
            &[report("353136000", 4, fix(120, 11.0, 102.0))],
            Duration::seconds(60),
            t0(),
        )
        .await
        .unwrap();
    let vessel = store.vessel_by_imo("9811000").await.unwrap();
    assert_eq!(vessel.latest, Some(fix(120, 11.0, 102.0)));
}

pub async fn old_positions_are_purged(backend: &dyn TestBackend) {
    let store = backend.store();
    let reports: Vec<AisPosition> = (0..10)
        .map(|i| report("244123000", 1, fix(i * 60, 50.0, 4.0)))
        .collect();
    store
        .record_positions(&reports, Duration::seconds(60), t0())
        .await
        .unwrap();
    let purged = store
        .purge_vessel_positions(t0() + Duration::minutes(300))
        .await
        .unwrap();
    assert_eq!(purged, 5);
    let (from, to) = all_time();
    let track = store
        .vessel_track(Uuid::from_u128(1), from, to, 100)
        .await
        .unwrap();
    assert_eq!(track.len(), 5);
    assert_eq!(track[0].timestamp, t0() + Duration::minutes(300));
}

pub async fn vessels_are_found_by_several_imos(backend: &dyn TestBackend) {
    let store = backend.store();
    store
        .record_vessel_identities(
            &[
                identity(Some("9811000"), None, Some("A"), 1),
                identity(Some("9811001"), None, Some("B"), 2),
            ],
            t0(),
        )
        .await
        .unwrap();
    let mut found = store
        .vessels_by_imos(&["9811001".to_owned(), "9811000".to_owned(), "1".to_owned()])
        .await
        .unwrap();
    found.sort_by_key(|v| v.id);
    let names: Vec<_> = found.iter().map(|v| v.name.clone().unwrap()).collect();
    assert_eq!(names, ["A", "B"]);
}

pub async fn a_sampled_track_keeps_the_ends_and_spreads_the_rest_evenly(backend: &dyn TestBackend) {
    let store = backend.store();
    let reports: Vec<AisPosition> = (0..1_001)
        .map(|i| report("244123000", 1, fix(i, 50.0, 4.0)))
        .collect();
    store
        .record_positions(&reports, Duration::seconds(60), t0())
        .await
        .unwrap();
    let (from, to) = all_time();
    let sampled = store
        .vessel_track_sampled(Uuid::from_u128(1), from, to, 100)
        .await
        .unwrap();
    let minutes: Vec<i64> = sampled
        .iter()
        .map(|f| (f.timestamp - t0()).num_minutes())
        .collect();
    // Every 11th of 1,001 points, and the last.
    assert_eq!(minutes.first(), Some(&0));
    assert_eq!(minutes.last(), Some(&1_000));
    assert!(minutes.len() <= 101, "{}", minutes.len());
    assert!(minutes.len() >= 90, "{}", minutes.len());
    assert!(minutes.windows(2).all(|w| w[1] - w[0] <= 11 && w[1] > w[0]));
    // A short track comes whole.
    let whole = store
        .vessel_track_sampled(Uuid::from_u128(1), from, t0() + Duration::minutes(49), 100)
        .await
        .unwrap();
    assert_eq!(whole.len(), 50);
}
