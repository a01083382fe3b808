//! The webhook event catalogue: the 43 event names of Terminal49's `events` enum, grouped as
//! its documentation groups them (NOTES §12.1), with what each means and the type of the
//! notification's `reference_object` (NOTES §12.3). `GET /webhooks/events` lists it, and
//! webhook validation accepts exactly these names.

/// A category of `GET /webhooks/events` (`type: webhook_event_category`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventGroup {
    /// The category's `id`, such as `tracking-request-events`.
    pub id: &'static str,
    /// The category's `name`, such as `Tracking Request Events`.
    pub name: &'static str,
}

/// One webhook event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventInfo {
    /// The event name, as in a webhook's `events` and a notification's `event`.
    pub name: &'static str,
    /// The [`EventGroup::id`] it is listed under.
    pub group: &'static str,
    pub description: &'static str,
    /// The `type` of the notification's `reference_object` (for `document.*`, of its
    /// `document` relationship).
    pub reference_type: &'static str,
    /// Sent once per container concerned, rather than once per shipment or request.
    pub container_scoped: bool,
}

const TRACKING_REQUEST: &str = "tracking-request-events";
const ORIGIN: &str = "origin-events";
const TRANSSHIPMENT: &str = "transshipment-events";
const FEEDER: &str = "feeder-events";
const DESTINATION: &str = "destination-events";
const RAIL: &str = "rail-events";
const ESTIMATE: &str = "estimate-events";
const CONTAINER: &str = "container-events";
const PICKUP: &str = "pickup-events";
const DOCUMENT: &str = "document-events";

static GROUPS: &[EventGroup] = &[
    EventGroup {
        id: TRACKING_REQUEST,
        name: "Tracking Request Events",
    },
    EventGroup {
        id: ORIGIN,
        name: "Origin Events",
    },
    EventGroup {
        id: TRANSSHIPMENT,
        name: "Transshipment Events",
    },
    EventGroup {
        id: FEEDER,
        name: "Feeder Vessel Events",
    },
    EventGroup {
        id: DESTINATION,
        name: "Destination Events",
    },
    EventGroup {
        id: RAIL,
        name: "Rail Events",
    },
    EventGroup {
        id: ESTIMATE,
        name: "Estimate Events",
    },
    EventGroup {
        id: CONTAINER,
        name: "Container Events",
    },
    EventGroup {
        id: PICKUP,
        name: "Last Free Day and Appointment Events",
    },
    EventGroup {
        id: DOCUMENT,
        name: "Document Events",
    },
];

const fn tracking_request(name: &'static str, description: &'static str) -> EventInfo {
    EventInfo {
        name,
        group: TRACKING_REQUEST,
        description,
        reference_type: "tracking_request",
        container_scoped: false,
    }
}

/// Transport milestones, estimates of them and pickup changes all refer to a transport event.
const fn transport(
    group: &'static str,
    name: &'static str,
    description: &'static str,
) -> EventInfo {
    EventInfo {
        name,
        group,
        description,
        reference_type: "transport_event",
        container_scoped: true,
    }
}

const fn container(
    name: &'static str,
    reference_type: &'static str,
    description: &'static str,
) -> EventInfo {
    EventInfo {
        name,
        group: CONTAINER,
        description,
        reference_type,
        container_scoped: true,
    }
}

const fn document(name: &'static str, description: &'static str) -> EventInfo {
    EventInfo {
        name,
        group: DOCUMENT,
        description,
        reference_type: "document",
        container_scoped: false,
    }
}

static CATALOGUE: &[EventInfo] = &[
    tracking_request(
        "tracking_request.succeeded",
        "Shipment created and linked to the tracking request; tracking has begun.",
    ),
    tracking_request(
        "tracking_request.failed",
        "The tracking request failed: the carrier did not find the shipment, so none was created.",
    ),
    tracking_request(
        "tracking_request.awaiting_manifest",
        "The carrier has not manifested the shipment yet; the request is retried automatically.",
    ),
    tracking_request(
        "tracking_request.tracking_stopped",
        "The shipment is no longer updated, because it completed or tracking was stopped.",
    ),
    transport(
        ORIGIN,
        "container.transport.empty_out",
        "Empty container picked up for loading, at the origin.",
    ),
    transport(
        ORIGIN,
        "container.transport.full_in",
        "Full container gated in at the port of lading.",
    ),
    transport(
        ORIGIN,
        "container.transport.vessel_loaded",
        "Container loaded on the vessel at the port of lading.",
    ),
    transport(
        ORIGIN,
        "container.transport.vessel_departed",
        "Vessel departed from the port of lading.",
    ),
    transport(
        TRANSSHIPMENT,
        "container.transport.transshipment_arrived",
        "Container arrived at a transshipment port.",
    ),
    transport(
        TRANSSHIPMENT,
        "container.transport.transshipment_discharged",
        "Container discharged at a transshipment port.",
    ),
    transport(
        TRANSSHIPMENT,
        "container.transport.transshipment_loaded",
        "Container loaded on the next vessel at a transshipment port.",
    ),
    transport(
        TRANSSHIPMENT,
        "container.transport.transshipment_departed",
        "Container departed from a transshipment port.",
    ),
    transport(
        FEEDER,
        "container.transport.feeder_arrived",
        "Container arrived on a feeder vessel or barge.",
    ),
    transport(
        FEEDER,
        "container.transport.feeder_discharged",
        "Container discharged from a feeder vessel or barge.",
    ),
    transport(
        FEEDER,
        "container.transport.feeder_loaded",
        "Container loaded on a feeder vessel or barge.",
    ),
    transport(
        FEEDER,
        "container.transport.feeder_departed",
        "Container departed on a feeder vessel or barge.",
    ),
    transport(
        DESTINATION,
        "container.transport.vessel_arrived",
        "Container arrived on the vessel at the port of discharge.",
    ),
    transport(
        DESTINATION,
        "container.transport.vessel_berthed",
        "The vessel carrying the container berthed at the port of discharge.",
    ),
    transport(
        DESTINATION,
        "container.transport.vessel_discharged",
        "Container discharged from the vessel at the port of discharge.",
    ),
    transport(
        DESTINATION,
        "container.transport.available",
        "Container available for pickup at the destination terminal.",
    ),
    transport(
        DESTINATION,
        "container.transport.not_available",
        "Container not available for pickup: a hold or another reason keeps it at the terminal.",
    ),
    transport(
        DESTINATION,
        "container.transport.full_out",
        "Full container picked up from the destination terminal.",
    ),
    transport(
        DESTINATION,
        "container.transport.delivered",
        "Container delivered to its consignee; recorded by hand.",
    ),
    transport(
        DESTINATION,
        "container.transport.empty_in",
        "Empty container returned after delivery.",
    ),
    transport(
        RAIL,
        "container.transport.rail_loaded",
        "Container loaded on a train.",
    ),
    transport(
        RAIL,
        "container.transport.rail_departed",
        "The train carrying the container departed.",
    ),
    transport(
        RAIL,
        "container.transport.rail_arrived",
        "The train carrying the container arrived at the inland rail terminal.",
    ),
    transport(
        RAIL,
        "container.transport.rail_unloaded",
        "Container unloaded from the train.",
    ),
    transport(
        RAIL,
        "container.transport.arrived_at_inland_destination",
        "Container arrived at its inland destination.",
    ),
    transport(
        ESTIMATE,
        "container.transport.estimated.vessel_departed",
        "The estimated departure from the port of lading changed.",
    ),
    transport(
        ESTIMATE,
        "container.transport.estimated.vessel_arrived",
        "The estimated arrival at the port of discharge changed.",
    ),
    transport(
        ESTIMATE,
        "container.transport.estimated.arrived_at_inland_destination",
        "The estimated arrival at the inland destination changed.",
    ),
    EventInfo {
        name: "shipment.estimated.arrival",
        group: ESTIMATE,
        description: "The shipment's estimated arrival at the port of discharge changed.",
        reference_type: "estimated_event",
        container_scoped: false,
    },
    container(
        "container.created",
        "container_created_event",
        "A container was added to a tracked shipment.",
    ),
    container(
        "container.updated",
        "container_updated_event",
        "Container attributes changed, such as holds, fees, availability or last free day.",
    ),
    container(
        "container.pod_terminal_changed",
        "container_pod_terminal_changed_event",
        "The terminal at the port of discharge changed.",
    ),
    transport(
        PICKUP,
        "container.pickup_lfd.changed",
        "The last free day for pickup changed.",
    ),
    transport(
        PICKUP,
        "container.pickup_lfd_line.changed",
        "The last free day reported by the shipping line changed.",
    ),
    transport(
        PICKUP,
        "container.pickup_lfd_terminal.changed",
        "The last free day reported by the terminal changed.",
    ),
    transport(
        PICKUP,
        "container.pickup_lfd_rail.changed",
        "The last free day at the inland rail terminal changed (rail plans only).",
    ),
    transport(
        PICKUP,
        "container.pickup_appointment.changed",
        "The pickup appointment at the terminal changed.",
    ),
    document(
        "document.extracted",
        "Data was extracted from an uploaded document.",
    ),
    document(
        "document.extraction_failed",
        "Data could not be extracted from an uploaded document.",
    ),
];

/// Every event, in catalogue order: by group, and in journey order within a group.
pub fn catalogue() -> &'static [EventInfo] {
    CATALOGUE
}

/// The groups of `GET /webhooks/events`, in order.
pub fn groups() -> &'static [EventGroup] {
    GROUPS
}

/// The event of this exact name.
pub fn event(name: &str) -> Option<&'static EventInfo> {
    CATALOGUE.iter().find(|info| info.name == name)
}

/// The events of one group, in catalogue order.
pub fn events_in(group: &str) -> impl Iterator<Item = &'static EventInfo> {
    CATALOGUE.iter().filter(move |info| info.group == group)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::PathBuf;

    use tidemark_domain::TransportEventName;

    use super::*;

    /// Terminal49 publishes no example payload for these.
    const WITHOUT_EXAMPLE: [&str; 6] = [
        "container.transport.feeder_arrived",
        "container.transport.feeder_discharged",
        "container.transport.feeder_loaded",
        "container.transport.feeder_departed",
        "container.pickup_lfd_line.changed",
        "document.extraction_failed",
    ];

    fn examples_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/reference/terminal49/webhook-examples")
    }

    #[test]
    fn the_catalogue_has_terminal49s_43_events_each_once() {
        let names: BTreeSet<&str> = catalogue().iter().map(|info| info.name).collect();
        assert_eq!(catalogue().len(), 43);
        assert_eq!(names.len(), 43);
    }

    #[test]
    fn every_event_belongs_to_a_listed_group_and_every_group_has_events() {
        let ids: BTreeSet<&str> = groups().iter().map(|group| group.id).collect();
        assert_eq!(ids.len(), groups().len());
        for info in catalogue() {
            assert!(ids.contains(info.group), "{}", info.name);
        }
        for group in groups() {
            assert!(events_in(group.id).next().is_some(), "{}", group.id);
        }
    }

    #[test]
    fn events_of_a_group_are_listed_together() {
        let mut seen = Vec::new();
        for info in catalogue() {
            if seen.last() != Some(&info.group) {
                assert!(!seen.contains(&info.group), "{} is split", info.group);
                seen.push(info.group);
            }
        }
        let order: Vec<&str> = groups().iter().map(|group| group.id).collect();
        assert_eq!(seen, order);
    }

    #[test]
    fn every_transport_event_name_of_the_domain_is_in_the_catalogue() {
        for name in TransportEventName::ALL {
            let info = event(name.as_str()).unwrap_or_else(|| panic!("{name} is missing"));
            assert_eq!(info.reference_type, "transport_event");
            assert!(info.container_scoped);
        }
        let transport = catalogue()
            .iter()
            .filter(|info| info.reference_type == "transport_event")
            .count();
        assert_eq!(transport, TransportEventName::ALL.len());
    }

    #[test]
    fn every_event_has_a_terminal49_example_except_the_listed_ones() {
        let dir = examples_dir();
        for info in catalogue() {
            let example = dir.join(format!("{}.json", info.name));
            if WITHOUT_EXAMPLE.contains(&info.name) {
                assert!(!example.exists(), "{} now has an example", info.name);
            } else {
                assert!(example.exists(), "no example for {}", info.name);
            }
        }
    }

    #[test]
    fn every_example_is_of_a_catalogued_event_with_its_reference_type() {
        let entries = std::fs::read_dir(examples_dir()).expect("the examples directory");
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            let text = std::fs::read_to_string(&path).expect("an example");
            let example: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            let data = &example["data"];
            let name = data["attributes"]["event"].as_str().expect("an event name");
            let info = event(name).unwrap_or_else(|| panic!("{name} is not catalogued"));
            let reference = if info.group == DOCUMENT {
                &data["relationships"]["document"]["data"]["type"]
            } else {
                &data["relationships"]["reference_object"]["data"]["type"]
            };
            assert_eq!(reference.as_str(), Some(info.reference_type), "{name}");
        }
    }

    #[test]
    fn events_are_looked_up_by_their_exact_name() {
        let info = event("tracking_request.succeeded").expect("catalogued");
        assert_eq!(info.group, "tracking-request-events");
        assert_eq!(event("Tracking_Request.Succeeded"), None);
        assert_eq!(event("link.created"), None);
    }
}
