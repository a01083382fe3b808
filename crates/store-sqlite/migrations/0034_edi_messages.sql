-- EDI interchanges (X12 315/322, EDIFACT IFTSTA) as received, and their accepted
-- transactions with the numbers they name, so a request created later finds them.
CREATE TABLE edi_messages (
    id                    TEXT PRIMARY KEY,
    account_id            TEXT NOT NULL REFERENCES accounts (id),
    channel               TEXT NOT NULL,
    source_name           TEXT,
    syntax                TEXT,
    sender                TEXT,
    receiver              TEXT,
    control_number        TEXT,
    interchange_key       TEXT,
    status                TEXT NOT NULL,
    transactions          INTEGER NOT NULL DEFAULT 0,
    rejected_transactions INTEGER NOT NULL DEFAULT 0,
    statuses              INTEGER NOT NULL DEFAULT 0,
    events                INTEGER NOT NULL DEFAULT 0,
    drift                 INTEGER NOT NULL DEFAULT 0,
    unmatched             INTEGER NOT NULL DEFAULT 0,
    errors                TEXT NOT NULL DEFAULT '[]',
    duplicate_of          TEXT,
    create_shipments      INTEGER NOT NULL DEFAULT 0,
    size_bytes            INTEGER NOT NULL,
    raw                   BLOB NOT NULL,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL
);
CREATE INDEX edi_messages_newest ON edi_messages (account_id, created_at DESC, id DESC);
-- One finished interchange per sender and control number: a second is a duplicate.
CREATE UNIQUE INDEX edi_messages_interchange ON edi_messages (account_id, interchange_key)
    WHERE interchange_key IS NOT NULL;

CREATE TABLE edi_transactions (
    message_id     TEXT NOT NULL REFERENCES edi_messages (id),
    position       INTEGER NOT NULL,
    account_id     TEXT NOT NULL,
    set_id         TEXT NOT NULL,
    control_number TEXT NOT NULL,
    numbers        TEXT NOT NULL,
    scac           TEXT,
    events         TEXT NOT NULL,
    facts          TEXT NOT NULL,
    segments       TEXT NOT NULL,
    matched        INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL,
    PRIMARY KEY (message_id, position)
);

CREATE TABLE edi_references (
    account_id TEXT NOT NULL,
    number     TEXT NOT NULL,
    message_id TEXT NOT NULL,
    position   INTEGER NOT NULL,
    PRIMARY KEY (account_id, number, message_id, position)
);

-- Requests found by number across carriers (an EDI status names no SCAC we can trust).
CREATE INDEX tracking_requests_by_number ON tracking_requests (account_id, upper(request_number));
