-- Shipments, their containers and the containers' transport events, mirroring SQLite's
-- 0003 with native types.
CREATE TABLE shipments (
    id                               uuid PRIMARY KEY,
    account_id                       uuid NOT NULL REFERENCES accounts (id),
    tracking_request_id              uuid NOT NULL REFERENCES tracking_requests (id),
    bill_of_lading_number            text NOT NULL,
    normalized_number                text NOT NULL,
    ref_numbers                      jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(ref_numbers) = 'array'),
    tags                             jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(tags) = 'array'),
    shipping_line_scac               text NOT NULL,
    port_of_lading_locode            text,
    port_of_discharge_locode         text,
    destination_locode               text,
    pod_vessel_name                  text,
    pod_vessel_imo                   text,
    pod_voyage_number                text,
    pol_etd_at                       timestamptz,
    pol_atd_at                       timestamptz,
    pod_eta_at                       timestamptz,
    pod_original_eta_at              timestamptz,
    pod_ata_at                       timestamptz,
    destination_eta_at               timestamptz,
    destination_ata_at               timestamptz,
    line_tracking_last_attempted_at  timestamptz,
    line_tracking_last_succeeded_at  timestamptz,
    line_tracking_stopped_at         timestamptz,
    line_tracking_stopped_reason     text,
    created_at                       timestamptz NOT NULL,
    updated_at                       timestamptz NOT NULL
);
CREATE INDEX shipments_by_account_newest ON shipments (account_id, created_at DESC, id DESC);
-- The poll scheduler walks the shipments still being tracked by id.
CREATE INDEX shipments_being_tracked ON shipments (id) WHERE line_tracking_stopped_at IS NULL;

CREATE TABLE containers (
    id                             uuid PRIMARY KEY,
    account_id                     uuid NOT NULL REFERENCES accounts (id),
    shipment_id                    uuid NOT NULL REFERENCES shipments (id),
    number                         text NOT NULL,
    seal_number                    text,
    iso_equipment_code             text,
    equipment_type                 text,
    equipment_length               integer CHECK (equipment_length >= 0),
    equipment_height               text,
    weight_in_lbs                  integer CHECK (weight_in_lbs >= 0),
    pod_arrived_at                 timestamptz,
    pod_discharged_at              timestamptz,
    pod_full_out_at                timestamptz,
    final_destination_full_out_at  timestamptz,
    empty_terminated_at            timestamptz,
    availability_known             boolean NOT NULL,
    available_for_pickup           boolean NOT NULL,
    current_status                 text NOT NULL,
    created_at                     timestamptz NOT NULL,
    updated_at                     timestamptz NOT NULL,
    UNIQUE (shipment_id, number)
);
CREATE INDEX containers_by_account_updated ON containers (account_id, updated_at DESC, id DESC);
CREATE INDEX containers_by_number ON containers (account_id, number);

CREATE TABLE transport_events (
    id               uuid PRIMARY KEY,
    account_id       uuid NOT NULL REFERENCES accounts (id),
    shipment_id      uuid NOT NULL REFERENCES shipments (id),
    container_id     uuid NOT NULL REFERENCES containers (id),
    event            text NOT NULL,
    timestamp        timestamptz NOT NULL,
    voyage_number    text,
    location_locode  text,
    vessel_name      text,
    vessel_imo       text,
    -- The carrier's event id: a re-sent event must not be recorded twice.
    source_id        text NOT NULL,
    created_at       timestamptz NOT NULL,
    UNIQUE (container_id, source_id)
);
CREATE INDEX transport_events_by_shipment ON transport_events (shipment_id);
CREATE INDEX transport_events_by_container_time ON transport_events (container_id, timestamp);
