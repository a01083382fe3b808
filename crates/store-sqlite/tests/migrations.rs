//! Migrations that carry data: a database an older release left keeps working after the
//! upgrade.

use tidemark_domain::AccountId;
use tidemark_store::contract::documents::documents_from_before_the_word_index_are_found;
use tidemark_store::contract::edi::event_ids_from_before_their_record_are_known;
use tidemark_store_sqlite::SqliteStore;
use uuid::Uuid;

const ACME: Uuid = Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0001);

/// Two accounts' documents as release 15 stored them (FTS5, no word index).
const SEED: &str = "
INSERT INTO accounts (id, name, created_at) VALUES
    ('01900000-0000-7000-8000-000000000001', 'acme', '2026-01-01T00:00:00Z'),
    ('01900000-0000-7000-8000-000000000002', 'other', '2026-01-01T00:00:00Z');
INSERT INTO documents (id, account_id, source, name, file_name, content_type, size_bytes,
    sha256, storage_key, document_type, created_at, updated_at, deleted_at, seq)
SELECT '01900000-0000-7000-8000-0000000001' || printf('%02d', n), account, 'upload', name,
    file_name, 'application/pdf', 1, 'sha' || n, 'key' || n, kind, '2026-01-02T00:00:00Z',
    '2026-01-02T00:00:00Z', deleted, seq
FROM (SELECT 1 AS n, '01900000-0000-7000-8000-000000000001' AS account,
        'invoice_MAEU1.pdf' AS name, 'invoice_MAEU1.pdf' AS file_name,
        'commercial_invoice' AS kind, NULL AS deleted, 1 AS seq
    UNION ALL SELECT 2, '01900000-0000-7000-8000-000000000001', 'Invoice March', 'scan.pdf',
        'commercial_invoice', NULL, 2
    UNION ALL SELECT 3, '01900000-0000-7000-8000-000000000001', 'invoice_old.pdf',
        'invoice_old.pdf', 'commercial_invoice', '2026-01-03T00:00:00Z', 3
    UNION ALL SELECT 4, '01900000-0000-7000-8000-000000000001', 'Arrival Notice.pdf',
        'Arrival Notice.pdf', 'arrival_notice', NULL, 4
    UNION ALL SELECT 5, '01900000-0000-7000-8000-000000000002', 'invoice_theirs.pdf',
        'invoice_theirs.pdf', 'commercial_invoice', NULL, 1);
";

/// A database file migrated up to `version` only (the migrations read from the crate's
/// folder), with `seed` run on it.
fn database_at(path: &std::path::Path, version: usize, seed: &str) {
    let conn = rusqlite::Connection::open(path).expect("a new database file");
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let mut files: Vec<_> = std::fs::read_dir(folder)
        .expect("the crate's migrations folder")
        .map(|entry| entry.expect("a migration file").path())
        .collect();
    files.sort();
    for file in &files[..version] {
        let sql = std::fs::read_to_string(file).expect("a migration's SQL");
        conn.execute_batch(&sql)
            .expect("an older migration applies");
    }
    conn.pragma_update(None, "user_version", version)
        .expect("the version is set");
    conn.execute_batch(seed).expect("the seed applies");
}

#[tokio::test]
async fn documents_stored_before_the_word_index_are_found_after_migrating() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("release-15.db");
    database_at(&path, 15, SEED);
    let store = SqliteStore::open(&path).unwrap();
    documents_from_before_the_word_index_are_found(&store, AccountId(ACME)).await;
}

/// An interchange as release 39 stored it: finished, its transaction's events in JSON, and
/// no record of their ids.
const EDI_SEED: &str = r#"
INSERT INTO accounts (id, name, created_at) VALUES
    ('01900000-0000-7000-8000-000000000001', 'acme', '2026-01-01T00:00:00Z');
INSERT INTO edi_messages (id, account_id, channel, interchange_key, status, transactions,
    statuses, events, size_bytes, raw, created_at, updated_at)
VALUES ('01900000-0000-7000-8000-0000000000e1', '01900000-0000-7000-8000-000000000001', 'api',
    'x12|ZZ|HAMSUD|000720857', 'processed', 1, 1, 1, 1, X'78', '2026-01-02T00:00:00Z',
    '2026-01-02T00:00:00Z');
INSERT INTO edi_transactions (message_id, position, account_id, set_id, control_number,
    numbers, events, facts, segments, matched, created_at)
VALUES ('01900000-0000-7000-8000-0000000000e1', 0, '01900000-0000-7000-8000-000000000001',
    '315', '1883403', '["MRSU4371639"]',
    '[{"event_id": "edi:HAMSUD:UV:MRSU4371639:MXZLO:2022-11-21T01:24:00Z"}, {"kind": "no id"}]',
    '[]', '', 1, '2026-01-02T00:00:00Z');
"#;

#[tokio::test]
async fn edi_event_ids_stored_before_their_record_are_known_after_migrating() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("release-39.db");
    database_at(&path, 39, EDI_SEED);
    let store = SqliteStore::open(&path).unwrap();
    event_ids_from_before_their_record_are_known(&store, AccountId(ACME)).await;
}
