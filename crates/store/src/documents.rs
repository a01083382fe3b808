//! Shipment documents: their metadata, links and search (the bytes live in object storage).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tidemark_domain::{AccountId, ApiKeyId, ContainerId, DomainEvent, NewJob, ShipmentId};
use uuid::Uuid;

use crate::{PageRequest, Paged, StoreResult};

/// How many consecutive upload positions (`seq`) one row of the counted index over upload
/// order covers. A far page of the unfiltered list skips less than this many index entries.
pub const DOCUMENT_BUCKET_SIZE: i64 = 1024;

/// A document's metadata as stored. Its bytes are in object storage under `storage_key`.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredDocument {
    pub id: Uuid,
    pub account_id: AccountId,
    /// The API key that uploaded it (Tidemark's users are its keys).
    pub uploaded_by: Option<ApiKeyId>,
    /// `upload` (multipart) or `api` (direct upload).
    pub source: String,
    pub name: String,
    /// Sanitized client file name.
    pub file_name: String,
    /// Sniffed from the bytes.
    pub content_type: String,
    pub size_bytes: u64,
    /// Hex SHA-256 of the bytes: the same content twice in one account is a duplicate.
    pub sha256: String,
    /// Object key; built from ids only.
    pub storage_key: String,
    /// Set by classification; `None` until it ran.
    pub document_type: Option<String>,
    pub document_type_manual: Option<String>,
    pub classification_notes: Option<String>,
    /// The extraction result (`last_document_representation`), once extraction succeeded.
    pub representation: Option<Representation>,
    pub shipment_ids: Vec<ShipmentId>,
    pub container_ids: Vec<ContainerId>,
    /// The email it came attached to (`source` `email`).
    pub email_submission_id: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// An email received with documents attached (Terminal49's `email_submission`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmailSubmission {
    pub id: Uuid,
    pub account_id: AccountId,
    pub subject: String,
    /// The text body, cut to a bound.
    pub body: Option<String>,
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
    /// `received` while its attachments are stored, then `processed` (at least one became
    /// a document) or `rejected`.
    pub status: String,
    /// Why it was rejected, or what happened to attachments that were not kept.
    pub status_reason: Option<String>,
    /// Where the message was taken from when it could be taken twice (a message in a polled
    /// IMAP mailbox: an IMAP URL with the mailbox's UIDVALIDITY and the message's UID);
    /// unique, so a message taken again after a crash is not recorded twice. `None` for
    /// mail delivered over SMTP.
    pub source_key: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// How far a polled mailbox has been read: the mailbox's `UIDVALIDITY` (RFC 3501 §2.3.1.1:
/// UIDs are only comparable under one) and the highest UID taken under it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MailboxCursor {
    pub uid_validity: u32,
    pub last_uid: u32,
}

/// What extraction made of a document (Terminal49's `document_representation`).
#[derive(Clone, Debug, PartialEq)]
pub struct Representation {
    pub id: Uuid,
    pub schema_version: String,
    pub payload: serde_json::Value,
    pub created_at: DateTime<Utc>,
}

/// The outcome of the classification job, recorded at once with its domain events.
#[derive(Clone, Debug, PartialEq)]
pub struct DocumentClassification {
    pub document_type: String,
    pub classification_notes: String,
    pub representation: Option<Representation>,
    /// Links to add (existing links stay).
    pub shipment_ids: Vec<ShipmentId>,
    pub container_ids: Vec<ContainerId>,
    pub at: DateTime<Utc>,
}

/// A direct upload: a slot for bytes that a later `POST /documents` turns into a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectUpload {
    pub id: Uuid,
    pub account_id: AccountId,
    pub created_by: Option<ApiKeyId>,
    pub file_name: String,
    pub declared_content_type: String,
    pub byte_size: u64,
    /// Base64 MD5 of the bytes, as the client declared it.
    pub checksum: String,
    pub storage_key: String,
    /// Set once the bytes arrived and matched the checksum.
    pub uploaded_at: Option<DateTime<Utc>>,
    /// Set once a document was made of it: each upload makes one document.
    pub document_id: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// The sortable fields of `GET /documents`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DocumentSortField {
    /// Upload order. `created_at` is the clock at upload, so the two agree unless the
    /// clock stepped back; upload order is unique, so pages never tie.
    #[default]
    CreatedAt,
    DocumentType,
    AddedBy,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DocumentSort {
    pub field: DocumentSortField,
    pub descending: bool,
}

impl Default for DocumentSort {
    /// Newest first.
    fn default() -> Self {
        Self {
            field: DocumentSortField::CreatedAt,
            descending: true,
        }
    }
}

/// Which documents to list. Every set field must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocumentFilter {
    /// Full-text terms over file name and name: lowercase letters and digits only, all must
    /// match, the last one as a prefix.
    pub filename_terms: Vec<String>,
    /// Upper case letters and digits: the BL number, a ref number or a container number of a
    /// linked shipment or container.
    pub reference: Option<String>,
    /// Any of these types (the manual type when set, else the classified one).
    pub document_types: Vec<String>,
}

/// Shipments and containers of an account found by their numbers, to link documents to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkTargets {
    /// Shipments with their normalized bill of lading number.
    pub shipments: Vec<(ShipmentId, String)>,
    /// Containers with their shipment and number.
    pub containers: Vec<(ContainerId, ShipmentId, String)>,
}

/// Shipment documents: their metadata, links and search (the bytes live in object storage).
#[async_trait]
pub trait DocumentStore: Send + Sync {
    /// Stores a new document with its links, and queues `job` (the job that reads it) in
    /// the same transaction, so a stored document always has its job: a crash cannot keep
    /// one without the other. The job is queued as of the document's `created_at`.
    ///
    /// With `from_upload`, that direct upload is marked as used in the same transaction; a
    /// used one is `Conflict { constraint: "direct_upload_used" }`, and one discarded as
    /// expired ([`discard_expired_direct_uploads`](Self::discard_expired_direct_uploads))
    /// or gone is `Conflict { constraint: "direct_upload_expired" }`. The same `sha256` in
    /// the account (not deleted) is `Conflict { constraint: "documents_content" }`; a link
    /// to another account's shipment or container is `NotFound`. On any error nothing is
    /// written, the job included.
    async fn insert_document_with_job(
        &self,
        document: &StoredDocument,
        from_upload: Option<Uuid>,
        job: Option<&NewJob>,
    ) -> StoreResult<()>;
    /// [`insert_document_with_job`](Self::insert_document_with_job) with no job: for
    /// seeding and tests; uploads queue their classification.
    async fn insert_document(
        &self,
        document: &StoredDocument,
        from_upload: Option<Uuid>,
    ) -> StoreResult<()> {
        self.insert_document_with_job(document, from_upload, None)
            .await
    }
    /// The live document of the account with this content, if any.
    async fn document_with_content(
        &self,
        account: AccountId,
        sha256: &str,
    ) -> StoreResult<Option<Uuid>>;
    /// A live (not deleted) document of the account, with its links.
    async fn document(&self, account: AccountId, id: Uuid) -> StoreResult<StoredDocument>;
    async fn list_documents(
        &self,
        account: AccountId,
        filter: &DocumentFilter,
        sort: DocumentSort,
        page: PageRequest,
    ) -> StoreResult<Paged<StoredDocument>>;
    /// Saves name, manual type and links (replacing them) and `updated_at`.
    async fn update_document(&self, document: &StoredDocument) -> StoreResult<()>;
    /// Soft-deletes: the document disappears from reads; its content may be uploaded again.
    async fn delete_document(
        &self,
        account: AccountId,
        id: Uuid,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// Records the classification job's result, its new links and its domain events (with
    /// their webhook notifications) in one transaction.
    async fn record_document_classification(
        &self,
        account: AccountId,
        id: Uuid,
        classification: &DocumentClassification,
        events: &[DomainEvent],
    ) -> StoreResult<()>;
    /// Points a document at new bytes (a rotation of it): `storage_key` becomes `new_key`,
    /// of `size_bytes`, if it still is `expected_key`; the first key the document had is
    /// kept as its original. Returns the replaced key when it was not the original (an
    /// earlier rotation, whose bytes may then be deleted). A document whose key changed
    /// meanwhile is `Conflict { constraint: "documents_storage_key" }`.
    async fn replace_document_file(
        &self,
        account: AccountId,
        id: Uuid,
        expected_key: &str,
        new_key: &str,
        size_bytes: u64,
        at: DateTime<Utc>,
    ) -> StoreResult<Option<String>>;
    /// The account's shipments whose normalized BL number is one of `bl_numbers`, and its
    /// containers whose number is one of `container_numbers`.
    async fn link_targets(
        &self,
        account: AccountId,
        bl_numbers: &[String],
        container_numbers: &[String],
    ) -> StoreResult<LinkTargets>;
    /// Records a received email; `false` (nothing written) when one with the same
    /// `source_key` is recorded already.
    async fn insert_email_submission(&self, submission: &EmailSubmission) -> StoreResult<bool>;
    /// Sets an email's final `status` and `status_reason`.
    async fn finish_email_submission(
        &self,
        account: AccountId,
        id: Uuid,
        status: &str,
        reason: Option<&str>,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    async fn email_submission(&self, account: AccountId, id: Uuid) -> StoreResult<EmailSubmission>;
    /// The account's emails, newest first.
    async fn list_email_submissions(
        &self,
        account: AccountId,
        page: PageRequest,
    ) -> StoreResult<Paged<EmailSubmission>>;
    /// How far the mailbox named `mailbox` has been read, if it was read before.
    async fn mailbox_cursor(&self, mailbox: &str) -> StoreResult<Option<MailboxCursor>>;
    /// Records that `mailbox` was read up to `cursor`. Under the same `uid_validity` the
    /// cursor only moves forward (a slower process cannot move it back); a new
    /// `uid_validity` replaces it.
    async fn save_mailbox_cursor(
        &self,
        mailbox: &str,
        cursor: MailboxCursor,
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// The live documents (with their links) made from these emails, oldest first.
    async fn documents_of_email_submissions(
        &self,
        account: AccountId,
        submissions: &[Uuid],
    ) -> StoreResult<Vec<StoredDocument>>;
    async fn create_direct_upload(&self, upload: &DirectUpload) -> StoreResult<()>;
    /// A direct upload by id alone: the signed id that names it is the authority.
    async fn direct_upload(&self, id: Uuid) -> StoreResult<DirectUpload>;
    /// Marks the bytes as arrived.
    async fn mark_direct_upload_uploaded(&self, id: Uuid, at: DateTime<Utc>) -> StoreResult<()>;
    /// Discards up to `limit` direct uploads that made no document and expired before
    /// `expired_before`, oldest first, and returns them, so their bytes can be removed.
    /// From then on none of them can become a document (the two are serialized by the
    /// database: an upload either made its document first, or is discarded first).
    /// Uploads discarded earlier and not yet deleted are returned again, so a removal cut
    /// short by a crash is finished by the next sweep.
    async fn discard_expired_direct_uploads(
        &self,
        expired_before: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<DirectUpload>>;
    /// Deletes the row of a discarded direct upload (once its bytes are gone). An upload
    /// that was not discarded is left alone: `NotFound`.
    async fn delete_direct_upload(&self, id: Uuid) -> StoreResult<()>;
}
