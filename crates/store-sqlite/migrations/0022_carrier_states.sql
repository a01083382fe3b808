-- What the worker shares about each carrier: its rate budget (the calls of the last
-- minute, the day's count), a 429's Retry-After, the circuit breaker, refused credentials,
-- the last success and error, and drift counts. One row per SCAC, changed in one write
-- transaction. The state is the domain's CarrierState as JSON: only the code reads it.
CREATE TABLE carrier_states (
    scac TEXT PRIMARY KEY,
    state TEXT NOT NULL
);
