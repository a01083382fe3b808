//! Rotating the pages of a PDF document by 90, 180 or 270 degrees, in the background: the
//! rotated file is written as a new object and becomes the document's bytes; the uploaded
//! file stays where it was (the store keeps its key as the original).
//!
//! The PDF is parsed and rewritten ([`tidemark_documents::rotate`]) in the extraction child
//! process ([`crate::parts::documents::isolate`]), under the same limits as a reading.
//!
//! Terminal49 rotates images only; Tidemark rotates PDFs (each page's `/Rotate`, so the
//! page content is untouched and the text reads the same), and answers `422` for others.

use chrono::{DateTime, Utc};
use tidemark_domain::{AccountId, NewJob};
use tidemark_store::{StoreError, StoredDocument};
use uuid::Uuid;

use crate::parts::core::Core;
use crate::use_cases::documents::Files;
use crate::use_cases::documents::process::ProcessError;
use crate::use_cases::queue::{self, JobKind};

/// The rotations a request may ask for, clockwise.
pub const DEGREES: [u16; 3] = [90, 180, 270];

/// Why a rotation cannot be queued.
#[derive(Debug, thiserror::Error)]
pub enum RotateError {
    #[error("degrees must be one of: 90, 180, 270")]
    Degrees,
    #[error("only PDF documents can be rotated; this one is {0}")]
    NotRotatable(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What the job did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Rotated {
        pages: usize,
    },
    /// The bytes are not a PDF this reader can rewrite; the document is left as it was.
    Unreadable(String),
    /// The document was deleted meanwhile.
    Gone,
}

/// Checks the request: a PDF, and one of [`DEGREES`].
pub fn check(document: &StoredDocument, degrees: i64) -> Result<u16, RotateError> {
    let degrees = u16::try_from(degrees)
        .ok()
        .filter(|d| DEGREES.contains(d))
        .ok_or(RotateError::Degrees)?;
    if document.content_type != "application/pdf" {
        return Err(RotateError::NotRotatable(document.content_type.clone()));
    }
    Ok(degrees)
}

/// Queues the rotation of a live document of the account (checked with [`check`]).
pub async fn request(
    core: &Core,
    account: AccountId,
    document: Uuid,
    degrees: i64,
) -> Result<(), RotateError> {
    let stored = core.store.document(account, document).await?;
    let degrees = check(&stored, degrees)?;
    // No deduplication: two rotations asked for are two rotations.
    core.store
        .enqueue_job(
            &job(core, account, document, degrees, core.clock.now()),
            core.clock.now(),
        )
        .await?;
    Ok(())
}

fn job(
    core: &Core,
    account: AccountId,
    document: Uuid,
    degrees: u16,
    run_at: DateTime<Utc>,
) -> NewJob {
    queue::new_job(
        core,
        JobKind::RotateDocument,
        serde_json::json!({"account_id": account, "document_id": document, "degrees": degrees}),
        None,
        run_at,
    )
}

/// Rotates one document's pages by `degrees` (the job).
pub async fn run(
    core: &Core,
    files: Files<'_>,
    account: AccountId,
    id: Uuid,
    degrees: u16,
) -> Result<Outcome, ProcessError> {
    let document = match core.store.document(account, id).await {
        Ok(document) => document,
        Err(StoreError::NotFound) => return Ok(Outcome::Gone),
        Err(error) => return Err(error.into()),
    };
    let bytes = files.storage.get(&document.storage_key).await?;
    // In the extraction child, under its limits: the worker never parses a document.
    let rotated = files.extractor.rotate(&bytes, degrees).await;
    drop(bytes);
    let (rotated, pages) = match rotated {
        Ok(rotated) => rotated,
        Err(error) => {
            let reason = error.to_string();
            tracing::warn!(document.id = %id, %reason, "cannot rotate a document");
            return Ok(Outcome::Unreadable(reason));
        }
    };
    let key = rotated_key(&document.storage_key, core.ids.next_id());
    let size = u64::try_from(rotated.len()).unwrap_or(u64::MAX);
    files.storage.put(&key, rotated.into()).await?;
    let replaced = core
        .store
        .replace_document_file(
            account,
            id,
            &document.storage_key,
            &key,
            size,
            core.clock.now(),
        )
        .await;
    match replaced {
        Ok(earlier) => {
            // An earlier rotation's bytes: nothing names them any more.
            if let Some(earlier) = earlier
                && let Err(error) = files.storage.delete(&earlier).await
            {
                tracing::warn!(error = ?error, key = %earlier, "cannot remove a replaced rotation");
            }
            Ok(Outcome::Rotated { pages })
        }
        Err(error) => {
            // Deleted, or rotated by another job meanwhile (retried from the new bytes).
            if let Err(cleanup) = files.storage.delete(&key).await {
                tracing::warn!(error = ?cleanup, %key, "cannot remove an unused rotation");
            }
            match error {
                StoreError::NotFound => Ok(Outcome::Gone),
                error => Err(error.into()),
            }
        }
    }
}

/// The key of a rotation of the bytes at `key`: beside them, named by a new id.
fn rotated_key(key: &str, version: Uuid) -> String {
    let base = key
        .split_once(".rotated-")
        .map_or_else(|| key.strip_suffix(".pdf").unwrap_or(key), |(base, _)| base);
    format!("{base}.rotated-{version}.pdf")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rotation_is_stored_beside_the_upload_and_replaces_an_earlier_rotation() {
        let id = Uuid::nil();
        assert_eq!(
            rotated_key("accounts/a/documents/d.pdf", id),
            format!("accounts/a/documents/d.rotated-{id}.pdf")
        );
        assert_eq!(
            rotated_key("accounts/a/documents/d.rotated-x.pdf", id),
            format!("accounts/a/documents/d.rotated-{id}.pdf")
        );
    }
}
