//! Splitting bytes into segments, elements and components for both syntaxes.
//!
//! Why not a crate: `x12-types` (apimeister, 0.9–0.12) hard-codes `*` and `~` in its segment
//! reader, has typed 315/322 for 4010 only, parses strictly with nom (a segment it does not
//! expect fails the whole interchange), drops the 322 R4 loops and prints to stdout while
//! parsing; `edifact-types` has no UNA support, typed D.00B only, and enum code lists that
//! refuse unknown qualifiers. `edifact-rs` is a sound generic tokenizer, but the tokenizing
//! both syntaxes need is this file, and owning it keeps the never-panic, bounded-input
//! guarantees in one place. The crates were used as references and for test data only.

use crate::error::ReadError;
use crate::model::Separators;

/// One segment: its tag, its elements (each a list of components, release characters
/// resolved), and its text as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub tag: String,
    pub elements: Vec<Vec<String>>,
    pub raw: String,
}

impl Segment {
    /// Element `n` (1-based, after the tag), its first component; empty when absent.
    pub fn el(&self, n: usize) -> &str {
        self.comp(n, 1)
    }

    /// Component `c` (1-based) of element `n` (1-based); empty when absent.
    pub fn comp(&self, n: usize, c: usize) -> &str {
        n.checked_sub(1)
            .and_then(|n| self.elements.get(n))
            .and_then(|components| c.checked_sub(1).and_then(|c| components.get(c)))
            .map_or("", String::as_str)
    }

    /// Element `n`, trimmed; `None` when empty.
    pub fn value(&self, n: usize) -> Option<String> {
        non_empty(self.el(n))
    }

    /// Component `c` of element `n`, trimmed; `None` when empty.
    pub fn comp_value(&self, n: usize, c: usize) -> Option<String> {
        non_empty(self.comp(n, c))
    }
}

pub(crate) fn non_empty(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Bytes as text: UTF-8 when valid, else ISO 8859-1 (what UNOC and most X12 feeds mean by
/// their bytes above 127), so no byte is lost to a replacement character.
pub(crate) fn text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => bytes.iter().map(|&byte| char::from(byte)).collect(),
    }
}

/// The input without a leading UTF-8 byte-order mark and whitespace.
pub(crate) fn trim_start(input: &[u8]) -> &[u8] {
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let start = input
        .iter()
        .position(|byte| !byte.is_ascii_whitespace())
        .unwrap_or(input.len());
    input.get(start..).unwrap_or_default()
}

fn trim_line_breaks(mut piece: &[u8]) -> &[u8] {
    while let [b'\r' | b'\n' | b' ' | b'\t', rest @ ..] = piece {
        piece = rest;
    }
    while let [rest @ .., b'\r' | b'\n'] = piece {
        piece = rest;
    }
    piece
}

fn as_char(byte: u8) -> char {
    char::from(byte)
}

fn is_delimiter(byte: u8) -> bool {
    byte.is_ascii_graphic() || matches!(byte, b'\r' | b'\n') || byte < 0x20
}

/// X12: the separators from the ISA header, then the segments. The element separator is the
/// byte after `ISA`; ISA16 (the sub-element separator) is the byte after the sixteenth element
/// separator and the segment terminator the byte after that. Counting separators rather than
/// assuming 106 bytes also reads the non-fixed-width ISAs that some senders write.
pub(crate) fn x12(
    input: &[u8],
    max_segments: usize,
) -> Result<(Separators, Vec<Segment>), ReadError> {
    let input = trim_start(input);
    if !input.starts_with(b"ISA") {
        return bare_x12(input, max_segments);
    }
    let element = *input
        .get(3)
        .ok_or_else(|| ReadError::Envelope("the ISA segment is cut short".to_owned()))?;
    let mut separators_at = input
        .iter()
        .enumerate()
        .filter(|&(_, &byte)| byte == element)
        .map(|(position, _)| position);
    let fifteenth = separators_at.nth(14).ok_or_else(|| {
        ReadError::Envelope("the ISA segment has fewer than 16 elements".to_owned())
    })?;
    // ISA15 (`P` or `T`) and what follows it: the separator before ISA16, or — in an ISA that
    // lost its ISA16, as pages printing an example do — the segment terminator itself. Then
    // the usual `>` stands for the sub-element separator (the reader notes it).
    let after_isa15 = input
        .iter()
        .skip(fifteenth + 1)
        .position(|byte| !byte.is_ascii_alphanumeric())
        .map(|offset| fifteenth + 1 + offset);
    let (component, terminator, end) = match after_isa15.and_then(|at| Some((at, *input.get(at)?)))
    {
        Some((at, byte)) if byte != element && byte != b' ' && is_delimiter(byte) => {
            (if byte == b'>' { b'^' } else { b'>' }, byte, at)
        }
        _ => {
            let sixteenth = separators_at.next().ok_or_else(|| {
                ReadError::Envelope("the ISA segment has fewer than 16 elements".to_owned())
            })?;
            let Some(&[component, terminator]) = input.get(sixteenth + 1..sixteenth + 3) else {
                return Err(ReadError::Envelope(
                    "the ISA segment has no terminator".to_owned(),
                ));
            };
            (component, terminator, sixteenth + 2)
        }
    };
    let delimiters = [element, component, terminator];
    if delimiters.iter().any(u8::is_ascii_alphanumeric)
        || !delimiters.iter().copied().all(is_delimiter)
        || element == component
        || element == terminator
        || component == terminator
    {
        return Err(ReadError::Envelope(format!(
            "the ISA declares unusable separators (element {:?}, sub-element {:?}, segment {:?})",
            as_char(element),
            as_char(component),
            as_char(terminator)
        )));
    }
    let line_breaks = matches!(input.get(end + 1), Some(b'\r' | b'\n'));
    let segments = x12_segments(input, [element, terminator], max_segments)?;
    let repetition =
        segments
            .first()
            .map(|isa| isa.el(11))
            .and_then(|isa11| match isa11.as_bytes() {
                [byte] if !byte.is_ascii_alphanumeric() => Some(as_char(*byte)),
                _ => None,
            });
    let separators = Separators {
        element: as_char(element),
        component: as_char(component),
        segment: as_char(terminator),
        repetition,
        release: None,
        line_breaks,
    };
    Ok((separators, segments))
}

/// X12 without an interchange header: a functional group (`GS`) or a transaction set (`ST`)
/// as guides and libraries print them. The element separator is the byte after the tag; the
/// segment terminator the first byte after the header's last element (GS08, or ST02 and an
/// optional ST03) that is neither a letter, a digit nor the element separator. The
/// sub-element separator is not declared anywhere: the usual `>` is assumed.
fn bare_x12(input: &[u8], max_segments: usize) -> Result<(Separators, Vec<Segment>), ReadError> {
    let (elements, optional) = if input.starts_with(b"GS") {
        (8, 0)
    } else if input.starts_with(b"ST") {
        (2, 1)
    } else {
        return Err(ReadError::NotEdi);
    };
    let Some(&element) = input.get(2) else {
        return Err(ReadError::NotEdi);
    };
    if element.is_ascii_alphanumeric() || !is_delimiter(element) || element.is_ascii_whitespace() {
        return Err(ReadError::NotEdi);
    }
    // The first byte after the header's required elements that is not a letter or a digit
    // ends the header, unless it is the separator before its optional element.
    let mut seen = 0;
    let mut end = None;
    for (position, &byte) in input.iter().enumerate().skip(2) {
        if byte == element {
            seen += 1;
            if seen > elements + optional {
                break;
            }
        } else if seen >= elements && !byte.is_ascii_alphanumeric() {
            end = Some((position, byte));
            break;
        }
    }
    let Some((position, terminator)) = end.filter(|&(_, byte)| is_delimiter(byte)) else {
        return Err(ReadError::NotEdi);
    };
    let component = if terminator == b'>' || element == b'>' {
        b'^'
    } else {
        b'>'
    };
    let line_breaks = terminator != b'\n' && matches!(input.get(position + 1), Some(b'\r' | b'\n'));
    let segments = x12_segments(input, [element, terminator], max_segments)?;
    let separators = Separators {
        element: as_char(element),
        component: as_char(component),
        segment: as_char(terminator),
        repetition: None,
        release: None,
        line_breaks,
    };
    Ok((separators, segments))
}

/// The segments of X12 text split at the terminator, each split into its elements.
fn x12_segments(
    input: &[u8],
    [element, terminator]: [u8; 2],
    max_segments: usize,
) -> Result<Vec<Segment>, ReadError> {
    let mut segments = Vec::new();
    for piece in input.split(|&byte| byte == terminator) {
        let piece = trim_line_breaks(piece);
        if piece.is_empty() {
            continue;
        }
        if segments.len() >= max_segments {
            return Err(ReadError::TooManySegments {
                limit: max_segments,
            });
        }
        let mut elements = piece.split(|&byte| byte == element).map(text);
        let tag = elements.next().unwrap_or_default().trim().to_owned();
        segments.push(Segment {
            tag,
            elements: elements.map(|value| vec![value]).collect(),
            raw: text(piece),
        });
    }
    Ok(segments)
}

/// EDIFACT: the service characters from UNA (or the defaults `:+.? '`), then the segments,
/// honouring the release character.
pub(crate) fn edifact(
    input: &[u8],
    max_segments: usize,
) -> Result<(Separators, Vec<Segment>), ReadError> {
    let input = trim_start(input);
    let (mut separators, body) = if let Some(rest) = input.strip_prefix(b"UNA") {
        let Some(
            &[
                component,
                element,
                _decimal,
                release,
                repetition,
                terminator,
            ],
        ) = rest.get(..6)
        else {
            return Err(ReadError::Envelope(
                "the UNA segment is cut short".to_owned(),
            ));
        };
        let active = [component, element, terminator];
        if active.iter().any(u8::is_ascii_alphanumeric)
            || !active.iter().copied().all(is_delimiter)
            || component == element
            || component == terminator
            || element == terminator
            || (release != b' ' && active.contains(&release))
        {
            return Err(ReadError::Envelope(
                "the UNA declares unusable service characters".to_owned(),
            ));
        }
        let separators = Separators {
            element: as_char(element),
            component: as_char(component),
            segment: as_char(terminator),
            repetition: (repetition != b' ').then(|| as_char(repetition)),
            release: (release != b' ').then(|| as_char(release)),
            line_breaks: false,
        };
        (separators, trim_start(rest.get(6..).unwrap_or_default()))
    } else if input.get(3) == Some(&0x1D) {
        // Syntax level B's defaults (ISO 9735): IS3 between elements, IS1 between components,
        // IS4 after each segment, no release character.
        let separators = Separators {
            element: '\u{1D}',
            component: '\u{1F}',
            segment: '\u{1C}',
            repetition: None,
            release: None,
            line_breaks: false,
        };
        (separators, input)
    } else {
        let separators = Separators {
            element: '+',
            component: ':',
            segment: '\'',
            repetition: None,
            release: Some('?'),
            line_breaks: false,
        };
        (separators, input)
    };
    // An interchange begins with UNB; a message printed on its own (as guides print them)
    // with UNH or, in a group, UNG.
    if !(body.starts_with(b"UNB") || body.starts_with(b"UNH") || body.starts_with(b"UNG")) {
        return Err(if input.starts_with(b"UNA") {
            ReadError::Envelope("no UNB after the UNA".to_owned())
        } else {
            ReadError::NotEdi
        });
    }
    let release_byte = separators.release.and_then(|c| u8::try_from(c).ok());
    if !input.starts_with(b"UNA") && line_feed_terminated(body, release_byte) {
        // No UNA, and the UNB ends at a line break before any apostrophe: a sender that
        // ends each segment with a line break alone (a dialect some translators write).
        separators.segment = '\n';
    }
    let [element, component, terminator] =
        [separators.element, separators.component, separators.segment]
            .map(|c| u8::try_from(c).unwrap_or(0));
    let release = separators.release.and_then(|c| u8::try_from(c).ok());

    let mut segments = Vec::new();
    let mut start = 0;
    let mut position = 0;
    let mut first_terminator = true;
    while position < body.len() {
        let byte = body.get(position).copied().unwrap_or_default();
        if Some(byte) == release {
            position += 2;
            continue;
        }
        if byte == terminator {
            if first_terminator {
                separators.line_breaks =
                    terminator != b'\n' && matches!(body.get(position + 1), Some(b'\r' | b'\n'));
                first_terminator = false;
            }
            let piece = body.get(start..position).unwrap_or_default();
            push_edifact(
                &mut segments,
                piece,
                [element, component],
                release,
                max_segments,
            )?;
            start = position + 1;
        }
        position += 1;
    }
    // A last segment without its terminator is kept: the envelope checks say what is missing.
    let tail = body.get(start..).unwrap_or_default();
    push_edifact(
        &mut segments,
        tail,
        [element, component],
        release,
        max_segments,
    )?;
    Ok((separators, segments))
}

/// Whether the first segment (the UNB) ends at a line break rather than at an apostrophe:
/// a line break comes before any apostrophe that is not released.
fn line_feed_terminated(body: &[u8], release: Option<u8>) -> bool {
    let mut bytes = body.iter().copied();
    while let Some(byte) = bytes.next() {
        if Some(byte) == release {
            bytes.next();
            continue;
        }
        match byte {
            b'\'' => return false,
            b'\r' | b'\n' => return true,
            _ => {}
        }
    }
    false
}

fn push_edifact(
    segments: &mut Vec<Segment>,
    piece: &[u8],
    [element, component]: [u8; 2],
    release: Option<u8>,
    max_segments: usize,
) -> Result<(), ReadError> {
    let piece = trim_line_breaks(piece);
    if piece.is_empty() {
        return Ok(());
    }
    if segments.len() >= max_segments {
        return Err(ReadError::TooManySegments {
            limit: max_segments,
        });
    }
    let mut elements: Vec<Vec<String>> = Vec::new();
    let mut components: Vec<String> = Vec::new();
    let mut current: Vec<u8> = Vec::new();
    let mut bytes = piece.iter().copied();
    while let Some(byte) = bytes.next() {
        if Some(byte) == release {
            if let Some(next) = bytes.next() {
                current.push(next);
            }
        } else if byte == element {
            components.push(text(&current));
            current.clear();
            elements.push(std::mem::take(&mut components));
        } else if byte == component {
            components.push(text(&current));
            current.clear();
        } else {
            current.push(byte);
        }
    }
    components.push(text(&current));
    elements.push(components);
    let mut elements = elements.into_iter();
    let tag = elements
        .next()
        .and_then(|components| components.into_iter().next())
        .unwrap_or_default()
        .trim()
        .to_owned();
    segments.push(Segment {
        tag,
        elements: elements.collect(),
        raw: text(piece),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_release_character_keeps_separators_as_text() {
        let (_, segments) = edifact(
            b"UNB+UNOC:3+A+B+200101:1200+1'FTX+AAA+++A?+B?:C?'D??E'",
            100,
        )
        .expect("readable");
        let ftx = segments.get(1).expect("FTX");
        assert_eq!(ftx.el(4), "A+B:C'D?E");
    }

    #[test]
    fn line_feeds_end_the_segments_of_an_interchange_without_una_or_apostrophes() {
        let (separators, segments) = edifact(
            b"UNB+UNOA:2+A+B+170113:0501+1\r\nUNH+1+IFTSTA:D:96A:UN\r\nFTX+AAA+++IT?'S\r\n",
            100,
        )
        .expect("readable");
        assert_eq!(separators.segment, '\n');
        assert!(!separators.line_breaks);
        assert_eq!(segments.len(), 3);
        assert_eq!(segments[0].el(5), "1");
        assert_eq!(segments[2].el(4), "IT'S");
    }

    #[test]
    fn syntax_level_b_without_una_uses_the_information_separators() {
        let (separators, segments) = edifact(
            b"UNB\x1dUNOB\x1f2\x1dA\x1dB\x1d170113\x1f0501\x1d1\x1cUNH\x1d1\x1dIFTSTA\x1fD\x1f99B\x1fUN\x1c",
            100,
        )
        .expect("readable");
        assert_eq!(separators.element, '\u{1D}');
        assert_eq!(separators.release, None);
        assert_eq!(segments.len(), 2);
        assert_eq!(segments[0].comp(1, 1), "UNOB");
        assert_eq!(segments[1].comp(2, 3), "99B");
    }

    #[test]
    fn an_apostrophe_before_the_first_line_break_keeps_the_apostrophe() {
        let (separators, segments) = edifact(
            b"UNB+UNOA:2+A+B+170113:0501+1'\nUNH+1+IFTSTA:D:96A:UN'\n",
            100,
        )
        .expect("readable");
        assert_eq!(separators.segment, '\'');
        assert_eq!(segments.len(), 2);
    }

    #[test]
    fn una_declares_other_separators() {
        let (separators, segments) =
            edifact(b"UNA|^.\\ ~UNB^UNOC|3^A^B~UNH^1^IFTSTA|D|99B|UN~", 100).expect("readable");
        assert_eq!(separators.element, '^');
        assert_eq!(separators.release, Some('\\'));
        let unh = segments.get(1).expect("UNH");
        assert_eq!(unh.comp(2, 3), "99B");
    }

    #[test]
    fn a_non_fixed_width_isa_still_gives_its_separators() {
        let (separators, segments) = x12(
            b"ISA*00* *00* *ZZ*A*ZZ*B*160526*2245*U*00401*1*0*P*>~GS*SO*A*B~",
            100,
        )
        .expect("readable");
        assert_eq!(separators.component, '>');
        assert_eq!(separators.segment, '~');
        assert_eq!(segments.len(), 2);
    }

    #[test]
    fn an_isa_with_letters_as_separators_is_refused() {
        assert!(matches!(
            x12(b"ISA*00* *00* *ZZ*A*ZZ*B*160526*2245*U*00401*1*0*P*AB", 100),
            Err(ReadError::Envelope(_))
        ));
    }

    #[test]
    fn bytes_that_are_not_utf8_read_as_latin1() {
        assert_eq!(text(b"JOE\x92S"), "JOE\u{92}S");
        assert_eq!(text("MÜNCHEN".as_bytes()), "MÜNCHEN");
    }
}
