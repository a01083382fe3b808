-- Users' reference numbers of a container (PATCH /v2/containers/{id}), a JSON array of
-- strings as on shipments; polls never write them.
ALTER TABLE containers ADD COLUMN ref_numbers TEXT NOT NULL DEFAULT '[]';
