//! A bounded in-process cache of shipments with their containers, for the API's most
//! frequent read (`GET /v2/shipments/{id}`), kept true by the database itself.
//!
//! Every insert, update or delete of a shipment or container row fires a trigger that
//! sends `NOTIFY tidemark_shipment_changed, '<shipment id>'` (delivered on commit, to every
//! process). Each store listens on its own connection and evicts what it is told about;
//! its own writes also evict at once, so a process reads its own writes. The cache is used
//! only while the listener is connected: before `LISTEN` has succeeded, and from the moment
//! the listener connection fails until it is back, every read goes to the database and
//! nothing is cached. Entries also expire after [`ENTRY_TTL`] as a backstop (a pooler that
//! drops notifications, say).
//!
//! A read that started before a change committed must not put the old rows back after the
//! change's eviction: every eviction bumps a generation and is remembered (the last
//! [`RECENT_EVICTIONS`] of them), and a read's result is cached only when its shipment was
//! not evicted since the generation the reader saw before reading. Evictions of other
//! shipments do not stop it, so a busy database does not keep the cache empty.
//!
//! The same connection also listens on [`JOBS_CHANNEL`], which every job queued announces
//! on commit (migration 0020), and wakes this process's job runners on each: that is how
//! a job queued by any process starts within milliseconds. It wakes them too each time it
//! has (re)subscribed, since notifications sent while it was away are lost.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use tidemark_store::JobWakeups;
use tokio::sync::watch;
use tokio_postgres::{AsyncMessage, Config, NoTls};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// The channel the triggers of migration 0019 notify, with the shipment's id as payload.
pub const CHANNEL: &str = "tidemark_shipment_changed";

/// The channel every job queued is announced on (migration 0020's trigger), no payload.
pub const JOBS_CHANNEL: &str = "tidemark_jobs";

/// How long an entry is served at most, notifications or not.
pub const ENTRY_TTL: Duration = Duration::from_secs(60);

const KEEPALIVE_IDLE: Duration = Duration::from_secs(30);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
const KEEPALIVE_RETRIES: u32 = 3;

/// Waits between attempts to (re)connect the listener.
const RECONNECT_BACKOFF: [Duration; 4] = [
    Duration::from_millis(100),
    Duration::from_secs(1),
    Duration::from_secs(5),
    Duration::from_secs(30),
];

/// Evictions remembered for readers in flight; a reader that started before the oldest
/// of them does not cache what it read.
pub const RECENT_EVICTIONS: usize = 1024;

/// Values by shipment id (the payload of the notifications).
#[derive(Debug)]
pub struct ReadCache<V> {
    capacity: usize,
    ttl: Duration,
    state: Mutex<State<V>>,
}

#[derive(Debug)]
struct State<V> {
    entries: HashMap<Uuid, Entry<V>>,
    generation: u64,
    /// `(generation, id)` of the latest evictions, oldest first.
    recent: VecDeque<(u64, Uuid)>,
    /// Readers whose ticket is older than this may have missed an eviction: the latest
    /// generation that left `recent`, or the latest switch of `listening`.
    forgotten_before: u64,
    listening: bool,
}

#[derive(Debug)]
struct Entry<V> {
    value: V,
    expires_at: Instant,
}

/// What a reader learns before going to the database: the generation to hand back to
/// [`ReadCache::insert`], or that caching is off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(u64);

impl<V: Clone> ReadCache<V> {
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        Self {
            capacity,
            ttl,
            state: Mutex::new(State {
                entries: HashMap::new(),
                generation: 0,
                recent: VecDeque::with_capacity(RECENT_EVICTIONS),
                forgotten_before: 0,
                listening: false,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State<V>> {
        // The state is left consistent at every step, so a panic elsewhere does not spoil it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cached value for `id`, when there is a fresh one.
    pub fn get(&self, id: Uuid, now: Instant) -> Option<V> {
        let state = self.state();
        if !state.listening {
            return None;
        }
        state
            .entries
            .get(&id)
            .filter(|entry| entry.expires_at > now)
            .map(|entry| entry.value.clone())
    }

    /// Taken before reading the database; `None` while nothing may be cached.
    pub fn ticket(&self) -> Option<Ticket> {
        let state = self.state();
        (state.listening && self.capacity > 0).then_some(Ticket(state.generation))
    }

    /// Caches `value` for `id`, unless `id` was (or may have been) evicted since `ticket`
    /// was taken (the value may predate that change) or the cache is full of entries still
    /// fresh.
    pub fn insert(&self, ticket: Ticket, id: Uuid, value: V, now: Instant) {
        let mut state = self.state();
        let evicted_since =
            |&(generation, evicted): &(u64, Uuid)| generation > ticket.0 && evicted == id;
        if !state.listening
            || ticket.0 < state.forgotten_before
            || state.recent.iter().rev().any(evicted_since)
        {
            return;
        }
        if state.entries.len() >= self.capacity {
            state.entries.retain(|_, entry| entry.expires_at > now);
            if state.entries.len() >= self.capacity {
                return;
            }
        }
        let expires_at = now + self.ttl;
        state.entries.insert(id, Entry { value, expires_at });
    }

    /// Forgets `id`: it changed, or may have.
    pub fn evict(&self, id: Uuid) {
        let mut state = self.state();
        state.generation += 1;
        state.entries.remove(&id);
        if state.recent.len() == RECENT_EVICTIONS
            && let Some((generation, _)) = state.recent.pop_front()
        {
            state.forgotten_before = generation;
        }
        let generation = state.generation;
        state.recent.push_back((generation, id));
    }

    /// Starts or stops caching; either way, everything cached so far is forgotten (while
    /// the listener was away, changes may have gone unheard).
    pub fn set_listening(&self, listening: bool) {
        self.forget_all().listening = listening;
    }

    /// Forgets every entry, and every read in flight may not cache what it read.
    fn forget_all(&self) -> std::sync::MutexGuard<'_, State<V>> {
        let mut state = self.state();
        state.generation += 1;
        state.forgotten_before = state.generation;
        state.recent.clear();
        state.entries.clear();
        state
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.state().entries.len()
    }

    pub fn contains(&self, id: Uuid) -> bool {
        self.state().entries.contains_key(&id)
    }
}

/// What the listener is doing, for whoever waits on it (the store's startup, tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListenerStatus {
    /// `LISTEN` has succeeded on the current connection (so the cache is on).
    pub subscribed: bool,
    /// The listener connection's server process, while connected.
    pub backend_pid: Option<i32>,
    /// Connection attempts that have ended, successful or not.
    pub attempts: u64,
    /// Shipment-change notifications handled since the store started.
    pub notifications: u64,
    /// Job notifications heard since the store started.
    pub job_notifications: u64,
}

/// Who the listener serves: the shipment cache (when there is one) and the job runners.
struct Subscribers<V> {
    cache: Option<Weak<ReadCache<V>>>,
    jobs: JobWakeups,
}

impl<V> Subscribers<V> {
    /// The cache, `Ok(None)` when there is none, `Err(())` when it has been dropped.
    fn cache(&self) -> Result<Option<std::sync::Arc<ReadCache<V>>>, ()> {
        match &self.cache {
            None => Ok(None),
            Some(weak) => weak.upgrade().map(Some).ok_or(()),
        }
    }
}

/// Keeps a `LISTEN` connection open until `stop` is cancelled or the cache is dropped,
/// reconnecting with backoff; evicts every shipment it hears about and wakes the job
/// runners on every job.
async fn listen<V: Clone + Send + 'static>(
    config: Config,
    subscribers: Subscribers<V>,
    status: watch::Sender<ListenerStatus>,
    stop: CancellationToken,
) {
    let mut failures = 0usize;
    loop {
        let outcome = tokio::select! {
            () = stop.cancelled() => return,
            outcome = listen_once(&config, &subscribers, &status) => outcome,
        };
        match subscribers.cache() {
            Err(()) => return,
            Ok(Some(live)) => live.set_listening(false),
            Ok(None) => {}
        }
        status.send_modify(|s| {
            s.subscribed = false;
            s.backend_pid = None;
            s.attempts += 1;
        });
        match outcome {
            Ok(()) => failures = 0,
            Err(error) => {
                tracing::warn!(error = ?error, "the database listener is disconnected; shipment reads bypass the cache and job runners fall back to polling until it is back");
                failures += 1;
            }
        }
        let wait = RECONNECT_BACKOFF[failures.min(RECONNECT_BACKOFF.len() - 1)];
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// One listener connection's life: connect, `LISTEN`, turn caching on, evict on every
/// shipment notification and wake the runners on every job one, until the connection ends
/// (or the cache is gone).
async fn listen_once<V: Clone + Send + 'static>(
    config: &Config,
    subscribers: &Subscribers<V>,
    status: &watch::Sender<ListenerStatus>,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
    // The connection has to be polled for the client's queries to complete, so its
    // messages are read from the start, concurrently with subscribing.
    let messages = async {
        while let Some(message) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            let AsyncMessage::Notification(notification) = message? else {
                continue;
            };
            if notification.channel() == JOBS_CHANNEL {
                subscribers.jobs.wake();
                status.send_modify(|s| s.job_notifications += 1);
                continue;
            }
            let Ok(cache) = subscribers.cache() else {
                return Ok(());
            };
            let Some(cache) = cache else { continue };
            match notification.payload().parse::<Uuid>() {
                Ok(id) => cache.evict(id),
                // Not a payload the triggers send: forget everything rather than guess.
                Err(_) => drop(cache.forget_all()),
            }
            status.send_modify(|s| s.notifications += 1);
        }
        Ok(())
    };
    let subscribe = async {
        let pid: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .await?
            .try_get(0)?;
        let cache = subscribers.cache().ok().flatten();
        let channels = if cache.is_some() {
            format!("LISTEN {JOBS_CHANNEL}; LISTEN {CHANNEL}")
        } else {
            format!("LISTEN {JOBS_CHANNEL}")
        };
        client.batch_execute(&channels).await?;
        if let Some(cache) = cache {
            cache.set_listening(true);
        }
        // Jobs queued while no one listened were announced to no one.
        subscribers.jobs.wake();
        status.send_modify(|s| {
            s.subscribed = true;
            s.backend_pid = Some(pid);
        });
        // The client has to outlive the reading of messages.
        std::future::pending::<Result<(), tokio_postgres::Error>>().await
    };
    tokio::select! {
        result = messages => result,
        result = subscribe => result,
    }
}

/// Owns the listener task, which stops when this is dropped.
#[derive(Debug)]
pub struct Listener {
    status: watch::Receiver<ListenerStatus>,
    _stop: tokio_util::sync::DropGuard,
}

impl Listener {
    /// Starts listening for `cache` (if any) and the job runners, with TCP keepalives so
    /// that a silently dead connection is noticed (and the cache turned off) within a
    /// minute or so.
    pub fn spawn<V: Clone + Send + Sync + 'static>(
        mut config: Config,
        cache: Option<Weak<ReadCache<V>>>,
        jobs: JobWakeups,
    ) -> Self {
        config
            .application_name("tidemark listener")
            .keepalives(true)
            .keepalives_idle(KEEPALIVE_IDLE)
            .keepalives_interval(KEEPALIVE_INTERVAL)
            .keepalives_retries(KEEPALIVE_RETRIES);
        let stop = CancellationToken::new();
        let (sender, status) = watch::channel(ListenerStatus::default());
        tokio::spawn(listen(
            config,
            Subscribers { cache, jobs },
            sender,
            stop.clone(),
        ));
        Self {
            status,
            _stop: stop.drop_guard(),
        }
    }

    /// Waits until the first connection attempt has subscribed or failed, at most `limit`.
    pub async fn first_attempt(&self, limit: Duration) {
        let mut status = self.status.clone();
        let _ =
            tokio::time::timeout(limit, status.wait_for(|s| s.subscribed || s.attempts > 0)).await;
    }

    pub fn status(&self) -> watch::Receiver<ListenerStatus> {
        self.status.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(60);

    fn listening_cache(capacity: usize) -> ReadCache<&'static str> {
        let cache = ReadCache::new(capacity, TTL);
        cache.set_listening(true);
        cache
    }

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    #[test]
    fn nothing_is_cached_or_served_until_the_listener_is_subscribed() {
        let cache = ReadCache::new(10, TTL);
        let now = Instant::now();
        assert_eq!(cache.ticket(), None);
        cache.set_listening(true);
        let ticket = cache.ticket().expect("listening");
        cache.insert(ticket, id(1), "first", now);
        assert_eq!(cache.get(id(1), now), Some("first"));
    }

    #[test]
    fn a_lost_listener_turns_the_cache_off_and_forgets_every_entry() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        cache.insert(ticket, id(1), "first", now);
        cache.set_listening(false);
        assert_eq!(cache.get(id(1), now), None);
        assert_eq!(cache.ticket(), None);
        cache.set_listening(true);
        assert_eq!(cache.get(id(1), now), None);
    }

    #[test]
    fn an_eviction_removes_the_entry() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        cache.insert(ticket, id(1), "first", now);
        cache.insert(ticket, id(2), "second", now);
        cache.evict(id(1));
        assert_eq!(cache.get(id(1), now), None);
        assert_eq!(cache.get(id(2), now), Some("second"));
    }

    #[test]
    fn a_read_that_started_before_an_eviction_is_not_cached() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        // The change commits and its notification arrives while the old rows are read.
        cache.evict(id(1));
        cache.insert(ticket, id(1), "old rows", now);
        assert_eq!(cache.get(id(1), now), None);
    }

    #[test]
    fn a_read_is_cached_when_only_other_shipments_were_evicted_meanwhile() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        cache.evict(id(2));
        cache.insert(ticket, id(1), "first", now);
        assert_eq!(cache.get(id(1), now), Some("first"));
    }

    #[test]
    fn a_read_older_than_every_remembered_eviction_is_not_cached() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        for n in 0..=RECENT_EVICTIONS {
            cache.evict(id(1000 + n as u128));
        }
        cache.insert(ticket, id(1), "first", now);
        assert_eq!(cache.get(id(1), now), None);

        let fresh = cache.ticket().expect("listening");
        cache.insert(fresh, id(1), "first", now);
        assert_eq!(cache.get(id(1), now), Some("first"));
    }

    #[test]
    fn a_read_from_before_the_listener_reconnected_is_not_cached() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        cache.set_listening(false);
        cache.set_listening(true);
        cache.insert(ticket, id(1), "first", now);
        assert_eq!(cache.get(id(1), now), None);
    }

    #[test]
    fn entries_expire_after_the_ttl() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        cache.insert(ticket, id(1), "first", now);
        assert_eq!(
            cache.get(id(1), now + TTL - Duration::from_millis(1)),
            Some("first")
        );
        assert_eq!(cache.get(id(1), now + TTL), None);
    }

    #[test]
    fn a_full_cache_makes_room_only_by_dropping_expired_entries() {
        let cache = listening_cache(2);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        cache.insert(ticket, id(1), "first", now);
        cache.insert(ticket, id(2), "second", now + Duration::from_secs(30));
        cache.insert(ticket, id(3), "third", now + Duration::from_secs(40));
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(id(3), now), None);

        let later = now + TTL + Duration::from_secs(1);
        cache.insert(ticket, id(3), "third", later);
        assert_eq!(cache.get(id(3), later), Some("third"));
        assert_eq!(cache.get(id(2), later), Some("second"));
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn a_zero_capacity_cache_never_caches() {
        let cache = listening_cache(0);
        assert_eq!(cache.ticket(), None);
    }
}
