//! Group commit for tracking results. SQLite has one writer, and a poll's write is small, so
//! most of its cost was the commit itself (appending to the WAL, checkpointing). Tracking
//! results are therefore handed to one writer thread, which writes whatever has queued up
//! meanwhile in one transaction, each result in its own savepoint, and commits once. A caller
//! is answered only after the commit, so a reply still means the result is durable, and one
//! result that fails (a changed tracking request, say) is rolled back alone.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};
use rusqlite::{Connection, TransactionBehavior};
use tidemark_domain::tracking_update::TrackingUpdate;
use tidemark_domain::{DomainEvent, TrackingRequest};
use tidemark_store::StoreResult;
use tokio::sync::oneshot;

use crate::convert::backend;
use crate::shipments::write_tracking_result;

/// At most this many results share a transaction, so one commit stays short.
const MAX_BATCH: usize = 64;

/// What `record_tracking_result` writes, owned so the writer thread can hold it.
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

/// The queue in front of the writer thread. The thread ends when this is dropped.
pub struct GroupCommit {
    queue: Mutex<Sender<Pending>>,
}

impl GroupCommit {
    /// Starts the writer thread, which shares `writer` with the store's other writes.
    pub fn start(writer: Arc<Mutex<Connection>>) -> StoreResult<Self> {
        let (queue, pending) = mpsc::channel();
        std::thread::Builder::new()
            .name("sqlite-group-commit".to_owned())
            .spawn(move || run(&writer, &pending))
            .map_err(backend)?;
        Ok(Self {
            queue: Mutex::new(queue),
        })
    }

    /// Writes `result` with whatever else is waiting, and returns once it is committed.
    pub async fn write(&self, result: TrackingResult) -> StoreResult<()> {
        let (reply, outcome) = oneshot::channel();
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(Pending { result, reply })
            .map_err(|_| backend("the SQLite writer thread has stopped"))?;
        outcome
            .await
            .unwrap_or_else(|_| Err(backend("the SQLite writer thread stopped mid-write")))
    }
}

fn run(writer: &Mutex<Connection>, pending: &Receiver<Pending>) {
    // Blocks for the first result, then takes what queued up while the last batch was
    // written: under load batches grow by themselves, when idle a result goes alone.
    while let Ok(first) = pending.recv() {
        let mut batch = vec![first];
        batch.extend(pending.try_iter().take(MAX_BATCH - 1));
        let mut conn = writer.lock().unwrap_or_else(PoisonError::into_inner);
        // A panic (a bug) fails this batch only: its transaction rolls back as it unwinds,
        // its callers' reply channels drop (they get an error), and the thread goes on
        // serving the next batches instead of refusing every write until a restart.
        let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            write_batch(&mut conn, batch);
        }));
        if written.is_err() {
            tracing::error!("the SQLite group-commit writer panicked; that batch was rolled back");
        }
    }
}

/// Writes a batch in one transaction and answers every caller.
fn write_batch(conn: &mut Connection, batch: Vec<Pending>) {
    let mut tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(tx) => tx,
        Err(error) => {
            let message = error.to_string();
            for p in batch {
                // A caller that went away needs no answer.
                let _ = p.reply.send(Err(backend(message.clone())));
            }
            return;
        }
    };
    let mut outcomes = Vec::with_capacity(batch.len());
    for p in &batch {
        let r = &p.result;
        // Dropping a savepoint without committing rolls back what it wrote.
        let outcome = tx.savepoint().map_err(backend).and_then(|savepoint| {
            write_tracking_result(
                &savepoint,
                &r.request,
                r.read_at,
                r.update.as_ref(),
                &r.events,
            )?;
            savepoint.commit().map_err(backend)
        });
        outcomes.push(outcome);
    }
    let committed = tx.commit().map_err(|e| e.to_string());
    for (p, outcome) in batch.into_iter().zip(outcomes) {
        let outcome = match &committed {
            Ok(()) => outcome,
            Err(message) => Err(backend(message.clone())),
        };
        let _ = p.reply.send(outcome);
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};
    use tidemark_domain::tracking_update::{CarrierReport, Known, plan};
    use tidemark_domain::{
        Account, AccountId, RequestType, SequentialIds, TrackingRequestId, TrackingRequestStatus,
    };
    use tidemark_store::{Store, StoreError};

    use super::*;
    use crate::SqliteStore;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap()
    }

    fn request(ids: &SequentialIds, account: AccountId, number: &str) -> TrackingRequest {
        TrackingRequest {
            id: TrackingRequestId::new(ids),
            account_id: account,
            request_type: RequestType::BillOfLading,
            request_number: number.to_owned(),
            scac: "MAEU".to_owned(),
            ref_numbers: Vec::new(),
            shipment_tags: Vec::new(),
            status: TrackingRequestStatus::Pending,
            failed_reason: None,
            is_retrying: false,
            retry_count: None,
            shipment_id: None,
            initial_custom_fields: None,
            customer_id: None,
            submitted_by: None,
            polled_at: None,
            created_at: t0(),
            updated_at: t0(),
        }
    }

    /// The request made `created`, with its new shipment, as a poll would record it.
    fn created(
        ids: &SequentialIds,
        stored: &TrackingRequest,
        read_at: DateTime<Utc>,
    ) -> TrackingResult {
        let update = plan(
            stored,
            Known::default(),
            &CarrierReport::default(),
            ids,
            t0(),
        );
        let mut request = stored.clone();
        request.status = TrackingRequestStatus::Created;
        request.shipment_id = Some(update.shipment.id);
        request.updated_at = t0() + Duration::hours(1);
        TrackingResult {
            request,
            read_at,
            update: Some(update),
            events: Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_result_that_fails_in_a_group_is_rolled_back_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("group.db")).unwrap();
        let ids = SequentialIds::default();
        let account = Account {
            id: AccountId::new(&ids),
            name: "acme".to_owned(),
            created_at: t0(),
        };
        store.create_account(&account).await.unwrap();
        let requests: Vec<TrackingRequest> = ["BL000001", "BL000002", "BL000003"]
            .iter()
            .map(|number| request(&ids, account.id, number))
            .collect();
        for r in &requests {
            store.create_tracking_request(r).await.unwrap();
        }
        // The middle result was read before a change it did not see.
        let results: Vec<TrackingResult> = requests
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let read_at = if i == 1 {
                    t0() - Duration::minutes(5)
                } else {
                    r.updated_at
                };
                created(&ids, r, read_at)
            })
            .collect();
        let shipments: Vec<_> = results
            .iter()
            .filter_map(|r| r.update.as_ref().map(|u| u.shipment.id))
            .collect();
        let (batch, answers): (Vec<_>, Vec<_>) = results
            .into_iter()
            .map(|result| {
                let (reply, answer) = oneshot::channel();
                (Pending { result, reply }, answer)
            })
            .unzip();

        write_batch(&mut store.writer(), batch);

        let mut outcomes = Vec::new();
        for answer in answers {
            outcomes.push(answer.await.unwrap());
        }
        assert!(outcomes[0].is_ok() && outcomes[2].is_ok());
        assert!(matches!(outcomes[1], Err(StoreError::Conflict { .. })));
        let statuses: Vec<_> = statuses_of(&store, account.id, &requests).await;
        assert_eq!(
            statuses,
            [
                TrackingRequestStatus::Created,
                TrackingRequestStatus::Pending,
                TrackingRequestStatus::Created
            ]
        );
        let found: Vec<bool> = {
            let mut found = Vec::new();
            for id in shipments {
                found.push(store.shipment(account.id, id).await.is_ok());
            }
            found
        };
        assert_eq!(found, [true, false, true]);
    }

    async fn statuses_of(
        store: &SqliteStore,
        account: AccountId,
        requests: &[TrackingRequest],
    ) -> Vec<TrackingRequestStatus> {
        let mut statuses = Vec::new();
        for r in requests {
            statuses.push(store.tracking_request(account, r.id).await.unwrap().status);
        }
        statuses
    }
}
