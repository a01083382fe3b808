//! The NMEA 0183 layer of one line: optional tag block, `!AIVDM` fields, checksum, and
//! trailing receiver metadata. No allocation; the payload is borrowed from the line.

/// The AIS fields of one well-formed `VDM`/`VDO` sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Sentence<'a> {
    pub fragment_count: u8,
    pub fragment_number: u8,
    pub sequence_id: Option<u8>,
    pub channel: Option<u8>,
    /// Armoured 6-bit payload, not yet validated.
    pub payload: &'a [u8],
    pub fill_bits: u8,
    /// Unix seconds from a tag block `c:` field or trailing USCG-style metadata.
    pub received_at: Option<i64>,
}

/// Why a line is not a usable AIS sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rejected {
    /// Blank, a comment, or an NMEA sentence other than `VDM`/`VDO`.
    NotAis,
    /// The sentence or its tag block fails its checksum.
    BadChecksum,
    /// Looks like AIS but the framing is wrong.
    Malformed,
}

/// Splits `line` into its AIS sentence fields.
pub(super) fn parse(line: &[u8]) -> Result<Sentence<'_>, Rejected> {
    let line = line.trim_ascii();
    let (tag_time, rest) = match line.strip_prefix(b"\\") {
        Some(after) => {
            let end = after
                .iter()
                .position(|&b| b == b'\\')
                .ok_or(Rejected::Malformed)?;
            let (block, rest) = after.split_at(end);
            (parse_tag_block(block)?, &rest[1..])
        }
        None => (None, line),
    };

    let Some((&start, body)) = rest.split_first() else {
        return Err(Rejected::NotAis);
    };
    if start != b'!' && start != b'$' {
        // A comment, or garbage that does not even start like NMEA.
        return Err(if start == b'#' || !contains_formatter(rest) {
            Rejected::NotAis
        } else {
            Rejected::Malformed
        });
    }
    if !matches!(body.get(2..5), Some(b"VDM" | b"VDO")) {
        return Err(Rejected::NotAis);
    }

    let star = body
        .iter()
        .position(|&b| b == b'*')
        .ok_or(Rejected::Malformed)?;
    let (fields, after_star) = body.split_at(star);
    let expected = after_star
        .get(1..3)
        .and_then(hex_byte)
        .ok_or(Rejected::Malformed)?;
    if checksum(fields) != expected {
        return Err(Rejected::BadChecksum);
    }

    let mut parts = fields.split(|&b| b == b',');
    let mut next = || parts.next().ok_or(Rejected::Malformed);
    let _formatter = next()?;
    let fragment_count = digit(next()?).ok_or(Rejected::Malformed)?;
    let fragment_number = digit(next()?).ok_or(Rejected::Malformed)?;
    let sequence_id = match next()? {
        b"" => None,
        id => Some(small_number(id).ok_or(Rejected::Malformed)?),
    };
    let channel = next()?.first().copied();
    let payload = next()?;
    let fill_bits = match next()? {
        // Some encoders leave the fill empty when it is zero.
        b"" => 0,
        fill => digit(fill).ok_or(Rejected::Malformed)?,
    };
    if parts.next().is_some()
        || fragment_count == 0
        || fragment_number == 0
        || fragment_number > fragment_count
        || fill_bits > 5
    {
        return Err(Rejected::Malformed);
    }

    let received_at = tag_time.or_else(|| trailing_time(&after_star[3..]));
    Ok(Sentence {
        fragment_count,
        fragment_number,
        sequence_id,
        channel,
        payload,
        fill_bits,
        received_at,
    })
}

/// Parses the inside of `\...*hh\`; returns the `c:` time if there is one.
fn parse_tag_block(block: &[u8]) -> Result<Option<i64>, Rejected> {
    let star = block
        .iter()
        .position(|&b| b == b'*')
        .ok_or(Rejected::Malformed)?;
    let (fields, after_star) = block.split_at(star);
    let expected = after_star
        .get(1..3)
        .and_then(hex_byte)
        .ok_or(Rejected::Malformed)?;
    if checksum(fields) != expected {
        return Err(Rejected::BadChecksum);
    }
    for field in fields.split(|&b| b == b',') {
        if let Some(value) = field.strip_prefix(b"c:") {
            let time = integer(value).ok_or(Rejected::Malformed)?;
            // Some receivers write milliseconds; seconds stay below 1e11 until the year 5138.
            return Ok(Some(if time >= 100_000_000_000 {
                time / 1000
            } else {
                time
            }));
        }
    }
    Ok(None)
}

/// USCG/libais logs append `,<fields>,r<station>,<unix time>[,<unix time>]` after the
/// checksum. The first field that is a plain 9–10 digit number (optionally with a
/// fraction) is the reception time.
fn trailing_time(trailer: &[u8]) -> Option<i64> {
    let trailer = trailer.strip_prefix(b",")?;
    trailer.split(|&b| b == b',').find_map(|field| {
        let whole = field.split(|&b| b == b'.').next().unwrap_or_default();
        if (9..=10).contains(&whole.len()) {
            integer(whole)
        } else {
            None
        }
    })
}

fn contains_formatter(line: &[u8]) -> bool {
    line.windows(3).any(|w| w == b"VDM" || w == b"VDO")
}

fn digit(field: &[u8]) -> Option<u8> {
    match field {
        [d @ b'0'..=b'9'] => Some(d - b'0'),
        _ => None,
    }
}

fn small_number(field: &[u8]) -> Option<u8> {
    if field.len() > 2 {
        return None;
    }
    u8::try_from(integer(field)?).ok()
}

/// A non-empty run of ASCII digits (at most 18, so it cannot overflow).
fn integer(field: &[u8]) -> Option<i64> {
    if field.is_empty() || field.len() > 18 {
        return None;
    }
    field.iter().try_fold(0i64, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + i64::from(b - b'0'))
    })
}

fn hex_byte(hex: &[u8]) -> Option<u8> {
    fn nibble(b: u8) -> Option<u8> {
        match b {
            b'0'..=b'9' => Some(b - b'0'),
            b'A'..=b'F' => Some(b - b'A' + 10),
            b'a'..=b'f' => Some(b - b'a' + 10),
            _ => None,
        }
    }
    match hex {
        [hi, lo] => Some(nibble(*hi)? << 4 | nibble(*lo)?),
        _ => None,
    }
}

/// The NMEA checksum of `body` (the bytes between the start character and `*`).
pub(super) fn checksum(body: &[u8]) -> u8 {
    body.iter().fold(0u8, |acc, &b| acc ^ b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_fragment_sentence_yields_its_fields() {
        let sentence =
            parse(b"!AIVDM,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0*4A\r\n").expect("valid sentence");
        assert_eq!(sentence.fragment_count, 1);
        assert_eq!(sentence.fragment_number, 1);
        assert_eq!(sentence.sequence_id, None);
        assert_eq!(sentence.channel, Some(b'A'));
        assert_eq!(sentence.payload, b"15RTgt0PAso;90TKcjM8h6g208CQ");
        assert_eq!(sentence.fill_bits, 0);
        assert_eq!(sentence.received_at, None);
    }

    #[test]
    fn a_wrong_checksum_is_rejected_as_bad_checksum() {
        assert_eq!(
            parse(b"!AIVDM,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0*4B"),
            Err(Rejected::BadChecksum)
        );
    }

    #[test]
    fn a_tag_block_time_becomes_the_reception_time() {
        let body = b"c:1696241893,s:station";
        let line = format!(
            "\\{}*{:02X}\\!AIVDM,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0*4A",
            std::str::from_utf8(body).expect("ascii"),
            checksum(body)
        );
        let sentence = parse(line.as_bytes()).expect("valid sentence");
        assert_eq!(sentence.received_at, Some(1_696_241_893));
    }

    #[test]
    fn a_tag_block_with_a_wrong_checksum_is_rejected() {
        assert_eq!(
            parse(b"\\s:2573345,c:1696241893*01\\!AIVDM,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0*4A"),
            Err(Rejected::BadChecksum)
        );
    }

    #[test]
    fn trailing_uscg_metadata_gives_the_reception_time() {
        let sentence = parse(
            b"!AIVDM,1,1,,A,15N1u<PP1FJuvSRHOE6QIwwh0HQ6,0*30,d-080,S2118,t050056.00,T56.4837741,r003669946,1325394060,1325394001",
        )
        .expect("valid sentence");
        assert_eq!(sentence.received_at, Some(1_325_394_060));
    }

    #[test]
    fn other_nmea_sentences_and_comments_are_not_ais() {
        for line in [
            &b"$GPGGA,213950.00,5250.53669,N,00542.34920,E,1,09,1.03,-6.0,M,45.8,M,,*7B"[..],
            b"# a comment",
            b"",
            b"   ",
        ] {
            assert_eq!(parse(line), Err(Rejected::NotAis));
        }
    }

    #[test]
    fn a_sentence_without_its_start_character_is_malformed() {
        assert_eq!(
            parse(b"AIVDM,2,2,1,B,00000000000,2*26"),
            Err(Rejected::Malformed)
        );
    }

    #[test]
    fn impossible_fragment_numbers_are_malformed() {
        for line in [
            "!AIVDM,2,3,1,A,0,0",
            "!AIVDM,0,0,1,A,0,0",
            "!AIVDM,1,1,,A,0,6",
        ] {
            let body = &line.as_bytes()[1..];
            let line = format!("{line}*{:02X}", checksum(body));
            assert_eq!(parse(line.as_bytes()), Err(Rejected::Malformed), "{line}");
        }
    }
}
