//! Shipment documents: their metadata, links and search (the bytes live in object storage).

use async_trait::async_trait;

/// Shipment documents: their metadata, links and search (the bytes live in object storage).
#[async_trait]
pub trait DocumentStore: Send + Sync {}
