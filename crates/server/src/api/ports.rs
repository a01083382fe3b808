//! `/v2/ports`: the embedded port list (UN/LOCODE, coordinates, IANA time zone).

use crate::api::extract::Path;
use tidemark_geo::reference::{Port, PortFilter};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::error::{ApiError, ErrorDocument};
use crate::api::jsonapi::{Document, ListDocument, QueryParams, included_object, resource_object};
use crate::app::AppState;
pub use crate::resources::ports::{PortAttributes, PortResource};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(show))
}

const INCLUDES: &[&str] = &["terminals"];

fn port_resource<'a>(state: &'a AppState, port: &'a Port) -> PortResource<'a> {
    PortResource {
        port,
        terminals: state.reference.terminals_at_port(&port.locode),
    }
}

/// List ports.
///
/// Filters: `filter[code]` (UN/LOCODE), `filter[name]` (name prefix), `filter[country_code]`.
#[utoipa::path(
    get, path = "/v2/ports", tag = "Ports",
    params(
        ("filter[code]" = Option<String>, Query, description = "UN/LOCODE, exact"),
        ("filter[name]" = Option<String>, Query, description = "Name prefix, case-insensitive"),
        ("filter[country_code]" = Option<String>, Query, description = "ISO 3166-1 alpha-2"),
        ("include" = Option<String>, Query, description = "`terminals`"),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, body = ListDocument<PortAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    query: QueryParams,
) -> Result<ListDocument<PortAttributes>, ApiError> {
    let page = query.page(crate::api::jsonapi::DEFAULT_PAGE_SIZE)?;
    let includes = query.includes("port", INCLUDES)?;
    let filter = PortFilter {
        code: query.filter("filter[code]").map(str::to_owned),
        name_prefix: query.filter("filter[name]").map(str::to_owned),
        country_code: query
            .filter("filter[country_code]")
            .or_else(|| query.filter("filter[country]"))
            .map(str::to_owned),
    };
    let ports = state.reference.ports(&filter);
    let base = &state.config.public_url;
    let shown: Vec<PortResource<'_>> = page
        .slice(&ports)
        .iter()
        .map(|port| port_resource(&state, port))
        .collect();
    let included = if includes.contains("terminals") {
        terminals_of(&state, &shown)
    } else {
        Vec::new()
    };
    let total = ports.len() as u64;
    Ok(ListDocument::page(
        shown
            .iter()
            .map(|port| resource_object(port, base))
            .collect(),
        included,
        &query,
        base,
        page,
        total,
    ))
}

/// Get a port by its id or its UN/LOCODE.
#[utoipa::path(
    get, path = "/v2/ports/{id}", tag = "Ports",
    params(
        ("id" = String, Path, description = "Port id (UUID) or UN/LOCODE"),
        ("include" = Option<String>, Query, description = "`terminals`"),
    ),
    responses(
        (status = 200, body = Document<PortAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<Document<PortAttributes>, ApiError> {
    let includes = query.includes("port", INCLUDES)?;
    let port = state.reference.port(&id).ok_or(ApiError::NotFound)?;
    let resource = port_resource(&state, port);
    let included = if includes.contains("terminals") {
        terminals_of(&state, std::slice::from_ref(&resource))
    } else {
        Vec::new()
    };
    Ok(Document::new(
        resource_object(&resource, &state.config.public_url),
        included,
    ))
}

fn terminals_of(
    state: &AppState,
    ports: &[PortResource<'_>],
) -> Vec<crate::api::jsonapi::Included> {
    ports
        .iter()
        .flat_map(|port| port.terminals.iter())
        .map(|terminal| {
            included_object(
                &crate::resources::terminals::TerminalResource {
                    terminal,
                    port_id: state
                        .reference
                        .port_by_locode(&terminal.port_locode)
                        .map(|p| p.id),
                },
                &state.config.public_url,
            )
        })
        .collect()
}
