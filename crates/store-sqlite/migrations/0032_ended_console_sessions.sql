-- Console sessions ended by signing out. A session cookie is signed and carries its own
-- expiry, so a copy taken before sign-out would stay valid until then; a row here (the
-- hash of the cookie's signature) refuses it on every process. Rows past their session's
-- expiry are useless and are deleted as new ones arrive.
CREATE TABLE ended_console_sessions (
    token_hash  TEXT PRIMARY KEY,
    expires_at  TEXT NOT NULL
);
CREATE INDEX ended_console_sessions_by_expiry ON ended_console_sessions (expires_at);
