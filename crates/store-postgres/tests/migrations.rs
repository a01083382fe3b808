//! Migrations that carry data: a database an older release left keeps working after the
//! upgrade. Run when `TIDEMARK_TEST_POSTGRES_URL` names a database (skipped otherwise).

use tidemark_domain::AccountId;
use tidemark_store::contract::documents::documents_from_before_the_word_index_are_found;
use tidemark_store::contract::edi::event_ids_from_before_their_record_are_known;
use tidemark_store_postgres::testing::temp_schema_from;
use uuid::Uuid;

const ACME: Uuid = Uuid::from_u128(0x0190_0000_0000_7000_8000_0000_0000_0001);

/// Two accounts' documents as release 15 stored them (a full-text column, no word index).
const SEED: &str = "
INSERT INTO accounts (id, name, created_at) VALUES
    ('01900000-0000-7000-8000-000000000001', 'acme', '2026-01-01T00:00:00Z'),
    ('01900000-0000-7000-8000-000000000002', 'other', '2026-01-01T00:00:00Z');
INSERT INTO documents (id, account_id, source, name, file_name, content_type, size_bytes,
    sha256, storage_key, document_type, created_at, updated_at, deleted_at, seq)
SELECT ('01900000-0000-7000-8000-0000000001' || lpad(n::text, 2, '0'))::uuid, account::uuid,
    'upload', name, file_name, 'application/pdf', 1, 'sha' || n, 'key' || n, kind,
    '2026-01-02T00:00:00Z', '2026-01-02T00:00:00Z', deleted::timestamptz, seq
FROM (VALUES
    (1, '01900000-0000-7000-8000-000000000001', 'invoice_MAEU1.pdf', 'invoice_MAEU1.pdf',
        'commercial_invoice', NULL, 1),
    (2, '01900000-0000-7000-8000-000000000001', 'Invoice March', 'scan.pdf',
        'commercial_invoice', NULL, 2),
    (3, '01900000-0000-7000-8000-000000000001', 'invoice_old.pdf', 'invoice_old.pdf',
        'commercial_invoice', '2026-01-03T00:00:00Z', 3),
    (4, '01900000-0000-7000-8000-000000000001', 'Arrival Notice.pdf', 'Arrival Notice.pdf',
        'arrival_notice', NULL, 4),
    (5, '01900000-0000-7000-8000-000000000002', 'invoice_theirs.pdf', 'invoice_theirs.pdf',
        'commercial_invoice', NULL, 1)
) AS t (n, account, name, file_name, kind, deleted, seq);
";

#[tokio::test]
async fn documents_stored_before_the_word_index_are_found_after_migrating() {
    let Some(schema) = temp_schema_from(15, SEED).await else {
        return;
    };
    let store = schema.store();
    documents_from_before_the_word_index_are_found(store.as_ref(), AccountId(ACME)).await;
}

/// An interchange as release 40 stored it: finished, its transaction's events in JSON, and
/// no record of their ids.
const EDI_SEED: &str = r#"
INSERT INTO accounts (id, name, created_at) VALUES
    ('01900000-0000-7000-8000-000000000001', 'acme', '2026-01-01T00:00:00Z');
INSERT INTO edi_messages (id, account_id, channel, interchange_key, status, transactions,
    statuses, events, size_bytes, raw, created_at, updated_at)
VALUES ('01900000-0000-7000-8000-0000000000e1', '01900000-0000-7000-8000-000000000001', 'api',
    'x12|ZZ|HAMSUD|000720857', 'processed', 1, 1, 1, 1, '\x78', '2026-01-02T00:00:00Z',
    '2026-01-02T00:00:00Z');
INSERT INTO edi_transactions (message_id, position, account_id, set_id, control_number,
    numbers, events, facts, segments, matched, created_at)
VALUES ('01900000-0000-7000-8000-0000000000e1', 0, '01900000-0000-7000-8000-000000000001',
    '315', '1883403', '["MRSU4371639"]',
    '[{"event_id": "edi:HAMSUD:UV:MRSU4371639:MXZLO:2022-11-21T01:24:00Z"}, {"kind": "no id"}]',
    '[]', '', true, '2026-01-02T00:00:00Z');
"#;

#[tokio::test]
async fn edi_event_ids_stored_before_their_record_are_known_after_migrating() {
    let Some(schema) = temp_schema_from(40, EDI_SEED).await else {
        return;
    };
    let store = schema.store();
    event_ids_from_before_their_record_are_known(store.as_ref(), AccountId(ACME)).await;
}
