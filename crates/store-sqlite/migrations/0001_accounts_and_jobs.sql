-- Timestamps are UTC text in one fixed format (YYYY-MM-DDTHH:MM:SS.ffffffZ) so that text
-- comparison orders them; ids are hyphenated UUID text.
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);

CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    prefix      TEXT NOT NULL,
    hash        TEXT NOT NULL UNIQUE,
    scope       TEXT NOT NULL CHECK (scope IN ('read_only', 'read_write')),
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at);

CREATE TABLE jobs (
    id            TEXT PRIMARY KEY,
    kind          TEXT NOT NULL,
    payload       TEXT NOT NULL,
    dedup_key     TEXT,
    state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    max_attempts  INTEGER NOT NULL,
    run_at        TEXT NOT NULL,
    locked_until  TEXT,
    last_error    TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
-- At most one pending job per de-duplication key.
CREATE UNIQUE INDEX jobs_pending_dedup_key ON jobs (dedup_key)
    WHERE dedup_key IS NOT NULL AND state IN ('queued', 'running');
CREATE INDEX jobs_due ON jobs (state, run_at);
