//! Line-by-line decoding of an AIS feed into [`AisMessage`]s.

use ::ais::messages::AisMessage as Raw;
use ::ais::messages::static_data_report::MessagePart;
use serde::Serialize;

use super::fragments::Fragments;
use super::sentence::{self, Rejected};
use super::{AisMessage, Dimensions, Eta, NavigationStatus, PositionReport, StaticData};

/// Longest payload accepted in one sentence. NMEA limits a sentence to 82 characters
/// (about 60 of payload); the slack admits sloppy sources while bounding buffer memory.
const MAX_SENTENCE_PAYLOAD: usize = 256;

/// What happened to the lines given to a [`Decoder`].
///
/// `lines` counts every line; each line that does not end a message lands in exactly one
/// of `bad_checksum`, `malformed`, `not_ais`, `fragments_dropped`, or is held as a pending
/// fragment. A completed message lands in one of `decoded`, `malformed` (payload could
/// not be decoded), `unsupported_type` or `no_position`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DecodeStats {
    /// Lines given to the decoder.
    pub lines: u64,
    /// Messages returned.
    pub decoded: u64,
    /// Lines whose sentence or tag block checksum did not match.
    pub bad_checksum: u64,
    /// AIS lines with broken framing, and messages whose payload is invalid or truncated.
    pub malformed: u64,
    /// Well-formed messages of types Tidemark does not use (4, 8, 21, …).
    pub unsupported_type: u64,
    /// Position reports whose coordinates are "not available" or out of range.
    pub no_position: u64,
    /// Blank lines, comments and NMEA sentences other than `VDM`/`VDO`.
    pub not_ais: u64,
    /// Fragments discarded: first part missing, out of order, stale, or evicted.
    pub fragments_dropped: u64,
}

/// Decodes one AIS input source, one line at a time.
///
/// Keep one decoder per source: multi-sentence messages are reassembled across calls, and
/// sequential ids only mean something within one source. It never panics on bad input;
/// lines that yield nothing are counted in [`DecodeStats`].
#[derive(Debug, Default)]
pub struct Decoder {
    stats: DecodeStats,
    fragments: Fragments,
}

impl Decoder {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes one line (with or without line ending, tag block or trailing metadata).
    /// Returns a message when this line completes one that Tidemark uses.
    pub fn decode(&mut self, line: impl AsRef<[u8]>) -> Option<AisMessage> {
        self.decode_line(line.as_ref())
    }

    /// Counters since this decoder was created.
    #[must_use]
    pub fn stats(&self) -> &DecodeStats {
        &self.stats
    }

    /// Fragments held for multi-sentence messages that are not complete yet.
    #[must_use]
    pub fn pending_fragments(&self) -> u64 {
        self.fragments.held()
    }

    fn decode_line(&mut self, line: &[u8]) -> Option<AisMessage> {
        self.stats.lines += 1;
        let sentence = match sentence::parse(line) {
            Ok(sentence) if sentence.payload.len() <= MAX_SENTENCE_PAYLOAD => sentence,
            Ok(_) | Err(Rejected::Malformed) => {
                self.stats.malformed += 1;
                return None;
            }
            Err(Rejected::BadChecksum) => {
                self.stats.bad_checksum += 1;
                return None;
            }
            Err(Rejected::NotAis) => {
                self.stats.not_ais += 1;
                return None;
            }
        };
        let result = if sentence.fragment_count == 1 {
            decode_payload(sentence.payload, sentence.fill_bits, sentence.received_at)
        } else {
            let complete = self.fragments.push(
                &sentence,
                self.stats.lines,
                &mut self.stats.fragments_dropped,
            )?;
            decode_payload(&complete.payload, complete.fill_bits, complete.received_at)
        };
        match result {
            Ok(message) => {
                self.stats.decoded += 1;
                Some(message)
            }
            Err(Skip::Malformed) => {
                self.stats.malformed += 1;
                None
            }
            Err(Skip::Unsupported) => {
                self.stats.unsupported_type += 1;
                None
            }
            Err(Skip::NoPosition) => {
                self.stats.no_position += 1;
                None
            }
        }
    }
}

/// Why a complete message yields nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Skip {
    Malformed,
    Unsupported,
    NoPosition,
}

fn decode_payload(
    payload: &[u8],
    fill_bits: u8,
    received_at: Option<i64>,
) -> Result<AisMessage, Skip> {
    let first = *payload.first().ok_or(Skip::Malformed)?;
    let message_type = sixbit_value(first).ok_or(Skip::Malformed)?;
    // Checked before unarmouring so that the bulk of other traffic costs almost nothing.
    if !matches!(message_type, 1 | 2 | 3 | 5 | 18 | 19 | 24 | 27) {
        return Err(Skip::Unsupported);
    }
    let bits =
        ::ais::messages::unarmor(payload, usize::from(fill_bits)).map_err(|_| Skip::Malformed)?;
    let raw = ::ais::messages::parse(&bits).map_err(|_| Skip::Malformed)?;
    let (latitude, longitude) = match &raw {
        Raw::StaticAndVoyageRelatedData(data) => {
            return Ok(AisMessage::Static(type_5(data, received_at)));
        }
        Raw::StaticDataReport(report) => {
            return type_24(report, received_at).map(AisMessage::Static);
        }
        _ => coordinates(&bits, message_type).ok_or(Skip::NoPosition)?,
    };
    let motion = match raw {
        Raw::PositionReport(r) => Motion {
            mmsi: r.mmsi,
            speed: r.speed_over_ground.map(tenths),
            course: r.course_over_ground.map(tenths),
            heading: r.true_heading,
            second: Some(r.timestamp),
            status: r.navigation_status.and_then(status),
        },
        Raw::StandardClassBPositionReport(r) => Motion {
            mmsi: r.mmsi,
            speed: r.speed_over_ground.map(tenths),
            course: r.course_over_ground.map(tenths),
            heading: r.true_heading,
            second: Some(r.timestamp),
            status: None,
        },
        Raw::ExtendedClassBPositionReport(r) => Motion {
            mmsi: r.mmsi,
            speed: r.speed_over_ground.map(tenths),
            course: r.course_over_ground.map(tenths),
            heading: r.true_heading,
            second: Some(r.timestamp),
            status: None,
        },
        // Type 27 carries whole knots and whole degrees, which f32 holds exactly.
        Raw::LongRangeAisBroadcastMessage(r) => Motion {
            mmsi: r.mmsi,
            speed: r.speed_over_ground.map(f64::from),
            course: r.course_over_ground.map(f64::from),
            heading: None,
            second: None,
            status: r.navigation_status.and_then(status),
        },
        _ => return Err(Skip::Unsupported),
    };
    Ok(AisMessage::Position(PositionReport {
        mmsi: motion.mmsi,
        latitude,
        longitude,
        speed_over_ground_knots: motion.speed,
        // 3601..4095 are invalid encodings, not courses.
        course_over_ground: motion.course.filter(|c| *c < 360.0),
        true_heading: motion.heading.filter(|h| *h < 360),
        // 60 is "not available"; 61–63 flag positioning-system modes, not a second.
        timestamp_second: motion.second.filter(|s| *s < 60),
        navigation_status: motion.status,
        message_type,
        received_at,
    }))
}

struct Motion {
    mmsi: u32,
    speed: Option<f64>,
    course: Option<f64>,
    heading: Option<u16>,
    second: Option<u8>,
    status: Option<NavigationStatus>,
}

/// Latitude and longitude in degrees, read from the raw bits at full precision; `None`
/// when "not available" (91°/181°) or otherwise out of range.
fn coordinates(bits: &[u8], message_type: u8) -> Option<(f64, f64)> {
    // (offset of longitude, longitude bits, latitude bits, units per degree)
    let (at, lon_len, lat_len, per_degree) = match message_type {
        1..=3 => (61, 28, 27, 600_000.0),
        18 | 19 => (57, 28, 27, 600_000.0),
        27 => (44, 18, 17, 600.0),
        _ => return None,
    };
    let longitude = f64::from(signed_bits(bits, at, lon_len)?) / per_degree;
    let latitude = f64::from(signed_bits(bits, at + lon_len, lat_len)?) / per_degree;
    ((-90.0..=90.0).contains(&latitude) && (-180.0..=180.0).contains(&longitude))
        .then_some((latitude, longitude))
}

/// The two's-complement number in bits `at..at + len` (most significant bit first).
fn signed_bits(bytes: &[u8], at: usize, len: usize) -> Option<i32> {
    if !(1..=32).contains(&len) {
        return None;
    }
    let unused = 32 - u32::try_from(len).ok()?;
    let mut value = 0u32;
    for bit in at..at + len {
        let byte = bytes.get(bit / 8)?;
        value = (value << 1) | u32::from((byte >> (7 - bit % 8)) & 1);
    }
    Some(i32::from_ne_bytes((value << unused).to_ne_bytes()) >> unused)
}

/// The 6-bit value of one armoured payload character.
fn sixbit_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'W' => Some(c - b'0'),
        b'`'..=b'w' => Some(c - b'8'),
        _ => None,
    }
}

/// An f32 that encodes a multiple of 0.1, as the nearest f64 multiple of 0.1.
fn tenths(value: f32) -> f64 {
    (f64::from(value) * 10.0).round() / 10.0
}

fn status(raw: ::ais::messages::position_report::NavigationStatus) -> Option<NavigationStatus> {
    use ::ais::messages::position_report::NavigationStatus as N;
    let code = match raw {
        N::UnderWayUsingEngine => 0,
        N::AtAnchor => 1,
        N::NotUnderCommand => 2,
        N::RestrictedManouverability => 3,
        N::ConstrainedByDraught => 4,
        N::Moored => 5,
        N::Aground => 6,
        N::EngagedInFishing => 7,
        N::UnderWaySailing => 8,
        N::ReservedForHSC => 9,
        N::ReservedForWIG => 10,
        N::Reserved01 => 11,
        N::Reserved02 => 12,
        N::Reserved03 => 13,
        N::AisSartIsActive => 14,
        N::Unknown(code) => code,
    };
    NavigationStatus::from_code(code)
}

fn type_5(
    data: &::ais::messages::static_and_voyage_related_data::StaticAndVoyageRelatedData,
    received_at: Option<i64>,
) -> StaticData {
    let eta = match (data.eta_month_utc, data.eta_day_utc) {
        (Some(month @ 1..=12), Some(day @ 1..=31)) => Some(Eta {
            month,
            day,
            hour: Some(data.eta_hour_utc).filter(|h| *h < 24),
            minute: data.eta_minute_utc.filter(|m| *m < 60),
        }),
        _ => None,
    };
    StaticData {
        mmsi: data.mmsi,
        imo: Some(data.imo_number).filter(|imo| (1_000_000..=9_999_999).contains(imo)),
        name: text(&data.vessel_name),
        call_sign: text(&data.callsign),
        ship_type: data.ship_type.map(u8::from),
        destination: text(&data.destination),
        eta,
        draught_metres: Some(tenths(data.draught)).filter(|d| *d > 0.0),
        dimensions: dimensions(
            data.dimension_to_bow,
            data.dimension_to_stern,
            data.dimension_to_port,
            data.dimension_to_starboard,
        ),
        message_type: 5,
        received_at,
    }
}

fn type_24(
    report: &::ais::messages::static_data_report::StaticDataReport,
    received_at: Option<i64>,
) -> Result<StaticData, Skip> {
    let mut data = StaticData {
        mmsi: report.mmsi,
        message_type: 24,
        received_at,
        ..StaticData::default()
    };
    match &report.message_part {
        MessagePart::PartA { vessel_name } => data.name = text(vessel_name),
        MessagePart::PartB {
            ship_type,
            callsign,
            dimension_to_bow,
            dimension_to_stern,
            dimension_to_port,
            dimension_to_starboard,
            ..
        } => {
            data.ship_type = ship_type.map(u8::from);
            data.call_sign = text(callsign);
            // An auxiliary craft (MMSI 98xxxxxxx) sends its mother ship's MMSI there instead.
            if report.mmsi / 10_000_000 != 98 {
                data.dimensions = dimensions(
                    *dimension_to_bow,
                    *dimension_to_stern,
                    *dimension_to_port,
                    *dimension_to_starboard,
                );
            }
        }
        // Part numbers 2 and 3 are undefined. One transmitter in the gpsd capture sends 3
        // with a body that fits neither part's layout, so guessing would store garbage.
        MessagePart::Unknown(_) => return Err(Skip::Unsupported),
    }
    Ok(data)
}

/// AIS text without its `@` padding (anything after the first `@` is padding too) and
/// surrounding spaces; `None` when nothing is left.
fn text(raw: &str) -> Option<String> {
    let text = raw.split('@').next().unwrap_or_default().trim();
    (!text.is_empty()).then(|| text.to_owned())
}

fn dimensions(to_bow: u16, to_stern: u16, to_port: u16, to_starboard: u16) -> Option<Dimensions> {
    let dimensions = Dimensions {
        to_bow,
        to_stern,
        to_port,
        to_starboard,
    };
    (dimensions.length() > 0 || dimensions.beam() > 0).then_some(dimensions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_bits_sign_extends_negative_values() {
        assert_eq!(signed_bits(&[0b1111_0000], 0, 4), Some(-1));
        assert_eq!(signed_bits(&[0b0111_0000], 0, 4), Some(7));
        assert_eq!(signed_bits(&[0b0000_1000, 0], 4, 4), Some(-8));
    }

    #[test]
    fn signed_bits_past_the_end_is_none() {
        assert_eq!(signed_bits(&[0xff], 4, 8), None);
    }

    #[test]
    fn text_drops_padding_and_what_follows_it() {
        assert_eq!(text("EVER DIADEM@@@@@"), Some("EVER DIADEM".to_owned()));
        assert_eq!(text("  NAME  @@ JUNK"), Some("NAME".to_owned()));
        assert_eq!(text("@@@@"), None);
    }
}
