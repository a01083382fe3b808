//! The event tables' owners are checked once per statement (migration 30) instead of by a
//! foreign key per row: an event that names a container, shipment or account it does not
//! belong to is still refused. Run when `TIDEMARK_TEST_POSTGRES_URL` names a database.

use tidemark_store_postgres::testing::{TempSchema, temp_schema};
use tokio_postgres::error::SqlState;

/// Two accounts, each with a shipment of one container.
const SEED: &str = "
INSERT INTO accounts (id, name, created_at) VALUES
    ('01900000-0000-7000-8000-00000000000a', 'acme', '2026-01-01T00:00:00Z'),
    ('01900000-0000-7000-8000-00000000000b', 'other', '2026-01-01T00:00:00Z');
INSERT INTO tracking_requests (id, account_id, request_type, request_number, scac, status,
    created_at, updated_at)
SELECT ('01900000-0000-7000-8000-00000000001' || n)::uuid,
    ('01900000-0000-7000-8000-00000000000' || n)::uuid, 'bill_of_lading', 'BL' || n, 'TEST',
    'created', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'
FROM (VALUES ('a'), ('b')) AS t (n);
INSERT INTO shipments (id, account_id, tracking_request_id, bill_of_lading_number,
    normalized_number, shipping_line_scac, created_at, updated_at)
SELECT ('01900000-0000-7000-8000-00000000002' || n)::uuid,
    ('01900000-0000-7000-8000-00000000000' || n)::uuid,
    ('01900000-0000-7000-8000-00000000001' || n)::uuid, 'BL' || n, 'BL' || n, 'TEST',
    '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'
FROM (VALUES ('a'), ('b')) AS t (n);
INSERT INTO containers (id, account_id, shipment_id, number, availability_known,
    available_for_pickup, current_status, created_at, updated_at)
SELECT ('01900000-0000-7000-8000-00000000003' || n)::uuid,
    ('01900000-0000-7000-8000-00000000000' || n)::uuid,
    ('01900000-0000-7000-8000-00000000002' || n)::uuid, 'CONT' || n, false, false, 'new',
    '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'
FROM (VALUES ('a'), ('b')) AS t (n);
";

/// A schema with [`SEED`], and `run` to execute SQL in it.
struct Seeded(TempSchema);

impl Seeded {
    async fn run(&self, sql: &str) -> Result<(), tokio_postgres::Error> {
        let schema = self.0.name();
        self.0
            .execute(&format!("SET search_path = {schema}; {sql}"))
            .await
    }
}

async fn seeded() -> Option<Seeded> {
    let seeded = Seeded(temp_schema().await?);
    seeded.run(SEED).await.expect("seed");
    Some(seeded)
}

/// A transport event of container `container` recorded as the shipment and account given.
fn transport_event(container: char, shipment: char, account: char) -> String {
    format!(
        "INSERT INTO transport_events (id, account_id, shipment_id, container_id, event,
            timestamp, source_id, created_at)
         VALUES (gen_random_uuid(), '01900000-0000-7000-8000-00000000000{account}',
            '01900000-0000-7000-8000-00000000002{shipment}',
            '01900000-0000-7000-8000-00000000003{container}', 'container.transport.vessel_departed',
            '2026-01-02T00:00:00Z', 'event-1', '2026-01-02T00:00:00Z')"
    )
}

/// A raw event of shipment `shipment` recorded as the account given.
fn raw_event(shipment: char, account: char) -> String {
    format!(
        "INSERT INTO raw_events (id, account_id, shipment_id, source_id, original_event,
            timestamp, estimated, created_at)
         VALUES (gen_random_uuid(), '01900000-0000-7000-8000-00000000000{account}',
            '01900000-0000-7000-8000-00000000002{shipment}', 'event-1', 'VD',
            '2026-01-02T00:00:00Z', false, '2026-01-02T00:00:00Z')"
    )
}

fn domain_event(account: &str) -> String {
    format!(
        "INSERT INTO domain_events (id, account_id, event, reference_type, reference_id,
            created_at)
         VALUES (gen_random_uuid(), '{account}', 'shipment.updated', 'shipment',
            gen_random_uuid(), '2026-01-02T00:00:00Z')"
    )
}

fn assert_refused(result: Result<(), tokio_postgres::Error>) {
    let error = result.expect_err("refused");
    assert_eq!(
        error.code(),
        Some(&SqlState::FOREIGN_KEY_VIOLATION),
        "{error}"
    );
}

#[tokio::test]
async fn an_event_of_its_own_container_shipment_and_account_is_stored() {
    let Some(schema) = seeded().await else { return };
    schema
        .run(&transport_event('a', 'a', 'a'))
        .await
        .expect("stored");
    schema.run(&raw_event('a', 'a')).await.expect("stored");
}

#[tokio::test]
async fn an_event_naming_another_shipment_than_its_containers_is_refused() {
    let Some(schema) = seeded().await else { return };
    assert_refused(schema.run(&transport_event('a', 'b', 'a')).await);
}

#[tokio::test]
async fn an_event_naming_another_account_than_its_containers_is_refused() {
    let Some(schema) = seeded().await else { return };
    assert_refused(schema.run(&transport_event('a', 'a', 'b')).await);
}

#[tokio::test]
async fn an_event_of_a_container_that_does_not_exist_is_refused() {
    let Some(schema) = seeded().await else { return };
    assert_refused(schema.run(&transport_event('c', 'a', 'a')).await);
}

#[tokio::test]
async fn a_raw_event_naming_another_account_than_its_shipments_is_refused() {
    let Some(schema) = seeded().await else { return };
    assert_refused(schema.run(&raw_event('a', 'b')).await);
}

#[tokio::test]
async fn a_raw_event_of_a_shipment_that_does_not_exist_is_refused() {
    let Some(schema) = seeded().await else { return };
    assert_refused(schema.run(&raw_event('c', 'a')).await);
}

#[tokio::test]
async fn a_domain_event_of_an_account_that_does_not_exist_is_refused() {
    let Some(schema) = seeded().await else { return };
    schema
        .run(&domain_event("01900000-0000-7000-8000-00000000000a"))
        .await
        .expect("stored");
    assert_refused(
        schema
            .run(&domain_event("01900000-0000-7000-8000-00000000000c"))
            .await,
    );
}

#[tokio::test]
async fn one_bad_row_refuses_the_whole_statement() {
    let Some(schema) = seeded().await else { return };
    let both = format!(
        "{}, (gen_random_uuid(), '01900000-0000-7000-8000-00000000000a',
            '01900000-0000-7000-8000-00000000002b', '01900000-0000-7000-8000-00000000003a',
            'container.transport.vessel_departed', '2026-01-02T00:00:00Z', 'event-2',
            '2026-01-02T00:00:00Z')",
        transport_event('a', 'a', 'a')
    );
    assert_refused(schema.run(&both).await);
    schema
        .run(
            "DO $$ BEGIN
                IF EXISTS (SELECT FROM transport_events) THEN RAISE 'a row was kept'; END IF;
             END $$",
        )
        .await
        .expect("nothing stored");
}
