//! The Tidemark service: configuration, CLI, the `/v2` HTTP API and the background workers.
//!
//! Layout (see ARCHITECTURE.md): `api/` has one module per URL segment whose handlers parse,
//! call one use case and serialize; use cases shared by the API and the workers live in
//! modules named by capability (`accounts`, `jobs`). Nothing depends on this crate.

pub mod accounts;
pub mod api;
pub mod app;
pub mod cli;
pub mod config;
pub mod custom_fields;
pub mod documents;
pub mod jobs;
pub mod parties;
pub mod telemetry;
pub mod tracking;
pub mod vessels;
pub mod webhooks;

pub use app::{App, AppState};
pub use config::Config;
