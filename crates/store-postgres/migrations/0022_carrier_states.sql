-- What every worker process shares about each carrier: its rate budget (the calls of the
-- last minute, the day's count), a 429's Retry-After, the circuit breaker, refused
-- credentials, the last success and error, and drift counts. One row per SCAC, held
-- (SELECT ... FOR UPDATE) while a process changes it, so N workers spend one budget.
-- The state is the domain's CarrierState as JSON: only the code reads it.
CREATE TABLE carrier_states (
    scac TEXT PRIMARY KEY,
    state JSONB NOT NULL
);
