//! `/v2/shipping_lines`: the ocean carriers Tidemark knows, and what each can track.

use crate::api::extract::Path;
use serde::Serialize;
use tidemark_domain::carriers::inference::bill_of_lading_prefix;
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
    /// What the line's bill of lading numbers start with (MSC's `MEDU`), from the prefixes
    /// `POST /v2/tracking_requests/infer_number` reads; null when Tidemark knows none.
    pub bol_prefix: Option<&'static str>,
    pub bill_of_lading_tracking_support: bool,
    pub booking_number_tracking_support: bool,
    pub container_number_tracking_support: bool,
    pub tracking_url: Option<String>,
    /// Not known for any line yet; kept for Terminal49 compatibility.
    pub contact_url: Option<String>,
    /// Which container fields tracking this line fills.
    pub provided_data: ProvidedData,
}

/// Which container fields a line's tracking fills, in Terminal49's shape. Tidemark reads
/// every line through DCSA Track & Trace, which carries equipment and milestone events but
/// no weights or last free days, so the answer is the same for every line.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProvidedData {
    pub equipment_type: bool,
    pub equipment_type_notes: &'static str,
    pub equipment_length: bool,
    pub equipment_length_notes: &'static str,
    pub equipment_height: bool,
    pub equipment_height_notes: &'static str,
    pub seal_number: bool,
    pub seal_number_notes: &'static str,
    pub weight_in_lbs: bool,
    pub weight_in_lbs_notes: &'static str,
    pub ssl_lfd: bool,
    pub pod_arrived_at: bool,
    pub pod_arrived_at_notes: &'static str,
    pub pod_discharged_at: bool,
    pub pod_discharged_at_notes: &'static str,
    pub pod_full_out_at: bool,
    pub pod_full_out_at_notes: &'static str,
    pub final_destination_full_out_at: bool,
    pub final_destination_full_out_at_notes: &'static str,
    pub empty_terminated_at: bool,
    pub empty_terminated_at_notes: &'static str,
}

const DCSA_TRACK_AND_TRACE: ProvidedData = ProvidedData {
    equipment_type: true,
    equipment_type_notes: "From the ISO 6346 size-type code of equipment events.",
    equipment_length: true,
    equipment_length_notes: "From the ISO 6346 size-type code of equipment events.",
    equipment_height: true,
    equipment_height_notes: "From the ISO 6346 size-type code of equipment events.",
    seal_number: false,
    seal_number_notes: "Not collected yet.",
    weight_in_lbs: false,
    weight_in_lbs_notes: "DCSA Track & Trace carries no weights.",
    ssl_lfd: false,
    pod_arrived_at: true,
    pod_arrived_at_notes: "",
    pod_discharged_at: true,
    pod_discharged_at_notes: "",
    pod_full_out_at: true,
    pod_full_out_at_notes: "",
    final_destination_full_out_at: true,
    final_destination_full_out_at_notes: "",
    empty_terminated_at: true,
    empty_terminated_at_notes: "",
};

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
            bol_prefix: bill_of_lading_prefix(&self.scac),
            bill_of_lading_tracking_support: self.bill_of_lading_tracking_support,
            booking_number_tracking_support: self.booking_number_tracking_support,
            container_number_tracking_support: self.container_number_tracking_support,
            tracking_url: self.tracking_url.clone(),
            contact_url: None,
            provided_data: DCSA_TRACK_AND_TRACE,
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
