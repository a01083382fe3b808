//! What nearly every use case reads: the store, the clock, the id generator, the embedded
//! reference data and the service's public address. [`App`](crate::app::App) holds one;
//! a use case that needs nothing else takes `&Core`, one that needs more takes the other
//! parts (or a context of its own) beside it.

use std::sync::Arc;

use tidemark_domain::{Clock, IdGenerator};
use tidemark_geo::reference::ReferenceData;
use tidemark_store::Store;

/// The shared basics of one process. Cloning is cheap (a few `Arc`s), so a background task
/// keeps its own copy.
#[derive(Clone)]
pub struct Core {
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
    /// Ports, terminals, shipping lines and time zones (the embedded data set).
    pub reference: &'static ReferenceData,
    /// The service's public address (`public_url`): the base of the links in responses and
    /// webhook payloads.
    pub public_url: String,
}
