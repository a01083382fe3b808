//! The workers: each queued job's dispatch to its use case, the worker loop and the schedules.
//!
//! Jobs live in the store (DESIGN.md §1), so any worker process may run any job, and a job
//! survives restarts. The kinds of job and how use cases queue them are in
//! [`crate::use_cases::queue`]; a new kind adds a variant there and an arm to [`Dispatcher`].

pub mod runner;

use std::sync::Arc;

use async_trait::async_trait;
use chrono::Duration;
use tidemark_domain::{Job, RetryPolicy};
use tidemark_store::StoreError;
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::use_cases::documents::classify::DocumentType;
use crate::use_cases::documents::process::Action;
pub use crate::use_cases::queue::{JobKind, enqueue};
pub use runner::Runner;

/// Finished jobs are kept this long for inspection, then purged.
const FINISHED_JOB_RETENTION_DAYS: i64 = 7;
/// `Idempotency-Key`s are honoured this long.
const IDEMPOTENCY_KEY_HOURS: i64 = 24;
const HOUSEKEEPING_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// How a job attempt failed: worth retrying, or not.
#[derive(Debug)]
pub enum JobError {
    Retry(anyhow::Error),
    Fail(anyhow::Error),
}

impl JobError {
    pub fn retry(error: impl Into<anyhow::Error>) -> Self {
        Self::Retry(error.into())
    }

    pub fn fail(error: impl Into<anyhow::Error>) -> Self {
        Self::Fail(error.into())
    }
}

impl From<StoreError> for JobError {
    // A database hiccup is transient; the job will be retried with backoff.
    fn from(error: StoreError) -> Self {
        Self::Retry(error.into())
    }
}

/// Runs one job attempt.
#[async_trait]
pub trait JobHandler: Send + Sync {
    async fn run(&self, job: &Job) -> Result<(), JobError>;
}

/// The production handler: routes each job to its use case.
pub struct Dispatcher {
    pub app: Arc<App>,
}

#[async_trait]
impl JobHandler for Dispatcher {
    async fn run(&self, job: &Job) -> Result<(), JobError> {
        match JobKind::parse(&job.kind) {
            Some(JobKind::PurgeFinishedJobs) => {
                let before = self.app.clock.now() - Duration::days(FINISHED_JOB_RETENTION_DAYS);
                let purged = self.app.store.purge_finished_jobs(before).await?;
                let keys = self
                    .app
                    .store
                    .purge_idempotency_keys(
                        self.app.clock.now() - Duration::hours(IDEMPOTENCY_KEY_HOURS),
                    )
                    .await?;
                let positions = crate::use_cases::vessels::purge_old_positions(
                    &self.app,
                    self.app.config.ais.retention_days,
                )
                .await?;
                let uploads = crate::use_cases::documents::upload::remove_expired_direct_uploads(
                    &self.app,
                    &self.app.documents,
                )
                .await?;
                let terminal_asks = self.app.store.forget_finished_terminal_asks().await?;
                tracing::info!(
                    purged,
                    idempotency_keys = keys,
                    vessel_positions = positions,
                    direct_uploads = uploads,
                    terminal_asks,
                    "purged finished jobs, old idempotency keys, old vessel positions, \
                     expired direct uploads and terminals' asks of containers that are out"
                );
                Ok(())
            }
            Some(JobKind::Track) => {
                let payload: TrackPayload = serde_json::from_value(job.payload.clone())
                    .map_err(|e| JobError::fail(anyhow::anyhow!("bad track payload: {e}")))?;
                match crate::use_cases::tracking::engine::poll(
                    &self.app.engine(),
                    payload.account_id,
                    payload.tracking_request_id,
                    payload.forced,
                )
                .await
                {
                    Ok(outcome) => {
                        tracing::debug!(?outcome, tracking_request.id = %payload.tracking_request_id, "polled");
                        Ok(())
                    }
                    // The request was deleted with its account: nothing to follow.
                    Err(StoreError::NotFound) => Ok(()),
                    Err(error) => Err(error.into()),
                }
            }
            Some(JobKind::DeliverWebhook) => {
                let payload: DeliverPayload = serde_json::from_value(job.payload.clone())
                    .map_err(|e| JobError::fail(anyhow::anyhow!("bad delivery payload: {e}")))?;
                match crate::use_cases::webhooks::deliver::drain(
                    &self.app,
                    &self.app.webhook_client,
                    payload.account_id,
                    payload.webhook_id,
                )
                .await
                {
                    Ok(attempts) => {
                        tracing::debug!(attempts, webhook.id = %payload.webhook_id, "delivered");
                        Ok(())
                    }
                    // The webhook was deleted meanwhile: nothing left to deliver.
                    Err(StoreError::NotFound) => Ok(()),
                    Err(error) => Err(error.into()),
                }
            }
            Some(JobKind::ProcessDocument) => {
                let payload: DocumentPayload = serde_json::from_value(job.payload.clone())
                    .map_err(|e| JobError::fail(anyhow::anyhow!("bad document payload: {e}")))?;
                let action = Action::from_payload(payload.action.as_deref(), payload.document_type)
                    .ok_or_else(|| {
                        JobError::fail(anyhow::anyhow!(
                            "unknown document action {:?}",
                            payload.action
                        ))
                    })?;
                let outcome = crate::use_cases::documents::process::run(
                    &self.app,
                    self.app.files(),
                    payload.account_id,
                    payload.document_id,
                    action,
                )
                .await
                .map_err(JobError::retry)?;
                tracing::info!(?outcome, document.id = %payload.document_id, "processed a document");
                Ok(())
            }
            Some(JobKind::RotateDocument) => {
                let payload: RotatePayload = serde_json::from_value(job.payload.clone())
                    .map_err(|e| JobError::fail(anyhow::anyhow!("bad rotation payload: {e}")))?;
                let outcome = crate::use_cases::documents::rotate::run(
                    &self.app,
                    self.app.files(),
                    payload.account_id,
                    payload.document_id,
                    payload.degrees,
                )
                .await
                .map_err(JobError::retry)?;
                tracing::info!(?outcome, document.id = %payload.document_id, "rotated a document");
                Ok(())
            }
            Some(JobKind::ProcessEdiMessage) => {
                let payload: EdiMessagePayload = serde_json::from_value(job.payload.clone())
                    .map_err(|e| JobError::fail(anyhow::anyhow!("bad EDI payload: {e}")))?;
                match crate::use_cases::edi::process(
                    &self.app.edi(),
                    payload.account_id,
                    payload.edi_message_id,
                )
                .await
                {
                    Ok(message) => {
                        tracing::debug!(edi_message.id = %message.id, status = %message.status, "read an EDI interchange");
                        Ok(())
                    }
                    Err(StoreError::NotFound) => Ok(()),
                    Err(error) => Err(error.into()),
                }
            }
            Some(JobKind::ApplyEdi) => {
                let payload: ApplyEdiPayload = serde_json::from_value(job.payload.clone())
                    .map_err(|e| JobError::fail(anyhow::anyhow!("bad EDI payload: {e}")))?;
                let Some(request) = payload.tracking_request_id else {
                    return self
                        .apply_edi_all(payload.account_id, &payload.tracking_request_ids)
                        .await;
                };
                match crate::use_cases::tracking::engine::apply_edi(
                    &self.app.engine(),
                    payload.account_id,
                    request,
                )
                .await
                {
                    Ok(outcome) => {
                        tracing::debug!(?outcome, tracking_request.id = %request, "applied EDI");
                        Ok(())
                    }
                    Err(StoreError::NotFound) => Ok(()),
                    Err(error) => Err(error.into()),
                }
            }
            Some(JobKind::CheckTerminal) => {
                let terminal = job
                    .payload
                    .get("terminal")
                    .and_then(serde_json::Value::as_str)
                    .ok_or_else(|| JobError::fail(anyhow::anyhow!("bad terminal payload")))?;
                let outcome = crate::use_cases::terminals::check::check(
                    &self.app.terminals_context(),
                    terminal,
                )
                .await?;
                tracing::debug!(terminal, ?outcome, "checked a terminal");
                Ok(())
            }
            None => Err(JobError::fail(anyhow::anyhow!(
                "unknown job kind {:?}",
                job.kind
            ))),
        }
    }
}

impl Dispatcher {
    /// An `apply_edi` job of several requests. A request whose result failed gets a job
    /// of its own, retried on its own, so the others' results (written) are not applied
    /// again; a failure reading for them all retries the whole job, nothing being written.
    async fn apply_edi_all(
        &self,
        account: tidemark_domain::AccountId,
        requests: &[tidemark_domain::TrackingRequestId],
    ) -> Result<(), JobError> {
        let app = &self.app;
        let outcomes =
            crate::use_cases::tracking::engine::apply_edi_all(&app.engine(), account, requests)
                .await?;
        for (request, outcome) in outcomes {
            match outcome {
                Ok(outcome) => {
                    tracing::debug!(?outcome, tracking_request.id = %request, "applied EDI");
                }
                Err(StoreError::NotFound) => {}
                Err(error) => {
                    tracing::info!(tracking_request.id = %request, error = ?error, "applying EDI failed; it gets a job of its own");
                    crate::use_cases::queue::enqueue(
                        app,
                        JobKind::ApplyEdi,
                        serde_json::json!({"account_id": account, "tracking_request_id": request}),
                        Some(format!("apply-edi:{request}")),
                        app.clock.now(),
                    )
                    .await?;
                }
            }
        }
        Ok(())
    }
}

#[derive(serde::Deserialize)]
struct DocumentPayload {
    account_id: tidemark_domain::AccountId,
    document_id: uuid::Uuid,
    /// A re-run (`reclassify`, `reextract`, `relink`); none after an upload.
    #[serde(default)]
    action: Option<String>,
    /// The type a user gave to `reclassify`.
    #[serde(default)]
    document_type: Option<DocumentType>,
}

#[derive(serde::Deserialize)]
struct RotatePayload {
    account_id: tidemark_domain::AccountId,
    document_id: uuid::Uuid,
    degrees: u16,
}

#[derive(serde::Deserialize)]
struct DeliverPayload {
    account_id: tidemark_domain::AccountId,
    webhook_id: tidemark_domain::WebhookId,
}

#[derive(serde::Deserialize)]
struct EdiMessagePayload {
    account_id: tidemark_domain::AccountId,
    edi_message_id: uuid::Uuid,
}

/// An `apply_edi` job's: one request, or several an interchange matched.
#[derive(serde::Deserialize)]
struct ApplyEdiPayload {
    account_id: tidemark_domain::AccountId,
    #[serde(default)]
    tracking_request_id: Option<tidemark_domain::TrackingRequestId>,
    #[serde(default)]
    tracking_request_ids: Vec<tidemark_domain::TrackingRequestId>,
}

#[derive(serde::Deserialize)]
struct TrackPayload {
    account_id: tidemark_domain::AccountId,
    tracking_request_id: tidemark_domain::TrackingRequestId,
    /// A refresh the user asked for: poll even if not due.
    #[serde(default)]
    forced: bool,
}

/// The runner the app's workers use.
pub fn runner(app: &Arc<App>) -> Runner {
    Runner {
        store: Arc::clone(&app.store),
        clock: Arc::clone(&app.clock),
        handler: Arc::new(Dispatcher {
            app: Arc::clone(app),
        }),
        policy: RetryPolicy::default(),
        // Leases are written in the clock's time, which demo mode runs fast; the heartbeat
        // runs in real time.
        lease: app.config.job_lease * i32::try_from(app.config.demo_time_scale).unwrap_or(1),
        concurrency: app.config.worker_concurrency,
        poll_interval: app.config.job_poll_interval,
        wakeups: app.store.job_wakeups(),
        heartbeat: app.config.job_heartbeat,
        time_limit: app.config.job_time_limit,
        held: runner::Held::default(),
    }
}

/// The worker process: the job runner plus the housekeeping schedule.
pub async fn run(app: Arc<App>, shutdown: CancellationToken) {
    let housekeeping = tokio::spawn(schedule_housekeeping(Arc::clone(&app), shutdown.clone()));
    let polls = tokio::spawn(schedule_polls(Arc::clone(&app), shutdown.clone()));
    let sandbox_ais = tokio::spawn(crate::use_cases::vessels::sandbox::run(
        app.core.clone(),
        app.config.ais.clone(),
        app.sandbox_ais.clone(),
        app.config.demo_time_scale,
        shutdown.clone(),
    ));
    crate::use_cases::vessels::ais::start_sources(&app, &app.config.ais, &shutdown);
    runner(&app).run_until(shutdown).await;
    let _ = tokio::join!(housekeeping, polls, sandbox_ais);
}

/// Sweeps for due carrier polls and queues the terminals' checks every `scheduler_tick` of
/// the process's clock: with a fast demo clock, as often as that asks but at most once a real
/// second (ticking every real minute would let ten days of a voyage pass between two looks,
/// and a sandbox box's hours at the terminal would never be seen). Budgets are spent over
/// what passes on the clock between two ticks.
async fn schedule_polls(app: Arc<App>, shutdown: CancellationToken) {
    let (tick, real) = tidemark_domain::clock::scaled_interval(
        app.config.scheduler_tick,
        app.config.demo_time_scale,
    );
    loop {
        match crate::use_cases::tracking::sweep(&app.engine(), tick).await {
            Ok(queued) => tracing::debug!(queued, "scheduled carrier polls"),
            Err(error) => tracing::warn!(error = ?error, "cannot schedule carrier polls"),
        }
        // Terminals are asked on their own jobs: a slow terminal never holds up carriers.
        if let Err(error) =
            crate::use_cases::terminals::check::sweep(&app.terminals_context()).await
        {
            tracing::warn!(error = ?error, "cannot queue terminal checks; the next tick will");
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(real) => {}
        }
    }
}

async fn schedule_housekeeping(app: Arc<App>, shutdown: CancellationToken) {
    loop {
        let queued = enqueue(
            &app,
            JobKind::PurgeFinishedJobs,
            serde_json::Value::Null,
            Some(JobKind::PurgeFinishedJobs.name().to_owned()),
            app.clock.now(),
        )
        .await;
        if let Err(error) = queued {
            tracing::warn!(error = ?error, "cannot schedule housekeeping");
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(HOUSEKEEPING_EVERY) => {}
        }
    }
}
