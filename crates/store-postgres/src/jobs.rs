//! The job queue on PostgreSQL. Claims lock their rows with `FOR UPDATE SKIP LOCKED`, so
//! workers in any number of processes each take different jobs without waiting on one
//! another; `attempts` fences late finishes from workers that lost their lease.

use chrono::{DateTime, Duration, Utc};
use deadpool_postgres::GenericClient;
use tidemark_domain::{Job, JobId, JobState, NewJob};
use tidemark_store::{JobOutcome, JobQueueStats, StoreError, StoreResult};
use tokio_postgres::Row;

use crate::convert::{backend, from_int, to_int};

const JOB_COLUMNS: &str = "id, kind, payload, dedup_key, state, attempts, max_attempts, run_at, \
                           locked_until, last_error, created_at, updated_at";

/// How often `enqueue` retries when its dedup conflict vanished before it could be read
/// (the pending job finished in between). Each retry needs that race to recur.
const ENQUEUE_TRIES: usize = 3;

fn job_from_row(row: &Row) -> StoreResult<Job> {
    let state: &str = row.try_get(4).map_err(backend)?;
    Ok(Job {
        id: JobId(row.try_get(0).map_err(backend)?),
        kind: row.try_get(1).map_err(backend)?,
        payload: row.try_get(2).map_err(backend)?,
        dedup_key: row.try_get(3).map_err(backend)?,
        state: JobState::parse(state).ok_or_else(|| backend(format!("unknown state {state}")))?,
        attempts: from_int(row, 5)?,
        max_attempts: from_int(row, 6)?,
        run_at: row.try_get(7).map_err(backend)?,
        locked_until: row.try_get(8).map_err(backend)?,
        last_error: row.try_get(9).map_err(backend)?,
        created_at: row.try_get(10).map_err(backend)?,
        updated_at: row.try_get(11).map_err(backend)?,
    })
}

pub async fn enqueue(
    client: &impl GenericClient,
    job: &NewJob,
    now: DateTime<Utc>,
) -> StoreResult<JobId> {
    // No conflict target: a taken id and a pending dedup key both leave the table as is.
    let insert = client
        .prepare_cached(
            "INSERT INTO jobs (id, kind, payload, dedup_key, state, attempts, max_attempts,
                               run_at, created_at, updated_at)
             VALUES ($1, $2, $3, $4, 'queued', 0, $5, $6, $7, $7)
             ON CONFLICT DO NOTHING",
        )
        .await
        .map_err(backend)?;
    // A running holder of the key may have looked before this work existed: it runs again.
    let pending = client
        .prepare_cached(
            "WITH rerun AS (
                 UPDATE jobs SET rerun = true WHERE dedup_key = $1 AND state = 'running')
             SELECT id FROM jobs WHERE dedup_key = $1 AND state IN ('queued', 'running')",
        )
        .await
        .map_err(backend)?;
    let max_attempts = to_int(job.max_attempts)?;
    for _ in 0..ENQUEUE_TRIES {
        let inserted = client
            .execute(
                &insert,
                &[
                    &job.id.0,
                    &job.kind,
                    &job.payload,
                    &job.dedup_key,
                    &max_attempts,
                    &job.run_at,
                    &now,
                ],
            )
            .await
            .map_err(backend)?;
        if inserted == 1 {
            return Ok(job.id);
        }
        let Some(key) = &job.dedup_key else {
            return Err(StoreError::Conflict {
                constraint: "jobs_id",
            });
        };
        if let Some(row) = client.query_opt(&pending, &[key]).await.map_err(backend)? {
            return row.try_get(0).map(JobId).map_err(backend);
        }
        if exists(client, job.id).await? {
            return Err(StoreError::Conflict {
                constraint: "jobs_id",
            });
        }
        // The job holding the key finished between our two statements: the key is free.
    }
    Err(backend(format!(
        "dedup key {:?} kept changing hands while enqueueing",
        job.dedup_key
    )))
}

async fn exists(client: &impl GenericClient, id: JobId) -> StoreResult<bool> {
    let row = client
        .query_one("SELECT EXISTS (SELECT 1 FROM jobs WHERE id = $1)", &[&id.0])
        .await
        .map_err(backend)?;
    row.try_get(0).map_err(backend)
}

pub async fn claim(
    client: &mut deadpool_postgres::Client,
    now: DateTime<Utc>,
    lease: Duration,
    limit: u32,
) -> StoreResult<Vec<Job>> {
    let locked_until = now
        .checked_add_signed(lease)
        .ok_or_else(|| backend(format!("lease {lease} overflows the clock")))?;
    let limit = i64::from(limit);
    let tx = client.transaction().await.map_err(backend)?;
    // A worker that died on the final attempt must not be retried. SKIP LOCKED: a row
    // another claim holds is that claim's business, and waiting for it would serialize
    // the workers.
    let expire = tx
        .prepare_cached(
            "UPDATE jobs SET state = 'failed', locked_until = NULL, updated_at = $1,
                    last_error = 'the worker lost its lease on the final attempt'
             WHERE id IN (
                 SELECT id FROM jobs
                 WHERE state = 'running' AND locked_until <= $1 AND attempts >= max_attempts
                 FOR UPDATE SKIP LOCKED)",
        )
        .await
        .map_err(backend)?;
    tx.execute(&expire, &[&now]).await.map_err(backend)?;
    // The CTE picks and locks the rows once; `attempts < max_attempts` keeps out an
    // exhausted job that the statement above could not fail because it was locked.
    let take = tx
        .prepare_cached(&format!(
            "WITH picked AS (
                 SELECT id FROM jobs
                 WHERE (state = 'queued' AND run_at <= $1)
                    OR (state = 'running' AND locked_until <= $1 AND attempts < max_attempts)
                 ORDER BY run_at, id
                 LIMIT $3
                 FOR UPDATE SKIP LOCKED)
             UPDATE jobs SET state = 'running', attempts = jobs.attempts + 1,
                    locked_until = $2, updated_at = $1
             FROM picked WHERE jobs.id = picked.id
             RETURNING {}",
            qualified_job_columns()
        ))
        .await
        .map_err(backend)?;
    let rows = tx
        .query(&take, &[&now, &locked_until, &limit])
        .await
        .map_err(backend)?;
    let mut claimed = rows
        .iter()
        .map(job_from_row)
        .collect::<StoreResult<Vec<_>>>()?;
    tx.commit().await.map_err(backend)?;
    // RETURNING has no order; hand jobs out in due order as the SQLite backend does.
    claimed.sort_by_key(|job| (job.run_at, job.id.0));
    Ok(claimed)
}

/// `JOB_COLUMNS` prefixed with `jobs.`, since the claim's RETURNING also sees `picked.id`.
fn qualified_job_columns() -> String {
    JOB_COLUMNS
        .split(',')
        .map(|column| format!("jobs.{}", column.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

pub async fn finish(
    client: &impl GenericClient,
    id: JobId,
    attempt: u32,
    outcome: &JobOutcome,
    now: DateTime<Utc>,
) -> StoreResult<()> {
    let (state, run_at, error) = match outcome {
        JobOutcome::Succeeded => (JobState::Succeeded, None, None),
        JobOutcome::RetryAt { at, error } => (JobState::Queued, Some(*at), Some(error)),
        JobOutcome::Failed { error } => (JobState::Failed, None, Some(error)),
    };
    // A job asked for again while it ran, and done with this attempt, is queued at once
    // with a fresh count of attempts; one that will be retried anyway keeps its backoff.
    let statement = client
        .prepare_cached(
            "UPDATE jobs SET
                    state = CASE WHEN rerun AND $3 <> 'queued' THEN 'queued' ELSE $3 END,
                    run_at = CASE WHEN rerun AND $3 <> 'queued' THEN $6 ELSE coalesce($4, run_at) END,
                    attempts = CASE WHEN rerun AND $3 <> 'queued' THEN 0 ELSE attempts END,
                    rerun = false,
                    last_error = coalesce($5, last_error), locked_until = NULL, updated_at = $6
             WHERE id = $1 AND attempts = $2 AND state = 'running'",
        )
        .await
        .map_err(backend)?;
    let updated = client
        .execute(
            &statement,
            &[
                &id.0,
                &to_int(attempt)?,
                &state.as_str(),
                &run_at,
                &error,
                &now,
            ],
        )
        .await
        .map_err(backend)?;
    if updated == 1 {
        return Ok(());
    }
    // Nothing matched: either the job is gone (NotFound) or this attempt lost it.
    get(client, id).await?;
    Err(StoreError::Conflict {
        constraint: "job_lease",
    })
}

pub async fn extend_leases(
    client: &impl GenericClient,
    held: &[(JobId, u32)],
    until: DateTime<Utc>,
) -> StoreResult<u64> {
    if held.is_empty() {
        return Ok(0);
    }
    let ids: Vec<uuid::Uuid> = held.iter().map(|(id, _)| id.0).collect();
    let attempts = held
        .iter()
        .map(|(_, attempt)| to_int(*attempt))
        .collect::<StoreResult<Vec<i32>>>()?;
    let statement = client
        .prepare_cached(
            "UPDATE jobs SET locked_until = $3
             FROM unnest($1::uuid[], $2::integer[]) AS held (id, attempts)
             WHERE jobs.id = held.id AND jobs.attempts = held.attempts
               AND jobs.state = 'running'",
        )
        .await
        .map_err(backend)?;
    client
        .execute(&statement, &[&ids, &attempts, &until])
        .await
        .map_err(backend)
}

pub async fn get(client: &impl GenericClient, id: JobId) -> StoreResult<Job> {
    let statement = client
        .prepare_cached(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1"))
        .await
        .map_err(backend)?;
    client
        .query_opt(&statement, &[&id.0])
        .await
        .map_err(backend)?
        .as_ref()
        .map(job_from_row)
        .transpose()?
        .ok_or(StoreError::NotFound)
}

pub async fn stats(client: &impl GenericClient, now: DateTime<Utc>) -> StoreResult<JobQueueStats> {
    let row = client
        .query_one(
            "SELECT
                (SELECT count(*) FROM jobs WHERE state = 'queued'),
                (SELECT count(*) FROM jobs WHERE state = 'running'),
                (SELECT min(run_at) FROM jobs WHERE state = 'queued' AND run_at <= $1)",
            &[&now],
        )
        .await
        .map_err(backend)?;
    let count = |index: usize| -> StoreResult<u64> {
        let value: i64 = row.try_get(index).map_err(backend)?;
        u64::try_from(value).map_err(backend)
    };
    Ok(JobQueueStats {
        queued: count(0)?,
        running: count(1)?,
        oldest_due_at: row.try_get(2).map_err(backend)?,
    })
}

pub async fn purge_finished(
    client: &impl GenericClient,
    before: DateTime<Utc>,
) -> StoreResult<u64> {
    client
        .execute(
            "DELETE FROM jobs WHERE state IN ('succeeded', 'failed') AND updated_at < $1",
            &[&before],
        )
        .await
        .map_err(backend)
}
