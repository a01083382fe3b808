//! Use cases of tracking: accepting tracking requests (and, next, following them with the
//! carriers). Shared by the API and the workers.

pub mod engine;
pub mod inference;
pub mod limits;
pub mod push;
pub mod report;
pub mod requests;
pub mod shipments;

use std::collections::HashMap;

use tidemark_domain::carriers::priority::NEAR_ARRIVAL;
use tidemark_domain::{AccountId, TrackingRequestId};
use tidemark_store::{PollSchedule, StoreError};

use crate::app::App;
use crate::use_cases::queue::{self, JobKind};

/// Queues a poll of a tracking request, unless one is already queued or running.
pub async fn queue_poll(
    app: &App,
    account: AccountId,
    request: TrackingRequestId,
) -> Result<(), StoreError> {
    queue::enqueue(
        app,
        JobKind::Track,
        serde_json::json!({"account_id": account, "tracking_request_id": request}),
        Some(format!("track:{request}")),
        app.clock.now(),
    )
    .await
    .map(|_| ())
}

/// Queues a poll of a tracked shipment now, whether or not it is due (`PATCH
/// /containers/{id}/refresh`).
pub async fn queue_refresh(
    app: &App,
    account: AccountId,
    request: TrackingRequestId,
) -> Result<(), StoreError> {
    queue::enqueue(
        app,
        JobKind::Track,
        serde_json::json!({"account_id": account, "tracking_request_id": request, "forced": true}),
        Some(format!("refresh:{request}")),
        app.clock.now(),
    )
    .await
    .map(|_| ())
}

pub use crate::parts::rate_limit::REFRESH_PER_MINUTE;

/// Why a shipment could not be refreshed.
#[derive(Debug, thiserror::Error)]
pub enum RefreshError {
    #[error("Tracking of this shipment is stopped; resume it first.")]
    TrackingStopped,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Polls a tracked shipment's carrier now instead of at the next scheduled poll (`PATCH
/// /containers/{id}/refresh`, the console's "Refresh"); a stopped shipment is refused.
pub async fn refresh_shipment(
    app: &App,
    account: AccountId,
    id: tidemark_domain::ShipmentId,
) -> Result<tidemark_domain::Shipment, RefreshError> {
    let shipment = app.store.shipment(account, id).await?;
    if !shipment.is_tracking() {
        return Err(RefreshError::TrackingStopped);
    }
    queue_refresh(app, account, shipment.tracking_request_id).await?;
    Ok(shipment)
}

/// Queues a poll for every request still waiting for its carrier and every tracked shipment
/// that is due, as many per carrier as its budget can take before the next tick: new
/// requests first, then the shipments most overdue for their own priority's interval (near
/// a milestone 30 minutes, at sea 6 hours by default), so urgent ones are polled often and
/// none starves. The rest stay due in the database and
/// are found again at the next tick, so nothing is lost while a budget is short and no
/// herd of jobs waits on it. Returns how many it queued.
pub async fn sweep(app: &App) -> Result<usize, StoreError> {
    const BATCH: u32 = 1_000;
    let now = app.clock.now();
    let span = chrono::Duration::from_std(app.config.scheduler_tick)
        .unwrap_or(chrono::Duration::minutes(1));
    let mut capacity = Capacity {
        app,
        span,
        left: limits::capacities(app, span).await?,
    };
    let mut queued = 0;
    for request in app.store.unresolved_tracking_requests(10 * BATCH).await? {
        if engine::due_at(app, &request, None).is_some_and(|due| due <= now)
            && capacity.take(&request.scac, 1) > 0
        {
            queue_poll(app, request.account_id, request.id).await?;
            queued += 1;
        }
    }
    let intervals = app.config.poll_intervals();
    let schedule = PollSchedule {
        now,
        arriving_by: now + NEAR_ARRIVAL,
        near_milestone_before: now - intervals.near_milestone,
        routine_before: now - intervals.routine,
        at_sea_before: now - intervals.at_sea,
    };
    let scacs: Vec<String> = app
        .carriers
        .scacs()
        .into_iter()
        .map(str::to_owned)
        .collect();
    for scac in scacs {
        let room = capacity.take(&scac, 10 * BATCH);
        if room == 0 {
            continue;
        }
        for shipment in app.store.shipments_due(&scac, &schedule, room).await? {
            queue_poll(app, shipment.account_id, shipment.tracking_request_id).await?;
            queued += 1;
        }
    }
    queued += crate::use_cases::webhooks::deliver::queue_due(app).await?;
    Ok(queued)
}

/// What each carrier can still take this tick.
struct Capacity<'a> {
    app: &'a App,
    span: chrono::Duration,
    /// `None`: unlimited.
    left: HashMap<String, Option<u32>>,
}

impl Capacity<'_> {
    /// Takes up to `wanted` polls of `scac`'s capacity; returns how many it got.
    fn take(&mut self, scac: &str, wanted: u32) -> u32 {
        let scac = scac.to_uppercase();
        let left = self
            .left
            .entry(scac.clone())
            .or_insert_with(|| limits::fresh_capacity(self.app, &scac, self.span));
        match left {
            None => wanted,
            Some(left) => {
                let got = wanted.min(*left);
                *left -= got;
                got
            }
        }
    }
}
