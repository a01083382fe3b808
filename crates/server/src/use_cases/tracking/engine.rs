//! Following a tracking request with its carrier: one poll, and the lifecycle rules that
//! decide what the request becomes (Terminal49's, NOTES §6):
//!
//! - found: the shipment, containers and events are created or updated, status `created`;
//! - a container number the carrier does not know fails at once (`not_found`);
//! - a bill of lading or booking it does not know waits as `awaiting_manifest`, re-checked
//!   daily, and fails as `expired` after 7 days;
//! - transient errors are retried with backoff (`is_retrying`, `retry_count`, the reason in
//!   `failed_reason`) and fail as `retries_exhausted` after 14 retries, about a day.
//!
//! Polls are jobs on the durable queue; the scheduler sweeps unresolved requests and tracked
//! shipments and queues a de-duplicated poll for each, and a poll that is not due yet does
//! nothing. So a crash at any point loses nothing: the next sweep finds the work again.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use futures::StreamExt;
use tidemark_carriers::{CarrierError, ReferenceKind, TrackingQuery};
use tidemark_domain::carriers::{Acquire, PollPriority, WaitReason};
use tidemark_domain::domain_event::events_of;
use tidemark_domain::tracking_update::{self, Known, TrackingUpdate};
use tidemark_domain::{
    AccountId, FailedReason, RequestType, RetryPolicy, Shipment, ShipmentId, TrackingRequest,
    TrackingRequestId, TrackingRequestStatus,
};
use tidemark_store::{EdiTransactionRecord, StoreError};

use crate::use_cases::tracking::Engine;
use crate::use_cases::tracking::{limits, report};

/// Retries of transient carrier errors before a request fails as `retries_exhausted`.
pub const MAX_RETRIES: u32 = 14;
/// How long a bill of lading or booking may wait for the carrier's manifest.
pub const AWAITING_MANIFEST_DAYS: i64 = 7;
/// Backoff between retries: 1 minute doubling to at most 4 hours, so 14 retries span about
/// a day.
const RETRY_POLICY: RetryPolicy = RetryPolicy {
    base: Duration::minutes(1),
    cap: Duration::hours(4),
    jitter: 0.0,
};

/// What one poll did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollOutcome {
    /// Not due yet, or nothing left to follow.
    Skipped,
    /// The carrier cannot be called now (its budget, a 429, an open circuit, refused
    /// credentials): the poll stays due and the scheduler queues it again when the
    /// carrier can take it.
    Waiting(WaitReason),
    Tracked,
    AwaitingManifest,
    Retrying,
    Failed(FailedReason),
}

/// When a request or its shipment is next due for a poll.
pub fn due_at(
    engine: &Engine<'_>,
    request: &TrackingRequest,
    shipment: Option<&Shipment>,
) -> Option<DateTime<Utc>> {
    match (request.status, shipment) {
        (TrackingRequestStatus::Failed | TrackingRequestStatus::TrackingStopped, _) => None,
        (_, Some(shipment)) if !shipment.is_tracking() => None,
        (_, Some(shipment)) => Some(match shipment.line_tracking_last_attempted_at {
            None => request.updated_at,
            Some(_) => engine.intervals.due_at(shipment, engine.clock.now()),
        }),
        (TrackingRequestStatus::AwaitingManifest, None) => {
            Some(last_polled(request) + Duration::days(1))
        }
        // A line followed by its EDI: each interchange applies itself when it arrives; the
        // daily look is only a safety net.
        (_, None) if request.polled_at.is_some() && fed_by_edi(engine, &request.scac) => {
            Some(last_polled(request) + Duration::days(1))
        }
        (_, None) if request.is_retrying => Some(
            last_polled(request) + RETRY_POLICY.delay_after(request.retry_count.unwrap_or(1), 0.5),
        ),
        (_, None) => Some(request.created_at),
    }
}

/// When the carrier was last asked about a request that has no shipment yet (rows from
/// before `polled_at` existed fall back to their last change).
fn last_polled(request: &TrackingRequest) -> DateTime<Utc> {
    request.polled_at.unwrap_or(request.updated_at)
}

fn query_for(request: &TrackingRequest) -> TrackingQuery {
    TrackingQuery {
        // Sent on by the sandbox's connector only; a real carrier's never passes it on.
        sandbox_epoch: Some(request.created_at),
        ..query_of(request.request_type, &request.request_number)
    }
}

/// The query a poll sends for a number of `request_type`, exactly as the user gave it
/// (trimmed): some lines' references are case-sensitive. `carriers check` asks with it too.
pub fn query_of(request_type: RequestType, number: &str) -> TrackingQuery {
    TrackingQuery {
        reference_kind: match request_type {
            RequestType::BillOfLading => ReferenceKind::BillOfLading,
            RequestType::BookingNumber => ReferenceKind::Booking,
            RequestType::Container => ReferenceKind::Equipment,
        },
        reference: number.trim().to_owned(),
        sandbox_epoch: None,
    }
}

/// Polls the carrier for one tracking request, if it is due (or `forced`, for a refresh
/// the user asked for), and records the outcome.
pub async fn poll(
    engine: &Engine<'_>,
    account: AccountId,
    id: TrackingRequestId,
    forced: bool,
) -> Result<PollOutcome, StoreError> {
    let mut request = engine.store.tracking_request(account, id).await?;
    let status_before = request.status;
    // The request as read fences the write: if a user stops tracking or another poll
    // writes first, this poll's result is dropped and the next sweep polls afresh.
    let read_at = request.updated_at;
    let shipment = match request.shipment_id {
        Some(shipment_id) => Some(engine.store.shipment(account, shipment_id).await?),
        None => None,
    };
    let now = engine.clock.now();
    let due = due_at(engine, &request, shipment.as_ref());
    if due.is_none_or(|due| due > now && !forced) {
        return Ok(PollOutcome::Skipped);
    }
    let fetched = match engine.carriers.get(&request.scac) {
        // A line whose status comes as EDI: read what its feed stored, call no one.
        Some(carrier) if carrier.fed_by_edi() => {
            return raced(apply_edi_to(engine, status_before, read_at, request, shipment).await);
        }
        // A line without a tracking API: nothing to wait for.
        Some(carrier) if carrier.unavailable_reason().is_some() => {
            let reason = carrier.unavailable_reason().unwrap_or_default().to_owned();
            return raced(unavailable(engine, status_before, read_at, request, &reason).await);
        }
        Some(carrier) => {
            let priority = shipment
                .as_ref()
                .map_or(PollPriority::NewRequest, |shipment| {
                    PollPriority::of_shipment(shipment, now)
                });
            match limits::acquire(engine, carrier.scac(), priority).await? {
                Acquire::Go => {
                    let query = query_for(&request);
                    let fetched = carrier.fetch(&query).await;
                    limits::record(engine, carrier.scac(), &fetched).await;
                    fetched.map(|mut snapshot| {
                        snapshot.keep_about(&query);
                        snapshot
                    })
                }
                Acquire::Wait { until, reason } => {
                    return raced(
                        wait(engine, status_before, read_at, request, until, reason).await,
                    );
                }
            }
        }
        None => Err(CarrierError::Unavailable(format!(
            "no connector is configured for {}",
            request.scac
        ))),
    };
    // A 200 whose events could none of them be read (unknown codes, an unknown shape) is
    // an answer we do not understand, retried as `unrecognized_response`: never a final
    // `not_found`. The carrier's health and drift counted it as answered above.
    let fetched = match fetched {
        Ok(snapshot) if shipment.is_none() => snapshot.unreadable().map_or(Ok(snapshot), Err),
        other => other,
    };
    let report = fetched.map(|snapshot| report::from_snapshot(&snapshot, engine.reference));
    raced(
        async {
            match (report, shipment) {
        (Ok(report), Some(shipment)) => {
            record_found(engine, status_before, read_at, request, Some(shipment), &report, now).await
        }
        // A bill of lading or booking the carrier answers for is found even before it
        // names a container: its vessel, estimates and document events are kept.
        (Ok(report), None)
            if !report.containers.is_empty()
                || (request.request_type != RequestType::Container
                    && !report.raw_events.is_empty()) =>
        {
            record_found(engine, status_before, read_at, request, None, &report, now).await
        }
        (Ok(_) | Err(CarrierError::NotFound), None) => {
            request.updated_at = now;
            request.polled_at = Some(now);
            // The sandbox's numbers are never "not yet manifested": unknown is final there.
            let final_not_found = request.request_type == RequestType::Container
                || request.scac == tidemark_carriers::sandbox::SCAC;
            let outcome = if final_not_found {
                fail(&mut request, FailedReason::NotFound)
            } else if now - request.created_at >= Duration::days(AWAITING_MANIFEST_DAYS) {
                fail(&mut request, FailedReason::Expired)
            } else {
                request.status = TrackingRequestStatus::AwaitingManifest;
                request.is_retrying = false;
                PollOutcome::AwaitingManifest
            };
            record(engine, status_before, read_at, &request, None).await?;
            Ok(outcome)
        }
        (Err(CarrierError::CredentialsRefused(_)), None) => {
            // The operator must fix the credentials; until then the request waits rather
            // than spending its retries, and resumes once a call succeeds.
            request.updated_at = now;
            request.polled_at = Some(now);
            request.is_retrying = true;
            request.failed_reason = Some(FailedReason::ShippingLineUnreachable);
            record(engine, status_before, read_at, &request, None).await?;
            Ok(PollOutcome::Waiting(WaitReason::CredentialsRefused))
        }
        (Err(error), None) => {
            tracing::warn!(tracking_request.id = %request.id, %error, "carrier poll failed");
            let retries = request.retry_count.unwrap_or(0) + 1;
            request.updated_at = now;
            request.polled_at = Some(now);
            let outcome = if retries > MAX_RETRIES {
                fail(&mut request, FailedReason::RetriesExhausted)
            } else {
                request.retry_count = Some(retries);
                request.is_retrying = true;
                request.failed_reason = Some(match error {
                    CarrierError::UnexpectedPayload(_) => FailedReason::UnrecognizedResponse,
                    _ => FailedReason::ShippingLineUnreachable,
                });
                PollOutcome::Retrying
            };
            record(engine, status_before, read_at, &request, None).await?;
            Ok(outcome)
        }
        (Err(error), Some(mut shipment)) => {
            // The shipment keeps its data; the next scheduled poll tries again.
            tracing::warn!(shipment.id = %shipment.id, %error, "carrier poll failed");
            shipment.line_tracking_last_attempted_at = Some(now);
            // A carrier that stopped answering for a shipment (many purge delivered bills)
            // must not keep it polled forever.
            let window = Duration::days(tracking_update::ARRIVAL_WINDOW_DAYS);
            // Refused credentials are ours to fix, not the carrier forgetting the shipment.
            let reason = if matches!(error, CarrierError::CredentialsRefused(_)) {
                None
            } else if shipment.pod_ata_at.is_some_and(|arrived| now - arrived > window) {
                Some("past_arrival_window")
            } else if shipment
                .line_tracking_last_succeeded_at
                .is_some_and(|succeeded| now - succeeded > window)
            {
                Some("no_recent_updates")
            } else {
                None
            };
            if let Some(reason) = reason {
                shipment.line_tracking_stopped_at = Some(now);
                shipment.line_tracking_stopped_reason = Some(reason.to_owned());
                request.status = TrackingRequestStatus::TrackingStopped;
                request.updated_at = now;
            }
            let update = TrackingUpdate::shipment_only(shipment);
            record(engine, status_before, read_at, &request, Some(&update)).await?;
            Ok(PollOutcome::Retrying)
        }
            }
        }
        .await,
    )
}

fn fed_by_edi(engine: &Engine<'_>, scac: &str) -> bool {
    engine
        .carriers
        .get(scac)
        .is_some_and(|carrier| carrier.fed_by_edi())
}

/// At most this many stored EDI transactions are read for one request: years of statuses.
const EDI_TRANSACTIONS_PER_REQUEST: u32 = 5_000;

/// Applies what stored EDI interchanges say about a request's numbers (its own, its
/// shipment's bill of lading and containers), as one carrier answer: after an interchange
/// naming it arrives, or when the request is created after the interchange. Calls no
/// carrier. A lost race is an error here, so the job that asked for it runs again.
pub async fn apply_edi(
    engine: &Engine<'_>,
    account: AccountId,
    id: TrackingRequestId,
) -> Result<PollOutcome, StoreError> {
    let request = engine.store.tracking_request(account, id).await?;
    if !edi_applies_to(&request) {
        return Ok(PollOutcome::Skipped);
    }
    let shipment = match request.shipment_id {
        Some(shipment_id) => Some(engine.store.shipment(account, shipment_id).await?),
        None => None,
    };
    let (status_before, read_at) = (request.status, request.updated_at);
    apply_edi_to(engine, status_before, read_at, request, shipment).await
}

/// Whether stored EDI is applied to a request in this state.
fn edi_applies_to(request: &TrackingRequest) -> bool {
    matches!(
        request.status,
        TrackingRequestStatus::Pending
            | TrackingRequestStatus::AwaitingManifest
            | TrackingRequestStatus::Created
    )
}

pub use crate::use_cases::edi::APPLY_EDI_BATCH;

/// Stored EDI transactions one batch reads at once at most; a batch whose requests name
/// more reads each request's own, as [`apply_edi`] does.
const EDI_TRANSACTIONS_PER_BATCH: u32 = 20_000;

/// Results of a batch planned and written at once: enough to fill the stores' shared
/// writes (SQLite's group commit, PostgreSQL's combined statements).
const BATCH_WRITES_AT_ONCE: usize = 64;

/// [`apply_edi`] for several requests of one account at once (those one interchange
/// matched), with the same outcome for each: the requests, their shipments and containers,
/// the stored EDI naming any of their numbers and whether the account defines custom
/// fields (without one, no request's values are read) are read once for all, each request's
/// result is written on its own (so one that fails loses none of the others'), and the
/// vessels the results name and the webhook deliveries their events call for are seen to
/// once, after all are written. An error reading for the whole batch is returned before
/// anything is written.
pub async fn apply_edi_all(
    engine: &Engine<'_>,
    account: AccountId,
    ids: &[TrackingRequestId],
) -> Result<Vec<(TrackingRequestId, Result<PollOutcome, StoreError>)>, StoreError> {
    let mut outcomes = Vec::with_capacity(ids.len());
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    let unique: Vec<TrackingRequestId> =
        ids.iter().copied().filter(|&id| seen.insert(id)).collect();
    let mut read: HashMap<TrackingRequestId, TrackingRequest> = engine
        .store
        .tracking_requests_by_ids(account, &unique)
        .await?
        .into_iter()
        .map(|request| (request.id, request))
        .collect();
    let mut requests = Vec::with_capacity(read.len());
    for id in unique {
        match read.remove(&id) {
            Some(request) if edi_applies_to(&request) => requests.push(request),
            Some(_) => outcomes.push((id, Ok(PollOutcome::Skipped))),
            None => outcomes.push((id, Err(StoreError::NotFound))),
        }
    }
    let shipment_ids: Vec<ShipmentId> = requests.iter().filter_map(|r| r.shipment_id).collect();
    let mut shipments: HashMap<ShipmentId, Shipment> = HashMap::new();
    let mut containers: HashMap<ShipmentId, Vec<String>> = HashMap::new();
    if !shipment_ids.is_empty() {
        for shipment in engine
            .store
            .shipments_by_ids(account, &shipment_ids)
            .await?
        {
            shipments.insert(shipment.id, shipment);
        }
        for container in engine.store.containers_of_shipments(&shipment_ids).await? {
            containers
                .entry(container.shipment_id)
                .or_default()
                .push(container.number);
        }
    }
    let mut work = Vec::with_capacity(requests.len());
    for request in requests {
        let shipment = match request.shipment_id {
            Some(shipment_id) => match shipments.get(&shipment_id) {
                Some(shipment) => Some(shipment.clone()),
                None => {
                    outcomes.push((request.id, Err(StoreError::NotFound)));
                    continue;
                }
            },
            None => None,
        };
        let shipment_containers = shipment
            .as_ref()
            .and_then(|s| containers.remove(&s.id))
            .unwrap_or_default();
        let numbers = edi_numbers(&request, shipment.as_ref(), shipment_containers);
        work.push((request, shipment, numbers));
    }
    let mut all_numbers: Vec<String> = work
        .iter()
        .flat_map(|(_, _, numbers)| numbers.iter().cloned())
        .collect();
    all_numbers.sort();
    all_numbers.dedup();
    let limit = EDI_TRANSACTIONS_PER_REQUEST
        .saturating_mul(u32::try_from(work.len()).unwrap_or(u32::MAX))
        .min(EDI_TRANSACTIONS_PER_BATCH);
    let read = if work.is_empty() {
        Vec::new()
    } else {
        engine
            .store
            .edi_transactions_naming(account, &all_numbers, limit)
            .await?
    };
    // Read in full: each request's are those naming one of its numbers, in the same order
    // and to the same limit as its own read. Else each request reads its own.
    let complete = u32::try_from(read.len()).is_ok_and(|n| n < limit);
    let mut naming: HashMap<&str, Vec<usize>> = HashMap::new();
    if complete {
        for (at, transaction) in read.iter().enumerate() {
            for number in &transaction.numbers {
                naming.entry(number.as_str()).or_default().push(at);
            }
        }
    }
    // Whether the account defines custom fields at all, asked once for the batch: without
    // one, no request holds values to copy onto the shipment it creates.
    let defined = if work.is_empty() {
        false
    } else {
        crate::use_cases::custom_fields::any_defined(engine, account).await?
    };
    let (naming, read) = (&naming, &read);
    let applied: Vec<_> = futures::stream::iter(work)
        .map(|(request, shipment, numbers)| async move {
            let id = request.id;
            let (status_before, read_at) = (request.status, request.updated_at);
            // Without the batch's read in full, each request reads its own.
            let own = if complete {
                Vec::new()
            } else {
                match read_edi_naming(engine, account, &numbers).await {
                    Ok(own) => own,
                    Err(error) => return (id, Err(error)),
                }
            };
            let transactions: Vec<&EdiTransactionRecord> = if complete {
                let mut at: Vec<usize> = numbers
                    .iter()
                    .filter_map(|number| naming.get(number.as_str()))
                    .flatten()
                    .copied()
                    .collect();
                at.sort_unstable();
                at.dedup();
                let limit = usize::try_from(EDI_TRANSACTIONS_PER_REQUEST).unwrap_or(usize::MAX);
                at.into_iter().take(limit).map(|at| &read[at]).collect()
            } else {
                own.iter().collect()
            };
            let outcome = apply_edi_with(
                engine,
                status_before,
                read_at,
                request,
                shipment,
                numbers,
                &transactions,
                Some(defined),
            )
            .await;
            (id, outcome)
        })
        .buffer_unordered(BATCH_WRITES_AT_ONCE)
        .collect()
        .await;
    let mut after = AfterWrite::default();
    for (id, outcome) in applied {
        outcomes.push((
            id,
            outcome.map(|(outcome, then)| {
                after.merge(then);
                outcome
            }),
        ));
    }
    after.run(engine).await;
    Ok(outcomes)
}

/// The numbers stored EDI is looked up by for a request: its own, and its shipment's bill
/// of lading and containers.
fn edi_numbers(
    request: &TrackingRequest,
    shipment: Option<&Shipment>,
    containers: Vec<String>,
) -> Vec<String> {
    let mut numbers = vec![request.request_number.trim().to_uppercase()];
    if let Some(shipment) = shipment {
        numbers.push(shipment.bill_of_lading_number.trim().to_uppercase());
        numbers.extend(containers);
    }
    numbers.sort();
    numbers.dedup();
    numbers
}

async fn read_edi_naming(
    engine: &Engine<'_>,
    account: AccountId,
    numbers: &[String],
) -> Result<Vec<EdiTransactionRecord>, StoreError> {
    engine
        .store
        .edi_transactions_naming(account, numbers, EDI_TRANSACTIONS_PER_REQUEST)
        .await
}

async fn apply_edi_to(
    engine: &Engine<'_>,
    status_before: TrackingRequestStatus,
    read_at: DateTime<Utc>,
    request: TrackingRequest,
    shipment: Option<Shipment>,
) -> Result<PollOutcome, StoreError> {
    let containers = match &shipment {
        Some(shipment) => engine
            .store
            .containers_of_shipment(shipment.id)
            .await?
            .into_iter()
            .map(|container| container.number)
            .collect(),
        None => Vec::new(),
    };
    let numbers = edi_numbers(&request, shipment.as_ref(), containers);
    let own = read_edi_naming(engine, request.account_id, &numbers).await?;
    let transactions: Vec<&EdiTransactionRecord> = own.iter().collect();
    let (outcome, after) = apply_edi_with(
        engine,
        status_before,
        read_at,
        request,
        shipment,
        numbers,
        &transactions,
        None,
    )
    .await?;
    after.run(engine).await;
    Ok(outcome)
}

/// Applies the stored EDI `transactions` naming a request's `numbers` and writes the
/// result; what follows the write is left to the caller. `defined`: whether the account
/// has custom field definitions, when a batch asked once for all its requests (see
/// [`crate::use_cases::custom_fields::staged_values`]).
#[expect(
    clippy::too_many_arguments,
    reason = "the request as read, what was read for it, and what its batch read once"
)]
async fn apply_edi_with(
    engine: &Engine<'_>,
    status_before: TrackingRequestStatus,
    read_at: DateTime<Utc>,
    mut request: TrackingRequest,
    shipment: Option<Shipment>,
    numbers: Vec<String>,
    transactions: &[&EdiTransactionRecord],
    defined: Option<bool>,
) -> Result<(PollOutcome, AfterWrite), StoreError> {
    let now = engine.clock.now();
    let mut snapshot = tidemark_carriers::CarrierSnapshot {
        events: crate::use_cases::edi::events_of(transactions),
        ..Default::default()
    };
    snapshot.keep_about(&query_of(request.request_type, &request.request_number));
    let pod = shipment
        .as_ref()
        .and_then(|s| s.port_of_discharge_locode.clone());
    let (pickup, availability) = crate::use_cases::edi::pickup_of(transactions, pod.as_deref());
    if snapshot.events.is_empty() && (shipment.is_none() || pickup.is_empty()) {
        if shipment.is_none() && request.polled_at.is_none() && fed_by_edi(engine, &request.scac) {
            // Waits as `pending` for the line's first interchange naming it.
            request.polled_at = Some(now);
            let after = write(engine, status_before, read_at, &request, None).await?;
            return Ok((PollOutcome::Skipped, after));
        }
        return Ok((PollOutcome::Skipped, AfterWrite::default()));
    }
    let account = request.account_id;
    let mut report = report::from_snapshot(&snapshot, engine.reference);
    report.pickup = pickup;
    report.milestones.extend(availability);
    // Transactions that named a tracked number when they arrived were stored matched:
    // only those read unmatched (or past the limit, unread) need marking.
    let all_matched = transactions.iter().all(|t| t.matched)
        && u32::try_from(transactions.len()).is_ok_and(|n| n < EDI_TRANSACTIONS_PER_REQUEST);
    let found = record_found_then(
        engine,
        status_before,
        read_at,
        request,
        shipment,
        &report,
        now,
        defined,
    )
    .await?;
    if !all_matched {
        engine
            .store
            .mark_edi_matched(account, &numbers, now)
            .await?;
    }
    Ok(found)
}

/// A poll that may not call its carrier now. A request still waiting for its first answer
/// shows that it is retrying when the carrier refuses our credentials or keeps failing
/// (its retries are not spent: nothing is wrong with the number); a budget or a 429 just
/// delays the poll.
async fn wait(
    engine: &Engine<'_>,
    status_before: TrackingRequestStatus,
    read_at: DateTime<Utc>,
    mut request: TrackingRequest,
    until: DateTime<Utc>,
    reason: WaitReason,
) -> Result<PollOutcome, StoreError> {
    tracing::debug!(tracking_request.id = %request.id, scac = %request.scac, %until, reason = reason.as_str(), "poll waits for its carrier");
    let shows_retrying = matches!(
        reason,
        WaitReason::CredentialsRefused | WaitReason::CircuitOpen
    );
    if shows_retrying && request.shipment_id.is_none() && !request.is_retrying {
        request.is_retrying = true;
        request.failed_reason = Some(FailedReason::ShippingLineUnreachable);
        request.updated_at = engine.clock.now();
        record(engine, status_before, read_at, &request, None).await?;
    }
    Ok(PollOutcome::Waiting(reason))
}

/// A request for a line Tidemark cannot track (no public tracking API) fails at once as
/// `data_unavailable`; a shipment of such a line stops being tracked.
async fn unavailable(
    engine: &Engine<'_>,
    status_before: TrackingRequestStatus,
    read_at: DateTime<Utc>,
    mut request: TrackingRequest,
    reason: &str,
) -> Result<PollOutcome, StoreError> {
    tracing::info!(tracking_request.id = %request.id, scac = %request.scac, reason, "the line cannot be tracked");
    let now = engine.clock.now();
    request.updated_at = now;
    request.polled_at = Some(now);
    if let Some(shipment_id) = request.shipment_id {
        let mut shipment = engine
            .store
            .shipment(request.account_id, shipment_id)
            .await?;
        shipment.line_tracking_last_attempted_at = Some(now);
        shipment.line_tracking_stopped_at = Some(now);
        shipment.line_tracking_stopped_reason = Some("data_unavailable".to_owned());
        request.status = TrackingRequestStatus::TrackingStopped;
        let update = TrackingUpdate::shipment_only(shipment);
        record(engine, status_before, read_at, &request, Some(&update)).await?;
        return Ok(PollOutcome::Failed(FailedReason::DataUnavailable));
    }
    let outcome = fail(&mut request, FailedReason::DataUnavailable);
    record(engine, status_before, read_at, &request, None).await?;
    Ok(outcome)
}

/// Writes the request's new state (and the update) with the domain events announcing them.
pub async fn record(
    engine: &Engine<'_>,
    status_before: TrackingRequestStatus,
    read_at: DateTime<Utc>,
    request: &TrackingRequest,
    update: Option<&TrackingUpdate>,
) -> Result<(), StoreError> {
    write(engine, status_before, read_at, request, update)
        .await?
        .run(engine)
        .await;
    Ok(())
}

/// [`record`]'s write, without what follows it.
async fn write(
    engine: &Engine<'_>,
    status_before: TrackingRequestStatus,
    read_at: DateTime<Utc>,
    request: &TrackingRequest,
    update: Option<&TrackingUpdate>,
) -> Result<AfterWrite, StoreError> {
    let events = events_of(
        status_before,
        request,
        update,
        engine.ids.as_ref(),
        engine.clock.now(),
    );
    engine
        .store
        .record_tracking_result(request, read_at, update, &events)
        .await?;
    Ok(AfterWrite {
        vessels: update
            .map(crate::use_cases::vessels::named_by)
            .unwrap_or_default(),
        notify: !events.is_empty(),
        sandbox_voyages: Vec::new(),
    })
}

/// What follows written tracking results, best effort: the vessels they name are
/// recorded, webhook deliveries are queued when they made domain events, and the sandbox's
/// vessels of requests just tracked report at once. A batch does this once for all of its
/// results.
#[derive(Debug, Default)]
struct AfterWrite {
    vessels: Vec<(String, Option<String>)>,
    notify: bool,
    /// The number and creation time of sandbox requests just tracked.
    sandbox_voyages: Vec<(String, DateTime<Utc>)>,
}

impl AfterWrite {
    fn merge(&mut self, other: Self) {
        self.vessels.extend(other.vessels);
        self.notify |= other.notify;
        self.sandbox_voyages.extend(other.sandbox_voyages);
    }

    async fn run(self, engine: &Engine<'_>) {
        crate::use_cases::vessels::learn_vessels_named(engine, &self.vessels).await;
        if self.notify {
            // New notifications go out now rather than at the next sweep; if this is
            // lost, the sweep queues them.
            if let Err(error) = crate::use_cases::webhooks::deliver::queue_due(engine).await {
                tracing::warn!(error = ?error, "cannot queue webhook deliveries; the sweep will");
            }
        }
        if let Some(transmitter) = &engine.sandbox_ais {
            for (number, created_at) in &self.sandbox_voyages {
                // The sandbox's vessel shows on the map now, not at the transmitter's next
                // tick. Best effort: that tick sends it anyway.
                if let Err(error) = crate::use_cases::vessels::sandbox::voyage_tracked(
                    engine,
                    engine.ais,
                    transmitter,
                    number,
                    *created_at,
                )
                .await
                {
                    tracing::warn!(error = ?error, "the sandbox vessel could not report at once");
                }
            }
        }
    }
}

/// A poll whose result lost the race to another write: nothing to do, the next sweep
/// polls again from fresh state.
fn raced(result: Result<PollOutcome, StoreError>) -> Result<PollOutcome, StoreError> {
    match result {
        Err(StoreError::Conflict {
            constraint: "tracking_request_changed",
        }) => Ok(PollOutcome::Skipped),
        other => other,
    }
}

fn fail(request: &mut TrackingRequest, reason: FailedReason) -> PollOutcome {
    request.status = TrackingRequestStatus::Failed;
    request.failed_reason = Some(reason);
    request.is_retrying = false;
    PollOutcome::Failed(reason)
}

/// The reference terminal the carrier names at the shipment's port of discharge (see
/// [`report::terminal_of`]). `None` when Tidemark does not know it.
fn pod_terminal(
    engine: &Engine<'_>,
    shipment: &Shipment,
    report: &tidemark_domain::tracking_update::CarrierReport,
) -> Option<uuid::Uuid> {
    let facility = report.pod_terminal.as_ref()?;
    let pod = shipment.port_of_discharge_locode.as_deref()?;
    report::terminal_of(engine.reference, pod, facility)
}

pub(crate) async fn record_found(
    engine: &Engine<'_>,
    status_before: TrackingRequestStatus,
    read_at: DateTime<Utc>,
    request: TrackingRequest,
    shipment: Option<Shipment>,
    report: &tidemark_domain::tracking_update::CarrierReport,
    now: DateTime<Utc>,
) -> Result<PollOutcome, StoreError> {
    let (outcome, after) = record_found_then(
        engine,
        status_before,
        read_at,
        request,
        shipment,
        report,
        now,
        None,
    )
    .await?;
    after.run(engine).await;
    Ok(outcome)
}

/// [`record_found`]'s plan and write, without what follows the write. `defined` as for
/// [`apply_edi_with`].
#[expect(
    clippy::too_many_arguments,
    reason = "the request as read, the report, and what a batch read once"
)]
async fn record_found_then(
    engine: &Engine<'_>,
    status_before: TrackingRequestStatus,
    read_at: DateTime<Utc>,
    mut request: TrackingRequest,
    shipment: Option<Shipment>,
    report: &tidemark_domain::tracking_update::CarrierReport,
    now: DateTime<Utc>,
    defined: Option<bool>,
) -> Result<(PollOutcome, AfterWrite), StoreError> {
    let (containers, events, raw_events) = match &shipment {
        Some(shipment) => (
            engine.store.containers_of_shipment(shipment.id).await?,
            engine
                .store
                .transport_events_of_shipment(shipment.id)
                .await?,
            engine.store.raw_events_of_shipment(shipment.id).await?,
        ),
        None => (Vec::new(), Vec::new(), Vec::new()),
    };
    let mut update = tracking_update::plan(
        &request,
        Known {
            shipment: shipment.as_ref(),
            containers: &containers,
            events: &events,
            raw_events: &raw_events,
        },
        report,
        engine.ids.as_ref(),
        now,
    );
    if let Some(terminal) = pod_terminal(engine, &update.shipment, report) {
        update.shipment.pod_terminal_id = Some(terminal);
    }
    update.shipment.line_tracking_last_attempted_at = Some(now);
    update.shipment.line_tracking_last_succeeded_at = Some(now);
    if let Some(reason) = tracking_update::stop_reason(&update, &containers, now) {
        update.shipment.line_tracking_stopped_at = Some(now);
        update.shipment.line_tracking_stopped_reason = Some(reason.to_owned());
        request.status = TrackingRequestStatus::TrackingStopped;
        request.shipment_id = Some(update.shipment.id);
        request.updated_at = now;
    } else if request.status != TrackingRequestStatus::Created || request.shipment_id.is_none() {
        request.status = TrackingRequestStatus::Created;
        request.failed_reason = None;
        request.is_retrying = false;
        request.shipment_id = Some(update.shipment.id);
        request.updated_at = now;
    }
    // Values staged with the request (`initial_custom_fields`) are written with what this
    // poll creates, in its transaction.
    update.initial_custom_field_values =
        crate::use_cases::custom_fields::staged_values(engine, &request, &update, defined).await?;
    let mut after = write(engine, status_before, read_at, &request, Some(&update)).await?;
    if status_before != TrackingRequestStatus::Created
        && request.status == TrackingRequestStatus::Created
        && request.scac == tidemark_carriers::sandbox::SCAC
    {
        after
            .sandbox_voyages
            .push((request.request_number.clone(), request.created_at));
    }
    Ok((PollOutcome::Tracked, after))
}
