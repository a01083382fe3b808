-- Raw events are looked up by vessel and port only for a carrier's estimate of a vessel's
-- call (estimated events with a vessel); indexing every raw event cost each of them an index
-- insert for lookups that never read it.
DROP INDEX raw_events_by_vessel;
CREATE INDEX raw_events_by_vessel ON raw_events (vessel_imo, location_locode)
    WHERE estimated AND vessel_imo IS NOT NULL;
