//! Forward-only migrations, embedded in the binary and tracked with `PRAGMA user_version`.

use rusqlite::Connection;
use tidemark_store::StoreResult;

use crate::convert::backend;

/// In order; a migration's number is its position plus one. Never edit a released one.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_accounts_and_jobs.sql"),
    include_str!("../migrations/0002_tracking_requests.sql"),
    include_str!("../migrations/0003_shipments.sql"),
    include_str!("../migrations/0004_domain_events.sql"),
    include_str!("../migrations/0005_duplicates_while_tracked.sql"),
    include_str!("../migrations/0006_poll_due_index.sql"),
    include_str!("../migrations/0007_raw_events_and_parties.sql"),
    include_str!("../migrations/0008_webhooks.sql"),
    include_str!("../migrations/0009_event_payloads.sql"),
    include_str!("../migrations/0010_webhook_health.sql"),
    include_str!("../migrations/0011_tracking_request_submitter.sql"),
    include_str!("../migrations/0012_vessels.sql"),
    include_str!("../migrations/0013_documents.sql"),
    include_str!("../migrations/0014_custom_fields.sql"),
    include_str!("../migrations/0015_tracking_request_polled_at.sql"),
    include_str!("../migrations/0016_document_words.sql"),
];

/// Migrations whose rows need code: the word index of existing documents is split by the
/// same function as new ones (`tidemark_store::search_words`), which SQL cannot call.
fn after(tx: &rusqlite::Transaction<'_>, number: usize) -> StoreResult<()> {
    match number {
        16 => crate::documents::index_existing_words(tx),
        _ => Ok(()),
    }
}

pub fn run(conn: &mut Connection) -> StoreResult<()> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let applied: usize = tx
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(backend)?;
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(applied) {
        tracing::info!(migration = index + 1, "applying SQLite migration");
        tx.execute_batch(sql).map_err(backend)?;
        after(&tx, index + 1)?;
        tx.pragma_update(None, "user_version", index + 1)
            .map_err(backend)?;
    }
    tx.commit().map_err(backend)
}
