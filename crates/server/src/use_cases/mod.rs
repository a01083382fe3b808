//! The use cases: what Tidemark does, whoever asks. The JSON:API (`api/`), the console
//! (`console/`), the CLI and the workers (`jobs/`) call in here; nothing in here imports them.

pub mod accounts;
pub mod custom_fields;
pub mod documents;
pub mod edi;
pub mod email;
pub mod parties;
pub mod queue;
pub mod search;
pub mod terminals;
pub mod tracking;
pub mod vessels;
pub mod webhooks;
