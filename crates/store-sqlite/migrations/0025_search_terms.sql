-- GET /v2/search: one row per search term of each shipment, container and tracking request
-- (tidemark_store::SearchEntry makes them, so both backends agree), written in the
-- transactions that write those. Keyed by account and term, a prefix is one range of the
-- primary key. kind: 0 shipment, 1 container, 2 tracking request; at: the entity's
-- creation, for recency. The rows of existing entities are written by the migration's code
-- step (migrations.rs).
CREATE TABLE search_terms (
    account_id  TEXT NOT NULL,
    term        TEXT NOT NULL,
    kind        INTEGER NOT NULL,
    entity_id   TEXT NOT NULL,
    at          TEXT NOT NULL,
    PRIMARY KEY (account_id, term, kind, entity_id)
) WITHOUT ROWID;
-- An entity's rows, replaced when its numbers change.
CREATE INDEX search_terms_entity ON search_terms (account_id, kind, entity_id);
