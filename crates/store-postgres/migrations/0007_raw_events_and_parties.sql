-- The carrier's events as reported, one row per carrier event of a shipment.
CREATE TABLE raw_events (
    id                uuid PRIMARY KEY,
    account_id        uuid NOT NULL REFERENCES accounts (id),
    shipment_id       uuid NOT NULL REFERENCES shipments (id),
    -- NULL for vessel-level events, which concern every container of the shipment.
    container_number  text,
    source_id         text NOT NULL,
    original_event    text NOT NULL,
    event             text,
    timestamp         timestamptz NOT NULL,
    estimated         boolean NOT NULL,
    location_locode   text,
    location_name     text,
    vessel_name       text,
    vessel_imo        text,
    voyage_number     text,
    created_at        timestamptz NOT NULL,
    UNIQUE (shipment_id, source_id)
);

-- Customers (Terminal49's parties) that shipments are tracked for.
CREATE TABLE parties (
    id            uuid PRIMARY KEY,
    account_id    uuid NOT NULL REFERENCES accounts (id),
    company_name  text NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX parties_by_name ON parties (account_id, lower(company_name));
CREATE INDEX parties_by_account_newest ON parties (account_id, created_at DESC, id DESC);

ALTER TABLE tracking_requests ADD COLUMN customer_id uuid REFERENCES parties (id);
ALTER TABLE shipments ADD COLUMN customer_id uuid REFERENCES parties (id);
-- The API key that stopped tracking, when a user did.
ALTER TABLE shipments ADD COLUMN line_tracking_stopped_by uuid;
CREATE INDEX shipments_by_customer ON shipments (account_id, customer_id) WHERE customer_id IS NOT NULL;
