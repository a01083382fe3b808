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

use tidemark_domain::carriers::PollIntervals;
use tidemark_domain::carriers::priority::NEAR_ARRIVAL;
use tidemark_domain::{AccountId, TrackingRequestId};
use tidemark_store::{PollSchedule, StoreError};

use crate::config::AisConfig;
use crate::parts::carriers::Carriers;
use crate::parts::core::Core;
use crate::parts::sandbox_ais::SandboxAis;
use crate::use_cases::queue::{self, JobKind};

/// Queues a poll of a tracking request, unless one is already queued or running.
pub async fn queue_poll(
    core: &Core,
    account: AccountId,
    request: TrackingRequestId,
) -> Result<(), StoreError> {
    queue::enqueue(
        core,
        JobKind::Track,
        serde_json::json!({"account_id": account, "tracking_request_id": request}),
        Some(format!("track:{request}")),
        core.clock.now(),
    )
    .await
    .map(|_| ())
}

/// Queues a poll of a tracked shipment now, whether or not it is due (`PATCH
/// /containers/{id}/refresh`).
pub async fn queue_refresh(
    core: &Core,
    account: AccountId,
    request: TrackingRequestId,
) -> Result<(), StoreError> {
    queue::enqueue(
        core,
        JobKind::Track,
        serde_json::json!({"account_id": account, "tracking_request_id": request, "forced": true}),
        Some(format!("refresh:{request}")),
        core.clock.now(),
    )
    .await
    .map(|_| ())
}

pub use crate::parts::rate_limit::REFRESH_PER_MINUTE;

/// What tracking needs beside the [`Core`]: the carrier connectors, how often a shipment is
/// polled, and the sandbox fleet's transmitter (`None` when off) with the AIS settings it
/// reports through (a sandbox voyage's vessel reports as soon as its request is `created`).
/// `App::engine` builds one.
#[derive(Clone, Copy)]
pub struct Engine<'a> {
    pub core: &'a Core,
    pub carriers: &'a Carriers,
    pub intervals: PollIntervals,
    pub sandbox_ais: Option<&'a SandboxAis>,
    pub ais: &'a AisConfig,
}

/// `engine.store`, `engine.clock`, … read the core's, and `engine` is accepted where a use
/// case asks for `&Core`, as with `App`: most of what tracking does is with the core.
impl std::ops::Deref for Engine<'_> {
    type Target = Core;

    fn deref(&self) -> &Core {
        self.core
    }
}

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
    core: &Core,
    account: AccountId,
    id: tidemark_domain::ShipmentId,
) -> Result<tidemark_domain::Shipment, RefreshError> {
    let shipment = core.store.shipment(account, id).await?;
    if !shipment.is_tracking() {
        return Err(RefreshError::TrackingStopped);
    }
    queue_refresh(core, account, shipment.tracking_request_id).await?;
    Ok(shipment)
}

/// Queues a poll for every request still waiting for its carrier and every tracked shipment
/// that is due, as many per carrier as its budget can take before the next tick: new
/// requests first, then the shipments most overdue for their own priority's interval (near
/// a milestone 30 minutes, at sea 6 hours by default), so urgent ones are polled often and
/// none starves. The rest stay due in the database and
/// are found again at the next tick, so nothing is lost while a budget is short and no
/// herd of jobs waits on it; a budget is spent over `scheduler_tick`, the time to the next
/// tick. Returns how many it queued.
pub async fn sweep(
    engine: &Engine<'_>,
    scheduler_tick: std::time::Duration,
) -> Result<usize, StoreError> {
    const BATCH: u32 = 1_000;
    let now = engine.clock.now();
    let span = chrono::Duration::from_std(scheduler_tick).unwrap_or(chrono::Duration::minutes(1));
    let mut capacity = Capacity {
        engine,
        span,
        left: limits::capacities(engine, span).await?,
    };
    let mut queued = 0;
    for request in engine
        .store
        .unresolved_tracking_requests(10 * BATCH)
        .await?
    {
        if engine::due_at(engine, &request, None).is_some_and(|due| due <= now)
            && capacity.take(&request.scac, 1) > 0
        {
            queue_poll(engine, request.account_id, request.id).await?;
            queued += 1;
        }
    }
    let intervals = engine.intervals;
    let schedule = PollSchedule {
        now,
        arriving_by: now + NEAR_ARRIVAL,
        near_milestone_before: now - intervals.near_milestone,
        routine_before: now - intervals.routine,
        at_sea_before: now - intervals.at_sea,
    };
    let scacs: Vec<String> = engine
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
        for shipment in engine.store.shipments_due(&scac, &schedule, room).await? {
            queue_poll(engine, shipment.account_id, shipment.tracking_request_id).await?;
            queued += 1;
        }
    }
    queued += crate::use_cases::webhooks::deliver::queue_due(engine).await?;
    Ok(queued)
}

/// What each carrier can still take this tick.
struct Capacity<'a> {
    engine: &'a Engine<'a>,
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
            .or_insert_with(|| limits::fresh_capacity(self.engine, &scac, self.span));
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
