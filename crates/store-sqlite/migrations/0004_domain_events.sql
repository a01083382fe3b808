-- The outbox: what changed, written in the same transaction as the change.
CREATE TABLE domain_events (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts (id),
    event           TEXT NOT NULL,
    reference_type  TEXT NOT NULL,
    reference_id    TEXT NOT NULL,
    shipment_id     TEXT,
    container_id    TEXT,
    created_at      TEXT NOT NULL
);
CREATE INDEX domain_events_by_account ON domain_events (account_id, id);
