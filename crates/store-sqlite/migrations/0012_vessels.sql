-- Vessels, known by IMO (carrier data, AIS static reports), by MMSI (AIS), or both.
-- The latest fix lives on the row; track_at is when the last stored track point was
-- taken, which thins the track.
CREATE TABLE vessels (
    id                  TEXT PRIMARY KEY,
    imo                 TEXT UNIQUE,
    mmsi                TEXT UNIQUE,
    name                TEXT,
    latitude            REAL,
    longitude           REAL,
    speed_knots         REAL,
    course              REAL,
    heading             REAL,
    position_timestamp  TEXT,
    track_at            TEXT,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
);

-- The thinned AIS track. Keyed by vessel then time, so a vessel's track over a time
-- range is one index range scan.
CREATE TABLE vessel_positions (
    vessel_id    TEXT NOT NULL REFERENCES vessels (id) ON DELETE CASCADE,
    timestamp    TEXT NOT NULL,
    latitude     REAL NOT NULL,
    longitude    REAL NOT NULL,
    speed_knots  REAL,
    course       REAL,
    heading      REAL,
    PRIMARY KEY (vessel_id, timestamp)
) WITHOUT ROWID;

-- The retention purge deletes by age across vessels.
CREATE INDEX vessel_positions_by_time ON vessel_positions (timestamp);

-- Future positions pace a vessel by the carrier's latest ETA for it at a port (raw
-- events: carriers announce transshipment calls only there).
CREATE INDEX raw_events_by_vessel ON raw_events (vessel_imo, location_locode);
