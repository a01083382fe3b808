//! `/v2/shipments`: what each tracked bill of lading or booking covers.

use axum::response::Response;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Map, Value};
use tidemark_domain::{Container, ContainerStatus, PartyId, Shipment, ShipmentId};
use tidemark_store::{ShipmentFilter, ShipmentSort};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::extract::Path;
use crate::api::jsonapi::{
    BodyType, DEFAULT_PAGE_SIZE, Document, Includes, JsonApiBody, ListDocument, QueryParams,
    json_bytes, resource_object, serialized,
};
use crate::app::AppState;
pub use crate::resources::shipments::{
    ShipmentAttributes, ShipmentResource, customers_of, included_of,
};
use crate::use_cases::tracking::shipments;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(show, update))
        .routes(routes!(stop_tracking))
        .routes(routes!(resume_tracking))
}

const INCLUDES: &[&str] = &[
    "containers",
    "port_of_lading",
    "port_of_discharge",
    "destination",
    "pod_terminal",
    "destination_terminal",
];

fn parse_id(id: &str) -> Result<ShipmentId, ApiError> {
    Uuid::parse_str(id)
        .map(ShipmentId)
        .map_err(|_| ApiError::NotFound)
}

/// `filter[arriving_within_days]`: a whole number of days.
fn arriving_within_days(query: &QueryParams) -> Result<Option<u32>, ApiError> {
    const NAME: &str = "filter[arriving_within_days]";
    query
        .filter(NAME)
        .map(|value| {
            value.trim().parse::<u32>().map_err(|_| {
                ApiError::parameter(
                    NAME,
                    "invalid_filter",
                    format!("{NAME} must be a whole number of days; got {value:?}."),
                )
            })
        })
        .transpose()
}

fn filter_from(query: &QueryParams, now: DateTime<Utc>) -> Result<ShipmentFilter, ApiError> {
    let text = |name: &str| query.filter(name).map(str::to_owned);
    let sort = match query.get("sort") {
        None => ShipmentSort::Newest,
        Some(value) => shipments::sort_named(value).ok_or_else(|| {
            ApiError::parameter(
                "sort",
                "invalid_sort",
                format!("sort must be one of -created_at, pod_eta_at, -pod_eta_at; got {value:?}."),
            )
        })?,
    };
    Ok(ShipmentFilter {
        tag: text("filter[tag]"),
        arriving_between: arriving_within_days(query)?
            .map(|days| shipments::arriving_within(now, days)),
        sort,
        q: text("q"),
        number: text("number").or_else(|| text("filter[number]")),
        tracking_stopped: query.flag("filter[tracking_stopped]")?,
        port_of_lading: text("filter[port_of_lading]").or_else(|| text("filter[pol]")),
        port_of_discharge: text("filter[port_of_discharge]").or_else(|| text("filter[pod]")),
        scac: text("filter[scac]").or_else(|| text("filter[shipping_line]")),
        container_status: query.choice(
            "filter[container_status]",
            ContainerStatus::parse,
            "a container status such as on_ship, available or picked_up",
        )?,
        updated_since: query.time("filter[updated_since]")?,
        customer: query.id("filter[customer_id]")?.map(PartyId),
        custom_fields: Vec::new(),
        pickup: tidemark_store::PickupFilter {
            available_for_pickup: query.flag("filter[available_for_pickup]")?,
            on_hold: query.flag("filter[on_hold]")?,
            pickup_lfd_by: pickup_lfd_by(query, now)?,
        },
    })
}

/// `filter[pickup_lfd_within_days]=N`: containers not yet out whose last free day is at
/// most today (UTC) plus N days.
pub(crate) fn pickup_lfd_by(
    query: &QueryParams,
    now: DateTime<Utc>,
) -> Result<Option<chrono::NaiveDate>, ApiError> {
    const NAME: &str = "filter[pickup_lfd_within_days]";
    query
        .filter(NAME)
        .map(|value| {
            value
                .parse::<u16>()
                .map(|days| now.date_naive() + chrono::Duration::days(i64::from(days)))
                .map_err(|_| {
                    ApiError::parameter(
                        NAME,
                        "invalid_filter",
                        format!(
                            "{NAME} must be a whole number of days (0 to 65535); got {value:?}."
                        ),
                    )
                })
        })
        .transpose()
}

async fn document(
    state: &AppState,
    shipment: &Shipment,
    includes: &Includes,
) -> Result<Document<ShipmentAttributes>, ApiError> {
    let containers = state.store.containers_of_shipment(shipment.id).await?;
    document_with(state, shipment, &containers, includes).await
}

/// The document of a shipment whose containers were read with it.
async fn document_with(
    state: &AppState,
    shipment: &Shipment,
    containers: &[Container],
    includes: &Includes,
) -> Result<Document<ShipmentAttributes>, ApiError> {
    let customers = customers_of(state, std::slice::from_ref(shipment)).await?;
    let resource = ShipmentResource {
        shipment,
        containers,
        customers: &customers,
        core: state,
    };
    let included = included_of(state, includes, std::slice::from_ref(&resource)).await?;
    Ok(Document::new(
        resource_object(&resource, &state.config.public_url),
        included,
    ))
}

/// List shipments, newest first.
#[utoipa::path(
    get, path = "/v2/shipments", tag = "Shipments",
    params(
        ("q" = Option<String>, Query, description = "Substring of the bill of lading, a ref number or a container number"),
        ("number" = Option<String>, Query, description = "The original request number"),
        ("filter[tracking_stopped]" = Option<bool>, Query),
        ("filter[port_of_lading]" = Option<String>, Query, description = "UN/LOCODE"),
        ("filter[port_of_discharge]" = Option<String>, Query, description = "UN/LOCODE"),
        ("filter[scac]" = Option<String>, Query),
        ("filter[container_status]" = Option<String>, Query, description = "Shipments with a container in this status"),
        ("filter[updated_since]" = Option<String>, Query, description = "ISO 8601"),
        ("filter[tag]" = Option<String>, Query, description = "Shipments carrying this tag (ignoring case)"),
        ("filter[arriving_within_days]" = Option<u32>, Query, description = "Shipments not arrived yet whose ETA at the port of discharge is within this many days from now"),
        ("filter[available_for_pickup]" = Option<bool>, Query, description = "Shipments with a container available (true) or not (false)"),
        ("filter[on_hold]" = Option<bool>, Query, description = "Shipments with a container held (true) or with one not held (false) at the terminal"),
        ("filter[pickup_lfd_within_days]" = Option<u32>, Query, description = "Shipments with a container not yet out whose last free day is at most this many days from today (UTC); past ones included"),
        ("sort" = Option<String>, Query, description = "-created_at (default, newest first), pod_eta_at (soonest ETA first) or -pod_eta_at; shipments without an ETA last"),
        ("filter[custom_fields][api_slug]" = Option<String>, Query, description = "a custom field value; put the field's api_slug in place of api_slug (up to 5 such filters)"),
        ("include" = Option<String>, Query, description = "containers, port_of_lading, port_of_discharge, destination"),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, body = ListDocument<ShipmentAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    principal: Principal,
    query: QueryParams,
) -> Result<ListDocument<ShipmentAttributes>, ApiError> {
    let page = query.page(DEFAULT_PAGE_SIZE)?;
    let includes = query.includes("shipment", INCLUDES)?;
    let mut filter = filter_from(&query, state.clock.now())?;
    filter.custom_fields = super::custom_fields::list_filters(
        &state,
        principal.account_id,
        tidemark_domain::custom_fields::EntityType::Shipment,
        &query,
    )
    .await?;
    let found = state
        .store
        .list_shipments(principal.account_id, &filter, page.into())
        .await?;
    let ids: Vec<_> = found.items.iter().map(|s| s.id).collect();
    let all_containers = state.store.containers_of_shipments(&ids).await?;
    let containers: Vec<Vec<Container>> = found
        .items
        .iter()
        .map(|shipment| {
            all_containers
                .iter()
                .filter(|c| c.shipment_id == shipment.id)
                .cloned()
                .collect()
        })
        .collect();
    let customers = customers_of(&state, &found.items).await?;
    let resources: Vec<ShipmentResource<'_>> = found
        .items
        .iter()
        .zip(&containers)
        .map(|(shipment, containers)| ShipmentResource {
            shipment,
            containers,
            customers: &customers,
            core: &state,
        })
        .collect();
    let base = &state.config.public_url;
    Ok(ListDocument::page(
        resources.iter().map(|r| resource_object(r, base)).collect(),
        included_of(&state, &includes, &resources).await?,
        &query,
        base,
        page,
        found.total,
    ))
}

/// Get a shipment.
#[utoipa::path(
    get, path = "/v2/shipments/{id}", tag = "Shipments",
    params(("id" = Uuid, Path), ("include" = Option<String>, Query, description = "containers, port_of_lading, port_of_discharge, destination")),
    responses(
        (status = 200, body = Document<ShipmentAttributes>),
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
) -> Result<Response, ApiError> {
    let includes = query.includes("shipment", INCLUDES)?;
    let read = state
        .store
        .shipment_with_containers(principal.account_id, parse_id(&id)?)
        .await?;
    // The document is kept with the read it was made from, and served again while the
    // store hands out that read, i.e. until the shipment or its containers change (the
    // event ids included containers list change only with a tracking result, which
    // rewrites the shipment). Not with a customer: its name comes from another read, which
    // may change on its own.
    let key = includes.key();
    if let Some(bytes) = read.rendering(&key) {
        return Ok(json_bytes(bytes));
    }
    let document = document_with(&state, &read.shipment, &read.containers, &includes).await?;
    let bytes = serialized(&document)?;
    if read.shipment.customer_id.is_none() {
        read.keep_rendering(&key, bytes.clone());
    }
    Ok(json_bytes(bytes))
}

/// Attributes of `PATCH /v2/shipments/{id}`: only `ref_numbers` and `tags`.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct ShipmentChanges(Map<String, Value>);

impl BodyType for ShipmentChanges {
    const TYPE: &'static str = "shipment";
}

/// The documented shape of [`ShipmentChanges`].
#[derive(ToSchema)]
#[expect(
    dead_code,
    reason = "describes the request body in the OpenAPI document only"
)]
pub struct ShipmentPatch {
    ref_numbers: Option<Vec<String>>,
    /// Replaces all tags.
    tags: Option<Vec<String>>,
}

/// A replacing list attribute: an array of strings, or null for none.
pub(crate) fn string_list(
    name: &str,
    value: &Value,
    errors: &mut Vec<FieldError>,
) -> Option<Vec<String>> {
    let list = match value {
        Value::Null => Some(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => None,
    };
    if list.is_none() {
        errors.push(FieldError::pointer(
            format!("/data/attributes/{name}"),
            "invalid",
            format!("{name} must be an array of strings"),
        ));
    }
    list
}

/// Change a shipment's ref numbers or tags.
#[utoipa::path(
    patch, path = "/v2/shipments/{id}", tag = "Shipments",
    params(("id" = Uuid, Path)),
    request_body(content = ShipmentPatch),
    responses(
        (status = 200, body = Document<ShipmentAttributes>),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 422, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn update(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    body: JsonApiBody<ShipmentChanges>,
) -> Result<Document<ShipmentAttributes>, ApiError> {
    let id = parse_id(&id)?;
    let mut errors = Vec::new();
    let (mut ref_numbers, mut tags) = (None, None);
    for (name, value) in &body.attributes.0 {
        match name.as_str() {
            "ref_numbers" => ref_numbers = string_list(name, value, &mut errors),
            "tags" => tags = string_list(name, value, &mut errors),
            _ => errors.push(FieldError::pointer(
                format!("/data/attributes/{name}"),
                "not_editable",
                format!("{name} cannot be changed; only ref_numbers and tags can"),
            )),
        }
    }
    if !errors.is_empty() {
        return Err(ApiError::Invalid(errors));
    }
    let shipment = shipments::edit(&state, principal.account_id, id, ref_numbers, tags).await?;
    document(&state, &shipment, &Includes::default()).await
}

/// Stop tracking a shipment: no more polls or notifications; its history stays.
#[utoipa::path(
    patch, path = "/v2/shipments/{id}/stop_tracking", tag = "Shipments",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = Document<ShipmentAttributes>),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn stop_tracking(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Document<ShipmentAttributes>, ApiError> {
    let shipment = shipments::stop_tracking(
        &state.engine(),
        principal.account_id,
        parse_id(&id)?,
        principal.key_id,
    )
    .await?;
    document(&state, &shipment, &Includes::default()).await
}

/// Resume tracking a stopped shipment.
#[utoipa::path(
    patch, path = "/v2/shipments/{id}/resume_tracking", tag = "Shipments",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = Document<ShipmentAttributes>),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn resume_tracking(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Document<ShipmentAttributes>, ApiError> {
    let shipment =
        shipments::resume_tracking(&state.engine(), principal.account_id, parse_id(&id)?).await?;
    document(&state, &shipment, &Includes::default()).await
}
