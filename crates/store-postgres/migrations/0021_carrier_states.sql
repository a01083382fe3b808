-- What every worker process shares about each carrier: its rate budget (the calls of the
-- last minute, the day's count), a 429's Retry-After, the circuit breaker, refused
-- credentials, the last success and error, and drift counts. One row per SCAC, held
-- (SELECT ... FOR UPDATE) while a process changes it, so N workers spend one budget.
-- The state is the domain's CarrierState as JSON: only the code reads it.
CREATE TABLE carrier_states (
    scac TEXT PRIMARY KEY,
    state JSONB NOT NULL
);

-- The scheduler reads each carrier's due shipments, most urgent and longest waiting first.
CREATE INDEX shipments_due_by_carrier
    ON shipments (shipping_line_scac, (coalesce(line_tracking_last_attempted_at, created_at)))
    WHERE line_tracking_stopped_at IS NULL;
