//! What [`App`](crate::app::App) is made of: the basics most use cases read ([`core`]), the
//! caches, limiters, connectors and clients one process shares between requests and
//! workers. Each is built from the settings in `app.rs` and knows nothing of `App`, the use
//! cases or HTTP, so the arrows stay one way: `api`/`console`/`jobs` → `app` → `use_cases`
//! → `parts`, and `api`/`console`/`jobs` → `use_cases` (handed the parts by `App`).
//!
//! - [`core`]: the store, clock, ids, reference data and public address most use cases read.
//! - [`auth_cache`]: accepted API keys, cached for `auth_cache_seconds`.
//! - [`rate_limit`]: the per-key and per-address request windows.
//! - [`carriers`]: the carrier connectors by SCAC, built from the profiles and settings.
//! - [`terminals`]: the terminal connectors by profile id.
//! - [`recent_pushes`]: carriers' push bodies accepted recently (replays are ignored).
//! - [`documents`]: the object storage, signed links and the child process that reads files.
//! - [`sandbox_ais`]: the sandbox fleet's AIS transmitter.

pub mod auth_cache;
pub mod carriers;
pub mod core;
pub mod documents;
pub mod rate_limit;
pub mod recent_pushes;
pub mod sandbox_ais;
pub mod terminals;
