-- The terminal where a carrier event happened, when the carrier names one Tidemark knows: an
-- id of the reference terminals (built into the binary), so no foreign key.
ALTER TABLE transport_events ADD COLUMN terminal_id TEXT;
ALTER TABLE raw_events ADD COLUMN terminal_id TEXT;
