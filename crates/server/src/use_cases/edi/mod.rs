//! EDI in: an interchange (X12 315/322, EDIFACT IFTSTA) from any channel (the API, a
//! watched folder, SFTP, email) becomes the same events, fields and webhooks as a carrier's
//! API answer.
//!
//! 1. [`receive`] stores the bytes as received, with a job to read them, in one transaction;
//!    a crash after that loses nothing.
//! 2. [`process`] reads them (`tidemark_edi`, with the senders' own code tables of
//!    `[[edi.code_tables]]`), once: an interchange whose sender and control
//!    number were seen is a `duplicate` and changes nothing; a broken transaction is listed
//!    with its position and reason while the others are kept. Each accepted transaction is
//!    stored with the numbers it names and the carrier events its statuses stand for.
//! 3. Each tracking request a transaction names gets an `apply_edi` job
//!    ([`crate::use_cases::tracking::engine::apply_edi`]): the stored events for its
//!    numbers go through the report pipeline like a poll's answer. A transaction naming
//!    nothing tracked is `unmatched` until a request for one of its numbers arrives (that
//!    request's first poll reads it), or starts one itself where the channel says
//!    `create_shipments`. A status sent again in a later interchange is read as the event
//!    it already was ([`events_of`]), and is not counted among the message's new events.

use std::collections::{BTreeMap, BTreeSet};

use tidemark_domain::{AccountId, TrackingRequestId};
use tidemark_edi::{Interchange, Reader, StatusReport, Syntax, Transaction, TransactionError};
use tidemark_store::{EdiFinish, EdiMessage, EdiTransactionRecord, StoreError};
use uuid::Uuid;

use crate::parts::core::Core;
use crate::use_cases::queue::{self, JobKind};

pub mod folder;
pub mod sftp;
pub mod waiting;

pub use waiting::{apply_waiting, number_key};

/// Requests one `apply_edi` job applies at most: those an interchange matched, in turns of
/// this many.
pub const APPLY_EDI_BATCH: usize = 256;

/// The largest interchange accepted, as `tidemark_edi::Limits` reads it.
pub const MAX_BYTES: usize = 16 * 1024 * 1024;

/// How an interchange arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    Api,
    Folder,
    Sftp,
    Email,
}

impl Channel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Api => "api",
            Self::Folder => "folder",
            Self::Sftp => "sftp",
            Self::Email => "email",
        }
    }
}

/// Where an interchange came from and what its channel allows.
#[derive(Clone, Debug)]
pub struct Inbound {
    pub channel: Channel,
    /// The file, remote path or email it came in.
    pub source_name: Option<String>,
    /// Transactions naming nothing tracked start tracking requests of their own.
    pub create_shipments: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ReceiveError {
    #[error("the interchange is empty")]
    Empty,
    #[error("the interchange is {bytes} bytes, over the limit of {limit}")]
    TooLarge { bytes: usize, limit: usize },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Whether bytes look like an interchange at all, after any byte-order mark and white
/// space: an envelope (`ISA` for X12, `UNA` or `UNB` for EDIFACT), or what the reader also
/// reads without one, as guides and libraries print it — an X12 functional group or
/// transaction set whose first segment looks like one (`GS`, its element separator, a
/// two-letter functional identifier and the separator again: `GS*QO*`; `ST`, the separator,
/// a three-digit set and the separator: `ST*315*`), or an EDIFACT group or message
/// (`UNG+IFTSTA+`, `UNH+` a reference `+` a message type and `:`). Every channel but the
/// API (which reads what it is sent) routes by it: the watched folders and SFTP, and email
/// attachments; a text that merely starts with `ST` or `UNH` is no interchange.
pub fn looks_like_edi(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let head = &bytes[start..];
    head.starts_with(b"ISA")
        || head.starts_with(b"UNA")
        || head.starts_with(b"UNB")
        || bare_x12(head)
        || bare_edifact(head)
}

/// `GS*XX*` or `ST*999*`, with any separator the reader takes: punctuation, or a control
/// character that is no white space.
fn bare_x12(head: &[u8]) -> bool {
    let (first, shape): (_, fn(&u8) -> bool) = if head.starts_with(b"GS") {
        (2, u8::is_ascii_uppercase)
    } else if head.starts_with(b"ST") {
        (3, u8::is_ascii_digit)
    } else {
        return false;
    };
    let Some(&separator) = head.get(2) else {
        return false;
    };
    let element = head.get(3..3 + first).unwrap_or_default();
    (separator.is_ascii_punctuation() || (separator < 0x20 && !separator.is_ascii_whitespace()))
        && element.len() == first
        && element.iter().all(shape)
        && head.get(3 + first) == Some(&separator)
}

/// `UNG+` a group of one to six capital letters and `+`, or `UNH+` a message reference, `+`,
/// a message type of one to six capital letters and `:` — EDIFACT's default separators, as
/// a message without a UNA has.
fn bare_edifact(head: &[u8]) -> bool {
    let letters =
        |text: &[u8]| (1..=6).contains(&text.len()) && text.iter().all(u8::is_ascii_uppercase);
    if let Some(rest) = head.strip_prefix(b"UNG+") {
        return rest
            .iter()
            .position(|&b| b == b'+')
            .is_some_and(|end| letters(&rest[..end]));
    }
    let Some(rest) = head.strip_prefix(b"UNH+") else {
        return false;
    };
    let Some(reference) = rest.iter().position(|&b| b == b'+') else {
        return false;
    };
    let reference_ok = (1..=14).contains(&reference)
        && rest[..reference]
            .iter()
            .all(|b| b.is_ascii_graphic() && !b"'+:".contains(b));
    let kind = &rest[reference + 1..];
    reference_ok
        && kind
            .iter()
            .position(|&b| b == b':')
            .is_some_and(|end| letters(&kind[..end]))
}

/// What receiving and reading EDI needs: the core and the reader with `[edi]`'s code
/// tables. `App::edi` builds one.
pub struct Edi<'a> {
    pub core: &'a Core,
    pub reader: Reader,
}

/// `edi.store`, … read the core's, and `edi` is accepted where a use case asks for `&Core`,
/// as with `App`.
impl std::ops::Deref for Edi<'_> {
    type Target = Core;

    fn deref(&self) -> &Core {
        self.core
    }
}

/// Stores an interchange as received and reads it at once. The returned message is the
/// finished one (or still `received` if reading failed on the database: its job reads it
/// again).
pub async fn receive(
    edi: &Edi<'_>,
    account: AccountId,
    inbound: &Inbound,
    bytes: &[u8],
) -> Result<EdiMessage, ReceiveError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ReceiveError::Empty);
    }
    if bytes.len() > MAX_BYTES {
        return Err(ReceiveError::TooLarge {
            bytes: bytes.len(),
            limit: MAX_BYTES,
        });
    }
    let now = edi.clock.now();
    let message = EdiMessage::received(
        edi.ids.next_id(),
        account,
        inbound.channel.as_str(),
        inbound.source_name.clone(),
        inbound.create_shipments,
        bytes.len() as u64,
        now,
    );
    let job = queue::new_job(
        edi,
        JobKind::ProcessEdiMessage,
        serde_json::json!({"account_id": account, "edi_message_id": message.id}),
        Some(format!("edi-message:{}", message.id)),
        // The job is the safety net for a crash before the read below finishes.
        now + chrono::Duration::seconds(30),
    );
    edi.store.insert_edi_message(&message, bytes, &job).await?;
    Ok(process(edi, account, message.id).await?)
}

/// Reads a `received` interchange and applies it; one already read is returned as it is.
pub async fn process(
    edi: &Edi<'_>,
    account: AccountId,
    id: Uuid,
) -> Result<EdiMessage, StoreError> {
    let mut message = edi.store.edi_message(account, id).await?;
    if message.status != "received" {
        return Ok(message);
    }
    let raw = edi.store.edi_message_raw(account, id).await?;
    message.updated_at = edi.clock.now();
    let interchange = match edi.reader.read(&raw) {
        Ok(interchange) => interchange,
        Err(error) => {
            message.status = "rejected".to_owned();
            message.errors = serde_json::json!([{ "reason": error.to_string() }]);
            edi.store
                .finish_edi_message(&message, None, &[], &[], &[])
                .await?;
            return edi.store.edi_message(account, id).await;
        }
    };
    note_words_read(&interchange);
    let read = Read::of(&interchange, &message);
    let requests = edi
        .store
        .tracking_requests_naming(account, &read.all_numbers())
        .await?;
    let mut found: BTreeMap<String, BTreeSet<TrackingRequestId>> = BTreeMap::new();
    for (number, request) in &requests {
        found.entry(number.clone()).or_default().insert(request.id);
    }
    let mut transactions = read.transactions;
    for transaction in &mut transactions {
        transaction.matched = transaction.numbers.iter().any(|n| found.contains_key(n));
    }
    read.summary.apply_to(&mut message, &transactions);
    let key = interchange_key(&interchange);
    // The requests found are applied by jobs queued with the transactions, in their
    // transaction: one write, and nothing lost to a crash in between. One job applies
    // many requests (`APPLY_EDI_BATCH`), reading for all of them at once.
    let to_apply: BTreeSet<TrackingRequestId> = found.into_values().flatten().collect();
    let listed: Vec<TrackingRequestId> = to_apply.iter().copied().collect();
    let jobs: Vec<_> = listed
        .chunks(APPLY_EDI_BATCH)
        .enumerate()
        .map(|(turn, requests)| match requests {
            [request] => apply_edi_job(edi, account, *request),
            requests => apply_edi_batch_job(edi, account, id, turn, requests),
        })
        .collect();
    // The store takes off `events` those an earlier interchange gave (`event_keys`), after
    // telling a `duplicate`, and records the keys with the transactions.
    let event_keys = &read.summary.event_keys;
    let finish = match edi
        .store
        .finish_edi_message(&message, Some(&key), &transactions, event_keys, &jobs)
        .await
    {
        // Another process finished the same interchange first: this one is its duplicate.
        Err(StoreError::Conflict {
            constraint: "edi_messages_interchange",
        }) => {
            edi.store
                .finish_edi_message(&message, Some(&key), &transactions, event_keys, &jobs)
                .await?
        }
        other => other?,
    };
    if finish == EdiFinish::Finished && message.create_shipments {
        for request in start_tracking(edi, account, &transactions).await {
            if to_apply.contains(&request) {
                continue;
            }
            let job = apply_edi_job(edi, account, request);
            edi.store.enqueue_job(&job, edi.clock.now()).await?;
        }
    }
    edi.store.edi_message(account, id).await
}

/// Logs each status whose code is in no table but was read from the sender's own words
/// (IFTSTA STS C555 4404), so the operator sees which private codes are read that way and
/// can give their sender a table (`[[edi.code_tables]]`).
fn note_words_read(interchange: &Interchange) {
    let notes = interchange
        .transactions
        .iter()
        .filter_map(|result| result.as_ref().ok())
        .flat_map(|transaction| &transaction.notes);
    for note in notes {
        if let tidemark_edi::Note::ReadFromWords {
            code,
            words,
            meaning,
            ..
        } = note
        {
            tracing::info!(
                sender = ?interchange.envelope.sender_id,
                code = ?code,
                words = ?words,
                meaning = %meaning,
                "an EDI status code in no code table was read from the sender's own words"
            );
        }
    }
}

/// The job applying stored EDI to a request (one pending per request).
fn apply_edi_job(
    core: &Core,
    account: AccountId,
    request: TrackingRequestId,
) -> tidemark_domain::NewJob {
    queue::new_job(
        core,
        JobKind::ApplyEdi,
        serde_json::json!({"account_id": account, "tracking_request_id": request}),
        Some(format!("apply-edi:{request}")),
        core.clock.now(),
    )
}

/// The job applying stored EDI to several requests an interchange (`message`) matched,
/// the `turn`th of its turns.
fn apply_edi_batch_job(
    core: &Core,
    account: AccountId,
    message: Uuid,
    turn: usize,
    requests: &[TrackingRequestId],
) -> tidemark_domain::NewJob {
    queue::new_job(
        core,
        JobKind::ApplyEdi,
        serde_json::json!({"account_id": account, "tracking_request_ids": requests}),
        Some(format!("apply-edi:{message}:{turn}")),
        core.clock.now(),
    )
}

/// An interchange sent again is one whose sender, control number and transactions are all the
/// same as one received before. The transactions count too because public guides' examples
/// and careless senders reuse control numbers (`000000001`) for different content: keyed by
/// the number alone, a second, different status would be dropped as a duplicate. So the key
/// is the sender and control number with a digest of every transaction's segments (kept
/// short enough for an index whatever the file holds). A file of several interchanges adds
/// each further one's sender and control number to the digest, so a later file that repeats
/// only its first still counts.
fn interchange_key(interchange: &Interchange) -> String {
    use sha2::Digest;

    let envelope = &interchange.envelope;
    let mut key = format!(
        "{}|{}|{}|{}",
        syntax_name(interchange.syntax),
        envelope
            .sender_qualifier
            .as_deref()
            .unwrap_or_default()
            .trim(),
        envelope.sender_id.trim(),
        envelope.control_number.trim()
    );
    let mut further = sha2::Sha256::new();
    for note in &interchange.notes {
        if let tidemark_edi::Note::FurtherInterchange {
            sender,
            control_number,
        } = note
        {
            further.update(b"interchange\0");
            further.update(sender.trim().as_bytes());
            further.update([0]);
            further.update(control_number.trim().as_bytes());
            further.update([0]);
        }
    }
    for transaction in &interchange.transactions {
        let segments = match transaction {
            Ok(transaction) => &transaction.segments,
            Err(error) => &error.segments,
        };
        further.update(b"transaction\0");
        for segment in segments {
            further.update(segment.as_bytes());
            further.update([0]);
        }
    }
    key.push('#');
    key.push_str(&hex::encode(further.finalize()));
    key
}

fn syntax_name(syntax: Syntax) -> &'static str {
    match syntax {
        Syntax::X12 => "x12",
        Syntax::Edifact => "edifact",
    }
}

/// What reading an interchange gave, before anything is matched.
struct Read {
    transactions: Vec<EdiTransactionRecord>,
    summary: Summary,
}

#[derive(Default)]
struct Summary {
    syntax: &'static str,
    sender: String,
    receiver: String,
    control_number: String,
    rejected: u32,
    statuses: u32,
    /// The statuses read as carrier events, less those an earlier transaction of the
    /// interchange gave ([`event_keys`]); the store takes off those an earlier interchange
    /// gave.
    events: u32,
    /// The keys of the events counted, in order: the store's probe of earlier interchanges.
    event_keys: Vec<String>,
    /// Every key read so far in the interchange.
    keys_seen: std::collections::HashSet<String>,
    drift: u32,
    errors: Vec<serde_json::Value>,
}

impl Summary {
    fn apply_to(&self, message: &mut EdiMessage, transactions: &[EdiTransactionRecord]) {
        let accepted = u32::try_from(transactions.len()).unwrap_or(u32::MAX);
        message.syntax = Some(self.syntax.to_owned());
        message.sender = Some(self.sender.clone());
        message.receiver = Some(self.receiver.clone());
        message.control_number = Some(self.control_number.clone());
        message.transactions = accepted.saturating_add(self.rejected);
        message.rejected_transactions = self.rejected;
        message.statuses = self.statuses;
        message.events = self.events;
        message.drift = self.drift;
        message.unmatched =
            u32::try_from(transactions.iter().filter(|t| !t.matched).count()).unwrap_or(u32::MAX);
        message.errors = serde_json::Value::Array(self.errors.clone());
        message.status = match (accepted, self.rejected) {
            (0, rejected) if rejected > 0 => "rejected",
            (_, 0) => "processed",
            _ => "partially_processed",
        }
        .to_owned();
    }
}

impl Read {
    fn of(interchange: &Interchange, message: &EdiMessage) -> Self {
        let mut summary = Summary {
            syntax: syntax_name(interchange.syntax),
            sender: interchange.envelope.sender_id.trim().to_owned(),
            receiver: interchange.envelope.receiver_id.trim().to_owned(),
            control_number: interchange.envelope.control_number.trim().to_owned(),
            ..Summary::default()
        };
        let mut transactions = Vec::new();
        for result in &interchange.transactions {
            match result {
                Ok(transaction) => {
                    transactions.push(record_of(transaction, message, &mut summary));
                }
                Err(error) => {
                    summary.rejected += 1;
                    summary.errors.push(error_of(error));
                }
            }
        }
        if interchange.transactions.is_empty() {
            summary.rejected += 1;
            summary.errors.push(serde_json::json!({
                "reason": "the interchange holds no transaction"
            }));
        }
        Self {
            transactions,
            summary,
        }
    }

    fn all_numbers(&self) -> Vec<String> {
        let numbers: BTreeSet<&String> =
            self.transactions.iter().flat_map(|t| &t.numbers).collect();
        numbers.into_iter().cloned().collect()
    }
}

fn numbers_of(statuses: &[StatusReport]) -> Vec<String> {
    let mut numbers = BTreeSet::new();
    for status in statuses {
        let references = &status.references;
        for number in references
            .bills_of_lading
            .iter()
            .chain(&references.bookings)
            .chain(&references.container)
        {
            let key = number_key(number);
            if !key.is_empty() {
                numbers.insert(key);
            }
        }
    }
    numbers.into_iter().collect()
}

fn record_of(
    transaction: &Transaction,
    message: &EdiMessage,
    summary: &mut Summary,
) -> EdiTransactionRecord {
    let mut events = Vec::new();
    let mut facts = Vec::new();
    for status in &transaction.statuses {
        summary.statuses += 1;
        if status.is_drift() {
            summary.drift += 1;
        }
        if let Ok(event) = status.to_carrier_event() {
            events.push(event);
        }
        // A status that is no terminal status is kept among the facts for its railroad.
        if let Some(fact) = status.terminal_facts().or_else(|| status.railroad_facts()) {
            facts.push(fact);
        }
    }
    for key in event_keys(&events) {
        match key {
            // The same key in an earlier transaction of this interchange is that event.
            Some(key) if summary.keys_seen.contains(&key) => {}
            Some(key) => {
                summary.keys_seen.insert(key.clone());
                summary.event_keys.push(key);
                summary.events += 1;
            }
            None => summary.events += 1,
        }
    }
    EdiTransactionRecord {
        message_id: message.id,
        account_id: message.account_id,
        position: u32::try_from(transaction.index).unwrap_or(u32::MAX),
        set_id: transaction.set_id.clone(),
        control_number: transaction.control_number.clone(),
        numbers: numbers_of(&transaction.statuses),
        scac: transaction
            .statuses
            .iter()
            .find_map(|status| status.references.scac.clone()),
        events: serde_json::to_value(&events).unwrap_or_else(|_| serde_json::json!([])),
        facts: serde_json::to_value(&facts).unwrap_or_else(|_| serde_json::json!([])),
        segments: transaction.segments.join("\n"),
        matched: false,
        created_at: message.updated_at,
    }
}

/// A rejected transaction as the `errors` member lists it.
fn error_of(error: &TransactionError) -> serde_json::Value {
    serde_json::json!({
        "transaction": error.index + 1,
        "set_id": error.set_id,
        "control_number": error.control_number,
        "segment": error.segment.as_ref().map(|s| s.tag.clone()),
        "position": error.segment.as_ref().map(|s| s.position),
        "reason": error.fault.to_string(),
    })
}

/// Starts a tracking request for each unmatched transaction that names a line: by its bill
/// of lading, else its booking, else its container. Returns the requests started.
async fn start_tracking(
    core: &Core,
    account: AccountId,
    transactions: &[EdiTransactionRecord],
) -> Vec<TrackingRequestId> {
    let mut started = Vec::new();
    let mut asked = BTreeSet::new();
    for transaction in transactions.iter().filter(|t| !t.matched) {
        let Some((request_type, number)) = tracked_number(transaction) else {
            continue;
        };
        let Some(scac) = line_of(core, transaction.scac.as_deref(), &transaction.numbers) else {
            tracing::info!(
                named = ?transaction.scac, number,
                "an EDI transaction names no known line; it stays unmatched"
            );
            continue;
        };
        let scac = &scac;
        if !asked.insert((scac.clone(), number.clone())) {
            continue;
        }
        let submission = crate::use_cases::tracking::requests::Submission {
            request_type: Some(request_type.to_owned()),
            request_number: Some(number.clone()),
            scac: Some(scac.clone()),
            ..Default::default()
        };
        match crate::use_cases::tracking::requests::submit_from_feed(core, account, submission)
            .await
        {
            Ok(request) => started.push(request.id),
            Err(error) => tracing::info!(
                scac, number, error = ?error,
                "an EDI transaction could not start tracking; it stays unmatched"
            ),
        }
    }
    started
}

/// The line to track a transaction's number with: the SCAC it names (`N9*SCA`, `NAD+CA`,
/// the sender) when that is a line's, else the line one of its numbers points to with
/// confidence (a container's owner code, a bill's prefix). Senders often name themselves by
/// an EDI id that is no SCAC (`CMACGM`, `HAMSUD`), while their bills and boxes carry the
/// line's codes (`CMDU…`, `CMAU…`, `HASU…`).
fn line_of(core: &Core, named: Option<&str>, numbers: &[String]) -> Option<String> {
    if let Some(line) = named.and_then(|scac| core.reference.shipping_line(scac)) {
        return Some(line.scac.clone());
    }
    numbers.iter().find_map(|number| {
        let inference = crate::use_cases::tracking::inference::infer(core, number).ok()?;
        inference.selected().map(|line| line.scac.clone())
    })
}

/// The number a transaction is best tracked by, with its request type.
fn tracked_number(transaction: &EdiTransactionRecord) -> Option<(&'static str, String)> {
    let events: Vec<tidemark_carriers::CarrierEvent> =
        serde_json::from_value(transaction.events.clone()).unwrap_or_default();
    let document = |kind: tidemark_carriers::DocumentType| {
        events
            .iter()
            .find_map(|event| event.document_numbers(kind).next().map(str::to_owned))
    };
    document(tidemark_carriers::DocumentType::TransportDocument)
        .map(|number| ("bill_of_lading", number))
        .or_else(|| {
            document(tidemark_carriers::DocumentType::Booking)
                .map(|number| ("booking_number", number))
        })
        .or_else(|| {
            events
                .iter()
                .find_map(|event| event.equipment_reference.clone())
                .map(|number| ("container", number))
        })
}

/// An acknowledgement ready to send: X12 997 or EDIFACT CONTRL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acknowledgement {
    pub media_type: &'static str,
    pub body: String,
}

#[derive(Debug, thiserror::Error)]
pub enum AcknowledgementError {
    /// Its envelope could not be read: there is nothing to address an acknowledgement to.
    #[error("the interchange could not be read ({0}), so it cannot be acknowledged")]
    Unreadable(String),
    #[error("the interchange is still being read")]
    NotReadYet,
    /// It was read, but cannot be answered (no envelope to address, a control number too
    /// large for X12): the builder's reason as it stands.
    #[error("{0}")]
    NotAnswerable(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The 997 (X12) or CONTRL (EDIFACT) for a received interchange, as its sender expects:
/// each transaction accepted, or rejected with the fault's code. A file of several
/// interchanges gets one acknowledgement interchange per interchange, concatenated. Its own
/// control numbers come from the message's id (the next ones for each further interchange),
/// so asking twice gives the same acknowledgement.
pub async fn acknowledgement(
    edi: &Edi<'_>,
    account: AccountId,
    id: Uuid,
) -> Result<Acknowledgement, AcknowledgementError> {
    let message = edi.store.edi_message(account, id).await?;
    if message.status == "received" {
        return Err(AcknowledgementError::NotReadYet);
    }
    let raw = edi.store.edi_message_raw(account, id).await?;
    let interchange = edi
        .reader
        .read(&raw)
        .map_err(|error| AcknowledgementError::Unreadable(error.to_string()))?;
    // Nine digits at most (X12 ISA13), never zero.
    let number = u32::try_from(id.as_u128() % 999_999_999).unwrap_or(0) + 1;
    let control = tidemark_edi::ack::AckControl {
        interchange_control_number: number,
        group_control_number: number,
        at: message.created_at.naive_utc(),
    };
    let (media_type, built) = match interchange.syntax {
        Syntax::X12 => (
            X12_MEDIA_TYPE,
            tidemark_edi::ack::x12_997(&interchange, &control),
        ),
        Syntax::Edifact => (
            EDIFACT_MEDIA_TYPE,
            tidemark_edi::ack::edifact_contrl(&interchange, &control),
        ),
    };
    let body = built.map_err(|error| AcknowledgementError::NotAnswerable(error.to_string()))?;
    Ok(Acknowledgement { media_type, body })
}

/// RFC 1767's media types for X12 and EDIFACT.
pub const X12_MEDIA_TYPE: &str = "application/edi-x12";
pub const EDIFACT_MEDIA_TYPE: &str = "application/edifact";

/// What tells one event of a transaction from the others: its EDI event id (sender, code,
/// container or bill, place and time), and for the second and later event of the same
/// transaction with that id, the id and its turn (`{id}#2`, …). The id is coarse: one
/// status about two bookings (`CNI+1`, `CNI+2`), or at two places with no UN/LOCODE, gives
/// two events with one id, which stay two. An event with no id has no key.
pub fn event_keys(events: &[tidemark_carriers::CarrierEvent]) -> Vec<Option<String>> {
    let mut turns: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    events
        .iter()
        .map(|event| {
            let id = event.event_id.as_deref()?;
            let turn = turns.entry(id).or_default();
            *turn += 1;
            Some(match *turn {
                1 => id.to_owned(),
                turn => format!("{id}#{turn}"),
            })
        })
        .collect()
}

/// The carrier events stored transactions stand for, each status once, in the order first
/// received. A status sent again in a later transaction (a VAN's retransmission, a line
/// resending the day's statuses, a file received on two channels) has the same key
/// ([`event_keys`]: its event id — built from its sender, code, container or bill, place
/// and time — and its turn among the transaction's events with that id) and is the same
/// event: it keeps its place and takes what was sent last. Read twice it would be two
/// events sharing an id, which a carrier's answer keeps apart under ids naming what each is
/// about (`report::source_id`): a second transport event beside the first, notified again.
/// Distinct statuses of one transaction sharing an id stay distinct events.
pub fn events_of(transactions: &[&EdiTransactionRecord]) -> Vec<tidemark_carriers::CarrierEvent> {
    use serde::Deserialize;

    let mut events: Vec<tidemark_carriers::CarrierEvent> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for transaction in transactions {
        let read = match Vec::<tidemark_carriers::CarrierEvent>::deserialize(&transaction.events) {
            Ok(read) => read,
            Err(error) => {
                tracing::warn!(
                    edi_message.id = %transaction.message_id, %error,
                    "stored EDI events cannot be read back"
                );
                continue;
            }
        };
        let keys = event_keys(&read);
        for (event, key) in read.into_iter().zip(keys) {
            let known = key.as_ref().and_then(|key| at.get(key)).copied();
            match known.and_then(|known| events.get_mut(known)) {
                Some(slot) => *slot = event,
                None => {
                    if let Some(key) = key {
                        at.insert(key, events.len());
                    }
                    events.push(event);
                }
            }
        }
    }
    events
}

/// What stored transactions say about containers' pick-up: one observation per terminal
/// status (last free day, holds, fees, appointment, yard place), and each availability
/// status as an `available` / `not_available` milestone. A last free day a rail ramp
/// reports, or one reported away from the port of discharge (`pod`), is the rail's.
///
/// A railroad a status names is an observation of its own, for its rail leg: the one the
/// status's code says (a rail load or departure: leaving the port; a rail arrival, unload
/// or ramp status: the inland destination), else the leg leaving the port when the status
/// is at the port of discharge (or it is not known), the inland one away from it.
pub fn pickup_of(
    transactions: &[&EdiTransactionRecord],
    pod: Option<&str>,
) -> (
    Vec<tidemark_domain::pickup::PickupObservation>,
    Vec<tidemark_domain::tracking_update::Milestone>,
) {
    use tidemark_domain::TransportEventName;
    use tidemark_domain::pickup::{
        HoldState, LfdSource, ObservedHold, ObservedRailCarrier, PickupFee, PickupObservation,
        RailLeg,
    };
    use tidemark_edi::{HoldStatus, TerminalFacts};

    let mut observations = Vec::new();
    let mut milestones = Vec::new();
    let mut availability_said = BTreeSet::new();
    for transaction in transactions {
        let facts: Vec<TerminalFacts> =
            serde::Deserialize::deserialize(&transaction.facts).unwrap_or_default();
        for fact in facts {
            let Some(container) = fact.container.as_deref().map(number_key) else {
                continue;
            };
            let observed_at = fact.observed_at.unwrap_or(transaction.created_at);
            let away_from_pod =
                matches!((fact.location.as_deref(), pod), (Some(here), Some(pod)) if here != pod);
            if let Some(railroad) = &fact.railroad {
                let leg = match railroad.leg {
                    Some(tidemark_edi::RailLeg::FromPort) => RailLeg::FromPort,
                    Some(tidemark_edi::RailLeg::InlandDestination) => RailLeg::InlandDestination,
                    None if away_from_pod => RailLeg::InlandDestination,
                    None => RailLeg::FromPort,
                };
                observations.push(PickupObservation {
                    container_number: container.clone(),
                    observed_at,
                    rail_carrier: Some(ObservedRailCarrier {
                        scac: railroad.scac.clone(),
                        leg,
                    }),
                    ..PickupObservation::default()
                });
            }
            if fact.railroad_only {
                continue;
            }
            let away = fact.at_rail_ramp || away_from_pod;
            observations.push(PickupObservation {
                container_number: container.clone(),
                observed_at,
                last_free_day: fact.last_free_day,
                lfd_source: if away {
                    LfdSource::Rail
                } else {
                    LfdSource::Terminal
                },
                holds: fact
                    .holds
                    .iter()
                    .map(|hold| ObservedHold {
                        name: hold.kind.as_str().to_owned(),
                        state: match hold.status {
                            HoldStatus::Hold => HoldState::Hold,
                            HoldStatus::Pending => HoldState::Pending,
                            HoldStatus::Released => HoldState::Released,
                        },
                        description: hold.description.clone(),
                    })
                    .collect(),
                complete_holds: false,
                fees: fact
                    .fees
                    .iter()
                    .map(|fee| PickupFee {
                        kind: serde_json::to_value(fee.kind)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_else(|| "other".to_owned()),
                        amount: fee.amount.clone(),
                        currency_code: fee.currency.clone(),
                    })
                    .collect(),
                complete_fees: false,
                appointment_at: fact.appointment_at,
                location: None,
                rail_carrier: None,
            });
            if let Some(available) = fact.available {
                // A terminal repeating its word (the same availability of the same box, at
                // the same place and time) in a later interchange says nothing new: the
                // milestone keeps the id of the transaction that first said it.
                let said = (
                    available,
                    container.clone(),
                    observed_at,
                    fact.location.clone(),
                );
                if !availability_said.insert(said) {
                    continue;
                }
                milestones.push(tidemark_domain::tracking_update::Milestone {
                    source_id: format!(
                        "edi|{}|{}|{container}|{}",
                        transaction.message_id,
                        transaction.position,
                        observed_at.timestamp()
                    ),
                    event: if available {
                        TransportEventName::Available
                    } else {
                        TransportEventName::NotAvailable
                    },
                    container_number: Some(container),
                    at: observed_at,
                    location_locode: fact.location.clone(),
                    vessel_name: None,
                    vessel_imo: None,
                    voyage_number: None,
                    terminal_id: None,
                });
            }
        }
    }
    (observations, milestones)
}
