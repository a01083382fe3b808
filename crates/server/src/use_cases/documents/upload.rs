//! Storing an upload: checks, bytes to object storage, then metadata and the
//! classification job to the database in one transaction. Either both the bytes and the
//! row are kept or neither is.

use axum::body::Bytes;
use chrono::{DateTime, Duration, Utc};
use sha2::{Digest, Sha256};
use tidemark_domain::{AccountId, ApiKeyId, ContainerId, ShipmentId};
use tidemark_store::{DirectUpload, StoreError, StoredDocument};
use uuid::Uuid;

use crate::parts::core::Core;
use crate::parts::documents::storage::{Storage, StorageError};
use crate::use_cases::documents::filename::{sanitize, storage_key};
use crate::use_cases::documents::process;
use crate::use_cases::documents::sniff::{SniffError, sniff};

/// `source` of a document sent as `multipart/form-data`.
pub const SOURCE_UPLOAD: &str = "upload";
/// `source` of a document made from a direct upload.
pub const SOURCE_API: &str = "api";
/// `source` of a document that came attached to an email.
pub const SOURCE_EMAIL: &str = "email";

/// What a client sent, besides the bytes.
#[derive(Clone, Debug)]
pub struct NewDocument {
    pub account: AccountId,
    pub uploaded_by: Option<ApiKeyId>,
    /// Display name; the file name when absent.
    pub name: Option<String>,
    /// The client's file name (sanitized here).
    pub file_name: String,
    /// The client's `Content-Type` for the file, if any: it can only get a file refused.
    pub declared_content_type: Option<String>,
    pub shipment_ids: Vec<ShipmentId>,
    pub container_ids: Vec<ContainerId>,
    /// The email it came attached to.
    pub email_submission: Option<Uuid>,
}

#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("the file has more than {limit} bytes")]
    TooLarge { limit: usize },
    #[error(transparent)]
    Refused(#[from] SniffError),
    #[error("the same file was already uploaded as document {0}")]
    Duplicate(Uuid),
    /// A linked shipment or container is not the account's.
    #[error("a linked shipment or container does not exist")]
    UnknownLink,
    /// The direct upload's bytes have not arrived yet.
    #[error("the direct upload has no file yet")]
    NotUploaded,
    /// The direct upload already made a document.
    #[error("the direct upload was already used")]
    UploadUsed,
    /// The direct upload was not attached in time, and is (or is about to be) removed.
    #[error("the direct upload has expired")]
    UploadExpired,
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for UploadError {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}

/// Hex SHA-256 of the bytes: what makes two uploads the same content.
pub fn content_hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Stores a multipart upload: checks size and type, refuses duplicates, writes the bytes,
/// then the row, and queues classification. `max_document_bytes` is the largest accepted.
pub async fn upload(
    core: &Core,
    storage: &Storage,
    max_document_bytes: usize,
    new: NewDocument,
    bytes: Bytes,
) -> Result<StoredDocument, UploadError> {
    if bytes.len() > max_document_bytes {
        return Err(UploadError::TooLarge {
            limit: max_document_bytes,
        });
    }
    let sniffed = sniff(
        &bytes,
        new.declared_content_type.as_deref(),
        Some(&new.file_name),
    )?;
    let sha256 = content_hash(&bytes);
    if let Some(existing) = core
        .store
        .document_with_content(new.account, &sha256)
        .await?
    {
        return Err(UploadError::Duplicate(existing));
    }
    let id = core.ids.next_id();
    let key = storage_key(new.account.0, id, sniffed.extension);
    let size = bytes.len();
    storage.put(&key, bytes).await?;
    let source = if new.email_submission.is_some() {
        SOURCE_EMAIL
    } else {
        SOURCE_UPLOAD
    };
    let document = document_of(
        core,
        &new,
        id,
        source,
        sniffed.content_type,
        size,
        sha256,
        key,
    );
    insert(core, storage, &document, None, true).await?;
    Ok(document)
}

/// How long after its upload URL expires a direct upload may still be attached. Past
/// that its `signed_id` has expired, and housekeeping removes its bytes and its row.
pub const ATTACH_GRACE: Duration = Duration::hours(24);
/// Direct uploads discarded per database round trip by housekeeping.
const DISCARD_BATCH: u32 = 500;

/// Until when a direct upload's `signed_id` can make a document.
pub fn signed_id_expires_at(upload: &DirectUpload) -> DateTime<Utc> {
    upload.expires_at + ATTACH_GRACE
}

/// Makes a document of a direct upload whose bytes arrived.
pub async fn from_direct_upload(
    core: &Core,
    storage: &Storage,
    new: NewDocument,
    upload: &DirectUpload,
) -> Result<StoredDocument, UploadError> {
    if upload.document_id.is_some() {
        return Err(UploadError::UploadUsed);
    }
    if core.clock.now() > signed_id_expires_at(upload) {
        return Err(UploadError::UploadExpired);
    }
    if upload.uploaded_at.is_none() {
        return Err(UploadError::NotUploaded);
    }
    let bytes = match storage.get(&upload.storage_key).await {
        Ok(bytes) => bytes,
        Err(StorageError::NotFound) => return Err(UploadError::NotUploaded),
        Err(error) => return Err(error.into()),
    };
    let sniffed = sniff(
        &bytes,
        Some(upload.declared_content_type.as_str()),
        Some(&upload.file_name),
    )?;
    let sha256 = content_hash(&bytes);
    if let Some(existing) = core
        .store
        .document_with_content(new.account, &sha256)
        .await?
    {
        return Err(UploadError::Duplicate(existing));
    }
    // The upload's id becomes the document's, and its bytes stay where they are.
    let document = document_of(
        core,
        &new,
        upload.id,
        SOURCE_API,
        sniffed.content_type,
        bytes.len(),
        sha256,
        upload.storage_key.clone(),
    );
    insert(core, storage, &document, Some(upload.id), false).await?;
    Ok(document)
}

#[expect(
    clippy::too_many_arguments,
    reason = "one constructor for both ways in"
)]
fn document_of(
    core: &Core,
    new: &NewDocument,
    id: Uuid,
    source: &str,
    content_type: &str,
    size: usize,
    sha256: String,
    storage_key: String,
) -> StoredDocument {
    let file_name = sanitize(&new.file_name);
    let name = new
        .name
        .as_deref()
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map_or_else(|| file_name.clone(), str::to_owned);
    let now = core.clock.now();
    StoredDocument {
        id,
        account_id: new.account,
        uploaded_by: new.uploaded_by,
        source: source.to_owned(),
        name,
        file_name,
        content_type: content_type.to_owned(),
        size_bytes: u64::try_from(size).unwrap_or(u64::MAX),
        sha256,
        storage_key,
        document_type: None,
        document_type_manual: None,
        classification_notes: None,
        representation: None,
        shipment_ids: dedup(&new.shipment_ids),
        container_ids: dedup(&new.container_ids),
        email_submission_id: new.email_submission,
        created_at: now,
        updated_at: now,
    }
}

fn dedup<T: Copy + Ord>(items: &[T]) -> Vec<T> {
    let mut items = items.to_vec();
    items.sort_unstable();
    items.dedup();
    items
}

/// Writes the row with its classification job (one transaction: a stored document is
/// always classified, even after a crash); when that fails, removes the bytes written for
/// it (`owns_bytes`), so a failed upload leaves nothing behind.
async fn insert(
    core: &Core,
    storage: &Storage,
    document: &StoredDocument,
    from_upload: Option<Uuid>,
    owns_bytes: bool,
) -> Result<(), UploadError> {
    let job = process::job(core, document.account_id, document.id, document.created_at);
    if let Err(error) = core
        .store
        .insert_document_with_job(document, from_upload, Some(&job))
        .await
    {
        if owns_bytes && let Err(cleanup) = storage.delete(&document.storage_key).await {
            tracing::warn!(error = ?cleanup, key = %document.storage_key, "cannot remove the bytes of a failed upload");
        }
        return Err(match error {
            StoreError::Conflict {
                constraint: "direct_upload_used",
            } => UploadError::UploadUsed,
            StoreError::Conflict {
                constraint: "direct_upload_expired",
            } => UploadError::UploadExpired,
            StoreError::Conflict { .. } => {
                match core
                    .store
                    .document_with_content(document.account_id, &document.sha256)
                    .await?
                {
                    Some(existing) => UploadError::Duplicate(existing),
                    None => UploadError::UploadUsed,
                }
            }
            StoreError::NotFound => UploadError::UnknownLink,
            error => UploadError::Store(error),
        });
    }
    Ok(())
}

/// Housekeeping: removes the direct uploads whose `signed_id` expired before any document
/// was made of them, bytes first, then the row. Each is discarded in the database before
/// its bytes go, so it can no longer become a document; one whose removal is cut short
/// (crash, storage error) is found again by the next sweep. Returns how many were removed.
pub async fn remove_expired_direct_uploads(
    core: &Core,
    storage: &Storage,
) -> Result<u64, StoreError> {
    let now = core.clock.now();
    let mut removed = 0;
    loop {
        let batch = core
            .store
            .discard_expired_direct_uploads(now - ATTACH_GRACE, now, DISCARD_BATCH)
            .await?;
        let more = batch.len() == usize::try_from(DISCARD_BATCH).unwrap_or(usize::MAX);
        let mut failed = false;
        for upload in batch {
            if let Err(error) = storage.delete(&upload.storage_key).await {
                // Left discarded: the next sweep tries again.
                tracing::warn!(error = ?error, key = %upload.storage_key, "cannot remove an expired direct upload's bytes");
                failed = true;
                continue;
            }
            match core.store.delete_direct_upload(upload.id).await {
                // Another worker's sweep removed it meanwhile.
                Ok(()) | Err(StoreError::NotFound) => removed += 1,
                Err(error) => return Err(error),
            }
        }
        // A failure stops the sweep, so uploads that keep failing cannot make it loop.
        if !more || failed {
            return Ok(removed);
        }
    }
}
