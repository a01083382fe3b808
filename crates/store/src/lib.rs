//! The persistence port of Tidemark: the [`Store`] trait, its error type and the shared
//! contract suite every backend must pass.
//!
//! Methods are use-case sized and atomic: each runs its own transaction inside the backend,
//! so no transaction type has to cross the `dyn` boundary. This crate depends on `domain`
//! only; backends depend on it, never the other way round.

mod carriers;
#[cfg(feature = "contract-tests")]
pub mod contract;
mod custom_fields;
mod document_search;
mod documents;
mod edi;
mod error;
mod read_cache;
mod search;
mod shipment_read;
mod vessels;

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use tidemark_domain::tracking_update::TrackingUpdate;
use tidemark_domain::{
    Account, AccountId, ApiKey, ApiKeyId, Container, ContainerId, ContainerStatus, DeliveryStatus,
    DomainEvent, DomainEventId, Job, JobId, NewJob, NotificationLog, Party, PartyId, RawEvent,
    RawEventId, Shipment, ShipmentId, TrackingRequest, TrackingRequestId, TrackingRequestStatus,
    TransportEvent, TransportEventId, TransportEventName, Webhook, WebhookId, WebhookNotification,
    WebhookNotificationId,
};

pub use carriers::{CarrierStore, PollSchedule};
pub use custom_fields::{
    CustomFieldFilter, CustomFieldStore, DefinitionFilter, DefinitionRecord, EntityRef, NewValue,
    OptionRecord, ValueFilter, ValueRecord,
};
pub use document_search::{MAX_WORD_CHARS, WordSearch, document_words, prefix_end, search_words};
pub use documents::{
    DOCUMENT_BUCKET_SIZE, DirectUpload, DocumentClassification, DocumentFilter, DocumentSort,
    DocumentSortField, DocumentStore, EmailSubmission, LinkTargets, MailboxCursor, Representation,
    StoredDocument,
};
pub use edi::{EdiFinish, EdiMessage, EdiMessageFilter, EdiStore, EdiTransactionRecord};
pub use error::{BoxError, StoreError};
pub use read_cache::{RECENT_EVICTIONS, ReadCache, Ticket};
pub use search::{
    MAX_TERM_CHARS, SEARCH_SCAN_LIMIT, SearchEntry, SearchHit, SearchKind, rank_hits, search_key,
    terms_of,
};
pub use shipment_read::ShipmentRead;
pub use vessels::{
    AisPosition, Fix, PositionsRecorded, Vessel, VesselIdentity, VesselStore, thin_track,
};

pub type StoreResult<T> = Result<T, StoreError>;

/// Counts that operators watch on the job queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobQueueStats {
    /// Jobs due now or later that no worker holds.
    pub queued: u64,
    /// Jobs a worker holds under a lease.
    pub running: u64,
    /// When the oldest job that is due now became due.
    pub oldest_due_at: Option<DateTime<Utc>>,
}

/// Wakes this process's job runners when a job may have become due, so that work
/// committed now runs now instead of at the runners' next look at the queue (which stays as
/// the safety net). Each backend fires it after committing a job: SQLite in process, since
/// it has one process; PostgreSQL from the `NOTIFY` that every job insert sends on commit,
/// heard by every process's listener.
#[derive(Clone, Debug, Default)]
pub struct JobWakeups(std::sync::Arc<tokio::sync::Notify>);

impl JobWakeups {
    /// Wakes every runner waiting now, or that enabled its wait (see [`Self::notified`])
    /// before this call.
    pub fn wake(&self) {
        self.0.notify_waiters();
    }

    /// A wait for the next [`Self::wake`]. A runner enables it (`Notified::enable`)
    /// before it looks at the queue, so a job committed between the look and the wait
    /// still wakes it.
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.0.notified()
    }
}

/// How a finished attempt ends a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobOutcome {
    Succeeded,
    /// Run again at the given time.
    RetryAt {
        at: DateTime<Utc>,
        error: String,
    },
    /// Give up for good.
    Failed {
        error: String,
    },
}

/// The events a container's `transport_events` and `raw_events` relationships list
/// ([`Store::event_ids_of_containers`]), each in time order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerEventIds {
    pub transport_events: Vec<TransportEventId>,
    pub raw_events: Vec<RawEventId>,
}

/// A window of a list: `limit` items after skipping `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRequest {
    pub offset: u64,
    pub limit: u32,
}

/// One page of a list, and how many items match in all.
#[derive(Clone, Debug, PartialEq)]
pub struct Paged<T> {
    pub items: Vec<T>,
    pub total: u64,
}

/// Which tracking requests to list. Every set field must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrackingRequestFilter {
    /// Case-insensitive substring of the request number or of any ref number.
    pub q: Option<String>,
    /// Exact request number (case-insensitive).
    pub request_number: Option<String>,
    pub status: Option<TrackingRequestStatus>,
    pub scac: Option<String>,
    pub created_from: Option<DateTime<Utc>>,
    pub created_to: Option<DateTime<Utc>>,
    pub updated_from: Option<DateTime<Utc>>,
    pub updated_to: Option<DateTime<Utc>>,
}

/// Which shipments to list. Every set field must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShipmentFilter {
    /// Case-insensitive substring of the bill of lading, a ref number or a container number.
    pub q: Option<String>,
    /// The original request number, exactly (case-insensitive).
    pub number: Option<String>,
    pub tracking_stopped: Option<bool>,
    pub port_of_lading: Option<String>,
    pub port_of_discharge: Option<String>,
    pub scac: Option<String>,
    /// Shipments with at least one container in this status.
    pub container_status: Option<ContainerStatus>,
    pub updated_since: Option<DateTime<Utc>>,
    pub customer: Option<PartyId>,
    /// Shipments whose custom field values match every one of these.
    pub custom_fields: Vec<CustomFieldFilter>,
    /// Shipments carrying this tag (ignoring case).
    pub tag: Option<String>,
    /// Shipments not arrived yet whose ETA at the port of discharge is in this window
    /// (both ends included).
    pub arriving_between: Option<(DateTime<Utc>, DateTime<Utc>)>,
    /// Shipments with a container matching this.
    pub pickup: PickupFilter,
    /// The order of the list.
    pub sort: ShipmentSort,
}

/// The order of a shipment list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShipmentSort {
    /// Newest first (by creation).
    #[default]
    Newest,
    /// Soonest ETA at the port of discharge first; shipments without one last.
    EtaAscending,
    /// Latest ETA at the port of discharge first; shipments without one last.
    EtaDescending,
}

/// Which containers to list. Every set field must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerFilter {
    pub number: Option<String>,
    pub status: Option<ContainerStatus>,
    /// The shipment's port of lading or discharge.
    pub port: Option<String>,
    pub scac: Option<String>,
    pub updated_since: Option<DateTime<Utc>>,
    /// The shipment's customer.
    pub customer: Option<PartyId>,
    /// Containers whose custom field values match every one of these.
    pub custom_fields: Vec<CustomFieldFilter>,
    pub pickup: PickupFilter,
}

/// Containers by what they show about pick-up (for shipments: any of its containers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PickupFilter {
    pub available_for_pickup: Option<bool>,
    /// With (true) or without (false) a hold in force at the terminal.
    pub on_hold: Option<bool>,
    /// Not yet out, with a last free day on or before this day.
    pub pickup_lfd_by: Option<chrono::NaiveDate>,
}

impl PickupFilter {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Whom one terminal is asked about ([`Store::containers_awaiting_pickup`]): containers of
/// tracked shipments that are not yet out (neither gone full out nor returned empty), either
/// discharged, or not yet discharged with their port-of-discharge arrival (the container's
/// vessel arrival, else the shipment's ATA, else its ETA) at or before `arriving_by`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerminalSelection<'a> {
    /// The terminal asking (its configured id): the intervals below are measured from its
    /// own last ask about each container ([`Store::record_terminal_asks`]), never from
    /// another terminal's; a container it never asked counts as asked long ago.
    pub terminal: &'a str,
    /// Their shipment's port of discharge is one of these; any port when `None`.
    pub ports: Option<&'a [String]>,
    /// Of this line only, when given (the sandbox terminal's `TEST`).
    pub scac: Option<&'a str>,
    /// A container whose shipment names one of these POD terminals (reference terminal ids)
    /// is left out: another terminal reaches it and this one does not. Empty: none left out.
    pub other_terminals: &'a [uuid::Uuid],
    /// Discharged containers last asked by this terminal before this (never, first); an ask
    /// made before the container's discharge counts as none.
    pub discharged_checked_before: DateTime<Utc>,
    /// Containers not yet discharged, last asked by this terminal before this (never, first).
    pub arriving_checked_before: DateTime<Utc>,
    /// Containers not yet discharged are asked once their POD arrival is at or before this.
    pub arriving_by: DateTime<Utc>,
    /// Only containers not yet discharged: a batch kept for the arrivals, which a busy yard's
    /// discharged containers would otherwise always come before.
    pub arriving_only: bool,
    pub limit: u32,
}

/// A container a terminal is to be asked about ([`Store::containers_awaiting_pickup`]), with
/// what the ask needs from its shipment, so that a batch is one query.
#[derive(Clone, Debug, PartialEq)]
pub struct AwaitingPickup {
    pub container: Container,
    /// Its shipment's bill of lading number as stored (a container request's shipment shows
    /// the container number until the carrier names its bill).
    pub bill_of_lading_number: String,
}

/// Which webhook notifications to list. Every set field must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NotificationFilter {
    pub event: Option<String>,
    pub delivery_status: Option<DeliveryStatus>,
    pub webhook: Option<WebhookId>,
    pub created_from: Option<DateTime<Utc>>,
    pub created_to: Option<DateTime<Utc>>,
}

/// Which transport events to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransportEventFilter {
    pub event: Option<TransportEventName>,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
}

/// One delivery attempt to record: the notification's new state, how many attempts it had
/// when it was read, and the attempt's log.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedDelivery {
    pub notification: WebhookNotification,
    pub attempts_before: u32,
    pub log: Option<NotificationLog>,
}

/// What is known of an `Idempotency-Key` when a request carrying it arrives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdempotencyState {
    /// First use: the key is now reserved for this request.
    Started,
    /// Another request with this key has not finished yet.
    InProgress,
    /// A request with this key finished with this response.
    Completed {
        fingerprint: String,
        status: u16,
        body: Vec<u8>,
    },
}

#[async_trait]
/// Each feature's methods live in its own trait ([`VesselStore`], [`DocumentStore`],
/// [`CustomFieldStore`], [`CarrierStore`], [`EdiStore`]); `Store` is all of them, so callers
/// hold one `Arc<dyn Store>`.
pub trait Store:
    Send + Sync + VesselStore + DocumentStore + CustomFieldStore + CarrierStore + EdiStore
{
    /// Answers when the database does: used by `/readyz`.
    async fn ping(&self) -> StoreResult<()>;

    // Accounts and API keys.

    /// Creates an account; a taken name is `Conflict { constraint: "accounts_name" }`.
    async fn create_account(&self, account: &Account) -> StoreResult<()>;
    async fn account(&self, id: AccountId) -> StoreResult<Account>;
    async fn account_by_name(&self, name: &str) -> StoreResult<Option<Account>>;
    /// Creates `account` and `key` only when no account exists yet. Returns whether it did;
    /// safe when several processes start at once.
    async fn bootstrap_first_account(&self, account: &Account, key: &ApiKey) -> StoreResult<bool>;
    async fn insert_api_key(&self, key: &ApiKey) -> StoreResult<()>;
    /// The key with this hash, revoked or not.
    async fn api_key_by_hash(&self, hash: &str) -> StoreResult<Option<ApiKey>>;
    /// The account's keys, newest first.
    async fn list_api_keys(&self, account: AccountId) -> StoreResult<Vec<ApiKey>>;
    /// Revokes one of the account's keys. Another account's key is `NotFound`.
    async fn revoke_api_key(
        &self,
        account: AccountId,
        id: ApiKeyId,
        at: DateTime<Utc>,
    ) -> StoreResult<ApiKey>;
    /// Ends a console session: `token_hash` names it (a hash of its signed cookie), and it
    /// is refused until `expires_at`, its natural end. Rows already past their end are
    /// deleted on the way (`now`).
    async fn end_console_session(
        &self,
        token_hash: &str,
        expires_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// Whether the console session named by `token_hash` was ended.
    async fn console_session_ended(&self, token_hash: &str) -> StoreResult<bool>;

    // The durable job queue.

    /// Queues a job. If `dedup_key` is set and a job with that key is still queued, nothing
    /// is added and that job's id is returned; if that job is running, nothing is added
    /// either, but the running job is queued once more (due at once) when its attempt
    /// finishes, since it may have started before the work this call announces. Either way
    /// the job's id is returned, and [`Store::job_wakeups`] fires after the commit.
    async fn enqueue_job(&self, job: &NewJob, now: DateTime<Utc>) -> StoreResult<JobId>;
    /// Fires when a job may have become due: after every commit that queues one, in any
    /// process sharing the database. Runners still look at the queue now and then.
    fn job_wakeups(&self) -> JobWakeups;
    /// Claims up to `limit` due jobs for `lease`: each claimed job's `attempts` grows by one,
    /// and no other claim returns it until the lease expires. A job whose worker died on
    /// its final attempt is marked failed instead of being claimed again.
    async fn claim_jobs(
        &self,
        now: DateTime<Utc>,
        lease: Duration,
        limit: u32,
    ) -> StoreResult<Vec<Job>>;
    /// Moves the lease of each `(job, attempt)` still held by that attempt to `until`: the
    /// heartbeat of a living worker, so that a short lease is enough to notice a dead one.
    /// Returns how many leases were extended (an attempt that lost its job is skipped).
    async fn extend_job_leases(
        &self,
        held: &[(JobId, u32)],
        until: DateTime<Utc>,
    ) -> StoreResult<u64>;
    /// Ends, as of `now`, the leases that no living worker can hold when a worker process
    /// starts, so their jobs are claimed again at once; returns how many. SQLite has one
    /// process, so every lease is its dead predecessor's; PostgreSQL's workers are many, so
    /// there none is taken back here: a dead worker's leases simply stop being extended.
    async fn release_orphaned_jobs(&self, now: DateTime<Utc>) -> StoreResult<u64>;
    /// Records the end of attempt number `attempt` of a job. Returns `Conflict` when that
    /// attempt no longer holds the job (its lease expired and another worker took it).
    async fn finish_job(
        &self,
        id: JobId,
        attempt: u32,
        outcome: &JobOutcome,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;
    async fn job(&self, id: JobId) -> StoreResult<Job>;
    async fn job_queue_stats(&self, now: DateTime<Utc>) -> StoreResult<JobQueueStats>;
    /// Deletes succeeded and failed jobs last updated before `before`; returns how many.
    async fn purge_finished_jobs(&self, before: DateTime<Utc>) -> StoreResult<u64>;

    // Tracking requests.

    /// Stores a new tracking request. Another request of the same account for the same SCAC
    /// and number that is `pending`, `awaiting_manifest`, `created` or `tracking_stopped` is
    /// `Conflict { constraint: "tracking_requests_active_number" }`.
    async fn create_tracking_request(&self, request: &TrackingRequest) -> StoreResult<()>;
    /// One of the account's requests; another account's is `NotFound`.
    async fn tracking_request(
        &self,
        account: AccountId,
        id: TrackingRequestId,
    ) -> StoreResult<TrackingRequest>;
    /// Several of the account's requests at once, in no particular order (ids of other
    /// accounts and unknown ids are left out).
    async fn tracking_requests_by_ids(
        &self,
        account: AccountId,
        ids: &[TrackingRequestId],
    ) -> StoreResult<Vec<TrackingRequest>>;
    /// The account's requests matching `filter`, newest first.
    async fn list_tracking_requests(
        &self,
        account: AccountId,
        filter: &TrackingRequestFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<TrackingRequest>>;
    /// Replaces a request's ref numbers.
    async fn update_tracking_request_ref_numbers(
        &self,
        account: AccountId,
        id: TrackingRequestId,
        ref_numbers: &[String],
        now: DateTime<Utc>,
    ) -> StoreResult<TrackingRequest>;

    /// Every account's `pending`, `awaiting_manifest` or `created` requests for one of these
    /// numbers at this carrier: whom a carrier's pushed event concerns.
    async fn active_tracking_requests_for(
        &self,
        scac: &str,
        numbers: &[String],
    ) -> StoreResult<Vec<TrackingRequest>>;
    /// Requests still waiting for the carrier (`pending` or `awaiting_manifest`), oldest
    /// first, across accounts: the poll scheduler's input.
    async fn unresolved_tracking_requests(&self, limit: u32) -> StoreResult<Vec<TrackingRequest>>;

    // Shipments, containers and transport events.

    /// Writes the outcome of one poll (or a stop or resume) in one transaction: the
    /// request's new state, the shipment, containers and events of `update` when there is
    /// one, and the domain events that announce them (the outbox), with a webhook
    /// notification per event and subscribed active webhook (none while a user has stopped
    /// the shipment's tracking).
    ///
    /// Optimistic: the request must still have the `updated_at` it was read with, and no
    /// other shipment, else nothing is written and the result is `Conflict { constraint:
    /// "tracking_request_changed" }` (someone stopped it meanwhile, or another poll won).
    /// A poll never overwrites the shipment's ref numbers and tags, which users own.
    /// Backends may write results recorded at once together, but each gets its own outcome.
    async fn record_tracking_result(
        &self,
        request: &TrackingRequest,
        read_at: DateTime<Utc>,
        update: Option<&TrackingUpdate>,
        events: &[DomainEvent],
    ) -> StoreResult<()>;
    /// The account's domain events after `after` (all when `None`), oldest first.
    async fn domain_events(
        &self,
        account: AccountId,
        after: Option<DomainEventId>,
        limit: u32,
    ) -> StoreResult<Vec<DomainEvent>>;
    /// One of the account's shipments.
    async fn shipment(&self, account: AccountId, id: ShipmentId) -> StoreResult<Shipment>;
    /// Several of the account's shipments at once (ids of other accounts are left out).
    async fn shipments_by_ids(
        &self,
        account: AccountId,
        ids: &[ShipmentId],
    ) -> StoreResult<Vec<Shipment>>;
    /// The account's shipments matching `filter`, newest first.
    async fn list_shipments(
        &self,
        account: AccountId,
        filter: &ShipmentFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<Shipment>>;
    /// Saves a shipment's user-editable fields: ref numbers and tags.
    async fn update_shipment(&self, shipment: &Shipment) -> StoreResult<()>;
    /// Up to `limit` shipments still being tracked and last polled at or before
    /// `due_before` (never-polled ones count from their creation), longest waiting first,
    /// across accounts: the poll scheduler's input. Indexed on that time, so a tick costs
    /// the same however many shipments are tracked.
    async fn shipments_to_poll(
        &self,
        due_before: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<Shipment>>;
    /// A shipment's containers, by number.
    async fn containers_of_shipment(&self, shipment: ShipmentId) -> StoreResult<Vec<Container>>;
    /// One of the account's shipments with its containers (by number), read together: what
    /// a shipment's resource shows, in one visit to the database. A backend may serve it
    /// from memory: then every change to the shipment or its containers, by any
    /// writer is seen by the next read, and the same `Arc` is handed out until then.
    async fn shipment_with_containers(
        &self,
        account: AccountId,
        id: ShipmentId,
    ) -> StoreResult<std::sync::Arc<ShipmentRead>>;
    /// Across accounts, up to `limit` containers a terminal should be asked about now (see
    /// [`TerminalSelection`]): the discharged ones first, longest unasked by that terminal
    /// first; then those not yet discharged, nearest arrival first (then longest unasked).
    /// Each comes with its shipment's bill of lading, read in the same query.
    async fn containers_awaiting_pickup(
        &self,
        selection: &TerminalSelection<'_>,
    ) -> StoreResult<Vec<AwaitingPickup>>;
    /// Notes that `terminal` asked about these containers `at` (one statement for the
    /// batch), replacing its earlier ask of each; other terminals' asks are untouched. Ids
    /// of containers that do not exist are not kept.
    async fn record_terminal_asks(
        &self,
        terminal: &str,
        containers: &[ContainerId],
        at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// Housekeeping: forgets every terminal's asks of containers no terminal asks about any
    /// more (gone full out, returned empty, their shipment's tracking stopped, or the
    /// container gone), in one pass over the asks kept; returns how many. Kept out of
    /// [`Store::record_terminal_asks`], which runs for every batch of every terminal: a pass
    /// there cost a lookup per kept ask each time. A row another writer holds at that moment
    /// may be left to the next pass.
    async fn forget_finished_terminal_asks(&self) -> StoreResult<u64>;
    /// The containers `terminal` has a last ask kept for (by id), with when it asked: what
    /// [`Store::record_terminal_asks`] keeps.
    async fn terminal_asks(&self, terminal: &str)
    -> StoreResult<Vec<(ContainerId, DateTime<Utc>)>>;
    /// The containers of several shipments at once (one query for a page of shipments), by
    /// shipment then number.
    async fn containers_of_shipments(
        &self,
        shipments: &[ShipmentId],
    ) -> StoreResult<Vec<Container>>;
    /// Every recorded event of a shipment's containers.
    async fn transport_events_of_shipment(
        &self,
        shipment: ShipmentId,
    ) -> StoreResult<Vec<TransportEvent>>;
    /// One of the account's transport events.
    async fn transport_event(
        &self,
        account: AccountId,
        id: TransportEventId,
    ) -> StoreResult<TransportEvent>;
    /// One of the account's containers.
    async fn container(&self, account: AccountId, id: ContainerId) -> StoreResult<Container>;
    /// Saves a container's user-editable fields: its ref numbers (and `updated_at`).
    /// Another account's container is `NotFound`.
    async fn update_container(&self, container: &Container) -> StoreResult<()>;
    /// The account's containers matching `filter`, most recently updated first.
    async fn list_containers(
        &self,
        account: AccountId,
        filter: &ContainerFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<Container>>;
    /// A container's events matching `filter`, in time order.
    async fn transport_events_of_container(
        &self,
        account: AccountId,
        container: ContainerId,
        filter: &TransportEventFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<TransportEvent>>;
    /// Every raw carrier event of a shipment (for planning the next poll's changes).
    async fn raw_events_of_shipment(&self, shipment: ShipmentId) -> StoreResult<Vec<RawEvent>>;
    /// The raw carrier events concerning one of the account's containers (its own and its
    /// vessel's), in time order.
    async fn raw_events_of_container(
        &self,
        account: AccountId,
        container: ContainerId,
    ) -> StoreResult<Vec<RawEvent>>;
    /// The ids of the events each of these containers of the account lists in its
    /// relationships, in two queries however many containers there are: its transport
    /// events, and the raw events concerning it (as [`Store::raw_events_of_container`]),
    /// each in time order. Containers without events, and other accounts', are left out.
    async fn event_ids_of_containers(
        &self,
        account: AccountId,
        containers: &[ContainerId],
    ) -> StoreResult<HashMap<ContainerId, ContainerEventIds>>;

    // Search (`GET /v2/search`).

    /// The account's shipments, containers and tracking requests having a term that starts
    /// with `key` (a [`search_key`]), from at most `scan` index rows, ranked by
    /// [`rank_hits`]. Terms are written with the entities, in the same transactions.
    async fn search(&self, account: AccountId, key: &str, scan: u32)
    -> StoreResult<Vec<SearchHit>>;

    // Parties (customers).

    /// Fails with `Conflict` when the account has a party of that name (ignoring case).
    async fn create_party(&self, party: &Party) -> StoreResult<()>;
    async fn party(&self, account: AccountId, id: PartyId) -> StoreResult<Party>;
    /// Newest first.
    async fn list_parties(
        &self,
        account: AccountId,
        page: PageRequest,
    ) -> StoreResult<Paged<Party>>;
    /// Renames a party; `Conflict` when the name is taken.
    async fn update_party(&self, party: &Party) -> StoreResult<()>;

    // Webhooks. Notifications are made by `record_tracking_result` from its domain events,
    // in its transaction.

    async fn create_webhook(&self, webhook: &Webhook) -> StoreResult<()>;
    async fn webhook(&self, account: AccountId, id: WebhookId) -> StoreResult<Webhook>;
    /// Newest first.
    async fn list_webhooks(
        &self,
        account: AccountId,
        page: PageRequest,
    ) -> StoreResult<Paged<Webhook>>;
    /// Saves every field but the id, account and creation time.
    async fn update_webhook(&self, webhook: &Webhook) -> StoreResult<()>;
    /// Records a webhook's delivery health: `failing_since` (None after a success) and,
    /// when `deactivate`, `active = false`. Touches nothing a user edits.
    async fn record_webhook_health(
        &self,
        account: AccountId,
        id: WebhookId,
        failing_since: Option<DateTime<Utc>>,
        deactivate: bool,
    ) -> StoreResult<()>;
    /// Deletes the webhook with its notifications and their logs.
    async fn delete_webhook(&self, account: AccountId, id: WebhookId) -> StoreResult<()>;
    async fn notification(
        &self,
        account: AccountId,
        id: WebhookNotificationId,
    ) -> StoreResult<WebhookNotification>;
    /// Newest first.
    async fn list_notifications(
        &self,
        account: AccountId,
        filter: &NotificationFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<WebhookNotification>>;
    /// The webhooks that have notifications due (any account).
    async fn webhooks_with_due_notifications(
        &self,
        due_before: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<(AccountId, WebhookId)>>;
    /// Takes up to `limit` of a webhook's due notifications, longest waiting first, by
    /// moving their next attempt to `lease_until`: no other worker takes them meanwhile,
    /// and if this one dies they are due again then.
    async fn claim_notifications(
        &self,
        webhook: WebhookId,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<WebhookNotification>>;
    /// Makes the webhook's claimed but unrecorded notifications due at `now` again, and
    /// returns how many. The one delivery job of a webhook calls it as it starts: a claim
    /// it finds was left by an attempt that died (a killed process), and would otherwise
    /// wait out its whole lease.
    async fn release_notification_claims(
        &self,
        webhook: WebhookId,
        now: DateTime<Utc>,
    ) -> StoreResult<u64>;
    /// Saves a notification's new delivery state with the log of the attempt that led to it
    /// (if any), fenced on the attempts it had when read: `Conflict` if another worker
    /// recorded an attempt meanwhile.
    async fn record_delivery(
        &self,
        notification: &WebhookNotification,
        attempts_before: u32,
        log: Option<&NotificationLog>,
    ) -> StoreResult<()> {
        let recorded = self
            .record_deliveries(&[RecordedDelivery {
                notification: notification.clone(),
                attempts_before,
                log: log.cloned(),
            }])
            .await?;
        if recorded.first().copied().unwrap_or(false) {
            Ok(())
        } else {
            Err(StoreError::Conflict {
                constraint: "notification_changed",
            })
        }
    }
    /// Saves several delivery attempts in one transaction (one commit per batch is what
    /// lets PostgreSQL keep up). Each is fenced as in [`Store::record_delivery`]; the result
    /// says, in order, which were recorded (`false`: another worker got there first, and
    /// that one's log is not written).
    async fn record_deliveries(&self, deliveries: &[RecordedDelivery]) -> StoreResult<Vec<bool>>;
    /// A notification's delivery attempts, in order.
    async fn notification_logs(
        &self,
        account: AccountId,
        id: WebhookNotificationId,
    ) -> StoreResult<Vec<NotificationLog>> {
        self.notification_logs_of(account, &[id]).await
    }
    /// The delivery attempts of several notifications at once (one query for a page), by
    /// notification then attempt.
    async fn notification_logs_of(
        &self,
        account: AccountId,
        ids: &[WebhookNotificationId],
    ) -> StoreResult<Vec<NotificationLog>>;

    // Idempotency keys (the `Idempotency-Key` header).

    /// Reserves `key` for a request with `fingerprint`, or reports its earlier use.
    async fn begin_idempotent_request(
        &self,
        account: AccountId,
        key: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<IdempotencyState>;
    /// Records the response of the request that reserved `key`.
    async fn complete_idempotent_request(
        &self,
        account: AccountId,
        key: &str,
        status: u16,
        body: &[u8],
    ) -> StoreResult<()>;
    /// Releases `key` after a failure that the client should be able to retry.
    async fn abandon_idempotent_request(&self, account: AccountId, key: &str) -> StoreResult<()>;
    /// Forgets keys first used before `before`; returns how many.
    async fn purge_idempotency_keys(&self, before: DateTime<Utc>) -> StoreResult<u64>;

    // Settings the processes share (generated once, kept in the database).

    /// The stored value of setting `name`; when there is none yet, `proposed` is stored
    /// and returned. Processes racing to set it all get the value stored first.
    async fn setting_or_init(&self, name: &str, proposed: &str) -> StoreResult<String>;
}
