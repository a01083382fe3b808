-- Webhook subscriptions, the notifications made for them (in the same transaction as the
-- change they announce) and one log row per delivery attempt.
CREATE TABLE webhooks (
    id                          TEXT PRIMARY KEY,
    account_id                  TEXT NOT NULL REFERENCES accounts (id),
    url                         TEXT NOT NULL,
    active                      INTEGER NOT NULL,
    events                      TEXT NOT NULL,
    headers                     TEXT NOT NULL,
    secret                      TEXT NOT NULL,
    previous_secret             TEXT,
    previous_secret_expires_at  TEXT,
    created_at                  TEXT NOT NULL,
    updated_at                  TEXT NOT NULL
);
CREATE INDEX webhooks_by_account_newest ON webhooks (account_id, created_at DESC, id DESC);

CREATE TABLE webhook_notifications (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts (id),
    webhook_id       TEXT NOT NULL REFERENCES webhooks (id),
    domain_event_id  TEXT NOT NULL,
    event            TEXT NOT NULL,
    reference_type   TEXT NOT NULL,
    reference_id     TEXT NOT NULL,
    shipment_id      TEXT,
    container_id     TEXT,
    delivery_status  TEXT NOT NULL,
    attempts         INTEGER NOT NULL,
    next_attempt_at  TEXT,
    body             TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX webhook_notifications_by_account_newest
    ON webhook_notifications (account_id, created_at DESC, id DESC);
CREATE INDEX webhook_notifications_due
    ON webhook_notifications (next_attempt_at) WHERE delivery_status = 'pending';
CREATE INDEX webhook_notifications_by_webhook ON webhook_notifications (webhook_id);

CREATE TABLE webhook_notification_logs (
    id                TEXT PRIMARY KEY,
    notification_id   TEXT NOT NULL REFERENCES webhook_notifications (id),
    account_id        TEXT NOT NULL REFERENCES accounts (id),
    attempt           INTEGER NOT NULL,
    started_at        TEXT NOT NULL,
    duration_ms       INTEGER NOT NULL,
    response_status   INTEGER,
    response_headers  TEXT NOT NULL,
    response_body     TEXT,
    error             TEXT
);
CREATE INDEX webhook_notification_logs_by_notification
    ON webhook_notification_logs (notification_id, attempt);
