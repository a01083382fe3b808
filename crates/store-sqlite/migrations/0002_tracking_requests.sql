CREATE TABLE tracking_requests (
    id                     TEXT PRIMARY KEY,
    account_id             TEXT NOT NULL REFERENCES accounts (id),
    request_type           TEXT NOT NULL,
    request_number         TEXT NOT NULL,
    scac                   TEXT NOT NULL,
    ref_numbers            TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
    shipment_tags          TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
    status                 TEXT NOT NULL,
    failed_reason          TEXT,
    is_retrying            INTEGER NOT NULL DEFAULT 0,
    retry_count            INTEGER,
    shipment_id            TEXT,
    initial_custom_fields  TEXT,                         -- JSON, as submitted
    created_at             TEXT NOT NULL,
    updated_at             TEXT NOT NULL
);
-- Terminal49's duplicate rule: one pending or created request per number and SCAC.
CREATE UNIQUE INDEX tracking_requests_active_number
    ON tracking_requests (account_id, scac, request_number)
    WHERE status IN ('pending', 'created');
CREATE INDEX tracking_requests_by_account_newest
    ON tracking_requests (account_id, created_at DESC, id DESC);

CREATE TABLE idempotency_keys (
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,
    status       INTEGER,          -- NULL while the first request is in progress
    body         BLOB,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
