-- Emails received with documents attached (GET /v2/email_submissions); the documents made of
-- their attachments name them.
CREATE TABLE email_submissions (
    id              TEXT PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts (id),
    subject         TEXT NOT NULL,
    body            TEXT,
    from_addresses  TEXT NOT NULL,
    to_addresses    TEXT NOT NULL,
    cc_addresses    TEXT NOT NULL,
    sent_at         TEXT,
    message_id      TEXT,
    in_reply_to     TEXT,
    references_ids  TEXT NOT NULL,
    content_type    TEXT,
    status          TEXT NOT NULL,
    status_reason   TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX email_submissions_newest ON email_submissions (account_id, created_at DESC, id DESC);

ALTER TABLE documents ADD COLUMN email_submission_id TEXT;
CREATE INDEX documents_email_submission ON documents (email_submission_id)
    WHERE email_submission_id IS NOT NULL;
