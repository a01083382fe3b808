//! AIVDM encoding of positions (type 1) and static data (type 5), so that the sandbox
//! carrier's simulated vessels reach Tidemark through the same decoding path as real ones.
//! The `ais` crate decodes only, so the bit packing and 6-bit armouring are written here.

use super::sentence::checksum;
use super::{NavigationStatus, PositionReport, StaticData};

/// Characters of payload in the first sentence of a type 5 message; the 71-character
/// payload does not fit in one 82-character NMEA sentence.
const FIRST_FRAGMENT_CHARS: usize = 60;

/// One `!AIVDM` type 1 sentence (on channel A) carrying `report`.
///
/// Values are rounded to AIS resolution (1/10000 minute, 0.1 kn, 0.1°); values that AIS
/// cannot represent are sent as "not available". When `received_at` is set, a tag block
/// `\c:<unix seconds>*hh\` precedes the sentence. The report's `message_type` is ignored.
#[must_use]
pub fn encode_position(report: &PositionReport) -> String {
    let mut bits = Bits::default();
    bits.put(1, 6); // message type
    bits.put(0, 2); // repeat indicator
    bits.put(u64::from(report.mmsi), 30);
    bits.put(
        u64::from(report.navigation_status.map_or(15, NavigationStatus::code)),
        4,
    );
    bits.put(0x80, 8); // rate of turn: not available
    bits.put(
        tenths(report.speed_over_ground_knots)
            .filter(|v| *v <= 1022)
            .unwrap_or(1023),
        10,
    );
    bits.put(0, 1); // position accuracy: unaugmented
    let (latitude, longitude) = if (-90.0..=90.0).contains(&report.latitude)
        && (-180.0..=180.0).contains(&report.longitude)
    {
        (report.latitude, report.longitude)
    } else {
        (91.0, 181.0)
    };
    bits.put_signed(to_ten_thousandth_minutes(longitude), 28);
    bits.put_signed(to_ten_thousandth_minutes(latitude), 27);
    bits.put(
        tenths(report.course_over_ground).map_or(3600, |c| c % 3600),
        12,
    );
    bits.put(
        report
            .true_heading
            .filter(|h| *h < 360)
            .map_or(511, u64::from),
        9,
    );
    bits.put(
        report
            .timestamp_second
            .filter(|s| *s < 60)
            .map_or(60, u64::from),
        6,
    );
    bits.put(0, 2); // manoeuvre indicator: not available
    bits.put(0, 3); // spare
    bits.put(0, 1); // RAIM
    bits.put(0, 19); // radio status: SOTDMA, UTC direct, no slot information
    let (payload, fill_bits) = bits.armour();
    let mut line = tag_block(report.received_at);
    line.push_str(&sentence(1, 1, None, &payload, fill_bits));
    line
}

/// The two `!AIVDM` sentences (channel A) of a type 5 message carrying `data`.
///
/// Text is upper-cased and cut to its AIS length (call sign 7, name and destination 20);
/// characters outside the AIS 6-bit set become `?`. The sequential id is the last digit of
/// the MMSI, so two vessels' messages may share it: write each pair before the next. A
/// tag block with `received_at` precedes the first sentence when it is set.
#[must_use]
pub fn encode_static(data: &StaticData) -> Vec<String> {
    let mut bits = Bits::default();
    bits.put(5, 6); // message type
    bits.put(0, 2); // repeat indicator
    bits.put(u64::from(data.mmsi), 30);
    bits.put(0, 2); // AIS version: ITU-R M.1371-1
    bits.put(
        data.imo.filter(|imo| *imo < 1 << 30).map_or(0, u64::from),
        30,
    );
    bits.put_text(data.call_sign.as_deref(), 7);
    bits.put_text(data.name.as_deref(), 20);
    bits.put(data.ship_type.map_or(0, u64::from), 8);
    let dimensions = data.dimensions;
    bits.put(dimensions.map_or(0, |d| u64::from(d.to_bow.min(511))), 9);
    bits.put(dimensions.map_or(0, |d| u64::from(d.to_stern.min(511))), 9);
    bits.put(dimensions.map_or(0, |d| u64::from(d.to_port.min(63))), 6);
    bits.put(
        dimensions.map_or(0, |d| u64::from(d.to_starboard.min(63))),
        6,
    );
    bits.put(1, 4); // position fixing device: GPS
    let eta = data.eta;
    bits.put(eta.map_or(0, |e| u64::from(e.month)), 4);
    bits.put(eta.map_or(0, |e| u64::from(e.day)), 5);
    bits.put(eta.and_then(|e| e.hour).map_or(24, u64::from), 5);
    bits.put(eta.and_then(|e| e.minute).map_or(60, u64::from), 6);
    bits.put(tenths(data.draught_metres).map_or(0, |d| d.min(255)), 8);
    bits.put_text(data.destination.as_deref(), 20);
    bits.put(0, 1); // DTE: available
    bits.put(0, 1); // spare
    let (payload, fill_bits) = bits.armour();
    let (first, second) = payload.split_at(FIRST_FRAGMENT_CHARS.min(payload.len()));
    let sequence_id = u8::try_from(data.mmsi % 10).unwrap_or_default();
    let mut head = tag_block(data.received_at);
    head.push_str(&sentence(2, 1, Some(sequence_id), first, 0));
    vec![head, sentence(2, 2, Some(sequence_id), second, fill_bits)]
}

fn sentence(count: u8, number: u8, sequence_id: Option<u8>, payload: &str, fill: u8) -> String {
    let id = sequence_id.map(|id| id.to_string()).unwrap_or_default();
    let body = format!("AIVDM,{count},{number},{id},A,{payload},{fill}");
    format!("!{body}*{:02X}", checksum(body.as_bytes()))
}

fn tag_block(received_at: Option<i64>) -> String {
    received_at.map_or_else(String::new, |time| {
        let body = format!("c:{time}");
        format!("\\{body}*{:02X}\\", checksum(body.as_bytes()))
    })
}

/// Rounds to a whole number of tenths; `None` for absent, negative or non-finite values.
fn tenths(value: Option<f64>) -> Option<u64> {
    let tenths = (value? * 10.0).round();
    // The float-to-int cast saturates; the range check keeps the value meaningful.
    (tenths.is_finite() && tenths >= 0.0).then_some(tenths as u64)
}

fn to_ten_thousandth_minutes(degrees: f64) -> i64 {
    (degrees * 600_000.0).round() as i64
}

/// A bit string built most significant bit first, one `u8` (0 or 1) per bit.
#[derive(Default)]
struct Bits(Vec<u8>);

impl Bits {
    /// Appends the low `len` bits of `value`; higher bits are ignored.
    fn put(&mut self, value: u64, len: u32) {
        for shift in (0..len).rev() {
            self.0.push(u8::from((value >> shift) & 1 == 1));
        }
    }

    /// Appends `value` in `len`-bit two's complement.
    fn put_signed(&mut self, value: i64, len: u32) {
        self.put(u64::from_ne_bytes(value.to_ne_bytes()), len);
    }

    /// Appends `chars` 6-bit characters of `text`, padded with `@`.
    fn put_text(&mut self, text: Option<&str>, chars: usize) {
        text.unwrap_or_default()
            .chars()
            .map(|c| match c.to_ascii_uppercase() {
                // '@' is the padding character, so it cannot appear inside text.
                c @ 'A'..='_' => u64::from(c) - 64,
                c @ ' '..='?' => u64::from(c),
                _ => u64::from('?'),
            })
            .chain(std::iter::repeat(0))
            .take(chars)
            .for_each(|code| self.put(code, 6));
    }

    /// The armoured payload and the number of fill bits added to reach a 6-bit boundary.
    fn armour(mut self) -> (String, u8) {
        let fill = (6 - self.0.len() % 6) % 6;
        self.0.resize(self.0.len() + fill, 0);
        let payload = self
            .0
            .chunks(6)
            .map(|chunk| {
                let value = chunk.iter().fold(0u8, |acc, bit| (acc << 1) | bit);
                char::from(if value < 40 { value + 48 } else { value + 56 })
            })
            .collect();
        (payload, u8::try_from(fill).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn armouring_maps_six_bit_values_to_the_aivdm_alphabet() {
        let mut bits = Bits::default();
        for value in [0, 39, 40, 63] {
            bits.put(value, 6);
        }
        assert_eq!(bits.armour(), ("0W`w".to_owned(), 0));
    }

    #[test]
    fn armouring_pads_to_a_six_bit_boundary_and_reports_the_fill() {
        let mut bits = Bits::default();
        bits.put(0b1111, 4);
        assert_eq!(bits.armour(), ("t".to_owned(), 2));
    }

    #[test]
    fn text_is_upper_cased_padded_and_cut() {
        let mut bits = Bits::default();
        bits.put_text(Some("ab@~"), 5);
        let expected: Vec<u8> = [1u64, 2, 63, 63, 0]
            .iter()
            .flat_map(|code| (0..6).rev().map(move |s| u8::from((code >> s) & 1 == 1)))
            .collect();
        assert_eq!(bits.0, expected);
    }
}
