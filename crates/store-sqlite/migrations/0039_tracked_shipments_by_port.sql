-- The terminals' selection of containers awaiting pick-up starts from the tracked shipments
-- bound for the terminal's ports, not from every container not yet out.
CREATE INDEX shipments_tracked_by_port_of_discharge ON shipments (port_of_discharge_locode)
    WHERE line_tracking_stopped_at IS NULL;
