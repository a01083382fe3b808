//! Domain events: what changed in one tracking update, named as Terminal49 names its
//! webhook events, and written in the same transaction as the change (the outbox that
//! webhook deliveries are made from).

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::ids::{AccountId, ContainerId, DomainEventId, IdGenerator, ShipmentId};
use crate::tracking::{TrackingRequestStatus, TransportEventName};
use crate::tracking_request::TrackingRequest;
use crate::tracking_update::TrackingUpdate;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DomainEvent {
    pub id: DomainEventId,
    pub account_id: AccountId,
    /// Terminal49's event name, such as `tracking_request.succeeded`.
    pub event: String,
    /// The type of the object the event is about: `tracking_request`, `transport_event`,
    /// `container` or `estimated_event` (whose id is that of the estimated arrival
    /// transport event it presents).
    pub reference_type: String,
    pub reference_id: Uuid,
    pub shipment_id: Option<ShipmentId>,
    pub container_id: Option<ContainerId>,
    /// What the reference alone does not tell: for `container.updated`, the changeset
    /// (`{field: [old, new]}`).
    pub payload: Option<serde_json::Value>,
    pub created_at: DateTime<Utc>,
}

/// The events of one tracking update: the request's outcome when its status changed, new
/// and changed containers, new transport events, and a new arrival estimate.
pub fn events_of(
    status_before: TrackingRequestStatus,
    request: &TrackingRequest,
    update: Option<&TrackingUpdate>,
    ids: &dyn IdGenerator,
    now: DateTime<Utc>,
) -> Vec<DomainEvent> {
    let event = |name: &str,
                 reference_type: &str,
                 reference_id: Uuid,
                 container: Option<ContainerId>| DomainEvent {
        id: DomainEventId::new(ids),
        account_id: request.account_id,
        event: name.to_owned(),
        reference_type: reference_type.to_owned(),
        reference_id,
        shipment_id: request.shipment_id,
        container_id: container,
        payload: None,
        created_at: now,
    };
    let mut events = Vec::new();
    if request.status != status_before {
        let name = match request.status {
            TrackingRequestStatus::Created => Some("tracking_request.succeeded"),
            TrackingRequestStatus::Failed => Some("tracking_request.failed"),
            TrackingRequestStatus::AwaitingManifest => Some("tracking_request.awaiting_manifest"),
            TrackingRequestStatus::TrackingStopped => Some("tracking_request.tracking_stopped"),
            TrackingRequestStatus::Pending => None,
        };
        // Resuming a stopped shipment is not a new success.
        let resumed = status_before == TrackingRequestStatus::TrackingStopped;
        if let Some(name) = name.filter(|_| !resumed) {
            events.push(event(name, "tracking_request", request.id.0, None));
        }
    }
    let Some(update) = update else {
        return events;
    };
    for container in &update.new_containers {
        events.push(event(
            "container.created",
            "container",
            container.id.0,
            Some(container.id),
        ));
    }
    for (container, changeset) in &update.container_changesets {
        let mut updated = event(
            "container.updated",
            "container_updated_event",
            container.0,
            Some(*container),
        );
        updated.payload = Some(serde_json::Value::Object(changeset.clone()));
        events.push(updated);
    }
    // Terminal49 announces a new arrival estimate once per shipment, as an `estimated_event`;
    // Tidemark's is the estimate recorded on the shipment's first container.
    let mut arrival_estimate = None;
    for transport_event in &update.new_events {
        if arrival_estimate.is_none()
            && transport_event.event == TransportEventName::EstimatedVesselArrived
            && transport_event.location_locode == update.shipment.port_of_discharge_locode
        {
            arrival_estimate = Some(transport_event.id);
        }
        events.push(event(
            transport_event.event.as_str(),
            "transport_event",
            transport_event.id.0,
            Some(transport_event.container_id),
        ));
    }
    if let Some(estimate) = arrival_estimate {
        events.push(event(
            "shipment.estimated.arrival",
            "estimated_event",
            estimate.0,
            None,
        ));
    }
    events
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::ids::{SequentialIds, TrackingRequestId};
    use crate::tracking::RequestType;
    use crate::tracking_update::{CarrierReport, Known, Milestone, ReportedContainer, plan};

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0)
            .single()
            .expect("valid")
    }

    fn request(ids: &SequentialIds, status: TrackingRequestStatus) -> TrackingRequest {
        TrackingRequest {
            id: TrackingRequestId::new(ids),
            account_id: AccountId::new(ids),
            request_type: RequestType::BillOfLading,
            request_number: "TESTBL0001".to_owned(),
            scac: "TEST".to_owned(),
            ref_numbers: Vec::new(),
            shipment_tags: Vec::new(),
            status,
            failed_reason: None,
            is_retrying: false,
            retry_count: None,
            shipment_id: None,
            initial_custom_fields: None,
            customer_id: None,
            submitted_by: None,
            polled_at: None,
            created_at: at(),
            updated_at: at(),
        }
    }

    fn names(events: &[DomainEvent]) -> Vec<&str> {
        events.iter().map(|e| e.event.as_str()).collect()
    }

    #[test]
    fn a_failed_request_is_one_event_about_the_request() {
        let ids = SequentialIds::default();
        let failed = request(&ids, TrackingRequestStatus::Failed);

        let events = events_of(TrackingRequestStatus::Pending, &failed, None, &ids, at());

        assert_eq!(names(&events), vec!["tracking_request.failed"]);
        assert_eq!(events[0].reference_type, "tracking_request");
        assert_eq!(events[0].reference_id, failed.id.0);
    }

    #[test]
    fn an_unchanged_status_is_no_event() {
        let ids = SequentialIds::default();
        let waiting = request(&ids, TrackingRequestStatus::AwaitingManifest);

        let events = events_of(
            TrackingRequestStatus::AwaitingManifest,
            &waiting,
            None,
            &ids,
            at(),
        );

        assert!(events.is_empty());
    }

    #[test]
    fn a_first_success_announces_the_request_containers_events_and_arrival_estimate() {
        let ids = SequentialIds::default();
        let mut created = request(&ids, TrackingRequestStatus::Created);
        let report = CarrierReport {
            pod_terminal: None,
            transport_document: None,
            pickup: Vec::new(),
            replaced_pod_eta: None,
            containers: vec![ReportedContainer {
                number: "TDMU1000001".to_owned(),
                iso_equipment_code: None,
            }],
            port_of_lading: Some("CNSHA".to_owned()),
            port_of_discharge: Some("NLRTM".to_owned()),
            destination: None,
            raw_events: Vec::new(),
            milestones: vec![Milestone {
                source_id: "eta".to_owned(),
                event: TransportEventName::EstimatedVesselArrived,
                container_number: None,
                at: at() + chrono::Duration::days(20),
                location_locode: Some("NLRTM".to_owned()),
                vessel_name: None,
                vessel_imo: None,
                voyage_number: None,
                terminal_id: None,
            }],
        };
        let update = plan(&created, Known::default(), &report, &ids, at());
        created.shipment_id = Some(update.shipment.id);

        let events = events_of(
            TrackingRequestStatus::Pending,
            &created,
            Some(&update),
            &ids,
            at(),
        );

        assert_eq!(
            names(&events),
            vec![
                "tracking_request.succeeded",
                "container.created",
                "container.transport.estimated.vessel_arrived",
                "shipment.estimated.arrival",
            ]
        );
        assert!(
            events
                .iter()
                .all(|e| e.shipment_id == Some(update.shipment.id))
        );
    }
}
