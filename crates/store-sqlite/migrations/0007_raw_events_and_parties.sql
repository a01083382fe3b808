-- The carrier's events as reported, one row per carrier event of a shipment.
CREATE TABLE raw_events (
    id                TEXT PRIMARY KEY,
    account_id        TEXT NOT NULL REFERENCES accounts (id),
    shipment_id       TEXT NOT NULL REFERENCES shipments (id),
    -- NULL for vessel-level events, which concern every container of the shipment.
    container_number  TEXT,
    source_id         TEXT NOT NULL,
    original_event    TEXT NOT NULL,
    event             TEXT,
    timestamp         TEXT NOT NULL,
    estimated         INTEGER NOT NULL,
    location_locode   TEXT,
    location_name     TEXT,
    vessel_name       TEXT,
    vessel_imo        TEXT,
    voyage_number     TEXT,
    created_at        TEXT NOT NULL,
    UNIQUE (shipment_id, source_id)
);

-- Customers (Terminal49's parties) that shipments are tracked for.
CREATE TABLE parties (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    company_name  TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE UNIQUE INDEX parties_by_name ON parties (account_id, lower(company_name));
CREATE INDEX parties_by_account_newest ON parties (account_id, created_at DESC, id DESC);

ALTER TABLE tracking_requests ADD COLUMN customer_id TEXT REFERENCES parties (id);
ALTER TABLE shipments ADD COLUMN customer_id TEXT REFERENCES parties (id);
-- The API key that stopped tracking, when a user did.
ALTER TABLE shipments ADD COLUMN line_tracking_stopped_by TEXT;
CREATE INDEX shipments_by_customer ON shipments (account_id, customer_id) WHERE customer_id IS NOT NULL;
