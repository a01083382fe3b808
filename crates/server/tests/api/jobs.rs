//! The worker: retries with backoff, gives up, survives panics, runs housekeeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use chrono::Duration;
use tidemark_domain::{Clock, Job, JobId, JobState, NewJob, RetryPolicy};
use tidemark_server::jobs::{JobError, JobHandler, Runner};

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    a_failing_job_is_retried_after_a_backoff,
    a_job_is_given_up_after_its_last_attempt,
    a_permanent_error_fails_the_job_at_once,
    a_panicking_job_is_retried_instead_of_crashing_the_worker,
    a_job_of_an_unknown_kind_fails,
    housekeeping_purges_old_finished_jobs,
    a_worker_asked_to_stop_finishes_the_job_in_hand,
    a_slow_job_does_not_hold_back_the_others,
);

/// Fails the first `failures` attempts with a retryable error, then succeeds.
struct Flaky {
    failures: usize,
    calls: AtomicUsize,
}

#[async_trait]
impl JobHandler for Flaky {
    async fn run(&self, _: &Job) -> Result<(), JobError> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        if call < self.failures {
            Err(JobError::retry(anyhow::anyhow!("carrier unavailable")))
        } else {
            Ok(())
        }
    }
}

struct Permanent;

#[async_trait]
impl JobHandler for Permanent {
    async fn run(&self, _: &Job) -> Result<(), JobError> {
        Err(JobError::fail(anyhow::anyhow!("number not found")))
    }
}

struct Panics;

#[async_trait]
impl JobHandler for Panics {
    async fn run(&self, _: &Job) -> Result<(), JobError> {
        panic!("bug in a job");
    }
}

fn runner(app: &TestApp, handler: Arc<dyn JobHandler>) -> Runner {
    Runner {
        store: Arc::clone(&app.app.store),
        clock: Arc::clone(&app.app.clock),
        handler,
        policy: RetryPolicy {
            base: Duration::seconds(10),
            cap: Duration::hours(1),
            jitter: 0.0,
        },
        lease: Duration::minutes(5),
        concurrency: 4,
        poll_interval: std::time::Duration::from_millis(10),
        wakeups: app.app.store.job_wakeups(),
        heartbeat: std::time::Duration::from_secs(1),
        time_limit: std::time::Duration::from_secs(60),
        held: tidemark_server::jobs::runner::Held::default(),
    }
}

async fn enqueue(app: &TestApp, kind: &str, max_attempts: u32) -> JobId {
    let job = NewJob {
        id: JobId::new(app.app.ids.as_ref()),
        kind: kind.to_owned(),
        payload: serde_json::json!({}),
        dedup_key: None,
        run_at: app.clock.now(),
        max_attempts,
    };
    app.app
        .store
        .enqueue_job(&job, app.clock.now())
        .await
        .unwrap()
}

async fn a_failing_job_is_retried_after_a_backoff(app: TestApp) {
    let id = enqueue(&app, "test", 5).await;
    let runner = runner(
        &app,
        Arc::new(Flaky {
            failures: 1,
            calls: AtomicUsize::new(0),
        }),
    );

    let first = runner.run_pending().await;
    let too_soon = runner.run_pending().await;
    app.clock.advance(Duration::seconds(10));
    let retried = runner.run_pending().await;

    assert_eq!((first, too_soon, retried), (1, 0, 1));
    let job = app.app.store.job(id).await.unwrap();
    assert_eq!(job.state, JobState::Succeeded);
    assert_eq!(job.attempts, 2);
}

async fn a_job_is_given_up_after_its_last_attempt(app: TestApp) {
    let id = enqueue(&app, "test", 2).await;
    let runner = runner(
        &app,
        Arc::new(Flaky {
            failures: 10,
            calls: AtomicUsize::new(0),
        }),
    );

    runner.run_pending().await;
    app.clock.advance(Duration::hours(1));
    runner.run_pending().await;
    app.clock.advance(Duration::hours(1));
    let after_giving_up = runner.run_pending().await;

    let job = app.app.store.job(id).await.unwrap();
    assert_eq!(after_giving_up, 0);
    assert_eq!(job.state, JobState::Failed);
    assert!(job.last_error.unwrap().contains("gave up after 2 attempts"));
}

async fn a_permanent_error_fails_the_job_at_once(app: TestApp) {
    let id = enqueue(&app, "test", 5).await;

    runner(&app, Arc::new(Permanent)).run_pending().await;

    let job = app.app.store.job(id).await.unwrap();
    assert_eq!(job.state, JobState::Failed);
    assert_eq!(job.attempts, 1);
}

async fn a_panicking_job_is_retried_instead_of_crashing_the_worker(app: TestApp) {
    let id = enqueue(&app, "test", 5).await;

    runner(&app, Arc::new(Panics)).run_pending().await;

    let job = app.app.store.job(id).await.unwrap();
    assert_eq!(job.state, JobState::Queued);
    assert!(job.last_error.unwrap().contains("panicked"));
}

async fn a_job_of_an_unknown_kind_fails(app: TestApp) {
    let id = enqueue(&app, "no_such_kind", 5).await;

    app.run_pending_jobs().await;

    let job = app.app.store.job(id).await.unwrap();
    assert_eq!(job.state, JobState::Failed);
    assert!(job.last_error.unwrap().contains("unknown job kind"));
}

async fn housekeeping_purges_old_finished_jobs(app: TestApp) {
    let old = enqueue(&app, "no_such_kind", 1).await;
    app.run_pending_jobs().await;
    app.clock.advance(Duration::days(8));

    app.run_housekeeping().await;

    assert!(app.app.store.job(old).await.is_err());
}

/// Holds each job until released, to observe a shutdown in the middle of one.
struct Gate {
    started: tokio::sync::Notify,
    release: tokio::sync::Notify,
}

#[async_trait]
impl JobHandler for Gate {
    async fn run(&self, _: &Job) -> Result<(), JobError> {
        self.started.notify_one();
        self.release.notified().await;
        Ok(())
    }
}

async fn a_worker_asked_to_stop_finishes_the_job_in_hand(app: TestApp) {
    let id = enqueue(&app, "test", 5).await;
    let gate = Arc::new(Gate {
        started: tokio::sync::Notify::new(),
        release: tokio::sync::Notify::new(),
    });
    let worker = runner(&app, Arc::clone(&gate) as Arc<dyn JobHandler>);
    let shutdown = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn({
        let shutdown = shutdown.clone();
        async move { worker.run_until(shutdown).await }
    });
    gate.started.notified().await;

    shutdown.cancel();
    gate.release.notify_one();
    running.await.unwrap();

    assert_eq!(
        app.app.store.job(id).await.unwrap().state,
        JobState::Succeeded
    );
}

/// Holds jobs of kind "slow" until released; signals each "fast" job it runs.
struct SlowAndFast {
    slow_started: tokio::sync::Notify,
    release: tokio::sync::Notify,
    fast_ran: tokio::sync::Notify,
}

#[async_trait]
impl JobHandler for SlowAndFast {
    async fn run(&self, job: &Job) -> Result<(), JobError> {
        if job.kind == "slow" {
            self.slow_started.notify_one();
            self.release.notified().await;
        } else {
            self.fast_ran.notify_one();
        }
        Ok(())
    }
}

async fn a_slow_job_does_not_hold_back_the_others(app: TestApp) {
    let handler = Arc::new(SlowAndFast {
        slow_started: tokio::sync::Notify::new(),
        release: tokio::sync::Notify::new(),
        fast_ran: tokio::sync::Notify::new(),
    });
    enqueue(&app, "slow", 5).await;
    let worker = runner(&app, Arc::clone(&handler) as Arc<dyn JobHandler>);
    let shutdown = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn({
        let shutdown = shutdown.clone();
        async move { worker.run_until(shutdown).await }
    });
    handler.slow_started.notified().await;

    enqueue(&app, "fast", 5).await;
    // Bounded only so that a regression fails instead of hanging the suite.
    let fast = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        handler.fast_ran.notified(),
    )
    .await;

    handler.release.notify_one();
    shutdown.cancel();
    running.await.unwrap();
    assert!(fast.is_ok(), "the fast job waited for the slow one");
}
