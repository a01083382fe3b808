-- Shipment documents: metadata here, bytes in object storage.
CREATE TABLE documents (
    id                      uuid PRIMARY KEY,
    account_id              uuid NOT NULL REFERENCES accounts (id),
    uploaded_by             uuid,
    source                  text NOT NULL,
    name                    text NOT NULL,
    file_name               text NOT NULL,
    content_type            text NOT NULL,
    size_bytes              bigint NOT NULL,
    sha256                  text NOT NULL,
    storage_key             text NOT NULL,
    document_type           text,
    document_type_manual    text,
    classification_notes    text,
    representation_id       uuid,
    representation_version  text,
    representation          jsonb,
    representation_at       timestamptz,
    created_at              timestamptz NOT NULL,
    updated_at              timestamptz NOT NULL,
    deleted_at              timestamptz,
    -- Upload order within the account (1, 2, ...), from document_counts.next_seq: the
    -- order of "newest first", and what document_buckets count.
    seq                     bigint NOT NULL,
    -- The type filters and sorting use: the manual one wins. Stored, so that counting a
    -- type reads the index alone.
    effective_type          text GENERATED ALWAYS AS (coalesce(document_type_manual, document_type)) STORED,
    -- Words of the file name and name: every run of letters and digits, as the query side
    -- splits them too.
    search                  tsvector GENERATED ALWAYS AS (
        to_tsvector('simple', regexp_replace(file_name || ' ' || name, '[^[:alnum:]]+', ' ', 'g'))
    ) STORED
);
-- The same content once per account, among live documents.
CREATE UNIQUE INDEX documents_content ON documents (account_id, sha256) WHERE deleted_at IS NULL;
-- Paging newest first reads ids from this index alone (a deferred join fetches the rows).
-- Sorts tie-break on seq (upload order), which is unique in an account.
CREATE INDEX documents_newest ON documents (account_id, seq) WHERE deleted_at IS NULL;
CREATE INDEX documents_by_type ON documents (account_id, effective_type, seq) WHERE deleted_at IS NULL;
CREATE INDEX documents_by_uploader ON documents (account_id, uploaded_by, seq) WHERE deleted_at IS NULL;
CREATE INDEX documents_search ON documents USING gin (search);

-- Live documents per account, kept by the statements that add and remove them, so the
-- unfiltered list needs no count over a million rows; and the last seq given out (its row
-- lock orders concurrent uploads of an account).
CREATE TABLE document_counts (
    account_id  uuid PRIMARY KEY REFERENCES accounts (id),
    live        bigint NOT NULL,
    next_seq    bigint NOT NULL
);

-- A counted index over upload order: live documents per block of seq values
-- (bucket = seq / DOCUMENT_BUCKET_SIZE), kept in the same transactions as uploads and
-- deletes. A far page of the unfiltered list sums these (a few hundred rows for a million
-- documents) to find its block, then skips less than one block of index entries.
CREATE TABLE document_buckets (
    account_id  uuid NOT NULL REFERENCES accounts (id),
    bucket      bigint NOT NULL,
    live        bigint NOT NULL,
    PRIMARY KEY (account_id, bucket)
);

CREATE TABLE document_shipments (
    document_id  uuid NOT NULL REFERENCES documents (id),
    shipment_id  uuid NOT NULL REFERENCES shipments (id),
    PRIMARY KEY (document_id, shipment_id)
);
CREATE INDEX document_shipments_by_shipment ON document_shipments (shipment_id);

CREATE TABLE document_containers (
    document_id   uuid NOT NULL REFERENCES documents (id),
    container_id  uuid NOT NULL REFERENCES containers (id),
    PRIMARY KEY (document_id, container_id)
);
CREATE INDEX document_containers_by_container ON document_containers (container_id);

-- Terminal49's direct uploads: a slot, then the bytes, then a document made of them.
CREATE TABLE direct_uploads (
    id                     uuid PRIMARY KEY,
    account_id             uuid NOT NULL REFERENCES accounts (id),
    created_by             uuid,
    file_name              text NOT NULL,
    declared_content_type  text NOT NULL,
    byte_size              bigint NOT NULL,
    checksum               text NOT NULL,
    storage_key            text NOT NULL,
    uploaded_at            timestamptz,
    document_id            uuid,
    created_at             timestamptz NOT NULL,
    expires_at             timestamptz NOT NULL
);
