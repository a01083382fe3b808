//! One received message read into plain data: measured (parts, nesting, header lines:
//! [`shape`]), parsed (MIME, with `mail-parser`), its senders checked against the
//! allow-list, what its headers say described, and its attachments copied out (names,
//! declared types, bytes) for the intake to store.
//!
//! Everything kept of a message is cut to a few KB (at a character boundary), so a list of
//! submissions stays small whatever was sent.

use chrono::{DateTime, Utc};
use mail_parser::{Address, HeaderValue, Message, MessageParser, MimeHeaders};

use crate::shape::{self, Bounds};

/// The part of a text body kept, in bytes.
const MAX_BODY_BYTES: usize = 20_000;
/// Attachments of one message read at most; the rest are counted.
pub const MAX_ATTACHMENTS: usize = 20;
/// Addresses (or references) kept per header.
const MAX_ADDRESSES: usize = 50;
/// One address kept (RFC 5321 allows 320 octets).
pub const MAX_ADDRESS_BYTES: usize = 320;
/// The addresses (or references) of one header kept, all together.
const MAX_LIST_BYTES: usize = 4_096;
/// The subject kept.
const MAX_SUBJECT_BYTES: usize = 1_000;
/// A message id kept (RFC 5322's line length).
const MAX_ID_BYTES: usize = 998;
/// A content type kept.
const MAX_CONTENT_TYPE_BYTES: usize = 255;
/// A reason (a submission's `status_reason`) kept.
pub const MAX_REASON_BYTES: usize = 4_096;
/// Notes on what became of attachments: listed up to this many, the rest counted.
const MAX_LISTED_NOTES: usize = 10;

/// What a message may hold and who may send it.
#[derive(Clone, Copy, Debug)]
pub struct Rules<'a> {
    /// Parts and nesting (`email.max_message_parts`, `email.max_message_depth`).
    pub bounds: Bounds,
    /// Senders allowed ([`sender_allowed`]); empty allows any.
    pub allowed_senders: &'a [String],
}

/// What a message's headers say, cut to bounds: what a submission records of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Description {
    pub subject: String,
    /// The text body, cut to a bound.
    pub body: Option<String>,
    /// The `From` addresses, or else the envelope sender.
    pub from: Vec<String>,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    /// The `Date` header.
    pub sent_at: Option<DateTime<Utc>>,
    pub message_id: Option<String>,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
    /// The top-level MIME type (`multipart/mixed`).
    pub content_type: Option<String>,
}

impl Description {
    /// A message nothing could be read of: its envelope sender (`arrival.sender`) alone.
    pub fn blank(sender: &str) -> Self {
        Self {
            from: if sender.is_empty() {
                Vec::new()
            } else {
                vec![clip(sender, MAX_ADDRESS_BYTES)]
            },
            ..Self::default()
        }
    }
}

/// An attachment copied out of a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attachment {
    /// Its name as sent, or `attachment-N` (its place among the attachments) without one;
    /// not yet made safe.
    pub file_name: String,
    /// The content type it says it has (`application/pdf`), cut to a bound.
    pub declared_content_type: Option<String>,
    pub bytes: Vec<u8>,
}

/// What a message is to the intake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Not to be recorded: a sender is not allowed; the reason says which.
    Refused(String),
    /// To be recorded as rejected for `reason` (cut to [`MAX_REASON_BYTES`]), with what
    /// could be read of it.
    Rejected {
        description: Description,
        reason: String,
    },
    /// Read: at least one attachment, up to [`MAX_ATTACHMENTS`]; `unread` more were not
    /// copied.
    Read {
        description: Description,
        attachments: Vec<Attachment>,
        unread: usize,
    },
}

/// Reads a whole raw message whose envelope sender is `sender` (empty when unknown).
pub fn read(raw: &[u8], sender: &str, rules: &Rules<'_>) -> Reading {
    // Before the parse: it would build every part at once.
    if let Err(excess) = shape::check(raw, rules.bounds) {
        return read_unparsed(raw, sender, rules, &excess.to_string());
    }
    let Some(message) = parse(raw) else {
        return rejected(
            Description::blank(sender),
            "malformed MIME: no message headers could be read",
        );
    };
    if let Some(refusal) = refusal(rules, &message, sender) {
        return refusal;
    }
    let description = describe(&message, sender);
    // Only the attachments read are copied; the others are counted.
    let mut attachments = Vec::new();
    let mut unread = 0usize;
    for (index, part) in message
        .attachments()
        .filter(|part| !part.is_multipart() && !part.contents().is_empty())
        .enumerate()
    {
        if attachments.len() >= MAX_ATTACHMENTS {
            unread += 1;
            continue;
        }
        // The intake makes the name safe and short, keeping its extension.
        let file_name = part
            .attachment_name()
            .map_or_else(|| format!("attachment-{}", index + 1), str::to_owned);
        let declared_content_type = part.content_type().map(|t| {
            let declared = match t.subtype() {
                Some(sub) => format!("{}/{sub}", t.ctype()),
                None => t.ctype().to_owned(),
            };
            clip(&declared, MAX_CONTENT_TYPE_BYTES)
        });
        attachments.push(Attachment {
            file_name,
            declared_content_type,
            bytes: part.contents().to_vec(),
        });
    }
    if attachments.is_empty() {
        return rejected(description, "the message has no attachments");
    }
    Reading::Read {
        description,
        attachments,
        unread,
    }
}

/// Reads a message that is not parsed, for `reason`: rejected with what its header (at the
/// start of `raw`) says when that header is within bounds, or refused as [`read`] would.
pub fn read_unparsed(raw: &[u8], sender: &str, rules: &Rules<'_>, reason: &str) -> Reading {
    let Some(message) = parse_header(raw) else {
        return rejected(Description::blank(sender), reason);
    };
    if let Some(refusal) = refusal(rules, &message, sender) {
        return refusal;
    }
    rejected(describe(&message, sender), reason)
}

fn rejected(description: Description, reason: &str) -> Reading {
    Reading::Rejected {
        description,
        reason: clip(reason, MAX_REASON_BYTES),
    }
}

/// Whether `address` may send documents: any when the allow-list is empty; else an entry
/// equal to the address, or to its domain (`@example.com` or `example.com`).
pub fn sender_allowed(allowed: &[String], address: &str) -> bool {
    if allowed.is_empty() {
        return true;
    }
    let address = address.trim().trim_matches(['<', '>']).to_ascii_lowercase();
    let domain = address.rsplit_once('@').map(|(_, d)| d);
    allowed.iter().any(|entry| {
        let entry = entry.trim_start_matches('@');
        entry == address || (!entry.contains('@') && domain == Some(entry))
    })
}

fn addresses(address: Option<&Address<'_>>) -> Vec<String> {
    address
        .map(|a| clip_list(a.iter().filter_map(|a| a.address()), MAX_ADDRESS_BYTES))
        .unwrap_or_default()
}

/// `text` cut to at most `max` bytes, at a character boundary, ending in `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let ellipsis = if max >= '…'.len_utf8() { "…" } else { "" };
    let mut end = max - ellipsis.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{ellipsis}", &text[..end])
}

/// Up to [`MAX_ADDRESSES`] items, each cut to `max_item` bytes, while they add up to at
/// most [`MAX_LIST_BYTES`].
fn clip_list<'a>(items: impl Iterator<Item = &'a str>, max_item: usize) -> Vec<String> {
    let mut kept = Vec::new();
    let mut total = 0;
    for item in items.take(MAX_ADDRESSES) {
        let item = clip(item, max_item);
        total += item.len();
        if total > MAX_LIST_BYTES {
            break;
        }
        kept.push(item);
    }
    kept
}

/// `notes` joined with `; `: the first ten (`MAX_LISTED_NOTES`), then how many more, cut to
/// [`MAX_REASON_BYTES`].
pub fn summary(notes: &[String]) -> String {
    let mut text = notes
        .iter()
        .take(MAX_LISTED_NOTES)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("; ");
    if notes.len() > MAX_LISTED_NOTES {
        text.push_str(&format!("; … and {} more", notes.len() - MAX_LISTED_NOTES));
    }
    clip(&text, MAX_REASON_BYTES)
}

/// The envelope sender a mail server wrote into a delivered message (`Return-Path`, RFC 5321
/// §4.4): what SMTP's `MAIL FROM` was, for a message taken from a mailbox; empty when the
/// message has none (or a null one, `<>`).
pub fn return_path(raw: &[u8]) -> String {
    let Some(message) = parse_header(raw) else {
        return String::new();
    };
    let path = match message.return_path() {
        HeaderValue::Text(text) => text.trim(),
        HeaderValue::TextList(list) => list.first().map_or("", |t| t.trim()),
        _ => "",
    };
    clip(path, MAX_ADDRESS_BYTES)
}

/// The message, unless not even a header could be read.
fn parse(raw: &[u8]) -> Option<Message<'_>> {
    MessageParser::default()
        .parse(raw)
        .filter(|message| !message.headers().is_empty())
}

/// The message's header alone, unless it is empty or too large to read.
fn parse_header(raw: &[u8]) -> Option<Message<'_>> {
    if !shape::header_fits(raw) {
        return None;
    }
    MessageParser::default()
        .parse_headers(raw)
        .filter(|message| !message.headers().is_empty())
}

/// `Refused` when the `From` addresses or the envelope sender are not allowed.
fn refusal(rules: &Rules<'_>, message: &Message<'_>, sender: &str) -> Option<Reading> {
    addresses(message.from())
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(sender))
        .find(|a| !a.is_empty() && !sender_allowed(rules.allowed_senders, a))
        .map(|outsider| Reading::Refused(format!("{outsider} is not allowed to send documents")))
}

/// What a parsed message's headers say.
fn describe(message: &Message<'_>, sender: &str) -> Description {
    let base = Description::blank(sender);
    let from = addresses(message.from());
    let body = message
        .body_text(0)
        .map(|text| clip(&text.replace("\r\n", "\n"), MAX_BODY_BYTES));
    Description {
        subject: clip(message.subject().unwrap_or_default(), MAX_SUBJECT_BYTES),
        body,
        from: if from.is_empty() { base.from } else { from },
        to: addresses(message.to()),
        cc: addresses(message.cc()),
        sent_at: message
            .date()
            .and_then(|d| DateTime::<Utc>::from_timestamp(d.to_timestamp(), 0)),
        message_id: message.message_id().map(|id| clip(id, MAX_ID_BYTES)),
        in_reply_to: message
            .in_reply_to()
            .as_text()
            .map(|id| clip(id, MAX_ID_BYTES)),
        references: message
            .references()
            .as_text_list()
            .map(|list| clip_list(list.iter().map(AsRef::as_ref), MAX_ID_BYTES))
            .or_else(|| {
                message
                    .references()
                    .as_text()
                    .map(|r| vec![clip(r, MAX_ID_BYTES)])
            })
            .unwrap_or_default(),
        content_type: message.content_type().map(|t| {
            let text = match t.subtype() {
                Some(sub) => format!("{}/{sub}", t.ctype()),
                None => t.ctype().to_owned(),
            };
            clip(&text, MAX_CONTENT_TYPE_BYTES)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: Rules<'static> = Rules {
        bounds: Bounds {
            max_parts: 200,
            max_depth: 10,
        },
        allowed_senders: &[],
    };

    #[test]
    fn the_envelope_sender_of_a_delivered_message_is_its_return_path() {
        let delivered = b"Return-Path: <Bounces@Carrier.example>\r\nFrom: a@b.example\r\n\r\nx";

        assert_eq!(return_path(delivered), "Bounces@Carrier.example");
        assert_eq!(
            return_path(b"Return-Path: <>\r\nFrom: a@b.example\r\n\r\n"),
            ""
        );
        assert_eq!(return_path(b"From: a@b.example\r\n\r\nx"), "");
        assert_eq!(return_path(b"\x01\x02"), "");
    }

    #[test]
    fn clipped_text_ends_at_a_character_boundary_within_its_bytes() {
        assert_eq!(clip("short", 10), "short");
        let long = "é".repeat(10);
        let clipped = clip(&long, 8);
        assert!(clipped.len() <= 8, "{clipped}");
        assert_eq!(clipped, "éé…");
        assert_eq!(clip("éé", 1), "");
    }

    #[test]
    fn a_reason_lists_ten_notes_then_counts_the_rest() {
        let notes: Vec<String> = (1..=800_000)
            .map(|n| format!("a{n}.pdf: refused"))
            .collect();

        let reason = summary(&notes);

        assert!(
            reason.starts_with("a1.pdf: refused; a2.pdf: refused"),
            "{reason}"
        );
        assert!(reason.ends_with("; … and 799990 more"), "{reason}");
        assert!(reason.len() <= MAX_REASON_BYTES);
        assert!(summary(&["x".repeat(10 * MAX_REASON_BYTES)]).len() <= MAX_REASON_BYTES);
    }

    #[test]
    fn an_allow_list_names_addresses_or_domains() {
        let allowed = vec![
            "ops@forwarder.example".to_owned(),
            "@carrier.example".to_owned(),
            "agent.example".to_owned(),
        ];
        assert!(sender_allowed(&allowed, "OPS@forwarder.example"));
        assert!(sender_allowed(&allowed, "<notices@carrier.example>"));
        assert!(sender_allowed(&allowed, "x@agent.example"));
        assert!(!sender_allowed(&allowed, "ops@evil.example"));
        assert!(!sender_allowed(&allowed, "x@sub.agent.example.evil"));
        assert!(sender_allowed(&[], "anyone@anywhere.example"));
    }

    #[test]
    fn a_message_is_read_into_its_description_and_attachments() {
        let raw = b"From: Ops <ops@forwarder.example>\r\nTo: docs@tidemark.example\r\n\
            Subject: BL MAEU123456789\r\nMessage-ID: <m1@forwarder.example>\r\n\
            Content-Type: multipart/mixed; boundary=x\r\n\r\n\
            --x\r\nContent-Type: text/plain\r\n\r\nsee MSCU1234566\r\n\
            --x\r\nContent-Type: application/pdf; name=bl.pdf\r\n\
            Content-Disposition: attachment; filename=bl.pdf\r\n\r\n%PDF-1.4\r\n\
            --x\r\nContent-Type: application/octet-stream\r\n\
            Content-Disposition: attachment\r\n\r\nbytes\r\n--x--\r\n";

        let Reading::Read {
            description,
            attachments,
            unread,
        } = read(raw, "bounces@forwarder.example", &RULES)
        else {
            panic!("not read");
        };

        assert_eq!(description.subject, "BL MAEU123456789");
        assert_eq!(description.from, ["ops@forwarder.example"]);
        assert_eq!(description.to, ["docs@tidemark.example"]);
        assert_eq!(
            description.message_id.as_deref(),
            Some("m1@forwarder.example")
        );
        assert_eq!(description.content_type.as_deref(), Some("multipart/mixed"));
        assert_eq!(description.body.as_deref(), Some("see MSCU1234566"));
        let names: Vec<_> = attachments.iter().map(|a| a.file_name.as_str()).collect();
        assert_eq!(names, ["bl.pdf", "attachment-2"]);
        assert_eq!(
            attachments[0].declared_content_type.as_deref(),
            Some("application/pdf")
        );
        assert_eq!(attachments[0].bytes, b"%PDF-1.4");
        assert_eq!(unread, 0);
    }

    #[test]
    fn senders_not_allowed_are_refused_and_unreadable_mail_rejected() {
        let allowed = ["forwarder.example".to_owned()];
        let rules = Rules {
            allowed_senders: &allowed,
            ..RULES
        };
        let from_outside = b"From: x@evil.example\r\nSubject: hi\r\n\r\nbody\r\n";

        assert_eq!(
            read(from_outside, "ops@forwarder.example", &rules),
            Reading::Refused("x@evil.example is not allowed to send documents".to_owned())
        );
        assert_eq!(
            read(
                b"Subject: hi\r\n\r\nno files\r\n",
                "ops@forwarder.example",
                &rules
            ),
            Reading::Rejected {
                description: Description {
                    subject: "hi".to_owned(),
                    body: Some("no files\n".to_owned()),
                    from: vec!["ops@forwarder.example".to_owned()],
                    ..Description::default()
                },
                reason: "the message has no attachments".to_owned(),
            }
        );
        assert_eq!(
            read(b"", "", &rules),
            Reading::Rejected {
                description: Description::default(),
                reason: "malformed MIME: no message headers could be read".to_owned(),
            }
        );
        assert_eq!(
            read_unparsed(
                b"From: ops@forwarder.example\r\n\r\n",
                "",
                &rules,
                "too large"
            ),
            Reading::Rejected {
                description: Description {
                    from: vec!["ops@forwarder.example".to_owned()],
                    ..Description::default()
                },
                reason: "too large".to_owned(),
            }
        );
    }
}
