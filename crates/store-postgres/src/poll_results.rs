//! Poll results on PostgreSQL: each written by one statement, and results that arrive
//! together written by the same statement.
//!
//! A poll's result is its tracking request moved on, the shipment, its containers, their
//! search terms, transport and raw events, domain events and webhook notifications. One
//! statement of data-modifying `WITH` queries writes them all, each table's rows sent as
//! column arrays. A statement is its own transaction: no `BEGIN` or `COMMIT` to wait for.
//!
//! Polls run several at once, and a statement's fixed costs (setting up its dozen parts,
//! the owner checks of migration 30, which run once per statement, the commit, the round
//! trip) are a large share of a small result. So results go to two writers, each of which
//! takes every result waiting when it is free (up to [`MOST_RESULTS_PER_STATEMENT`]) and
//! writes them with one statement. A result that finds nothing else being written is
//! written at once; while a statement is being written, the other writer gathers a few
//! results before starting its own (see [`FEWEST_TO_OVERLAP`]), for at most
//! [`MOST_GATHERING`]. Each result still stands alone: its rows are written only when its
//! own request was moved on, and a statement that fails is tried again one result at a
//! time, so that a bad result fails alone. A caller is answered once its statement is
//! committed.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use deadpool_postgres::{GenericClient, Pool};
use tidemark_domain::tracking_update::TrackingUpdate;
use tidemark_domain::webhook::notifications_for;
use tidemark_domain::{
    AccountId, Container, DomainEvent, FailedReason, RawEvent, TrackingRequest, TransportEvent,
    Webhook, WebhookNotification,
};
use tidemark_store::{SearchEntry, StoreError, StoreResult};
use tokio::sync::{Mutex, Notify, mpsc, oneshot};
use tokio::time::Instant;
use uuid::Uuid;

use crate::convert::{backend, to_int};
use crate::shipments::{
    CONTAINER_UPSERT, EVENT_UPSERT, RAW_EVENT_UPSERT, SHIPMENT_UPSERT, container_rows,
    domain_event_rows, event_rows, raw_event_rows, shipment_rows,
};
use crate::unnest::{Param, Rows, as_refs};

/// Most results one statement writes: enough to share its fixed costs among many, few
/// enough that one result's turn never waits long behind the others'.
const MOST_RESULTS_PER_STATEMENT: usize = 16;

/// Fewest results a writer starts a statement with while another is being written, unless
/// that one finishes first: a statement's fixed costs are about those of four results' rows
/// (a statement of one result took 8 ms on a loaded two-core machine, each further result
/// 1.5 ms more), so fewer would spend more on the statement than on the rows.
const FEWEST_TO_OVERLAP: usize = 4;

/// Longest a writer gathers results for a statement while another is being written.
const MOST_GATHERING: Duration = Duration::from_millis(5);

/// Statements written at once: the database works on one while the next is gathered and
/// sent. More would split the same results into smaller statements.
pub(crate) const WRITERS: usize = 2;

/// A poll's result as `Store::record_tracking_result` takes it.
#[derive(Clone, Copy)]
pub(crate) struct PollResult<'a> {
    pub request: &'a TrackingRequest,
    /// When the poll read the request: the request is moved on only if it is unchanged since.
    pub read_at: DateTime<Utc>,
    pub update: Option<&'a TrackingUpdate>,
    pub events: &'a [DomainEvent],
}

impl PollResult<'_> {
    /// The shipment the result writes, if any: no two results of one statement may write
    /// the same one (a statement changes a row once).
    fn shipment(&self) -> Option<Uuid> {
        self.update
            .map(|u| u.shipment.id.0)
            .or(self.request.shipment_id.map(|id| id.0))
    }

    /// A request's initial custom field values, which take a transaction of their own
    /// (code writes their index rows).
    fn custom_values(&self) -> &[tidemark_domain::custom_fields::NewValue] {
        self.update
            .map_or(&[][..], |u| u.initial_custom_field_values.as_slice())
    }
}

/// A result handed to the writers, and where its outcome goes.
struct Queued {
    request: TrackingRequest,
    read_at: DateTime<Utc>,
    update: Option<TrackingUpdate>,
    events: Vec<DomainEvent>,
    written: oneshot::Sender<StoreResult<()>>,
}

impl Queued {
    fn result(&self) -> PollResult<'_> {
        PollResult {
            request: &self.request,
            read_at: self.read_at,
            update: self.update.as_ref(),
            events: &self.events,
        }
    }

    fn answer(self, outcome: StoreResult<()>) {
        // The caller may have stopped waiting; what was written stays written.
        let _ = self.written.send(outcome);
    }
}

/// A store's poll result writers.
pub(crate) struct ResultWriters {
    queue: mpsc::Sender<Queued>,
    /// For the results written alone, outside the writers.
    pool: Pool,
}

impl ResultWriters {
    /// Starts `writers` writers (at least one) on `pool`, on the current Tokio runtime.
    /// They stop once this is dropped and the results queued are written.
    pub fn spawn(pool: &Pool, writers: usize) -> Self {
        let writers = writers.max(1);
        let (queue, waiting) = mpsc::channel(writers * MOST_RESULTS_PER_STATEMENT * 4);
        let waiting = Arc::new(Mutex::new(waiting));
        let writing = Arc::new(Writing::default());
        for _ in 0..writers {
            tokio::spawn(write_results(
                pool.clone(),
                Arc::clone(&waiting),
                Arc::clone(&writing),
            ));
        }
        Self {
            queue,
            pool: pool.clone(),
        }
    }

    /// Writes `result`, with whichever other results are waiting.
    pub async fn record(&self, result: PollResult<'_>) -> StoreResult<()> {
        if !result.custom_values().is_empty() {
            return record_alone(&self.pool, result).await;
        }
        let (written, outcome) = oneshot::channel();
        let queued = Queued {
            request: result.request.clone(),
            read_at: result.read_at,
            update: result.update.cloned(),
            events: result.events.to_vec(),
            written,
        };
        if self.queue.send(queued).await.is_err() {
            // The writers are gone with the runtime that started them: write it here.
            return record_alone(&self.pool, result).await;
        }
        outcome.await.unwrap_or_else(|_| {
            Err(backend(
                "the poll result's writer stopped before saying whether it was written",
            ))
        })
    }
}

/// A writer: takes what is waiting, writes it, answers, and again.
async fn write_results(
    pool: Pool,
    waiting: Arc<Mutex<mpsc::Receiver<Queued>>>,
    writing: Arc<Writing>,
) {
    let mut taken = Vec::with_capacity(MOST_RESULTS_PER_STATEMENT);
    loop {
        let mut receiver = waiting.lock().await;
        if receiver
            .recv_many(&mut taken, MOST_RESULTS_PER_STATEMENT)
            .await
            == 0
        {
            return;
        }
        // While another statement is being written, gather results until there are enough
        // to be worth their own statement, that one finishes, or a moment passes. A store
        // with nothing else being written writes at once.
        let deadline = Instant::now() + MOST_GATHERING;
        loop {
            let finished = writing.finished.notified();
            tokio::pin!(finished);
            finished.as_mut().enable();
            if taken.len() >= FEWEST_TO_OVERLAP || !writing.busy() {
                break;
            }
            tokio::select! {
                more = receiver.recv() => match more {
                    Some(queued) => taken.push(queued),
                    None => break,
                },
                () = &mut finished => break,
                () = tokio::time::sleep_until(deadline) => break,
            }
        }
        // Counted busy before the next writer may look.
        writing.started();
        drop(receiver);
        write_taken(&pool, &mut taken).await;
        writing.finished();
    }
}

/// How many statements the writers are writing.
#[derive(Default)]
struct Writing {
    statements: AtomicUsize,
    finished: Notify,
}

impl Writing {
    fn started(&self) {
        self.statements.fetch_add(1, Ordering::AcqRel);
    }

    fn finished(&self) {
        self.statements.fetch_sub(1, Ordering::AcqRel);
        self.finished.notify_waiters();
    }

    fn busy(&self) -> bool {
        self.statements.load(Ordering::Acquire) > 0
    }
}

/// Writes and answers every result in `taken`, as few statements as can carry them.
async fn write_taken(pool: &Pool, taken: &mut Vec<Queued>) {
    // One order for every statement's row locks, so that two statements writing the same
    // shipments cannot deadlock.
    taken.sort_by_key(|queued| queued.result().shipment());
    while !taken.is_empty() {
        let together = take_together(taken);
        let results: Vec<PollResult<'_>> = together.iter().map(Queued::result).collect();
        let outcome = match pool.get().await {
            Ok(client) => write_together(&client, &results).await,
            Err(error) => Err(backend(error)),
        };
        match outcome {
            Ok(moved) => {
                for (queued, moved) in together.into_iter().zip(moved) {
                    queued.answer(moved_on(moved));
                }
            }
            Err(error) if together.len() == 1 => {
                if let Some(queued) = together.into_iter().next() {
                    queued.answer(Err(error));
                }
            }
            // One result made the statement fail, or it met a passing trouble: each on its
            // own, so each gets its own outcome.
            Err(_) => {
                for queued in together {
                    let outcome = record_alone(pool, queued.result()).await;
                    queued.answer(outcome);
                }
            }
        }
    }
}

/// Takes from `taken` the results that can share a statement: no two of the same request
/// or shipment. The rest stay for the next statement, in order.
fn take_together(taken: &mut Vec<Queued>) -> Vec<Queued> {
    let mut written = HashSet::new();
    let (together, later): (Vec<Queued>, Vec<Queued>) = taken.drain(..).partition(|queued| {
        let result = queued.result();
        let new_request = written.insert(result.request.id.0);
        let new_shipment = result.shipment().is_none_or(|id| written.insert(id));
        new_request && new_shipment
    });
    *taken = later;
    together
}

/// Writes one result with a connection of its own, in a transaction when it has initial
/// custom field values.
async fn record_alone(pool: &Pool, result: PollResult<'_>) -> StoreResult<()> {
    let mut client = pool.get().await.map_err(backend)?;
    let custom_values = result.custom_values();
    if custom_values.is_empty() {
        let moved = write_together(&client, &[result]).await?;
        return moved_on(moved.first().copied().unwrap_or(false));
    }
    let tx = client.transaction().await.map_err(backend)?;
    let moved = write_together(&tx, &[result]).await?;
    // Returning drops the transaction, which rolls back what the statement wrote.
    moved_on(moved.first().copied().unwrap_or(false))?;
    for value in custom_values {
        crate::custom_fields::write_value(&tx, value, true).await?;
    }
    tx.commit().await.map_err(backend)
}

/// A result's outcome from whether its request was moved on: when it was not, the request
/// changed since the poll read it and nothing of the result was written.
fn moved_on(moved: bool) -> StoreResult<()> {
    if moved {
        Ok(())
    } else {
        Err(StoreError::Conflict {
            constraint: "tracking_request_changed",
        })
    }
}

/// Writes `results` with one statement; says for each whether its request was moved on
/// (and so whether anything of it was written).
async fn write_together(
    client: &impl GenericClient,
    results: &[PollResult<'_>],
) -> StoreResult<Vec<bool>> {
    let (notified, notifications) = notifications(client, results).await?;
    let writes = Writes::of(results, &notifications, notified)?;
    let statement = client
        .prepare_cached(&writes.sql())
        .await
        .map_err(backend)?;
    let rows = client
        .query(&statement, &as_refs(&writes.params))
        .await
        .map_err(backend)?;
    let mut moved = vec![false; results.len()];
    for row in rows {
        let item: i32 = row.try_get(0).map_err(backend)?;
        if let Some(moved) = usize::try_from(item).ok().and_then(|i| moved.get_mut(i)) {
            *moved = true;
        }
    }
    Ok(moved)
}

/// The webhook notifications of the results' domain events, and each one's result's place.
/// The webhooks are read before the write rather than inside a transaction with it: either
/// way a webhook added meanwhile gets notified from the next change on.
async fn notifications(
    client: &impl GenericClient,
    results: &[PollResult<'_>],
) -> StoreResult<(Vec<i32>, Vec<WebhookNotification>)> {
    let mut accounts: Vec<Uuid> = results
        .iter()
        .filter(|result| !result.events.is_empty())
        .map(|result| result.request.account_id.0)
        .collect();
    if accounts.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    accounts.sort_unstable();
    accounts.dedup();
    let mut webhooks: HashMap<AccountId, Vec<Webhook>> = HashMap::new();
    for webhook in crate::webhooks::active_webhooks(client, &accounts).await? {
        webhooks
            .entry(webhook.account_id)
            .or_default()
            .push(webhook);
    }
    let (mut items, mut notifications) = (Vec::new(), Vec::new());
    for (item, result) in (0..).zip(results) {
        let Some(theirs) = webhooks.get(&result.request.account_id) else {
            continue;
        };
        let paused = result
            .update
            .is_some_and(|u| u.shipment.notifications_paused());
        let theirs = notifications_for(result.events, theirs, paused);
        items.extend(std::iter::repeat_n(item, theirs.len()));
        notifications.extend(theirs);
    }
    Ok((items, notifications))
}

/// One statement of data-modifying `WITH` queries and its parameters.
struct Writes<'a> {
    queries: Vec<String>,
    params: Vec<Param<'a>>,
}

impl<'a> Writes<'a> {
    /// The writes of `results`, each table after the ones its rows refer to.
    fn of(
        results: &[PollResult<'a>],
        notifications: &'a [WebhookNotification],
        notified: Vec<i32>,
    ) -> StoreResult<Self> {
        let mut writes = Self::moving_on(results)?;
        let (shipments, items) = gather(results, |u| [&u.shipment]);
        writes.insert(
            "shipments",
            shipment_rows(&shipments).items(items),
            SHIPMENT_UPSERT,
        );
        let (containers, items): (Vec<&Container>, _) = gather(results, |u| {
            u.new_containers.iter().chain(&u.changed_containers)
        });
        writes.insert(
            "containers",
            container_rows(&containers)?.items(items),
            CONTAINER_UPSERT,
        );
        writes.insert(
            "search_terms",
            crate::search::term_rows(new_search_entries(results)),
            "ON CONFLICT DO NOTHING",
        );
        let (new_events, items): (Vec<&TransportEvent>, _) = gather(results, |u| &u.new_events);
        writes.insert("transport_events", event_rows(&new_events).items(items), "");
        let (corrected, items): (Vec<&TransportEvent>, _) =
            gather(results, |u| &u.corrected_events);
        writes.insert(
            "transport_events",
            event_rows(&corrected).items(items),
            EVENT_UPSERT,
        );
        let (raw_events, items): (Vec<&RawEvent>, _) = gather(results, |u| &u.raw_events);
        writes.insert(
            "raw_events",
            raw_event_rows(&raw_events).items(items),
            RAW_EVENT_UPSERT,
        );
        let (mut events, mut items) = (Vec::new(), Vec::new());
        for (item, result) in (0..).zip(results) {
            events.extend(result.events);
            items.extend(std::iter::repeat_n(item, result.events.len()));
        }
        writes.insert("domain_events", domain_event_rows(&events).items(items), "");
        writes.insert(
            "webhook_notifications",
            crate::webhooks::notification_rows(notifications)?.items(notified),
            "ON CONFLICT (id) DO NOTHING",
        );
        Ok(writes)
    }

    /// Starts with `request`, which moves each result's tracking request on as its poll
    /// left it when nobody changed it since the poll read it, and returns the result's
    /// place then.
    fn moving_on(results: &[PollResult<'a>]) -> StoreResult<Self> {
        let requests: Vec<&TrackingRequest> = results.iter().map(|r| r.request).collect();
        let retry_counts: Vec<Option<i32>> = requests
            .iter()
            .map(|request| request.retry_count.map(to_int).transpose())
            .collect::<StoreResult<_>>()?;
        let rows = Rows::new(results.len())
            .column("id", "uuid", requests.iter().map(|r| r.id.0).collect())
            .column(
                "status",
                "text",
                requests.iter().map(|r| r.status.as_str()).collect(),
            )
            .column(
                "failed_reason",
                "text",
                requests
                    .iter()
                    .map(|r| r.failed_reason.map(FailedReason::as_str))
                    .collect(),
            )
            .column(
                "is_retrying",
                "bool",
                requests.iter().map(|r| r.is_retrying).collect(),
            )
            .column("retry_count", "int4", retry_counts)
            .column(
                "shipment_id",
                "uuid",
                requests
                    .iter()
                    .map(|r| r.shipment_id.map(|id| id.0))
                    .collect(),
            )
            .column(
                "updated_at",
                "timestamptz",
                requests.iter().map(|r| r.updated_at).collect(),
            )
            .column(
                "read_at",
                "timestamptz",
                results.iter().map(|r| r.read_at).collect(),
            )
            .column(
                "polled_at",
                "timestamptz",
                requests.iter().map(|r| r.polled_at).collect(),
            )
            .items((0..).zip(results).map(|(item, _)| item).collect());
        // `t.id = ANY($1)` (the ids' column) so that the requests are found by key: joined
        // to the unnested rows alone, a small table is read whole.
        let query = format!(
            "request AS (UPDATE tracking_requests t SET status = r.status,
                failed_reason = r.failed_reason, is_retrying = r.is_retrying,
                retry_count = r.retry_count, shipment_id = r.shipment_id,
                updated_at = r.updated_at, polled_at = r.polled_at
             FROM {}
             WHERE t.id = ANY($1) AND t.id = r.id AND t.updated_at = r.read_at
                AND (t.shipment_id IS NULL OR t.shipment_id = r.shipment_id)
             RETURNING r.item)",
            rows.unnest_sql(1)
        );
        Ok(Self {
            queries: vec![query],
            params: rows.into_params(),
        })
    }

    /// Inserts the rows of the results whose request was moved on into `table`;
    /// `on_conflict` may be empty. No rows, no query: the statement's text then differs
    /// with the tables the results write (a few variants, each prepared once per
    /// connection), and a query left out costs nothing to set up.
    fn insert(&mut self, table: &str, rows: Rows<'a>, on_conflict: &str) {
        if rows.is_empty() {
            return;
        }
        let insert = rows.insert_sql(table, self.params.len() + 1);
        self.queries.push(format!(
            "write_{} AS ({insert} WHERE r.item IN (SELECT item FROM request) {on_conflict})",
            self.queries.len()
        ));
        self.params.extend(rows.into_params());
    }

    fn sql(&self) -> String {
        format!("WITH {} SELECT item FROM request", self.queries.join(",\n"))
    }
}

/// Every row `rows_of` gives for each result's update, and the result's place for each.
fn gather<'a, T: 'a, I>(
    results: &[PollResult<'a>],
    rows_of: impl Fn(&'a TrackingUpdate) -> I,
) -> (Vec<&'a T>, Vec<i32>)
where
    I: IntoIterator<Item = &'a T>,
{
    let (mut rows, mut items) = (Vec::new(), Vec::new());
    for (item, result) in (0..).zip(results) {
        for row in result.update.into_iter().flat_map(&rows_of) {
            rows.push(row);
            items.push(item);
        }
    }
    (rows, items)
}

/// The search entries of the shipments and containers the results create, and of shipments
/// that learned their bill of lading (their terms gain the bill; the container's number they
/// were known by stays a term of theirs). Other entities' numbers never change.
fn new_search_entries(results: &[PollResult<'_>]) -> Vec<(i32, AccountId, SearchEntry)> {
    let mut entries = Vec::new();
    for (item, result) in (0..).zip(results) {
        let Some(update) = result.update else {
            continue;
        };
        let account = result.request.account_id;
        if update.shipment_created || update.bill_of_lading_learned {
            entries.push((item, account, SearchEntry::shipment(&update.shipment)));
        }
        for container in &update.new_containers {
            entries.push((item, account, SearchEntry::container(container)));
        }
    }
    entries
}
