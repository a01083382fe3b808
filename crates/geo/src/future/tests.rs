use chrono::TimeZone;

use super::*;
use crate::searoute::Passage;

const LOS_ANGELES: (f64, f64) = (-118.283333, 33.716667);
const SHANGHAI: (f64, f64) = (121.497113, 31.400091);
const ROTTERDAM: (f64, f64) = (4.442447, 51.904383);
const NINGBO: (f64, f64) = (121.559404, 29.871877);
const SAVANNAH: (f64, f64) = (-81.09974, 32.086579);
/// At sea east of Japan, bound for Los Angeles across the antimeridian.
const OFF_JAPAN: (f64, f64) = (150.0, 36.0);
/// In the Arabian Sea, bound for Rotterdam through Suez.
const ARABIAN_SEA: (f64, f64) = (62.0, 15.0);

fn at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 12, 1, 6, 0, 0).unwrap()
}

fn request(from: (f64, f64), destination: (f64, f64)) -> FutureRequest {
    FutureRequest {
        from,
        at: at(),
        destination,
        previous_port: None,
        eta: None,
        speed_knots: None,
    }
}

fn estimate(request: &FutureRequest) -> FuturePath {
    estimate_future_positions(SeaRouter::embedded(), request, &FutureOptions::default()).unwrap()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

fn assert_ends_at(path: &FuturePath, destination: (f64, f64)) {
    let last = path.positions.last().unwrap();
    assert!(close(last.longitude, destination.0, 1e-9), "{last:?}");
    assert!(close(last.latitude, destination.1, 1e-9), "{last:?}");
    assert_eq!(last.timestamp, path.arrival);
}

#[test]
fn pacing_by_a_future_eta_ends_exactly_at_the_eta() {
    let eta = at() + TimeDelta::days(9) + TimeDelta::seconds(17);
    let path = estimate(&FutureRequest {
        eta: Some(eta),
        speed_knots: Some(22.0),
        ..request(OFF_JAPAN, LOS_ANGELES)
    });
    assert_eq!(path.pacing, Pacing::Eta);
    assert!(!path.clamped);
    assert_eq!(path.arrival, eta);
    assert_ends_at(&path, LOS_ANGELES);
    let hours = seconds(eta - at()) / 3600.0;
    assert!(close(
        path.speed_knots,
        path.remaining_km / KM_PER_NM / hours,
        1e-9
    ));
}

#[test]
fn pacing_by_reported_speed_arrives_after_distance_over_speed() {
    let path = estimate(&FutureRequest {
        speed_knots: Some(18.0),
        ..request(OFF_JAPAN, LOS_ANGELES)
    });
    assert_eq!(path.pacing, Pacing::ReportedSpeed);
    assert_eq!(path.speed_knots, 18.0);
    let expected_s = path.remaining_km / (18.0 * KM_PER_NM) * 3600.0;
    let actual_s = seconds(path.arrival - at());
    assert!(
        close(actual_s, expected_s, 1.0),
        "{actual_s} vs {expected_s}"
    );
    assert_ends_at(&path, LOS_ANGELES);
}

#[test]
fn an_eta_in_the_past_falls_back_to_the_reported_speed() {
    let path = estimate(&FutureRequest {
        eta: Some(at() - TimeDelta::hours(3)),
        speed_knots: Some(16.0),
        ..request(OFF_JAPAN, LOS_ANGELES)
    });
    assert_eq!(path.pacing, Pacing::ReportedSpeed);
    assert_eq!(path.speed_knots, 16.0);
}

#[test]
fn without_eta_or_speed_the_service_speed_paces_the_vessel() {
    let path = estimate(&request(OFF_JAPAN, LOS_ANGELES));
    assert_eq!(path.pacing, Pacing::ServiceSpeed);
    assert_eq!(path.speed_knots, 14.0);
    let zero = estimate(&FutureRequest {
        speed_knots: Some(0.0),
        ..request(OFF_JAPAN, LOS_ANGELES)
    });
    assert_eq!(zero.pacing, Pacing::ServiceSpeed);
}

#[test]
fn an_eta_too_soon_is_clamped_to_the_maximum_speed_and_arrives_later() {
    let eta = at() + TimeDelta::hours(1);
    let path = estimate(&FutureRequest {
        eta: Some(eta),
        ..request(OFF_JAPAN, LOS_ANGELES)
    });
    assert_eq!(path.pacing, Pacing::Eta);
    assert!(path.clamped);
    assert_eq!(path.speed_knots, 25.0);
    assert!(path.arrival > eta);
    assert_ends_at(&path, LOS_ANGELES);
}

#[test]
fn reported_speeds_are_clamped_into_the_bounds() {
    let slow = estimate(&FutureRequest {
        speed_knots: Some(0.4),
        ..request(OFF_JAPAN, LOS_ANGELES)
    });
    assert_eq!((slow.speed_knots, slow.clamped), (3.0, true));
    let fast = estimate(&FutureRequest {
        speed_knots: Some(60.0),
        ..request(OFF_JAPAN, LOS_ANGELES)
    });
    assert_eq!((fast.speed_knots, fast.clamped), (25.0, true));
}

#[test]
fn every_point_lies_on_the_route_with_a_heading_in_range() {
    let cases = [
        request(OFF_JAPAN, LOS_ANGELES),
        request(ARABIAN_SEA, ROTTERDAM),
        FutureRequest {
            previous_port: Some(NINGBO),
            ..request((-100.0, 12.0), SAVANNAH)
        },
        request(SHANGHAI, LOS_ANGELES),
    ];
    for case in &cases {
        let path = estimate(case);
        assert!(path.positions.len() > 10, "{case:?}");
        for p in &path.positions {
            let (_, _, off) = nearest_on_route(&path.route, [p.longitude, p.latitude], 0);
            assert!(off < 1e-3, "{p:?} is {off} km off the route of {case:?}");
            assert!((0.0..360.0).contains(&p.heading), "{p:?}");
            assert!((-180.0..=180.0).contains(&p.longitude), "{p:?}");
            assert!(p.estimated);
        }
    }
}

#[test]
fn hourly_points_are_exactly_one_hour_apart_until_the_arrival() {
    let path = estimate(&FutureRequest {
        speed_knots: Some(20.0),
        ..request(OFF_JAPAN, LOS_ANGELES)
    });
    let times: Vec<_> = path.positions.iter().map(|p| p.timestamp).collect();
    assert_eq!(times[0], at() + TimeDelta::hours(1));
    for w in times[..times.len() - 1].windows(2) {
        assert_eq!(w[1] - w[0], TimeDelta::hours(1));
    }
    let last_gap = times[times.len() - 1] - times[times.len() - 2];
    assert!(last_gap > TimeDelta::zero() && last_gap <= TimeDelta::hours(1));
}

#[test]
fn the_point_count_is_bounded_and_still_ends_at_the_port() {
    let options = FutureOptions {
        max_points: 10,
        ..FutureOptions::default()
    };
    let path = estimate_future_positions(
        SeaRouter::embedded(),
        &request(OFF_JAPAN, LOS_ANGELES),
        &options,
    )
    .unwrap();
    assert_eq!(path.positions.len(), 10);
    assert_ends_at(&path, LOS_ANGELES);
    assert!(
        path.positions
            .windows(2)
            .all(|w| w[0].timestamp < w[1].timestamp)
    );
}

#[test]
fn distance_spacing_puts_points_that_far_apart_along_the_route() {
    let options = FutureOptions {
        spacing: Spacing::DistanceKm(100.0),
        ..FutureOptions::default()
    };
    let path = estimate_future_positions(
        SeaRouter::embedded(),
        &request(ARABIAN_SEA, ROTTERDAM),
        &options,
    )
    .unwrap();
    let expected = (path.remaining_km / 100.0).ceil() as usize;
    assert_eq!(path.positions.len(), expected);
    let km: Vec<f64> = path
        .positions
        .iter()
        .map(|p| nearest_on_route(&path.route, [p.longitude, p.latitude], 0).1)
        .collect();
    for w in km[..km.len() - 1].windows(2) {
        assert!(close(w[1] - w[0], 100.0, 1e-6), "{w:?}");
    }
}

#[test]
fn a_vessel_near_the_planned_leg_follows_it() {
    // On the Ningbo → Savannah route, a little off it.
    let leg = SeaRouter::embedded()
        .route(NINGBO, SAVANNAH, &RouteOptions::default())
        .unwrap();
    let on_leg = leg.point_at_fraction(0.4);
    let path = estimate(&FutureRequest {
        previous_port: Some(NINGBO),
        ..request((on_leg.lon, on_leg.lat + 0.1), SAVANNAH)
    });
    assert_eq!(path.route.points()[0], [NINGBO.0, NINGBO.1]);
    assert!(close(path.start_km, 0.4 * leg.length_km(), 20.0));
    assert!(path.remaining_km < 0.61 * leg.length_km());
}

#[test]
fn a_vessel_far_from_the_planned_leg_is_routed_from_where_it_is() {
    let path = estimate(&FutureRequest {
        previous_port: Some(NINGBO),
        ..request(ARABIAN_SEA, SAVANNAH)
    });
    assert_eq!(path.route.points()[0], [ARABIAN_SEA.0, ARABIAN_SEA.1]);
}

#[test]
fn a_vessel_already_at_the_port_arrives_at_once() {
    let path = estimate(&request(LOS_ANGELES, LOS_ANGELES));
    assert_eq!(path.positions.len(), 1);
    assert_eq!(path.arrival, at());
    assert_ends_at(&path, LOS_ANGELES);
}

#[test]
fn invalid_coordinates_are_reported_with_the_point_they_concern() {
    let router = SeaRouter::embedded();
    let options = FutureOptions::default();
    let bad_position = request((10.0, 95.0), ROTTERDAM);
    assert!(matches!(
        estimate_future_positions(router, &bad_position, &options),
        Err(FutureError::InvalidCoordinate {
            point: InputPoint::Position,
            ..
        })
    ));
    let bad_destination = request(ARABIAN_SEA, (f64::NAN, 0.0));
    assert!(matches!(
        estimate_future_positions(router, &bad_destination, &options),
        Err(FutureError::InvalidCoordinate {
            point: InputPoint::Destination,
            ..
        })
    ));
    let bad_previous = FutureRequest {
        previous_port: Some((200.0, 0.0)),
        ..request(ARABIAN_SEA, ROTTERDAM)
    };
    assert!(matches!(
        estimate_future_positions(router, &bad_previous, &options),
        Err(FutureError::InvalidCoordinate {
            point: InputPoint::PreviousPort,
            ..
        })
    ));
}

#[test]
fn a_destination_cut_off_by_avoided_passages_has_no_route() {
    // The Black Sea's only way out is the Bosporus.
    let options = FutureOptions {
        route: RouteOptions::default().avoiding(Passage::Bosporus),
        ..FutureOptions::default()
    };
    let odesa_roads = (31.0, 46.2);
    let result = estimate_future_positions(
        SeaRouter::embedded(),
        &request(odesa_roads, ROTTERDAM),
        &options,
    );
    assert_eq!(result.unwrap_err(), FutureError::NoRoute);
}

#[test]
fn unusable_options_are_refused() {
    let bad = [
        FutureOptions {
            min_speed_knots: 30.0,
            ..FutureOptions::default()
        },
        FutureOptions {
            spacing: Spacing::Time(TimeDelta::zero()),
            ..FutureOptions::default()
        },
        FutureOptions {
            max_points: 0,
            ..FutureOptions::default()
        },
        FutureOptions {
            service_speed_knots: f64::NAN,
            ..FutureOptions::default()
        },
    ];
    for options in &bad {
        let result = estimate_future_positions(
            SeaRouter::embedded(),
            &request(OFF_JAPAN, LOS_ANGELES),
            options,
        );
        assert!(
            matches!(result, Err(FutureError::InvalidOptions(_))),
            "{options:?}"
        );
    }
}

#[test]
fn projection_onto_a_segment_gives_the_cross_track_distance_and_the_foot() {
    let (d, along) = project_on_segment([0.0, 0.0], [10.0, 0.0], [5.0, 1.0]);
    assert!(close(d, haversine_km([0.0, 0.0], [0.0, 1.0]), 1e-6), "{d}");
    assert!(
        close(along, haversine_km([0.0, 0.0], [5.0, 0.0]), 1e-6),
        "{along}"
    );
    // Beyond the end: the distance to the end.
    let (d, along) = project_on_segment([0.0, 0.0], [10.0, 0.0], [12.0, 0.0]);
    assert!(close(d, haversine_km([10.0, 0.0], [12.0, 0.0]), 1e-6));
    assert!(close(along, haversine_km([0.0, 0.0], [10.0, 0.0]), 1e-6));
    // Across the antimeridian.
    let (d, _) = project_on_segment([179.0, 0.0], [181.0, 0.0], [-180.0, 0.5]);
    assert!(close(d, haversine_km([0.0, 0.0], [0.0, 0.5]), 1e-6));
}

#[test]
fn positions_serialize_with_terminal49_field_names() {
    let p = FuturePosition {
        latitude: 1.5,
        longitude: 2.5,
        heading: 90.0,
        timestamp: at(),
        estimated: true,
    };
    let v = serde_json::to_value(p).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "latitude": 1.5, "longitude": 2.5, "heading": 90.0,
            "timestamp": "2025-12-01T06:00:00Z", "estimated": true
        })
    );
}

#[test]
fn a_vessel_past_its_nearest_network_node_does_not_turn_back_to_it() {
    use crate::searoute::{EdgeKind, NetworkData, format::EdgeRecord};
    // One lane along the equator with nodes 10° apart; the vessel is 3° past the first.
    let data = NetworkData {
        nodes: vec![[0, 0], [10_000_000, 0], [20_000_000, 0]],
        edges: vec![
            EdgeRecord {
                a: 0,
                b: 1,
                kind: EdgeKind::Plain,
            },
            EdgeRecord {
                a: 1,
                b: 2,
                kind: EdgeKind::Plain,
            },
        ],
    };
    let router = SeaRouter::from_data(&data).unwrap();
    let vessel = (3.0, 0.1);
    let direct = router
        .route(vessel, (20.0, 0.0), &RouteOptions::default())
        .unwrap();
    assert_eq!(
        direct.points()[1],
        [0.0, 0.0],
        "the plain route goes back first"
    );

    let path = estimate_future_positions(
        &router,
        &request(vessel, (20.0, 0.0)),
        &FutureOptions::default(),
    )
    .unwrap();
    let expected = haversine_km([3.0, 0.0], [20.0, 0.0]) + haversine_km([3.0, 0.0], [3.0, 0.1]);
    assert!(
        close(path.remaining_km, expected, 0.01),
        "{}",
        path.remaining_km
    );
    assert!(
        path.positions
            .iter()
            .all(|p| p.longitude > 3.0 - 1e-9 && close(p.heading, 90.0, 1e-6))
    );
}
