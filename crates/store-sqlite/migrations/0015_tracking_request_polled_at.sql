-- When the carrier was last asked about a request without a shipment: paces re-checks
-- independently of user edits.
ALTER TABLE tracking_requests ADD COLUMN polled_at TEXT;
