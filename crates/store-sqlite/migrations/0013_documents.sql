-- Shipment documents: metadata here, bytes in object storage.
CREATE TABLE documents (
    id                      TEXT PRIMARY KEY,
    account_id              TEXT NOT NULL REFERENCES accounts (id),
    uploaded_by             TEXT,
    source                  TEXT NOT NULL,
    name                    TEXT NOT NULL,
    file_name               TEXT NOT NULL,
    content_type            TEXT NOT NULL,
    size_bytes              INTEGER NOT NULL,
    sha256                  TEXT NOT NULL,
    storage_key             TEXT NOT NULL,
    document_type           TEXT,
    document_type_manual    TEXT,
    classification_notes    TEXT,
    representation_id       TEXT,
    representation_version  TEXT,
    representation          TEXT,
    representation_at       TEXT,
    created_at              TEXT NOT NULL,
    updated_at              TEXT NOT NULL,
    deleted_at              TEXT,
    -- Upload order within the account (1, 2, ...), from document_counts.next_seq: the
    -- order of "newest first", and what document_buckets count.
    seq                     INTEGER NOT NULL
);
-- The same content once per account, among live documents.
CREATE UNIQUE INDEX documents_content ON documents (account_id, sha256) WHERE deleted_at IS NULL;
-- Paging newest first reads ids from this index alone (a deferred join fetches the rows).
-- Sorts tie-break on seq (upload order), which is unique in an account.
CREATE INDEX documents_newest ON documents (account_id, seq) WHERE deleted_at IS NULL;
CREATE INDEX documents_by_type ON documents (account_id, coalesce(document_type_manual, document_type), seq) WHERE deleted_at IS NULL;
CREATE INDEX documents_by_uploader ON documents (account_id, uploaded_by, seq) WHERE deleted_at IS NULL;

-- Live documents per account, kept by the statements that add and remove them, so the
-- unfiltered list needs no count over a million rows; and the last seq given out (its row
-- lock orders concurrent uploads of an account).
CREATE TABLE document_counts (
    account_id  TEXT PRIMARY KEY REFERENCES accounts (id),
    live        INTEGER NOT NULL,
    next_seq    INTEGER NOT NULL
);

-- A counted index over upload order: live documents per block of seq values
-- (bucket = seq / DOCUMENT_BUCKET_SIZE), kept in the same transactions as uploads and
-- deletes. A far page of the unfiltered list sums these (a few hundred rows for a million
-- documents) to find its block, then skips less than one block of index entries.
CREATE TABLE document_buckets (
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    bucket      INTEGER NOT NULL,
    live        INTEGER NOT NULL,
    PRIMARY KEY (account_id, bucket)
);

CREATE TABLE document_shipments (
    document_id  TEXT NOT NULL REFERENCES documents (id),
    shipment_id  TEXT NOT NULL REFERENCES shipments (id),
    PRIMARY KEY (document_id, shipment_id)
);
CREATE INDEX document_shipments_by_shipment ON document_shipments (shipment_id);

CREATE TABLE document_containers (
    document_id   TEXT NOT NULL REFERENCES documents (id),
    container_id  TEXT NOT NULL REFERENCES containers (id),
    PRIMARY KEY (document_id, container_id)
);
CREATE INDEX document_containers_by_container ON document_containers (container_id);

-- File names and names, full text; rowids are the documents' (external content).
CREATE VIRTUAL TABLE documents_fts USING fts5 (
    file_name, name, content = 'documents', content_rowid = 'rowid'
);
CREATE TRIGGER documents_fts_insert AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts (rowid, file_name, name) VALUES (new.rowid, new.file_name, new.name);
END;
CREATE TRIGGER documents_fts_delete AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, file_name, name)
    VALUES ('delete', old.rowid, old.file_name, old.name);
END;
CREATE TRIGGER documents_fts_update AFTER UPDATE OF file_name, name ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, file_name, name)
    VALUES ('delete', old.rowid, old.file_name, old.name);
    INSERT INTO documents_fts (rowid, file_name, name) VALUES (new.rowid, new.file_name, new.name);
END;

-- Terminal49's direct uploads: a slot, then the bytes, then a document made of them.
CREATE TABLE direct_uploads (
    id                     TEXT PRIMARY KEY,
    account_id             TEXT NOT NULL REFERENCES accounts (id),
    created_by             TEXT,
    file_name              TEXT NOT NULL,
    declared_content_type  TEXT NOT NULL,
    byte_size              INTEGER NOT NULL,
    checksum               TEXT NOT NULL,
    storage_key            TEXT NOT NULL,
    uploaded_at            TEXT,
    document_id            TEXT,
    created_at             TEXT NOT NULL,
    expires_at             TEXT NOT NULL
);
