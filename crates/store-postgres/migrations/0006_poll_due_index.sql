-- The scheduler asks for the shipments that have waited longest for a poll: indexed on that
-- time, so a tick reads only the due ones however many are tracked.
CREATE INDEX shipments_poll_due
    ON shipments ((coalesce(line_tracking_last_attempted_at, created_at)), id)
    WHERE line_tracking_stopped_at IS NULL;
