//! One received message, filed: read by the `email` crate ([`message::read`]: measured,
//! parsed, its senders checked, described, its attachments copied out), recorded as an
//! `email_submission`, its attachments stored as documents through the upload use case (so
//! they are sniffed, size-checked, deduplicated and read like any upload). An attachment
//! that is an EDI interchange (named `*.edi`, `*.x12`, `*.txt` or `*.edifact` and starting
//! as one: [`is_edi_attachment`]) is received as EDI instead
//! ([`crate::use_cases::edi::receive`], channel `email`).
//!
//! A [`Mailroom`] is the `email` crate's [`Intake`]: its SMTP receiver and IMAP poller file
//! messages here.

use axum::body::Bytes;
use chrono::{DateTime, Utc};
use tidemark_domain::AccountId;
use tidemark_email::message::{
    self, Attachment, Description, MAX_ATTACHMENTS, MAX_REASON_BYTES, Reading, Rules, clip, summary,
};
use tidemark_email::shape::Bounds;
use tidemark_store::{EmailSubmission, StoreError};

pub use tidemark_email::message::sender_allowed;
pub use tidemark_email::{Arrival, Ingested, Intake};

use crate::config::EmailConfig;
use crate::parts::core::Core;
use crate::parts::documents::storage::Storage;
use crate::use_cases::documents::process::link_numbers;
use crate::use_cases::documents::upload::{self, NewDocument};
use crate::use_cases::edi;

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

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The account mail is filed under does not exist.
    #[error("the account {0:?} (email.account) does not exist")]
    NoAccount(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What filing a message takes, owned so the receiver and the poller can keep it: the core,
/// the `[email]` settings, where documents go with the largest accepted
/// (`max_document_bytes`), and the EDI reader. `App::mailroom` builds one.
#[derive(Clone)]
pub struct Mailroom {
    pub core: Core,
    pub email: EmailConfig,
    pub storage: Storage,
    pub max_document_bytes: usize,
    /// Reads an attached EDI interchange (`[edi]`'s code tables).
    pub edi_reader: tidemark_edi::Reader,
}

impl Mailroom {
    fn edi(&self) -> edi::Edi<'_> {
        edi::Edi {
            core: &self.core,
            reader: self.edi_reader.clone(),
        }
    }
}

impl Intake for Mailroom {
    type Error = IngestError;

    async fn receive(&self, arrival: Arrival<'_>, raw: &[u8]) -> Result<Ingested, IngestError> {
        ingest(self, arrival, raw).await
    }

    async fn receive_too_large(
        &self,
        arrival: Arrival<'_>,
        header: &[u8],
        size: u64,
    ) -> Result<Ingested, IngestError> {
        ingest_too_large(self, arrival, header, size).await
    }

    fn unconfigured(error: &IngestError) -> bool {
        matches!(error, IngestError::NoAccount(_))
    }
}

/// What a message may hold and who may send it, from `[email]`.
fn rules(room: &Mailroom) -> Rules<'_> {
    Rules {
        bounds: Bounds {
            max_parts: room.email.max_message_parts,
            max_depth: room.email.max_message_depth,
        },
        allowed_senders: &room.email.allowed_senders,
    }
}

/// Files one raw message under the account `email.account`.
pub async fn ingest(
    room: &Mailroom,
    arrival: Arrival<'_>,
    raw: &[u8],
) -> Result<Ingested, IngestError> {
    let account = filing_account(room).await?;
    let now = room.core.clock.now();
    let reading = message::read(raw, arrival.sender, &rules(room));
    file(room, account, now, arrival, reading).await
}

/// Files a message of `size` bytes, more than `email.max_message_bytes`, of which only
/// `header` was read: recorded as rejected with its headers and the reason (a polled
/// message has no sender to answer, as SMTP's `552` does), or refused as [`ingest`] would.
pub async fn ingest_too_large(
    room: &Mailroom,
    arrival: Arrival<'_>,
    header: &[u8],
    size: u64,
) -> Result<Ingested, IngestError> {
    let account = filing_account(room).await?;
    let now = room.core.clock.now();
    let reason = format!(
        "the message has {size} bytes, more than email.max_message_bytes ({})",
        room.email.max_message_bytes
    );
    let reading = message::read_unparsed(header, arrival.sender, &rules(room), &reason);
    file(room, account, now, arrival, reading).await
}

/// Files what was read of a message: nothing when refused, a rejected submission, or a
/// submission with its attachments stored.
async fn file(
    room: &Mailroom,
    account: AccountId,
    now: DateTime<Utc>,
    arrival: Arrival<'_>,
    reading: Reading,
) -> Result<Ingested, IngestError> {
    match reading {
        Reading::Refused(reason) => Ok(Ingested::Refused(reason)),
        Reading::Rejected {
            description,
            reason,
        } => {
            reject(
                room,
                submission(room, account, now, arrival, description),
                &reason,
            )
            .await
        }
        Reading::Read {
            description,
            attachments,
            unread,
        } => {
            let submission = submission(room, account, now, arrival, description);
            store(room, account, submission, attachments, unread).await
        }
    }
}

/// Records `submission` and stores its `attachments` as documents or EDI interchanges;
/// `unread` more were not read.
async fn store(
    room: &Mailroom,
    account: AccountId,
    submission: EmailSubmission,
    attachments: Vec<Attachment>,
    unread: usize,
) -> Result<Ingested, IngestError> {
    // Numbers in the subject and body link every document of the message; each
    // document's own numbers are linked when it is read.
    let mentioned = format!(
        "{}\n{}",
        submission.subject,
        submission.body.as_deref().unwrap_or_default()
    );
    let (shipment_ids, container_ids, _) = link_numbers(&room.core, account, &mentioned).await?;
    if !room.core.store.insert_email_submission(&submission).await? {
        return Ok(Ingested::AlreadyRecorded);
    }
    let mut kept = 0;
    let mut interchanges = 0usize;
    let mut notes = Vec::new();
    for attachment in attachments {
        let Attachment {
            file_name,
            declared_content_type,
            bytes,
        } = attachment;
        let shown = clip(&file_name, MAX_NOTE_NAME_BYTES);
        if is_edi_attachment(&file_name, &bytes) {
            let inbound = edi::Inbound {
                channel: edi::Channel::Email,
                source_name: Some(clip(&file_name, MAX_NOTE_NAME_BYTES)),
                create_shipments: false,
            };
            match edi::receive(&room.edi(), account, &inbound, &bytes).await {
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
            declared_content_type,
            shipment_ids: shipment_ids.clone(),
            container_ids: container_ids.clone(),
            email_submission: Some(submission.id),
        };
        match upload::upload(
            &room.core,
            &room.storage,
            room.max_document_bytes,
            new,
            Bytes::from(bytes),
        )
        .await
        {
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
    room.core
        .store
        .finish_email_submission(
            account,
            submission.id,
            status,
            reason.as_deref(),
            room.core.clock.now(),
        )
        .await?;
    if let Err(error) = crate::use_cases::webhooks::deliver::queue_due(&room.core).await {
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

async fn filing_account(room: &Mailroom) -> Result<AccountId, IngestError> {
    let name = &room.email.account;
    room.core
        .store
        .account_by_name(name)
        .await?
        .map(|account| account.id)
        .ok_or_else(|| IngestError::NoAccount(name.clone()))
}

/// A submission (`received`) of what was read of a message.
fn submission(
    room: &Mailroom,
    account: AccountId,
    now: DateTime<Utc>,
    arrival: Arrival<'_>,
    description: Description,
) -> EmailSubmission {
    let Description {
        subject,
        body,
        from,
        to,
        cc,
        sent_at,
        message_id,
        in_reply_to,
        references,
        content_type,
    } = description;
    EmailSubmission {
        id: room.core.ids.next_id(),
        account_id: account,
        subject,
        body,
        from,
        to,
        cc,
        sent_at,
        message_id,
        in_reply_to,
        references,
        content_type,
        status: RECEIVED.to_owned(),
        status_reason: None,
        source_key: arrival.source_key.map(str::to_owned),
        created_at: now,
        updated_at: now,
    }
}

/// Records `submission` as rejected for `reason`.
async fn reject(
    room: &Mailroom,
    mut submission: EmailSubmission,
    reason: &str,
) -> Result<Ingested, IngestError> {
    let reason = clip(reason, MAX_REASON_BYTES);
    REJECTED.clone_into(&mut submission.status);
    submission.status_reason = Some(reason.clone());
    if !room.core.store.insert_email_submission(&submission).await? {
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
}
