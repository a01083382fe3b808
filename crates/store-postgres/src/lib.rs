//! PostgreSQL backend.
