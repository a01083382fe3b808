//! Forward-only migrations, embedded in the binary and tracked in `schema_migrations`.

use deadpool_postgres::GenericClient;
use tidemark_store::StoreResult;

use crate::convert::backend;

/// In order, each with its version. Never edit a released one; add a new file instead.
pub(crate) const MIGRATIONS: &[(i32, &str)] = &[
    (1, include_str!("../migrations/0001_accounts_and_jobs.sql")),
    (2, include_str!("../migrations/0002_tracking_requests.sql")),
    (3, include_str!("../migrations/0003_shipments.sql")),
    (4, include_str!("../migrations/0004_domain_events.sql")),
    (
        5,
        include_str!("../migrations/0005_duplicates_while_tracked.sql"),
    ),
    (6, include_str!("../migrations/0006_poll_due_index.sql")),
    (
        7,
        include_str!("../migrations/0007_raw_events_and_parties.sql"),
    ),
    (8, include_str!("../migrations/0008_webhooks.sql")),
    (9, include_str!("../migrations/0009_event_payloads.sql")),
    (10, include_str!("../migrations/0010_webhook_health.sql")),
    (
        11,
        include_str!("../migrations/0011_tracking_request_submitter.sql"),
    ),
    (12, include_str!("../migrations/0012_vessels.sql")),
    (13, include_str!("../migrations/0013_documents.sql")),
    (14, include_str!("../migrations/0014_custom_fields.sql")),
    (
        15,
        include_str!("../migrations/0015_tracking_request_polled_at.sql"),
    ),
    (16, include_str!("../migrations/0016_document_words.sql")),
    (
        17,
        include_str!("../migrations/0017_documents_robustness.sql"),
    ),
    (
        18,
        include_str!("../migrations/0018_unresolved_requests_index.sql"),
    ),
    (
        19,
        include_str!("../migrations/0019_shipment_change_notifications.sql"),
    ),
    (
        20,
        include_str!("../migrations/0020_job_reruns_and_notification_claims.sql"),
    ),
    (21, include_str!("../migrations/0021_carrier_states.sql")),
    (
        22,
        include_str!("../migrations/0022_original_estimates.sql"),
    ),
    (23, include_str!("../migrations/0023_pod_terminals.sql")),
    (
        24,
        include_str!("../migrations/0024_container_ref_numbers.sql"),
    ),
    (25, include_str!("../migrations/0025_search_terms.sql")),
    (
        26,
        include_str!("../migrations/0026_document_rotations.sql"),
    ),
    (27, include_str!("../migrations/0027_email_submissions.sql")),
    (28, include_str!("../migrations/0028_event_terminals.sql")),
    (29, include_str!("../migrations/0029_mailbox_polling.sql")),
    (
        30,
        include_str!("../migrations/0030_event_owner_checks.sql"),
    ),
    (
        31,
        include_str!("../migrations/0031_estimated_calls_index.sql"),
    ),
    (
        32,
        include_str!("../migrations/0032_fewer_event_indexes.sql"),
    ),
    (
        33,
        include_str!("../migrations/0033_ended_console_sessions.sql"),
    ),
    (
        34,
        include_str!("../migrations/0034_duplicates_in_any_case.sql"),
    ),
    (35, include_str!("../migrations/0035_edi_messages.sql")),
    (36, include_str!("../migrations/0036_container_pickup.sql")),
    (37, include_str!("../migrations/0037_edi_speed.sql")),
    (38, include_str!("../migrations/0038_pickup_notices.sql")),
    (39, include_str!("../migrations/0039_terminal_checks.sql")),
    (
        40,
        include_str!("../migrations/0040_tracked_shipments_by_port.sql"),
    ),
    (41, include_str!("../migrations/0041_edi_event_ids.sql")),
];

/// Migrations whose rows need code: the word index of existing documents and the search
/// terms of existing entities are split by the same functions as new ones
/// (`tidemark_store::search_words`, `SearchEntry`), which SQL cannot call.
async fn after(tx: &deadpool_postgres::Transaction<'_>, version: i32) -> StoreResult<()> {
    match version {
        16 => crate::documents::index_existing_words(tx).await,
        25 => crate::search::index_existing(tx).await,
        _ => Ok(()),
    }
}

/// Advisory lock key held while migrating ("tdmkmigr"), so processes starting together
/// apply each migration once instead of racing on the DDL.
const MIGRATION_LOCK: i64 = 0x7464_6d6b_6d69_6772;

pub async fn run(client: &mut deadpool_postgres::Client) -> StoreResult<()> {
    let tx = client.transaction().await.map_err(backend)?;
    // Taken before even the tracking table is created: two concurrent
    // `CREATE TABLE IF NOT EXISTS` can still collide in the catalog.
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(backend)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version     integer PRIMARY KEY,
             applied_at  timestamptz NOT NULL DEFAULT now()
         )",
    )
    .await
    .map_err(backend)?;
    let applied = tx
        .query("SELECT version FROM schema_migrations", &[])
        .await
        .map_err(backend)?
        .iter()
        .map(|row| row.try_get::<_, i32>(0))
        .collect::<Result<Vec<_>, _>>()
        .map_err(backend)?;
    for (version, sql) in MIGRATIONS {
        if applied.contains(version) {
            continue;
        }
        tracing::info!(migration = version, "applying PostgreSQL migration");
        tx.batch_execute(sql).await.map_err(backend)?;
        after(&tx, *version).await?;
        tx.execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())",
            &[version],
        )
        .await
        .map_err(backend)?;
    }
    tx.commit().await.map_err(backend)
}
