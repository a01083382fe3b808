-- Every index on transport events is one more insert per event a poll writes. A shipment's
-- events are read through its containers' keys and a container's through
-- UNIQUE (container_id, source_id), sorted by time after reading (they are few), so neither
-- of these is read any more.
DROP INDEX transport_events_by_shipment;
DROP INDEX transport_events_by_container_time;
