//! The listener that keeps PostgreSQL's cache of shipments with their containers (the API's
//! most frequent read, `GET /v2/shipments/{id}`) true, and wakes the job runners.
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
//! The cache itself, and how a read in flight during a change is kept out of it, is
//! [`tidemark_store::ReadCache`].
//!
//! The same connection also listens on [`JOBS_CHANNEL`], which every job queued announces
//! on commit (migration 0020), and wakes this process's job runners on each: that is how
//! a job queued by any process starts within milliseconds. It wakes them too each time it
//! has (re)subscribed, since notifications sent while it was away are lost.

use std::sync::Weak;
use std::time::Duration;

use tidemark_store::{JobWakeups, ReadCache};
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
                Err(_) => cache.forget_all(),
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
