//! `/v2/search?query=`: the account's shipments, containers and tracking requests by BL,
//! container, request and reference numbers, in Terminal49's `search_result` shape.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument};
use crate::api::jsonapi::{Page, QueryParams, json_body, timestamp};
use crate::app::AppState;
use crate::use_cases::search::{self, Found, MAX_RESULTS};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show))
}

/// What Terminal49 shows of each match; fields of another kind of match are null.
#[derive(Debug, Serialize, ToSchema)]
pub struct SearchResultAttributes {
    /// `shipment`, `cargo` (a container) or `tracking_request`.
    pub entity_type: &'static str,
    /// BL number, container number or request number.
    pub number: String,
    /// A container's shipment.
    pub shipment_id: Option<String>,
    pub scac: Option<String>,
    pub port_of_lading_name: Option<String>,
    pub port_of_discharge_name: Option<String>,
    pub containers_count: Option<usize>,
    pub tracking_stopped: Option<bool>,
    pub tracking_stopped_reason: Option<String>,
    /// A tracking request's status.
    pub status: Option<&'static str>,
    pub failed_reason: Option<&'static str>,
    pub ref_numbers: Vec<String>,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "timestamp")]
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SearchResult {
    /// The matched shipment's, container's or tracking request's id.
    pub id: String,
    #[serde(rename = "type")]
    #[schema(example = "search_result")]
    pub kind: &'static str,
    pub attributes: SearchResultAttributes,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SearchLinks {
    #[serde(rename = "self")]
    pub self_: String,
    pub current: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SearchDocument {
    pub data: Vec<SearchResult>,
    pub links: SearchLinks,
}

/// Search shipments, containers and tracking requests.
///
/// Matches BL, container, request and reference numbers that start with the query or have
/// a word that does (separators ignored: `po-44 71` finds `PO 4471`). Ranked shipments,
/// then containers, then tracking requests, each newest first; at most 25; a tracking
/// request that created its shipment is left out (the shipment stands for it).
#[utoipa::path(
    get, path = "/v2/search", tag = "Search",
    params(("query" = String, Query, description = "A number, its start, or one of its words")),
    responses(
        (status = 200, body = SearchDocument, content_type = "application/vnd.api+json"),
        (status = 400, body = ErrorDocument, content_type = "application/vnd.api+json",
         description = "`query` is missing or has no letter or digit"),
        (status = 401, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 429, body = ErrorDocument, content_type = "application/vnd.api+json"),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    principal: Principal,
    query: QueryParams,
) -> Result<axum::response::Response, ApiError> {
    let key = query
        .filter("query")
        .and_then(tidemark_store::search_key)
        .ok_or_else(|| {
            ApiError::parameter(
                "query",
                "blank",
                "Query parameter is required: a number or a word of one.",
            )
        })?;
    let found = search::search(&state, principal.account_id, &key).await?;
    let base = &state.config.public_url;
    let links = query.list_links(
        base,
        Page {
            number: 1,
            size: u32::try_from(MAX_RESULTS).unwrap_or(u32::MAX),
        },
        found.len() as u64,
    );
    Ok(json_body(&SearchDocument {
        data: found.iter().map(|f| result(&state, f)).collect(),
        links: SearchLinks {
            self_: links.self_,
            current: links.current,
        },
    }))
}

fn result(state: &AppState, found: &Found) -> SearchResult {
    let port_name = |locode: Option<&String>| {
        locode
            .and_then(|code| state.reference.port_by_locode(code))
            .map(|port| port.name.clone())
    };
    let (id, attributes) = match found {
        Found::Shipment {
            shipment,
            containers_count,
        } => (
            shipment.id.0,
            SearchResultAttributes {
                entity_type: "shipment",
                number: shipment.bill_of_lading_number.clone(),
                shipment_id: None,
                scac: Some(shipment.shipping_line_scac.clone()),
                port_of_lading_name: port_name(shipment.port_of_lading_locode.as_ref()),
                port_of_discharge_name: port_name(shipment.port_of_discharge_locode.as_ref()),
                containers_count: Some(*containers_count),
                tracking_stopped: Some(!shipment.is_tracking()),
                tracking_stopped_reason: shipment.line_tracking_stopped_reason.clone(),
                status: None,
                failed_reason: None,
                ref_numbers: shipment.ref_numbers.clone(),
                created_at: shipment.created_at,
                updated_at: shipment.updated_at,
            },
        ),
        Found::Container {
            container,
            shipment,
        } => (
            container.id.0,
            SearchResultAttributes {
                entity_type: "cargo",
                number: container.number.clone(),
                shipment_id: Some(shipment.id.0.to_string()),
                scac: Some(shipment.shipping_line_scac.clone()),
                port_of_lading_name: None,
                port_of_discharge_name: None,
                containers_count: None,
                tracking_stopped: None,
                tracking_stopped_reason: None,
                status: None,
                failed_reason: None,
                ref_numbers: container.ref_numbers.clone(),
                created_at: container.created_at,
                updated_at: container.updated_at,
            },
        ),
        Found::TrackingRequest(request) => (
            request.id.0,
            SearchResultAttributes {
                entity_type: "tracking_request",
                number: request.request_number.clone(),
                shipment_id: None,
                scac: Some(request.scac.clone()),
                port_of_lading_name: None,
                port_of_discharge_name: None,
                containers_count: None,
                tracking_stopped: None,
                tracking_stopped_reason: None,
                status: Some(request.status.as_str()),
                failed_reason: request
                    .failed_reason
                    .map(tidemark_domain::FailedReason::as_str),
                ref_numbers: request.ref_numbers.clone(),
                created_at: request.created_at,
                updated_at: request.updated_at,
            },
        ),
    };
    SearchResult {
        id: id.to_string(),
        kind: "search_result",
        attributes,
    }
}
