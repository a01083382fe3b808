//! An email submission (a message documents arrived in) as a JSON:API resource, shared by
//! `/v2/email_submissions` and the documents that include the email they came in.

use serde_json::{Value, json};
use tidemark_store::{EmailSubmission, StoredDocument};
use uuid::Uuid;

use crate::resources::jsonapi::timestamp;

/// The email submission's own URL.
pub(crate) fn link(base: &str, id: Uuid) -> String {
    format!("{base}/v2/email_submissions/{id}")
}

/// An email submission as its JSON:API resource object, with the documents made of it.
pub(crate) fn resource(s: &EmailSubmission, documents: &[StoredDocument], base: &str) -> Value {
    let own: Vec<&StoredDocument> = documents
        .iter()
        .filter(|d| d.email_submission_id == Some(s.id))
        .collect();
    json!({
        "id": s.id,
        "type": "email_submission",
        "attributes": {
            "subject": s.subject,
            "body": s.body,
            "from": s.from,
            "to": s.to,
            "cc": s.cc,
            "sent_at": s.sent_at.map(timestamp::format),
            "message_id": s.message_id,
            "in_reply_to": s.in_reply_to,
            "references": s.references,
            "content_type": s.content_type,
            "documents_count": own.len(),
            "status": s.status,
            "status_reason": s.status_reason,
            "created_at": timestamp::format(s.created_at),
            "updated_at": timestamp::format(s.updated_at),
        },
        "relationships": {
            "account": {"data": {"id": s.account_id, "type": "account"}},
            // Emails arrive without an API key: no user.
            "user": {"data": null},
            "documents": {"data": own.iter()
                .map(|d| json!({"id": d.id, "type": "document"})).collect::<Vec<_>>()},
        },
        "links": {"self": link(base, s.id)},
    })
}
