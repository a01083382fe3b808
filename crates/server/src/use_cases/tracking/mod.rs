//! Use cases of tracking: accepting tracking requests (and, next, following them with the
//! carriers). Shared by the API and the workers.

pub mod carriers;
pub mod engine;
pub mod push;
pub mod report;
pub mod requests;
pub mod shipments;

use tidemark_domain::{AccountId, TrackingRequestId};
use tidemark_store::StoreError;

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

/// Queues a poll for every request still waiting for its carrier and every tracked shipment
/// that is due, so a tick costs writes only for the work it finds. Returns how many it
/// queued.
pub async fn sweep(app: &App) -> Result<usize, StoreError> {
    const BATCH: u32 = 1_000;
    let now = app.clock.now();
    let mut queued = 0;
    for request in app.store.unresolved_tracking_requests(10 * BATCH).await? {
        if engine::due_at(app, &request, None).is_some_and(|due| due <= now) {
            queue_poll(app, request.account_id, request.id).await?;
            queued += 1;
        }
    }
    let due_before = now - app.config.tracking_poll_interval;
    for shipment in app.store.shipments_to_poll(due_before, 10 * BATCH).await? {
        queue_poll(app, shipment.account_id, shipment.tracking_request_id).await?;
        queued += 1;
    }
    queued += crate::use_cases::webhooks::deliver::queue_due(app).await?;
    Ok(queued)
}
