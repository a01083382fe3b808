//! The contract every [`Store`] backend must honour, run by each backend's
//! `tests/contract.rs` through [`store_contract_tests!`](crate::store_contract_tests).
//!
//! Each case gets a fresh, migrated database from a [`TestBackend`].

#![expect(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Duration, TimeZone, Utc};
use tidemark_domain::{
    Account, AccountId, ApiKey, ApiKeyId, ApiKeyScope, ApiKeySecret, IdGenerator, JobId, JobState,
    NewJob, SequentialIds,
};

use crate::{JobOutcome, Store, StoreError};

/// A fresh database for one test case.
#[async_trait]
pub trait TestBackend: Send + Sync {
    fn store(&self) -> Arc<dyn Store>;
    /// Opens the same database again, as a restarted process would.
    async fn reopen(&self) -> Arc<dyn Store>;
}

/// Expands every contract case into a named `#[tokio::test]`. `$backend` is an async fn
/// returning `Option<impl TestBackend>`; `None` skips the case (backend not configured).
#[macro_export]
macro_rules! store_contract_tests {
    ($backend:path) => {
        $crate::store_contract_tests!(@cases $backend;
            accounts_are_found_by_id_and_name,
            account_names_are_unique,
            bootstrap_creates_the_first_account_only_once,
            api_keys_are_found_by_hash,
            revoking_a_key_marks_it_revoked,
            another_accounts_key_cannot_be_revoked,
            api_keys_are_listed_newest_first_per_account,
            a_queued_job_is_claimed_once_it_is_due,
            a_claimed_job_is_not_claimed_again_while_its_lease_holds,
            concurrent_claims_never_hand_one_job_to_two_workers,
            a_job_whose_worker_died_is_claimed_again_after_its_lease,
            a_stale_attempt_cannot_finish_a_reclaimed_job,
            a_failed_attempt_is_retried_at_the_given_time,
            a_job_whose_worker_died_on_its_final_attempt_fails,
            deduplicated_jobs_are_enqueued_once_while_pending,
            a_dedup_key_is_free_again_once_its_job_finished,
            queued_jobs_survive_a_restart,
            queue_stats_count_queued_and_running_jobs,
            finished_jobs_are_purged_after_a_while,
        );
    };
    (@cases $backend:path; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let Some(backend) = $backend().await else {
                    eprintln!("skipped: backend not configured");
                    return;
                };
                $crate::contract::$case(&backend).await;
            }
        )*
    };
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .expect("valid date")
}

fn account(ids: &SequentialIds, name: &str) -> Account {
    Account {
        id: AccountId::new(ids),
        name: name.to_owned(),
        created_at: t0(),
    }
}

fn api_key(ids: &SequentialIds, account: AccountId, seed: u8, at: DateTime<Utc>) -> ApiKey {
    let secret = ApiKeySecret::from_random_bytes([seed; 24]);
    ApiKey {
        id: ApiKeyId::new(ids),
        account_id: account,
        prefix: secret.prefix(),
        hash: secret.hash(),
        scope: ApiKeyScope::ReadWrite,
        created_at: at,
        revoked_at: None,
    }
}

fn job(ids: &dyn IdGenerator, run_at: DateTime<Utc>, dedup_key: Option<&str>) -> NewJob {
    NewJob {
        id: JobId::new(ids),
        kind: "test".to_owned(),
        payload: serde_json::json!({"n": 1}),
        dedup_key: dedup_key.map(str::to_owned),
        run_at,
        max_attempts: 3,
    }
}

pub async fn accounts_are_found_by_id_and_name(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account(&ids, "acme");

    store.create_account(&acme).await.unwrap();

    assert_eq!(store.account(acme.id).await.unwrap(), acme);
    assert_eq!(store.account_by_name("acme").await.unwrap(), Some(acme));
    assert!(store.account_by_name("nobody").await.unwrap().is_none());
    assert!(matches!(
        store.account(AccountId::new(&ids)).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn account_names_are_unique(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    store.create_account(&account(&ids, "acme")).await.unwrap();

    let second = store.create_account(&account(&ids, "acme")).await;

    assert!(matches!(second, Err(StoreError::Conflict { .. })));
}

pub async fn bootstrap_creates_the_first_account_only_once(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let first = account(&ids, "default");
    let second = account(&ids, "default");

    let created = store
        .bootstrap_first_account(&first, &api_key(&ids, first.id, 1, t0()))
        .await
        .unwrap();
    let created_again = store
        .bootstrap_first_account(&second, &api_key(&ids, second.id, 2, t0()))
        .await
        .unwrap();

    assert!(created);
    assert!(!created_again);
    assert_eq!(store.list_api_keys(first.id).await.unwrap().len(), 1);
}

pub async fn api_keys_are_found_by_hash(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account(&ids, "acme");
    store.create_account(&acme).await.unwrap();
    let key = api_key(&ids, acme.id, 1, t0());

    store.insert_api_key(&key).await.unwrap();

    assert_eq!(store.api_key_by_hash(&key.hash).await.unwrap(), Some(key));
    assert!(store.api_key_by_hash("0000").await.unwrap().is_none());
}

pub async fn revoking_a_key_marks_it_revoked(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account(&ids, "acme");
    store.create_account(&acme).await.unwrap();
    let key = api_key(&ids, acme.id, 1, t0());
    store.insert_api_key(&key).await.unwrap();

    let revoked = store
        .revoke_api_key(acme.id, key.id, t0() + Duration::hours(1))
        .await
        .unwrap();

    assert_eq!(revoked.revoked_at, Some(t0() + Duration::hours(1)));
    let stored = store.api_key_by_hash(&key.hash).await.unwrap().unwrap();
    assert_eq!(stored.revoked_at, Some(t0() + Duration::hours(1)));
}

pub async fn another_accounts_key_cannot_be_revoked(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account(&ids, "acme");
    let other = account(&ids, "other");
    store.create_account(&acme).await.unwrap();
    store.create_account(&other).await.unwrap();
    let key = api_key(&ids, acme.id, 1, t0());
    store.insert_api_key(&key).await.unwrap();

    let result = store.revoke_api_key(other.id, key.id, t0()).await;

    assert!(matches!(result, Err(StoreError::NotFound)));
    let stored = store.api_key_by_hash(&key.hash).await.unwrap().unwrap();
    assert_eq!(stored.revoked_at, None);
}

pub async fn api_keys_are_listed_newest_first_per_account(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account(&ids, "acme");
    let other = account(&ids, "other");
    store.create_account(&acme).await.unwrap();
    store.create_account(&other).await.unwrap();
    let older = api_key(&ids, acme.id, 1, t0());
    let newer = api_key(&ids, acme.id, 2, t0() + Duration::minutes(1));
    store.insert_api_key(&older).await.unwrap();
    store.insert_api_key(&newer).await.unwrap();
    store
        .insert_api_key(&api_key(&ids, other.id, 3, t0()))
        .await
        .unwrap();

    let listed = store.list_api_keys(acme.id).await.unwrap();

    assert_eq!(listed, vec![newer, older]);
}

pub async fn a_queued_job_is_claimed_once_it_is_due(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let id = store
        .enqueue_job(&job(&ids, t0() + Duration::minutes(5), None), t0())
        .await
        .unwrap();

    let early = store
        .claim_jobs(t0(), Duration::minutes(1), 10)
        .await
        .unwrap();
    let due = store
        .claim_jobs(t0() + Duration::minutes(5), Duration::minutes(1), 10)
        .await
        .unwrap();

    assert!(early.is_empty());
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].id, id);
    assert_eq!(due[0].state, JobState::Running);
    assert_eq!(due[0].attempts, 1);
    assert_eq!(due[0].payload, serde_json::json!({"n": 1}));
}

pub async fn a_claimed_job_is_not_claimed_again_while_its_lease_holds(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    store
        .enqueue_job(&job(&ids, t0(), None), t0())
        .await
        .unwrap();

    let first = store
        .claim_jobs(t0(), Duration::minutes(1), 10)
        .await
        .unwrap();
    let second = store
        .claim_jobs(t0() + Duration::seconds(59), Duration::minutes(1), 10)
        .await
        .unwrap();

    assert_eq!(first.len(), 1);
    assert!(second.is_empty());
}

pub async fn concurrent_claims_never_hand_one_job_to_two_workers(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let mut queued = HashSet::new();
    for _ in 0..40 {
        queued.insert(
            store
                .enqueue_job(&job(&ids, t0(), None), t0())
                .await
                .unwrap(),
        );
    }

    let workers = (0..8).map(|_| {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            let mut mine = Vec::new();
            loop {
                let batch = store
                    .claim_jobs(t0(), Duration::minutes(5), 3)
                    .await
                    .unwrap();
                if batch.is_empty() {
                    return mine;
                }
                mine.extend(batch.into_iter().map(|job| job.id));
            }
        })
    });
    let claimed: Vec<JobId> = futures::future::join_all(workers)
        .await
        .into_iter()
        .flat_map(Result::unwrap)
        .collect();

    let distinct: HashSet<JobId> = claimed.iter().copied().collect();
    assert_eq!(claimed.len(), 40, "every job claimed exactly once");
    assert_eq!(distinct, queued);
}

pub async fn a_job_whose_worker_died_is_claimed_again_after_its_lease(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let id = store
        .enqueue_job(&job(&ids, t0(), None), t0())
        .await
        .unwrap();
    store
        .claim_jobs(t0(), Duration::minutes(1), 10)
        .await
        .unwrap();

    let reclaimed = store
        .claim_jobs(t0() + Duration::minutes(2), Duration::minutes(1), 10)
        .await
        .unwrap();

    assert_eq!(reclaimed.len(), 1);
    assert_eq!(reclaimed[0].id, id);
    assert_eq!(reclaimed[0].attempts, 2);
}

pub async fn a_stale_attempt_cannot_finish_a_reclaimed_job(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let id = store
        .enqueue_job(&job(&ids, t0(), None), t0())
        .await
        .unwrap();
    store
        .claim_jobs(t0(), Duration::minutes(1), 10)
        .await
        .unwrap();
    let later = t0() + Duration::minutes(2);
    store
        .claim_jobs(later, Duration::minutes(1), 10)
        .await
        .unwrap();

    let stale = store.finish_job(id, 1, &JobOutcome::Succeeded, later).await;
    let current = store.finish_job(id, 2, &JobOutcome::Succeeded, later).await;

    assert!(matches!(stale, Err(StoreError::Conflict { .. })));
    assert!(current.is_ok());
    assert_eq!(store.job(id).await.unwrap().state, JobState::Succeeded);
}

pub async fn a_failed_attempt_is_retried_at_the_given_time(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let id = store
        .enqueue_job(&job(&ids, t0(), None), t0())
        .await
        .unwrap();
    store
        .claim_jobs(t0(), Duration::minutes(1), 10)
        .await
        .unwrap();
    let retry_at = t0() + Duration::seconds(30);

    store
        .finish_job(
            id,
            1,
            &JobOutcome::RetryAt {
                at: retry_at,
                error: "carrier unavailable".to_owned(),
            },
            t0(),
        )
        .await
        .unwrap();

    let stored = store.job(id).await.unwrap();
    assert_eq!(stored.state, JobState::Queued);
    assert_eq!(stored.last_error.as_deref(), Some("carrier unavailable"));
    let too_soon = store
        .claim_jobs(retry_at - Duration::seconds(1), Duration::minutes(1), 10)
        .await
        .unwrap();
    assert!(too_soon.is_empty());
    let again = store
        .claim_jobs(retry_at, Duration::minutes(1), 10)
        .await
        .unwrap();
    assert_eq!(again[0].attempts, 2);
}

pub async fn a_job_whose_worker_died_on_its_final_attempt_fails(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let mut new_job = job(&ids, t0(), None);
    new_job.max_attempts = 1;
    let id = store.enqueue_job(&new_job, t0()).await.unwrap();
    store
        .claim_jobs(t0(), Duration::minutes(1), 10)
        .await
        .unwrap();

    let reclaimed = store
        .claim_jobs(t0() + Duration::minutes(2), Duration::minutes(1), 10)
        .await
        .unwrap();

    assert!(reclaimed.is_empty());
    let stored = store.job(id).await.unwrap();
    assert_eq!(stored.state, JobState::Failed);
    assert!(stored.last_error.is_some());
}

pub async fn deduplicated_jobs_are_enqueued_once_while_pending(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();

    let first = store
        .enqueue_job(&job(&ids, t0(), Some("poll:1")), t0())
        .await
        .unwrap();
    let second = store
        .enqueue_job(&job(&ids, t0(), Some("poll:1")), t0())
        .await
        .unwrap();
    store
        .claim_jobs(t0(), Duration::minutes(1), 10)
        .await
        .unwrap();
    let while_running = store
        .enqueue_job(&job(&ids, t0(), Some("poll:1")), t0())
        .await
        .unwrap();

    assert_eq!(first, second);
    assert_eq!(first, while_running);
    assert_eq!(store.job_queue_stats(t0()).await.unwrap().running, 1);
}

pub async fn a_dedup_key_is_free_again_once_its_job_finished(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let first = store
        .enqueue_job(&job(&ids, t0(), Some("poll:1")), t0())
        .await
        .unwrap();
    store
        .claim_jobs(t0(), Duration::minutes(1), 10)
        .await
        .unwrap();
    store
        .finish_job(first, 1, &JobOutcome::Succeeded, t0())
        .await
        .unwrap();

    let next = store
        .enqueue_job(&job(&ids, t0(), Some("poll:1")), t0())
        .await
        .unwrap();

    assert_ne!(first, next);
}

pub async fn queued_jobs_survive_a_restart(backend: &dyn TestBackend) {
    let ids = SequentialIds::default();
    let id = backend
        .store()
        .enqueue_job(&job(&ids, t0(), None), t0())
        .await
        .unwrap();

    let reopened = backend.reopen().await;
    let claimed = reopened
        .claim_jobs(t0(), Duration::minutes(1), 10)
        .await
        .unwrap();

    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].id, id);
}

pub async fn queue_stats_count_queued_and_running_jobs(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    store
        .enqueue_job(&job(&ids, t0(), None), t0())
        .await
        .unwrap();
    store
        .enqueue_job(&job(&ids, t0() + Duration::minutes(1), None), t0())
        .await
        .unwrap();
    store
        .enqueue_job(&job(&ids, t0() + Duration::minutes(2), None), t0())
        .await
        .unwrap();
    store
        .claim_jobs(t0(), Duration::minutes(10), 1)
        .await
        .unwrap();

    let stats = store
        .job_queue_stats(t0() + Duration::minutes(1))
        .await
        .unwrap();

    assert_eq!(stats.queued, 2);
    assert_eq!(stats.running, 1);
    assert_eq!(stats.oldest_due_at, Some(t0() + Duration::minutes(1)));
}

pub async fn finished_jobs_are_purged_after_a_while(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let done = store
        .enqueue_job(&job(&ids, t0(), None), t0())
        .await
        .unwrap();
    let pending = store
        .enqueue_job(&job(&ids, t0() + Duration::days(30), None), t0())
        .await
        .unwrap();
    store
        .claim_jobs(t0(), Duration::minutes(1), 10)
        .await
        .unwrap();
    store
        .finish_job(done, 1, &JobOutcome::Succeeded, t0())
        .await
        .unwrap();

    let purged = store
        .purge_finished_jobs(t0() + Duration::days(8))
        .await
        .unwrap();

    assert_eq!(purged, 1);
    assert!(matches!(store.job(done).await, Err(StoreError::NotFound)));
    assert!(store.job(pending).await.is_ok());
}
