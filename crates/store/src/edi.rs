//! EDI interchanges as received (X12 315/322, EDIFACT IFTSTA), and what each transaction in
//! them said, kept so a tracking request created later still finds the statuses that came
//! before it.
//!
//! An interchange is stored raw, with the job that reads it, before anything is read
//! ([`EdiStore::insert_edi_message`]): a crash while reading loses nothing. Reading it
//! finishes it once ([`EdiStore::finish_edi_message`]), where an interchange whose sender
//! and control number were seen before becomes a `duplicate` and changes nothing.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tidemark_domain::{AccountId, NewJob, TrackingRequest};
use uuid::Uuid;

use crate::{PageRequest, Paged, StoreResult};

/// One interchange as received, and what reading it found.
#[derive(Clone, Debug, PartialEq)]
pub struct EdiMessage {
    pub id: Uuid,
    pub account_id: AccountId,
    /// How it came: `api`, `folder`, `sftp` or `email`.
    pub channel: String,
    /// The file, remote path or email it came in, when it had a name.
    pub source_name: Option<String>,
    /// `x12` or `edifact`, once read.
    pub syntax: Option<String>,
    /// The interchange sender and receiver (ISA06/ISA08, UNB S002/S003), once read.
    pub sender: Option<String>,
    pub receiver: Option<String>,
    /// ISA13 or UNB 0020.
    pub control_number: Option<String>,
    /// `received` until read; then `processed`, `partially_processed` (some transactions
    /// rejected), `rejected` or `duplicate`.
    pub status: String,
    pub transactions: u32,
    pub rejected_transactions: u32,
    /// Statuses read from the accepted transactions, and how many of them became new events
    /// (a status an earlier interchange already gave is the event it gave).
    pub statuses: u32,
    pub events: u32,
    /// Statuses whose code no table knows: kept raw, counted.
    pub drift: u32,
    /// Accepted transactions that name no tracked number yet.
    pub unmatched: u32,
    /// What went wrong, each `{transaction, segment, position, reason}` (JSON array).
    pub errors: serde_json::Value,
    /// For a `duplicate`, the interchange it repeats.
    pub duplicate_of: Option<Uuid>,
    /// Whether transactions naming no tracked number start tracking requests of their own.
    pub create_shipments: bool,
    pub size_bytes: u64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl EdiMessage {
    /// An interchange as it arrives, before anything in it is read: `received`, every count
    /// zero, nothing known of its envelope.
    pub fn received(
        id: Uuid,
        account_id: AccountId,
        channel: &str,
        source_name: Option<String>,
        create_shipments: bool,
        size_bytes: u64,
        at: DateTime<Utc>,
    ) -> Self {
        Self {
            id,
            account_id,
            channel: channel.to_owned(),
            source_name,
            syntax: None,
            sender: None,
            receiver: None,
            control_number: None,
            status: "received".to_owned(),
            transactions: 0,
            rejected_transactions: 0,
            statuses: 0,
            events: 0,
            drift: 0,
            unmatched: 0,
            errors: serde_json::json!([]),
            duplicate_of: None,
            create_shipments,
            size_bytes,
            created_at: at,
            updated_at: at,
        }
    }
}

/// One accepted transaction of an interchange: the numbers it names and what it said, as
/// the events the tracking pipeline reads.
#[derive(Clone, Debug, PartialEq)]
pub struct EdiTransactionRecord {
    pub message_id: Uuid,
    pub account_id: AccountId,
    /// Its place in the interchange, from 0.
    pub position: u32,
    /// `315`, `322` or `IFTSTA`.
    pub set_id: String,
    pub control_number: String,
    /// Every bill of lading, booking and container number it names, upper-cased: how it is
    /// found again.
    pub numbers: Vec<String>,
    /// The line it speaks for (N9*SCA, NAD+CA, or the sender when that is a SCAC).
    pub scac: Option<String>,
    /// The carrier events its statuses stand for (JSON array).
    pub events: serde_json::Value,
    /// Terminal facts (availability, free time, holds, fees) its statuses carry (JSON array).
    pub facts: serde_json::Value,
    /// Its raw segments, one per line.
    pub segments: String,
    pub matched: bool,
    pub created_at: DateTime<Utc>,
}

/// What finishing an interchange did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdiFinish {
    Finished,
    /// The same sender's interchange with this control number was finished before: this
    /// one is marked `duplicate` of it and nothing else is written.
    Duplicate(Uuid),
    /// It was no longer `received` (finished by another run): nothing written.
    AlreadyFinished,
}

/// Which interchanges to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdiMessageFilter {
    /// A status, or `unmatched` for interchanges with transactions that name nothing tracked.
    pub status: Option<String>,
}

#[async_trait]
pub trait EdiStore: Send + Sync {
    /// Stores an interchange as received, raw, with the job that will read it, in one
    /// transaction.
    async fn insert_edi_message(
        &self,
        message: &EdiMessage,
        raw: &[u8],
        job: &NewJob,
    ) -> StoreResult<()>;

    /// Records what reading a `received` interchange found, with its accepted
    /// transactions and the `jobs` that apply them, in one transaction. With an
    /// `interchange_key` (sender and control number) already finished for the account, the
    /// interchange becomes a `duplicate` and `jobs` are not queued (nor when it was
    /// finished already).
    ///
    /// `event_ids` are the EDI event ids of the events `message.events` counts, one per
    /// event. Of those, the ones an earlier finished interchange of the account recorded are
    /// taken off `events` (a status resent is no new event), and all are recorded for the
    /// interchanges after this one, in the same transaction. A `duplicate` records none.
    async fn finish_edi_message(
        &self,
        message: &EdiMessage,
        interchange_key: Option<&str>,
        transactions: &[EdiTransactionRecord],
        event_ids: &[String],
        jobs: &[NewJob],
    ) -> StoreResult<EdiFinish>;

    async fn edi_message(&self, account: AccountId, id: Uuid) -> StoreResult<EdiMessage>;

    /// The interchange's bytes as received.
    async fn edi_message_raw(&self, account: AccountId, id: Uuid) -> StoreResult<Vec<u8>>;

    /// The account's interchanges, newest first.
    async fn list_edi_messages(
        &self,
        account: AccountId,
        filter: &EdiMessageFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<EdiMessage>>;

    /// The account's accepted transactions naming any of `numbers` (upper-cased), oldest
    /// first, at most `limit`.
    async fn edi_transactions_naming(
        &self,
        account: AccountId,
        numbers: &[String],
        limit: u32,
    ) -> StoreResult<Vec<EdiTransactionRecord>>;

    /// The transactions of one interchange, in order.
    async fn edi_transactions_of(
        &self,
        account: AccountId,
        message: Uuid,
    ) -> StoreResult<Vec<EdiTransactionRecord>>;

    /// Marks the account's transactions naming any of `numbers` as matched, and lowers
    /// their interchanges' `unmatched` counts by as many as it flipped.
    async fn mark_edi_matched(
        &self,
        account: AccountId,
        numbers: &[String],
        at: DateTime<Utc>,
    ) -> StoreResult<()>;

    /// The account's `pending`, `awaiting_manifest` or `created` requests whose number is
    /// one of `numbers` (upper-cased), or whose shipment holds a container numbered so, each
    /// with the number that found it (a request found by two numbers is listed twice).
    async fn tracking_requests_naming(
        &self,
        account: AccountId,
        numbers: &[String],
    ) -> StoreResult<Vec<(String, TrackingRequest)>>;
}
