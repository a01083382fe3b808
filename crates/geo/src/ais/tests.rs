//! Behaviour of the public AIS API: round trips through the encoder, reassembly through
//! the decoder, and robustness against garbage.

use proptest::prelude::*;

use super::sentence::checksum;
use super::*;

/// Half of the AIS position resolution (1/10000 minute), plus float slack.
const HALF_POSITION_STEP: f64 = 0.5 / 600_000.0 + 1e-12;

fn position() -> PositionReport {
    PositionReport {
        mmsi: 477_123_456,
        latitude: 1.264_52,
        longitude: 103.840_15,
        speed_over_ground_knots: Some(17.3),
        course_over_ground: Some(245.6),
        true_heading: Some(246),
        timestamp_second: Some(42),
        navigation_status: Some(NavigationStatus::UnderWayUsingEngine),
        message_type: 1,
        received_at: None,
    }
}

fn static_data() -> StaticData {
    StaticData {
        mmsi: 477_123_456,
        imo: Some(9_321_483),
        name: Some("TIDEMARK EXPLORER".to_owned()),
        call_sign: Some("VRAB3".to_owned()),
        ship_type: Some(71),
        destination: Some("NLRTM".to_owned()),
        eta: Some(Eta {
            month: 3,
            day: 14,
            hour: Some(6),
            minute: Some(30),
        }),
        draught_metres: Some(14.5),
        dimensions: Some(Dimensions {
            to_bow: 300,
            to_stern: 66,
            to_port: 24,
            to_starboard: 27,
        }),
        message_type: 5,
        received_at: Some(1_700_000_000),
    }
}

fn decode_all(lines: &[String]) -> (Vec<AisMessage>, Decoder) {
    let mut decoder = Decoder::new();
    let messages = lines.iter().filter_map(|l| decoder.decode(l)).collect();
    (messages, decoder)
}

fn with_checksum(body: &str) -> String {
    format!("!{body}*{:02X}", checksum(body.as_bytes()))
}

#[test]
fn an_encoded_position_decodes_to_the_same_values() {
    let report = position();
    let (messages, _) = decode_all(&[encode_position(&report)]);
    let [AisMessage::Position(decoded)] = messages.as_slice() else {
        panic!("expected one position, got {messages:?}");
    };
    assert!((decoded.latitude - report.latitude).abs() <= HALF_POSITION_STEP);
    assert!((decoded.longitude - report.longitude).abs() <= HALF_POSITION_STEP);
    assert_eq!(
        PositionReport {
            latitude: report.latitude,
            longitude: report.longitude,
            ..decoded.clone()
        },
        report
    );
}

#[test]
fn an_encoded_position_is_a_valid_single_aivdm_sentence() {
    let line = encode_position(&position());
    assert!(line.starts_with("!AIVDM,1,1,,A,"), "{line}");
    let (body, sum) = line[1..].split_once('*').expect("has a checksum");
    assert_eq!(sum, format!("{:02X}", checksum(body.as_bytes())));
    assert!(line.len() <= 82, "NMEA limits sentences to 82 characters");
}

#[test]
fn an_encoded_position_carries_its_reception_time_in_a_tag_block() {
    let report = PositionReport {
        received_at: Some(1_700_000_123),
        ..position()
    };
    let line = encode_position(&report);
    assert!(line.starts_with("\\c:1700000123*"), "{line}");
    let (messages, _) = decode_all(&[line]);
    let [AisMessage::Position(decoded)] = messages.as_slice() else {
        panic!("expected one position, got {messages:?}");
    };
    assert_eq!(decoded.received_at, Some(1_700_000_123));
}

#[test]
fn unavailable_motion_values_round_trip_as_none() {
    let report = PositionReport {
        speed_over_ground_knots: None,
        course_over_ground: None,
        true_heading: None,
        timestamp_second: None,
        navigation_status: None,
        ..position()
    };
    let (messages, _) = decode_all(&[encode_position(&report)]);
    let [AisMessage::Position(decoded)] = messages.as_slice() else {
        panic!("expected one position, got {messages:?}");
    };
    assert_eq!(decoded.speed_over_ground_knots, None);
    assert_eq!(decoded.course_over_ground, None);
    assert_eq!(decoded.true_heading, None);
    assert_eq!(decoded.timestamp_second, None);
    assert_eq!(decoded.navigation_status, None);
}

#[test]
fn a_position_with_invalid_coordinates_is_encoded_as_not_available_and_skipped() {
    let report = PositionReport {
        latitude: f64::NAN,
        ..position()
    };
    let (messages, decoder) = decode_all(&[encode_position(&report)]);
    assert!(messages.is_empty());
    assert_eq!(decoder.stats().no_position, 1);
}

#[test]
fn encoded_static_data_is_two_fragments_that_decode_to_the_same_values() {
    let data = static_data();
    let lines = encode_static(&data);
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| l.len() <= 82 + 20), "{lines:?}");
    let mut decoder = Decoder::new();
    assert_eq!(decoder.decode(&lines[0]), None);
    assert_eq!(decoder.pending_fragments(), 1);
    assert_eq!(decoder.decode(&lines[1]), Some(AisMessage::Static(data)));
    assert_eq!(decoder.pending_fragments(), 0);
}

#[test]
fn encoded_static_text_is_upper_cased_and_cut_to_ais_lengths() {
    let data = StaticData {
        name: Some("a name much longer than twenty".to_owned()),
        call_sign: Some("call sign".to_owned()),
        ..static_data()
    };
    let (messages, _) = decode_all(&encode_static(&data));
    let [AisMessage::Static(decoded)] = messages.as_slice() else {
        panic!("expected static data, got {messages:?}");
    };
    assert_eq!(decoded.name.as_deref(), Some("A NAME MUCH LONGER T"));
    assert_eq!(decoded.call_sign.as_deref(), Some("CALL SI"));
}

#[test]
fn a_bad_checksum_is_counted_and_yields_nothing() {
    let mut line = encode_position(&position());
    let last = line.pop().expect("non-empty");
    line.push(if last == '0' { '1' } else { '0' });
    let (messages, decoder) = decode_all(&[line]);
    assert!(messages.is_empty());
    assert_eq!(decoder.stats().bad_checksum, 1);
}

#[test]
fn a_second_fragment_without_the_first_is_dropped() {
    let lines = encode_static(&static_data());
    let (messages, decoder) = decode_all(&lines[1..]);
    assert!(messages.is_empty());
    assert_eq!(decoder.stats().fragments_dropped, 1);
}

#[test]
fn a_repeated_first_fragment_replaces_the_pending_one() {
    let lines = encode_static(&static_data());
    let (messages, decoder) = decode_all(&[lines[0].clone(), lines[0].clone(), lines[1].clone()]);
    assert_eq!(messages.len(), 1);
    assert_eq!(decoder.stats().fragments_dropped, 1);
}

#[test]
fn unsupported_message_types_are_counted() {
    // Type 4, base station report.
    let (messages, decoder) =
        decode_all(&["!AIVDM,1,1,,A,402Fha0000Htt<tSF0l4Q@000d20,0*65".to_owned()]);
    assert!(messages.is_empty());
    assert_eq!(decoder.stats().unsupported_type, 1);
}

#[test]
fn an_empty_or_truncated_payload_is_malformed() {
    let lines = [
        with_checksum("AIVDM,1,1,,B,,0"),
        with_checksum("AIVDM,1,1,,B,15RTgt0PAso;90T,0"),
        with_checksum("AIVDM,1,1,,B,1,4"),
    ];
    let (messages, decoder) = decode_all(&lines);
    assert!(messages.is_empty());
    assert_eq!(decoder.stats().malformed, 3);
}

#[test]
fn a_type_24_part_b_carries_call_sign_type_and_dimensions() {
    let (messages, _) = decode_all(&["!AIVDM,1,1,,A,H42O55lti4hhhilD3nink000?050,0*40".to_owned()]);
    let [AisMessage::Static(data)] = messages.as_slice() else {
        panic!("expected static data, got {messages:?}");
    };
    assert_eq!(data.mmsi, 271_041_815);
    assert_eq!(data.call_sign.as_deref(), Some("TC6163"));
    assert_eq!(data.ship_type, Some(60));
    assert_eq!(data.name, None);
    assert_eq!(
        data.dimensions,
        Some(Dimensions {
            to_bow: 0,
            to_stern: 15,
            to_port: 0,
            to_starboard: 5
        })
    );
}

#[test]
fn merging_type_24_parts_gives_the_whole_record() {
    let mut part_a = StaticData {
        mmsi: 1,
        name: Some("A".to_owned()),
        message_type: 24,
        received_at: Some(10),
        ..StaticData::default()
    };
    let part_b = StaticData {
        mmsi: 1,
        call_sign: Some("B".to_owned()),
        message_type: 24,
        received_at: Some(11),
        ..StaticData::default()
    };
    part_a.merge(&part_b);
    assert_eq!(part_a.name.as_deref(), Some("A"));
    assert_eq!(part_a.call_sign.as_deref(), Some("B"));
    assert_eq!(part_a.received_at, Some(11));
}

/// `ais::AisParser` panics in debug builds ("attempt to subtract with overflow") on this
/// pair; our framing rejects fragment number 0 before any arithmetic.
#[test]
fn a_fragment_numbered_zero_after_a_first_fragment_is_malformed_not_a_panic() {
    let lines = [
        with_checksum(
            "AIVDM,3,1,1,A,55?MbV02;H;s<HtKR20EHE:0@T4@Dn2222222216L961O5Gf0NSQEp6ClRp8,0",
        ),
        with_checksum("AIVDM,3,0,1,A,88888888880,2"),
    ];
    let (messages, decoder) = decode_all(&lines);
    assert!(messages.is_empty());
    assert_eq!(decoder.stats().malformed, 1);
    assert_eq!(decoder.pending_fragments(), 1);
}

fn navigation_status() -> impl Strategy<Value = Option<NavigationStatus>> {
    (0u8..=15).prop_map(NavigationStatus::from_code)
}

/// Lines made of NMEA-ish characters, so that the parser gets past its first checks.
fn nmea_like_line() -> impl Strategy<Value = String> {
    proptest::string::string_regex(
        r"(\\[a-z0-9:,*]{0,20}\\)?[!$]?(AIVD[MO])?[,0-9A-Za-z:;<=>?@`\x5b-\x5f*]{0,90}",
    )
    .expect("valid regex")
}

proptest! {
    #[test]
    fn any_position_round_trips_within_ais_resolution(
        mmsi in 1u32..=999_999_999,
        latitude in -90.0f64..=90.0,
        longitude in -180.0f64..=180.0,
        speed in proptest::option::of(0u16..=1022),
        course in proptest::option::of(0u16..3600),
        heading in proptest::option::of(0u16..360),
        second in proptest::option::of(0u8..60),
        status in navigation_status(),
        received_at in proptest::option::of(0i64..4_000_000_000),
    ) {
        let report = PositionReport {
            mmsi,
            latitude,
            longitude,
            speed_over_ground_knots: speed.map(|s| f64::from(s) / 10.0),
            course_over_ground: course.map(|c| f64::from(c) / 10.0),
            true_heading: heading,
            timestamp_second: second,
            navigation_status: status,
            message_type: 1,
            received_at,
        };
        let mut decoder = Decoder::new();
        let decoded = decoder.decode(encode_position(&report));
        let Some(AisMessage::Position(decoded)) = decoded else {
            panic!("no position decoded: {decoded:?}");
        };
        prop_assert!((decoded.latitude - latitude).abs() <= HALF_POSITION_STEP);
        prop_assert!((decoded.longitude - longitude).abs() <= HALF_POSITION_STEP);
        prop_assert_eq!(PositionReport { latitude, longitude, ..decoded }, report);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_every_line_is_counted(
        lines in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..120), 0..40)
    ) {
        let mut decoder = Decoder::new();
        for line in &lines {
            let _ = decoder.decode(line);
        }
        let s = *decoder.stats();
        prop_assert_eq!(s.lines, u64::try_from(lines.len()).expect("small"));
        prop_assert!(s.decoded + s.bad_checksum + s.malformed + s.unsupported_type
            + s.no_position + s.not_ais + s.fragments_dropped + decoder.pending_fragments() <= s.lines);
    }

    #[test]
    fn nmea_like_garbage_never_panics(lines in proptest::collection::vec(nmea_like_line(), 0..40)) {
        let mut decoder = Decoder::new();
        for line in &lines {
            let _ = decoder.decode(line);
        }
        prop_assert_eq!(decoder.stats().lines, u64::try_from(lines.len()).expect("small"));
    }

    /// Random payloads with correct checksums reach the payload decoder itself.
    #[test]
    fn random_payloads_with_valid_checksums_never_panic(
        sentences in proptest::collection::vec(
            (1u8..=3, 1u8..=3, proptest::option::of(0u8..10), "[AB12]?",
             "[0-9:;<=>?@A-W`a-w]{0,80}", 0u8..=5),
            0..30,
        )
    ) {
        let mut decoder = Decoder::new();
        for (count, number, id, channel, payload, fill) in &sentences {
            let id = id.map(|i| i.to_string()).unwrap_or_default();
            let line = with_checksum(&format!("AIVDM,{count},{number},{id},{channel},{payload},{fill}"));
            if let Some(AisMessage::Position(p)) = decoder.decode(&line) {
                prop_assert!((-90.0..=90.0).contains(&p.latitude));
                prop_assert!((-180.0..=180.0).contains(&p.longitude));
            }
        }
        prop_assert!(decoder.pending_fragments() <= 32 * 3);
    }

    #[test]
    fn flipping_one_character_of_a_valid_sentence_never_panics(index in 0usize..60, byte in any::<u8>()) {
        let mut line = encode_position(&position()).into_bytes();
        if let Some(b) = line.get_mut(index) {
            *b = byte;
        }
        let mut decoder = Decoder::new();
        let _ = decoder.decode(&line);
        prop_assert_eq!(decoder.stats().lines, 1);
    }
}
