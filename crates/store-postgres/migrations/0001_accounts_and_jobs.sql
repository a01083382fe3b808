-- Mirrors the SQLite schema with native types. Plain SQL only (no extensions), so it also
-- runs on PostgreSQL-compatible databases. Unique constraints are named after the
-- `Conflict { constraint }` names the store reports.
CREATE TABLE accounts (
    id          uuid PRIMARY KEY,
    name        text NOT NULL CONSTRAINT accounts_name UNIQUE,
    created_at  timestamptz NOT NULL
);

CREATE TABLE api_keys (
    id          uuid PRIMARY KEY,
    account_id  uuid NOT NULL REFERENCES accounts (id),
    prefix      text NOT NULL,
    hash        text NOT NULL CONSTRAINT api_keys_hash UNIQUE,
    scope       text NOT NULL CHECK (scope IN ('read_only', 'read_write')),
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at);

CREATE TABLE jobs (
    id            uuid PRIMARY KEY,
    kind          text NOT NULL,
    payload       jsonb NOT NULL,
    dedup_key     text,
    state         text NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed')),
    attempts      integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts  integer NOT NULL CHECK (max_attempts >= 0),
    run_at        timestamptz NOT NULL,
    locked_until  timestamptz,
    last_error    text,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
-- At most one pending job per de-duplication key.
CREATE UNIQUE INDEX jobs_pending_dedup_key ON jobs (dedup_key)
    WHERE dedup_key IS NOT NULL AND state IN ('queued', 'running');
CREATE INDEX jobs_due ON jobs (state, run_at);
