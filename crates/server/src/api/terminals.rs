//! `/v2/terminals/{id}`: the seed set of container terminals.

use crate::api::extract::Path;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::error::{ApiError, ErrorDocument};
use crate::api::jsonapi::{Document, QueryParams, included_object, resource_object};
use crate::app::AppState;
use crate::resources::ports::PortResource;
pub use crate::resources::terminals::{TerminalAttributes, TerminalResource};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show))
}

/// Get a terminal.
#[utoipa::path(
    get, path = "/v2/terminals/{id}", tag = "Terminals",
    params(
        ("id" = Uuid, Path, description = "Terminal id"),
        ("include" = Option<String>, Query, description = "`port`"),
    ),
    responses(
        (status = 200, body = Document<TerminalAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<Document<TerminalAttributes>, ApiError> {
    let includes = query.includes("terminal", &["port"])?;
    let terminal = Uuid::parse_str(&id)
        .ok()
        .and_then(|id| state.reference.terminal(id))
        .ok_or(ApiError::NotFound)?;
    let port = state.reference.port_by_locode(&terminal.port_locode);
    let resource = TerminalResource {
        terminal,
        port_id: port.map(|port| port.id),
    };
    let base = &state.config.public_url;
    let included = match port {
        Some(port) if includes.contains("port") => vec![included_object(
            &PortResource {
                port,
                terminals: state.reference.terminals_at_port(&port.locode),
            },
            base,
        )],
        _ => Vec::new(),
    };
    Ok(Document::new(resource_object(&resource, base), included))
}
