//! Custom field values (interface spec §2.9, §4.2; Terminal49 notes §13): nested under
//! `/v2/shipments/{id}/custom_fields`, `/v2/containers/{id}/custom_fields` and
//! `/v2/tracking_requests/{id}/custom_fields` (shipment fields, copied onto the shipment the
//! request creates), keyed by
//! `api_slug`, and the top-level `/v2/custom_fields` family, which names its entity in
//! `relationships.entity`.
//!
//! Writes need a read-write key (the auth layer answers 403 to a read-only one); another
//! account's entity is 404. A value is checked against its definition's type, validation and
//! options; each failure is a 422 at `/data/attributes/value` naming the rule.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use tidemark_domain::custom_fields::EntityType;
use tidemark_store::{DefinitionRecord, EntityRef, ValueFilter, ValueRecord};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::extract::{Path, parse_uuid};
use crate::api::jsonapi::{
    CONTENT_TYPE, DEFAULT_PAGE_SIZE, Document, ListDocument, QueryParams, Relationships, Resource,
    ResourceIdentifier, ResourceObject, json_body, resource_object, timestamp,
};
use crate::app::AppState;
use crate::resources::custom_fields::DEFINITION_TYPE;
use crate::use_cases::custom_fields::{self, SetOutcome, ShownValue};

pub use crate::resources::custom_fields::VALUE_TYPE;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, update, delete))
        .routes(routes!(list_of_shipment, create_on_shipment))
        .routes(routes!(
            show_of_shipment,
            set_on_shipment,
            delete_of_shipment
        ))
        .routes(routes!(
            list_of_tracking_request,
            create_on_tracking_request
        ))
        .routes(routes!(
            show_of_tracking_request,
            set_on_tracking_request,
            delete_of_tracking_request
        ))
        .routes(routes!(list_of_container, create_on_container))
        .routes(routes!(
            show_of_container,
            set_on_container,
            delete_of_container
        ))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CustomFieldAttributes {
    pub api_slug: String,
    /// Text, number, boolean, a list of option values or `{type, id}`; `null` when cleared.
    #[schema(value_type = Value)]
    pub value: Value,
    /// The value as people read it, under the definition's `default_format`.
    pub display_value: Option<String>,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "timestamp")]
    pub updated_at: DateTime<Utc>,
}

fn entity_type_name(entity_type: EntityType) -> &'static str {
    match entity_type {
        EntityType::Shipment => "shipment",
        EntityType::Container => "container",
        EntityType::TrackingRequest => "tracking_request",
    }
}

impl Resource for ShownValue {
    const TYPE: &'static str = VALUE_TYPE;
    const PATH: &'static str = "custom_fields";
    type Attributes = CustomFieldAttributes;

    fn id(&self) -> String {
        self.record.id.to_string()
    }

    fn attributes(&self) -> CustomFieldAttributes {
        CustomFieldAttributes {
            api_slug: self.record.api_slug.clone(),
            value: self.record.value.clone(),
            display_value: self.display_value.clone(),
            created_at: self.record.created_at,
            updated_at: self.record.updated_at,
        }
    }

    fn relationships(&self) -> Relationships {
        let entity = self.record.entity;
        Relationships::default()
            .one(
                "entity",
                Some(ResourceIdentifier::new(
                    entity_type_name(entity.entity_type),
                    entity.id,
                )),
            )
            .one(
                "definition",
                Some(ResourceIdentifier::new(
                    DEFINITION_TYPE,
                    self.record.definition_id,
                )),
            )
    }
}

fn object(value: &ShownValue, state: &AppState) -> ResourceObject<CustomFieldAttributes> {
    resource_object(value, &state.config.public_url)
}

fn document(value: &ShownValue, state: &AppState) -> Document<CustomFieldAttributes> {
    Document::new(object(value, state), Vec::new())
}

/// The body of a value write: `{data: {attributes: {value, api_slug?}}}`, or the flatter
/// `{data: {value, api_slug?}}`; `data.type`, when given, must be `custom_field`.
#[derive(Debug)]
pub struct ValueBody {
    api_slug: Option<String>,
    value: Option<Value>,
    relationships: Option<Value>,
}

/// The documented shape of [`ValueBody`]'s attributes.
#[derive(ToSchema)]
#[expect(
    dead_code,
    reason = "describes the request body in the OpenAPI document only"
)]
pub struct ValueInput {
    /// Needed where the path does not name the field.
    api_slug: Option<String>,
    /// The new value; `null` (or blank, or `[]`) clears it unless it is required.
    #[schema(value_type = Object)]
    value: Value,
}

impl FromRequest<AppState> for ValueBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, ApiError> {
        let json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase())
            .is_some_and(|v| v == "application/json" || v == CONTENT_TYPE);
        if !json {
            return Err(ApiError::UnsupportedMediaType);
        }
        let limit = state.config.max_body_bytes;
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|_| ApiError::PayloadTooLarge { limit })?;
        parse_value_body(&bytes)
    }
}

fn invalid(pointer: &str, code: &'static str, detail: impl Into<String>) -> ApiError {
    ApiError::Invalid(vec![FieldError::pointer(pointer, code, detail)])
}

fn has_nul(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains('\0'),
        Value::Array(items) => items.iter().any(has_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        _ => false,
    }
}

fn parse_value_body(bytes: &[u8]) -> Result<ValueBody, ApiError> {
    let document: Value = serde_json::from_slice(bytes).map_err(|error| {
        ApiError::BadRequest(vec![FieldError::pointer(
            "",
            "malformed_json",
            format!("The body is not valid JSON: {error}."),
        )])
    })?;
    let Some(data) = document.get("data").and_then(Value::as_object) else {
        return Err(invalid(
            "/data",
            "blank",
            "The body must have a data object.",
        ));
    };
    if let Some(found) = data.get("type").filter(|t| !t.is_null())
        && found.as_str() != Some(VALUE_TYPE)
    {
        return Err(ApiError::TypeMismatch {
            expected: VALUE_TYPE,
            found: found.as_str().unwrap_or_default().to_owned(),
        });
    }
    let attributes = match data.get("attributes") {
        Some(Value::Object(attributes)) => attributes,
        Some(_) => {
            return Err(invalid(
                "/data/attributes",
                "invalid",
                "data.attributes must be an object.",
            ));
        }
        None => data,
    };
    // No database column can hold NUL (PostgreSQL refuses it in text and jsonb).
    if has_nul(&document) {
        let pointer = if attributes.get("value").is_some_and(has_nul) {
            "/data/attributes/value"
        } else {
            "/data"
        };
        return Err(invalid(
            pointer,
            "invalid_characters",
            "Text may not contain NUL characters.",
        ));
    }
    let value = attributes.get("value").cloned();
    let api_slug = match attributes.get("api_slug") {
        None | Some(Value::Null) => None,
        Some(Value::String(slug)) => Some(slug.trim().to_owned()),
        Some(_) => {
            return Err(invalid(
                "/data/attributes/api_slug",
                "invalid",
                "Api slug must be a string",
            ));
        }
    };
    Ok(ValueBody {
        api_slug,
        value,
        relationships: data.get("relationships").cloned(),
    })
}

impl ValueBody {
    /// The value sent; absent is a 422, `null` clears.
    fn value(&self) -> Result<&Value, ApiError> {
        self.value.as_ref().ok_or_else(|| {
            invalid(
                "/data/attributes/value",
                "blank",
                "Value must be given (null clears it)",
            )
        })
    }

    /// The slug sent, required where the path does not name the field.
    fn api_slug(&self) -> Result<&str, ApiError> {
        self.api_slug
            .as_deref()
            .filter(|slug| !slug.is_empty())
            .ok_or_else(|| {
                invalid(
                    "/data/attributes/api_slug",
                    "blank",
                    "Api slug can't be blank",
                )
            })
    }

    /// `relationships.entity.data`: `{type: shipment|container, id}`.
    fn entity(&self) -> Result<(EntityType, Uuid), ApiError> {
        const POINTER: &str = "/data/relationships/entity/data";
        let data = self
            .relationships
            .as_ref()
            .and_then(|r| r.get("entity"))
            .and_then(|r| r.get("data"))
            .filter(|data| !data.is_null())
            .ok_or_else(|| {
                invalid(
                    POINTER,
                    "blank",
                    "The entity relationship must name a shipment, container or tracking request",
                )
            })?;
        let entity_type = match data.get("type").and_then(Value::as_str) {
            Some("shipment") => EntityType::Shipment,
            Some("container") => EntityType::Container,
            Some("tracking_request") => EntityType::TrackingRequest,
            _ => {
                return Err(invalid(
                    &format!("{POINTER}/type"),
                    "invalid_type",
                    "The entity relationship must be of type 'shipment', 'container' or \
                     'tracking_request'",
                ));
            }
        };
        let id = data
            .get("id")
            .and_then(Value::as_str)
            .and_then(|id| Uuid::parse_str(id.trim()).ok())
            .ok_or_else(|| {
                invalid(
                    &format!("{POINTER}/id"),
                    "invalid",
                    "The entity relationship's id must be a UUID",
                )
            })?;
        Ok((entity_type, id))
    }
}

/// What a write answers: the value set (201 when new), or the cleared one with `value` null.
fn written(
    state: &AppState,
    outcome: SetOutcome,
    definition: &DefinitionRecord,
    entity: EntityRef,
    created_status: StatusCode,
) -> Response {
    match outcome {
        SetOutcome::Set { value, created } => {
            let status = if created {
                created_status
            } else {
                StatusCode::OK
            };
            (status, document(&value, state)).into_response()
        }
        SetOutcome::Cleared { previous } => {
            let now = state.clock.now();
            let record = previous.map_or_else(
                || ValueRecord {
                    id: state.ids.next_id(),
                    account_id: definition.account_id,
                    definition_id: definition.id,
                    api_slug: definition.definition.api_slug.clone(),
                    entity,
                    value: Value::Null,
                    created_at: now,
                    updated_at: now,
                },
                |previous| ValueRecord {
                    value: Value::Null,
                    updated_at: now,
                    ..previous
                },
            );
            let cleared = ShownValue {
                record,
                display_value: None,
            };
            (StatusCode::OK, document(&cleared, state)).into_response()
        }
    }
}

/// The value of `entity`'s field `api_slug`; an unknown slug is 404 here, as the path names it.
async fn value_at(
    state: &AppState,
    principal: &Principal,
    entity_type: EntityType,
    id: &str,
    api_slug: &str,
) -> Result<(EntityRef, DefinitionRecord), ApiError> {
    // No slug holds control characters; PostgreSQL would refuse a NUL in the lookup.
    if api_slug.chars().any(char::is_control) {
        return Err(ApiError::NotFound);
    }
    let entity =
        custom_fields::entity(state, principal.account_id, entity_type, parse_uuid(id)?).await?;
    let definition = state
        .store
        .custom_field_definition_by_slug(principal.account_id, api_slug)
        .await?;
    if definition.definition.entity_type != entity_type.fields_of() {
        return Err(ApiError::NotFound);
    }
    Ok((entity, definition))
}

async fn list_nested(
    state: &AppState,
    principal: &Principal,
    entity_type: EntityType,
    id: &str,
    query: &QueryParams,
) -> Result<ListDocument<CustomFieldAttributes>, ApiError> {
    let page = query.page(DEFAULT_PAGE_SIZE)?;
    let entity =
        custom_fields::entity(state, principal.account_id, entity_type, parse_uuid(id)?).await?;
    list_values(
        state,
        principal,
        &ValueFilter {
            entity_id: Some(entity.id),
            ..ValueFilter::default()
        },
        query,
        page,
    )
    .await
}

async fn list_values(
    state: &AppState,
    principal: &Principal,
    filter: &ValueFilter,
    query: &QueryParams,
    page: crate::api::jsonapi::Page,
) -> Result<ListDocument<CustomFieldAttributes>, ApiError> {
    let found = state
        .store
        .list_custom_field_values(principal.account_id, filter, page.into())
        .await?;
    let shown = custom_fields::show_all(state, found.items).await?;
    Ok(ListDocument::page(
        shown.iter().map(|value| object(value, state)).collect(),
        Vec::new(),
        query,
        &state.config.public_url,
        page,
        found.total,
    ))
}

async fn create_nested(
    state: &AppState,
    principal: &Principal,
    entity_type: EntityType,
    id: &str,
    body: &ValueBody,
) -> Result<Response, ApiError> {
    let entity =
        custom_fields::entity(state, principal.account_id, entity_type, parse_uuid(id)?).await?;
    write(state, principal, entity, body.api_slug()?, body).await
}

async fn write(
    state: &AppState,
    principal: &Principal,
    entity: EntityRef,
    api_slug: &str,
    body: &ValueBody,
) -> Result<Response, ApiError> {
    let raw = body.value()?;
    let definition = custom_fields::definition_for(
        state,
        principal.account_id,
        entity,
        api_slug,
        "/data/attributes/api_slug",
    )
    .await?;
    let outcome =
        custom_fields::set_value(state, principal.account_id, entity, &definition, raw).await?;
    Ok(written(
        state,
        outcome,
        &definition,
        entity,
        StatusCode::CREATED,
    ))
}

async fn show_nested(
    state: &AppState,
    principal: &Principal,
    entity_type: EntityType,
    id: &str,
    api_slug: &str,
) -> Result<Document<CustomFieldAttributes>, ApiError> {
    let (entity, definition) = value_at(state, principal, entity_type, id, api_slug).await?;
    let record = state
        .store
        .custom_field_value_of(principal.account_id, definition.id, entity.id)
        .await?;
    Ok(document(&custom_fields::show(state, record).await?, state))
}

async fn set_nested(
    state: &AppState,
    principal: &Principal,
    entity_type: EntityType,
    id: &str,
    api_slug: &str,
    body: &ValueBody,
) -> Result<Response, ApiError> {
    let raw = body.value()?;
    let (entity, definition) = value_at(state, principal, entity_type, id, api_slug).await?;
    let outcome =
        custom_fields::set_value(state, principal.account_id, entity, &definition, raw).await?;
    Ok(written(state, outcome, &definition, entity, StatusCode::OK))
}

async fn delete_nested(
    state: &AppState,
    principal: &Principal,
    entity_type: EntityType,
    id: &str,
    api_slug: &str,
) -> Result<StatusCode, ApiError> {
    let (entity, definition) = value_at(state, principal, entity_type, id, api_slug).await?;
    let record = state
        .store
        .custom_field_value_of(principal.account_id, definition.id, entity.id)
        .await?;
    state
        .store
        .delete_custom_field_value(principal.account_id, record.id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

macro_rules! nested_handlers {
    (
        $entity_type:expr, $segment:literal, $tag:literal,
        $list:ident, $create:ident, $show:ident, $set:ident, $delete:ident
    ) => {
        /// List the entity's custom field values.
        #[utoipa::path(
            get, path = concat!("/v2/", $segment, "/{id}/custom_fields"), tag = $tag,
            params(("id" = Uuid, Path), ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query)),
            responses(
                (status = 200, body = ListDocument<CustomFieldAttributes>),
                (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
                (status = 429, body = ErrorDocument),
            ),
            security(("token" = []))
        )]
        async fn $list(
            state: AppState,
            principal: Principal,
            Path(id): Path<String>,
            query: QueryParams,
        ) -> Result<ListDocument<CustomFieldAttributes>, ApiError> {
            list_nested(&state, &principal, $entity_type, &id, &query).await
        }

        /// Set one of the entity's custom field values, named by `api_slug` in the body.
        #[utoipa::path(
            post, path = concat!("/v2/", $segment, "/{id}/custom_fields"), tag = $tag,
            params(("id" = Uuid, Path)),
            request_body(content = ValueInput, description = "`{data: {attributes: {api_slug, value}}}`"),
            responses(
                (status = 201, body = Document<CustomFieldAttributes>),
                (status = 200, body = Document<CustomFieldAttributes>, description = "replaced or cleared"),
                (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
                (status = 403, body = ErrorDocument), (status = 404, body = ErrorDocument),
                (status = 422, body = ErrorDocument), (status = 429, body = ErrorDocument),
            ),
            security(("token" = []))
        )]
        async fn $create(
            state: AppState,
            principal: Principal,
            Path(id): Path<String>,
            body: ValueBody,
        ) -> Result<Response, ApiError> {
            create_nested(&state, &principal, $entity_type, &id, &body).await
        }

        /// Get the entity's value of one custom field.
        #[utoipa::path(
            get, path = concat!("/v2/", $segment, "/{id}/custom_fields/{api_slug}"), tag = $tag,
            params(("id" = Uuid, Path), ("api_slug" = String, Path)),
            responses(
                (status = 200, body = Document<CustomFieldAttributes>),
                (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
                (status = 429, body = ErrorDocument),
            ),
            security(("token" = []))
        )]
        async fn $show(
            state: AppState,
            principal: Principal,
            Path((id, api_slug)): Path<(String, String)>,
        ) -> Result<Document<CustomFieldAttributes>, ApiError> {
            show_nested(&state, &principal, $entity_type, &id, &api_slug).await
        }

        /// Set (or, with `null`, clear) the entity's value of one custom field. Needs update
        /// permission on the entity.
        #[utoipa::path(
            patch, path = concat!("/v2/", $segment, "/{id}/custom_fields/{api_slug}"), tag = $tag,
            params(("id" = Uuid, Path), ("api_slug" = String, Path)),
            request_body(content = ValueInput, description = "`{data: {attributes: {value}}}` or `{data: {value}}`"),
            responses(
                (status = 200, body = Document<CustomFieldAttributes>),
                (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
                (status = 403, body = ErrorDocument), (status = 404, body = ErrorDocument),
                (status = 422, body = ErrorDocument), (status = 429, body = ErrorDocument),
            ),
            security(("token" = []))
        )]
        async fn $set(
            state: AppState,
            principal: Principal,
            Path((id, api_slug)): Path<(String, String)>,
            body: ValueBody,
        ) -> Result<Response, ApiError> {
            set_nested(&state, &principal, $entity_type, &id, &api_slug, &body).await
        }

        /// Remove the entity's value of one custom field.
        #[utoipa::path(
            delete, path = concat!("/v2/", $segment, "/{id}/custom_fields/{api_slug}"), tag = $tag,
            params(("id" = Uuid, Path), ("api_slug" = String, Path)),
            responses(
                (status = 204, description = "Deleted"),
                (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
                (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
            ),
            security(("token" = []))
        )]
        async fn $delete(
            state: AppState,
            principal: Principal,
            Path((id, api_slug)): Path<(String, String)>,
        ) -> Result<StatusCode, ApiError> {
            delete_nested(&state, &principal, $entity_type, &id, &api_slug).await
        }
    };
}

nested_handlers!(
    EntityType::Shipment,
    "shipments",
    "Custom fields",
    list_of_shipment,
    create_on_shipment,
    show_of_shipment,
    set_on_shipment,
    delete_of_shipment
);
nested_handlers!(
    EntityType::TrackingRequest,
    "tracking_requests",
    "Tracking requests",
    list_of_tracking_request,
    create_on_tracking_request,
    show_of_tracking_request,
    set_on_tracking_request,
    delete_of_tracking_request
);
nested_handlers!(
    EntityType::Container,
    "containers",
    "Custom fields",
    list_of_container,
    create_on_container,
    show_of_container,
    set_on_container,
    delete_of_container
);

/// List the account's custom field values.
#[utoipa::path(
    get, path = "/v2/custom_fields", tag = "Custom fields",
    params(
        ("filter[entity_id]" = Option<Uuid>, Query),
        ("filter[definition_id]" = Option<Uuid>, Query),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, body = ListDocument<CustomFieldAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    principal: Principal,
    query: QueryParams,
) -> Result<ListDocument<CustomFieldAttributes>, ApiError> {
    let page = query.page(DEFAULT_PAGE_SIZE)?;
    let filter = ValueFilter {
        entity_id: query.id("filter[entity_id]")?,
        definition_id: query.id("filter[definition_id]")?,
    };
    list_values(&state, &principal, &filter, &query, page).await
}

/// Set a custom field value on the entity named in `relationships.entity`.
#[utoipa::path(
    post, path = "/v2/custom_fields", tag = "Custom fields",
    request_body(content = ValueInput, description = "`{data: {type: \"custom_field\", attributes: {api_slug, value}, relationships: {entity: {data: {type, id}}}}}`"),
    responses(
        (status = 201, body = Document<CustomFieldAttributes>),
        (status = 200, body = Document<CustomFieldAttributes>, description = "replaced or cleared"),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 422, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn create(
    state: AppState,
    principal: Principal,
    body: ValueBody,
) -> Result<Response, ApiError> {
    let (entity_type, id) = body.entity()?;
    let api_slug = body.api_slug()?;
    let entity = custom_fields::entity(&state, principal.account_id, entity_type, id).await?;
    write(&state, &principal, entity, api_slug, &body).await
}

/// Get a custom field value.
#[utoipa::path(
    get, path = "/v2/custom_fields/{id}", tag = "Custom fields",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = Document<CustomFieldAttributes>),
        (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Document<CustomFieldAttributes>, ApiError> {
    let record = state
        .store
        .custom_field_value(principal.account_id, parse_uuid(&id)?)
        .await?;
    Ok(document(
        &custom_fields::show(&state, record).await?,
        &state,
    ))
}

/// Change a custom field value (or clear it with `null`).
#[utoipa::path(
    patch, path = "/v2/custom_fields/{id}", tag = "Custom fields",
    params(("id" = Uuid, Path)),
    request_body(content = ValueInput, description = "`{data: {attributes: {value}}}`"),
    responses(
        (status = 200, body = Document<CustomFieldAttributes>),
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
    body: ValueBody,
) -> Result<Response, ApiError> {
    let raw = body.value()?;
    let record = state
        .store
        .custom_field_value(principal.account_id, parse_uuid(&id)?)
        .await?;
    let definition = state
        .store
        .custom_field_definition(principal.account_id, record.definition_id)
        .await?;
    let outcome = custom_fields::set_value(
        &state,
        principal.account_id,
        record.entity,
        &definition,
        raw,
    )
    .await?;
    Ok(written(
        &state,
        outcome,
        &definition,
        record.entity,
        StatusCode::OK,
    ))
}

/// Delete a custom field value; answers with what was deleted.
#[utoipa::path(
    delete, path = "/v2/custom_fields/{id}", tag = "Custom fields",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = Document<CustomFieldAttributes>),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn delete(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let record = state
        .store
        .custom_field_value(principal.account_id, parse_uuid(&id)?)
        .await?;
    let shown = custom_fields::show(&state, record).await?;
    state
        .store
        .delete_custom_field_value(principal.account_id, shown.record.id)
        .await?;
    Ok(json_body(&document(&shown, &state)))
}

/// The `filter[custom_fields][<api_slug>]=value` parameters of a shipment or container list,
/// as store filters; a bad one is a 400 naming the parameter.
pub async fn list_filters(
    state: &AppState,
    account: tidemark_domain::AccountId,
    entity_type: EntityType,
    query: &QueryParams,
) -> Result<Vec<tidemark_store::CustomFieldFilter>, ApiError> {
    custom_fields::filters_from(state, account, entity_type, query.pairs())
        .await?
        .map_err(|problem| ApiError::parameter(&problem.parameter, problem.code, problem.detail))
}
