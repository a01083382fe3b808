//! Claims due jobs, runs them with bounded concurrency, and records each outcome.

use std::sync::Arc;

use chrono::Duration;
use tidemark_domain::{Clock, Job, RetryPolicy};
use tidemark_store::{JobOutcome, Store, StoreError};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{JobError, JobHandler};

#[derive(Clone)]
pub struct Runner {
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    pub handler: Arc<dyn JobHandler>,
    pub policy: RetryPolicy,
    pub lease: Duration,
    pub concurrency: usize,
    pub poll_interval: std::time::Duration,
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

    /// The worker loop: keeps up to `concurrency` jobs running, claiming more as soon as a
    /// slot frees (a slow carrier call holds one slot, not the batch), sleeps
    /// `poll_interval` when nothing is due, and stops once `shutdown` is cancelled, after
    /// finishing the jobs it has started.
    pub async fn run_until(&self, shutdown: CancellationToken) {
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
            let batch = self.claim(free).await;
            if batch.is_empty() {
                tokio::select! {
                    () = shutdown.cancelled() => break,
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
        // The attempt's own task: if it panics, the JoinError turns the panic into a retry
        // instead of taking the worker down.
        let attempt = tokio::spawn({
            let job = job.clone();
            async move { handler.run(&job).await }
        })
        .await;
        let result = attempt
            .unwrap_or_else(|panic| Err(JobError::retry(anyhow::anyhow!("job panicked: {panic}"))));
        self.record(&job, result).await;
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
