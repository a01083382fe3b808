//! The Tidemark service: configuration, CLI, the `/v2` HTTP API and the background workers.
//!
//! Layout (see ARCHITECTURE.md), with dependencies pointing one way:
//! - `api/`: the JSON:API HTTP layer, one module per URL segment; handlers parse, call one
//!   use case and serialize.
//! - `console/`: the web console, server-rendered HTML pages with their own session auth,
//!   calling the same use cases as `api/` (never `api/` itself).
//! - `jobs/`: the workers, which claim queued jobs and call the use cases.
//! - `use_cases/`: what Tidemark does, by capability; they never import `api/`, `console/`
//!   or `jobs/`.
//! - `resources/`: how records look as JSON:API resources, shared by the API's responses
//!   and the webhook payloads that `use_cases::webhooks` renders.
//! - `parts/`: what `App` holds besides the store, the clock and the ids (caches, limiters,
//!   connectors, clients), built from the settings and knowing nothing of `App`, the use
//!   cases or HTTP.
//! - `app.rs` (the composition root: `App`, the shared dependencies), `serve.rs` (a process: listeners and workers),
//!   `connections.rs` (the HTTP listener's accept loop and its bounds), `edge.rs` (the
//!   layers every route shares: ids, logs, metrics, timeouts, body limits), `cli.rs`,
//!   `config.rs` with `limits.rs` (the bounds' settings), `telemetry.rs`: the wiring.
//!   Nothing depends on this crate.

pub mod api;
pub mod app;
pub mod cli;
pub mod config;
pub mod connections;
pub mod console;
pub mod edge;
pub mod jobs;
pub mod limits;
pub mod parts;
pub mod resources;
pub mod serve;
pub mod telemetry;
pub mod use_cases;

pub use app::{App, AppState};
pub use config::Config;
