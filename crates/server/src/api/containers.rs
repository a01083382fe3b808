//! `/v2/containers`: each container's status and milestones, and its transport events.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tidemark_domain::{
    Container, ContainerId, ContainerStatus, PartyId, Shipment, TransportEventName,
};

use tidemark_store::{ContainerFilter, PageRequest, TransportEventFilter};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::extract::Path;
use crate::api::jsonapi::Included;
use crate::api::jsonapi::{
    BodyType, DEFAULT_PAGE_SIZE, Document, JsonApiBody, ListDocument, QueryParams, included_object,
    resource_object,
};
use crate::api::shipments::ShipmentResource;
use crate::api::vessels::vessel_objects;
use crate::app::AppState;
pub use crate::resources::containers::{
    ContainerAttributes, ContainerResource, TransportEventAttributes, TransportEventResource,
    VesselIds, event_ids_of, events_in, source_events_of, vessels_of,
};
use crate::resources::ports::port_objects;
use crate::resources::terminals::{terminal_object, terminal_objects};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, update_identified_in_body))
        .routes(routes!(show, update))
        .routes(routes!(transport_events))
        .routes(routes!(refresh))
}

const INCLUDES: &[&str] = &[
    "shipment",
    "transport_events",
    "pod_terminal",
    "pickup_facility",
];

/// Relationships a container's transport events may include (none by default).
const EVENT_INCLUDES: &[&str] = &["location", "vessel", "terminal"];

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
        ("filter[available_for_pickup]" = Option<bool>, Query),
        ("filter[on_hold]" = Option<bool>, Query, description = "with (true) or without (false) a hold in force at the terminal"),
        ("filter[pickup_lfd_within_days]" = Option<u32>, Query, description = "not yet out, with a last free day at most this many days from today (UTC); past ones included"),
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
        pickup: pickup_filter(&state, &query)?,
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
    let events = event_ids_of(
        &state,
        principal.account_id,
        found.items.iter().map(|c| c.id),
    )
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
                    events: events_in(&events, container.id),
                    core: &state,
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
            core: state,
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
    let ids = event_ids_of(&state, principal.account_id, [container.id]).await?;
    let base = &state.config.public_url;
    let object = resource_object(
        &ContainerResource {
            container: &container,
            shipment: Some(&shipment),
            events: events_in(&ids, container.id),
            core: &state,
        },
        base,
    );
    let mut included = Vec::new();
    if includes.contains("shipment") {
        included.push(shipment_object(&state, &shipment).await?);
    }
    if includes.contains("pod_terminal") {
        included.extend(
            shipment
                .pod_terminal_id
                .and_then(|id| terminal_object(state.reference, id, base)),
        );
    }
    if includes.contains("pickup_facility") && !includes.contains("pod_terminal") {
        included.extend(
            crate::resources::containers::pickup_facility(&container, &shipment)
                .and_then(|id| terminal_object(state.reference, id, base)),
        );
    }
    if includes.contains("transport_events") {
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
        let vessels = vessels_of(&state, &events).await?;
        let sources = source_events_of(&state, &container, &events).await?;
        included.extend(events.iter().map(|event| {
            included_object(
                &TransportEventResource {
                    event,
                    core: &state,
                    vessels: &vessels,
                    sources: &sources,
                },
                base,
            )
        }));
    }
    Ok(Document::new(object, included))
}

/// Attributes of `PATCH /v2/containers/{id}`: only `ref_numbers`, as Terminal49 allows.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct ContainerChanges(Map<String, Value>);

impl BodyType for ContainerChanges {
    const TYPE: &'static str = "container";
}

/// The documented shape of [`ContainerChanges`].
#[derive(ToSchema)]
#[expect(
    dead_code,
    reason = "describes the request body in the OpenAPI document only"
)]
pub struct ContainerPatch {
    /// Replaces all of the container's ref numbers; null or `[]` clears them.
    ref_numbers: Option<Vec<String>>,
}

/// Change a container's ref numbers.
#[utoipa::path(
    patch, path = "/v2/containers/{id}", tag = "Containers",
    params(("id" = Uuid, Path)),
    request_body(content = ContainerPatch),
    responses(
        (status = 200, body = Document<ContainerAttributes>, content_type = "application/vnd.api+json"),
        (status = 400, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 401, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 403, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 404, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 409, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 415, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 422, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 429, body = ErrorDocument, content_type = "application/vnd.api+json"),
    ),
    security(("token" = []))
)]
async fn update(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    body: JsonApiBody<ContainerChanges>,
) -> Result<Document<ContainerAttributes>, ApiError> {
    if let Some(given) = &body.id
        && given.as_str() != Some(id.as_str())
    {
        return Err(ApiError::Conflict {
            code: "id_mismatch",
            detail: "data.id must be the id in the URL.".to_owned(),
        });
    }
    edit(&state, &principal, &id, &body).await
}

/// Change a container's ref numbers, the container named by `data.id` (the form of
/// Terminal49's OpenAPI document, which has no id in the path).
#[utoipa::path(
    patch, path = "/v2/containers", tag = "Containers",
    request_body(content = ContainerPatch, description = "`data.id` names the container"),
    responses(
        (status = 200, body = Document<ContainerAttributes>, content_type = "application/vnd.api+json"),
        (status = 400, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 401, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 403, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 404, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 415, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 422, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 429, body = ErrorDocument, content_type = "application/vnd.api+json"),
    ),
    security(("token" = []))
)]
async fn update_identified_in_body(
    state: AppState,
    principal: Principal,
    body: JsonApiBody<ContainerChanges>,
) -> Result<Document<ContainerAttributes>, ApiError> {
    let Some(id) = body.id.as_ref().and_then(Value::as_str).map(str::to_owned) else {
        return Err(ApiError::Invalid(vec![FieldError::pointer(
            "/data/id",
            "blank",
            "data.id must be the id of the container to change.",
        )]));
    };
    edit(&state, &principal, &id, &body).await
}

async fn edit(
    state: &AppState,
    principal: &Principal,
    id: &str,
    body: &JsonApiBody<ContainerChanges>,
) -> Result<Document<ContainerAttributes>, ApiError> {
    let id = parse_id(id)?;
    let mut errors = Vec::new();
    let mut ref_numbers = None;
    for (name, value) in &body.attributes.0 {
        match name.as_str() {
            "ref_numbers" => {
                ref_numbers = crate::api::shipments::string_list(name, value, &mut errors);
            }
            _ => errors.push(FieldError::pointer(
                format!("/data/attributes/{name}"),
                "not_editable",
                format!("{name} cannot be changed; only ref_numbers can"),
            )),
        }
    }
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    let container = match ref_numbers {
        Some(ref_numbers) => {
            crate::use_cases::tracking::shipments::edit_container(
                state,
                principal.account_id,
                id,
                ref_numbers,
            )
            .await?
        }
        None => state.store.container(principal.account_id, id).await?,
    };
    let shipment = state
        .store
        .shipment(principal.account_id, container.shipment_id)
        .await?;
    let events = event_ids_of(state, principal.account_id, [container.id]).await?;
    Ok(Document::new(
        resource_object(
            &ContainerResource {
                container: &container,
                shipment: Some(&shipment),
                events: events_in(&events, container.id),
                core: state,
            },
            &state.config.public_url,
        ),
        Vec::new(),
    ))
}

/// A container's transport events, in time order.
#[utoipa::path(
    get, path = "/v2/containers/{id}/transport_events", tag = "Containers",
    params(
        ("id" = Uuid, Path),
        ("include" = Option<String>, Query, description = "location, vessel, terminal"),
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
    let includes = query.includes("transport_event", EVENT_INCLUDES)?;
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
    let sources = source_events_of(&state, &container, &found.items).await?;
    let mut included = Vec::new();
    if includes.contains("location") {
        let locodes = found
            .items
            .iter()
            .filter_map(|e| e.location_locode.as_deref());
        included.extend(port_objects(state.reference, locodes, base));
    }
    if includes.contains("vessel") {
        let imos = found.items.iter().filter_map(|e| e.vessel_imo.as_deref());
        included.extend(vessel_objects(&state, imos).await?);
    }
    if includes.contains("terminal") {
        let terminals = found.items.iter().filter_map(|e| e.terminal_id);
        included.extend(terminal_objects(state.reference, terminals, base));
    }
    Ok(ListDocument::page(
        found
            .items
            .iter()
            .map(|event| {
                resource_object(
                    &TransportEventResource {
                        event,
                        core: &state,
                        vessels: &vessels,
                        sources: &sources,
                    },
                    base,
                )
            })
            .collect(),
        included,
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
    match crate::use_cases::tracking::refresh_shipment(
        &state,
        principal.account_id,
        container.shipment_id,
    )
    .await
    {
        Ok(_) => {}
        Err(crate::use_cases::tracking::RefreshError::TrackingStopped) => {
            return Err(ApiError::Invalid(vec![
                crate::api::error::FieldError::pointer(
                    "",
                    "tracking_stopped",
                    "Tracking of this container's shipment is stopped; resume it first.",
                ),
            ]));
        }
        Err(crate::use_cases::tracking::RefreshError::Store(error)) => return Err(error.into()),
    }
    Ok(crate::api::jsonapi::json_body(&RefreshStarted {
        message: "Started refresh for Shipping line",
    }))
}

/// `filter[available_for_pickup]`, `filter[on_hold]` and `filter[pickup_lfd_within_days]`.
fn pickup_filter(
    state: &AppState,
    query: &QueryParams,
) -> Result<tidemark_store::PickupFilter, ApiError> {
    Ok(tidemark_store::PickupFilter {
        available_for_pickup: query.flag("filter[available_for_pickup]")?,
        on_hold: query.flag("filter[on_hold]")?,
        pickup_lfd_by: super::shipments::pickup_lfd_by(query, state.clock.now())?,
    })
}
