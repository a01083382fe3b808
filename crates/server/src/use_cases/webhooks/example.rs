//! Example delivery bodies, for `GET /v2/webhook_notifications/examples` and
//! `POST /v2/webhooks/trigger`: the envelope every delivery has, around a made-up reference
//! object of the event's type (clearly sample data: the sandbox's `TEST` line and fixed ids).

use serde_json::{Value, json};

use crate::use_cases::webhooks::catalogue::EventInfo;

const NOTIFICATION: &str = "00000000-0000-7000-8000-000000000001";
const WEBHOOK: &str = "00000000-0000-7000-8000-000000000002";
const REFERENCE: &str = "00000000-0000-7000-8000-000000000003";
const SHIPMENT: &str = "00000000-0000-7000-8000-000000000004";
const CONTAINER: &str = "00000000-0000-7000-8000-000000000005";
const AT: &str = "2026-01-15T08:30:00Z";

fn relationship(kind: &str, id: &str) -> Value {
    json!({"data": {"id": id, "type": kind}})
}

fn reference_object(event: &EventInfo) -> Value {
    let (attributes, relationships) = match event.reference_type {
        "tracking_request" => (
            json!({
                "request_number": "TEST-TR-SUCCEEDED", "request_type": "bill_of_lading",
                "scac": "TEST", "ref_numbers": [], "shipment_tags": [],
                "status": match event.name {
                    "tracking_request.succeeded" => "created",
                    "tracking_request.failed" => "failed",
                    "tracking_request.awaiting_manifest" => "awaiting_manifest",
                    _ => "tracking_stopped",
                },
                "failed_reason": if event.name.ends_with("failed") { json!("not_found") } else { Value::Null },
                "is_retrying": false, "retry_count": null, "created_at": AT, "updated_at": AT,
            }),
            json!({"tracked_object": relationship("shipment", SHIPMENT)}),
        ),
        "estimated_event" => (
            json!({
                "created_at": AT, "estimated_timestamp": "2026-02-02T06:00:00Z",
                "voyage_number": "001E", "event": event.name, "location_locode": "NLRTM",
                "timezone": "Europe/Amsterdam", "data_source": "shipping_line",
            }),
            json!({"shipment": relationship("shipment", SHIPMENT), "port": {"data": null}, "vessel": {"data": null}}),
        ),
        "container_created_event" => (
            json!({"timestamp": AT, "timezone": "Etc/UTC"}),
            json!({"container": relationship("container", CONTAINER), "shipment": relationship("shipment", SHIPMENT)}),
        ),
        "container_updated_event" => (
            json!({
                "changeset": {"available_for_pickup": [false, true]},
                "timestamp": AT, "data_source": "shipping_line", "timezone": "Etc/UTC",
            }),
            json!({"container": relationship("container", CONTAINER), "terminal": {"data": null}, "shipment": relationship("shipment", SHIPMENT)}),
        ),
        "transport_event" => (
            json!({
                "event": event.name, "created_at": AT, "timestamp": AT, "voyage_number": "001E",
                "location_locode": "CNSHA", "timezone": "Asia/Shanghai", "data_source": "shipping_line",
            }),
            json!({
                "shipment": relationship("shipment", SHIPMENT),
                "container": relationship("container", CONTAINER),
                "location": {"data": null}, "vessel": {"data": null}, "terminal": {"data": null},
            }),
        ),
        _ => (json!({"event": event.name, "created_at": AT}), json!({})),
    };
    json!({
        "id": REFERENCE,
        "type": event.reference_type,
        "attributes": attributes,
        "relationships": relationships,
    })
}

/// The example body of a delivery of `event`.
pub fn payload(event: &EventInfo) -> Value {
    json!({
        "data": {
            "id": NOTIFICATION,
            "type": "webhook_notification",
            "attributes": {
                "id": NOTIFICATION, "event": event.name, "delivery_status": "pending",
                "created_at": AT,
            },
            "relationships": {
                "reference_object": relationship(event.reference_type, REFERENCE),
                "webhook": relationship("webhook", WEBHOOK),
                "webhook_notification_logs": {"data": []},
            },
        },
        "included": [reference_object(event)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::use_cases::webhooks::catalogue;

    #[test]
    fn every_catalogued_event_has_an_example_whose_reference_is_included() {
        for event in catalogue::catalogue() {
            let example = payload(event);
            let reference = &example["data"]["relationships"]["reference_object"]["data"];
            assert_eq!(example["data"]["attributes"]["event"], json!(event.name));
            assert_eq!(
                example["included"][0]["type"], reference["type"],
                "{}",
                event.name
            );
            assert_eq!(
                example["included"][0]["id"], reference["id"],
                "{}",
                event.name
            );
        }
    }
}
