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

pub mod carriers;
pub mod custom_fields;
pub mod documents;
pub mod edi;
pub mod terminals;
pub mod vessels;

use async_trait::async_trait;
use chrono::{DateTime, Duration, TimeZone, Utc};
use tidemark_domain::{
    Account, AccountId, ApiKey, ApiKeyId, ApiKeyScope, ApiKeySecret, FailedReason, IdGenerator,
    JobId, JobState, NewJob, RequestType, SequentialIds, TrackingRequest, TrackingRequestId,
    TrackingRequestStatus,
};

use tidemark_domain::tracking_update::{
    self, CarrierReport, Known, Milestone, ReportedContainer, ReportedRawEvent,
};
use tidemark_domain::webhook::WebhookHeader;
use tidemark_domain::{ContainerStatus, TransportEventName};
use tidemark_domain::{
    DeliveryStatus, NotificationLog, NotificationLogId, Party, PartyId, ReportedEvent, Webhook,
    WebhookId,
};

use crate::ShipmentRead;
use crate::{
    ContainerFilter, IdempotencyState, JobOutcome, NotificationFilter, PageRequest,
    RecordedDelivery, SearchKind, ShipmentFilter, ShipmentSort, Store, StoreError,
    TrackingRequestFilter, TransportEventFilter,
};

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
            an_ended_console_session_stays_ended_across_processes,
            ended_console_sessions_past_their_expiry_are_forgotten,
            a_queued_job_is_claimed_once_it_is_due,
            a_claimed_job_is_not_claimed_again_while_its_lease_holds,
            concurrent_claims_never_hand_one_job_to_two_workers,
            a_job_whose_worker_died_is_claimed_again_after_its_lease,
            a_stale_attempt_cannot_finish_a_reclaimed_job,
            a_failed_attempt_is_retried_at_the_given_time,
            a_job_whose_worker_died_on_its_final_attempt_fails,
            deduplicated_jobs_are_enqueued_once_while_pending,
            a_dedup_key_is_free_again_once_its_job_finished,
            a_job_asked_for_again_while_it_runs_is_queued_again_when_it_ends,
            a_renewed_lease_keeps_a_running_job_from_other_workers,
            an_attempt_that_lost_its_job_cannot_renew_the_lease,
            queuing_a_job_wakes_the_runners,
            queued_jobs_survive_a_restart,
            queue_stats_count_queued_and_running_jobs,
            finished_jobs_are_purged_after_a_while,
            a_tracking_request_is_read_back_as_stored,
            another_accounts_tracking_request_is_not_found,
            tracking_requests_are_read_by_ids_within_their_account,
            an_active_request_for_the_same_number_and_scac_is_a_conflict,
            a_failed_request_does_not_block_a_new_one,
            the_same_number_may_be_tracked_by_two_accounts,
            tracking_requests_are_listed_newest_first_with_a_total,
            tracking_requests_are_filtered_by_status_scac_and_number,
            tracking_requests_are_searched_by_ref_number,
            tracking_requests_are_filtered_by_creation_time,
            ref_numbers_of_a_tracking_request_can_be_replaced,
            an_idempotency_key_is_reserved_then_replayed,
            an_abandoned_idempotency_key_can_be_used_again,
            idempotency_keys_belong_to_one_account,
            old_idempotency_keys_are_purged,
            a_setting_keeps_the_first_value_stored,
            a_tracking_result_stores_the_shipment_its_containers_and_events,
            a_later_result_updates_the_shipment_and_corrects_events,
            a_shipment_is_read_with_its_containers_within_its_account,
            a_shipment_read_again_shows_what_changed_in_between,
            what_was_kept_with_a_shipment_read_goes_when_the_shipment_changes,
            results_recorded_at_once_each_get_their_own_outcome,
            a_refused_result_fails_alone_among_results_recorded_at_once,
            another_accounts_shipment_and_container_are_not_found,
            shipments_are_filtered_and_searched,
            a_shipment_search_matches_the_start_of_any_word_of_its_numbers,
            a_shipment_that_learns_its_bill_of_lading_is_stored_and_found_by_it,
            shipments_are_filtered_by_tag_and_eta_window_and_sorted_by_eta,
            containers_are_filtered_by_status_port_scac_and_number,
            transport_events_of_a_container_are_filtered_by_event_and_time,
            stopped_shipments_are_not_polled,
            unresolved_tracking_requests_are_pending_or_awaiting_manifest,
            domain_events_are_written_with_the_result_and_read_in_order,
            active_requests_are_found_by_carrier_and_number_across_accounts,
            shipments_polled_recently_are_not_due,
            a_result_computed_from_a_stale_request_is_refused,
            a_poll_never_overwrites_the_tags_users_set,
            a_containers_ref_numbers_are_saved_and_a_poll_keeps_them,
            another_accounts_container_cannot_be_updated,
            search_finds_the_accounts_numbers_by_prefix_and_by_word,
            search_follows_changed_ref_numbers,
            containers_of_several_shipments_are_read_at_once,
            the_longest_waiting_shipments_are_polled_first,
            shipments_are_read_by_ids_within_their_account,
            raw_events_of_a_container_are_its_own_and_its_vessels,
            the_event_ids_of_several_containers_are_read_at_once,
            a_corrected_raw_event_replaces_the_recorded_one,
            parties_are_created_listed_and_renamed,
            party_names_are_unique_per_account_ignoring_case,
            another_accounts_party_is_not_found,
            shipments_and_containers_are_filtered_by_customer,
            who_stopped_tracking_is_kept_with_the_shipment,
            webhooks_are_created_listed_updated_and_deleted,
            another_accounts_webhook_is_not_found,
            a_webhooks_health_is_recorded_without_touching_what_users_edit,
            a_tracking_result_notifies_the_subscribed_active_webhooks,
            a_shipment_stopped_by_a_user_makes_no_notifications,
            a_delivery_attempt_is_recorded_once_with_its_log,
            a_batch_of_deliveries_records_all_but_the_ones_another_worker_recorded,
            claimed_notifications_are_not_claimed_again_until_their_lease_ends,
            released_claims_make_a_webhooks_notifications_due_again,
            notifications_are_filtered_by_event_status_webhook_and_time,
            deleting_a_webhook_deletes_its_notifications_and_logs,
        );
        $crate::vessel_contract_tests!($backend);
        $crate::document_contract_tests!($backend);
        $crate::custom_field_contract_tests!($backend);
        $crate::carrier_contract_tests!($backend);
        $crate::terminal_contract_tests!($backend);
    };
    (@cases_in $module:ident $backend:path; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let Some(backend) = $backend().await else {
                    eprintln!("skipped: backend not configured");
                    return;
                };
                $crate::contract::$module::$case(&backend).await;
            }
        )*
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

pub async fn an_ended_console_session_stays_ended_across_processes(backend: &dyn TestBackend) {
    let store = backend.store();
    assert!(!store.console_session_ended("session-a").await.unwrap());

    store
        .end_console_session("session-a", t0() + Duration::hours(12), t0())
        .await
        .unwrap();
    store
        .end_console_session("session-a", t0() + Duration::hours(12), t0())
        .await
        .unwrap();

    let reopened = backend.reopen().await;
    assert!(reopened.console_session_ended("session-a").await.unwrap());
    assert!(!reopened.console_session_ended("session-b").await.unwrap());
}

pub async fn ended_console_sessions_past_their_expiry_are_forgotten(backend: &dyn TestBackend) {
    let store = backend.store();
    store
        .end_console_session("old", t0() + Duration::hours(1), t0())
        .await
        .unwrap();

    store
        .end_console_session("new", t0() + Duration::hours(14), t0() + Duration::hours(2))
        .await
        .unwrap();

    assert!(!store.console_session_ended("old").await.unwrap());
    assert!(store.console_session_ended("new").await.unwrap());
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

pub async fn a_job_asked_for_again_while_it_runs_is_queued_again_when_it_ends(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let first = store
        .enqueue_job(&job(&ids, t0(), Some("deliver:1")), t0())
        .await
        .unwrap();
    store
        .claim_jobs(t0(), Duration::minutes(1), 10)
        .await
        .unwrap();
    let while_running = store
        .enqueue_job(&job(&ids, t0(), Some("deliver:1")), t0())
        .await
        .unwrap();

    store
        .finish_job(
            first,
            1,
            &JobOutcome::Succeeded,
            t0() + Duration::seconds(1),
        )
        .await
        .unwrap();
    let again = store
        .claim_jobs(t0() + Duration::seconds(1), Duration::minutes(1), 10)
        .await
        .unwrap();
    store
        .finish_job(
            first,
            1,
            &JobOutcome::Succeeded,
            t0() + Duration::seconds(2),
        )
        .await
        .unwrap();

    assert_eq!(while_running, first);
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].id, first);
    assert_eq!(again[0].attempts, 1, "a fresh count of attempts");
    assert_eq!(
        store.job(first).await.unwrap().state,
        JobState::Succeeded,
        "asked for once, run once more"
    );
}

pub async fn a_renewed_lease_keeps_a_running_job_from_other_workers(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let id = store
        .enqueue_job(&job(&ids, t0(), None), t0())
        .await
        .unwrap();
    store
        .claim_jobs(t0(), Duration::seconds(10), 10)
        .await
        .unwrap();

    let renewed = store
        .extend_job_leases(&[(id, 1)], t0() + Duration::seconds(18))
        .await
        .unwrap();
    let while_renewed = store
        .claim_jobs(t0() + Duration::seconds(15), Duration::seconds(10), 10)
        .await
        .unwrap();
    let once_silent = store
        .claim_jobs(t0() + Duration::seconds(18), Duration::seconds(10), 10)
        .await
        .unwrap();

    assert_eq!(renewed, 1);
    assert!(while_renewed.is_empty());
    assert_eq!(once_silent.len(), 1);
    assert_eq!(once_silent[0].attempts, 2);
}

pub async fn an_attempt_that_lost_its_job_cannot_renew_the_lease(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let id = store
        .enqueue_job(&job(&ids, t0(), None), t0())
        .await
        .unwrap();
    store
        .claim_jobs(t0(), Duration::seconds(10), 10)
        .await
        .unwrap();
    store
        .claim_jobs(t0() + Duration::seconds(10), Duration::seconds(10), 10)
        .await
        .unwrap();

    let renewed = store
        .extend_job_leases(&[(id, 1)], t0() + Duration::minutes(5))
        .await
        .unwrap();

    assert_eq!(renewed, 0);
    assert_eq!(
        store.job(id).await.unwrap().locked_until,
        Some(t0() + Duration::seconds(20))
    );
}

pub async fn queuing_a_job_wakes_the_runners(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let wakeups = store.job_wakeups();
    let woken = wakeups.notified();
    tokio::pin!(woken);
    woken.as_mut().enable();

    store
        .enqueue_job(&job(&ids, t0(), None), t0())
        .await
        .unwrap();

    // PostgreSQL's wake-up travels through the database's NOTIFY: allow it a moment.
    tokio::time::timeout(std::time::Duration::from_secs(10), woken)
        .await
        .expect("the runners are woken");
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

async fn account_in(store: &dyn Store, ids: &SequentialIds, name: &str) -> AccountId {
    let account = account(ids, name);
    store.create_account(&account).await.unwrap();
    account.id
}

fn tracking_request(
    ids: &SequentialIds,
    account: AccountId,
    number: &str,
    at: DateTime<Utc>,
) -> TrackingRequest {
    TrackingRequest {
        id: TrackingRequestId::new(ids),
        account_id: account,
        request_type: RequestType::BillOfLading,
        request_number: number.to_owned(),
        scac: "MAEU".to_owned(),
        ref_numbers: vec!["PO-1".to_owned()],
        shipment_tags: vec!["urgent".to_owned()],
        status: TrackingRequestStatus::Pending,
        failed_reason: None,
        is_retrying: false,
        retry_count: None,
        shipment_id: None,
        initial_custom_fields: Some(serde_json::json!({"shipment": []})),
        customer_id: None,
        submitted_by: Some(ApiKeyId(uuid::Uuid::from_u128(7))),
        polled_at: None,
        created_at: at,
        updated_at: at,
    }
}

const ALL: PageRequest = PageRequest {
    offset: 0,
    limit: 100,
};

pub async fn a_tracking_request_is_read_back_as_stored(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let request = tracking_request(&ids, acme, "MAEU123456", t0());

    store.create_tracking_request(&request).await.unwrap();

    assert_eq!(
        store.tracking_request(acme, request.id).await.unwrap(),
        request
    );
}

pub async fn another_accounts_tracking_request_is_not_found(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let request = tracking_request(&ids, acme, "MAEU123456", t0());
    store.create_tracking_request(&request).await.unwrap();

    let result = store.tracking_request(other, request.id).await;

    assert!(matches!(result, Err(StoreError::NotFound)));
}

pub async fn tracking_requests_are_read_by_ids_within_their_account(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let first = tracking_request(&ids, acme, "MAEU123456", t0());
    let second = tracking_request(&ids, acme, "MAEU654321", t0());
    let theirs = tracking_request(&ids, other, "MAEU111111", t0());
    for request in [&first, &second, &theirs] {
        store.create_tracking_request(request).await.unwrap();
    }
    let unknown = tracking_request(&ids, acme, "MAEU222222", t0()).id;

    let mut found = store
        .tracking_requests_by_ids(acme, &[second.id, theirs.id, unknown, first.id])
        .await
        .unwrap();
    found.sort_by_key(|request| request.id.0);

    let mut expected = vec![first, second];
    expected.sort_by_key(|request| request.id.0);
    assert_eq!(found, expected);
    assert!(
        store
            .tracking_requests_by_ids(acme, &[])
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn an_active_request_for_the_same_number_and_scac_is_a_conflict(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    store
        .create_tracking_request(&tracking_request(&ids, acme, "MAEU123456", t0()))
        .await
        .unwrap();

    let again = store
        .create_tracking_request(&tracking_request(&ids, acme, "MAEU123456", t0()))
        .await;

    assert!(matches!(
        again,
        Err(StoreError::Conflict {
            constraint: "tracking_requests_active_number"
        })
    ));
}

pub async fn a_failed_request_does_not_block_a_new_one(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let mut failed = tracking_request(&ids, acme, "MAEU123456", t0());
    failed.status = TrackingRequestStatus::Failed;
    failed.failed_reason = Some(FailedReason::NotFound);
    store.create_tracking_request(&failed).await.unwrap();

    let again = store
        .create_tracking_request(&tracking_request(&ids, acme, "MAEU123456", t0()))
        .await;

    assert!(again.is_ok());
}

pub async fn the_same_number_may_be_tracked_by_two_accounts(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    store
        .create_tracking_request(&tracking_request(&ids, acme, "MAEU123456", t0()))
        .await
        .unwrap();

    let theirs = store
        .create_tracking_request(&tracking_request(&ids, other, "MAEU123456", t0()))
        .await;

    assert!(theirs.is_ok());
}

pub async fn tracking_requests_are_listed_newest_first_with_a_total(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let mut created = Vec::new();
    for n in 0..5 {
        let request = tracking_request(
            &ids,
            acme,
            &format!("MAEU00000{n}"),
            t0() + Duration::minutes(n),
        );
        store.create_tracking_request(&request).await.unwrap();
        created.push(request.id);
    }
    store
        .create_tracking_request(&tracking_request(&ids, other, "MAEU999999", t0()))
        .await
        .unwrap();

    let page = store
        .list_tracking_requests(
            acme,
            &TrackingRequestFilter::default(),
            PageRequest {
                offset: 1,
                limit: 2,
            },
        )
        .await
        .unwrap();

    assert_eq!(page.total, 5);
    let listed: Vec<TrackingRequestId> = page.items.iter().map(|r| r.id).collect();
    assert_eq!(listed, vec![created[3], created[2]]);
}

pub async fn tracking_requests_are_filtered_by_status_scac_and_number(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let wanted = tracking_request(&ids, acme, "MAEU123456", t0());
    let mut other_scac = tracking_request(&ids, acme, "MSCU123456", t0());
    other_scac.scac = "MSCU".to_owned();
    let mut failed = tracking_request(&ids, acme, "MAEU654321", t0());
    failed.status = TrackingRequestStatus::Failed;
    for request in [&wanted, &other_scac, &failed] {
        store.create_tracking_request(request).await.unwrap();
    }

    let by_status_and_scac = store
        .list_tracking_requests(
            acme,
            &TrackingRequestFilter {
                status: Some(TrackingRequestStatus::Pending),
                scac: Some("maeu".to_owned()),
                ..TrackingRequestFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();
    let by_number = store
        .list_tracking_requests(
            acme,
            &TrackingRequestFilter {
                request_number: Some("mscu123456".to_owned()),
                ..TrackingRequestFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();

    assert_eq!(by_status_and_scac.items, vec![wanted]);
    assert_eq!(by_number.items, vec![other_scac]);
}

pub async fn tracking_requests_are_searched_by_ref_number(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let mut tagged = tracking_request(&ids, acme, "MAEU123456", t0());
    tagged.ref_numbers = vec!["ORDER-77%".to_owned()];
    let plain = tracking_request(&ids, acme, "MAEU654321", t0());
    store.create_tracking_request(&tagged).await.unwrap();
    store.create_tracking_request(&plain).await.unwrap();

    let search = |q: &str| TrackingRequestFilter {
        q: Some(q.to_owned()),
        ..TrackingRequestFilter::default()
    };
    let by_ref = store
        .list_tracking_requests(acme, &search("order-77%"), ALL)
        .await
        .unwrap();
    let by_number = store
        .list_tracking_requests(acme, &search("654"), ALL)
        .await
        .unwrap();
    let wildcard = store
        .list_tracking_requests(acme, &search("%"), ALL)
        .await
        .unwrap();

    assert_eq!(by_ref.items, vec![tagged.clone()]);
    assert_eq!(by_number.items, vec![plain]);
    assert_eq!(
        wildcard.items,
        vec![tagged],
        "% is a literal, not a wildcard"
    );
}

pub async fn tracking_requests_are_filtered_by_creation_time(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let early = tracking_request(&ids, acme, "MAEU000001", t0());
    let late = tracking_request(&ids, acme, "MAEU000002", t0() + Duration::days(2));
    store.create_tracking_request(&early).await.unwrap();
    store.create_tracking_request(&late).await.unwrap();

    let since_yesterday = store
        .list_tracking_requests(
            acme,
            &TrackingRequestFilter {
                created_from: Some(t0() + Duration::days(1)),
                ..TrackingRequestFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();
    let until_yesterday = store
        .list_tracking_requests(
            acme,
            &TrackingRequestFilter {
                created_to: Some(t0() + Duration::days(1)),
                ..TrackingRequestFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();

    assert_eq!(since_yesterday.items, vec![late]);
    assert_eq!(until_yesterday.items, vec![early]);
}

pub async fn ref_numbers_of_a_tracking_request_can_be_replaced(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let request = tracking_request(&ids, acme, "MAEU123456", t0());
    store.create_tracking_request(&request).await.unwrap();
    let later = t0() + Duration::hours(1);

    let updated = store
        .update_tracking_request_ref_numbers(
            acme,
            request.id,
            &["A".to_owned(), "B".to_owned()],
            later,
        )
        .await
        .unwrap();

    assert_eq!(updated.ref_numbers, vec!["A", "B"]);
    assert_eq!(updated.updated_at, later);
    assert_eq!(
        store.tracking_request(acme, request.id).await.unwrap(),
        updated
    );
}

pub async fn an_idempotency_key_is_reserved_then_replayed(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;

    let first = store
        .begin_idempotent_request(acme, "k1", "fp", t0())
        .await
        .unwrap();
    let concurrent = store
        .begin_idempotent_request(acme, "k1", "fp", t0())
        .await
        .unwrap();
    store
        .complete_idempotent_request(acme, "k1", 201, b"{\"data\":{}}")
        .await
        .unwrap();
    let replay = store
        .begin_idempotent_request(acme, "k1", "fp", t0())
        .await
        .unwrap();

    assert_eq!(first, IdempotencyState::Started);
    assert_eq!(concurrent, IdempotencyState::InProgress);
    assert_eq!(
        replay,
        IdempotencyState::Completed {
            fingerprint: "fp".to_owned(),
            status: 201,
            body: b"{\"data\":{}}".to_vec(),
        }
    );
}

pub async fn an_abandoned_idempotency_key_can_be_used_again(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    store
        .begin_idempotent_request(acme, "k1", "fp", t0())
        .await
        .unwrap();

    store.abandon_idempotent_request(acme, "k1").await.unwrap();
    let again = store
        .begin_idempotent_request(acme, "k1", "fp", t0())
        .await
        .unwrap();

    assert_eq!(again, IdempotencyState::Started);
}

pub async fn idempotency_keys_belong_to_one_account(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    store
        .begin_idempotent_request(acme, "k1", "fp", t0())
        .await
        .unwrap();

    let theirs = store
        .begin_idempotent_request(other, "k1", "fp", t0())
        .await
        .unwrap();

    assert_eq!(theirs, IdempotencyState::Started);
}

pub async fn old_idempotency_keys_are_purged(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    store
        .begin_idempotent_request(acme, "old", "fp", t0())
        .await
        .unwrap();
    store
        .begin_idempotent_request(acme, "new", "fp", t0() + Duration::days(2))
        .await
        .unwrap();

    let purged = store
        .purge_idempotency_keys(t0() + Duration::days(1))
        .await
        .unwrap();

    assert_eq!(purged, 1);
    assert_eq!(
        store
            .begin_idempotent_request(acme, "old", "fp", t0())
            .await
            .unwrap(),
        IdempotencyState::Started
    );
}

fn milestone(
    id: &str,
    event: TransportEventName,
    container: Option<&str>,
    at: DateTime<Utc>,
    locode: &str,
) -> Milestone {
    Milestone {
        source_id: id.to_owned(),
        event,
        container_number: container.map(str::to_owned),
        at,
        location_locode: Some(locode.to_owned()),
        vessel_name: Some("TIDEMARK SPIRIT".to_owned()),
        vessel_imo: Some("9321483".to_owned()),
        voyage_number: Some("001E".to_owned()),
        terminal_id: None,
    }
}

/// A terminal id, as the reference terminals have (no row of the store holds them).
const TERMINAL: uuid::Uuid = uuid::Uuid::from_u128(0x7e41_0000_0000_5000_8000_0000_0000_0001);

fn carrier_report(milestones: Vec<Milestone>) -> CarrierReport {
    CarrierReport {
        pod_terminal: None,
        transport_document: None,
        pickup: Vec::new(),
        replaced_pod_eta: None,
        containers: vec![
            ReportedContainer {
                number: "TDMU1000001".to_owned(),
                iso_equipment_code: Some("45G1".to_owned()),
            },
            ReportedContainer {
                number: "TDMU1000002".to_owned(),
                iso_equipment_code: Some("22G1".to_owned()),
            },
        ],
        port_of_lading: Some("CNSHA".to_owned()),
        port_of_discharge: Some("NLRTM".to_owned()),
        destination: None,
        raw_events: milestones.iter().map(raw_event_of).collect(),
        milestones,
    }
}

/// The raw event a carrier would have sent for `milestone`.
fn raw_event_of(milestone: &Milestone) -> ReportedRawEvent {
    ReportedRawEvent {
        source_id: milestone.source_id.clone(),
        container_number: milestone.container_number.clone(),
        reported: ReportedEvent {
            original_event: format!("carrier said {}", milestone.event.as_str()),
            event: milestone.event.raw_event_name().map(str::to_owned),
            timestamp: milestone.at,
            estimated: milestone.event.is_estimate(),
            location_locode: milestone.location_locode.clone(),
            location_name: Some("Somewhere".to_owned()),
            vessel_name: milestone.vessel_name.clone(),
            vessel_imo: milestone.vessel_imo.clone(),
            voyage_number: milestone.voyage_number.clone(),
            terminal_id: milestone.terminal_id,
        },
    }
}

fn departed_voyage() -> Vec<Milestone> {
    use TransportEventName as E;
    vec![
        Milestone {
            terminal_id: Some(TERMINAL),
            ..milestone(
                "load-1",
                E::VesselLoaded,
                Some("TDMU1000001"),
                t0() + Duration::hours(1),
                "CNSHA",
            )
        },
        milestone(
            "load-2",
            E::VesselLoaded,
            Some("TDMU1000002"),
            t0() + Duration::hours(2),
            "CNSHA",
        ),
        milestone(
            "depart",
            E::VesselDeparted,
            None,
            t0() + Duration::hours(5),
            "CNSHA",
        ),
        milestone(
            "eta",
            E::EstimatedVesselArrived,
            None,
            t0() + Duration::days(20),
            "NLRTM",
        ),
    ]
}

fn announcements(
    request: &TrackingRequest,
    update: &tracking_update::TrackingUpdate,
    ids: &SequentialIds,
) -> Vec<tidemark_domain::DomainEvent> {
    tidemark_domain::domain_event::events_of(
        TrackingRequestStatus::Pending,
        request,
        Some(update),
        ids,
        t0() + Duration::hours(6),
    )
}

/// Saves a shipment's tracking fields the way a poll or a stop does.
async fn save(store: &dyn Store, shipment: tidemark_domain::Shipment) {
    let request = store
        .tracking_request(shipment.account_id, shipment.tracking_request_id)
        .await
        .unwrap();
    store
        .record_tracking_result(
            &request,
            request.updated_at,
            Some(&tracking_update::TrackingUpdate::shipment_only(shipment)),
            &[],
        )
        .await
        .unwrap();
}

/// A tracked request of `account` with its first carrier result recorded.
async fn tracked(
    store: &dyn Store,
    ids: &SequentialIds,
    account: AccountId,
    number: &str,
    milestones: Vec<Milestone>,
) -> (TrackingRequest, tracking_update::TrackingUpdate) {
    let mut request = tracking_request(ids, account, number, t0());
    store.create_tracking_request(&request).await.unwrap();
    let update = tracking_update::plan(
        &request,
        Known::default(),
        &carrier_report(milestones),
        ids,
        t0() + Duration::hours(6),
    );
    request.status = TrackingRequestStatus::Created;
    request.shipment_id = Some(update.shipment.id);
    request.updated_at = t0() + Duration::hours(6);
    store
        .record_tracking_result(
            &request,
            t0(),
            Some(&update),
            &announcements(&request, &update, ids),
        )
        .await
        .unwrap();
    (request, update)
}

/// [`departed_voyage`] and the vessel's arrival at NLRTM on day 21.
fn arrived_voyage() -> Vec<Milestone> {
    let mut milestones = departed_voyage();
    milestones.push(milestone(
        "arrive",
        TransportEventName::VesselArrived,
        None,
        t0() + Duration::days(21),
        "NLRTM",
    ));
    milestones
}

/// Plans and records the carrier's next report for `shipment`, read on day 22.
async fn record_later_result(
    store: &dyn Store,
    ids: &SequentialIds,
    request: &TrackingRequest,
    shipment: &tidemark_domain::Shipment,
    milestones: Vec<Milestone>,
) -> tracking_update::TrackingUpdate {
    let containers = store.containers_of_shipment(shipment.id).await.unwrap();
    let events = store
        .transport_events_of_shipment(shipment.id)
        .await
        .unwrap();
    let update = tracking_update::plan(
        request,
        Known {
            shipment: Some(shipment),
            containers: &containers,
            events: &events,
            ..Known::default()
        },
        &carrier_report(milestones),
        ids,
        t0() + Duration::days(22),
    );
    store
        .record_tracking_result(request, request.updated_at, Some(&update), &[])
        .await
        .unwrap();
    update
}

pub async fn a_tracking_result_stores_the_shipment_its_containers_and_events(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;

    let (request, update) =
        tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;

    let shipment = store.shipment(acme, update.shipment.id).await.unwrap();
    assert_eq!(shipment, update.shipment);
    let containers = store.containers_of_shipment(shipment.id).await.unwrap();
    assert_eq!(containers, update.new_containers);
    let mut events = store
        .transport_events_of_shipment(shipment.id)
        .await
        .unwrap();
    let mut expected = update.new_events.clone();
    events.sort_by_key(|e| e.id);
    expected.sort_by_key(|e| e.id);
    assert_eq!(events, expected);
    assert_eq!(
        store.tracking_request(acme, request.id).await.unwrap(),
        request
    );
}

pub async fn a_later_result_updates_the_shipment_and_corrects_events(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (request, first) =
        tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let mut milestones = arrived_voyage();
    milestones[2].at = t0() + Duration::hours(7);

    record_later_result(store.as_ref(), &ids, &request, &first.shipment, milestones).await;

    let shipment = store.shipment(acme, first.shipment.id).await.unwrap();
    assert_eq!(shipment.pol_atd_at, Some(t0() + Duration::hours(7)));
    assert_eq!(shipment.pod_ata_at, Some(t0() + Duration::days(21)));
    let events = store
        .transport_events_of_shipment(first.shipment.id)
        .await
        .unwrap();
    assert_eq!(events.len(), first.new_events.len() + 2);
    assert_eq!(
        events
            .iter()
            .filter(|e| e.event == TransportEventName::VesselDeparted)
            .map(|e| e.timestamp)
            .collect::<Vec<_>>(),
        vec![t0() + Duration::hours(7); 2]
    );
}

pub async fn a_shipment_is_read_with_its_containers_within_its_account(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let (_, update) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;

    let read = store
        .shipment_with_containers(acme, update.shipment.id)
        .await
        .unwrap();
    let elsewhere = store
        .shipment_with_containers(other, update.shipment.id)
        .await;

    assert_eq!(read.shipment, update.shipment);
    assert_eq!(read.containers, update.new_containers);
    assert!(matches!(elsewhere, Err(StoreError::NotFound)));
}

/// Reads may be served from memory (PostgreSQL keeps a cache of this read): a change made
/// through the same store shows in the next read.
pub async fn a_shipment_read_again_shows_what_changed_in_between(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (request, first) =
        tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let mut shipment = store
        .shipment_with_containers(acme, first.shipment.id)
        .await
        .unwrap()
        .shipment
        .clone();

    shipment.tags = vec!["urgent".to_owned()];
    shipment.updated_at = t0() + Duration::days(1);
    store.update_shipment(&shipment).await.unwrap();
    let tagged = store
        .shipment_with_containers(acme, shipment.id)
        .await
        .unwrap()
        .shipment
        .clone();

    let second =
        record_later_result(store.as_ref(), &ids, &request, &tagged, arrived_voyage()).await;
    let arrived = store
        .shipment_with_containers(acme, shipment.id)
        .await
        .unwrap();
    let (arrived, arrived_containers) = (&arrived.shipment, &arrived.containers);

    assert_eq!(tagged.tags, vec!["urgent".to_owned()]);
    assert_eq!(arrived.pod_ata_at, Some(t0() + Duration::days(21)));
    assert_eq!(*arrived, second.shipment);
    assert!(
        arrived_containers
            .iter()
            .all(|c| c.pod_arrived_at.is_some())
    );
}

/// Callers keep what they derive from a read with it (the API's rendered document): a read
/// may be handed out again while nothing changed, but never once the shipment or its
/// containers changed, whether by a user's update or a carrier's result.
pub async fn what_was_kept_with_a_shipment_read_goes_when_the_shipment_changes(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (request, first) =
        tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let keep = |read: &ShipmentRead| read.keep_rendering("doc", bytes::Bytes::from_static(b"old"));
    let read = store
        .shipment_with_containers(acme, first.shipment.id)
        .await
        .unwrap();
    keep(&read);
    let mut shipment = read.shipment.clone();
    shipment.tags = vec!["urgent".to_owned()];
    shipment.updated_at = t0() + Duration::days(1);
    store.update_shipment(&shipment).await.unwrap();
    let after_update = store
        .shipment_with_containers(acme, shipment.id)
        .await
        .unwrap();
    let kept_after_update = after_update.rendering("doc");
    keep(&after_update);
    record_later_result(
        store.as_ref(),
        &ids,
        &request,
        &after_update.shipment,
        arrived_voyage(),
    )
    .await;
    let after_result = store
        .shipment_with_containers(acme, shipment.id)
        .await
        .unwrap();

    assert_eq!(kept_after_update, None);
    assert_eq!(after_update.shipment.tags, vec!["urgent".to_owned()]);
    assert_eq!(after_result.rendering("doc"), None);
    assert!(after_result.shipment.pod_ata_at.is_some());
}

/// Pending tracking requests for `numbers`, stored, each with the result of its first poll
/// (planned at six hours) and that result's domain events.
async fn first_polls(
    store: &dyn Store,
    ids: &SequentialIds,
    account: AccountId,
    numbers: &[&str],
) -> Vec<(
    TrackingRequest,
    tracking_update::TrackingUpdate,
    Vec<tidemark_domain::DomainEvent>,
)> {
    let mut polls = Vec::new();
    for number in numbers {
        let mut request = tracking_request(ids, account, number, t0());
        store.create_tracking_request(&request).await.unwrap();
        let update = tracking_update::plan(
            &request,
            Known::default(),
            &carrier_report(departed_voyage()),
            ids,
            t0() + Duration::hours(6),
        );
        request.status = TrackingRequestStatus::Created;
        request.shipment_id = Some(update.shipment.id);
        request.updated_at = t0() + Duration::hours(6);
        let announced = announcements(&request, &update, ids);
        polls.push((request, update, announced));
    }
    polls
}

/// Backends may write results that arrive together in one transaction: one that no longer
/// applies (its request changed since the poll read it) fails alone, the others are kept.
pub async fn results_recorded_at_once_each_get_their_own_outcome(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let numbers = ["TESTBL0001", "TESTBL0002", "TESTBL0003"];
    let polls = first_polls(store.as_ref(), &ids, acme, &numbers).await;
    // The second poll read its request before a change it did not see.
    let read_at = |i: usize| {
        if i == 1 {
            t0() - Duration::minutes(5)
        } else {
            t0()
        }
    };

    let outcomes = futures::future::join_all(polls.iter().enumerate().map(
        |(i, (request, update, announced))| {
            store.record_tracking_result(request, read_at(i), Some(update), announced)
        },
    ))
    .await;
    let mut found = Vec::new();
    for (_, update, _) in &polls {
        found.push(store.shipment(acme, update.shipment.id).await.is_ok());
    }

    assert!(outcomes[0].is_ok() && outcomes[2].is_ok(), "{outcomes:?}");
    assert!(matches!(
        outcomes[1],
        Err(StoreError::Conflict {
            constraint: "tracking_request_changed"
        })
    ));
    assert_eq!(found, [true, false, true]);
}

/// A result the database refuses (an event of a container that does not exist) fails alone
/// among results recorded at once: nothing of it is written, the others are written whole.
pub async fn a_refused_result_fails_alone_among_results_recorded_at_once(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let numbers = ["TESTBL0001", "TESTBL0002", "TESTBL0003"];
    let mut polls = first_polls(store.as_ref(), &ids, acme, &numbers).await;
    polls[1].1.new_events[0].container_id = tidemark_domain::ContainerId::new(&ids);

    let outcomes = futures::future::join_all(polls.iter().map(|(request, update, announced)| {
        store.record_tracking_result(request, t0(), Some(update), announced)
    }))
    .await;
    let mut found = Vec::new();
    let mut events = Vec::new();
    for (request, update, _) in &polls {
        found.push(store.shipment(acme, update.shipment.id).await.is_ok());
        events.push(
            store
                .transport_events_of_shipment(update.shipment.id)
                .await
                .unwrap()
                .len(),
        );
        let stored = store.tracking_request(acme, request.id).await.unwrap();
        assert_eq!(
            stored.status,
            if request.id == polls[1].0.id {
                TrackingRequestStatus::Pending
            } else {
                TrackingRequestStatus::Created
            }
        );
    }

    assert!(outcomes[0].is_ok() && outcomes[2].is_ok(), "{outcomes:?}");
    assert!(outcomes[1].is_err(), "{outcomes:?}");
    assert_eq!(found, [true, false, true]);
    let whole = polls[0].1.new_events.len();
    assert_eq!(events, [whole, 0, whole]);
}

/// A tracked shipment (with containers) in a new account, for a backend's own tests.
pub async fn a_tracked_shipment(store: &dyn Store) -> (AccountId, tracking_update::TrackingUpdate) {
    let ids = SequentialIds::default();
    let acme = account_in(store, &ids, "acme").await;
    let (_, update) = tracked(store, &ids, acme, "TESTBL0001", departed_voyage()).await;
    (acme, update)
}

pub async fn another_accounts_shipment_and_container_are_not_found(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let (_, update) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;

    let shipment = store.shipment(other, update.shipment.id).await;
    let container = store.container(other, update.new_containers[0].id).await;
    let events = store
        .transport_events_of_container(
            other,
            update.new_containers[0].id,
            &TransportEventFilter::default(),
            ALL,
        )
        .await
        .unwrap();

    assert!(matches!(shipment, Err(StoreError::NotFound)));
    assert!(matches!(container, Err(StoreError::NotFound)));
    assert_eq!(events.total, 0);
}

/// The ids of the account's shipments `filter` lists, in order.
async fn listed(
    store: &Arc<dyn Store>,
    account: AccountId,
    filter: ShipmentFilter,
) -> Vec<tidemark_domain::ShipmentId> {
    store
        .list_shipments(account, &filter, ALL)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|s| s.id)
        .collect()
}

pub async fn a_shipment_that_learns_its_bill_of_lading_is_stored_and_found_by_it(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (request, first) =
        tracked(store.as_ref(), &ids, acme, "MSCU1234566", departed_voyage()).await;
    let mut learned = first.shipment.clone();
    learned.bill_of_lading_number = "MEDUNJ123456".to_owned();
    let update = tracking_update::TrackingUpdate {
        bill_of_lading_learned: true,
        ..tracking_update::TrackingUpdate::shipment_only(learned)
    };

    store
        .record_tracking_result(&request, request.updated_at, Some(&update), &[])
        .await
        .unwrap();

    let stored = store.shipment(acme, first.shipment.id).await.unwrap();
    assert_eq!(stored.bill_of_lading_number, "MEDUNJ123456");
    let found = listed(
        &store,
        acme,
        ShipmentFilter {
            q: Some("MEDUNJ".to_owned()),
            ..ShipmentFilter::default()
        },
    )
    .await;
    assert_eq!(found, vec![first.shipment.id]);
}

pub async fn a_shipment_search_matches_the_start_of_any_word_of_its_numbers(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, first) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let (_, second) = tracked(store.as_ref(), &ids, acme, "OTHERBL0002", Vec::new()).await;
    let mut referenced = second.shipment.clone();
    referenced.ref_numbers = vec!["PO-4242".to_owned()];
    store.update_shipment(&referenced).await.unwrap();
    let search = |q: &str| {
        listed(
            &store,
            acme,
            ShipmentFilter {
                q: Some(q.to_owned()),
                ..ShipmentFilter::default()
            },
        )
    };

    assert_eq!(
        search("testbl").await,
        vec![first.shipment.id],
        "a BL's start"
    );
    assert_eq!(
        search("4242").await,
        vec![second.shipment.id],
        "a ref number's word"
    );
    assert_eq!(
        search("po 4242").await,
        vec![second.shipment.id],
        "spacing ignored"
    );
    assert_eq!(
        search("BL0001").await,
        Vec::new(),
        "not the middle of a word"
    );
    assert_eq!(
        search("-%-").await,
        Vec::new(),
        "no letter or digit matches nothing"
    );
}

pub async fn shipments_are_filtered_and_searched(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, first) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let (_, second) = tracked(store.as_ref(), &ids, acme, "TESTBL0002", Vec::new()).await;
    let mut stopped = second.shipment.clone();
    stopped.line_tracking_stopped_at = Some(t0() + Duration::days(1));
    stopped.line_tracking_stopped_reason = Some("user".to_owned());
    save(store.as_ref(), stopped).await;
    let list = |filter: ShipmentFilter| listed(&store, acme, filter);

    assert_eq!(
        list(ShipmentFilter::default()).await,
        vec![second.shipment.id, first.shipment.id]
    );
    assert_eq!(
        list(ShipmentFilter {
            q: Some("tdmu1000001".to_owned()),
            ..ShipmentFilter::default()
        })
        .await
        .len(),
        2,
        "both shipments carry containers with that number"
    );
    assert_eq!(
        list(ShipmentFilter {
            number: Some("testbl0001".to_owned()),
            ..ShipmentFilter::default()
        })
        .await,
        vec![first.shipment.id]
    );
    assert_eq!(
        list(ShipmentFilter {
            tracking_stopped: Some(true),
            ..ShipmentFilter::default()
        })
        .await,
        vec![second.shipment.id]
    );
    assert_eq!(
        list(ShipmentFilter {
            container_status: Some(ContainerStatus::OnShip),
            ..ShipmentFilter::default()
        })
        .await,
        vec![first.shipment.id]
    );
    assert_eq!(
        list(ShipmentFilter {
            port_of_discharge: Some("nlrtm".to_owned()),
            scac: Some("MAEU".to_owned()),
            ..ShipmentFilter::default()
        })
        .await
        .len(),
        2
    );
    assert!(
        list(ShipmentFilter {
            port_of_lading: Some("USLAX".to_owned()),
            ..ShipmentFilter::default()
        })
        .await
        .is_empty()
    );
}

pub async fn shipments_are_filtered_by_tag_and_eta_window_and_sorted_by_eta(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let mut shipments = Vec::new();
    for (number, eta_days, arrived) in [
        ("TESTBL0001", Some(10), false),
        ("TESTBL0002", Some(3), false),
        ("TESTBL0003", None, false),
        ("TESTBL0004", Some(2), true),
    ] {
        let (_, update) = tracked(store.as_ref(), &ids, acme, number, Vec::new()).await;
        let mut shipment = update.shipment.clone();
        shipment.pod_eta_at = eta_days.map(|days| t0() + Duration::days(days));
        shipment.pod_ata_at = arrived.then(|| t0() + Duration::days(1));
        save(store.as_ref(), shipment.clone()).await;
        shipments.push(shipment.id);
    }
    let mut tagged = store.shipment(acme, shipments[1]).await.unwrap();
    tagged.tags = vec!["Reefer".to_owned()];
    store.update_shipment(&tagged).await.unwrap();
    let list = |filter: ShipmentFilter| listed(&store, acme, filter);

    assert_eq!(
        list(ShipmentFilter {
            tag: Some("reefer".to_owned()),
            ..ShipmentFilter::default()
        })
        .await,
        vec![shipments[1]],
        "the tag ignores case"
    );
    assert_eq!(
        list(ShipmentFilter {
            arriving_between: Some((t0(), t0() + Duration::days(5))),
            ..ShipmentFilter::default()
        })
        .await,
        vec![shipments[1]],
        "an arrived shipment is not arriving"
    );
    assert_eq!(
        list(ShipmentFilter {
            sort: ShipmentSort::EtaAscending,
            ..ShipmentFilter::default()
        })
        .await,
        vec![shipments[3], shipments[1], shipments[0], shipments[2]],
        "soonest first, without an ETA last"
    );
    assert_eq!(
        list(ShipmentFilter {
            sort: ShipmentSort::EtaDescending,
            ..ShipmentFilter::default()
        })
        .await,
        vec![shipments[0], shipments[1], shipments[3], shipments[2]]
    );
}

pub async fn containers_are_filtered_by_status_port_scac_and_number(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    tracked(store.as_ref(), &ids, acme, "TESTBL0002", Vec::new()).await;
    let count = |filter: ContainerFilter| {
        let store = Arc::clone(&store);
        async move {
            store
                .list_containers(acme, &filter, ALL)
                .await
                .unwrap()
                .total
        }
    };

    assert_eq!(count(ContainerFilter::default()).await, 4);
    assert_eq!(
        count(ContainerFilter {
            status: Some(ContainerStatus::OnShip),
            ..ContainerFilter::default()
        })
        .await,
        2
    );
    assert_eq!(
        count(ContainerFilter {
            status: Some(ContainerStatus::New),
            ..ContainerFilter::default()
        })
        .await,
        2
    );
    assert_eq!(
        count(ContainerFilter {
            number: Some("tdmu1000002".to_owned()),
            ..ContainerFilter::default()
        })
        .await,
        2
    );
    assert_eq!(
        count(ContainerFilter {
            port: Some("CNSHA".to_owned()),
            ..ContainerFilter::default()
        })
        .await,
        4
    );
    assert_eq!(
        count(ContainerFilter {
            scac: Some("MSCU".to_owned()),
            ..ContainerFilter::default()
        })
        .await,
        0
    );
    assert_eq!(
        count(ContainerFilter {
            updated_since: Some(t0() + Duration::days(1)),
            ..ContainerFilter::default()
        })
        .await,
        0
    );
}

pub async fn transport_events_of_a_container_are_filtered_by_event_and_time(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, update) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let container = update.new_containers[0].id;
    let events = |filter: TransportEventFilter| {
        let store = Arc::clone(&store);
        async move {
            store
                .transport_events_of_container(acme, container, &filter, ALL)
                .await
                .unwrap()
                .items
                .into_iter()
                .map(|e| e.event)
                .collect::<Vec<_>>()
        }
    };

    assert_eq!(
        events(TransportEventFilter::default()).await,
        vec![
            TransportEventName::VesselLoaded,
            TransportEventName::VesselDeparted,
            TransportEventName::EstimatedVesselArrived
        ]
    );
    assert_eq!(
        events(TransportEventFilter {
            event: Some(TransportEventName::VesselDeparted),
            ..TransportEventFilter::default()
        })
        .await,
        vec![TransportEventName::VesselDeparted]
    );
    assert_eq!(
        events(TransportEventFilter {
            from: Some(t0() + Duration::hours(3)),
            to: Some(t0() + Duration::days(1)),
            event: None
        })
        .await,
        vec![TransportEventName::VesselDeparted]
    );
}

pub async fn stopped_shipments_are_not_polled(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, first) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", Vec::new()).await;
    let (_, second) = tracked(store.as_ref(), &ids, acme, "TESTBL0002", Vec::new()).await;
    let (_, third) = tracked(store.as_ref(), &ids, acme, "TESTBL0003", Vec::new()).await;
    let mut stopped = second.shipment.clone();
    stopped.line_tracking_stopped_at = Some(t0());
    save(store.as_ref(), stopped).await;

    let due = t0() + Duration::days(1);
    let one = store.shipments_to_poll(due, 1).await.unwrap();
    let all = store.shipments_to_poll(due, 10).await.unwrap();

    assert_eq!(one.len(), 1);
    assert_eq!(
        all.iter().map(|s| s.id).collect::<Vec<_>>(),
        vec![first.shipment.id, third.shipment.id]
    );
}

pub async fn unresolved_tracking_requests_are_pending_or_awaiting_manifest(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let pending = tracking_request(&ids, acme, "MAEU000001", t0());
    let mut waiting = tracking_request(&ids, acme, "MAEU000002", t0() + Duration::minutes(1));
    waiting.status = TrackingRequestStatus::AwaitingManifest;
    let mut failed = tracking_request(&ids, acme, "MAEU000003", t0());
    failed.status = TrackingRequestStatus::Failed;
    for request in [&pending, &waiting, &failed] {
        store.create_tracking_request(request).await.unwrap();
    }

    let unresolved = store.unresolved_tracking_requests(10).await.unwrap();

    assert_eq!(unresolved, vec![pending, waiting]);
}

pub async fn domain_events_are_written_with_the_result_and_read_in_order(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let (request, update) =
        tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    tracked(store.as_ref(), &ids, other, "TESTBL0002", Vec::new()).await;
    let expected = announcements(&request, &update, &ids);

    let all = store.domain_events(acme, None, 1000).await.unwrap();
    let after_first = store.domain_events(acme, Some(all[0].id), 2).await.unwrap();

    assert_eq!(all.len(), expected.len());
    assert_eq!(all[0].event, "tracking_request.succeeded");
    assert!(all.iter().all(|e| e.account_id == acme));
    assert!(all.windows(2).all(|pair| pair[0].id < pair[1].id));
    assert_eq!(after_first, all[1..3].to_vec());
    assert!(
        all.iter()
            .any(|e| e.event == "container.transport.vessel_departed")
    );
}

pub async fn active_requests_are_found_by_carrier_and_number_across_accounts(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let mine = tracking_request(&ids, acme, "MAEU123456", t0());
    let theirs = tracking_request(&ids, other, "MAEU123456", t0());
    let mut failed = tracking_request(&ids, acme, "MAEU654321", t0());
    failed.status = TrackingRequestStatus::Failed;
    let unrelated = tracking_request(&ids, acme, "MAEU999999", t0());
    for request in [&mine, &theirs, &failed, &unrelated] {
        store.create_tracking_request(request).await.unwrap();
    }

    let found = store
        .active_tracking_requests_for("MAEU", &["MAEU123456".to_owned(), "MAEU654321".to_owned()])
        .await
        .unwrap();
    let other_carrier = store
        .active_tracking_requests_for("MSCU", &["MAEU123456".to_owned()])
        .await
        .unwrap();

    let mut found_ids: Vec<TrackingRequestId> = found.iter().map(|r| r.id).collect();
    found_ids.sort();
    assert_eq!(found_ids, vec![mine.id, theirs.id]);
    assert!(other_carrier.is_empty());
}

pub async fn shipments_polled_recently_are_not_due(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, polled) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", Vec::new()).await;
    let mut recently = polled.shipment.clone();
    recently.line_tracking_last_attempted_at = Some(t0() + Duration::hours(10));
    save(store.as_ref(), recently).await;

    let before = store
        .shipments_to_poll(t0() + Duration::hours(9), 10)
        .await
        .unwrap();
    let after = store
        .shipments_to_poll(t0() + Duration::hours(10), 10)
        .await
        .unwrap();

    assert!(before.is_empty());
    assert_eq!(after.len(), 1);
}

pub async fn a_result_computed_from_a_stale_request_is_refused(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (request, first) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", Vec::new()).await;
    let mut stale = first.shipment.clone();
    stale.pod_vessel_name = Some("STALE".to_owned());

    let result = store
        .record_tracking_result(
            &request,
            t0(),
            Some(&tracking_update::TrackingUpdate::shipment_only(stale)),
            &[],
        )
        .await;

    assert!(matches!(
        result,
        Err(StoreError::Conflict {
            constraint: "tracking_request_changed"
        })
    ));
    let shipment = store.shipment(acme, first.shipment.id).await.unwrap();
    assert_eq!(shipment.pod_vessel_name, None);
}

pub async fn a_poll_never_overwrites_the_tags_users_set(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, first) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", Vec::new()).await;
    let mut edited = first.shipment.clone();
    edited.tags = vec!["vip".to_owned()];
    edited.ref_numbers = vec!["PO-2".to_owned()];
    store.update_shipment(&edited).await.unwrap();

    save(store.as_ref(), first.shipment.clone()).await;

    let shipment = store.shipment(acme, first.shipment.id).await.unwrap();
    assert_eq!(shipment.tags, vec!["vip"]);
    assert_eq!(shipment.ref_numbers, vec!["PO-2"]);
}

pub async fn a_containers_ref_numbers_are_saved_and_a_poll_keeps_them(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, first) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", Vec::new()).await;
    let mut edited = first.new_containers[0].clone();
    edited.ref_numbers = vec!["PO-9".to_owned(), "LOT 4".to_owned()];
    edited.updated_at = t0() + Duration::hours(7);
    store.update_container(&edited).await.unwrap();

    let mut polled = first.new_containers[0].clone();
    polled.available_for_pickup = true;
    let mut update = tracking_update::TrackingUpdate::shipment_only(first.shipment.clone());
    update.changed_containers.push(polled);
    let request = store
        .tracking_request(acme, first.shipment.tracking_request_id)
        .await
        .unwrap();
    store
        .record_tracking_result(&request, request.updated_at, Some(&update), &[])
        .await
        .unwrap();

    let container = store.container(acme, edited.id).await.unwrap();
    assert_eq!(container.ref_numbers, vec!["PO-9", "LOT 4"]);
    assert!(container.available_for_pickup);
    let read = store
        .shipment_with_containers(acme, first.shipment.id)
        .await
        .unwrap();
    assert_eq!(read.containers[0].ref_numbers, vec!["PO-9", "LOT 4"]);
}

pub async fn another_accounts_container_cannot_be_updated(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let globex = account_in(store.as_ref(), &ids, "globex").await;
    let (_, first) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", Vec::new()).await;
    let mut stolen = first.new_containers[0].clone();
    stolen.account_id = globex;
    stolen.ref_numbers = vec!["MINE".to_owned()];

    let result = store.update_container(&stolen).await;

    assert!(matches!(result, Err(StoreError::NotFound)));
    let container = store.container(acme, stolen.id).await.unwrap();
    assert!(container.ref_numbers.is_empty());
}

/// What a search finds, as `(kind, id)` in rank order.
async fn found(store: &dyn Store, account: AccountId, key: &str) -> Vec<(SearchKind, uuid::Uuid)> {
    store
        .search(account, key, crate::SEARCH_SCAN_LIMIT)
        .await
        .unwrap()
        .into_iter()
        .map(|hit| (hit.kind, hit.id))
        .collect()
}

pub async fn search_finds_the_accounts_numbers_by_prefix_and_by_word(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let globex = account_in(store.as_ref(), &ids, "globex").await;
    let (request, first) = tracked(store.as_ref(), &ids, acme, "MAEU240001", Vec::new()).await;
    let later = tracking_request(&ids, acme, "MAEU24-0777 X", t0() + Duration::days(1));
    store.create_tracking_request(&later).await.unwrap();
    tracked(store.as_ref(), &ids, globex, "MAEU240002", Vec::new()).await;

    let by_prefix = found(store.as_ref(), acme, "maeu24").await;
    let by_word = found(store.as_ref(), acme, "0777").await;
    let containers = found(store.as_ref(), acme, "tdmu1000001").await;

    assert_eq!(
        by_prefix,
        [
            (SearchKind::Shipment, first.shipment.id.0),
            (SearchKind::TrackingRequest, later.id.0),
            (SearchKind::TrackingRequest, request.id.0),
        ],
        "shipments first, then tracking requests newest first; none of globex's"
    );
    assert_eq!(by_word, [(SearchKind::TrackingRequest, later.id.0)]);
    assert_eq!(
        containers,
        [(SearchKind::Container, first.new_containers[0].id.0)]
    );
    assert!(found(store.as_ref(), acme, "maeu25").await.is_empty());
}

pub async fn search_follows_changed_ref_numbers(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (request, first) = tracked(store.as_ref(), &ids, acme, "MAEU240001", Vec::new()).await;
    let mut shipment = first.shipment.clone();
    shipment.ref_numbers = vec!["ZZ 11".to_owned()];
    store.update_shipment(&shipment).await.unwrap();
    let mut container = first.new_containers[0].clone();
    container.ref_numbers = vec!["LOT-55".to_owned()];
    store.update_container(&container).await.unwrap();
    store
        .update_tracking_request_ref_numbers(acme, request.id, &["ACME-9".to_owned()], t0())
        .await
        .unwrap();

    assert_eq!(
        found(store.as_ref(), acme, "zz1").await,
        [(SearchKind::Shipment, shipment.id.0)]
    );
    assert_eq!(
        found(store.as_ref(), acme, "55").await,
        [(SearchKind::Container, container.id.0)]
    );
    assert_eq!(
        found(store.as_ref(), acme, "acme").await,
        [(SearchKind::TrackingRequest, request.id.0)]
    );
    assert!(
        !found(store.as_ref(), acme, "po1")
            .await
            .contains(&(SearchKind::TrackingRequest, request.id.0)),
        "the replaced ref number no longer finds the request"
    );
}

pub async fn containers_of_several_shipments_are_read_at_once(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, first) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", Vec::new()).await;
    let (_, second) = tracked(store.as_ref(), &ids, acme, "TESTBL0002", Vec::new()).await;
    tracked(store.as_ref(), &ids, acme, "TESTBL0003", Vec::new()).await;

    let containers = store
        .containers_of_shipments(&[first.shipment.id, second.shipment.id])
        .await
        .unwrap();

    assert_eq!(containers.len(), 4);
    assert!(
        containers
            .iter()
            .all(|c| c.shipment_id == first.shipment.id || c.shipment_id == second.shipment.id)
    );
    assert!(store.containers_of_shipments(&[]).await.unwrap().is_empty());
}

pub async fn the_longest_waiting_shipments_are_polled_first(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, recent) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", Vec::new()).await;
    let (_, waiting) = tracked(store.as_ref(), &ids, acme, "TESTBL0002", Vec::new()).await;
    let mut polled_later = recent.shipment.clone();
    polled_later.line_tracking_last_attempted_at = Some(t0() + Duration::hours(8));
    save(store.as_ref(), polled_later).await;
    let mut polled_earlier = waiting.shipment.clone();
    polled_earlier.line_tracking_last_attempted_at = Some(t0() + Duration::hours(7));
    save(store.as_ref(), polled_earlier).await;

    let first = store
        .shipments_to_poll(t0() + Duration::days(1), 1)
        .await
        .unwrap();

    assert_eq!(first[0].id, waiting.shipment.id);
}

pub async fn shipments_are_read_by_ids_within_their_account(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let (_, mine) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", Vec::new()).await;
    let (_, theirs) = tracked(store.as_ref(), &ids, other, "TESTBL0002", Vec::new()).await;

    let found = store
        .shipments_by_ids(acme, &[mine.shipment.id, theirs.shipment.id])
        .await
        .unwrap();

    assert_eq!(found, vec![mine.shipment]);
}

pub async fn raw_events_of_a_container_are_its_own_and_its_vessels(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let (_, update) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let first = update
        .new_containers
        .iter()
        .find(|c| c.number == "TDMU1000001")
        .unwrap();

    let raw = store.raw_events_of_container(acme, first.id).await.unwrap();
    let elsewhere = store.raw_events_of_container(other, first.id).await;

    assert_eq!(
        raw.iter().map(|e| e.source_id.as_str()).collect::<Vec<_>>(),
        vec!["load-1", "depart", "eta"]
    );
    assert_eq!(
        raw[0].reported,
        raw_event_of(&departed_voyage()[0]).reported
    );
    assert!(matches!(elsewhere, Err(StoreError::NotFound)));
}

pub async fn the_event_ids_of_several_containers_are_read_at_once(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let (_, update) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let containers: Vec<_> = update.new_containers.iter().map(|c| c.id).collect();

    let found = store
        .event_ids_of_containers(acme, &containers)
        .await
        .unwrap();
    let elsewhere = store
        .event_ids_of_containers(other, &containers)
        .await
        .unwrap();

    assert_eq!(found.len(), 2);
    for container in &containers {
        let transport = store
            .transport_events_of_container(
                acme,
                *container,
                &TransportEventFilter::default(),
                PageRequest {
                    offset: 0,
                    limit: 100,
                },
            )
            .await
            .unwrap()
            .items;
        let raw = store
            .raw_events_of_container(acme, *container)
            .await
            .unwrap();
        let listed = &found[container];
        assert_eq!(
            listed.transport_events,
            transport.iter().map(|e| e.id).collect::<Vec<_>>()
        );
        assert_eq!(
            listed.raw_events,
            raw.iter().map(|e| e.id).collect::<Vec<_>>()
        );
        // Its own raw event, the vessel's two, and not the other container's.
        assert_eq!(listed.raw_events.len(), 3);
    }
    assert!(elsewhere.is_empty());
    assert!(
        store
            .event_ids_of_containers(acme, &[])
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn a_corrected_raw_event_replaces_the_recorded_one(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (request, first) =
        tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;
    let known_raw = store
        .raw_events_of_shipment(first.shipment.id)
        .await
        .unwrap();
    let containers = store
        .containers_of_shipment(first.shipment.id)
        .await
        .unwrap();
    let events = store
        .transport_events_of_shipment(first.shipment.id)
        .await
        .unwrap();
    let mut milestones = departed_voyage();
    milestones[2].at = t0() + Duration::hours(7);
    milestones[2].terminal_id = Some(TERMINAL);

    let second = tracking_update::plan(
        &request,
        Known {
            shipment: Some(&first.shipment),
            containers: &containers,
            events: &events,
            raw_events: &known_raw,
        },
        &carrier_report(milestones),
        &ids,
        t0() + Duration::days(1),
    );
    store
        .record_tracking_result(&request, request.updated_at, Some(&second), &[])
        .await
        .unwrap();

    let raw = store
        .raw_events_of_shipment(first.shipment.id)
        .await
        .unwrap();
    assert_eq!(raw.len(), known_raw.len());
    let departed = raw.iter().find(|e| e.source_id == "depart").unwrap();
    assert_eq!(departed.reported.timestamp, t0() + Duration::hours(7));
    assert_eq!(departed.reported.terminal_id, Some(TERMINAL));
    assert_eq!(departed.created_at, t0() + Duration::hours(6));
    let departures: Vec<_> = store
        .transport_events_of_shipment(first.shipment.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.source_id == "depart")
        .map(|e| e.terminal_id)
        .collect();
    assert_eq!(
        departures,
        [Some(TERMINAL), Some(TERMINAL)],
        "one per container"
    );
}

fn party(ids: &SequentialIds, account: AccountId, name: &str, at: DateTime<Utc>) -> Party {
    Party {
        id: PartyId::new(ids),
        account_id: account,
        company_name: name.to_owned(),
        created_at: at,
        updated_at: at,
    }
}

pub async fn parties_are_created_listed_and_renamed(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let older = party(&ids, acme, "Globex", t0());
    let newer = party(&ids, acme, "Initech", t0() + Duration::hours(1));
    store.create_party(&older).await.unwrap();
    store.create_party(&newer).await.unwrap();

    let mut renamed = older.clone();
    renamed.company_name = "Globex Corporation".to_owned();
    renamed.updated_at = t0() + Duration::hours(2);
    store.update_party(&renamed).await.unwrap();

    let listed = store.list_parties(acme, ALL).await.unwrap();
    assert_eq!(listed.total, 2);
    assert_eq!(listed.items, vec![newer, renamed.clone()]);
    assert_eq!(store.party(acme, older.id).await.unwrap(), renamed);
}

pub async fn party_names_are_unique_per_account_ignoring_case(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    store
        .create_party(&party(&ids, acme, "Globex", t0()))
        .await
        .unwrap();

    let again = store.create_party(&party(&ids, acme, "GLOBEX", t0())).await;
    let elsewhere = store
        .create_party(&party(&ids, other, "Globex", t0()))
        .await;

    assert!(
        matches!(again, Err(StoreError::Conflict { .. })),
        "{again:?}"
    );
    assert!(elsewhere.is_ok());
}

pub async fn another_accounts_party_is_not_found(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let globex = party(&ids, acme, "Globex", t0());
    store.create_party(&globex).await.unwrap();
    let mut hijacked = globex.clone();
    hijacked.account_id = other;
    hijacked.company_name = "Mine now".to_owned();

    assert!(matches!(
        store.party(other, globex.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.update_party(&hijacked).await,
        Err(StoreError::NotFound)
    ));
    assert_eq!(store.list_parties(other, ALL).await.unwrap().total, 0);
}

pub async fn shipments_and_containers_are_filtered_by_customer(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let globex = party(&ids, acme, "Globex", t0());
    store.create_party(&globex).await.unwrap();
    let mut request = tracking_request(&ids, acme, "TESTBL0001", t0());
    request.customer_id = Some(globex.id);
    store.create_tracking_request(&request).await.unwrap();
    let update = tracking_update::plan(
        &request,
        Known::default(),
        &carrier_report(departed_voyage()),
        &ids,
        t0(),
    );
    request.status = TrackingRequestStatus::Created;
    request.shipment_id = Some(update.shipment.id);
    store
        .record_tracking_result(&request, t0(), Some(&update), &[])
        .await
        .unwrap();
    tracked(store.as_ref(), &ids, acme, "TESTBL0002", departed_voyage()).await;

    let shipments = store
        .list_shipments(
            acme,
            &ShipmentFilter {
                customer: Some(globex.id),
                ..ShipmentFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();
    let containers = store
        .list_containers(
            acme,
            &ContainerFilter {
                customer: Some(globex.id),
                ..ContainerFilter::default()
            },
            ALL,
        )
        .await
        .unwrap();

    assert_eq!(
        store
            .tracking_request(acme, request.id)
            .await
            .unwrap()
            .customer_id,
        Some(globex.id)
    );
    assert_eq!(
        shipments.items.iter().map(|s| s.id).collect::<Vec<_>>(),
        vec![update.shipment.id]
    );
    assert_eq!(shipments.items[0].customer_id, Some(globex.id));
    assert_eq!(containers.total, 2);
}

pub async fn who_stopped_tracking_is_kept_with_the_shipment(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, update) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", Vec::new()).await;
    let key = ApiKeyId::new(&ids);
    let mut stopped = update.shipment.clone();
    stopped.line_tracking_stopped_at = Some(t0());
    stopped.line_tracking_stopped_reason = Some("stopped_by_user".to_owned());
    stopped.line_tracking_stopped_by = Some(key);
    save(store.as_ref(), stopped).await;

    let shipment = store.shipment(acme, update.shipment.id).await.unwrap();

    assert_eq!(shipment.line_tracking_stopped_by, Some(key));
}

fn webhook(ids: &SequentialIds, account: AccountId, events: &[&str], at: DateTime<Utc>) -> Webhook {
    Webhook {
        id: WebhookId::new(ids),
        account_id: account,
        url: "https://example.com/hooks".to_owned(),
        active: true,
        events: events.iter().map(|e| (*e).to_owned()).collect(),
        headers: vec![WebhookHeader {
            name: "X-Team".to_owned(),
            value: "ops".to_owned(),
        }],
        secret: "whsec_one".to_owned(),
        previous_secret: None,
        previous_secret_expires_at: None,
        failing_since: None,
        created_at: at,
        updated_at: at,
    }
}

pub async fn webhooks_are_created_listed_updated_and_deleted(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let older = webhook(&ids, acme, &["container.created"], t0());
    let newer = webhook(
        &ids,
        acme,
        &["tracking_request.failed"],
        t0() + Duration::hours(1),
    );
    store.create_webhook(&older).await.unwrap();
    store.create_webhook(&newer).await.unwrap();

    let mut changed = older.clone();
    changed.active = false;
    changed.events.push("container.updated".to_owned());
    changed.rotate_secret("whsec_two".to_owned(), t0() + Duration::hours(2));
    store.update_webhook(&changed).await.unwrap();
    let listed = store.list_webhooks(acme, ALL).await.unwrap();
    store.delete_webhook(acme, newer.id).await.unwrap();

    assert_eq!(listed.items, vec![newer.clone(), changed.clone()]);
    assert_eq!(store.webhook(acme, older.id).await.unwrap(), changed);
    assert!(matches!(
        store.webhook(acme, newer.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.delete_webhook(acme, newer.id).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn another_accounts_webhook_is_not_found(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let hook = webhook(&ids, acme, &["container.created"], t0());
    store.create_webhook(&hook).await.unwrap();
    let mut hijacked = hook.clone();
    hijacked.account_id = other;

    assert!(matches!(
        store.webhook(other, hook.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.update_webhook(&hijacked).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.delete_webhook(other, hook.id).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn a_tracking_result_notifies_the_subscribed_active_webhooks(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let loads = webhook(&ids, acme, &["container.transport.vessel_loaded"], t0());
    let mut inactive = webhook(&ids, acme, &["container.transport.vessel_loaded"], t0());
    inactive.active = false;
    store.create_webhook(&loads).await.unwrap();
    store.create_webhook(&inactive).await.unwrap();

    let (_, update) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", departed_voyage()).await;

    let notifications = store
        .list_notifications(acme, &NotificationFilter::default(), ALL)
        .await
        .unwrap();
    assert_eq!(notifications.total, 2, "one per loaded container");
    assert!(notifications.items.iter().all(|n| n.webhook_id == loads.id
        && n.event == "container.transport.vessel_loaded"
        && n.delivery_status == DeliveryStatus::Pending
        && n.shipment_id == Some(update.shipment.id)
        && n.container_id.is_some()));
    let now = t0() + Duration::days(1);
    let due = store
        .claim_notifications(loads.id, now, now + Duration::minutes(5), 10)
        .await
        .unwrap();
    assert_eq!(due.len(), 2);
}

pub async fn a_shipment_stopped_by_a_user_makes_no_notifications(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (mut request, first) = tracked(store.as_ref(), &ids, acme, "TESTBL0001", Vec::new()).await;
    store
        .create_webhook(&webhook(
            &ids,
            acme,
            &["tracking_request.tracking_stopped"],
            t0(),
        ))
        .await
        .unwrap();
    let mut stopped = first.shipment.clone();
    stopped.line_tracking_stopped_at = Some(t0() + Duration::days(1));
    stopped.line_tracking_stopped_by = Some(ApiKeyId::new(&ids));
    let read_at = request.updated_at;
    request.status = TrackingRequestStatus::TrackingStopped;
    request.updated_at = t0() + Duration::days(1);
    let update = tracking_update::TrackingUpdate::shipment_only(stopped);
    let announced = tidemark_domain::domain_event::events_of(
        TrackingRequestStatus::Created,
        &request,
        Some(&update),
        &ids,
        t0() + Duration::days(1),
    );
    assert_eq!(announced.len(), 1);

    store
        .record_tracking_result(&request, read_at, Some(&update), &announced)
        .await
        .unwrap();

    let notifications = store
        .list_notifications(acme, &NotificationFilter::default(), ALL)
        .await
        .unwrap();
    assert_eq!(notifications.total, 0);
}

/// An account with a webhook for vessel loads and a tracked shipment that notified it.
async fn notified(
    store: &dyn Store,
    ids: &SequentialIds,
) -> (
    AccountId,
    Webhook,
    Vec<tidemark_domain::WebhookNotification>,
) {
    let acme = account_in(store, ids, "acme").await;
    let hook = webhook(ids, acme, &["container.transport.vessel_loaded"], t0());
    store.create_webhook(&hook).await.unwrap();
    tracked(store, ids, acme, "TESTBL0001", departed_voyage()).await;
    let notifications = store
        .list_notifications(acme, &NotificationFilter::default(), ALL)
        .await
        .unwrap()
        .items;
    (acme, hook, notifications)
}

fn failed_attempt(
    ids: &SequentialIds,
    notification: &tidemark_domain::WebhookNotification,
) -> NotificationLog {
    NotificationLog {
        id: NotificationLogId::new(ids),
        notification_id: notification.id,
        account_id: notification.account_id,
        attempt: notification.attempts + 1,
        started_at: t0() + Duration::hours(7),
        duration_ms: 31,
        response_status: Some(503),
        response_headers: vec![("retry-after".to_owned(), "60".to_owned())],
        response_body: Some("busy".to_owned()),
        error: None,
    }
}

pub async fn a_delivery_attempt_is_recorded_once_with_its_log(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let (acme, _, notifications) = notified(store.as_ref(), &ids).await;
    let before = notifications[0].clone();
    let log = failed_attempt(&ids, &before);
    let mut after = before.clone();
    after.attempts = 1;
    after.next_attempt_at = Some(t0() + Duration::hours(8));
    after.body = Some("{}".to_owned());
    after.updated_at = t0() + Duration::hours(7);

    store
        .record_delivery(&after, before.attempts, Some(&log))
        .await
        .unwrap();
    let again = store
        .record_delivery(
            &after,
            before.attempts,
            Some(&failed_attempt(&ids, &before)),
        )
        .await;

    assert!(
        matches!(again, Err(StoreError::Conflict { .. })),
        "{again:?}"
    );
    assert_eq!(store.notification(acme, before.id).await.unwrap(), after);
    assert_eq!(
        store.notification_logs(acme, before.id).await.unwrap(),
        vec![log]
    );
    let now = t0() + Duration::hours(7);
    let due_now = store
        .claim_notifications(before.webhook_id, now, now + Duration::minutes(5), 10)
        .await
        .unwrap();
    assert!(
        due_now.iter().all(|n| n.id != before.id),
        "waits for its retry time"
    );
}

pub async fn a_batch_of_deliveries_records_all_but_the_ones_another_worker_recorded(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let (acme, _, notifications) = notified(store.as_ref(), &ids).await;
    assert!(notifications.len() >= 2, "the fixture makes several");
    let attempted = |n: &tidemark_domain::WebhookNotification| {
        let mut after = n.clone();
        after.attempts = 1;
        after.delivery_status = DeliveryStatus::Succeeded;
        after.next_attempt_at = None;
        after.updated_at = t0() + Duration::hours(7);
        RecordedDelivery {
            notification: after,
            attempts_before: 0,
            log: Some(failed_attempt(&ids, n)),
        }
    };
    let taken_meanwhile = attempted(&notifications[0]);
    store
        .record_deliveries(std::slice::from_ref(&taken_meanwhile))
        .await
        .unwrap();
    let batch = vec![attempted(&notifications[0]), attempted(&notifications[1])];

    let recorded = store.record_deliveries(&batch).await.unwrap();

    assert_eq!(recorded, vec![false, true]);
    assert_eq!(
        store
            .notification_logs(acme, notifications[0].id)
            .await
            .unwrap(),
        vec![taken_meanwhile.log.clone().unwrap()],
        "the losing attempt's log is not written"
    );
    assert_eq!(
        store.notification(acme, notifications[1].id).await.unwrap(),
        batch[1].notification
    );
    assert_eq!(
        store
            .notification_logs(acme, notifications[1].id)
            .await
            .unwrap(),
        vec![batch[1].log.clone().unwrap()]
    );
}

pub async fn notifications_are_filtered_by_event_status_webhook_and_time(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let (acme, hook, notifications) = notified(store.as_ref(), &ids).await;
    let mut delivered = notifications[0].clone();
    delivered.delivery_status = DeliveryStatus::Succeeded;
    delivered.attempts = 1;
    delivered.next_attempt_at = None;
    store.record_delivery(&delivered, 0, None).await.unwrap();
    let count = |filter: NotificationFilter| {
        let store = store.clone();
        async move {
            store
                .list_notifications(acme, &filter, ALL)
                .await
                .unwrap()
                .total
        }
    };

    assert_eq!(
        count(NotificationFilter {
            delivery_status: Some(DeliveryStatus::Succeeded),
            ..NotificationFilter::default()
        })
        .await,
        1
    );
    assert_eq!(
        count(NotificationFilter {
            event: Some("container.transport.vessel_loaded".to_owned()),
            webhook: Some(hook.id),
            ..NotificationFilter::default()
        })
        .await,
        2
    );
    assert_eq!(
        count(NotificationFilter {
            event: Some("container.created".to_owned()),
            ..NotificationFilter::default()
        })
        .await,
        0
    );
    assert_eq!(
        count(NotificationFilter {
            created_from: Some(t0() + Duration::days(1)),
            ..NotificationFilter::default()
        })
        .await,
        0
    );
    assert_eq!(
        count(NotificationFilter {
            created_to: Some(t0() + Duration::days(1)),
            ..NotificationFilter::default()
        })
        .await,
        2
    );
}

pub async fn deleting_a_webhook_deletes_its_notifications_and_logs(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let (acme, hook, notifications) = notified(store.as_ref(), &ids).await;
    let mut attempted = notifications[0].clone();
    attempted.attempts = 1;
    store
        .record_delivery(
            &attempted,
            0,
            Some(&failed_attempt(&ids, &notifications[0])),
        )
        .await
        .unwrap();

    store.delete_webhook(acme, hook.id).await.unwrap();

    assert_eq!(
        store
            .list_notifications(acme, &NotificationFilter::default(), ALL)
            .await
            .unwrap()
            .total,
        0
    );
    assert!(matches!(
        store.notification(acme, notifications[0].id).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn a_webhooks_health_is_recorded_without_touching_what_users_edit(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let hook = webhook(&ids, acme, &["container.created"], t0());
    store.create_webhook(&hook).await.unwrap();

    store
        .record_webhook_health(acme, hook.id, Some(t0()), false)
        .await
        .unwrap();
    let failing = store.webhook(acme, hook.id).await.unwrap();
    store
        .record_webhook_health(acme, hook.id, Some(t0()), true)
        .await
        .unwrap();
    let deactivated = store.webhook(acme, hook.id).await.unwrap();

    assert_eq!(failing.failing_since, Some(t0()));
    assert!(failing.active);
    assert!(!deactivated.active);
    assert_eq!(deactivated.events, hook.events);
    assert!(matches!(
        store
            .record_webhook_health(
                account_in(store.as_ref(), &ids, "other").await,
                hook.id,
                None,
                false
            )
            .await,
        Err(StoreError::NotFound)
    ));
}

pub async fn claimed_notifications_are_not_claimed_again_until_their_lease_ends(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let (acme, hook, notifications) = notified(store.as_ref(), &ids).await;
    let now = t0() + Duration::hours(7);
    let lease = now + Duration::minutes(5);

    let due = store
        .webhooks_with_due_notifications(now, 10)
        .await
        .unwrap();
    let first = store
        .claim_notifications(hook.id, now, lease, 1)
        .await
        .unwrap();
    let second = store
        .claim_notifications(hook.id, now, lease, 10)
        .await
        .unwrap();
    let third = store
        .claim_notifications(hook.id, now, lease, 10)
        .await
        .unwrap();
    let after_lease = store
        .claim_notifications(hook.id, lease, lease + Duration::minutes(5), 10)
        .await
        .unwrap();

    assert_eq!(due, vec![(acme, hook.id)]);
    assert_eq!(first.len(), 1);
    assert_eq!(second.len(), notifications.len() - 1);
    assert_ne!(first[0].id, second[0].id);
    assert!(third.is_empty(), "all are leased");
    assert_eq!(
        after_lease.len(),
        notifications.len(),
        "a dead worker's claims come back"
    );
}

pub async fn released_claims_make_a_webhooks_notifications_due_again(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let (_, hook, notifications) = notified(store.as_ref(), &ids).await;
    let now = t0() + Duration::hours(7);
    let lease = now + Duration::minutes(5);
    let claimed = store
        .claim_notifications(hook.id, now, lease, 10)
        .await
        .unwrap();
    let delivered = RecordedDelivery {
        notification: tidemark_domain::WebhookNotification {
            delivery_status: DeliveryStatus::Succeeded,
            attempts: 1,
            next_attempt_at: None,
            ..claimed[0].clone()
        },
        attempts_before: 0,
        log: None,
    };
    store.record_deliveries(&[delivered]).await.unwrap();

    let later = now + Duration::seconds(1);
    let released = store
        .release_notification_claims(hook.id, later)
        .await
        .unwrap();
    let again = store
        .claim_notifications(hook.id, later, later + Duration::minutes(5), 10)
        .await
        .unwrap();
    let released_twice = store
        .release_notification_claims(hook.id, later)
        .await
        .unwrap();

    assert_eq!(claimed.len(), notifications.len());
    assert_eq!(
        released as usize,
        notifications.len() - 1,
        "the recorded one is not claimed"
    );
    assert_eq!(again.len(), notifications.len() - 1);
    assert!(again.iter().all(|n| n.id != claimed[0].id));
    assert_eq!(
        released_twice as usize,
        notifications.len() - 1,
        "claimed again, released again"
    );
}

pub async fn a_setting_keeps_the_first_value_stored(backend: &dyn TestBackend) {
    let store = backend.store();

    let first = store
        .setting_or_init("signing_secret", "first")
        .await
        .unwrap();
    let second = store
        .setting_or_init("signing_secret", "second")
        .await
        .unwrap();
    let after_restart = backend
        .reopen()
        .await
        .setting_or_init("signing_secret", "third")
        .await
        .unwrap();
    let other = store.setting_or_init("other", "own").await.unwrap();
    let other_handle = backend.store();
    let (racer_a, racer_b) = tokio::join!(
        store.setting_or_init("raced", "a"),
        other_handle.setting_or_init("raced", "b")
    );

    assert_eq!(
        (first.as_str(), second.as_str(), after_restart.as_str()),
        ("first", "first", "first")
    );
    assert_eq!(other, "own");
    assert_eq!(racer_a.unwrap(), racer_b.unwrap());
}
