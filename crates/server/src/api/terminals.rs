//! `/v2/terminals/{id}`: the seed set of container terminals.

use crate::api::extract::Path;
use serde::Serialize;
use tidemark_geo::reference::Terminal;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::error::{ApiError, ErrorDocument};
use crate::api::jsonapi::{
    Document, QueryParams, Relationships, Resource, ResourceIdentifier, included_object,
    resource_object,
};
use crate::api::ports::PortResource;
use crate::app::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TerminalAttributes {
    pub id: String,
    pub name: String,
    pub nickname: Option<String>,
    /// CBP FIRMS code.
    pub firms_code: Option<String>,
    pub smdg_code: Option<String>,
    pub bic_facility_code: Option<String>,
    pub street: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub state_abbr: Option<String>,
    pub zip: Option<String>,
    pub country: Option<String>,
    pub facility_type: String,
}

pub struct TerminalResource<'a> {
    pub terminal: &'a Terminal,
    pub port_id: Option<Uuid>,
}

impl Resource for TerminalResource<'_> {
    const TYPE: &'static str = "terminal";
    const PATH: &'static str = "terminals";
    type Attributes = TerminalAttributes;

    fn id(&self) -> String {
        self.terminal.id.to_string()
    }

    fn attributes(&self) -> TerminalAttributes {
        let t = self.terminal;
        TerminalAttributes {
            id: t.id.to_string(),
            name: t.name.clone(),
            nickname: t.nickname.clone(),
            firms_code: t.firms_code.clone(),
            smdg_code: t.smdg_code.clone(),
            bic_facility_code: t.bic_facility_code.clone(),
            street: t.street.clone(),
            city: t.city.clone(),
            state: t.state.clone(),
            state_abbr: t.state_abbr.clone(),
            zip: t.zip.clone(),
            country: t.country.clone(),
            facility_type: t.facility_type.clone(),
        }
    }

    fn relationships(&self) -> Relationships {
        Relationships::default().one(
            "port",
            self.port_id.map(|id| ResourceIdentifier::new("port", id)),
        )
    }
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
