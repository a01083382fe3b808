CREATE TABLE shipments (
    id                               TEXT PRIMARY KEY,
    account_id                       TEXT NOT NULL REFERENCES accounts (id),
    tracking_request_id              TEXT NOT NULL REFERENCES tracking_requests (id),
    bill_of_lading_number            TEXT NOT NULL,
    normalized_number                TEXT NOT NULL,
    ref_numbers                      TEXT NOT NULL DEFAULT '[]',
    tags                             TEXT NOT NULL DEFAULT '[]',
    shipping_line_scac               TEXT NOT NULL,
    port_of_lading_locode            TEXT,
    port_of_discharge_locode         TEXT,
    destination_locode               TEXT,
    pod_vessel_name                  TEXT,
    pod_vessel_imo                   TEXT,
    pod_voyage_number                TEXT,
    pol_etd_at                       TEXT,
    pol_atd_at                       TEXT,
    pod_eta_at                       TEXT,
    pod_original_eta_at              TEXT,
    pod_ata_at                       TEXT,
    destination_eta_at               TEXT,
    destination_ata_at               TEXT,
    line_tracking_last_attempted_at  TEXT,
    line_tracking_last_succeeded_at  TEXT,
    line_tracking_stopped_at         TEXT,
    line_tracking_stopped_reason     TEXT,
    created_at                       TEXT NOT NULL,
    updated_at                       TEXT NOT NULL
);
CREATE INDEX shipments_by_account_newest ON shipments (account_id, created_at DESC, id DESC);
CREATE INDEX shipments_being_tracked ON shipments (id) WHERE line_tracking_stopped_at IS NULL;

CREATE TABLE containers (
    id                             TEXT PRIMARY KEY,
    account_id                     TEXT NOT NULL REFERENCES accounts (id),
    shipment_id                    TEXT NOT NULL REFERENCES shipments (id),
    number                         TEXT NOT NULL,
    seal_number                    TEXT,
    iso_equipment_code             TEXT,
    equipment_type                 TEXT,
    equipment_length               INTEGER,
    equipment_height               TEXT,
    weight_in_lbs                  INTEGER,
    pod_arrived_at                 TEXT,
    pod_discharged_at              TEXT,
    pod_full_out_at                TEXT,
    final_destination_full_out_at  TEXT,
    empty_terminated_at            TEXT,
    availability_known             INTEGER NOT NULL,
    available_for_pickup           INTEGER NOT NULL,
    current_status                 TEXT NOT NULL,
    created_at                     TEXT NOT NULL,
    updated_at                     TEXT NOT NULL,
    UNIQUE (shipment_id, number)
);
CREATE INDEX containers_by_account_updated ON containers (account_id, updated_at DESC, id DESC);
CREATE INDEX containers_by_number ON containers (account_id, number);

CREATE TABLE transport_events (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts (id),
    shipment_id      TEXT NOT NULL REFERENCES shipments (id),
    container_id     TEXT NOT NULL REFERENCES containers (id),
    event            TEXT NOT NULL,
    timestamp        TEXT NOT NULL,
    voyage_number    TEXT,
    location_locode  TEXT,
    vessel_name      TEXT,
    vessel_imo       TEXT,
    -- The carrier's event id: a re-sent event must not be recorded twice.
    source_id        TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    UNIQUE (container_id, source_id)
);
CREATE INDEX transport_events_by_shipment ON transport_events (shipment_id);
CREATE INDEX transport_events_by_container_time ON transport_events (container_id, timestamp);
