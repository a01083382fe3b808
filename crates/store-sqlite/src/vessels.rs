//! Vessels, their AIS positions and what is learned from static AIS data.

use async_trait::async_trait;
use tidemark_store::VesselStore;

use crate::SqliteStore;

#[async_trait]
impl VesselStore for SqliteStore {}
