//! `/v2/api_keys`: an account's own keys. The secret appears once, in the response that
//! creates it; listings show only the prefix.

use crate::api::extract::Path;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tidemark_domain::{ApiKey, ApiKeyId, ApiKeyScope};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument};
use crate::api::jsonapi::{
    BodyType, DEFAULT_PAGE_SIZE, Document, JsonApiBody, ListDocument, QueryParams, Resource,
    resource_object, timestamp,
};
use crate::app::AppState;
use crate::use_cases::accounts;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(revoke))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeyAttributes {
    /// The first characters of the key, to recognise it.
    pub prefix: String,
    /// `read_only` or `read_write`.
    pub scope: &'static str,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "timestamp::option")]
    pub revoked_at: Option<DateTime<Utc>>,
    /// The whole key: only in the response that creates it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

struct ApiKeyResource<'a> {
    key: &'a ApiKey,
    secret: Option<String>,
}

impl Resource for ApiKeyResource<'_> {
    const TYPE: &'static str = "api_key";
    const PATH: &'static str = "api_keys";
    type Attributes = ApiKeyAttributes;

    fn id(&self) -> String {
        self.key.id.to_string()
    }

    fn attributes(&self) -> ApiKeyAttributes {
        ApiKeyAttributes {
            prefix: self.key.prefix.clone(),
            scope: self.key.scope.as_str(),
            created_at: self.key.created_at,
            revoked_at: self.key.revoked_at,
            key: self.secret.clone(),
        }
    }
}

/// Body of `POST /v2/api_keys`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewApiKey {
    /// `read_only` or `read_write` (the default).
    #[serde(default)]
    pub scope: Option<String>,
}

impl BodyType for NewApiKey {
    const TYPE: &'static str = "api_key";
}

/// List the calling account's API keys, newest first.
#[utoipa::path(
    get, path = "/v2/api_keys", tag = "API keys",
    params(("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query)),
    responses(
        (status = 200, body = ListDocument<ApiKeyAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    principal: Principal,
    query: QueryParams,
) -> Result<ListDocument<ApiKeyAttributes>, ApiError> {
    let page = query.page(DEFAULT_PAGE_SIZE)?;
    let keys = state.store.list_api_keys(principal.account_id).await?;
    let base = &state.config.public_url;
    let total = keys.len() as u64;
    Ok(ListDocument::page(
        page.slice(&keys)
            .iter()
            .map(|key| resource_object(&ApiKeyResource { key, secret: None }, base))
            .collect(),
        Vec::new(),
        &query,
        base,
        page,
        total,
    ))
}

/// Create an API key for the calling account. The response is the only place the whole
/// key appears.
#[utoipa::path(
    post, path = "/v2/api_keys", tag = "API keys",
    request_body(content = NewApiKey, description = "`{data: {type: \"api_key\", attributes: {scope}}}`"),
    responses(
        (status = 201, body = Document<ApiKeyAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 409, body = ErrorDocument),
        (status = 413, body = ErrorDocument), (status = 415, body = ErrorDocument),
        (status = 422, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn create(
    state: AppState,
    principal: Principal,
    body: JsonApiBody<NewApiKey>,
) -> Result<Response, ApiError> {
    let scope = match body.attributes.scope.as_deref() {
        None => ApiKeyScope::ReadWrite,
        Some(value) => ApiKeyScope::parse(value).ok_or_else(|| {
            ApiError::Invalid(vec![crate::api::error::FieldError::pointer(
                "/data/attributes/scope",
                "inclusion",
                format!("Scope {value:?} is not one of \"read_only\", \"read_write\"."),
            )])
        })?,
    };
    let issued = accounts::issue_key(&state, principal.account_id, scope).await?;
    let resource = ApiKeyResource {
        key: &issued.key,
        secret: Some(issued.secret.expose().to_owned()),
    };
    let document = Document::new(
        resource_object(&resource, &state.config.public_url),
        Vec::new(),
    );
    Ok((StatusCode::CREATED, document).into_response())
}

/// Revoke one of the calling account's keys. It stops working at once in this process
/// and within `auth_cache_seconds` everywhere.
#[utoipa::path(
    delete, path = "/v2/api_keys/{id}", tag = "API keys",
    params(("id" = Uuid, Path, description = "API key id")),
    responses(
        (status = 204, description = "Revoked"),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn revoke(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id = Uuid::parse_str(&id).map_err(|_| ApiError::NotFound)?;
    accounts::revoke_key(&state, &state.auth, principal.account_id, ApiKeyId(id)).await?;
    Ok(StatusCode::NO_CONTENT)
}
