//! Use cases on tracked shipments: editing them and their containers, stopping and resuming
//! tracking.

use chrono::{DateTime, Duration, Utc};
use tidemark_domain::tracking_update::TrackingUpdate;
use tidemark_domain::{
    AccountId, ApiKeyId, Container, ContainerId, Shipment, ShipmentId, TrackingRequestStatus,
};
use tidemark_store::{ShipmentSort, StoreError};

use crate::parts::core::Core;
use crate::use_cases::tracking::Engine;

/// Why tracking stopped when a user stopped it.
pub const STOPPED_BY_USER: &str = "stopped_by_user";

/// Stops polling the shipment and pauses its notifications; its history stays. `by` is
/// the API key that asked, shown as `line_tracking_stopped_by_user`.
pub async fn stop_tracking(
    engine: &Engine<'_>,
    account: AccountId,
    id: ShipmentId,
    by: ApiKeyId,
) -> Result<Shipment, StoreError> {
    set_tracking(engine, account, id, Change::Stop { by }).await
}

/// Undoes [`stop_tracking`]: the shipment is polled again from the next sweep.
pub async fn resume_tracking(
    engine: &Engine<'_>,
    account: AccountId,
    id: ShipmentId,
) -> Result<Shipment, StoreError> {
    set_tracking(engine, account, id, Change::Resume).await
}

#[derive(Clone, Copy)]
enum Change {
    Stop { by: ApiKeyId },
    Resume,
}

/// Stops or resumes tracking: the shipment and its request change together, fenced
/// against a poll writing at the same moment (then it is tried again on fresh state).
async fn set_tracking(
    engine: &Engine<'_>,
    account: AccountId,
    id: ShipmentId,
    change: Change,
) -> Result<Shipment, StoreError> {
    let tracking = matches!(change, Change::Resume);
    const ATTEMPTS: usize = 3;
    let mut last_conflict = StoreError::NotFound;
    for _ in 0..ATTEMPTS {
        let mut shipment = engine.store.shipment(account, id).await?;
        if shipment.is_tracking() == tracking {
            return Ok(shipment);
        }
        let mut request = engine
            .store
            .tracking_request(account, shipment.tracking_request_id)
            .await?;
        let (status_before, read_at, now) =
            (request.status, request.updated_at, engine.clock.now());
        if let Change::Stop { by } = change {
            shipment.line_tracking_stopped_at = Some(now);
            shipment.line_tracking_stopped_reason = Some(STOPPED_BY_USER.to_owned());
            shipment.line_tracking_stopped_by = Some(by);
            request.status = TrackingRequestStatus::TrackingStopped;
        } else {
            shipment.line_tracking_stopped_at = None;
            shipment.line_tracking_stopped_reason = None;
            shipment.line_tracking_stopped_by = None;
            // Due at once: the next sweep polls it.
            shipment.line_tracking_last_attempted_at = None;
            request.status = TrackingRequestStatus::Created;
        }
        shipment.updated_at = now;
        request.updated_at = now;
        let update = TrackingUpdate::shipment_only(shipment.clone());
        match super::engine::record(engine, status_before, read_at, &request, Some(&update)).await {
            Ok(()) => return Ok(shipment),
            Err(conflict @ StoreError::Conflict { .. }) => last_conflict = conflict,
            Err(error) => return Err(error),
        }
    }
    Err(last_conflict)
}

/// Replaces the shipment's ref numbers and/or tags.
pub async fn edit(
    core: &Core,
    account: AccountId,
    id: ShipmentId,
    ref_numbers: Option<Vec<String>>,
    tags: Option<Vec<String>>,
) -> Result<Shipment, StoreError> {
    let mut shipment = core.store.shipment(account, id).await?;
    if let Some(ref_numbers) = ref_numbers {
        shipment.ref_numbers = super::requests::clean_list(&ref_numbers);
    }
    if let Some(tags) = tags {
        shipment.tags = super::requests::clean_list(&tags);
    }
    shipment.updated_at = core.clock.now();
    core.store.update_shipment(&shipment).await?;
    Ok(shipment)
}

/// Replaces a container's ref numbers (trimmed, blanks and repeats dropped).
pub async fn edit_container(
    core: &Core,
    account: AccountId,
    id: ContainerId,
    ref_numbers: Vec<String>,
) -> Result<Container, StoreError> {
    let mut container = core.store.container(account, id).await?;
    container.ref_numbers = super::requests::clean_list(&ref_numbers);
    container.updated_at = core.clock.now();
    core.store.update_container(&container).await?;
    Ok(container)
}

/// Most days "arriving within" looks ahead.
pub const MAX_ARRIVING_WITHIN_DAYS: u32 = 366;

/// The ETA window of "arriving within `days` days" from `now` (`filter[arriving_within_days]`
/// of the API, "Arriving within (days)" on the board); more than a year is a year.
pub fn arriving_within(now: DateTime<Utc>, days: u32) -> (DateTime<Utc>, DateTime<Utc>) {
    (
        now,
        now + Duration::days(i64::from(days.min(MAX_ARRIVING_WITHIN_DAYS))),
    )
}

/// The shipment list orders by name: `-created_at` (newest first, the default), `pod_eta_at`
/// (soonest ETA first) and `-pod_eta_at`.
pub fn sort_named(name: &str) -> Option<ShipmentSort> {
    match name.trim() {
        "" | "-created_at" => Some(ShipmentSort::Newest),
        "pod_eta_at" => Some(ShipmentSort::EtaAscending),
        "-pod_eta_at" => Some(ShipmentSort::EtaDescending),
        _ => None,
    }
}
