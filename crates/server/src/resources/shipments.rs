//! `shipment`: a shipment with its ports, containers and customer.

use chrono::{DateTime, Utc};
use serde::Serialize;
use tidemark_domain::{Container, Party, PartyId, Shipment};
use tidemark_store::StoreError;
use utoipa::ToSchema;

use crate::parts::core::Core;
use crate::resources::containers::{ContainerResource, EventIds, event_ids_of, events_in};
use crate::resources::jsonapi::{
    Included, Includes, Relationships, Resource, ResourceIdentifier, included_object, timestamp,
};
use crate::resources::ports::PortResource;
use crate::resources::terminals::terminal_object;

#[derive(Debug, Serialize, ToSchema)]
pub struct ShipmentAttributes {
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    pub ref_numbers: Vec<String>,
    pub tags: Vec<String>,
    pub bill_of_lading_number: String,
    pub normalized_number: String,
    pub shipping_line_scac: String,
    pub shipping_line_name: Option<String>,
    pub shipping_line_short_name: Option<String>,
    /// Parties are not kept yet.
    pub customer_name: Option<String>,
    pub port_of_lading_locode: Option<String>,
    pub port_of_lading_name: Option<String>,
    pub port_of_discharge_locode: Option<String>,
    pub port_of_discharge_name: Option<String>,
    pub pod_vessel_name: Option<String>,
    pub pod_vessel_imo: Option<String>,
    pub pod_voyage_number: Option<String>,
    pub destination_locode: Option<String>,
    pub destination_name: Option<String>,
    pub destination_timezone: Option<String>,
    #[serde(with = "timestamp::option")]
    pub destination_ata_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub destination_eta_at: Option<DateTime<Utc>>,
    /// The first destination ETA ever seen.
    #[serde(with = "timestamp::option")]
    pub destination_original_eta_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub pol_etd_at: Option<DateTime<Utc>>,
    /// The first ETD ever seen at the port of lading.
    #[serde(with = "timestamp::option")]
    pub pol_original_etd_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub pol_atd_at: Option<DateTime<Utc>>,
    pub pol_timezone: Option<String>,
    #[serde(with = "timestamp::option")]
    pub pod_eta_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub pod_original_eta_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub pod_ata_at: Option<DateTime<Utc>>,
    pub pod_timezone: Option<String>,
    #[serde(with = "timestamp::option")]
    pub line_tracking_last_attempted_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub line_tracking_last_succeeded_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub line_tracking_stopped_at: Option<DateTime<Utc>>,
    pub line_tracking_stopped_reason: Option<String>,
}

/// A shipment with what its resource shows beside it: reference data and container ids.
pub struct ShipmentResource<'a> {
    pub shipment: &'a Shipment,
    pub containers: &'a [Container],
    /// The customers of the shipments being rendered (any order; looked up by id).
    pub customers: &'a [Party],
    pub core: &'a Core,
}

/// The customers (parties) of these shipments, one query per distinct customer: most
/// shipments have none, and a page rarely spans more than a few.
pub async fn customers_of(core: &Core, shipments: &[Shipment]) -> Result<Vec<Party>, StoreError> {
    let mut ids: Vec<(tidemark_domain::AccountId, PartyId)> = shipments
        .iter()
        .filter_map(|s| s.customer_id.map(|c| (s.account_id, c)))
        .collect();
    ids.sort();
    ids.dedup();
    let mut parties = Vec::with_capacity(ids.len());
    for (account, id) in ids {
        match core.store.party(account, id).await {
            Ok(party) => parties.push(party),
            Err(tidemark_store::StoreError::NotFound) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(parties)
}

impl ShipmentResource<'_> {
    fn port(&self, locode: Option<&String>) -> Option<&tidemark_geo::reference::Port> {
        locode.and_then(|l| self.core.reference.port_by_locode(l))
    }
}

impl Resource for ShipmentResource<'_> {
    const TYPE: &'static str = "shipment";
    const PATH: &'static str = "shipments";
    type Attributes = ShipmentAttributes;

    fn id(&self) -> String {
        self.shipment.id.to_string()
    }

    fn attributes(&self) -> ShipmentAttributes {
        let s = self.shipment;
        let line = self.core.reference.shipping_line(&s.shipping_line_scac);
        let pol = self.port(s.port_of_lading_locode.as_ref());
        let pod = self.port(s.port_of_discharge_locode.as_ref());
        let destination = self.port(s.destination_locode.as_ref());
        ShipmentAttributes {
            created_at: s.created_at,
            ref_numbers: s.ref_numbers.clone(),
            tags: s.tags.clone(),
            bill_of_lading_number: s.bill_of_lading_number.clone(),
            normalized_number: s.normalized_number.clone(),
            shipping_line_scac: s.shipping_line_scac.clone(),
            shipping_line_name: line.map(|l| l.name.clone()),
            shipping_line_short_name: line.map(|l| l.short_name.clone()),
            customer_name: s
                .customer_id
                .and_then(|id| self.customers.iter().find(|p| p.id == id))
                .map(|p| p.company_name.clone()),
            port_of_lading_locode: s.port_of_lading_locode.clone(),
            port_of_lading_name: pol.map(|p| p.name.clone()),
            port_of_discharge_locode: s.port_of_discharge_locode.clone(),
            port_of_discharge_name: pod.map(|p| p.name.clone()),
            pod_vessel_name: s.pod_vessel_name.clone(),
            pod_vessel_imo: s.pod_vessel_imo.clone(),
            pod_voyage_number: s.pod_voyage_number.clone(),
            destination_locode: s.destination_locode.clone(),
            destination_name: destination.map(|p| p.name.clone()),
            destination_timezone: destination.map(|p| p.time_zone.clone()),
            destination_ata_at: s.destination_ata_at,
            destination_eta_at: s.destination_eta_at,
            destination_original_eta_at: s.destination_original_eta_at,
            pol_etd_at: s.pol_etd_at,
            pol_original_etd_at: s.pol_original_etd_at,
            pol_atd_at: s.pol_atd_at,
            pol_timezone: pol.map(|p| p.time_zone.clone()),
            pod_eta_at: s.pod_eta_at,
            pod_original_eta_at: s.pod_original_eta_at,
            pod_ata_at: s.pod_ata_at,
            pod_timezone: pod.map(|p| p.time_zone.clone()),
            line_tracking_last_attempted_at: s.line_tracking_last_attempted_at,
            line_tracking_last_succeeded_at: s.line_tracking_last_succeeded_at,
            line_tracking_stopped_at: s.line_tracking_stopped_at,
            line_tracking_stopped_reason: s.line_tracking_stopped_reason.clone(),
        }
    }

    fn relationships(&self) -> Relationships {
        let s = self.shipment;
        let port = |locode: Option<&String>| {
            self.port(locode)
                .map(|p| ResourceIdentifier::new("port", p.id))
        };
        Relationships::default()
            .one("port_of_lading", port(s.port_of_lading_locode.as_ref()))
            .one(
                "port_of_discharge",
                port(s.port_of_discharge_locode.as_ref()),
            )
            .one("destination", port(s.destination_locode.as_ref()))
            .one(
                "pod_terminal",
                s.pod_terminal_id
                    .map(|id| ResourceIdentifier::new("terminal", id)),
            )
            .one("destination_terminal", None)
            // Tidemark's users are its API keys: the key that stopped tracking.
            .one(
                "line_tracking_stopped_by_user",
                s.line_tracking_stopped_by
                    .map(|id| ResourceIdentifier::new("user", id)),
            )
            .many(
                "containers",
                self.containers
                    .iter()
                    .map(|c| ResourceIdentifier::new("container", c.id))
                    .collect(),
            )
    }
}

/// The `included` resources asked for of these shipments (of one account): one visit to
/// the store for their containers' event ids when containers are asked for, none otherwise.
pub async fn included_of(
    core: &Core,
    includes: &Includes,
    shipments: &[ShipmentResource<'_>],
) -> Result<Vec<Included>, StoreError> {
    let events = match shipments.first() {
        Some(first) if includes.contains("containers") => {
            event_ids_of(
                core,
                first.shipment.account_id,
                shipments
                    .iter()
                    .flat_map(|r| r.containers.iter().map(|c| c.id)),
            )
            .await?
        }
        _ => EventIds::new(),
    };
    let base = &core.public_url;
    let mut included: Vec<Included> = Vec::new();
    let mut push = |object: Included| {
        if !included
            .iter()
            .any(|o| o.id == object.id && o.kind == object.kind)
        {
            included.push(object);
        }
    };
    for resource in shipments {
        let s = resource.shipment;
        for (name, locode) in [
            ("port_of_lading", &s.port_of_lading_locode),
            ("port_of_discharge", &s.port_of_discharge_locode),
            ("destination", &s.destination_locode),
        ] {
            if let Some(port) = includes
                .contains(name)
                .then(|| resource.port(locode.as_ref()))
                .flatten()
            {
                push(included_object(
                    &PortResource {
                        port,
                        terminals: core.reference.terminals_at_port(&port.locode),
                    },
                    base,
                ));
            }
        }
        if includes.contains("pod_terminal")
            && let Some(terminal) = s
                .pod_terminal_id
                .and_then(|id| terminal_object(core.reference, id, base))
        {
            push(terminal);
        }
        if includes.contains("containers") {
            for container in resource.containers {
                push(included_object(
                    &ContainerResource {
                        container,
                        shipment: Some(s),
                        events: events_in(&events, container.id),
                        core,
                    },
                    base,
                ));
            }
        }
    }
    Ok(included)
}
