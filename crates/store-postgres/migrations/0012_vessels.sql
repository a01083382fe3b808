-- Vessels, known by IMO (carrier data, AIS static reports), by MMSI (AIS), or both.
-- The latest fix lives on the row; track_at is when the last stored track point was
-- taken, which thins the track.
CREATE TABLE vessels (
    id                  uuid PRIMARY KEY,
    imo                 text UNIQUE,
    mmsi                text UNIQUE,
    name                text,
    latitude            double precision,
    longitude           double precision,
    speed_knots         double precision,
    course              double precision,
    heading             double precision,
    position_timestamp  timestamptz,
    track_at            timestamptz,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);

-- The thinned AIS track. Keyed by vessel then time, so a vessel's track over a time
-- range is one index range scan.
CREATE TABLE vessel_positions (
    vessel_id    uuid NOT NULL REFERENCES vessels (id) ON DELETE CASCADE,
    timestamp    timestamptz NOT NULL,
    latitude     double precision NOT NULL,
    longitude    double precision NOT NULL,
    speed_knots  double precision,
    course       double precision,
    heading      double precision,
    PRIMARY KEY (vessel_id, timestamp)
);

-- The retention purge deletes by age across vessels.
CREATE INDEX vessel_positions_by_time ON vessel_positions (timestamp);

-- Future positions pace a vessel by the carrier's latest ETA for it at a port (raw
-- events: carriers announce transshipment calls only there).
CREATE INDEX raw_events_by_vessel ON raw_events (vessel_imo, location_locode);
