//! Carrier connectors (DCSA Track & Trace) and the sandbox carrier. Depends on `domain` only.
