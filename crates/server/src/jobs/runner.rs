//! Claims due jobs, runs them with bounded concurrency, and records each outcome.
//!
//! An idle runner waits for the store's [`JobWakeups`] (fired when any job is committed, by
//! any process) and looks at the queue every `poll_interval` only as a safety net. While it
//! runs jobs it renews their leases every `heartbeat`, so a short lease is enough: the jobs
//! of a worker that died are claimed again one lease after its last heartbeat, while a slow
//! but living worker keeps its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use chrono::Duration;
use tidemark_domain::{Clock, Job, JobId, RetryPolicy};
use tidemark_store::{JobOutcome, JobWakeups, Store, StoreError};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{JobError, JobHandler};

#[derive(Clone)]
pub struct Runner {
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    pub handler: Arc<dyn JobHandler>,
    pub policy: RetryPolicy,
    /// A claim's lease, in the clock's time; renewed every `heartbeat` while the job runs.
    pub lease: Duration,
    pub concurrency: usize,
    /// How often an idle runner looks at the queue without being woken.
    pub poll_interval: std::time::Duration,
    /// Fired when a job may have become due (the store's [`Store::job_wakeups`]).
    pub wakeups: JobWakeups,
    /// How often the leases of the running jobs are renewed.
    pub heartbeat: std::time::Duration,
    /// An attempt running longer than this is abandoned and retried.
    pub time_limit: std::time::Duration,
    /// The attempts this runner holds, for the heartbeat.
    pub held: Held,
}

/// The `(job, attempt)`s a runner is running now.
#[derive(Clone, Debug, Default)]
pub struct Held(Arc<Mutex<HashMap<JobId, u32>>>);

impl Held {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<JobId, u32>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn snapshot(&self) -> Vec<(JobId, u32)> {
        self.lock()
            .iter()
            .map(|(id, attempt)| (*id, *attempt))
            .collect()
    }
}

impl Runner {
    /// Runs every job that is due now, batch after batch, until none is left; returns how
    /// many attempts ran. Tests call this to drive the workers deterministically.
    pub async fn run_pending(&self) -> usize {
        let mut ran = 0;
        loop {
            let batch = self.claim_batch().await;
            if batch.is_empty() {
                return ran;
            }
            ran += batch.len();
            self.run_batch(batch).await;
        }
    }

    /// The worker loop: takes back the leases a dead predecessor left (where the store can
    /// tell, see [`Store::release_orphaned_jobs`]), then keeps up to `concurrency` jobs
    /// running, claiming more as soon as a slot frees (a slow carrier call holds one slot,
    /// not the batch) or a job is committed, looks again every `poll_interval` when nothing
    /// wakes it, renews its leases every `heartbeat`, and stops once `shutdown` is
    /// cancelled, after finishing the jobs it has started.
    pub async fn run_until(&self, shutdown: CancellationToken) {
        match self.store.release_orphaned_jobs(self.clock.now()).await {
            Ok(0) => {}
            Ok(released) => tracing::info!(released, "took back the jobs of a stopped process"),
            Err(error) => tracing::warn!(error = ?error, "cannot take back orphaned jobs"),
        }
        let heartbeat = tokio::spawn(self.clone().beat(shutdown.clone()));
        let slots = self.concurrency.max(1);
        let mut running: JoinSet<()> = JoinSet::new();
        while !shutdown.is_cancelled() {
            while running.try_join_next().is_some() {}
            let free = slots.saturating_sub(running.len());
            if free == 0 {
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    _ = running.join_next() => {}
                }
                continue;
            }
            // Listening before looking: a job committed in between still wakes us.
            let woken = self.wakeups.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let batch = self.claim(free).await;
            if batch.is_empty() {
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    () = &mut woken => {}
                    () = tokio::time::sleep(self.poll_interval) => {}
                    Some(_) = running.join_next(), if !running.is_empty() => {}
                }
                continue;
            }
            for job in batch {
                let runner = self.clone();
                running.spawn(async move { runner.execute(job).await });
            }
        }
        while running.join_next().await.is_some() {}
        heartbeat.abort();
    }

    /// Renews the leases of the running jobs every `heartbeat` until `shutdown`.
    async fn beat(self, shutdown: CancellationToken) {
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(self.heartbeat) => {}
            }
            let held = self.held.snapshot();
            if held.is_empty() {
                continue;
            }
            let until = self.clock.now() + self.lease;
            if let Err(error) = self.store.extend_job_leases(&held, until).await {
                tracing::warn!(error = ?error, "cannot renew the leases of running jobs");
            }
        }
    }

    async fn claim_batch(&self) -> Vec<Job> {
        self.claim(self.concurrency).await
    }

    async fn claim(&self, count: usize) -> Vec<Job> {
        let limit = u32::try_from(count).unwrap_or(u32::MAX).max(1);
        match self
            .store
            .claim_jobs(self.clock.now(), self.lease, limit)
            .await
        {
            Ok(jobs) => jobs,
            Err(error) => {
                tracing::warn!(error = ?error, "cannot claim jobs");
                Vec::new()
            }
        }
    }

    async fn run_batch(&self, batch: Vec<Job>) {
        let mut running = JoinSet::new();
        for job in batch {
            let runner = self.clone();
            running.spawn(async move { runner.execute(job).await });
        }
        while running.join_next().await.is_some() {}
    }

    /// Runs one attempt and records its outcome.
    async fn execute(self, job: Job) {
        let handler = Arc::clone(&self.handler);
        self.held.lock().insert(job.id, job.attempts);
        // The attempt's own task: if it panics, the JoinError turns the panic into a retry
        // instead of taking the worker down.
        let mut attempt = tokio::spawn({
            let job = job.clone();
            async move { handler.run(&job).await }
        });
        let result = match tokio::time::timeout(self.time_limit, &mut attempt).await {
            Ok(joined) => joined.unwrap_or_else(|panic| {
                Err(JobError::retry(anyhow::anyhow!("job panicked: {panic}")))
            }),
            Err(_) => {
                attempt.abort();
                Err(JobError::retry(anyhow::anyhow!(
                    "abandoned after {} s",
                    self.time_limit.as_secs()
                )))
            }
        };
        self.record(&job, result).await;
        self.held.lock().remove(&job.id);
    }

    async fn record(&self, job: &Job, result: Result<(), JobError>) {
        let now = self.clock.now();
        let outcome = match result {
            Ok(()) => JobOutcome::Succeeded,
            Err(JobError::Fail(error)) => JobOutcome::Failed {
                error: format!("{error:#}"),
            },
            Err(JobError::Retry(error)) if job.attempts >= job.max_attempts => JobOutcome::Failed {
                error: format!("gave up after {} attempts: {error:#}", job.attempts),
            },
            Err(JobError::Retry(error)) => JobOutcome::RetryAt {
                at: now + self.policy.delay_after(job.attempts, rand::random::<f64>()),
                error: format!("{error:#}"),
            },
        };
        match &outcome {
            JobOutcome::Succeeded => {
                tracing::debug!(job.id = %job.id, job.kind = %job.kind, "job succeeded");
            }
            JobOutcome::RetryAt { at, error } => {
                tracing::warn!(job.id = %job.id, job.kind = %job.kind, %at, error, "job will be retried");
            }
            JobOutcome::Failed { error } => {
                tracing::error!(job.id = %job.id, job.kind = %job.kind, error, "job failed");
            }
        }
        // A label from the fixed set of kinds: a row's text never makes a series.
        let kind =
            crate::use_cases::queue::JobKind::parse(&job.kind).map_or("other", |kind| kind.name());
        metrics::counter!("tidemark_jobs_finished_total", "kind" => kind, "outcome" => outcome_name(&outcome)).increment(1);
        match self
            .store
            .finish_job(job.id, job.attempts, &outcome, now)
            .await
        {
            Ok(()) => {}
            Err(StoreError::Conflict { .. }) => {
                tracing::warn!(job.id = %job.id, "lease lost: another worker has taken this job over");
            }
            Err(error) => {
                tracing::error!(job.id = %job.id, error = ?error, "cannot record job outcome");
            }
        }
    }
}

fn outcome_name(outcome: &JobOutcome) -> &'static str {
    match outcome {
        JobOutcome::Succeeded => "succeeded",
        JobOutcome::RetryAt { .. } => "retry",
        JobOutcome::Failed { .. } => "failed",
    }
}
