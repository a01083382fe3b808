//! One received message: parsed (MIME, with `mail-parser`), checked, recorded as an
//! `email_submission`, its attachments stored as documents through the upload use case
//! (so they are sniffed, size-checked, deduplicated and read like any upload).

use axum::body::Bytes;
use chrono::{DateTime, Utc};
use mail_parser::{Address, MessageParser, MimeHeaders};
use tidemark_domain::AccountId;
use tidemark_store::{EmailSubmission, StoreError};
use uuid::Uuid;

use crate::app::App;
use crate::use_cases::documents::process::link_numbers;
use crate::use_cases::documents::upload::{self, NewDocument};

/// The part of a text body kept on the submission.
const MAX_BODY_CHARS: usize = 20_000;
/// Attachments of one message made into documents at most; the rest are noted.
const MAX_ATTACHMENTS: usize = 20;
/// Addresses kept per header.
const MAX_ADDRESSES: usize = 50;

/// `status` of a submission whose attachments are being stored.
pub const RECEIVED: &str = "received";
/// `status` of a submission of which at least one attachment became a document.
pub const PROCESSED: &str = "processed";
/// `status` of a submission of which nothing was kept.
pub const REJECTED: &str = "rejected";

/// What happened to a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ingested {
    /// Recorded; `documents` of its attachments became documents.
    Processed { submission: Uuid, documents: usize },
    /// Recorded as rejected, with the reason.
    Rejected { submission: Uuid, reason: String },
    /// Not recorded: the sender is not allowed.
    Refused(String),
}

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The account mail is filed under does not exist.
    #[error("the account {0:?} (email.account) does not exist")]
    NoAccount(String),
    #[error(transparent)]
    Store(#[from] StoreError),
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
        .map(|a| {
            a.iter()
                .filter_map(|a| a.address())
                .map(|a| a.chars().take(320).collect())
                .take(MAX_ADDRESSES)
                .collect()
        })
        .unwrap_or_default()
}

/// Files one raw message under the account `email.account`.
pub async fn ingest(app: &App, envelope_sender: &str, raw: &[u8]) -> Result<Ingested, IngestError> {
    let settings = &app.config.email;
    let account = app
        .store
        .account_by_name(&settings.account)
        .await?
        .ok_or_else(|| IngestError::NoAccount(settings.account.clone()))?;
    let now = app.clock.now();
    let parsed = MessageParser::default()
        .parse(raw)
        .filter(|message| !message.headers().is_empty());
    let Some(message) = parsed else {
        let submission = blank(app, account.id, now, envelope_sender);
        return reject(
            app,
            submission,
            "malformed MIME: no message headers could be read",
        )
        .await;
    };
    let from = addresses(message.from());
    let envelope = envelope_sender.to_owned();
    if let Some(outsider) = from
        .iter()
        .chain(std::iter::once(&envelope))
        .find(|a| !a.is_empty() && !sender_allowed(&settings.allowed_senders, a))
    {
        return Ok(Ingested::Refused(format!(
            "{outsider} is not allowed to send documents"
        )));
    }
    let body = message.body_text(0).map(|text| {
        text.replace("\r\n", "\n")
            .chars()
            .take(MAX_BODY_CHARS)
            .collect::<String>()
    });
    let submission = EmailSubmission {
        id: app.ids.next_id(),
        account_id: account.id,
        subject: message
            .subject()
            .unwrap_or_default()
            .chars()
            .take(1_000)
            .collect(),
        body: body.clone(),
        from: if from.is_empty() {
            vec![envelope_sender.to_owned()]
        } else {
            from
        },
        to: addresses(message.to()),
        cc: addresses(message.cc()),
        sent_at: message
            .date()
            .and_then(|d| DateTime::<Utc>::from_timestamp(d.to_timestamp(), 0)),
        message_id: message
            .message_id()
            .map(|id| id.chars().take(998).collect()),
        in_reply_to: message.in_reply_to().as_text().map(str::to_owned),
        references: message
            .references()
            .as_text_list()
            .map(|list| {
                list.iter()
                    .take(MAX_ADDRESSES)
                    .map(ToString::to_string)
                    .collect()
            })
            .or_else(|| message.references().as_text().map(|r| vec![r.to_owned()]))
            .unwrap_or_default(),
        content_type: message.content_type().map(|t| match t.subtype() {
            Some(sub) => format!("{}/{sub}", t.ctype()),
            None => t.ctype().to_owned(),
        }),
        status: RECEIVED.to_owned(),
        status_reason: None,
        created_at: now,
        updated_at: now,
    };
    let attachments: Vec<(String, Option<String>, Vec<u8>)> = message
        .attachments()
        .filter(|part| !part.is_multipart() && !part.contents().is_empty())
        .enumerate()
        .map(|(index, part)| {
            let name = part
                .attachment_name()
                .map_or_else(|| format!("attachment-{}", index + 1), str::to_owned);
            let declared = part.content_type().map(|t| match t.subtype() {
                Some(sub) => format!("{}/{sub}", t.ctype()),
                None => t.ctype().to_owned(),
            });
            (name, declared, part.contents().to_vec())
        })
        .collect();
    if attachments.is_empty() {
        return reject(app, submission, "the message has no attachments").await;
    }
    // Numbers in the subject and body link every document of the message; each
    // document's own numbers are linked when it is read.
    let mentioned = format!("{}\n{}", submission.subject, body.unwrap_or_default());
    let (shipment_ids, container_ids, _) = link_numbers(app, account.id, &mentioned).await?;
    app.store.insert_email_submission(&submission).await?;
    let mut kept = 0;
    let mut notes = Vec::new();
    for (index, (file_name, declared, bytes)) in attachments.into_iter().enumerate() {
        if index >= MAX_ATTACHMENTS {
            notes.push(format!(
                "{file_name}: more than {MAX_ATTACHMENTS} attachments"
            ));
            continue;
        }
        let new = NewDocument {
            account: account.id,
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
                notes.push(format!("{file_name}: not stored ({error})"));
            }
            Err(error) => notes.push(format!("{file_name}: {error}")),
        }
    }
    let (status, reason) = if kept == 0 {
        (
            REJECTED,
            Some(format!(
                "no attachment became a document: {}",
                notes.join("; ")
            )),
        )
    } else if notes.is_empty() {
        (PROCESSED, None)
    } else {
        (PROCESSED, Some(notes.join("; ")))
    };
    app.store
        .finish_email_submission(
            account.id,
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
        Some(reason) if kept == 0 => Ingested::Rejected {
            submission: submission.id,
            reason,
        },
        _ => Ingested::Processed {
            submission: submission.id,
            documents: kept,
        },
    })
}

/// A submission for a message nothing could be read of.
fn blank(app: &App, account: AccountId, now: DateTime<Utc>, sender: &str) -> EmailSubmission {
    EmailSubmission {
        id: app.ids.next_id(),
        account_id: account,
        subject: String::new(),
        body: None,
        from: if sender.is_empty() {
            Vec::new()
        } else {
            vec![sender.to_owned()]
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
    REJECTED.clone_into(&mut submission.status);
    submission.status_reason = Some(reason.to_owned());
    app.store.insert_email_submission(&submission).await?;
    Ok(Ingested::Rejected {
        submission: submission.id,
        reason: reason.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
