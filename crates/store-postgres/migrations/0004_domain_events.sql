-- The outbox: what changed, written in the same transaction as the change.
CREATE TABLE domain_events (
    id              uuid PRIMARY KEY,
    account_id      uuid NOT NULL REFERENCES accounts (id),
    event           text NOT NULL,
    reference_type  text NOT NULL,
    reference_id    uuid NOT NULL,
    shipment_id     uuid,
    container_id    uuid,
    created_at      timestamptz NOT NULL
);
CREATE INDEX domain_events_by_account ON domain_events (account_id, id);
