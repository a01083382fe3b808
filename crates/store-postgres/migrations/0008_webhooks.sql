-- Webhook subscriptions, the notifications made for them (in the same transaction as the
-- change they announce) and one log row per delivery attempt.
CREATE TABLE webhooks (
    id                          uuid PRIMARY KEY,
    account_id                  uuid NOT NULL REFERENCES accounts (id),
    url                         text NOT NULL,
    active                      boolean NOT NULL,
    events                      jsonb NOT NULL CHECK (jsonb_typeof(events) = 'array'),
    headers                     jsonb NOT NULL CHECK (jsonb_typeof(headers) = 'array'),
    secret                      text NOT NULL,
    previous_secret             text,
    previous_secret_expires_at  timestamptz,
    created_at                  timestamptz NOT NULL,
    updated_at                  timestamptz NOT NULL
);
CREATE INDEX webhooks_by_account_newest ON webhooks (account_id, created_at DESC, id DESC);

CREATE TABLE webhook_notifications (
    id               uuid PRIMARY KEY,
    account_id       uuid NOT NULL REFERENCES accounts (id),
    webhook_id       uuid NOT NULL REFERENCES webhooks (id),
    domain_event_id  uuid NOT NULL,
    event            text NOT NULL,
    reference_type   text NOT NULL,
    reference_id     uuid NOT NULL,
    shipment_id      uuid,
    container_id     uuid,
    delivery_status  text NOT NULL,
    attempts         integer NOT NULL,
    next_attempt_at  timestamptz,
    body             text,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);
CREATE INDEX webhook_notifications_by_account_newest
    ON webhook_notifications (account_id, created_at DESC, id DESC);
CREATE INDEX webhook_notifications_due
    ON webhook_notifications (next_attempt_at) WHERE delivery_status = 'pending';
CREATE INDEX webhook_notifications_by_webhook ON webhook_notifications (webhook_id);

CREATE TABLE webhook_notification_logs (
    id                uuid PRIMARY KEY,
    notification_id   uuid NOT NULL REFERENCES webhook_notifications (id),
    account_id        uuid NOT NULL REFERENCES accounts (id),
    attempt           integer NOT NULL,
    started_at        timestamptz NOT NULL,
    duration_ms       bigint NOT NULL,
    response_status   integer,
    response_headers  jsonb NOT NULL,
    response_body     text,
    error             text
);
CREATE INDEX webhook_notification_logs_by_notification
    ON webhook_notification_logs (notification_id, attempt);
