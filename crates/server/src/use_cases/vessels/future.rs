//! Estimated future positions of a vessel to a port, along the sea route
//! (`tidemark_geo::future`), paced by the carrier's ETA for that port when a tracked
//! shipment has one, else by the vessel's recent speed, else by a service speed.

use chrono::{DateTime, Utc};
use tidemark_domain::AccountId;
use tidemark_geo::future::{FutureError, FutureOptions, FutureRequest, estimate_future_positions};
use tidemark_geo::reference::Port;
use tidemark_geo::searoute::SeaRouter;
use tidemark_store::{StoreError, Vessel};
use uuid::Uuid;

use crate::parts::core::Core;
use crate::use_cases::vessels::find_vessel;

/// Where the estimate starts: the vessel's last fix, or a position the caller gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Start {
    LastKnown,
    At { latitude: f64, longitude: f64 },
}

/// Why there is no estimate.
#[derive(Debug, thiserror::Error)]
pub enum FutureFailure {
    #[error("unknown vessel")]
    UnknownVessel,
    #[error("unknown port {0}")]
    UnknownPort(&'static str),
    #[error("the vessel has no known position")]
    NoPosition,
    #[error("{0}")]
    Estimate(FutureError),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for FutureFailure {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound => Self::UnknownVessel,
            other => Self::Store(other),
        }
    }
}

/// The vessel and its estimated positions to `port`.
pub async fn future_positions(
    core: &Core,
    service_speed_knots: f64,
    account: AccountId,
    id_or_imo: &str,
    port: Uuid,
    previous_port: Uuid,
    start: Start,
) -> Result<(Vessel, Vec<tidemark_geo::future::FuturePosition>), FutureFailure> {
    let vessel = find_vessel(core, id_or_imo).await?;
    let destination = core
        .reference
        .port_by_id(port)
        .ok_or(FutureFailure::UnknownPort("port_id"))?;
    let previous = core
        .reference
        .port_by_id(previous_port)
        .ok_or(FutureFailure::UnknownPort("previous_port_id"))?;
    let now = core.clock.now();
    let (from, at, speed) = match (start, vessel.latest) {
        (
            Start::At {
                latitude,
                longitude,
            },
            latest,
        ) => (
            (longitude, latitude),
            now,
            latest.and_then(|f| f.speed_knots),
        ),
        (Start::LastKnown, Some(fix)) => (
            (fix.longitude, fix.latitude),
            fix.timestamp.max(now),
            fix.speed_knots,
        ),
        (Start::LastKnown, None) => return Err(FutureFailure::NoPosition),
    };
    let eta = carrier_eta(core, account, &vessel, destination).await?;
    let request = FutureRequest {
        from,
        at,
        destination: (destination.longitude, destination.latitude),
        previous_port: Some((previous.longitude, previous.latitude)),
        eta,
        speed_knots: speed,
    };
    let options = FutureOptions {
        service_speed_knots,
        ..FutureOptions::default()
    };
    let path = estimate_future_positions(SeaRouter::embedded(), &request, &options)
        .map_err(FutureFailure::Estimate)?;
    Ok((vessel, path.positions))
}

/// The carrier's latest estimated arrival of this vessel at this port.
async fn carrier_eta(
    core: &Core,
    account: AccountId,
    vessel: &Vessel,
    port: &Port,
) -> Result<Option<DateTime<Utc>>, StoreError> {
    match vessel.imo.as_deref() {
        Some(imo) => core.store.carrier_eta(account, imo, &port.locode).await,
        None => Ok(None),
    }
}
