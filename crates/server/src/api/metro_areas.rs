//! `/v2/metro_areas/{id}`: the metro areas of the embedded ports (each port's city).

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::error::{ApiError, ErrorDocument};
use crate::api::extract::Path;
use crate::api::jsonapi::{Document, resource_object};
use crate::app::AppState;
pub use crate::resources::metro_areas::{MetroAreaAttributes, MetroAreaResource};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show))
}

/// Get a metro area by its id or its UN/LOCODE.
#[utoipa::path(
    get, path = "/v2/metro_areas/{id}", tag = "Metro Areas",
    params(("id" = String, Path, description = "Metro area id (UUID) or UN/LOCODE")),
    responses(
        (status = 200, body = Document<MetroAreaAttributes>, content_type = "application/vnd.api+json"),
        (status = 401, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 404, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 429, body = ErrorDocument, content_type = "application/vnd.api+json"),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    Path(id): Path<String>,
) -> Result<Document<MetroAreaAttributes>, ApiError> {
    let port = state.reference.metro_area(&id).ok_or(ApiError::NotFound)?;
    Ok(Document::new(
        resource_object(&MetroAreaResource { port }, &state.config.public_url),
        Vec::new(),
    ))
}
