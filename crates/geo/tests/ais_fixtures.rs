//! The AIS decoder against real captures with known decodes, read from
//! `../shared/reference/ais/` (pyais MIT, libais Apache-2.0, gpsd BSD-2; not copied here).

use std::path::PathBuf;

use serde_json::Value;
use tidemark_geo::ais::{AisMessage, DecodeStats, Decoder, NavigationStatus, PositionReport};

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/reference/ais")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read fixture {}: {e}", path.display()))
}

fn decode_file(name: &str) -> (Vec<AisMessage>, DecodeStats) {
    let mut decoder = Decoder::new();
    let messages = fixture(name)
        .lines()
        .filter_map(|line| decoder.decode(line))
        .collect();
    (messages, *decoder.stats())
}

fn positions(messages: &[AisMessage]) -> impl Iterator<Item = &PositionReport> {
    messages.iter().filter_map(|m| match m {
        AisMessage::Position(p) => Some(p),
        AisMessage::Static(_) => None,
    })
}

fn count_statics(messages: &[AisMessage]) -> usize {
    messages
        .iter()
        .filter(|m| matches!(m, AisMessage::Static(_)))
        .count()
}

/// Collects mismatches so one failing run lists all of them.
#[derive(Default)]
struct Mismatches(Vec<String>);

impl Mismatches {
    fn close(&mut self, what: &str, got: Option<f64>, want: Option<f64>, tolerance: f64) {
        let ok = match (got, want) {
            (Some(g), Some(w)) => (g - w).abs() <= tolerance,
            (None, None) => true,
            _ => false,
        };
        if !ok {
            self.0.push(format!("{what}: got {got:?}, want {want:?}"));
        }
    }

    fn equal<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, got: T, want: T) {
        if got != want {
            self.0.push(format!("{what}: got {got:?}, want {want:?}"));
        }
    }

    fn assert_none(self) {
        assert!(self.0.is_empty(), "mismatches:\n{}", self.0.join("\n"));
    }
}

fn json_f64(value: &Value, key: &str) -> Option<f64> {
    value.get(key).and_then(Value::as_f64)
}

fn json_u64(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

#[test]
fn libais_type_examples_decode_to_libais_expected_values() {
    let nmea = fixture("libais_typeexamples.nmea");
    let json = fixture("libais_typeexamples.json");
    let sentences: Vec<&str> = nmea.lines().filter(|l| l.starts_with('!')).collect();
    let expected: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(sentences.len(), expected.len());

    let mut decoder = Decoder::new();
    let mut check = Mismatches::default();
    for (sentence, want) in sentences.iter().zip(&expected) {
        let message_type = json_u64(want, "type").expect("type");
        let mmsi = json_u64(want, "mmsi").and_then(|m| u32::try_from(m).ok());
        let at = format!("type {message_type} {sentence}");
        match decoder.decode(sentence) {
            Some(AisMessage::Position(p)) => {
                check.equal(&at, Some(p.mmsi), mmsi);
                check.equal(&at, u64::from(p.message_type), message_type);
                // libais reports f32 values, good to about 1e-5 degrees.
                check.close(&at, Some(p.latitude), json_f64(want, "lat"), 1e-4);
                check.close(&at, Some(p.longitude), json_f64(want, "lon"), 1e-4);
                check.close(
                    &at,
                    p.speed_over_ground_knots,
                    json_f64(want, "speed"),
                    0.01,
                );
                let course = json_f64(want, "course").filter(|c| *c < 360.0);
                check.close(&at, p.course_over_ground, course, 0.01);
                let heading = json_u64(want, "heading").filter(|h| *h < 360);
                check.equal(&at, p.true_heading.map(u64::from), heading);
                let second = json_u64(want, "second").filter(|s| *s < 60);
                check.equal(&at, p.timestamp_second.map(u64::from), second);
                let status = json_u64(want, "status")
                    .and_then(|s| u8::try_from(s).ok())
                    .and_then(NavigationStatus::from_code);
                check.equal(&at, p.navigation_status, status);
            }
            Some(AisMessage::Static(s)) => {
                check.equal(&at, Some(s.mmsi), mmsi);
                let text = |key: &str| want.get(key).and_then(Value::as_str).map(str::to_owned);
                check.equal(&at, s.name, text("shipname"));
                if message_type == 5 {
                    check.equal(&at, s.call_sign, text("callsign"));
                    check.equal(&at, s.destination, text("destination"));
                    let imo = text("imo").and_then(|i| i.parse::<u32>().ok());
                    check.equal(&at, s.imo, imo);
                    let ship_type = json_u64(want, "shiptype").and_then(|t| u8::try_from(t).ok());
                    check.equal(&at, s.ship_type, ship_type);
                    check.close(&at, s.draught_metres, json_f64(want, "draught"), 0.01);
                }
            }
            None => {}
        }
    }
    check.assert_none();

    // Types 1, 3, 18, 5 and 24 decode; the type 2 (latitude −101.5°) and type 27
    // (longitude 200.2°) examples are deliberately out of range; 19 others are unsupported.
    let stats = decoder.stats();
    assert_eq!(stats.decoded, 5, "{stats:?}");
    assert_eq!(stats.no_position, 2, "{stats:?}");
    assert_eq!(stats.unsupported_type, 19, "{stats:?}");
    assert_eq!(stats.malformed + stats.bad_checksum, 0, "{stats:?}");
}

/// The gpsd sample documents each sentence with `#  Key:  value` comment lines.
#[test]
fn gpsd_sample_sentences_decode_to_the_values_in_their_comments() {
    let mut decoder = Decoder::new();
    let mut current: Option<AisMessage> = None;
    let mut checked_values = 0;
    let mut check = Mismatches::default();
    for line in fixture("gpsd_sample.aivdm").lines() {
        let Some(comment) = line.strip_prefix('#') else {
            current = decoder.decode(line);
            continue;
        };
        let (Some(message), Some((key, value))) = (&current, comment.split_once(':')) else {
            continue;
        };
        let key: String = key
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_lowercase();
        let value = value.trim();
        let number = value.parse::<f64>().ok();
        let at = format!("{key} of {message:?}");
        let before = check.0.len();
        match (message, key.as_str()) {
            (AisMessage::Position(p), "userid" | "mmsi") => {
                check.equal(&at, Some(f64::from(p.mmsi)), number);
            }
            (AisMessage::Position(p), "latitude") => {
                check.close(&at, Some(p.latitude), number, 1e-6);
            }
            (AisMessage::Position(p), "longitude") => {
                check.close(&at, Some(p.longitude), number, 1e-6);
            }
            (AisMessage::Position(p), "sog") => {
                check.close(&at, p.speed_over_ground_knots, number, 1e-9);
            }
            (AisMessage::Position(p), "cog") => {
                check.close(&at, p.course_over_ground, number, 1e-9);
            }
            // The type 18 example written as "Speed Over Ground: 51" gives raw tenths.
            (AisMessage::Position(p), "speedoverground") => {
                check.close(
                    &at,
                    p.speed_over_ground_knots,
                    number.map(|v| v / 10.0),
                    1e-9,
                );
            }
            (AisMessage::Position(p), "courseoverground") => {
                check.close(&at, p.course_over_ground, number.map(|v| v / 10.0), 1e-9);
            }
            (AisMessage::Position(p), "trueheading") => {
                let want = number.filter(|h| *h < 360.0);
                check.close(&at, p.true_heading.map(f64::from), want, 0.0);
            }
            (AisMessage::Position(p), "timestamp") => {
                let want = number.filter(|s| *s < 60.0);
                check.close(&at, p.timestamp_second.map(f64::from), want, 0.0);
            }
            (AisMessage::Static(s), "userid" | "mmsi") => {
                check.equal(&at, Some(f64::from(s.mmsi)), number);
            }
            (AisMessage::Static(s), "name") => {
                check.equal(&at, s.name.as_deref(), Some(value));
            }
            (AisMessage::Static(s), "callsign") => {
                check.equal(&at, s.call_sign.as_deref(), Some(value));
            }
            (AisMessage::Static(s), "destination") => {
                check.equal(&at, s.destination.as_deref(), Some(value));
            }
            (AisMessage::Static(s), "imonumber") => {
                check.equal(&at, s.imo.map(f64::from), number);
            }
            (AisMessage::Static(s), "shipandcargo") => {
                // One entry reads "60|".
                let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
                check.equal(&at, s.ship_type.map(|t| t.to_string()), Some(digits));
            }
            _ => continue,
        }
        if check.0.len() == before {
            checked_values += 1;
        }
    }
    check.assert_none();

    let stats = decoder.stats();
    assert_eq!(stats.decoded, 22, "{stats:?}");
    // 67 documented values of the 22 messages we return.
    assert_eq!(checked_values, 67);
}

#[test]
fn interleaved_two_part_messages_on_channels_a_and_b_are_both_reassembled() {
    let lines = [
        "!AIVDM,2,1,6,B,542M92h00001@<7;?G0PD4i@R0<tqA8tj37>220o0h:2240Ht50000000000,0*3B",
        "!AIVDM,2,1,2,A,542M92h00001@<7;?G0PD4i@R0<tqA8tj37>220o0h:2240Ht500000000000000,0*3C",
        "!AIVDM,2,2,2,A,0000002,2*24",
        "!AIVDM,2,2,6,B,00000000000,2*21",
    ];
    let mut decoder = Decoder::new();
    let messages: Vec<_> = lines.iter().filter_map(|l| decoder.decode(l)).collect();
    assert_eq!(count_statics(&messages), 2, "{:?}", decoder.stats());
    assert_eq!(decoder.pending_fragments(), 0);
}

/// gpsd's expected output for this capture gives raw (unscaled) field values.
#[test]
fn gpsd_class_b_and_long_range_reports_match_gpsd_output() {
    let mut decoder = Decoder::new();
    let mut last: Option<AisMessage> = None;
    let mut matched = [0usize; 2];
    let mut check = Mismatches::default();
    for line in fixture("gpsd_ais-18-27.log.chk").lines() {
        if line.starts_with('!') {
            last = decoder.decode(line);
            continue;
        }
        let Ok(want) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(AisMessage::Position(p)) = &last else {
            check.0.push(format!("no position decoded before {line}"));
            continue;
        };
        let at = format!("{line}\n  got {p:?}");
        let raw = |value: f64, per_unit: f64| Some((value * per_unit).round());
        let unless =
            |key: &str, not_available: f64| json_f64(&want, key).filter(|v| *v != not_available);
        check.equal(
            &at,
            u64::from(p.mmsi),
            json_u64(&want, "mmsi").expect("mmsi"),
        );
        match json_u64(&want, "type") {
            Some(18) => {
                matched[0] += 1;
                check.equal(&at, raw(p.longitude, 600_000.0), json_f64(&want, "lon"));
                check.equal(&at, raw(p.latitude, 600_000.0), json_f64(&want, "lat"));
                let speed = p.speed_over_ground_knots.and_then(|s| raw(s, 10.0));
                check.equal(&at, speed, unless("speed", 1023.0));
                let course = p.course_over_ground.and_then(|c| raw(c, 10.0));
                check.equal(&at, course, unless("course", 3600.0));
                // gpsd prints the raw heading; 360..=511 are not headings.
                let heading = json_f64(&want, "heading").filter(|h| *h < 360.0);
                check.equal(&at, p.true_heading.map(f64::from), heading);
                check.equal(
                    &at,
                    p.timestamp_second.map(f64::from),
                    unless("second", 60.0),
                );
            }
            Some(27) => {
                matched[1] += 1;
                check.equal(&at, raw(p.longitude, 600.0), json_f64(&want, "lon"));
                check.equal(&at, raw(p.latitude, 600.0), json_f64(&want, "lat"));
                check.equal(&at, p.speed_over_ground_knots, unless("speed", 63.0));
                check.equal(&at, p.course_over_ground, unless("course", 511.0));
                let status = json_u64(&want, "status").and_then(|s| u8::try_from(s).ok());
                check.equal(&at, p.navigation_status.map(NavigationStatus::code), status);
            }
            other => check.0.push(format!("unexpected type {other:?}")),
        }
    }
    check.assert_none();
    assert_eq!(matched, [69, 69]);

    // The other 138 sentences are type 24, which gpsd does not print here: 69 parts A and
    // 69 with the undefined part number 3.
    let stats = decoder.stats();
    assert_eq!(stats.decoded, 138 + 69, "{stats:?}");
    assert_eq!(stats.unsupported_type, 69, "{stats:?}");
}

#[test]
fn type_24_part_a_names_decode_and_undefined_part_numbers_are_unsupported() {
    let (messages, stats) = decode_file("gpsd_ais-18-27.log");
    let names: Vec<_> = messages
        .iter()
        .filter_map(|m| match m {
            AisMessage::Static(s) => Some((s.message_type, s.name.as_deref())),
            AisMessage::Position(_) => None,
        })
        .collect();
    assert_eq!(names.len(), 69);
    assert!(names.contains(&(24, Some("SUOKKI"))), "{names:?}");
    // Two part A sentences carry an empty name.
    assert_eq!(names.iter().filter(|(_, name)| name.is_some()).count(), 67);
    assert_eq!(stats.unsupported_type, 69, "{stats:?}");
    assert_eq!(stats.malformed + stats.bad_checksum, 0, "{stats:?}");
}

#[test]
fn gps_sentences_in_a_mixed_log_are_counted_as_not_ais() {
    let text = fixture("gpsd_ais-nmea.log");
    let (messages, stats) = decode_file("gpsd_ais-nmea.log");
    let non_ais = text.lines().filter(|l| !l.starts_with('!')).count();
    assert_eq!(stats.not_ais, u64::try_from(non_ais).expect("small"));
    assert_eq!(
        stats.bad_checksum + stats.malformed + stats.fragments_dropped,
        0,
        "{stats:?}"
    );
    // 183 AIS sentences: 141 positions, 21 two-part type 5 messages, 6 other types and
    // 3 type 3 reports without a position fix.
    assert_eq!(positions(&messages).count(), 141, "{stats:?}");
    assert_eq!(count_statics(&messages), 21, "{stats:?}");
    assert_eq!(stats.unsupported_type, 6, "{stats:?}");
    assert_eq!(stats.no_position, 3, "{stats:?}");
}

#[test]
fn uscg_trailing_metadata_gives_every_libais_message_its_reception_time() {
    let (messages, stats) = decode_file("libais_test.aivdm");
    assert!(!messages.is_empty());
    for message in &messages {
        let received_at = match message {
            AisMessage::Position(p) => p.received_at,
            AisMessage::Static(s) => s.received_at,
        };
        let time = received_at.expect("reception time");
        // The capture is from April 2010.
        assert!((1_272_000_000..1_326_000_000).contains(&time), "{time}");
    }
    // 262 sentences: 29 positions and 12 static messages; 208 of other types; 6 type 27
    // with coordinates out of range and 6 type 27 too short to hold a position.
    assert_eq!(positions(&messages).count(), 29, "{stats:?}");
    assert_eq!(count_statics(&messages), 12, "{stats:?}");
    assert_eq!(stats.unsupported_type, 208, "{stats:?}");
    assert_eq!(stats.no_position, 6, "{stats:?}");
    assert_eq!(stats.malformed, 6, "{stats:?}");
    assert_eq!(stats.bad_checksum, 0, "{stats:?}");
}

#[test]
fn the_pyais_sample_decodes_apart_from_empty_payloads_and_orphan_fragments() {
    let text = fixture("pyais_nmea_data_sample.txt");
    let mut decoder = Decoder::new();
    let messages: Vec<_> = text.lines().filter_map(|l| decoder.decode(l)).collect();
    let stats = *decoder.stats();
    assert_eq!(stats.lines, 898);
    assert_eq!(positions(&messages).count(), 758, "{stats:?}");
    // Two single-sentence type 24 parts.
    assert_eq!(count_statics(&messages), 2, "{stats:?}");
    // `!AIVDM,1,1,,B,,0*25`: a valid sentence with an empty payload, 100 times.
    let empty = text.lines().filter(|l| l.contains(",,0*")).count();
    assert_eq!(
        stats.malformed,
        u64::try_from(empty).expect("small"),
        "{stats:?}"
    );
    // Types 4, 15 and 20; and four type 3 reports with latitude 91 (not available).
    assert_eq!(stats.unsupported_type, 14, "{stats:?}");
    assert_eq!(stats.no_position, 4, "{stats:?}");
    assert_eq!(stats.bad_checksum, 0, "{stats:?}");
    // The sample holds 20 first fragments of type 5 messages but none of their second
    // parts: each is dropped once stale or superseded, or still pending at the end.
    assert_eq!(
        stats.fragments_dropped + decoder.pending_fragments(),
        20,
        "{stats:?}"
    );
}

/// Expected values from an independent bit-by-bit decode of the payload.
#[test]
fn the_first_pyais_sentence_is_a_type_3_position() {
    let mut decoder = Decoder::new();
    let message = decoder.decode("!AIVDM,1,1,,A,33P;Tw0tjBQO22:E7dm66DrB20UP,0*2E");
    let Some(AisMessage::Position(p)) = message else {
        panic!("expected a position, got {message:?}");
    };
    assert_eq!(p.message_type, 3);
    assert_eq!(p.mmsi, 235_070_716);
    assert!(
        (p.latitude - 22_146_260.0 / 600_000.0).abs() < 1e-12,
        "{p:?}"
    );
    assert!(
        (p.longitude - 12_456_005.0 / 600_000.0).abs() < 1e-12,
        "{p:?}"
    );
    assert_eq!(p.speed_over_ground_knots, Some(14.6));
    assert_eq!(p.course_over_ground, Some(156.1));
    assert_eq!(p.true_heading, Some(157));
    assert_eq!(p.timestamp_second, Some(9));
    assert_eq!(
        p.navigation_status,
        Some(NavigationStatus::UnderWayUsingEngine)
    );
}
