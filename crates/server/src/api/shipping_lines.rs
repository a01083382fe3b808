//! `/v2/shipping_lines`: the ocean carriers Tidemark knows, and what each can track.

use crate::api::extract::Path;
use serde::Serialize;
use tidemark_geo::reference::ShippingLine;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::error::{ApiError, ErrorDocument};
use crate::api::jsonapi::{
    DEFAULT_PAGE_SIZE, Document, ListDocument, QueryParams, Resource, resource_object,
};
use crate::app::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(show))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ShippingLineAttributes {
    /// Standard Carrier Alpha Code.
    pub scac: String,
    pub name: String,
    pub short_name: String,
    /// Other SCACs accepted in tracking requests for this line.
    pub alternative_scacs: Vec<String>,
    pub bill_of_lading_tracking_support: bool,
    pub booking_number_tracking_support: bool,
    pub container_number_tracking_support: bool,
    pub tracking_url: Option<String>,
    /// Not known for any line yet; kept for Terminal49 compatibility.
    pub contact_url: Option<String>,
}

impl Resource for ShippingLine {
    const TYPE: &'static str = "shipping_line";
    const PATH: &'static str = "shipping_lines";
    type Attributes = ShippingLineAttributes;

    fn id(&self) -> String {
        self.id.to_string()
    }

    fn attributes(&self) -> ShippingLineAttributes {
        ShippingLineAttributes {
            scac: self.scac.clone(),
            name: self.name.clone(),
            short_name: self.short_name.clone(),
            alternative_scacs: self.alternative_scacs.clone(),
            bill_of_lading_tracking_support: self.bill_of_lading_tracking_support,
            booking_number_tracking_support: self.booking_number_tracking_support,
            container_number_tracking_support: self.container_number_tracking_support,
            tracking_url: self.tracking_url.clone(),
            contact_url: None,
        }
    }
}

/// List shipping lines, by SCAC.
#[utoipa::path(
    get, path = "/v2/shipping_lines", tag = "Shipping lines",
    params(("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query)),
    responses(
        (status = 200, body = ListDocument<ShippingLineAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    query: QueryParams,
) -> Result<ListDocument<ShippingLineAttributes>, ApiError> {
    let page = query.page(DEFAULT_PAGE_SIZE)?;
    let lines = state.reference.shipping_lines();
    let base = &state.config.public_url;
    let total = lines.len() as u64;
    Ok(ListDocument::page(
        page.slice(lines)
            .iter()
            .map(|line| resource_object(line, base))
            .collect(),
        Vec::new(),
        &query,
        base,
        page,
        total,
    ))
}

/// Get a shipping line by id or SCAC.
#[utoipa::path(
    get, path = "/v2/shipping_lines/{id}", tag = "Shipping lines",
    params(("id" = String, Path, description = "Shipping line id (UUID) or SCAC")),
    responses(
        (status = 200, body = Document<ShippingLineAttributes>),
        (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    Path(id): Path<String>,
) -> Result<Document<ShippingLineAttributes>, ApiError> {
    let line = state
        .reference
        .shipping_line(&id)
        .ok_or(ApiError::NotFound)?;
    Ok(Document::new(
        resource_object(line, &state.config.public_url),
        Vec::new(),
    ))
}
