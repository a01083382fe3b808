//! Operations endpoints, outside `/v2` and without authentication: liveness, readiness
//! and Prometheus metrics.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    status: &'static str,
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "Operations", responses((status = 200, body = Health)))]
async fn healthz() -> Response {
    crate::api::jsonapi::json_body(&Health { status: "ok" })
}

/// The process can serve: migrations ran (the store exists only once they did) and the
/// database answers.
#[utoipa::path(
    get, path = "/readyz", tag = "Operations",
    responses(
        (status = 200, body = Health),
        (status = 503, body = crate::api::error::ErrorDocument),
    )
)]
async fn readyz(state: AppState) -> Response {
    match state.store.ping().await {
        Ok(()) => crate::api::jsonapi::json_body(&Health { status: "ready" }),
        Err(error) => {
            tracing::warn!(error = ?error, "readiness check failed");
            crate::api::error::ApiError::Unavailable.into_response()
        }
    }
}

/// Prometheus text format. Job-queue and carrier gauges are read from the database at
/// scrape time so every process reports the shared queue and carriers.
#[utoipa::path(
    get, path = "/metrics", tag = "Operations",
    responses((status = 200, description = "Prometheus text exposition format", content_type = "text/plain"))
)]
async fn metrics(state: AppState) -> Response {
    match state.store.job_queue_stats(state.clock.now()).await {
        Ok(stats) => {
            #[expect(clippy::cast_precision_loss, reason = "gauges are approximate")]
            {
                metrics::gauge!("tidemark_jobs_queued").set(stats.queued as f64);
                metrics::gauge!("tidemark_jobs_running").set(stats.running as f64);
                let age = stats.oldest_due_at.map_or(0.0, |due| {
                    (state.clock.now() - due).num_milliseconds().max(0) as f64 / 1000.0
                });
                metrics::gauge!("tidemark_jobs_oldest_due_age_seconds").set(age);
            }
        }
        Err(error) => tracing::warn!(error = ?error, "cannot read job queue stats"),
    }
    // Each configured carrier's health as the database has it (credentials refused,
    // circuit open, rate limited), so every process reports the shared state.
    if let Err(error) = crate::use_cases::tracking::limits::export_gauges(&state.engine()).await {
        tracing::warn!(error = ?error, "cannot read the carriers' states");
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
        .into_response()
}
