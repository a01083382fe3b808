//! One received message: measured (parts, nesting, header lines: [`shape`]), parsed (MIME,
//! with `mail-parser`), checked, recorded as an `email_submission`, its attachments stored
//! as documents through the upload use case (so they are sniffed, size-checked,
//! deduplicated and read like any upload). An attachment that is an EDI interchange (named
//! `*.edi`, `*.x12`, `*.txt` or `*.edifact` and starting as one: [`is_edi_attachment`])
//! is received as EDI instead ([`crate::use_cases::edi::receive`], channel `email`).
//!
//! Everything recorded of a message is cut to a few KB (at a character boundary), so a list
//! of submissions stays small whatever was sent.

use axum::body::Bytes;
use chrono::{DateTime, Utc};
use mail_parser::{Address, HeaderValue, Message, MessageParser, MimeHeaders};
use tidemark_domain::AccountId;
use tidemark_store::{EmailSubmission, StoreError};
use uuid::Uuid;

use super::shape::{self, Bounds};
use crate::app::App;
use crate::use_cases::documents::process::link_numbers;
use crate::use_cases::documents::upload::{self, NewDocument};
use crate::use_cases::edi;

/// The part of a text body kept on the submission, in bytes.
const MAX_BODY_BYTES: usize = 20_000;
/// Attachments of one message made into documents at most; the rest are counted.
const MAX_ATTACHMENTS: usize = 20;
/// Addresses (or references) kept per header.
const MAX_ADDRESSES: usize = 50;
/// One address kept (RFC 5321 allows 320 octets).
const MAX_ADDRESS_BYTES: usize = 320;
/// The addresses (or references) of one header kept, all together.
const MAX_LIST_BYTES: usize = 4_096;
/// The subject kept.
const MAX_SUBJECT_BYTES: usize = 1_000;
/// A message id kept (RFC 5322's line length).
const MAX_ID_BYTES: usize = 998;
/// A content type kept.
const MAX_CONTENT_TYPE_BYTES: usize = 255;
/// A `status_reason` kept.
pub const MAX_REASON_BYTES: usize = 4_096;
/// What became of the attachments not kept: listed up to this many, the rest counted.
const MAX_LISTED_NOTES: usize = 10;
/// An attachment's name as a reason shows it.
const MAX_NOTE_NAME_BYTES: usize = 200;

/// `status` of a submission whose attachments are being stored.
pub const RECEIVED: &str = "received";
/// `status` of a submission of which at least one attachment became a document or an EDI
/// interchange.
pub const PROCESSED: &str = "processed";
/// `status` of a submission of which nothing was kept.
pub const REJECTED: &str = "rejected";

/// Extensions of attachments read as EDI when their bytes start as an interchange.
const EDI_EXTENSIONS: &[&str] = &["edi", "x12", "txt", "edifact"];

/// Whether an attachment is an EDI interchange: named `*.edi`, `*.x12`, `*.txt` or
/// `*.edifact` (any case), with bytes that start as one
/// ([`looks_like_edi`](edi::looks_like_edi)). Anything else stays a document.
pub fn is_edi_attachment(file_name: &str, bytes: &[u8]) -> bool {
    let named = std::path::Path::new(file_name)
        .extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| {
            EDI_EXTENSIONS
                .iter()
                .any(|edi| extension.eq_ignore_ascii_case(edi))
        });
    named && edi::looks_like_edi(bytes)
}

/// What happened to a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ingested {
    /// Recorded; `documents` of its attachments became documents (its EDI interchanges are
    /// counted in its `status_reason`).
    Processed { submission: Uuid, documents: usize },
    /// Recorded as rejected, with the reason.
    Rejected { submission: Uuid, reason: String },
    /// Not recorded: the sender is not allowed.
    Refused(String),
    /// Not recorded again: a submission from the same source (the same message of a polled
    /// mailbox) was recorded before.
    AlreadyRecorded,
}

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The account mail is filed under does not exist.
    #[error("the account {0:?} (email.account) does not exist")]
    NoAccount(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where a message came from.
#[derive(Clone, Copy, Debug)]
pub struct Arrival<'a> {
    /// The envelope sender: SMTP's `MAIL FROM`, or the `Return-Path` a mail server wrote
    /// into a polled message; empty when unknown.
    pub sender: &'a str,
    /// Names the message when it could be taken twice (see
    /// [`EmailSubmission::source_key`]); `None` for mail delivered over SMTP.
    pub source_key: Option<&'a str>,
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

/// `notes` joined with `; `: the first [`MAX_LISTED_NOTES`], then how many more, cut to
/// [`MAX_REASON_BYTES`].
fn summary(notes: &[String]) -> String {
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

/// Files one raw message under the account `email.account`.
pub async fn ingest(app: &App, arrival: Arrival<'_>, raw: &[u8]) -> Result<Ingested, IngestError> {
    let account = filing_account(app).await?;
    let now = app.clock.now();
    let bounds = Bounds {
        max_parts: app.config.email.max_message_parts,
        max_depth: app.config.email.max_message_depth,
    };
    // Before the parse: it would build every part at once.
    if let Err(excess) = shape::check(raw, bounds) {
        return file_unread(app, account, now, arrival, raw, &excess.to_string()).await;
    }
    let Some(message) = parse(raw) else {
        let submission = blank(app, account, now, arrival);
        return reject(
            app,
            submission,
            "malformed MIME: no message headers could be read",
        )
        .await;
    };
    if let Some(refusal) = refusal(app, &message, arrival) {
        return Ok(refusal);
    }
    let submission = describe(app, account, now, arrival, &message);
    // Only the attachments read are copied; the others are counted.
    let mut attachments: Vec<(String, Option<String>, Vec<u8>)> = Vec::new();
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
        // The upload use case makes the name safe and short, keeping its extension.
        let name = part
            .attachment_name()
            .map_or_else(|| format!("attachment-{}", index + 1), str::to_owned);
        let declared = part.content_type().map(|t| {
            let declared = match t.subtype() {
                Some(sub) => format!("{}/{sub}", t.ctype()),
                None => t.ctype().to_owned(),
            };
            clip(&declared, MAX_CONTENT_TYPE_BYTES)
        });
        attachments.push((name, declared, part.contents().to_vec()));
    }
    if attachments.is_empty() {
        return reject(app, submission, "the message has no attachments").await;
    }
    // Numbers in the subject and body link every document of the message; each
    // document's own numbers are linked when it is read.
    let mentioned = format!(
        "{}\n{}",
        submission.subject,
        submission.body.as_deref().unwrap_or_default()
    );
    let (shipment_ids, container_ids, _) = link_numbers(app, account, &mentioned).await?;
    if !app.store.insert_email_submission(&submission).await? {
        return Ok(Ingested::AlreadyRecorded);
    }
    let mut kept = 0;
    let mut interchanges = 0usize;
    let mut notes = Vec::new();
    for (file_name, declared, bytes) in attachments {
        let shown = clip(&file_name, MAX_NOTE_NAME_BYTES);
        if is_edi_attachment(&file_name, &bytes) {
            let inbound = edi::Inbound {
                channel: edi::Channel::Email,
                source_name: Some(clip(&file_name, MAX_NOTE_NAME_BYTES)),
                create_shipments: false,
            };
            match edi::receive(app, account, &inbound, &bytes).await {
                Ok(message) => {
                    interchanges += 1;
                    if message.status == "rejected" {
                        notes.push(format!("{shown}: EDI message {} was rejected", message.id));
                    }
                }
                Err(edi::ReceiveError::Store(error)) => {
                    tracing::warn!(error = ?error, "cannot store an emailed EDI interchange");
                    notes.push(format!("{shown}: EDI interchange not stored ({error})"));
                }
                Err(error) => notes.push(format!("{shown}: {error}")),
            }
            continue;
        }
        let new = NewDocument {
            account,
            uploaded_by: None,
            name: None,
            file_name: file_name.clone(),
            declared_content_type: declared,
            shipment_ids: shipment_ids.clone(),
            container_ids: container_ids.clone(),
            email_submission: Some(submission.id),
        };
        match upload::upload(app, new, Bytes::from(bytes)).await {
            Ok(_) => kept += 1,
            Err(error @ upload::UploadError::Store(_)) => {
                tracing::warn!(error = ?error, "cannot store an emailed document");
                notes.push(format!("{shown}: not stored ({error})"));
            }
            Err(error) => notes.push(format!("{shown}: {error}")),
        }
    }
    if unread > 0 {
        notes.push(format!(
            "{unread} more attachment(s) not read: at most {MAX_ATTACHMENTS} are"
        ));
    }
    if interchanges > 0 {
        // First, so the listing of notes never cuts it off.
        notes.insert(
            0,
            format!("{interchanges} EDI interchange(s) received as EDI messages"),
        );
    }
    let (status, reason) = if kept == 0 && interchanges == 0 {
        (
            REJECTED,
            Some(clip(
                &format!("no attachment became a document: {}", summary(&notes)),
                MAX_REASON_BYTES,
            )),
        )
    } else if notes.is_empty() {
        (PROCESSED, None)
    } else {
        (PROCESSED, Some(summary(&notes)))
    };
    app.store
        .finish_email_submission(
            account,
            submission.id,
            status,
            reason.as_deref(),
            app.clock.now(),
        )
        .await?;
    if let Err(error) = crate::use_cases::webhooks::deliver::queue_due(app).await {
        tracing::warn!(error = ?error, "cannot queue webhook deliveries");
    }
    Ok(match reason {
        Some(reason) if kept == 0 && interchanges == 0 => Ingested::Rejected {
            submission: submission.id,
            reason,
        },
        _ => Ingested::Processed {
            submission: submission.id,
            documents: kept,
        },
    })
}

/// Files a message of `size` bytes, more than `email.max_message_bytes`, of which only
/// `header` was read: recorded as rejected with its headers and the reason (a polled
/// message has no sender to answer, as SMTP's `552` does), or refused as [`ingest`] would.
pub async fn ingest_too_large(
    app: &App,
    arrival: Arrival<'_>,
    header: &[u8],
    size: u64,
) -> Result<Ingested, IngestError> {
    let account = filing_account(app).await?;
    let now = app.clock.now();
    let reason = format!(
        "the message has {size} bytes, more than email.max_message_bytes ({})",
        app.config.email.max_message_bytes
    );
    file_unread(app, account, now, arrival, header, &reason).await
}

/// Files a message that is not parsed, for `reason`: recorded as rejected with what its
/// header says (when that header is within bounds), or refused as [`ingest`] would.
async fn file_unread(
    app: &App,
    account: AccountId,
    now: DateTime<Utc>,
    arrival: Arrival<'_>,
    raw: &[u8],
    reason: &str,
) -> Result<Ingested, IngestError> {
    let Some(message) = parse_header(raw) else {
        return reject(app, blank(app, account, now, arrival), reason).await;
    };
    if let Some(refusal) = refusal(app, &message, arrival) {
        return Ok(refusal);
    }
    let submission = describe(app, account, now, arrival, &message);
    reject(app, submission, reason).await
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

async fn filing_account(app: &App) -> Result<AccountId, IngestError> {
    let name = &app.config.email.account;
    app.store
        .account_by_name(name)
        .await?
        .map(|account| account.id)
        .ok_or_else(|| IngestError::NoAccount(name.clone()))
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
fn refusal(app: &App, message: &Message<'_>, arrival: Arrival<'_>) -> Option<Ingested> {
    let allowed = &app.config.email.allowed_senders;
    addresses(message.from())
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(arrival.sender))
        .find(|a| !a.is_empty() && !sender_allowed(allowed, a))
        .map(|outsider| Ingested::Refused(format!("{outsider} is not allowed to send documents")))
}

/// A submission (`received`) of a parsed message.
fn describe(
    app: &App,
    account: AccountId,
    now: DateTime<Utc>,
    arrival: Arrival<'_>,
    message: &Message<'_>,
) -> EmailSubmission {
    let base = blank(app, account, now, arrival);
    let from = addresses(message.from());
    let body = message
        .body_text(0)
        .map(|text| clip(&text.replace("\r\n", "\n"), MAX_BODY_BYTES));
    EmailSubmission {
        subject: clip(message.subject().unwrap_or_default(), MAX_SUBJECT_BYTES),
        body,
        from: if from.is_empty() {
            base.from.clone()
        } else {
            from
        },
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
        ..base
    }
}

/// A submission for a message nothing could be read of.
fn blank(
    app: &App,
    account: AccountId,
    now: DateTime<Utc>,
    arrival: Arrival<'_>,
) -> EmailSubmission {
    EmailSubmission {
        id: app.ids.next_id(),
        account_id: account,
        subject: String::new(),
        body: None,
        from: if arrival.sender.is_empty() {
            Vec::new()
        } else {
            vec![clip(arrival.sender, MAX_ADDRESS_BYTES)]
        },
        to: Vec::new(),
        cc: Vec::new(),
        sent_at: None,
        message_id: None,
        in_reply_to: None,
        references: Vec::new(),
        content_type: None,
        status: RECEIVED.to_owned(),
        status_reason: None,
        source_key: arrival.source_key.map(str::to_owned),
        created_at: now,
        updated_at: now,
    }
}

/// Records `submission` as rejected for `reason`.
async fn reject(
    app: &App,
    mut submission: EmailSubmission,
    reason: &str,
) -> Result<Ingested, IngestError> {
    let reason = clip(reason, MAX_REASON_BYTES);
    REJECTED.clone_into(&mut submission.status);
    submission.status_reason = Some(reason.clone());
    if !app.store.insert_email_submission(&submission).await? {
        return Ok(Ingested::AlreadyRecorded);
    }
    Ok(Ingested::Rejected {
        submission: submission.id,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn an_attachment_is_edi_when_named_so_and_starting_as_an_interchange() {
        let x12 = b"ISA*00*          *00*          *ZZ*HAMSUD";
        let edifact = b"\xEF\xBB\xBFUNB+UNOA:2+SENDER";

        assert!(is_edi_attachment("status.edi", x12));
        assert!(is_edi_attachment("STATUS.X12", x12));
        assert!(is_edi_attachment("315.Txt", x12));
        assert!(is_edi_attachment("iftsta.EDIFACT", edifact));
        assert!(!is_edi_attachment("status.pdf", x12));
        assert!(!is_edi_attachment("status", x12));
        assert!(!is_edi_attachment(
            "notes.txt",
            b"Dear customer, ISA is late"
        ));
        assert!(!is_edi_attachment("empty.edi", b""));
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
}
