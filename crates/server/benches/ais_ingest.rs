//! AIS ingest: how many positions per second go from NMEA sentences to stored vessel
//! positions (decode, batch, thin, write), through the same `AisSink` a feed uses.
//!
//! `cargo bench -p tidemark-server --bench ais_ingest` (SQLite; PostgreSQL too when
//! `TIDEMARK_TEST_POSTGRES_URL` is set). 1,000 vessels each report once a minute for
//! 100 minutes (100,000 type 1 sentences, time-stamped in tag blocks), after one type 5
//! static report each (two sentences, reassembled). With the default 60 s thinning every
//! position is stored.

use std::sync::Arc;
use std::time::Instant;

use chrono::{Duration, TimeZone, Utc};
use tidemark_domain::{MockClock, UuidV7Ids};
use tidemark_geo::ais::{PositionReport, StaticData, encode_position, encode_static};
use tidemark_server::use_cases::vessels::ais::AisSink;
use tidemark_server::{App, Config};
use tidemark_store::Store;

const VESSELS: u32 = 1_000;
const MINUTES: i64 = 100;

fn sentences() -> Vec<String> {
    let start = Utc
        .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .expect("valid date");
    let mut lines = Vec::new();
    for v in 0..VESSELS {
        lines.extend(encode_static(&StaticData {
            mmsi: 244_000_000 + v,
            imo: Some(9_000_000 + v),
            name: Some(format!("BENCH {v}")),
            message_type: 5,
            ..StaticData::default()
        }));
    }
    for minute in 0..MINUTES {
        for v in 0..VESSELS {
            let at = start + Duration::minutes(minute);
            lines.push(encode_position(&PositionReport {
                mmsi: 244_000_000 + v,
                latitude: 10.0 + f64::from(v) * 0.01 + minute as f64 * 0.001,
                longitude: 100.0 + minute as f64 * 0.002,
                speed_over_ground_knots: Some(15.2),
                course_over_ground: Some(87.5),
                true_heading: Some(88),
                timestamp_second: None,
                navigation_status: None,
                message_type: 1,
                received_at: Some(at.timestamp()),
            }));
        }
    }
    lines
}

async fn run(name: &str, store: Arc<dyn Store>, lines: &[String]) {
    let config = Config::from_pairs(&[]).expect("default config");
    let clock = Arc::new(MockClock::new(
        Utc.with_ymd_and_hms(2026, 1, 2, 0, 0, 0)
            .single()
            .expect("valid date"),
    ));
    let app = App::new(config, store, clock, Arc::new(UuidV7Ids));
    let started = Instant::now();
    let mut sink = AisSink::new(&app.config.ais);
    for line in lines {
        sink.push_line(&app, line.as_bytes()).await.expect("ingest");
    }
    sink.flush(&app).await.expect("flush");
    let elapsed = started.elapsed().as_secs_f64();
    let report = sink.report();
    #[expect(clippy::cast_precision_loss, reason = "a rate for humans")]
    let rate = report.positions as f64 / elapsed;
    println!(
        "{name:>10}: {} sentences, {} positions ({} stored) in {elapsed:.2} s = {rate:.0} positions/s (batches of {})",
        report.decode.lines, report.positions, report.stored, app.config.ais.batch_size
    );
    assert_eq!(report.positions, u64::from(VESSELS) * MINUTES as u64);
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let lines = sentences();
    // The decoding share, for comparison.
    let started = Instant::now();
    let mut decoder = tidemark_geo::ais::Decoder::new();
    for line in &lines {
        std::hint::black_box(decoder.decode(line));
    }
    println!(
        "decode only: {} sentences in {:.2} s",
        lines.len(),
        started.elapsed().as_secs_f64()
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite: Arc<dyn Store> = Arc::new(
        tidemark_store_sqlite::SqliteStore::open(dir.path().join("bench.db")).expect("SQLite"),
    );
    run("sqlite", sqlite, &lines).await;
    if let Some(schema) = tidemark_store_postgres::testing::temp_schema().await {
        run("postgres", schema.store(), &lines).await;
    } else {
        println!("  postgres: skipped (set TIDEMARK_TEST_POSTGRES_URL)");
    }
}
