//! `/v2/parties`: the customers an account tracks shipments for. A tracking request names
//! one in `relationships.customer`; its shipment then carries `customer_name`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tidemark_domain::{Party, PartyId};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::extract::Path;
use crate::api::jsonapi::{
    BodyType, Document, JsonApiBody, ListDocument, QueryParams, Resource, resource_object,
    timestamp,
};
use crate::app::AppState;
use crate::use_cases::parties::{self, PartyError};

/// Terminal49 pages parties 25 at a time.
const PAGE_SIZE: u32 = 25;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, update))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PartyAttributes {
    pub company_name: String,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "timestamp")]
    pub updated_at: DateTime<Utc>,
}

impl Resource for Party {
    const TYPE: &'static str = "party";
    const PATH: &'static str = "parties";
    type Attributes = PartyAttributes;

    fn id(&self) -> String {
        self.id.to_string()
    }

    fn attributes(&self) -> PartyAttributes {
        PartyAttributes {
            company_name: self.company_name.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// Attributes of `POST` and `PATCH /v2/parties`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct PartyInput {
    pub company_name: Option<String>,
}

impl BodyType for PartyInput {
    const TYPE: &'static str = "party";
}

impl From<PartyError> for ApiError {
    fn from(error: PartyError) -> Self {
        let pointer = "/data/attributes/company_name";
        match error {
            PartyError::InvalidName(problem) => Self::Invalid(vec![FieldError::pointer(
                pointer,
                problem.code(),
                problem.to_string(),
            )]),
            PartyError::NameTaken(_) => Self::Invalid(vec![FieldError::pointer(
                pointer,
                "taken",
                error.to_string(),
            )]),
            PartyError::Store(error) => error.into(),
        }
    }
}

fn parse_id(id: &str) -> Result<PartyId, ApiError> {
    Uuid::parse_str(id)
        .map(PartyId)
        .map_err(|_| ApiError::NotFound)
}

/// List the account's parties, newest first.
#[utoipa::path(
    get, path = "/v2/parties", tag = "Parties",
    params(("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query)),
    responses(
        (status = 200, body = ListDocument<PartyAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    principal: Principal,
    query: QueryParams,
) -> Result<ListDocument<PartyAttributes>, ApiError> {
    let page = query.page(PAGE_SIZE)?;
    let found = state
        .store
        .list_parties(principal.account_id, page.into())
        .await?;
    let base = &state.config.public_url;
    Ok(ListDocument::page(
        found
            .items
            .iter()
            .map(|party| resource_object(party, base))
            .collect(),
        Vec::new(),
        &query,
        base,
        page,
        found.total,
    ))
}

/// Create a party. Names are unique within the account, ignoring case.
#[utoipa::path(
    post, path = "/v2/parties", tag = "Parties",
    request_body(content = PartyInput, description = "`{data: {type: \"party\", attributes: {company_name}}}`"),
    responses(
        (status = 201, body = Document<PartyAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 422, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn create(
    state: AppState,
    principal: Principal,
    body: JsonApiBody<PartyInput>,
) -> Result<Response, ApiError> {
    let name = body.attributes.company_name.unwrap_or_default();
    let party = parties::create(&state, principal.account_id, &name).await?;
    let document = Document::new(
        resource_object(&party, &state.config.public_url),
        Vec::new(),
    );
    Ok((StatusCode::CREATED, document).into_response())
}

/// Get a party.
#[utoipa::path(
    get, path = "/v2/parties/{id}", tag = "Parties",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = Document<PartyAttributes>),
        (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Document<PartyAttributes>, ApiError> {
    let party = state
        .store
        .party(principal.account_id, parse_id(&id)?)
        .await?;
    Ok(Document::new(
        resource_object(&party, &state.config.public_url),
        Vec::new(),
    ))
}

/// Rename a party.
#[utoipa::path(
    patch, path = "/v2/parties/{id}", tag = "Parties",
    params(("id" = Uuid, Path)),
    request_body(content = PartyInput, description = "`{data: {type: \"party\", attributes: {company_name}}}`"),
    responses(
        (status = 200, body = Document<PartyAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 422, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn update(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    body: JsonApiBody<PartyInput>,
) -> Result<Document<PartyAttributes>, ApiError> {
    let id = parse_id(&id)?;
    let name = body.attributes.company_name.unwrap_or_default();
    let party = parties::rename(&state, principal.account_id, id, &name).await?;
    Ok(Document::new(
        resource_object(&party, &state.config.public_url),
        Vec::new(),
    ))
}
