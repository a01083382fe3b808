//! The shape of a message, measured before it is parsed: how many MIME parts `mail-parser`
//! would build, how deep they nest, and how many header lines they carry.
//!
//! `mail-parser` builds every part of a message at once, each with its headers, several
//! hundred bytes apiece: 21 MiB of tiny parts took 800 MB. So a message is first walked
//! with the parser's own stream primitives (the same header reading, boundary search and
//! part ends, in the same order as `MessageParser::parse`), keeping one part's headers at a
//! time and counting, and refused before the tree is built when it is too large.

use std::fmt;

use mail_parser::parsers::MessageStream;
use mail_parser::{ContentType, GetHeader, Header, HeaderName, HeaderValue, MessageParser};

/// How many times `mail-parser` parses a message encoded inside a message (base64 or
/// quoted-printable `message/rfc822`): its `MAX_NESTED_ENCODED`.
const ENCODED_NESTING: usize = 3;
/// Header lines of all the parts of a message together: each becomes a parsed header.
pub const MAX_HEADER_LINES: usize = 10_000;
/// The most bytes one part's header is looked for in; a longer header is refused.
pub const MAX_HEADER_BYTES: usize = 1024 * 1024;

/// What a message may hold (`email.max_message_parts`, `email.max_message_depth`).
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// MIME parts, every multipart and enclosed message counted.
    pub max_parts: usize,
    /// Multiparts and enclosed messages inside one another.
    pub max_depth: usize,
}

/// Why a message is refused before it is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Excess {
    Parts(usize),
    Depth(usize),
    HeaderLines(usize),
    HeaderBytes(usize),
}

impl fmt::Display for Excess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Parts(max) => write!(
                f,
                "the message has more than {max} MIME parts (email.max_message_parts)"
            ),
            Self::Depth(max) => write!(
                f,
                "the message nests MIME parts more than {max} deep (email.max_message_depth)"
            ),
            Self::HeaderLines(max) => write!(f, "the message has more than {max} header lines"),
            Self::HeaderBytes(max) => {
                write!(f, "a MIME part has a header of more than {max} bytes")
            }
        }
    }
}

/// `Ok` when parsing `raw` builds at most `bounds.max_parts` parts, nested at most
/// `bounds.max_depth` deep, with at most [`MAX_HEADER_LINES`] header lines.
pub fn check(raw: &[u8], bounds: Bounds) -> Result<(), Excess> {
    let mut tally = Tally::default();
    walk(raw, bounds, &mut tally, 0, ENCODED_NESTING)
}

/// Whether the header at the start of `raw` is within the bounds, so that reading it
/// alone (`MessageParser::parse_headers`) stays small.
pub fn header_fits(raw: &[u8]) -> bool {
    header_lines(raw).is_ok_and(|lines| lines <= MAX_HEADER_LINES)
}

#[derive(Default)]
struct Tally {
    parts: usize,
    header_lines: usize,
}

/// What a part is to the walk, as `mail-parser` tells them apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A message (the outermost, or one enclosed as `message/rfc822`).
    Message,
    /// `multipart/digest`, whose parts are messages unless they say otherwise.
    Digest,
    Multipart,
    Leaf,
}

/// An open multipart or enclosed message: its kind and the boundary its parts end at.
struct Level {
    kind: Kind,
    boundary: Option<Vec<u8>>,
}

#[derive(Clone, Copy)]
enum Encoding {
    Base64,
    QuotedPrintable,
}

/// `MessageParser::parse_` without the bodies: one part's headers at a time, each part
/// counted as the parser would push it. `depth` is the nesting of `raw` itself;
/// `encoded_left` how many more encoded messages the parser would open.
fn walk(
    raw: &[u8],
    bounds: Bounds,
    tally: &mut Tally,
    depth: usize,
    encoded_left: usize,
) -> Result<(), Excess> {
    let parser = MessageParser::default();
    let mut stream = MessageStream::new(raw);
    let mut state = Level {
        kind: Kind::Message,
        boundary: None,
    };
    let mut open: Vec<Level> = Vec::new();
    let mut headers: Vec<Header<'_>> = Vec::new();
    'outer: loop {
        // Counted before they are read, so a header of a million lines is never read.
        tally.header_lines += header_lines(raw.get(stream.offset()..).unwrap_or_default())?;
        if tally.header_lines > MAX_HEADER_LINES {
            return Err(Excess::HeaderLines(MAX_HEADER_LINES));
        }
        headers.clear();
        let ended = !stream.parse_headers(&parser, &mut headers);
        // A header cut short by the end still makes a part (a message without a body).
        if ended && headers.is_empty() {
            break;
        }
        tally.parts += 1;
        if tally.parts > bounds.max_parts {
            return Err(Excess::Parts(bounds.max_parts));
        }
        if ended {
            break;
        }
        let nested = depth + open.len() + 1;
        let content_type = headers
            .header_value(&HeaderName::ContentType)
            .and_then(HeaderValue::as_content_type);
        let kind = kind_of(content_type, state.kind);
        if matches!(kind, Kind::Multipart | Kind::Digest)
            && let Some(boundary) = content_type.and_then(|t| t.attribute("boundary"))
            && stream.seek_next_part(boundary.as_bytes())
        {
            if nested > bounds.max_depth {
                return Err(Excess::Depth(bounds.max_depth));
            }
            let inner = Level {
                kind,
                boundary: Some(boundary.as_bytes().to_vec()),
            };
            open.push(std::mem::replace(&mut state, inner));
            stream.skip_crlf();
            continue;
        }
        let encoding = match headers.header_value(&HeaderName::ContentTransferEncoding) {
            Some(HeaderValue::Text(text)) if text.eq_ignore_ascii_case("base64") => {
                Some(Encoding::Base64)
            }
            Some(HeaderValue::Text(text)) if text.eq_ignore_ascii_case("quoted-printable") => {
                Some(Encoding::QuotedPrintable)
            }
            _ => None,
        };
        if kind == Kind::Message && encoding.is_none() {
            // An enclosed message: its header follows, its parts end at its parent's boundary.
            if nested > bounds.max_depth {
                return Err(Excess::Depth(bounds.max_depth));
            }
            let inner = Level {
                kind: Kind::Message,
                boundary: state.boundary.take(),
            };
            open.push(std::mem::replace(&mut state, inner));
            continue;
        }
        let boundary = state.boundary.as_deref().unwrap_or_default();
        let end = match (kind, encoding) {
            // The parser decodes an encoded message and parses it on its own: so does the walk.
            (Kind::Message, Some(encoding)) => {
                let (end, decoded) = match encoding {
                    Encoding::Base64 => stream.decode_base64_mime(boundary),
                    Encoding::QuotedPrintable => stream.decode_quoted_printable_mime(boundary),
                };
                if end != usize::MAX && encoded_left > 0 {
                    if nested > bounds.max_depth {
                        return Err(Excess::Depth(bounds.max_depth));
                    }
                    walk(&decoded, bounds, tally, nested, encoded_left - 1)?;
                }
                end
            }
            // Any other body ends where the decoders stop: at the first `--boundary`.
            _ => stream.mime_part(boundary).0,
        };
        if end == usize::MAX {
            // No boundary after the body (or a bad encoding): the parser seeks it again.
            let (_, found) = stream.seek_part_end(state.boundary.as_deref());
            if !found {
                state.boundary = None;
            }
        }
        if state.boundary.is_some() {
            loop {
                if state.kind == Kind::Message {
                    // An enclosed message ends with its part: back to its parent.
                    let Some(mut parent) = open.pop() else {
                        break 'outer;
                    };
                    parent.boundary = state.boundary.take();
                    state = parent;
                }
                if !stream.is_multipart_end() {
                    break;
                }
                // `--boundary--`: the multipart is closed; its parent's next part follows.
                let Some(parent) = open.pop() else {
                    break 'outer;
                };
                state = parent;
                match &state.boundary {
                    Some(boundary) if stream.seek_next_part_offset(boundary).is_some() => {}
                    _ => break 'outer,
                }
            }
        } else if stream.offset() >= raw.len() {
            break;
        }
    }
    Ok(())
}

/// `mail-parser`'s reading of a content type: multipart (any subtype), an enclosed message
/// (`message/rfc822`, `message/global`, or no type inside a digest), or anything else.
fn kind_of(content_type: Option<&ContentType<'_>>, parent: Kind) -> Kind {
    // The parser has lowered the type and subtype.
    match content_type.map(|t| (t.ctype(), t.subtype())) {
        Some(("multipart", Some("digest"))) => Kind::Digest,
        Some(("multipart", _)) => Kind::Multipart,
        Some(("message", Some("rfc822" | "global"))) => Kind::Message,
        Some(_) => Kind::Leaf,
        None if parent == Kind::Digest => Kind::Message,
        None => Kind::Leaf,
    }
}

/// The lines of the header at the start of `rest`, up to its first empty line: at least as
/// many as the fields the parser reads there (it stops at an empty line, if not before).
/// `HeaderBytes` when no empty line comes within [`MAX_HEADER_BYTES`].
fn header_lines(rest: &[u8]) -> Result<usize, Excess> {
    let window = rest.get(..MAX_HEADER_BYTES).unwrap_or(rest);
    let mut lines = 0;
    for line in window.split(|b| *b == b'\n') {
        if line.is_empty() || line == b"\r" {
            return Ok(lines);
        }
        lines += 1;
        if lines > MAX_HEADER_LINES {
            return Ok(lines);
        }
    }
    if window.len() < rest.len() {
        Err(Excess::HeaderBytes(MAX_HEADER_BYTES))
    } else {
        Ok(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: Bounds = Bounds {
        max_parts: 200,
        max_depth: 10,
    };

    /// The parts `mail-parser` builds, enclosed messages' own included.
    fn parsed_parts(raw: &[u8]) -> usize {
        fn count(message: &mail_parser::Message<'_>) -> usize {
            message
                .parts
                .iter()
                .map(|part| match &part.body {
                    mail_parser::PartType::Message(inner) => 1 + count(inner),
                    _ => 1,
                })
                .sum()
        }
        MessageParser::default().parse(raw).map_or(0, |m| count(&m))
    }

    /// The walk's count, with room for any number of parts.
    fn walked_parts(raw: &[u8]) -> usize {
        let mut tally = Tally::default();
        let bounds = Bounds {
            max_parts: usize::MAX,
            max_depth: usize::MAX,
        };
        walk(raw, bounds, &mut tally, 0, ENCODED_NESTING).unwrap();
        tally.parts
    }

    fn tiny_parts(count: usize) -> Vec<u8> {
        let mut raw =
            b"From: a@b.example\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n".to_vec();
        for _ in 0..count {
            raw.extend_from_slice(b"--x\r\n\r\na\r\n");
        }
        raw.extend_from_slice(b"--x--\r\n");
        raw
    }

    fn nested(depth: usize) -> Vec<u8> {
        let mut raw = b"From: a@b.example\r\n".to_vec();
        for level in 0..depth {
            raw.extend_from_slice(
                format!("Content-Type: multipart/mixed; boundary=b{level}\r\n\r\n--b{level}\r\n")
                    .as_bytes(),
            );
        }
        raw.extend_from_slice(b"Content-Type: text/plain\r\n\r\nhi\r\n");
        for level in (0..depth).rev() {
            raw.extend_from_slice(format!("--b{level}--\r\n").as_bytes());
        }
        raw
    }

    #[test]
    fn the_walk_counts_the_parts_the_parser_builds() {
        let forwarded =
            b"From: a@b.example\r\nContent-Type: multipart/mixed; boundary=\"o\"\r\n\r\n\
            preamble\r\n--o\r\nContent-Type: text/plain\r\n\r\nsee below\r\n--o\r\n\
            Content-Type: message/rfc822\r\n\r\nFrom: c@d.example\r\n\
            Content-Type: multipart/alternative; boundary=i\r\n\r\n--i\r\n\r\ntext\r\n--i\r\n\
            Content-Type: text/html\r\n\r\n<p>html</p>\r\n--i--\r\n--o\r\n\
            Content-Type: application/pdf; name=a.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n\
            JVBERi0xLjQK\r\n--o--\r\n";
        let digest = b"Content-Type: multipart/digest; boundary=d\r\n\r\n--d\r\n\r\n\
            Subject: one\r\n\r\nfirst\r\n--d\r\n\r\nSubject: two\r\n\r\nsecond\r\n--d--\r\n";
        let encoded = b"Content-Type: multipart/mixed; boundary=e\r\n\r\n--e\r\n\
            Content-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\n\
            Q29udGVudC1UeXBlOiBtdWx0aXBhcnQvbWl4ZWQ7IGJvdW5kYXJ5PXoNCg0KLS16DQoNCmENCi0tEg0K\r\n\
            --e--\r\n";
        let unclosed =
            b"Content-Type: multipart/mixed; boundary=u\r\n\r\n--u\r\n\r\na\r\n--u\r\n\r\nb";
        let bare = b"Subject: plain\r\n\r\njust text\r\n";
        let header_only = b"Subject: no body";
        for raw in [
            &forwarded[..],
            &digest[..],
            &encoded[..],
            &unclosed[..],
            &bare[..],
            &header_only[..],
            &tiny_parts(37),
            &nested(6),
        ] {
            assert_eq!(
                walked_parts(raw),
                parsed_parts(raw),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    #[test]
    fn a_message_of_more_parts_than_allowed_is_refused() {
        assert_eq!(check(&tiny_parts(199), BOUNDS), Ok(()));
        assert_eq!(check(&tiny_parts(200), BOUNDS), Err(Excess::Parts(200)));
        assert_eq!(check(&tiny_parts(50_000), BOUNDS), Err(Excess::Parts(200)));
    }

    #[test]
    fn parts_nested_deeper_than_allowed_are_refused() {
        assert_eq!(check(&nested(10), BOUNDS), Ok(()));
        assert_eq!(check(&nested(11), BOUNDS), Err(Excess::Depth(10)));
        let mut enclosed = b"From: a@b.example\r\n".to_vec();
        for _ in 0..11 {
            enclosed.extend_from_slice(b"Content-Type: message/rfc822\r\n\r\n");
        }
        enclosed.extend_from_slice(b"Subject: deep\r\n\r\nhi\r\n");
        assert_eq!(check(&enclosed, BOUNDS), Err(Excess::Depth(10)));
    }

    #[test]
    fn a_header_of_too_many_lines_is_refused_and_not_read() {
        let mut raw = Vec::new();
        for _ in 0..=MAX_HEADER_LINES {
            raw.extend_from_slice(b"X-A: b\r\n");
        }
        raw.extend_from_slice(b"\r\nbody\r\n");
        assert_eq!(
            check(&raw, BOUNDS),
            Err(Excess::HeaderLines(MAX_HEADER_LINES))
        );
        assert!(!header_fits(&raw));
        assert!(header_fits(b"Subject: x\r\n\r\nbody"));
        let endless = vec![b'a'; MAX_HEADER_BYTES + 1];
        assert_eq!(
            check(&endless, BOUNDS),
            Err(Excess::HeaderBytes(MAX_HEADER_BYTES))
        );
    }

    #[test]
    fn an_ordinary_message_passes() {
        assert_eq!(check(b"Subject: hi\r\n\r\nhello\r\n", BOUNDS), Ok(()));
        assert_eq!(check(b"", BOUNDS), Ok(()));
        assert_eq!(check(b"\x01\x02 not a message", BOUNDS), Ok(()));
    }
}
