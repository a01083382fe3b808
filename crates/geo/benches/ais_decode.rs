//! Single-thread AIS decoding throughput over a large synthetic stream made by repeating
//! the fixture sentences in `../shared/reference/ais/`. Run with
//! `cargo bench -p tidemark-geo --bench ais_decode`; the target is 500,000 sentences/s.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tidemark_geo::ais::{Decoder, PositionReport, encode_position};

const TARGET_LINES: usize = 2_000_000;
const ROUNDS: usize = 5;

fn fixture_sentences() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/ais");
    let files = [
        "pyais_nmea_data_sample.txt",
        "libais_test.aivdm",
        "libais_typeexamples.nmea",
        "gpsd_sample.aivdm",
        "gpsd_ais-18-27.log",
        "gpsd_ais-nmea.log",
    ];
    let mut lines = Vec::new();
    for file in files {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        // AIS sentences only: the bench measures decoding, not skipping GPS chatter.
        lines.extend(
            text.lines()
                .filter(|l| l.starts_with('!') || l.starts_with('\\'))
                .map(str::to_owned),
        );
    }
    lines
}

fn repeat_to(lines: &[String], target: usize) -> Vec<&str> {
    lines
        .iter()
        .map(String::as_str)
        .cycle()
        .take(target.div_ceil(lines.len()) * lines.len())
        .collect()
}

/// Best of `ROUNDS` runs, so that other load on the machine counts as little as possible.
fn measure(name: &str, stream: &[&str]) {
    let mut best = Duration::MAX;
    let mut decoded = 0;
    for _ in 0..ROUNDS {
        let mut decoder = Decoder::new();
        let start = Instant::now();
        for line in stream {
            black_box(decoder.decode(black_box(line)));
        }
        best = best.min(start.elapsed());
        decoded = decoder.stats().decoded;
    }
    let per_second = stream.len() as f64 / best.as_secs_f64();
    println!(
        "{name}: {} sentences in {:.3} s (best of {ROUNDS}) = {:.0} sentences/s; {decoded} messages",
        stream.len(),
        best.as_secs_f64(),
        per_second,
    );
}

fn main() {
    let fixtures = fixture_sentences();
    println!("{} fixture sentences", fixtures.len());
    measure("fixtures, mixed types", &repeat_to(&fixtures, TARGET_LINES));

    // What the sandbox carrier produces: type 1 positions with a tag block.
    let positions: Vec<String> = (0..1000u32)
        .map(|i| {
            encode_position(&PositionReport {
                mmsi: 200_000_000 + i,
                latitude: -60.0 + f64::from(i) * 0.12,
                longitude: -179.0 + f64::from(i) * 0.35,
                speed_over_ground_knots: Some(f64::from(i % 250) / 10.0),
                course_over_ground: Some(f64::from(i % 3600) / 10.0),
                true_heading: Some(u16::try_from(i % 360).unwrap_or_default()),
                timestamp_second: Some(u8::try_from(i % 60).unwrap_or_default()),
                navigation_status: None,
                message_type: 1,
                received_at: Some(1_700_000_000 + i64::from(i)),
            })
        })
        .collect();
    measure(
        "type 1 with tag block",
        &repeat_to(&positions, TARGET_LINES),
    );
}
