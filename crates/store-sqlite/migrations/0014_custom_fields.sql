-- Custom fields (user-defined attributes of shipments and containers).

-- The whole checked definition is kept as JSON (its wire form); the columns beside it are
-- what lists filter on and what must be unique.
CREATE TABLE custom_field_definitions (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts(id),
    api_slug      TEXT NOT NULL,
    display_name  TEXT NOT NULL,
    entity_type   TEXT NOT NULL,
    data_type     TEXT NOT NULL,
    definition    TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE UNIQUE INDEX custom_field_definitions_slug
    ON custom_field_definitions (account_id, api_slug);

CREATE TABLE custom_field_options (
    id             TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL,
    definition_id  TEXT NOT NULL REFERENCES custom_field_definitions(id) ON DELETE CASCADE,
    value          TEXT NOT NULL,
    label          TEXT NOT NULL,
    position       INTEGER,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE UNIQUE INDEX custom_field_options_value ON custom_field_options (definition_id, value);

CREATE TABLE custom_field_values (
    id             TEXT PRIMARY KEY,
    account_id     TEXT NOT NULL,
    definition_id  TEXT NOT NULL REFERENCES custom_field_definitions(id) ON DELETE CASCADE,
    entity_type    TEXT NOT NULL,
    entity_id      TEXT NOT NULL,
    value          TEXT NOT NULL,  -- canonical JSON
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE UNIQUE INDEX custom_field_values_entity ON custom_field_values (definition_id, entity_id);
CREATE INDEX custom_field_values_by_entity ON custom_field_values (account_id, entity_id);

-- One row per index key of a value (several for enum_multi): filter[custom_fields][slug]=x
-- is one range of this primary key, giving the matching entity ids.
CREATE TABLE custom_field_value_keys (
    account_id     TEXT NOT NULL,
    definition_id  TEXT NOT NULL,
    filter_key     TEXT NOT NULL,
    entity_id      TEXT NOT NULL,
    value_id       TEXT NOT NULL REFERENCES custom_field_values(id) ON DELETE CASCADE,
    PRIMARY KEY (account_id, definition_id, filter_key, entity_id)
) WITHOUT ROWID;
CREATE INDEX custom_field_value_keys_value ON custom_field_value_keys (value_id);
