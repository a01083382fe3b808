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
    include_str!("../migrations/0017_documents_robustness.sql"),
    include_str!("../migrations/0018_unresolved_requests_index.sql"),
    include_str!("../migrations/0019_no_sqlite_counterpart.sql"),
    include_str!("../migrations/0020_job_reruns_and_notification_claims.sql"),
    include_str!("../migrations/0021_carrier_states.sql"),
    include_str!("../migrations/0022_original_estimates.sql"),
    include_str!("../migrations/0023_pod_terminals.sql"),
    include_str!("../migrations/0024_container_ref_numbers.sql"),
    include_str!("../migrations/0025_search_terms.sql"),
    include_str!("../migrations/0026_document_rotations.sql"),
    include_str!("../migrations/0027_email_submissions.sql"),
    include_str!("../migrations/0028_event_terminals.sql"),
    include_str!("../migrations/0029_mailbox_polling.sql"),
    include_str!("../migrations/0030_estimated_calls_index.sql"),
    include_str!("../migrations/0031_fewer_event_indexes.sql"),
    include_str!("../migrations/0032_ended_console_sessions.sql"),
    include_str!("../migrations/0033_duplicates_in_any_case.sql"),
    include_str!("../migrations/0034_edi_messages.sql"),
    include_str!("../migrations/0035_container_pickup.sql"),
    include_str!("../migrations/0036_edi_speed.sql"),
    include_str!("../migrations/0037_pickup_notices.sql"),
    include_str!("../migrations/0038_terminal_checks.sql"),
    include_str!("../migrations/0039_tracked_shipments_by_port.sql"),
    include_str!("../migrations/0040_edi_event_ids.sql"),
];

/// Migrations whose rows need code: the word index of existing documents and the search
/// terms of existing entities are split by the same functions as new ones
/// (`tidemark_store::search_words`, `SearchEntry`), which SQL cannot call.
fn after(tx: &rusqlite::Transaction<'_>, number: usize) -> StoreResult<()> {
    match number {
        16 => crate::documents::index_existing_words(tx),
        25 => crate::search::index_existing(tx),
        _ => Ok(()),
    }
}

pub fn run(conn: &mut Connection) -> StoreResult<()> {
    run_to(conn, MIGRATIONS.len())
}

/// Applies the migrations up to number `last`.
fn run_to(conn: &mut Connection, last: usize) -> StoreResult<()> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let applied: usize = tx
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(backend)?;
    for (index, sql) in MIGRATIONS.iter().enumerate().take(last).skip(applied) {
        tracing::info!(migration = index + 1, "applying SQLite migration");
        tx.execute_batch(sql).map_err(backend)?;
        after(&tx, index + 1)?;
        tx.pragma_update(None, "user_version", index + 1)
            .map_err(backend)?;
    }
    tx.commit().map_err(backend)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(conn: &Connection, id: &str, document_type: Option<&str>, deleted: bool) {
        conn.execute(
            "INSERT INTO documents (id, account_id, source, name, file_name, content_type,
                 size_bytes, sha256, storage_key, document_type, created_at, updated_at,
                 deleted_at, seq)
             VALUES (?1, 'acct', 'upload', ?1, ?1, 'application/pdf', 1, ?1, ?1, ?2,
                     '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z', ?3,
                     (SELECT count(*) FROM documents) + 1)",
            rusqlite::params![
                id,
                document_type,
                deleted.then_some("2026-01-02T00:00:00.000000Z")
            ],
        )
        .unwrap();
    }

    #[test]
    fn migration_17_queues_classification_for_unclassified_documents_without_a_job() {
        let mut conn = Connection::open_in_memory().unwrap();
        run_to(&mut conn, 16).unwrap();
        conn.execute(
            "INSERT INTO accounts (id, name, created_at)
             VALUES ('acct', 'acme', '2026-01-01T00:00:00.000000Z')",
            [],
        )
        .unwrap();
        document(&conn, "orphan", None, false);
        document(&conn, "classified", Some("invoice"), false);
        document(&conn, "deleted", None, true);
        document(&conn, "queued", None, false);
        conn.execute(
            "INSERT INTO jobs (id, kind, payload, dedup_key, state, max_attempts, run_at,
                               created_at, updated_at)
             VALUES ('job', 'process_document', '{}', 'document:queued', 'queued', 10,
                     '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z',
                     '2026-01-01T00:00:00.000000Z')",
            [],
        )
        .unwrap();

        run(&mut conn).unwrap();

        let jobs: Vec<(String, String, String, String)> = conn
            .prepare("SELECT kind, payload, dedup_key, state FROM jobs ORDER BY dedup_key")
            .unwrap()
            .query_map([], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let payload: serde_json::Value = serde_json::from_str(&jobs[0].1).unwrap();
        assert_eq!(jobs.len(), 2, "{jobs:?}");
        assert_eq!(
            (jobs[0].0.as_str(), jobs[0].2.as_str(), jobs[0].3.as_str()),
            ("process_document", "document:orphan", "queued")
        );
        assert_eq!(
            payload,
            serde_json::json!({"account_id": "acct", "document_id": "orphan"})
        );
        assert_eq!(jobs[1].2, "document:queued");
    }

    #[test]
    fn migration_25_indexes_the_numbers_of_existing_entities() {
        const ACCOUNT: &str = "00000000-0000-0000-0000-00000000000a";
        const AT: &str = "2026-01-01T00:00:00.000000Z";
        let mut conn = Connection::open_in_memory().unwrap();
        run_to(&mut conn, 24).unwrap();
        conn.execute_batch(&format!(
            "INSERT INTO accounts (id, name, created_at) VALUES ('{ACCOUNT}', 'acme', '{AT}');
             INSERT INTO tracking_requests (id, account_id, request_type, request_number, scac,
                 ref_numbers, status, created_at, updated_at)
             VALUES ('00000000-0000-0000-0000-000000000001', '{ACCOUNT}', 'bill_of_lading',
                 'MAEU123', 'MAEU', '[\"PO 7\"]', 'created', '{AT}', '{AT}');
             INSERT INTO shipments (id, account_id, tracking_request_id, bill_of_lading_number,
                 normalized_number, ref_numbers, shipping_line_scac, created_at, updated_at)
             VALUES ('00000000-0000-0000-0000-000000000002', '{ACCOUNT}',
                 '00000000-0000-0000-0000-000000000001', 'MAEU123', 'MAEU123', '[]', 'MAEU',
                 '{AT}', '{AT}');
             INSERT INTO containers (id, account_id, shipment_id, number, availability_known,
                 available_for_pickup, current_status, created_at, updated_at, ref_numbers)
             VALUES ('00000000-0000-0000-0000-000000000003', '{ACCOUNT}',
                 '00000000-0000-0000-0000-000000000002', 'TDMU1000001', 0, 0, 'on_ship',
                 '{AT}', '{AT}', '[\"LOT-5\"]');"
        ))
        .unwrap();

        run(&mut conn).unwrap();

        let terms: Vec<(String, i64, String)> = conn
            .prepare("SELECT term, kind, entity_id FROM search_terms ORDER BY term, kind")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let id = |n: u8| format!("00000000-0000-0000-0000-00000000000{n}");
        assert_eq!(
            terms,
            [
                ("5".to_owned(), 1, id(3)),
                ("7".to_owned(), 2, id(1)),
                ("lot5".to_owned(), 1, id(3)),
                ("maeu123".to_owned(), 0, id(2)),
                ("maeu123".to_owned(), 2, id(1)),
                ("po7".to_owned(), 2, id(1)),
                ("tdmu1000001".to_owned(), 1, id(3)),
            ]
        );
    }
}
