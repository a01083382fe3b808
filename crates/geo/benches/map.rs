//! Route-map timings: building and serializing the map of a three-port route
//! (Laem Chabang → Xiamen → Savannah) with 10,000 stored positions on the leg under way,
//! and estimating future positions from the vessel.
//!
//! ```text
//! cargo bench -p tidemark-geo --bench map
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use tidemark_geo::future::{FutureOptions, FutureRequest, estimate_future_positions};
use tidemark_geo::map::{
    MapInput, MapLeg, MapOptions, MapPort, MapVessel, TrackPoint, VesselFix, build_map,
};
use tidemark_geo::reference::ReferenceData;
use tidemark_geo::searoute::{RouteOptions, SeaRouter};
use uuid::Uuid;

const RUNS: usize = 201;
const POSITIONS: usize = 10_000;

fn time(start: DateTime<Utc>, minutes: usize) -> DateTime<Utc> {
    start + TimeDelta::minutes(i64::try_from(minutes).expect("small"))
}

fn port(locode: &str) -> MapPort {
    MapPort::from_port(
        ReferenceData::embedded()
            .port_by_locode(locode)
            .expect("known port"),
    )
}

fn track(
    from: &MapPort,
    to: &MapPort,
    fraction: f64,
    n: usize,
    start: DateTime<Utc>,
) -> Vec<TrackPoint> {
    let route = SeaRouter::embedded()
        .route(
            from.coordinates.expect("coordinates"),
            to.coordinates.expect("coordinates"),
            &RouteOptions::default(),
        )
        .expect("a sea route");
    // A little noise, as AIS fixes have, so simplification has work to do.
    (0..n)
        .map(|i| {
            let p = route.point_at_fraction(fraction * i as f64 / (n - 1) as f64);
            let wobble = ((i * 7919) % 13) as f64 * 1e-3;
            TrackPoint {
                lon: p.lon,
                lat: (p.lat + wobble).min(90.0),
                timestamp: time(start, 5 * i),
            }
        })
        .collect()
}

fn input() -> MapInput {
    let start = Utc
        .with_ymd_and_hms(2025, 11, 8, 0, 0, 0)
        .single()
        .expect("valid date");
    let mut pol = port("THLCH");
    let mut ts = port("CNXMN");
    let mut pod = port("USSAV");
    pol.outbound_atd_at = Some(start);
    ts.inbound_ata_at = Some(start + TimeDelta::days(7));
    ts.outbound_atd_at = Some(start + TimeDelta::days(11));
    pod.inbound_eta_at = Some(start + TimeDelta::days(53));
    let leg1 = MapLeg {
        vessel: Some(MapVessel {
            id: Uuid::from_u128(1),
            name: "FIRST".to_owned(),
            imo: Some("9000001".to_owned()),
        }),
        voyage_number: Some("1W".to_owned()),
        track: track(&pol, &ts, 1.0, 2_000, start),
        current: None,
    };
    let track2 = track(&ts, &pod, 0.6, POSITIONS, start + TimeDelta::days(11));
    let last = *track2.last().expect("positions");
    let leg2 = MapLeg {
        vessel: Some(MapVessel {
            id: Uuid::from_u128(2),
            name: "ZIM BANGKOK".to_owned(),
            imo: Some("9936525".to_owned()),
        }),
        voyage_number: Some("13E".to_owned()),
        track: track2,
        current: Some(VesselFix {
            lon: last.lon,
            lat: last.lat,
            heading: Some(108.0),
            speed_knots: Some(21.0),
            timestamp: last.timestamp + TimeDelta::minutes(5),
        }),
    };
    MapInput {
        ports: vec![pol, ts, pod],
        legs: vec![leg1, leg2],
        updated_at: Some(start + TimeDelta::days(33)),
    }
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let pick = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name:<44} p50 {:>8.3} ms   p90 {:>8.3} ms   min {:>8.3} ms",
        pick(0.5).as_secs_f64() * 1e3,
        pick(0.9).as_secs_f64() * 1e3,
        pick(0.0).as_secs_f64() * 1e3,
    );
}

fn main() {
    let router = SeaRouter::embedded();
    let input = input();
    let options = MapOptions::default();
    let stored: usize = input.legs.iter().map(|l| l.track.len()).sum();

    let bytes = serde_json::to_vec(&build_map(&input, router, &options)).expect("serializes");
    let features = build_map(&input, router, &options).features.len();
    println!(
        "three-port route, {stored} stored positions ({POSITIONS} on the leg under way): \
         {features} features, {} bytes of JSON",
        bytes.len()
    );

    let mut build = Vec::with_capacity(RUNS);
    let mut build_and_serialize = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let map = build_map(black_box(&input), router, &options);
        build.push(t.elapsed());
        let json = serde_json::to_vec(&map).expect("serializes");
        build_and_serialize.push(t.elapsed());
        black_box(json);
    }
    report("build_map", build);
    report("build_map + serde_json::to_vec", build_and_serialize);

    let fix = input.legs[1].current.expect("vessel at sea");
    let request = FutureRequest {
        from: (fix.lon, fix.lat),
        at: fix.timestamp,
        destination: input.ports[2].coordinates.expect("coordinates"),
        previous_port: input.ports[1].coordinates,
        eta: input.ports[2].inbound_eta_at,
        speed_knots: fix.speed_knots,
    };
    let future_options = FutureOptions::default();
    let mut future = Vec::with_capacity(RUNS);
    let mut count = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        let path = estimate_future_positions(router, black_box(&request), &future_options)
            .expect("a route");
        future.push(t.elapsed());
        count = path.positions.len();
    }
    report(
        &format!("estimate_future_positions ({count} points)"),
        future,
    );
}
