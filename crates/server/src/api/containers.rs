//! `/v2/containers`: each container's status and milestones, and its transport events.

use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::HashMap;
use tidemark_domain::{
    Container, ContainerId, ContainerStatus, PartyId, Shipment, TransportEvent, TransportEventName,
};

use tidemark_store::{ContainerFilter, PageRequest, StoreError, TransportEventFilter};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument};
use crate::api::extract::Path;
use crate::api::jsonapi::Included;
use crate::api::jsonapi::{
    DEFAULT_PAGE_SIZE, Document, ListDocument, QueryParams, Relationships, Resource,
    ResourceIdentifier, included_object, resource_object, timestamp,
};
use crate::api::shipments::ShipmentResource;
use crate::app::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(show))
        .routes(routes!(transport_events))
        .routes(routes!(refresh))
}

const INCLUDES: &[&str] = &["shipment", "transport_events", "pod_terminal"];

#[derive(Debug, Serialize, ToSchema)]
pub struct ContainerAttributes {
    pub number: String,
    pub seal_number: Option<String>,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    pub equipment_type: Option<String>,
    pub equipment_length: Option<u32>,
    pub equipment_height: Option<String>,
    pub weight_in_lbs: Option<u32>,
    /// Terminal data is not collected yet: always empty.
    pub fees_at_pod_terminal: Vec<Value>,
    /// Terminal data is not collected yet: always empty.
    pub holds_at_pod_terminal: Vec<Value>,
    #[serde(with = "timestamp::option")]
    pub pickup_lfd: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub pickup_appointment_at: Option<DateTime<Utc>>,
    pub availability_known: bool,
    pub available_for_pickup: bool,
    #[serde(with = "timestamp::option")]
    pub pod_arrived_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub pod_discharged_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub final_destination_full_out_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub pod_full_out_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub empty_terminated_at: Option<DateTime<Utc>>,
    pub pod_timezone: Option<String>,
    pub final_destination_timezone: Option<String>,
    pub empty_terminated_timezone: Option<String>,
    pub current_status: &'static str,
    /// The container's own reference numbers; carriers' DCSA feeds carry none.
    pub ref_numbers: Vec<String>,
    /// When the shipment was last polled at its carrier.
    #[serde(with = "timestamp::option")]
    pub shipment_last_tracking_request_at: Option<DateTime<Utc>>,
    /// Terminal data (not collected yet: DCSA Track & Trace has none), always null.
    #[serde(with = "timestamp::option")]
    pub pod_last_tracking_request_at: Option<DateTime<Utc>>,
    /// Terminal data, always null for now.
    #[serde(with = "timestamp::option")]
    pub terminal_checked_at: Option<DateTime<Utc>>,
    /// Terminal data, always null for now.
    pub location_at_pod_terminal: Option<String>,
    /// Terminal data, always null for now.
    pub pod_full_out_chassis_number: Option<String>,
}

type Value = serde_json::Value;

pub struct ContainerResource<'a> {
    pub container: &'a Container,
    /// The container's shipment, for time zones.
    pub shipment: Option<&'a Shipment>,
    pub state: &'a AppState,
}

impl Resource for ContainerResource<'_> {
    const TYPE: &'static str = "container";
    const PATH: &'static str = "containers";
    type Attributes = ContainerAttributes;

    fn id(&self) -> String {
        self.container.id.to_string()
    }

    fn attributes(&self) -> ContainerAttributes {
        let c = self.container;
        let zone = |locode: Option<&String>| {
            locode
                .and_then(|l| self.state.reference.time_zone_of(l))
                .map(str::to_owned)
        };
        let pod_zone = zone(
            self.shipment
                .and_then(|s| s.port_of_discharge_locode.as_ref()),
        );
        let destination_zone = zone(self.shipment.and_then(|s| {
            s.destination_locode
                .as_ref()
                .or(s.port_of_discharge_locode.as_ref())
        }));
        ContainerAttributes {
            number: c.number.clone(),
            seal_number: c.seal_number.clone(),
            created_at: c.created_at,
            equipment_type: c.equipment_type.clone(),
            equipment_length: c.equipment_length,
            equipment_height: c.equipment_height.clone(),
            weight_in_lbs: c.weight_in_lbs,
            fees_at_pod_terminal: Vec::new(),
            holds_at_pod_terminal: Vec::new(),
            pickup_lfd: None,
            pickup_appointment_at: None,
            availability_known: c.availability_known,
            available_for_pickup: c.available_for_pickup,
            pod_arrived_at: c.pod_arrived_at,
            pod_discharged_at: c.pod_discharged_at,
            final_destination_full_out_at: c.final_destination_full_out_at,
            pod_full_out_at: c.pod_full_out_at,
            empty_terminated_at: c.empty_terminated_at,
            final_destination_timezone: c
                .final_destination_full_out_at
                .and(destination_zone.clone()),
            empty_terminated_timezone: c.empty_terminated_at.and(destination_zone),
            pod_timezone: pod_zone,
            current_status: c.current_status.as_str(),
            ref_numbers: Vec::new(),
            shipment_last_tracking_request_at: self
                .shipment
                .and_then(|s| s.line_tracking_last_attempted_at),
            pod_last_tracking_request_at: None,
            terminal_checked_at: None,
            location_at_pod_terminal: None,
            pod_full_out_chassis_number: None,
        }
    }

    fn relationships(&self) -> Relationships {
        Relationships::default()
            .one(
                "shipment",
                Some(ResourceIdentifier::new(
                    "shipment",
                    self.container.shipment_id,
                )),
            )
            .one("pod_terminal", None)
            .related(
                "transport_events",
                format!(
                    "{}/v2/containers/{}/transport_events",
                    self.state.config.public_url, self.container.id
                ),
            )
            .related(
                "raw_events",
                format!(
                    "{}/v2/containers/{}/raw_events",
                    self.state.config.public_url, self.container.id
                ),
            )
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TransportEventAttributes {
    /// Such as `container.transport.vessel_departed`.
    pub event: &'static str,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "timestamp")]
    pub timestamp: DateTime<Utc>,
    pub voyage_number: Option<String>,
    pub location_locode: Option<String>,
    pub timezone: Option<String>,
    /// Where it came from: `shipping_line`.
    pub data_source: &'static str,
}

pub struct TransportEventResource<'a> {
    pub event: &'a TransportEvent,
    pub state: &'a AppState,
    /// The vessels known by IMO (see [`vessels_of`]): fills the `vessel` relationship.
    pub vessels: &'a VesselIds,
}

/// Vessel ids by IMO number.
pub type VesselIds = HashMap<String, Uuid>;

/// The ids of the vessels these events name, in one query. Vessels are recorded by IMO
/// when a poll names them, so an event's vessel is normally known.
pub async fn vessels_of<'a>(
    state: &AppState,
    events: impl IntoIterator<Item = &'a TransportEvent>,
) -> Result<VesselIds, StoreError> {
    let mut imos: Vec<String> = events
        .into_iter()
        .filter_map(|e| e.vessel_imo.clone())
        .collect();
    imos.sort_unstable();
    imos.dedup();
    if imos.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(state
        .store
        .vessels_by_imos(&imos)
        .await?
        .into_iter()
        .filter_map(|v| v.imo.map(|imo| (imo, v.id)))
        .collect())
}

impl Resource for TransportEventResource<'_> {
    const TYPE: &'static str = "transport_event";
    const PATH: &'static str = "transport_events";
    type Attributes = TransportEventAttributes;

    fn id(&self) -> String {
        self.event.id.to_string()
    }

    fn attributes(&self) -> TransportEventAttributes {
        let e = self.event;
        TransportEventAttributes {
            event: e.event.as_str(),
            created_at: e.created_at,
            timestamp: e.timestamp,
            voyage_number: e.voyage_number.clone(),
            location_locode: e.location_locode.clone(),
            timezone: e
                .location_locode
                .as_deref()
                .and_then(|l| self.state.reference.time_zone_of(l))
                .map(str::to_owned),
            data_source: "shipping_line",
        }
    }

    fn relationships(&self) -> Relationships {
        let e = self.event;
        Relationships::default()
            .one(
                "shipment",
                Some(ResourceIdentifier::new("shipment", e.shipment_id)),
            )
            .one(
                "container",
                Some(ResourceIdentifier::new("container", e.container_id)),
            )
            .one(
                "location",
                e.location_locode
                    .as_deref()
                    .and_then(|l| self.state.reference.port_by_locode(l))
                    .map(|p| ResourceIdentifier::new("port", p.id)),
            )
            .one(
                "vessel",
                e.vessel_imo
                    .as_ref()
                    .and_then(|imo| self.vessels.get(imo))
                    .map(|id| ResourceIdentifier::new("vessel", id)),
            )
            .one("terminal", None)
    }
}

fn parse_id(id: &str) -> Result<ContainerId, ApiError> {
    Uuid::parse_str(id)
        .map(ContainerId)
        .map_err(|_| ApiError::NotFound)
}

fn event_filter(query: &QueryParams) -> Result<TransportEventFilter, ApiError> {
    Ok(TransportEventFilter {
        event: query.choice(
            "filter[event]",
            TransportEventName::parse,
            "a transport event name such as container.transport.vessel_departed",
        )?,
        from: query.time("filter[timestamp][start]")?,
        to: query.time("filter[timestamp][end]")?,
    })
}

/// List containers, most recently updated first.
#[utoipa::path(
    get, path = "/v2/containers", tag = "Containers",
    params(
        ("filter[number]" = Option<String>, Query),
        ("filter[status]" = Option<String>, Query, description = "current_status, such as on_ship"),
        ("filter[port]" = Option<String>, Query, description = "UN/LOCODE of the port of lading or discharge"),
        ("filter[scac]" = Option<String>, Query),
        ("filter[updated_since]" = Option<String>, Query, description = "ISO 8601"),
        ("filter[custom_fields][api_slug]" = Option<String>, Query, description = "a custom field value; put the field's api_slug in place of api_slug (up to 5 such filters)"),
        ("include" = Option<String>, Query, description = "shipment"),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, body = ListDocument<ContainerAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    principal: Principal,
    query: QueryParams,
) -> Result<ListDocument<ContainerAttributes>, ApiError> {
    let page = query.page(DEFAULT_PAGE_SIZE)?;
    let includes = query.includes("container", INCLUDES)?;
    let text = |name: &str| query.filter(name).map(str::to_owned);
    let filter = ContainerFilter {
        number: text("filter[number]"),
        status: query.choice(
            "filter[status]",
            ContainerStatus::parse,
            "a container status such as on_ship, available or picked_up",
        )?,
        port: text("filter[port]"),
        scac: text("filter[scac]").or_else(|| text("filter[carrier]")),
        updated_since: query
            .time("filter[updated_since]")?
            .or(query.time("filter[updated_after]")?),
        customer: query.id("filter[customer_id]")?.map(PartyId),
        custom_fields: super::custom_fields::list_filters(
            &state,
            principal.account_id,
            tidemark_domain::custom_fields::EntityType::Container,
            &query,
        )
        .await?,
    };
    let found = state
        .store
        .list_containers(principal.account_id, &filter, page.into())
        .await?;
    let mut shipment_ids: Vec<_> = found.items.iter().map(|c| c.shipment_id).collect();
    shipment_ids.sort();
    shipment_ids.dedup();
    let shipments = state
        .store
        .shipments_by_ids(principal.account_id, &shipment_ids)
        .await?;
    let base = &state.config.public_url;
    let shipment_of = |c: &Container| shipments.iter().find(|s| s.id == c.shipment_id);
    let data = found
        .items
        .iter()
        .map(|container| {
            resource_object(
                &ContainerResource {
                    container,
                    shipment: shipment_of(container),
                    state: &state,
                },
                base,
            )
        })
        .collect();
    let mut included = Vec::new();
    if includes.contains("shipment") {
        for shipment in &shipments {
            included.push(shipment_object(&state, shipment).await?);
        }
    }
    Ok(ListDocument::page(
        data,
        included,
        &query,
        base,
        page,
        found.total,
    ))
}

async fn shipment_object(state: &AppState, shipment: &Shipment) -> Result<Included, ApiError> {
    let containers = state.store.containers_of_shipment(shipment.id).await?;
    let customers =
        crate::api::shipments::customers_of(state, std::slice::from_ref(shipment)).await?;
    Ok(included_object(
        &ShipmentResource {
            shipment,
            containers: &containers,
            customers: &customers,
            state,
        },
        &state.config.public_url,
    ))
}

/// Get a container.
#[utoipa::path(
    get, path = "/v2/containers/{id}", tag = "Containers",
    params(("id" = Uuid, Path), ("include" = Option<String>, Query, description = "shipment, transport_events")),
    responses(
        (status = 200, body = Document<ContainerAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<Document<ContainerAttributes>, ApiError> {
    let includes = query.includes("container", INCLUDES)?;
    let container = state
        .store
        .container(principal.account_id, parse_id(&id)?)
        .await?;
    let shipment = state
        .store
        .shipment(principal.account_id, container.shipment_id)
        .await?;
    let events = state
        .store
        .transport_events_of_container(
            principal.account_id,
            container.id,
            &TransportEventFilter::default(),
            PageRequest {
                offset: 0,
                limit: 1_000,
            },
        )
        .await?
        .items;
    let base = &state.config.public_url;
    let mut object = resource_object(
        &ContainerResource {
            container: &container,
            shipment: Some(&shipment),
            state: &state,
        },
        base,
    );
    object.relationships = object.relationships.many(
        "transport_events",
        events
            .iter()
            .map(|e| ResourceIdentifier::new("transport_event", e.id))
            .collect(),
    );
    let mut included = Vec::new();
    if includes.contains("shipment") {
        included.push(shipment_object(&state, &shipment).await?);
    }
    if includes.contains("transport_events") {
        let vessels = vessels_of(&state, &events).await?;
        included.extend(events.iter().map(|event| {
            included_object(
                &TransportEventResource {
                    event,
                    state: &state,
                    vessels: &vessels,
                },
                base,
            )
        }));
    }
    Ok(Document::new(object, included))
}

/// A container's transport events, in time order.
#[utoipa::path(
    get, path = "/v2/containers/{id}/transport_events", tag = "Containers",
    params(
        ("id" = Uuid, Path),
        ("filter[event]" = Option<String>, Query, description = "An event name"),
        ("filter[timestamp][start]" = Option<String>, Query, description = "ISO 8601"),
        ("filter[timestamp][end]" = Option<String>, Query, description = "ISO 8601"),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, body = ListDocument<TransportEventAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn transport_events(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<ListDocument<TransportEventAttributes>, ApiError> {
    let page = query.page(DEFAULT_PAGE_SIZE)?;
    let filter = event_filter(&query)?;
    let container = state
        .store
        .container(principal.account_id, parse_id(&id)?)
        .await?;
    let found = state
        .store
        .transport_events_of_container(principal.account_id, container.id, &filter, page.into())
        .await?;
    let base = &state.config.public_url;
    let vessels = vessels_of(&state, &found.items).await?;
    Ok(ListDocument::page(
        found
            .items
            .iter()
            .map(|event| {
                resource_object(
                    &TransportEventResource {
                        event,
                        state: &state,
                        vessels: &vessels,
                    },
                    base,
                )
            })
            .collect(),
        Vec::new(),
        &query,
        base,
        page,
        found.total,
    ))
}

/// `{"message": …}`, as Terminal49 answers a refresh.
#[derive(Debug, Serialize, ToSchema)]
pub struct RefreshStarted {
    pub message: &'static str,
}

/// Poll the container's carrier now instead of at the next scheduled poll. Limited to 10
/// per minute per API key.
#[utoipa::path(
    patch, path = "/v2/containers/{id}/refresh", tag = "Containers",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = RefreshStarted),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 422, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn refresh(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<axum::response::Response, ApiError> {
    let container = state
        .store
        .container(principal.account_id, parse_id(&id)?)
        .await?;
    let shipment = state
        .store
        .shipment(principal.account_id, container.shipment_id)
        .await?;
    if !shipment.is_tracking() {
        return Err(ApiError::Invalid(vec![
            crate::api::error::FieldError::pointer(
                "",
                "tracking_stopped",
                "Tracking of this container's shipment is stopped; resume it first.",
            ),
        ]));
    }
    crate::use_cases::tracking::queue_refresh(
        &state,
        principal.account_id,
        shipment.tracking_request_id,
    )
    .await?;
    Ok(crate::api::jsonapi::json_body(&RefreshStarted {
        message: "Started refresh for Shipping line",
    }))
}
