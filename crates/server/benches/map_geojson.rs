//! `GET /v2/containers/{id}/map_geojson` through the router and the store: a three-port
//! route (the sandbox's showcase, Shanghai → Tokyo → Seattle) whose vessel is at sea on
//! the first leg with 10,000 stored positions on it. Reads the container, shipment, raw
//! events, vessels and the track, builds the map (routing the legs ahead over the sea
//! network) and serializes it. Prints p50/p90/p99 latency.
//!
//! `cargo bench -p tidemark-server --bench map_geojson` (SQLite; PostgreSQL too when
//! `TIDEMARK_TEST_POSTGRES_URL` is set).

use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::{Duration, TimeZone, Utc};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tidemark_domain::{ApiKeyScope, MockClock, UuidV7Ids};
use tidemark_geo::reference::ReferenceData;
use tidemark_server::parts::carriers::{Carriers, sandbox, start_in_process_sandbox};
use tidemark_server::use_cases::accounts;
use tidemark_server::{App, Config};
use tidemark_store::{AisPosition, Fix, Store, VesselIdentity};
use tower::ServiceExt;

const POSITIONS: usize = 10_000;
const RUNS: usize = 301;
const NUMBER: &str = "TEST-TR-SUCCEEDED";

async fn call(
    router: &axum::Router,
    key: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Vec<u8>) {
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header(header::AUTHORIZATION, format!("Token {key}"));
    let body = match body {
        Some(value) => {
            builder = builder.header(header::CONTENT_TYPE, "application/json");
            Body::from(value.to_string())
        }
        None => Body::empty(),
    };
    let response = router
        .clone()
        .oneshot(builder.body(body).expect("request"))
        .await
        .expect("infallible");
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    (status, bytes)
}

async fn run(name: &str, store: Arc<dyn Store>) {
    let epoch = Utc
        .with_ymd_and_hms(2026, 3, 1, 12, 0, 0)
        .single()
        .expect("valid date");
    let clock = Arc::new(MockClock::new(epoch));
    let config = Config::from_pairs(&[
        ("public_url", "http://tidemark.bench"),
        ("rate_limit_per_minute", "100000000"),
    ])
    .expect("config");
    let mut carriers = Carriers::default();
    carriers.insert(
        start_in_process_sandbox(
            ReferenceData::embedded(),
            Arc::clone(&clock) as _,
            tokio_util::sync::CancellationToken::new(),
        )
        .await
        .expect("sandbox"),
    );
    let app = Arc::new(
        App::new(config, store, Arc::clone(&clock) as _, Arc::new(UuidV7Ids))
            .with_carriers(carriers),
    );
    let account = accounts::find_or_create_account(&app, "bench")
        .await
        .expect("account");
    let key = accounts::issue_key(&app, account.id, ApiKeyScope::ReadWrite)
        .await
        .expect("key")
        .secret
        .expose()
        .to_owned();
    let router = app.router();

    let (status, _) = call(
        &router,
        &key,
        "POST",
        "/v2/tracking_requests",
        Some(json!({"data": {"type": "tracking_request", "attributes": {
            "request_type": "bill_of_lading", "request_number": NUMBER, "scac": "TEST"}}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let voyage = sandbox(ReferenceData::embedded())
        .voyage(NUMBER, epoch)
        .expect("voyage");
    let leg = &voyage.legs()[0];
    // Nine tenths of the way along the first leg.
    let now = leg.departure + (leg.arrival - leg.departure) * 9 / 10;
    clock.set(now);
    tidemark_server::jobs::runner(&app).run_pending().await;

    // The vessel's identity, then 10,000 positions between its departure and now.
    app.store
        .record_vessel_identities(
            &[VesselIdentity {
                imo: Some(leg.vessel.imo.clone()),
                mmsi: Some(leg.vessel.mmsi.clone()),
                name: Some(leg.vessel.name.clone()),
                new_vessel_id: tidemark_domain::IdGenerator::next_id(&UuidV7Ids),
            }],
            now,
        )
        .await
        .expect("identity");
    let span = now - leg.departure;
    let positions: Vec<AisPosition> = (0..POSITIONS)
        .filter_map(|i| {
            let at = leg.departure + span * i32::try_from(i).ok()? / POSITIONS as i32;
            let p = voyage.vessel_position(at)?;
            Some(AisPosition {
                mmsi: leg.vessel.mmsi.clone(),
                fix: Fix {
                    timestamp: at,
                    latitude: p.latitude + ((i * 7919) % 13) as f64 * 1e-3,
                    longitude: p.longitude,
                    speed_knots: Some(p.speed_knots),
                    course: Some(p.heading_degrees),
                    heading: Some(p.heading_degrees),
                },
                new_vessel_id: tidemark_domain::IdGenerator::next_id(&UuidV7Ids),
            })
        })
        .collect();
    for batch in positions.chunks(1_000) {
        app.store
            .record_positions(batch, Duration::seconds(1), now)
            .await
            .expect("positions");
    }

    let (_, requests) = call(&router, &key, "GET", "/v2/tracking_requests", None).await;
    let requests: Value = serde_json::from_slice(&requests).expect("json");
    let shipment = requests["data"][0]["relationships"]["tracked_object"]["data"]["id"]
        .as_str()
        .expect("shipment")
        .to_owned();
    let (_, shipment) = call(
        &router,
        &key,
        "GET",
        &format!("/v2/shipments/{shipment}"),
        None,
    )
    .await;
    let shipment: Value = serde_json::from_slice(&shipment).expect("json");
    let container = shipment["data"]["relationships"]["containers"]["data"][0]["id"]
        .as_str()
        .expect("container")
        .to_owned();
    let path = format!("/v2/containers/{container}/map_geojson");

    let mut times: Vec<StdDuration> = Vec::with_capacity(RUNS);
    let mut bytes = 0;
    let mut features = 0;
    for _ in 0..RUNS {
        let started = Instant::now();
        let (status, body) = call(&router, &key, "GET", &path, None).await;
        times.push(started.elapsed());
        assert_eq!(status, StatusCode::OK);
        bytes = body.len();
        features = serde_json::from_slice::<Value>(&body).expect("json")["features"]
            .as_array()
            .map_or(0, Vec::len);
    }
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e3;
    println!(
        "{name:>10}: map_geojson, 3 ports, {} stored positions: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms ({features} features, {bytes} bytes, {RUNS} runs)",
        positions.len(),
        at(0.5),
        at(0.9),
        at(0.99)
    );
    // Where the time goes: reading the map's input from the store, and building it.
    let container_id = tidemark_domain::ContainerId(container.parse().expect("uuid"));
    let mut reads = Vec::with_capacity(RUNS);
    let mut builds = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let input = tidemark_server::use_cases::vessels::map::container_map_input(
            &app,
            account.id,
            container_id,
        )
        .await
        .expect("input");
        reads.push(started.elapsed());
        let started = Instant::now();
        let options = tidemark_geo::map::MapOptions {
            longitudes: tidemark_geo::map::Longitudes::Split,
            ..Default::default()
        };
        std::hint::black_box(tidemark_geo::map::build_map(
            &input,
            tidemark_geo::searoute::SeaRouter::embedded(),
            &options,
        ));
        builds.push(started.elapsed());
    }
    reads.sort();
    builds.sort();
    println!(
        "{name:>10}: of which reading the input p50 {:.2} ms, building the map p50 {:.2} ms",
        reads[RUNS / 2].as_secs_f64() * 1e3,
        builds[RUNS / 2].as_secs_f64() * 1e3
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite: Arc<dyn Store> = Arc::new(
        tidemark_store_sqlite::SqliteStore::open(dir.path().join("bench.db")).expect("SQLite"),
    );
    run("sqlite", sqlite).await;
    if let Some(schema) = tidemark_store_postgres::testing::temp_schema().await {
        run("postgres", schema.store()).await;
    } else {
        println!("  postgres: skipped (set TIDEMARK_TEST_POSTGRES_URL)");
    }
}
