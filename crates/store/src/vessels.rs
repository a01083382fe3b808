//! Vessels, their AIS positions and what is learned from static AIS data.

use async_trait::async_trait;

/// Vessels, their AIS positions and what is learned from static AIS data.
#[async_trait]
pub trait VesselStore: Send + Sync {}
