//! What a poll does, for the benchmarks that write tracked shipments as polls write them:
//! a pending tracking request as `POST /v2/tracking_requests` stores it, and one carrier
//! body parsed, planned and recorded with its domain events.

use chrono::{DateTime, Utc};
use tidemark_domain::domain_event::events_of;
use tidemark_domain::tracking_update::{Known, plan};
use tidemark_domain::{
    AccountId, RequestType, TrackingRequest, TrackingRequestId, TrackingRequestStatus, UuidV7Ids,
};
use tidemark_server::use_cases::tracking::report::from_snapshot;
use tidemark_store::Store;

/// A pending tracking request for a bill of lading on the sandbox carrier.
pub fn submitted(account: AccountId, number: &str, at: DateTime<Utc>) -> TrackingRequest {
    TrackingRequest {
        id: TrackingRequestId::new(&UuidV7Ids),
        account_id: account,
        request_type: RequestType::BillOfLading,
        request_number: number.to_owned(),
        scac: "TEST".to_owned(),
        ref_numbers: Vec::new(),
        shipment_tags: Vec::new(),
        status: TrackingRequestStatus::Pending,
        failed_reason: None,
        is_retrying: false,
        retry_count: None,
        shipment_id: None,
        initial_custom_fields: None,
        customer_id: None,
        submitted_by: None,
        polled_at: None,
        created_at: at,
        updated_at: at,
    }
}

/// One poll's work on a stored pending request: parse the carrier's body, plan the update,
/// write it with its domain events. Returns the number of carrier events applied.
pub async fn apply(
    store: &dyn Store,
    mut request: TrackingRequest,
    body: &[u8],
    at: DateTime<Utc>,
) -> usize {
    let snapshot = tidemark_carriers::dcsa::parse_events(body).expect("sandbox events parse");
    let update = plan(
        &request,
        Known::default(),
        &from_snapshot(
            &snapshot,
            tidemark_geo::reference::ReferenceData::embedded(),
        ),
        &UuidV7Ids,
        at,
    );
    request.status = TrackingRequestStatus::Created;
    request.shipment_id = Some(update.shipment.id);
    let announced = events_of(
        TrackingRequestStatus::Pending,
        &request,
        Some(&update),
        &UuidV7Ids,
        at,
    );
    store
        .record_tracking_result(&request, at, Some(&update), &announced)
        .await
        .expect("record");
    snapshot.events.len()
}
