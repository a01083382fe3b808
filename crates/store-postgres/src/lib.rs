//! Tidemark's PostgreSQL backend: tokio-postgres behind a deadpool pool.
//!
//! Every `Store` method runs as one statement or one transaction on a pooled connection,
//! so any number of server processes can share the database: claims use
//! `FOR UPDATE SKIP LOCKED`, and startup work (migrations, the first account) is
//! serialized with transaction-level advisory locks. The SQL stays plain so that
//! PostgreSQL-compatible databases can run it too. TLS is not built in (`NoTls`).
//! This crate depends on `domain` and `store` only.

mod carriers;
mod convert;
mod custom_fields;
mod documents;
mod edi;
mod jobs;
mod migrations;
mod parties;
mod poll_results;
mod read_cache;
mod search;
mod shipments;
mod tracking_requests;
mod unnest;
mod vessels;
mod webhooks;

#[cfg(feature = "testing")]
pub mod testing;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tidemark_domain::tracking_update::TrackingUpdate;
use tidemark_domain::{
    Account, AccountId, ApiKey, ApiKeyId, Container, ContainerId, DomainEvent, DomainEventId, Job,
    JobId, NewJob, NotificationLog, Party, PartyId, RawEvent, Shipment, ShipmentId,
    TrackingRequest, TrackingRequestId, TransportEvent, TransportEventId, Webhook, WebhookId,
    WebhookNotification, WebhookNotificationId,
};
use tidemark_store::{
    AwaitingPickup, ContainerEventIds, ContainerFilter, IdempotencyState, JobOutcome,
    JobQueueStats, JobWakeups, NotificationFilter, PageRequest, Paged, ReadCache, RecordedDelivery,
    SearchEntry, SearchHit, ShipmentFilter, ShipmentRead, Store, StoreError, StoreResult,
    TerminalSelection, TrackingRequestFilter, TransportEventFilter,
};
use tokio_postgres::NoTls;

use crate::convert::{
    ACCOUNT_COLUMNS, API_KEY_COLUMNS, account_from_row, api_key_from_row, backend, on_unique,
};
use crate::read_cache::Listener;
pub use crate::read_cache::ListenerStatus;

/// Advisory lock key held while bootstrapping ("tdmkboot"): the count-then-insert must not
/// interleave with another process doing the same.
const BOOTSTRAP_LOCK: i64 = 0x7464_6d6b_626f_6f74;

/// How [`PgStore::connect_with`] sets up its pool.
#[derive(Clone, Debug)]
pub struct ConnectOptions {
    /// Most connections the pool opens at once. At least 1.
    pub max_connections: usize,
    /// Schema every connection uses (its `search_path`), instead of the server default.
    /// It must already exist. Tests use one schema per case to stay isolated.
    pub schema: Option<String>,
    /// How long to wait for a free connection, and for a new one to be established,
    /// before failing with a `Backend` error.
    pub acquire_timeout: StdDuration,
    /// Most shipments (with their containers) kept in memory for
    /// [`Store::shipment_with_containers`], evicted as the database announces changes
    /// (see `read_cache`). 0 reads the database every time and opens no listener.
    pub shipment_cache_entries: usize,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            max_connections: 16,
            schema: None,
            acquire_timeout: StdDuration::from_secs(30),
            shipment_cache_entries: 10_000,
        }
    }
}

pub struct PgStore {
    pool: Pool,
    schema: Option<String>,
    shipments: Arc<ReadCache<Arc<ShipmentRead>>>,
    /// Keeps the `LISTEN` connection (shipment cache, job wake-ups) open for as long as the
    /// store lives.
    listener: Option<Listener>,
    /// Fired by the listener on every job queued, by any process.
    wakeups: JobWakeups,
    /// Writes poll results, several in one statement when several are waiting.
    results: poll_results::ResultWriters,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the URL: it may carry a password.
        f.debug_struct("PgStore")
            .field("schema", &self.schema)
            .field("pool", &self.pool.status())
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects with default options (see [`ConnectOptions`]) and migrates the database.
    /// `url` is a libpq-style URL or key/value string, e.g. `postgres://user@host/db`.
    pub async fn connect(url: &str) -> StoreResult<Self> {
        Self::connect_with(url, ConnectOptions::default()).await
    }

    /// Builds the pool described by `options` and migrates the database.
    pub async fn connect_with(url: &str, options: ConnectOptions) -> StoreResult<Self> {
        if options.max_connections == 0 {
            return Err(backend("max_connections must be at least 1"));
        }
        let mut config: tokio_postgres::Config = url.parse().map_err(backend)?;
        if let Some(schema) = &options.schema {
            // A startup option rather than a `SET` after connecting: it holds for every
            // connection the pool ever opens, with no extra round trip.
            let search_path = search_path_option(schema);
            let startup = match config.get_options() {
                Some(existing) if !existing.is_empty() => format!("{existing} {search_path}"),
                _ => search_path,
            };
            config.options(startup);
        }
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.max_connections)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(options.acquire_timeout))
            .create_timeout(Some(options.acquire_timeout))
            .build()
            .map_err(backend)?;
        let shipments = Arc::new(ReadCache::new(
            options.shipment_cache_entries,
            read_cache::ENTRY_TTL,
        ));
        // Never more writers than connections: each holds one while it writes.
        let writers = poll_results::WRITERS.min(options.max_connections);
        let results = poll_results::ResultWriters::spawn(&pool, writers);
        let store = Self {
            pool,
            results,
            schema: options.schema,
            listener: None,
            shipments,
            wakeups: JobWakeups::default(),
        };
        store.migrate().await?;
        // After migrating: the triggers that notify the listener exist from here on.
        let cache = (options.shipment_cache_entries > 0).then(|| Arc::downgrade(&store.shipments));
        let listener = Listener::spawn(config, cache, store.wakeups.clone());
        // A store starts with its cache on when it can: one round trip at startup, and
        // what the first reads do does not depend on a race with the listener.
        listener.first_attempt(options.acquire_timeout).await;
        Ok(Self {
            listener: Some(listener),
            ..store
        })
    }

    /// Applies the migrations this build knows and the database lacks. Safe to run from
    /// several processes at once; `connect` already does it.
    pub async fn migrate(&self) -> StoreResult<()> {
        let mut client = self.client().await?;
        migrations::run(&mut client).await
    }

    /// What the shipment cache's listener is doing, when there is one (for monitoring, and
    /// for tests to wait on).
    pub fn shipment_cache_listener(&self) -> Option<tokio::sync::watch::Receiver<ListenerStatus>> {
        if self.shipments.capacity() == 0 {
            return None;
        }
        self.database_listener()
    }

    /// What the `LISTEN` connection is doing (it also wakes the job runners).
    pub fn database_listener(&self) -> Option<tokio::sync::watch::Receiver<ListenerStatus>> {
        self.listener.as_ref().map(Listener::status)
    }

    /// Whether `id` is in the shipment cache now.
    pub fn shipment_is_cached(&self, id: ShipmentId) -> bool {
        self.shipments.contains(id.0)
    }

    async fn client(&self) -> StoreResult<deadpool_postgres::Client> {
        self.pool.get().await.map_err(backend)
    }
}

/// `-c search_path=<schema>` for the startup `options` parameter. The name is quoted so it
/// is taken literally; the server splits `options` on whitespace, where a backslash
/// escapes the next character.
fn search_path_option(schema: &str) -> String {
    let quoted = format!("\"{}\"", schema.replace('"', "\"\""));
    let mut option = String::from("-c search_path=");
    for c in quoted.chars() {
        if c.is_whitespace() || c == '\\' {
            option.push('\\');
        }
        option.push(c);
    }
    option
}

async fn insert_account(client: &impl GenericClient, account: &Account) -> StoreResult<()> {
    let statement = client
        .prepare_cached("INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)")
        .await
        .map_err(backend)?;
    client
        .execute(
            &statement,
            &[&account.id.0, &account.name, &account.created_at],
        )
        .await
        .map_err(|e| on_unique(e, "accounts_name"))?;
    Ok(())
}

async fn insert_api_key(client: &impl GenericClient, key: &ApiKey) -> StoreResult<()> {
    let statement = client
        .prepare_cached(
            "INSERT INTO api_keys (id, account_id, prefix, hash, scope, created_at, revoked_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .await
        .map_err(backend)?;
    client
        .execute(
            &statement,
            &[
                &key.id.0,
                &key.account_id.0,
                &key.prefix,
                &key.hash,
                &key.scope.as_str(),
                &key.created_at,
                &key.revoked_at,
            ],
        )
        .await
        .map_err(|e| on_unique(e, "api_keys_hash"))?;
    Ok(())
}

#[async_trait]
impl Store for PgStore {
    async fn ping(&self) -> StoreResult<()> {
        self.client()
            .await?
            .batch_execute("SELECT 1")
            .await
            .map_err(backend)
    }

    async fn create_account(&self, account: &Account) -> StoreResult<()> {
        insert_account(&self.client().await?, account).await
    }

    async fn account(&self, id: AccountId) -> StoreResult<Account> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = $1"
            ))
            .await
            .map_err(backend)?;
        client
            .query_opt(&statement, &[&id.0])
            .await
            .map_err(backend)?
            .as_ref()
            .map(account_from_row)
            .transpose()?
            .ok_or(StoreError::NotFound)
    }

    async fn account_by_name(&self, name: &str) -> StoreResult<Option<Account>> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE name = $1"
            ))
            .await
            .map_err(backend)?;
        client
            .query_opt(&statement, &[&name])
            .await
            .map_err(backend)?
            .as_ref()
            .map(account_from_row)
            .transpose()
    }

    async fn bootstrap_first_account(&self, account: &Account, key: &ApiKey) -> StoreResult<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&BOOTSTRAP_LOCK])
            .await
            .map_err(backend)?;
        // Under READ COMMITTED this statement's snapshot is taken after the lock is held,
        // so it sees an account a process that held the lock before us committed.
        let existing: bool = tx
            .query_one("SELECT EXISTS (SELECT 1 FROM accounts)", &[])
            .await
            .map_err(backend)?
            .try_get(0)
            .map_err(backend)?;
        if existing {
            tx.rollback().await.map_err(backend)?;
            return Ok(false);
        }
        insert_account(&tx, account).await?;
        insert_api_key(&tx, key).await?;
        tx.commit().await.map_err(backend)?;
        Ok(true)
    }

    async fn insert_api_key(&self, key: &ApiKey) -> StoreResult<()> {
        insert_api_key(&self.client().await?, key).await
    }

    async fn api_key_by_hash(&self, hash: &str) -> StoreResult<Option<ApiKey>> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT {API_KEY_COLUMNS} FROM api_keys WHERE hash = $1"
            ))
            .await
            .map_err(backend)?;
        client
            .query_opt(&statement, &[&hash])
            .await
            .map_err(backend)?
            .as_ref()
            .map(api_key_from_row)
            .transpose()
    }

    async fn list_api_keys(&self, account: AccountId) -> StoreResult<Vec<ApiKey>> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT {API_KEY_COLUMNS} FROM api_keys WHERE account_id = $1
                 ORDER BY created_at DESC, id DESC"
            ))
            .await
            .map_err(backend)?;
        client
            .query(&statement, &[&account.0])
            .await
            .map_err(backend)?
            .iter()
            .map(api_key_from_row)
            .collect()
    }

    async fn revoke_api_key(
        &self,
        account: AccountId,
        id: ApiKeyId,
        at: DateTime<Utc>,
    ) -> StoreResult<ApiKey> {
        let client = self.client().await?;
        // coalesce: revoking twice keeps the first revocation time.
        let statement = client
            .prepare_cached(&format!(
                "UPDATE api_keys SET revoked_at = coalesce(revoked_at, $3)
                 WHERE id = $1 AND account_id = $2 RETURNING {API_KEY_COLUMNS}"
            ))
            .await
            .map_err(backend)?;
        client
            .query_opt(&statement, &[&id.0, &account.0, &at])
            .await
            .map_err(backend)?
            .as_ref()
            .map(api_key_from_row)
            .transpose()?
            .ok_or(StoreError::NotFound)
    }

    async fn end_console_session(
        &self,
        token_hash: &str,
        expires_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        let client = self.client().await?;
        // One statement: the expired rows go and the new one arrives together.
        let statement = client
            .prepare_cached(
                "WITH expired AS (DELETE FROM ended_console_sessions WHERE expires_at < $3)
                 INSERT INTO ended_console_sessions (token_hash, expires_at) VALUES ($1, $2)
                 ON CONFLICT (token_hash) DO NOTHING",
            )
            .await
            .map_err(backend)?;
        client
            .execute(&statement, &[&token_hash, &expires_at, &now])
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn console_session_ended(&self, token_hash: &str) -> StoreResult<bool> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached("SELECT 1 FROM ended_console_sessions WHERE token_hash = $1")
            .await
            .map_err(backend)?;
        Ok(client
            .query_opt(&statement, &[&token_hash])
            .await
            .map_err(backend)?
            .is_some())
    }

    async fn enqueue_job(&self, job: &NewJob, now: DateTime<Utc>) -> StoreResult<JobId> {
        jobs::enqueue(&self.client().await?, job, now).await
    }

    fn job_wakeups(&self) -> JobWakeups {
        self.wakeups.clone()
    }

    async fn extend_job_leases(
        &self,
        held: &[(JobId, u32)],
        until: DateTime<Utc>,
    ) -> StoreResult<u64> {
        jobs::extend_leases(&self.client().await?, held, until).await
    }

    async fn release_orphaned_jobs(&self, _now: DateTime<Utc>) -> StoreResult<u64> {
        // Other processes' workers may be alive: their leases end when they stop beating.
        Ok(0)
    }

    async fn claim_jobs(
        &self,
        now: DateTime<Utc>,
        lease: Duration,
        limit: u32,
    ) -> StoreResult<Vec<Job>> {
        jobs::claim(&mut self.client().await?, now, lease, limit).await
    }

    async fn finish_job(
        &self,
        id: JobId,
        attempt: u32,
        outcome: &JobOutcome,
        now: DateTime<Utc>,
    ) -> StoreResult<()> {
        jobs::finish(&self.client().await?, id, attempt, outcome, now).await
    }

    async fn job(&self, id: JobId) -> StoreResult<Job> {
        jobs::get(&self.client().await?, id).await
    }

    async fn job_queue_stats(&self, now: DateTime<Utc>) -> StoreResult<JobQueueStats> {
        jobs::stats(&self.client().await?, now).await
    }

    async fn purge_finished_jobs(&self, before: DateTime<Utc>) -> StoreResult<u64> {
        jobs::purge_finished(&self.client().await?, before).await
    }

    async fn create_tracking_request(&self, request: &TrackingRequest) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        tracking_requests::create(&tx, request).await?;
        search::index(
            &tx,
            request.account_id,
            &SearchEntry::tracking_request(request),
        )
        .await?;
        tx.commit().await.map_err(backend)
    }

    async fn tracking_request(
        &self,
        account: AccountId,
        id: TrackingRequestId,
    ) -> StoreResult<TrackingRequest> {
        tracking_requests::get(&self.client().await?, account, id).await
    }

    async fn tracking_requests_by_ids(
        &self,
        account: AccountId,
        ids: &[TrackingRequestId],
    ) -> StoreResult<Vec<TrackingRequest>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        tracking_requests::by_ids(&self.client().await?, account, ids).await
    }

    async fn list_tracking_requests(
        &self,
        account: AccountId,
        filter: &TrackingRequestFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<TrackingRequest>> {
        tracking_requests::list(&self.client().await?, account, filter, page).await
    }

    async fn update_tracking_request_ref_numbers(
        &self,
        account: AccountId,
        id: TrackingRequestId,
        ref_numbers: &[String],
        now: DateTime<Utc>,
    ) -> StoreResult<TrackingRequest> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let request =
            tracking_requests::update_ref_numbers(&tx, account, id, ref_numbers, now).await?;
        search::index(&tx, account, &SearchEntry::tracking_request(&request)).await?;
        tx.commit().await.map_err(backend)?;
        Ok(request)
    }

    async fn active_tracking_requests_for(
        &self,
        scac: &str,
        numbers: &[String],
    ) -> StoreResult<Vec<TrackingRequest>> {
        tracking_requests::active_for(&self.client().await?, scac, numbers).await
    }

    async fn unresolved_tracking_requests(&self, limit: u32) -> StoreResult<Vec<TrackingRequest>> {
        tracking_requests::unresolved(&self.client().await?, limit).await
    }

    async fn record_tracking_result(
        &self,
        request: &TrackingRequest,
        read_at: DateTime<Utc>,
        update: Option<&TrackingUpdate>,
        events: &[DomainEvent],
    ) -> StoreResult<()> {
        let result = self
            .results
            .record(poll_results::PollResult {
                request,
                read_at,
                update,
                events,
            })
            .await;
        // Evicted here too, not only when the notification comes back: this process reads
        // its own writes at once.
        if let Some(update) = update {
            self.shipments.evict(update.shipment.id.0);
        }
        result
    }

    async fn domain_events(
        &self,
        account: AccountId,
        after: Option<DomainEventId>,
        limit: u32,
    ) -> StoreResult<Vec<DomainEvent>> {
        shipments::domain_events(&self.client().await?, account, after, limit).await
    }

    async fn shipment(&self, account: AccountId, id: ShipmentId) -> StoreResult<Shipment> {
        shipments::shipment(&self.client().await?, account, id).await
    }

    async fn shipments_by_ids(
        &self,
        account: AccountId,
        ids: &[ShipmentId],
    ) -> StoreResult<Vec<Shipment>> {
        shipments::shipments_by_ids(&self.client().await?, account, ids).await
    }

    async fn list_shipments(
        &self,
        account: AccountId,
        filter: &ShipmentFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<Shipment>> {
        shipments::list_shipments(&self.client().await?, account, filter, page).await
    }

    async fn update_shipment(&self, shipment: &Shipment) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let result = match shipments::update_shipment(&tx, shipment).await {
            Ok(()) => tx.commit().await.map_err(backend),
            Err(error) => Err(error),
        };
        self.shipments.evict(shipment.id.0);
        result
    }

    async fn update_container(&self, container: &Container) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let result = match shipments::update_container(&tx, container).await {
            Ok(()) => tx.commit().await.map_err(backend),
            Err(error) => Err(error),
        };
        self.shipments.evict(container.shipment_id.0);
        result
    }

    async fn search(
        &self,
        account: AccountId,
        key: &str,
        scan: u32,
    ) -> StoreResult<Vec<SearchHit>> {
        search::search(&self.client().await?, account, key, scan).await
    }

    async fn shipments_to_poll(
        &self,
        due_before: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<Shipment>> {
        shipments::shipments_to_poll(&self.client().await?, due_before, limit).await
    }

    async fn containers_of_shipment(&self, shipment: ShipmentId) -> StoreResult<Vec<Container>> {
        shipments::containers_of_shipment(&self.client().await?, shipment).await
    }

    async fn shipment_with_containers(
        &self,
        account: AccountId,
        id: ShipmentId,
    ) -> StoreResult<Arc<ShipmentRead>> {
        let now = Instant::now();
        if let Some(read) = self.shipments.get(id.0, now)
            && read.shipment.account_id == account
        {
            return Ok(read);
        }
        let ticket = self.shipments.ticket();
        let (shipment, containers) =
            shipments::shipment_with_containers(&self.client().await?, account, id).await?;
        let read = Arc::new(ShipmentRead::new(shipment, containers));
        if let Some(ticket) = ticket {
            self.shipments.insert(ticket, id.0, Arc::clone(&read), now);
        }
        Ok(read)
    }

    async fn containers_of_shipments(
        &self,
        shipments: &[ShipmentId],
    ) -> StoreResult<Vec<Container>> {
        shipments::containers_of_shipments(&self.client().await?, shipments).await
    }

    async fn containers_awaiting_pickup(
        &self,
        selection: &TerminalSelection<'_>,
    ) -> StoreResult<Vec<AwaitingPickup>> {
        shipments::containers_awaiting_pickup(&self.client().await?, selection).await
    }

    async fn record_terminal_asks(
        &self,
        terminal: &str,
        containers: &[ContainerId],
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        shipments::record_terminal_asks(&mut self.client().await?, terminal, containers, at).await
    }

    async fn forget_finished_terminal_asks(&self) -> StoreResult<u64> {
        shipments::forget_finished_terminal_asks(&self.client().await?).await
    }

    async fn terminal_asks(
        &self,
        terminal: &str,
    ) -> StoreResult<Vec<(ContainerId, DateTime<Utc>)>> {
        shipments::terminal_asks(&self.client().await?, terminal).await
    }

    async fn transport_events_of_shipment(
        &self,
        shipment: ShipmentId,
    ) -> StoreResult<Vec<TransportEvent>> {
        shipments::transport_events_of_shipment(&self.client().await?, shipment).await
    }

    async fn transport_event(
        &self,
        account: AccountId,
        id: TransportEventId,
    ) -> StoreResult<TransportEvent> {
        shipments::transport_event(&self.client().await?, account, id).await
    }

    async fn container(&self, account: AccountId, id: ContainerId) -> StoreResult<Container> {
        shipments::container(&self.client().await?, account, id).await
    }

    async fn list_containers(
        &self,
        account: AccountId,
        filter: &ContainerFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<Container>> {
        shipments::list_containers(&self.client().await?, account, filter, page).await
    }

    async fn transport_events_of_container(
        &self,
        account: AccountId,
        container: ContainerId,
        filter: &TransportEventFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<TransportEvent>> {
        shipments::transport_events_of_container(
            &self.client().await?,
            account,
            container,
            filter,
            page,
        )
        .await
    }

    async fn raw_events_of_shipment(&self, shipment: ShipmentId) -> StoreResult<Vec<RawEvent>> {
        shipments::raw_events_of_shipment(&self.client().await?, shipment).await
    }

    async fn raw_events_of_container(
        &self,
        account: AccountId,
        container: ContainerId,
    ) -> StoreResult<Vec<RawEvent>> {
        shipments::raw_events_of_container(&self.client().await?, account, container).await
    }

    async fn event_ids_of_containers(
        &self,
        account: AccountId,
        containers: &[ContainerId],
    ) -> StoreResult<HashMap<ContainerId, ContainerEventIds>> {
        shipments::event_ids_of_containers(&self.client().await?, account, containers).await
    }

    async fn create_party(&self, party: &Party) -> StoreResult<()> {
        parties::create(&self.client().await?, party).await
    }

    async fn party(&self, account: AccountId, id: PartyId) -> StoreResult<Party> {
        parties::get(&self.client().await?, account, id).await
    }

    async fn list_parties(
        &self,
        account: AccountId,
        page: PageRequest,
    ) -> StoreResult<Paged<Party>> {
        parties::list(&self.client().await?, account, page).await
    }

    async fn update_party(&self, party: &Party) -> StoreResult<()> {
        parties::update(&self.client().await?, party).await
    }

    async fn create_webhook(&self, webhook: &Webhook) -> StoreResult<()> {
        webhooks::create(&self.client().await?, webhook).await
    }

    async fn webhook(&self, account: AccountId, id: WebhookId) -> StoreResult<Webhook> {
        webhooks::get(&self.client().await?, account, id).await
    }

    async fn list_webhooks(
        &self,
        account: AccountId,
        page: PageRequest,
    ) -> StoreResult<Paged<Webhook>> {
        webhooks::list(&self.client().await?, account, page).await
    }

    async fn update_webhook(&self, webhook: &Webhook) -> StoreResult<()> {
        webhooks::update(&self.client().await?, webhook).await
    }

    async fn record_webhook_health(
        &self,
        account: AccountId,
        id: WebhookId,
        failing_since: Option<DateTime<Utc>>,
        deactivate: bool,
    ) -> StoreResult<()> {
        webhooks::record_health(
            &self.client().await?,
            account,
            id,
            failing_since,
            deactivate,
        )
        .await
    }

    async fn delete_webhook(&self, account: AccountId, id: WebhookId) -> StoreResult<()> {
        webhooks::delete(&mut self.client().await?, account, id).await
    }

    async fn notification(
        &self,
        account: AccountId,
        id: WebhookNotificationId,
    ) -> StoreResult<WebhookNotification> {
        webhooks::notification(&self.client().await?, account, id).await
    }

    async fn list_notifications(
        &self,
        account: AccountId,
        filter: &NotificationFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<WebhookNotification>> {
        webhooks::list_notifications(&self.client().await?, account, filter, page).await
    }

    async fn webhooks_with_due_notifications(
        &self,
        due_before: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<(AccountId, WebhookId)>> {
        webhooks::webhooks_with_due_notifications(&self.client().await?, due_before, limit).await
    }

    async fn claim_notifications(
        &self,
        webhook: WebhookId,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<WebhookNotification>> {
        webhooks::claim_notifications(&self.client().await?, webhook, now, lease_until, limit).await
    }

    async fn release_notification_claims(
        &self,
        webhook: WebhookId,
        now: DateTime<Utc>,
    ) -> StoreResult<u64> {
        webhooks::release_claims(&self.client().await?, webhook, now).await
    }

    async fn record_deliveries(&self, deliveries: &[RecordedDelivery]) -> StoreResult<Vec<bool>> {
        webhooks::record_deliveries(&mut self.client().await?, deliveries).await
    }

    async fn notification_logs_of(
        &self,
        account: AccountId,
        ids: &[WebhookNotificationId],
    ) -> StoreResult<Vec<NotificationLog>> {
        webhooks::logs(&self.client().await?, account, ids).await
    }

    async fn begin_idempotent_request(
        &self,
        account: AccountId,
        key: &str,
        fingerprint: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<IdempotencyState> {
        tracking_requests::begin_idempotent(&self.client().await?, account, key, fingerprint, now)
            .await
    }

    async fn complete_idempotent_request(
        &self,
        account: AccountId,
        key: &str,
        status: u16,
        body: &[u8],
    ) -> StoreResult<()> {
        tracking_requests::complete_idempotent(&self.client().await?, account, key, status, body)
            .await
    }

    async fn abandon_idempotent_request(&self, account: AccountId, key: &str) -> StoreResult<()> {
        tracking_requests::abandon_idempotent(&self.client().await?, account, key).await
    }

    async fn purge_idempotency_keys(&self, before: DateTime<Utc>) -> StoreResult<u64> {
        tracking_requests::purge_idempotency_keys(&self.client().await?, before).await
    }

    async fn setting_or_init(&self, name: &str, proposed: &str) -> StoreResult<String> {
        let client = self.client().await?;
        // Two statements, each seeing the latest commit: whoever inserted first, the
        // select reads that value.
        client
            .execute(
                "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                &[&name, &proposed],
            )
            .await
            .map_err(backend)?;
        client
            .query_one("SELECT value FROM settings WHERE name = $1", &[&name])
            .await
            .map_err(backend)?
            .try_get(0)
            .map_err(backend)
    }
}

#[cfg(test)]
mod tests {
    use super::search_path_option;

    #[test]
    fn the_schema_is_quoted_and_escaped_for_the_startup_options() {
        assert_eq!(
            search_path_option("test_ab12"),
            r#"-c search_path="test_ab12""#
        );
        assert_eq!(
            search_path_option(r#"my "odd" schema"#),
            r#"-c search_path="my\ ""odd""\ schema""#
        );
    }
}
