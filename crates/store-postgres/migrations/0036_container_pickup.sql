-- What terminals and EDI report on a container's pick-up (last free day, holds, fees,
-- appointment, yard place), as one JSON object: read and written whole with the container.
ALTER TABLE containers ADD COLUMN pickup jsonb NOT NULL DEFAULT '{}';
-- The rail leg inland (pod_rail_*, ind_*), derived from the rail milestones.
ALTER TABLE containers ADD COLUMN inland jsonb NOT NULL DEFAULT '{}';
