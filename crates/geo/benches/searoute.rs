//! Sea-routing timings: network load, then every port pair of `bench/searoute/pairs.txt`.
//!
//! ```text
//! cargo bench -p tidemark-geo --bench searoute                       # human-readable
//! cargo bench -p tidemark-geo --bench searoute -- --json PAIRS.json  # for bench/searoute/run.sh
//! ```
//!
//! `PAIRS.json` is a list of `{"from", "to", "from_coord": [lon, lat], "to_coord": [lon, lat]}`
//! so both implementations route the very same coordinates; the JSON output has one
//! entry per pair with the length and the mean time per route.

use std::hint::black_box;
use std::time::{Duration, Instant};
use std::{env, fs};

use serde_json::{Value, json};
use tidemark_geo::reference::ReferenceData;
use tidemark_geo::searoute::{RouteOptions, SeaRouter};

/// Each route is timed this many times (after one warm-up); the median is reported,
/// which shrugs off the other jobs of a shared machine.
const REPEAT: usize = 51;
/// Loads are timed this many times; the best and the mean are shown.
const LOADS: u32 = 20;

struct Pair {
    from: String,
    to: String,
    from_coord: (f64, f64),
    to_coord: (f64, f64),
}

fn pairs_from_text() -> Vec<Pair> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/searoute/pairs.txt"
    );
    let text = fs::read_to_string(path).expect("bench/searoute/pairs.txt is readable");
    let ports = ReferenceData::embedded();
    let coord = |locode: &str| {
        let port = ports
            .port_by_locode(locode)
            .unwrap_or_else(|| panic!("unknown port {locode}"));
        (port.longitude, port.latitude)
    };
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut it = l.split_whitespace();
            let (from, to) = (
                it.next().expect("from").to_owned(),
                it.next().expect("to").to_owned(),
            );
            Pair {
                from_coord: coord(&from),
                to_coord: coord(&to),
                from,
                to,
            }
        })
        .collect()
}

fn pairs_from_json(path: &str) -> Vec<Pair> {
    let json: Value =
        serde_json::from_str(&fs::read_to_string(path).expect("pairs file is readable"))
            .expect("pairs file is JSON");
    let coord = |v: &Value| (v[0].as_f64().expect("lon"), v[1].as_f64().expect("lat"));
    json.as_array()
        .expect("a list of pairs")
        .iter()
        .map(|p| Pair {
            from: p["from"].as_str().expect("from").to_owned(),
            to: p["to"].as_str().expect("to").to_owned(),
            from_coord: coord(&p["from_coord"]),
            to_coord: coord(&p["to_coord"]),
        })
        .collect()
}

fn main() {
    let args: Vec<String> = env::args().skip(1).filter(|a| a != "--bench").collect();
    let json_pairs = match args.as_slice() {
        [flag, path] if flag == "--json" => Some(path.clone()),
        _ => None,
    };

    let mut best_load = Duration::MAX;
    let mut total_load = Duration::ZERO;
    for _ in 0..LOADS {
        let start = Instant::now();
        let router = SeaRouter::load_embedded().expect("embedded network loads");
        let took = start.elapsed();
        black_box(router);
        best_load = best_load.min(took);
        total_load += took;
    }
    let mean_load = total_load / LOADS;

    let router = SeaRouter::load_embedded().expect("embedded network loads");
    let options = RouteOptions::default();
    let pairs = match &json_pairs {
        Some(path) => pairs_from_json(path),
        None => pairs_from_text(),
    };

    let mut results = Vec::with_capacity(pairs.len());
    let mut total = Duration::ZERO;
    for pair in &pairs {
        let route = router
            .route(pair.from_coord, pair.to_coord, &options)
            .unwrap_or_else(|e| panic!("{} -> {}: {e}", pair.from, pair.to));
        let mut times: Vec<Duration> = (0..REPEAT)
            .map(|_| {
                let start = Instant::now();
                let route = router.route(
                    black_box(pair.from_coord),
                    black_box(pair.to_coord),
                    &options,
                );
                black_box(route.ok());
                start.elapsed()
            })
            .collect();
        times.sort_unstable();
        let per_route = times[REPEAT / 2];
        total += per_route;
        results.push((pair, route, per_route));
    }

    if json_pairs.is_some() {
        let routes: Vec<Value> = results
            .iter()
            .map(|(pair, route, took)| {
                json!({
                    "from": pair.from,
                    "to": pair.to,
                    "km": route.length_km(),
                    "seconds": took.as_secs_f64(),
                    "passages": route.passages(),
                })
            })
            .collect();
        let out = json!({
            "load_seconds_best": best_load.as_secs_f64(),
            "load_seconds_mean": mean_load.as_secs_f64(),
            "routes": routes,
        });
        println!("{out}");
        return;
    }

    println!(
        "load embedded network: best {:.2} ms, mean {:.2} ms over {LOADS} loads ({} nodes, {} edges)",
        best_load.as_secs_f64() * 1e3,
        mean_load.as_secs_f64() * 1e3,
        router.node_count(),
        router.edge_count()
    );
    for (pair, route, took) in &results {
        println!(
            "{} -> {}: {:>9.1} km {:>8.1} µs  {:?}",
            pair.from,
            pair.to,
            route.length_km(),
            took.as_secs_f64() * 1e6,
            route.passages()
        );
    }
    println!(
        "{} routes: total {:.2} ms, mean {:.1} µs per route (median of {REPEAT} runs each)",
        results.len(),
        total.as_secs_f64() * 1e3,
        total.as_secs_f64() * 1e6 / results.len() as f64
    );
}
