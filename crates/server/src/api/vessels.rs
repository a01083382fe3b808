//! Vessels, their positions and future positions.

use utoipa_axum::router::OpenApiRouter;

use crate::app::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
}
