-- File name search through a word index of our own instead of a tsvector: one row per
-- word of each live document's file name and name (the words as
-- tidemark_store::search_words splits them, so searches and documents agree, and both
-- backends alike), kept by the statements that upload, rename and delete documents. Keyed
-- by account and word, a word's documents come in upload order, and only the account's
-- live documents are in it, so neither counting nor paging a search reads the documents
-- table. "C" collation: byte order, so the words starting with a prefix are one range.
-- The rows of existing documents are written by the migration's code step (migrations.rs).
CREATE TABLE document_words (
    account_id  uuid NOT NULL,
    word        text COLLATE "C" NOT NULL,
    seq         bigint NOT NULL,
    PRIMARY KEY (account_id, word, seq)
);

-- Live documents per account and word (rows reaching 0 are deleted), so the total of a
-- one-word search is one row, and a prefix's words are found without reading documents.
CREATE TABLE document_word_counts (
    account_id  uuid NOT NULL,
    word        text COLLATE "C" NOT NULL,
    live        bigint NOT NULL,
    PRIMARY KEY (account_id, word)
);

ALTER TABLE documents DROP COLUMN search;

-- Live documents per account and type (effective_type: the manual type when set, else
-- the classified one), kept by the statements that upload, classify, retype and delete
-- documents, so a type filter's total is a few rows instead of a count over the type's
-- index entries.
CREATE TABLE document_type_counts (
    account_id     uuid NOT NULL,
    document_type  text NOT NULL,
    live           bigint NOT NULL,
    PRIMARY KEY (account_id, document_type)
);
INSERT INTO document_type_counts (account_id, document_type, live)
SELECT account_id, effective_type, count(*) FROM documents
WHERE deleted_at IS NULL AND effective_type IS NOT NULL
GROUP BY 1, 2;
