-- An email submission taken from a polled IMAP mailbox names its message there (an IMAP URL
-- with the mailbox's UIDVALIDITY and the message's UID), once: a message filed before a
-- crash and taken again after it is not filed twice.
ALTER TABLE email_submissions ADD COLUMN source_key TEXT;
CREATE UNIQUE INDEX email_submissions_source_key ON email_submissions (source_key)
    WHERE source_key IS NOT NULL;

-- How far each polled mailbox has been read: its UIDVALIDITY and the highest UID taken.
CREATE TABLE mailbox_cursors (
    mailbox       TEXT PRIMARY KEY,
    uid_validity  INTEGER NOT NULL,
    last_uid      INTEGER NOT NULL,
    updated_at    TEXT NOT NULL
);
