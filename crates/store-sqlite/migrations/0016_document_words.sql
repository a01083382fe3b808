-- File name search through a word index of our own instead of FTS5: one row per word of
-- each live document's file name and name (the words as tidemark_store::search_words
-- splits them, so searches and documents agree, and both backends alike), kept by the
-- statements that upload, rename and delete documents. Keyed by account and word, a word's
-- documents come in upload order, and only the account's live documents are in it, so
-- neither counting nor paging a search reads the documents table. The rows of existing
-- documents are written by the migration's code step (migrations.rs).
CREATE TABLE document_words (
    account_id  TEXT NOT NULL,
    word        TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    PRIMARY KEY (account_id, word, seq)
) WITHOUT ROWID;

-- Live documents per account and word (rows reaching 0 are deleted), so the total of a
-- one-word search is one row, and a prefix's words are found without reading documents.
CREATE TABLE document_word_counts (
    account_id  TEXT NOT NULL,
    word        TEXT NOT NULL,
    live        INTEGER NOT NULL,
    PRIMARY KEY (account_id, word)
) WITHOUT ROWID;

DROP TRIGGER documents_fts_insert;
DROP TRIGGER documents_fts_delete;
DROP TRIGGER documents_fts_update;
DROP TABLE documents_fts;

-- Live documents per account and type (the manual type when set, else the classified
-- one), kept by the statements that upload, classify, retype and delete documents, so a
-- type filter's total is a few rows instead of a count over the type's index entries.
CREATE TABLE document_type_counts (
    account_id     TEXT NOT NULL,
    document_type  TEXT NOT NULL,
    live           INTEGER NOT NULL,
    PRIMARY KEY (account_id, document_type)
) WITHOUT ROWID;
INSERT INTO document_type_counts (account_id, document_type, live)
SELECT account_id, coalesce(document_type_manual, document_type), count(*) FROM documents
WHERE deleted_at IS NULL AND coalesce(document_type_manual, document_type) IS NOT NULL
GROUP BY 1, 2;
