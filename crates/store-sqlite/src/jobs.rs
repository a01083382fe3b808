//! The job queue on SQLite. Every write runs on the single writer connection, so a claim's
//! select-and-update cannot interleave with another claim in this process; across
//! processes `BEGIN IMMEDIATE` serializes them.

use chrono::{DateTime, Duration, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use tidemark_domain::{Job, JobId, JobState, NewJob};
use tidemark_store::{JobOutcome, JobQueueStats, StoreError, StoreResult};

use crate::convert::{backend, from_optional_ts, from_ts, to_ts, uuid_from};

const JOB_COLUMNS: &str = "id, kind, payload, dedup_key, state, attempts, max_attempts, run_at, \
                           locked_until, last_error, created_at, updated_at";

fn job_from_row(row: &Row<'_>) -> rusqlite::Result<Job> {
    let payload: String = row.get(2)?;
    let state: String = row.get(4)?;
    let invalid = |index: usize, what: String| {
        rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, what.into())
    };
    Ok(Job {
        id: JobId(uuid_from(row, 0)?),
        kind: row.get(1)?,
        payload: serde_json::from_str(&payload).map_err(|e| invalid(2, e.to_string()))?,
        dedup_key: row.get(3)?,
        state: JobState::parse(&state)
            .ok_or_else(|| invalid(4, format!("unknown state {state}")))?,
        attempts: row.get(5)?,
        max_attempts: row.get(6)?,
        run_at: from_ts(row, 7)?,
        locked_until: from_optional_ts(row, 8)?,
        last_error: row.get(9)?,
        created_at: from_ts(row, 10)?,
        updated_at: from_ts(row, 11)?,
    })
}

pub fn enqueue(conn: &Connection, job: &NewJob, now: DateTime<Utc>) -> StoreResult<JobId> {
    let inserted = conn
        .execute(
            "INSERT INTO jobs (id, kind, payload, dedup_key, state, attempts, max_attempts,
                               run_at, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, 'queued', 0, ?5, ?6, ?7, ?7)
             ON CONFLICT DO NOTHING",
            params![
                job.id.0.to_string(),
                job.kind,
                job.payload.to_string(),
                job.dedup_key,
                job.max_attempts,
                to_ts(job.run_at),
                to_ts(now),
            ],
        )
        .map_err(backend)?;
    if inserted == 1 {
        return Ok(job.id);
    }
    let Some(key) = &job.dedup_key else {
        return Err(StoreError::Conflict {
            constraint: "jobs_id",
        });
    };
    // A running holder of the key may have looked before this work existed: it runs again.
    conn.execute(
        "UPDATE jobs SET rerun = 1 WHERE dedup_key = ?1 AND state = 'running'",
        [key],
    )
    .map_err(backend)?;
    conn.query_row(
        "SELECT id FROM jobs WHERE dedup_key = ?1 AND state IN ('queued', 'running')",
        [key],
        |row| uuid_from(row, 0),
    )
    .map(JobId)
    .map_err(backend)
}

pub fn claim(
    conn: &mut Connection,
    now: DateTime<Utc>,
    lease: Duration,
    limit: u32,
) -> StoreResult<Vec<Job>> {
    let now_ts = to_ts(now);
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    tx.execute(
        "UPDATE jobs SET state = 'failed', locked_until = NULL, updated_at = ?1,
                last_error = 'the worker lost its lease on the final attempt'
         WHERE state = 'running' AND locked_until <= ?1 AND attempts >= max_attempts",
        [&now_ts],
    )
    .map_err(backend)?;
    let claimed = {
        let mut stmt = tx
            .prepare_cached(&format!(
                "UPDATE jobs SET state = 'running', attempts = attempts + 1,
                        locked_until = ?2, updated_at = ?1
                 WHERE id IN (
                     SELECT id FROM jobs
                     WHERE (state = 'queued' AND run_at <= ?1)
                        OR (state = 'running' AND locked_until <= ?1)
                     ORDER BY run_at, id LIMIT ?3)
                 RETURNING {JOB_COLUMNS}"
            ))
            .map_err(backend)?;
        stmt.query_map(params![now_ts, to_ts(now + lease), limit], job_from_row)
            .and_then(Iterator::collect::<rusqlite::Result<Vec<Job>>>)
            .map_err(backend)?
    };
    tx.commit().map_err(backend)?;
    Ok(claimed)
}

pub fn finish(
    conn: &Connection,
    id: JobId,
    attempt: u32,
    outcome: &JobOutcome,
    now: DateTime<Utc>,
) -> StoreResult<()> {
    let (state, run_at, error) = match outcome {
        JobOutcome::Succeeded => (JobState::Succeeded, None, None),
        JobOutcome::RetryAt { at, error } => (JobState::Queued, Some(to_ts(*at)), Some(error)),
        JobOutcome::Failed { error } => (JobState::Failed, None, Some(error)),
    };
    // A job asked for again while it ran, and done with this attempt, is queued at once
    // with a fresh count of attempts; one that will be retried anyway keeps its backoff.
    let updated = conn
        .execute(
            "UPDATE jobs SET
                    state = CASE WHEN rerun = 1 AND ?3 <> 'queued' THEN 'queued' ELSE ?3 END,
                    run_at = CASE WHEN rerun = 1 AND ?3 <> 'queued' THEN ?6 ELSE coalesce(?4, run_at) END,
                    attempts = CASE WHEN rerun = 1 AND ?3 <> 'queued' THEN 0 ELSE attempts END,
                    rerun = 0,
                    last_error = coalesce(?5, last_error), locked_until = NULL, updated_at = ?6
             WHERE id = ?1 AND attempts = ?2 AND state = 'running'",
            params![
                id.0.to_string(),
                attempt,
                state.as_str(),
                run_at,
                error,
                to_ts(now)
            ],
        )
        .map_err(backend)?;
    if updated == 1 {
        return Ok(());
    }
    get(conn, id)?;
    Err(StoreError::Conflict {
        constraint: "job_lease",
    })
}

pub fn extend_leases(
    conn: &mut Connection,
    held: &[(JobId, u32)],
    until: DateTime<Utc>,
) -> StoreResult<u64> {
    let tx = conn.transaction().map_err(backend)?;
    let mut extended = 0;
    {
        let mut stmt = tx
            .prepare_cached(
                "UPDATE jobs SET locked_until = ?3
                 WHERE id = ?1 AND attempts = ?2 AND state = 'running'",
            )
            .map_err(backend)?;
        for (id, attempt) in held {
            extended += stmt
                .execute(params![id.0.to_string(), attempt, to_ts(until)])
                .map_err(backend)?;
        }
    }
    tx.commit().map_err(backend)?;
    Ok(extended as u64)
}

/// One process uses a SQLite database, so when its worker starts every lease is a dead
/// predecessor's: they end now, and the usual claim takes the jobs (failing those that
/// were on their final attempt).
pub fn release_orphaned(conn: &Connection, now: DateTime<Utc>) -> StoreResult<u64> {
    let released = conn
        .execute(
            "UPDATE jobs SET locked_until = ?1 WHERE state = 'running' AND locked_until > ?1",
            [to_ts(now)],
        )
        .map_err(backend)?;
    Ok(released as u64)
}

pub fn get(conn: &Connection, id: JobId) -> StoreResult<Job> {
    conn.prepare_cached(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"))
        .and_then(|mut stmt| stmt.query_row([id.0.to_string()], job_from_row).optional())
        .map_err(backend)?
        .ok_or(StoreError::NotFound)
}

pub fn stats(conn: &Connection, now: DateTime<Utc>) -> StoreResult<JobQueueStats> {
    conn.query_row(
        "SELECT
            (SELECT count(*) FROM jobs WHERE state = 'queued'),
            (SELECT count(*) FROM jobs WHERE state = 'running'),
            (SELECT min(run_at) FROM jobs WHERE state = 'queued' AND run_at <= ?1)",
        [to_ts(now)],
        |row| {
            Ok(JobQueueStats {
                queued: row.get(0)?,
                running: row.get(1)?,
                oldest_due_at: from_optional_ts(row, 2)?,
            })
        },
    )
    .map_err(backend)
}

pub fn purge_finished(conn: &Connection, before: DateTime<Utc>) -> StoreResult<u64> {
    let deleted = conn
        .execute(
            "DELETE FROM jobs WHERE state IN ('succeeded', 'failed') AND updated_at < ?1",
            [to_ts(before)],
        )
        .map_err(backend)?;
    Ok(deleted as u64)
}
