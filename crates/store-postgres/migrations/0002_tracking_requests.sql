-- Tracking requests and idempotency keys, mirroring SQLite's 0002 with native types.
CREATE TABLE tracking_requests (
    id                     uuid PRIMARY KEY,
    account_id             uuid NOT NULL REFERENCES accounts (id),
    request_type           text NOT NULL,
    request_number         text NOT NULL,
    scac                   text NOT NULL,
    ref_numbers            jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(ref_numbers) = 'array'),
    shipment_tags          jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(shipment_tags) = 'array'),
    status                 text NOT NULL,
    failed_reason          text,
    is_retrying            boolean NOT NULL DEFAULT false,
    retry_count            integer CHECK (retry_count >= 0),
    shipment_id            uuid,
    initial_custom_fields  jsonb,                -- as submitted
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);
-- Terminal49's duplicate rule: one pending or created request per number and SCAC.
CREATE UNIQUE INDEX tracking_requests_active_number
    ON tracking_requests (account_id, scac, request_number)
    WHERE status IN ('pending', 'created');
CREATE INDEX tracking_requests_by_account_newest
    ON tracking_requests (account_id, created_at DESC, id DESC);

CREATE TABLE idempotency_keys (
    account_id   uuid NOT NULL REFERENCES accounts (id),
    key          text NOT NULL,
    fingerprint  text NOT NULL,
    status       integer CHECK (status BETWEEN 0 AND 65535),  -- NULL while the first request is in progress
    body         bytea,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
