//! What a webhook receiver gets: Terminal49's notification envelope with the resources it
//! names `included`, rendered from the same resources the API serves.

use std::collections::HashMap;

use serde_json::{Value, json};
use tidemark_domain::{
    AccountId, Container, Party, Shipment, ShipmentId, TransportEvent, WebhookNotification,
};
use tidemark_store::StoreError;

use crate::parts::core::Core;
use crate::resources::containers::{
    ContainerResource, DataSource, EventIds, TransportEventResource, event_ids_of, events_in,
    source_events_of, vessels_of,
};
use crate::resources::documents::included_document;
use crate::resources::jsonapi::{
    Included, Relationships, ResourceIdentifier, ResourceObject, included_object, resource_object,
    timestamp,
};
use crate::resources::ports::PortResource;
use crate::resources::shipments::{ShipmentResource, customers_of};
use crate::resources::terminals::terminal_object;
use crate::resources::vessels::vessel_objects;
use crate::resources::webhook_notifications::{NotificationResource, reference_of};

/// A shipment's arrival estimate, presented as Terminal49's `estimated_event`, from
/// `source` (Terminal49's enum for it is `shipping_line` and `terminal`: a terminal's or rail
/// ramp's X12 322 says `terminal`; nothing else but the line's own answers estimates today).
fn estimated_event(
    core: &Core,
    estimate: &TransportEvent,
    source: DataSource,
    base: &str,
) -> Included {
    let port = estimate
        .location_locode
        .as_deref()
        .and_then(|l| core.reference.port_by_locode(l));
    ResourceObject {
        id: estimate.id.to_string(),
        kind: "estimated_event",
        attributes: crate::resources::jsonapi::erased(&json!({
            "created_at": timestamp::format(estimate.created_at),
            "estimated_timestamp": timestamp::format(estimate.timestamp),
            "voyage_number": estimate.voyage_number,
            "event": "shipment.estimated.arrival",
            "location_locode": estimate.location_locode,
            "timezone": port.map(|p| p.time_zone.as_str()),
            "data_source": source.as_str(),
        })),
        relationships: Relationships::default()
            .one(
                "shipment",
                Some(ResourceIdentifier::new("shipment", estimate.shipment_id)),
            )
            .one("port", port.map(|p| ResourceIdentifier::new("port", p.id)))
            .one("vessel", None),
        links: crate::resources::jsonapi::SelfLink {
            self_: format!("{base}/v2/shipments/{}", estimate.shipment_id),
        },
    }
}

/// A shipment and what rendering it needs, loaded once for every notification of a
/// delivery batch that concerns it.
pub struct ShipmentContext {
    shipment: Shipment,
    containers: Vec<Container>,
    customers: Vec<Party>,
    /// The ids of its containers' events, which the containers list.
    events: EventIds,
}

/// The shipments of `ids` with their containers, customers and their containers' event
/// ids, in four queries however many there are. Shipments no longer found are left out.
pub async fn shipment_contexts(
    core: &Core,
    account: AccountId,
    ids: &[ShipmentId],
) -> Result<HashMap<ShipmentId, ShipmentContext>, StoreError> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let shipments = core.store.shipments_by_ids(account, ids).await?;
    let found: Vec<ShipmentId> = shipments.iter().map(|s| s.id).collect();
    let mut containers = core.store.containers_of_shipments(&found).await?;
    let mut events = event_ids_of(core, account, containers.iter().map(|c| c.id)).await?;
    let customers = customers_of(core, &shipments).await.unwrap_or_default();
    Ok(shipments
        .into_iter()
        .map(|shipment| {
            let (own, rest): (Vec<Container>, Vec<Container>) = std::mem::take(&mut containers)
                .into_iter()
                .partition(|c| c.shipment_id == shipment.id);
            containers = rest;
            let customers = customers
                .iter()
                .filter(|p| Some(p.id) == shipment.customer_id)
                .cloned()
                .collect();
            let events = own
                .iter()
                .filter_map(|c| events.remove_entry(&c.id))
                .collect();
            (
                shipment.id,
                ShipmentContext {
                    shipment,
                    containers: own,
                    customers,
                    events,
                },
            )
        })
        .collect())
}

/// The resources a notification's receiver gets beside it, as in Terminal49's examples.
pub async fn included_for(
    core: &Core,
    n: &WebhookNotification,
    contexts: &HashMap<ShipmentId, ShipmentContext>,
) -> Result<Vec<Included>, StoreError> {
    let base = &core.public_url;
    let mut included = Vec::new();
    let context = n.shipment_id.and_then(|id| contexts.get(&id));
    let shipment: Option<&Shipment> = context.map(|c| &c.shipment);
    let containers: &[Container] = context.map_or(&[], |c| &c.containers);
    let customers: &[Party] = context.map_or(&[], |c| &c.customers);
    let no_events = EventIds::new();
    let events = context.map_or(&no_events, |c| &c.events);
    let shipment_object = |s: &Shipment| {
        included_object(
            &ShipmentResource {
                shipment: s,
                containers,
                customers,
                core,
            },
            base,
        )
    };
    let container_object = |id| {
        containers.iter().find(|c| c.id == id).map(|c| {
            included_object(
                &ContainerResource {
                    container: c,
                    shipment,
                    events: events_in(events, c.id),
                    core,
                },
                base,
            )
        })
    };
    let reference = reference_of(n);
    match reference.kind {
        "tracking_request" => {
            let request = core
                .store
                .tracking_request(n.account_id, n.reference_id.into())
                .await?;
            if let Some(s) = shipment {
                included.extend(containers.iter().filter_map(|c| container_object(c.id)));
                included.push(shipment_object(s));
            }
            included.push(included_object(&request, base));
        }
        "transport_event" | "estimated_event" => {
            let event = &core
                .store
                .transport_event(n.account_id, n.reference_id.into())
                .await?;
            let port = event
                .location_locode
                .as_deref()
                .and_then(|l| core.reference.port_by_locode(l));
            let port_object = port.map(|p| {
                included_object(
                    &PortResource {
                        port: p,
                        terminals: core.reference.terminals_at_port(&p.locode),
                    },
                    base,
                )
            });
            // The shipment's containers are at hand; one read otherwise.
            let read;
            let container = match containers.iter().find(|c| c.id == event.container_id) {
                Some(container) => container,
                None => {
                    read = core
                        .store
                        .container(event.account_id, event.container_id)
                        .await?;
                    &read
                }
            };
            let sources = source_events_of(core, container, [event]).await?;
            if reference.kind == "estimated_event" {
                included.extend(shipment.map(shipment_object));
                included.extend(port_object);
                let source = sources.origins.of(&event.source_id);
                included.push(estimated_event(core, event, source, base));
            } else {
                // Terminal49 sends estimates and availability with the event alone.
                let minimal = event.event.is_estimate()
                    || matches!(
                        n.event.as_str(),
                        "container.transport.available" | "container.transport.not_available"
                    );
                if !minimal {
                    included.extend(shipment.map(shipment_object));
                    included.extend(container_object(event.container_id));
                    included.extend(port_object);
                    // After the port, then the vessel, as in Terminal49's examples.
                    included.extend(
                        event
                            .terminal_id
                            .and_then(|id| terminal_object(core.reference, id, base)),
                    );
                    included.extend(vessel_objects(core, event.vessel_imo.as_deref()).await?);
                }
                let vessels = vessels_of(core, [event]).await?;
                included.push(included_object(
                    &TransportEventResource {
                        event,
                        core,
                        vessels: &vessels,
                        sources: &sources,
                    },
                    base,
                ));
            }
        }
        kind @ ("container_created_event" | "container_updated_event") => {
            let container_id = n.container_id;
            included.extend(shipment.map(shipment_object));
            included.extend(container_id.and_then(container_object));
            let mut attributes = json!({"timestamp": timestamp::format(n.created_at)});
            if kind == "container_updated_event" {
                attributes["changeset"] = n.payload.clone().unwrap_or_else(|| json!({}));
                // Terminal49's only value for it: the changeset is the container's pick-up
                // facts (availability, last free days, holds, fees, appointment).
                attributes["data_source"] = json!("terminal");
            }
            attributes["timezone"] = json!("Etc/UTC");
            let mut relationships = Relationships::default()
                .one(
                    "container",
                    container_id.map(|id| ResourceIdentifier::new("container", id)),
                )
                .one(
                    "shipment",
                    n.shipment_id
                        .map(|id| ResourceIdentifier::new("shipment", id)),
                );
            if kind == "container_updated_event" {
                relationships = relationships.one("terminal", None);
            }
            included.push(ResourceObject {
                id: n.domain_event_id.to_string(),
                kind,
                attributes: crate::resources::jsonapi::erased(&attributes),
                relationships,
                links: crate::resources::jsonapi::SelfLink {
                    self_: container_id.map_or_else(
                        || format!("{base}/v2/webhook_notifications/{}", n.id),
                        |id| format!("{base}/v2/containers/{id}"),
                    ),
                },
            });
        }
        "document" => match core.store.document(n.account_id, n.reference_id).await {
            Ok(document) => {
                included.push(included_document(&document, base));
            }
            // Deleted since: the notification still names it.
            Err(StoreError::NotFound) => {}
            Err(error) => return Err(error),
        },
        _ => {}
    }
    Ok(included)
}

/// The document a webhook receives for `n`: Terminal49's envelope, with `included`.
/// `contexts` holds `n`'s shipment (see [`shipment_contexts`]).
pub async fn delivery_document(
    core: &Core,
    n: &WebhookNotification,
    contexts: &HashMap<ShipmentId, ShipmentContext>,
) -> Result<Value, StoreError> {
    let object = resource_object(
        &NotificationResource {
            notification: n,
            logs: &[],
        },
        &core.public_url,
    );
    let included = included_for(core, n, contexts).await?;
    Ok(json!({
        "data": {
            "id": object.id,
            "type": object.kind,
            "attributes": object.attributes,
            "relationships": object.relationships,
        },
        "included": included,
    }))
}
