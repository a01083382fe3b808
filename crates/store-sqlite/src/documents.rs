//! Shipment documents: their metadata, links and search (the bytes live in object storage).

use async_trait::async_trait;
use tidemark_store::DocumentStore;

use crate::SqliteStore;

#[async_trait]
impl DocumentStore for SqliteStore {}
