//! Use cases on tracked shipments: editing, stopping and resuming tracking.

use tidemark_domain::{AccountId, Shipment, ShipmentId, TrackingRequestStatus};
use tidemark_store::StoreError;

use crate::app::App;

/// Why tracking stopped when a user stopped it.
pub const STOPPED_BY_USER: &str = "stopped_by_user";

/// Stops polling the shipment and pauses its notifications; its history stays.
pub async fn stop_tracking(
    app: &App,
    account: AccountId,
    id: ShipmentId,
) -> Result<Shipment, StoreError> {
    let mut shipment = app.store.shipment(account, id).await?;
    if shipment.line_tracking_stopped_at.is_some() {
        return Ok(shipment);
    }
    let now = app.clock.now();
    shipment.line_tracking_stopped_at = Some(now);
    shipment.line_tracking_stopped_reason = Some(STOPPED_BY_USER.to_owned());
    shipment.updated_at = now;
    app.store.update_shipment(&shipment).await?;
    set_request_status(
        app,
        account,
        &shipment,
        TrackingRequestStatus::TrackingStopped,
    )
    .await?;
    Ok(shipment)
}

/// Undoes [`stop_tracking`]: the shipment is polled again from the next sweep.
pub async fn resume_tracking(
    app: &App,
    account: AccountId,
    id: ShipmentId,
) -> Result<Shipment, StoreError> {
    let mut shipment = app.store.shipment(account, id).await?;
    if shipment.line_tracking_stopped_at.is_none() {
        return Ok(shipment);
    }
    shipment.line_tracking_stopped_at = None;
    shipment.line_tracking_stopped_reason = None;
    // Due at once: the next sweep polls it.
    shipment.line_tracking_last_attempted_at = None;
    shipment.updated_at = app.clock.now();
    app.store.update_shipment(&shipment).await?;
    set_request_status(app, account, &shipment, TrackingRequestStatus::Created).await?;
    Ok(shipment)
}

async fn set_request_status(
    app: &App,
    account: AccountId,
    shipment: &Shipment,
    status: TrackingRequestStatus,
) -> Result<(), StoreError> {
    let mut request = app
        .store
        .tracking_request(account, shipment.tracking_request_id)
        .await?;
    let before = request.status;
    request.status = status;
    request.updated_at = app.clock.now();
    super::engine::record(app, before, &request, None).await
}

/// Replaces the shipment's ref numbers and/or tags.
pub async fn edit(
    app: &App,
    account: AccountId,
    id: ShipmentId,
    ref_numbers: Option<Vec<String>>,
    tags: Option<Vec<String>>,
) -> Result<Shipment, StoreError> {
    let mut shipment = app.store.shipment(account, id).await?;
    if let Some(ref_numbers) = ref_numbers {
        shipment.ref_numbers = super::requests::clean_list(&ref_numbers);
    }
    if let Some(tags) = tags {
        shipment.tags = super::requests::clean_list(&tags);
    }
    shipment.updated_at = app.clock.now();
    app.store.update_shipment(&shipment).await?;
    Ok(shipment)
}
