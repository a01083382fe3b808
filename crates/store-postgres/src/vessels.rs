//! Vessels, their AIS positions and what is learned from static AIS data.

use async_trait::async_trait;
use tidemark_store::VesselStore;

use crate::PgStore;

#[async_trait]
impl VesselStore for PgStore {}
