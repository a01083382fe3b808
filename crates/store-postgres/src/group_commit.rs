//! Group commit for tracking results. A poll's write is a few pipelined statements, and its
//! cost is mostly the commit: waiting for the WAL to reach the disk, one commit after
//! another, since a transaction that notifies (the shipment triggers do) holds a lock
//! across its commit that the next notifying commit waits for. Tracking results are
//! therefore handed to a few writer tasks, each of which writes whatever has queued up
//! meanwhile in one transaction and commits once. A caller is answered only after the
//! commit, so a reply still means the result is durable.
//!
//! When anything in a batch fails (a tracking request changed since its poll read it, say),
//! the batch is rolled back and each of its results is written again alone, so each caller
//! gets exactly the outcome its result has on its own.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use deadpool_postgres::Pool;
use tidemark_domain::tracking_update::TrackingUpdate;
use tidemark_domain::{DomainEvent, TrackingRequest};
use tidemark_store::StoreResult;
use tokio::sync::{Mutex, mpsc, oneshot};

use crate::convert::backend;
use crate::shipments::{record_tracking_result, write_tracking_result};

/// At most this many results share a transaction, so one commit stays short.
const MAX_BATCH: usize = 64;
/// Batches written at once: one is being filled and written while another commits.
const WRITERS: usize = 2;

/// What `record_tracking_result` writes, owned so a writer task can hold it.
pub struct TrackingResult {
    pub request: TrackingRequest,
    pub read_at: DateTime<Utc>,
    pub update: Option<TrackingUpdate>,
    pub events: Vec<DomainEvent>,
}

struct Pending {
    result: TrackingResult,
    reply: oneshot::Sender<StoreResult<()>>,
}

/// The queue in front of the writer tasks, which end when this is dropped.
pub struct GroupCommit {
    queue: mpsc::UnboundedSender<Pending>,
}

impl GroupCommit {
    /// Starts the writer tasks on the current runtime, writing through `pool`.
    pub fn start(pool: Pool) -> Self {
        let (queue, pending) = mpsc::unbounded_channel();
        let pending = Arc::new(Mutex::new(pending));
        for _ in 0..WRITERS {
            tokio::spawn(run(pool.clone(), Arc::clone(&pending)));
        }
        Self { queue }
    }

    /// Writes `result` with whatever else is waiting, and returns once it is committed.
    pub async fn write(&self, result: TrackingResult) -> StoreResult<()> {
        let (reply, outcome) = oneshot::channel();
        self.queue
            .send(Pending { result, reply })
            .map_err(|_| backend("the PostgreSQL result writers have stopped"))?;
        outcome
            .await
            .unwrap_or_else(|_| Err(backend("a PostgreSQL result writer stopped mid-write")))
    }
}

async fn run(pool: Pool, pending: Arc<Mutex<mpsc::UnboundedReceiver<Pending>>>) {
    loop {
        // Waits for the first result, then takes what queued up while the other writer was
        // busy: under load batches grow by themselves, when idle a result goes alone.
        let batch = {
            let mut pending = pending.lock().await;
            let Some(first) = pending.recv().await else {
                return;
            };
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match pending.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
            batch
        };
        write_batch(&pool, batch).await;
    }
}

/// Writes a batch in one transaction and answers every caller; on any failure, writes each
/// result again alone.
async fn write_batch(pool: &Pool, batch: Vec<Pending>) {
    let mut client = match pool.get().await {
        Ok(client) => client,
        Err(error) => {
            let message = error.to_string();
            for p in batch {
                // A caller that went away needs no answer.
                let _ = p.reply.send(Err(backend(message.clone())));
            }
            return;
        }
    };
    if batch.len() > 1 {
        match write_together(&mut client, &batch).await {
            Ok(()) => {
                for p in batch {
                    let _ = p.reply.send(Ok(()));
                }
                return;
            }
            Err(error) => {
                tracing::debug!(error = ?error, results = batch.len(), "a batch of tracking results failed; writing each alone");
            }
        }
    }
    for p in batch {
        let r = &p.result;
        let outcome = record_tracking_result(
            &mut client,
            &r.request,
            r.read_at,
            r.update.as_ref(),
            &r.events,
        )
        .await;
        let _ = p.reply.send(outcome);
    }
}

async fn write_together(
    client: &mut deadpool_postgres::Client,
    batch: &[Pending],
) -> StoreResult<()> {
    let tx = client.transaction().await.map_err(backend)?;
    for p in batch {
        let r = &p.result;
        write_tracking_result(&tx, &r.request, r.read_at, r.update.as_ref(), &r.events).await?;
    }
    tx.commit().await.map_err(backend)
}
