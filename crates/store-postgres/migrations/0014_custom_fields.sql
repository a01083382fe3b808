-- Custom fields (user-defined attributes of shipments and containers).

-- The whole checked definition is kept as JSON (its wire form); the columns beside it are
-- what lists filter on and what must be unique.
CREATE TABLE custom_field_definitions (
    id            uuid PRIMARY KEY,
    account_id    uuid NOT NULL REFERENCES accounts(id),
    api_slug      text NOT NULL,
    display_name  text NOT NULL,
    entity_type   text NOT NULL,
    data_type     text NOT NULL,
    definition    jsonb NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX custom_field_definitions_slug
    ON custom_field_definitions (account_id, api_slug);

CREATE TABLE custom_field_options (
    id             uuid PRIMARY KEY,
    account_id     uuid NOT NULL,
    definition_id  uuid NOT NULL REFERENCES custom_field_definitions(id) ON DELETE CASCADE,
    value          text NOT NULL,
    label          text NOT NULL,
    position       integer,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);
CREATE UNIQUE INDEX custom_field_options_value ON custom_field_options (definition_id, value);

CREATE TABLE custom_field_values (
    id             uuid PRIMARY KEY,
    account_id     uuid NOT NULL,
    definition_id  uuid NOT NULL REFERENCES custom_field_definitions(id) ON DELETE CASCADE,
    entity_type    text NOT NULL,
    entity_id      uuid NOT NULL,
    value          jsonb NOT NULL,  -- canonical JSON
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);
CREATE UNIQUE INDEX custom_field_values_entity ON custom_field_values (definition_id, entity_id);
CREATE INDEX custom_field_values_by_entity ON custom_field_values (account_id, entity_id);

-- One row per index key of a value (several for enum_multi): filter[custom_fields][slug]=x
-- is one range of this primary key, giving the matching entity ids.
CREATE TABLE custom_field_value_keys (
    account_id     uuid NOT NULL,
    definition_id  uuid NOT NULL,
    filter_key     text NOT NULL,
    entity_id      uuid NOT NULL,
    value_id       uuid NOT NULL REFERENCES custom_field_values(id) ON DELETE CASCADE,
    PRIMARY KEY (account_id, definition_id, filter_key, entity_id)
);
CREATE INDEX custom_field_value_keys_value ON custom_field_value_keys (value_id);
