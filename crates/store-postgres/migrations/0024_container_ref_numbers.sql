-- Users' reference numbers of a container (PATCH /v2/containers/{id}), a JSON array of
-- strings as on shipments; polls never write them.
ALTER TABLE containers ADD COLUMN ref_numbers jsonb NOT NULL DEFAULT '[]'
    CHECK (jsonb_typeof(ref_numbers) = 'array');
