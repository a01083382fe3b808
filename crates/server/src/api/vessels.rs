//! `/v2/vessels`: a vessel by id or IMO with its latest AIS position (and its stored track
//! over a window), and its estimated future positions to a port.

use chrono::{DateTime, Utc};
use tidemark_geo::future::FutureError;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument};
use crate::api::extract::Path;
use crate::api::jsonapi::{Document, QueryParams, resource_object};
use crate::app::AppState;
pub use crate::resources::vessels::vessel_objects;
use crate::resources::vessels::{PositionObject, VesselAttributes, VesselResource};
use crate::use_cases::vessels::future::{FutureFailure, Start, future_positions};
use crate::use_cases::vessels::vessel_with_track;

/// The longest positions window served at once.
const MAX_WINDOW_DAYS: i64 = 31;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(show))
        .routes(routes!(future))
        .routes(routes!(future_with_coordinates))
}

/// A closed time range.
type Window = (DateTime<Utc>, DateTime<Utc>);

/// `show_positions[from_timestamp]` and `[to_timestamp]`: both or neither, in order, at
/// most a month apart.
fn positions_window(query: &QueryParams) -> Result<Option<Window>, ApiError> {
    const FROM: &str = "show_positions[from_timestamp]";
    const TO: &str = "show_positions[to_timestamp]";
    let from = query.time(FROM)?;
    let to = query.time(TO)?;
    match (from, to) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(ApiError::parameter(
            TO,
            "missing_parameter",
            format!("{TO} is required with {FROM}."),
        )),
        (None, Some(_)) => Err(ApiError::parameter(
            FROM,
            "missing_parameter",
            format!("{FROM} is required with {TO}."),
        )),
        (Some(from), Some(to)) if to < from => Err(ApiError::parameter(
            TO,
            "invalid_range",
            format!("{TO} must not be before {FROM}."),
        )),
        (Some(from), Some(to)) if to - from > chrono::Duration::days(MAX_WINDOW_DAYS) => {
            Err(ApiError::parameter(
                TO,
                "invalid_range",
                format!("the positions window may span at most {MAX_WINDOW_DAYS} days."),
            ))
        }
        (Some(from), Some(to)) => Ok(Some((from, to))),
    }
}

/// Get a vessel by id or IMO number, with its stored positions over a window when asked.
#[utoipa::path(
    get, path = "/v2/vessels/{id}", tag = "Vessels",
    params(
        ("id" = String, Path, description = "The vessel's id, or its seven-digit IMO number"),
        ("show_positions[from_timestamp]" = Option<String>, Query),
        ("show_positions[to_timestamp]" = Option<String>, Query),
    ),
    responses(
        (status = 200, body = Document<VesselAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    _principal: Principal,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<Document<VesselAttributes>, ApiError> {
    let window = positions_window(&query)?;
    let (vessel, track) = vessel_with_track(&state, &id, window).await?;
    let resource = VesselResource {
        vessel: &vessel,
        positions: track.map(|t| t.iter().map(PositionObject::from).collect()),
    };
    Ok(Document::new(
        resource_object(&resource, &state.config.public_url),
        Vec::new(),
    ))
}

fn required_port(query: &QueryParams, name: &str) -> Result<Uuid, ApiError> {
    query.id(name)?.ok_or_else(|| {
        ApiError::parameter(
            name,
            "missing_parameter",
            format!("{name} is required: the id of a port."),
        )
    })
}

fn required_coordinate(query: &QueryParams, name: &str, limit: f64) -> Result<f64, ApiError> {
    let Some(text) = query.filter(name) else {
        return Err(ApiError::parameter(
            name,
            "missing_parameter",
            format!("{name} is required."),
        ));
    };
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && v.abs() <= limit)
        .ok_or_else(|| {
            ApiError::parameter(
                name,
                "invalid_parameter",
                format!("{name} must be a number between -{limit} and {limit}; got {text:?}."),
            )
        })
}

impl From<FutureFailure> for ApiError {
    fn from(failure: FutureFailure) -> Self {
        match failure {
            FutureFailure::UnknownVessel | FutureFailure::UnknownPort(_) => Self::NotFound,
            FutureFailure::NoPosition => {
                Self::Invalid(vec![crate::api::error::FieldError::parameter(
                    "latitude",
                    "no_position",
                    "The vessel has no known position: use future_positions_with_coordinates.",
                )])
            }
            FutureFailure::Estimate(FutureError::InvalidCoordinate { .. }) => {
                Self::parameter("latitude", "invalid_parameter", failure.to_string())
            }
            FutureFailure::Estimate(FutureError::NoRoute) => {
                Self::Invalid(vec![crate::api::error::FieldError::parameter(
                    "port_id",
                    "no_sea_route",
                    "There is no sea route from the vessel to this port.",
                )])
            }
            FutureFailure::Estimate(error @ FutureError::InvalidOptions(_)) => {
                Self::Internal(anyhow::Error::new(error))
            }
            FutureFailure::Store(error) => error.into(),
        }
    }
}

async fn respond_future(
    state: &AppState,
    principal: &Principal,
    id: &str,
    query: &QueryParams,
    start: Start,
    self_path: &str,
) -> Result<Document<VesselAttributes>, ApiError> {
    let port = required_port(query, "port_id")?;
    let previous = required_port(query, "previous_port_id")?;
    let (vessel, positions) = future_positions(
        state,
        state.config.ais.service_speed_knots,
        principal.account_id,
        id,
        port,
        previous,
        start,
    )
    .await?;
    let resource = VesselResource {
        vessel: &vessel,
        positions: Some(positions.iter().map(PositionObject::from).collect()),
    };
    let base = &state.config.public_url;
    let mut document = Document::new(resource_object(&resource, base), Vec::new());
    document.links.self_ = format!("{base}/v2/vessels/{}/{self_path}", vessel.id);
    Ok(document)
}

/// Estimated positions from the vessel's last known position to a port, along the sea
/// route.
#[utoipa::path(
    get, path = "/v2/vessels/{id}/future_positions", tag = "Vessels",
    params(
        ("id" = String, Path, description = "The vessel's id, or its IMO number"),
        ("port_id" = Uuid, Query, description = "The destination port"),
        ("previous_port_id" = Uuid, Query, description = "The port the vessel left"),
    ),
    responses(
        (status = 200, body = Document<VesselAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 422, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn future(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<Document<VesselAttributes>, ApiError> {
    respond_future(
        &state,
        &principal,
        &id,
        &query,
        Start::LastKnown,
        "future_positions",
    )
    .await
}

/// Estimated positions from a given position to a port, along the sea route.
#[utoipa::path(
    get, path = "/v2/vessels/{id}/future_positions_with_coordinates", tag = "Vessels",
    params(
        ("id" = String, Path, description = "The vessel's id, or its IMO number"),
        ("port_id" = Uuid, Query, description = "The destination port"),
        ("previous_port_id" = Uuid, Query, description = "The port the vessel left"),
        ("latitude" = f64, Query, description = "Starting latitude"),
        ("longitude" = f64, Query, description = "Starting longitude"),
    ),
    responses(
        (status = 200, body = Document<VesselAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 422, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn future_with_coordinates(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<Document<VesselAttributes>, ApiError> {
    let mut errors = Vec::new();
    let mut take = |result: Result<f64, ApiError>| match result {
        Ok(v) => v,
        Err(ApiError::BadRequest(mut e)) => {
            errors.append(&mut e);
            0.0
        }
        Err(_) => 0.0,
    };
    let latitude = take(required_coordinate(&query, "latitude", 90.0));
    let longitude = take(required_coordinate(&query, "longitude", 180.0));
    if !errors.is_empty() {
        return Err(ApiError::BadRequest(errors));
    }
    respond_future(
        &state,
        &principal,
        &id,
        &query,
        Start::At {
            latitude,
            longitude,
        },
        "future_positions_with_coordinates",
    )
    .await
}
