-- GET /v2/search: one row per search term of each shipment, container and tracking request
-- (tidemark_store::SearchEntry makes them, so both backends agree), written in the
-- transactions that write those. Keyed by account and term in code point order (COLLATE
-- "C"), a prefix is one range of the primary key. kind: 0 shipment, 1 container,
-- 2 tracking request; at: the entity's creation, for recency. The rows of existing entities
-- are written by the migration's code step (migrations.rs).
CREATE TABLE search_terms (
    account_id  uuid NOT NULL,
    term        text COLLATE "C" NOT NULL,
    kind        smallint NOT NULL,
    entity_id   uuid NOT NULL,
    at          timestamptz NOT NULL,
    PRIMARY KEY (account_id, term, kind, entity_id)
);
-- An entity's rows, replaced when its numbers change.
CREATE INDEX search_terms_entity ON search_terms (account_id, kind, entity_id);
