-- A pick-up notice (`container.pickup_lfd.changed` and the like) carries the new last free
-- day or appointment; moves leave it empty.
ALTER TABLE transport_events ADD COLUMN value TEXT;
