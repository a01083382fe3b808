-- Emails received with documents attached (GET /v2/email_submissions); the documents made of
-- their attachments name them.
CREATE TABLE email_submissions (
    id              uuid PRIMARY KEY,
    account_id      uuid NOT NULL REFERENCES accounts (id),
    subject         TEXT NOT NULL,
    body            TEXT,
    from_addresses  jsonb NOT NULL,
    to_addresses    jsonb NOT NULL,
    cc_addresses    jsonb NOT NULL,
    sent_at         timestamptz,
    message_id      TEXT,
    in_reply_to     TEXT,
    references_ids  jsonb NOT NULL,
    content_type    TEXT,
    status          TEXT NOT NULL,
    status_reason   TEXT,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX email_submissions_newest ON email_submissions (account_id, created_at DESC, id DESC);

ALTER TABLE documents ADD COLUMN email_submission_id uuid;
CREATE INDEX documents_email_submission ON documents (email_submission_id)
    WHERE email_submission_id IS NOT NULL;
