-- The terminal at the port of discharge, when the carrier names one Tidemark knows: an id of
-- the reference terminals (built into the binary), so no foreign key.
ALTER TABLE shipments ADD COLUMN pod_terminal_id TEXT;
