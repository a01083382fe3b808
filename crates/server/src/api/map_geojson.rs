//! `/v2/containers/{id}/map_geojson`: the container's route as a GeoJSON FeatureCollection
//! (spec §2.12), shaped like Terminal49's. Not a JSON:API document.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use tidemark_domain::ContainerId;
use tidemark_geo::map::{Longitudes, MapOptions, build_map};
use tidemark_geo::searoute::SeaRouter;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument};
use crate::api::extract::Path;
use crate::app::AppState;
use crate::use_cases::vessels::map::container_map_input;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(map_geojson))
}

/// The container's route map: ports, past vessel tracks, the vessel at sea, and the
/// estimated route ahead. Empty when the route is not known yet.
#[utoipa::path(
    get, path = "/v2/containers/{id}/map_geojson", tag = "Containers",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, description = "A GeoJSON FeatureCollection", content_type = "application/json"),
        (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn map_geojson(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = Uuid::parse_str(&id)
        .map(ContainerId)
        .map_err(|_| ApiError::NotFound)?;
    let input = container_map_input(&state, principal.account_id, id).await?;
    // Routing is CPU work of a few milliseconds at most: not worth a blocking thread.
    // Lines crossing ±180° are cut there (RFC 7946 §3.1.9), each part still a LineString.
    let options = MapOptions {
        longitudes: Longitudes::Split,
        ..MapOptions::default()
    };
    let map = build_map(&input, SeaRouter::embedded(), &options);
    // Serialized straight from the typed map, so property order stays Terminal49's.
    let body = serde_json::to_vec(&map)
        .map_err(|e| ApiError::Internal(anyhow::Error::new(e).context("serializing a map")))?;
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response())
}
