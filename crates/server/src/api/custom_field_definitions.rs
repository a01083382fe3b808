//! `/v2/custom_field_definitions` and their `options` (interface spec §2.10, §2.11, §4.8,
//! §4.9; Terminal49 notes §13).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tidemark_domain::custom_fields::{
    DataType, DefinitionChanges, EntityType, NewDefinition, NewOption, OptionChanges,
    ReferenceType, StoredValue,
};
use tidemark_store::{DefinitionFilter, DefinitionRecord, OptionRecord, PageRequest, ValueFilter};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::extract::{Path, parse_uuid};
use crate::api::jsonapi::{
    BodyType, Document, JsonApiBody, ListDocument, MAX_PAGE_SIZE, QueryParams, Relationships,
    Resource, ResourceIdentifier, ResourceObject, resource_object, timestamp,
};
use crate::app::AppState;
use crate::resources::custom_fields::VALUE_TYPE;
use crate::use_cases::custom_fields::{self, CustomFieldError};

/// Terminal49 pages definitions 25 at a time.
const PAGE_SIZE: u32 = 25;
pub use crate::resources::custom_fields::DEFINITION_TYPE;
const OPTION_TYPE: &str = "custom_field_option";

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, update, delete))
        .routes(routes!(list_options, create_option))
        .routes(routes!(show_option, update_option, delete_option))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DefinitionAttributes {
    pub api_slug: String,
    pub display_name: String,
    pub description: Option<String>,
    /// `Shipment` or `Container`.
    pub entity_type: &'static str,
    /// `short_text`, `long_text`, `number`, `date`, `datetime`, `boolean`, `enum`,
    /// `enum_multi` or `reference`.
    pub data_type: &'static str,
    /// For `reference` fields: `shipment`, `container`, `tracking_request` or `document`.
    pub reference_type: Option<&'static str>,
    /// `required`, `min`, `max`, `max_length`, `pattern`; `null` when none is set.
    #[schema(value_type = Option<Object>)]
    pub validation: Value,
    pub default_format: Option<String>,
    /// A value of the field's type (text, number, boolean, option values, `{type, id}`),
    /// or `null`.
    #[schema(value_type = Value)]
    pub default_value: Value,
    /// Always null: Tidemark has no field templates.
    pub template_id: Option<String>,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "timestamp")]
    pub updated_at: DateTime<Utc>,
}

impl Resource for DefinitionRecord {
    const TYPE: &'static str = DEFINITION_TYPE;
    const PATH: &'static str = "custom_field_definitions";
    type Attributes = DefinitionAttributes;

    fn id(&self) -> String {
        self.id.to_string()
    }

    fn attributes(&self) -> DefinitionAttributes {
        let d = &self.definition;
        DefinitionAttributes {
            api_slug: d.api_slug.clone(),
            display_name: d.display_name.clone(),
            description: d.description.clone(),
            entity_type: d.entity_type.as_str(),
            data_type: d.data_type.as_str(),
            reference_type: d.reference_type.map(ReferenceType::as_str),
            validation: d.validation.to_json(),
            default_format: d.default_format.as_ref().map(|f| f.as_str().to_owned()),
            default_value: d
                .default_value
                .as_ref()
                .map_or(Value::Null, StoredValue::to_json),
            template_id: None,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OptionAttributes {
    pub value: String,
    pub label: String,
    pub position: Option<i32>,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "timestamp")]
    pub updated_at: DateTime<Utc>,
}

impl Resource for OptionRecord {
    const TYPE: &'static str = OPTION_TYPE;
    const PATH: &'static str = "custom_field_definitions";
    type Attributes = OptionAttributes;

    fn id(&self) -> String {
        self.id.to_string()
    }

    fn attributes(&self) -> OptionAttributes {
        OptionAttributes {
            value: self.option.value.clone(),
            label: self.option.label.clone(),
            position: self.option.position,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }

    fn relationships(&self) -> Relationships {
        Relationships::default().one(
            "definition",
            Some(ResourceIdentifier::new(DEFINITION_TYPE, self.definition_id)),
        )
    }
}

/// What a definition's relationships list: its options, and its values (the first
/// [`MAX_PAGE_SIZE`] of `fields_total`, oldest first, as `GET /v2/custom_fields` pages them).
struct Listed {
    options: Vec<Uuid>,
    fields: Vec<Uuid>,
    fields_total: u64,
}

impl Listed {
    /// Two queries: a definition's options are few, its values may be one per shipment.
    async fn of(state: &AppState, definition: &DefinitionRecord) -> Result<Self, ApiError> {
        let account = definition.account_id;
        let options = state
            .store
            .custom_field_options(account, definition.id)
            .await?;
        let fields = state
            .store
            .list_custom_field_values(
                account,
                &ValueFilter {
                    definition_id: Some(definition.id),
                    ..ValueFilter::default()
                },
                PageRequest {
                    offset: 0,
                    limit: MAX_PAGE_SIZE,
                },
            )
            .await?;
        Ok(Self {
            options: options.iter().map(|o| o.id).collect(),
            fields: fields.items.iter().map(|v| v.id).collect(),
            fields_total: fields.total,
        })
    }
}

/// A definition's object, with its account, and its options and values listed by id with
/// links to them (Terminal49 lists both).
fn definition_object(
    definition: &DefinitionRecord,
    listed: &Listed,
    base: &str,
) -> ResourceObject<DefinitionAttributes> {
    let mut object = resource_object(definition, base);
    let ids = |kind, ids: &[Uuid]| {
        ids.iter()
            .map(|id| ResourceIdentifier::new(kind, id))
            .collect()
    };
    let options_url = format!(
        "{base}/v2/custom_field_definitions/{}/options",
        definition.id
    );
    let fields_url = format!(
        "{base}/v2/custom_fields?filter[definition_id]={}",
        definition.id
    );
    object.relationships = Relationships::default()
        .one(
            "account",
            Some(ResourceIdentifier::new("account", definition.account_id.0)),
        )
        .listed("options", ids(OPTION_TYPE, &listed.options), options_url)
        .listed_first(
            "fields",
            ids(VALUE_TYPE, &listed.fields),
            fields_url,
            listed.fields_total,
        );
    object
}

/// An option's object, its self link under its definition.
fn option_object(option: &OptionRecord, base: &str) -> ResourceObject<OptionAttributes> {
    let mut object = resource_object(option, base);
    object.links.self_ = format!(
        "{base}/v2/custom_field_definitions/{}/options/{}",
        option.definition_id, option.id
    );
    object
}

/// The documented attributes of `POST` and `PATCH /v2/custom_field_definitions`.
#[derive(ToSchema)]
#[expect(
    dead_code,
    reason = "describes the request body in the OpenAPI document only"
)]
pub struct DefinitionInput {
    /// Required on create, fixed after: lowercase letters, digits and underscores.
    api_slug: Option<String>,
    display_name: Option<String>,
    description: Option<String>,
    /// Required on create, fixed after.
    entity_type: Option<String>,
    /// Required on create, fixed after.
    data_type: Option<String>,
    reference_type: Option<String>,
    #[schema(value_type = Object)]
    validation: Option<Value>,
    default_format: Option<String>,
    #[schema(value_type = Object)]
    default_value: Option<Value>,
}

/// The documented attributes of `POST` and `PATCH …/options`.
#[derive(ToSchema)]
#[expect(
    dead_code,
    reason = "describes the request body in the OpenAPI document only"
)]
pub struct OptionInput {
    /// Required on create, unique within the definition, fixed after.
    value: Option<String>,
    label: Option<String>,
    position: Option<i64>,
}

/// A definition body's attributes, as the rules read them.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct DefinitionBody<T>(T);

impl BodyType for DefinitionBody<NewDefinition> {
    const TYPE: &'static str = DEFINITION_TYPE;
}

impl BodyType for DefinitionBody<DefinitionChanges> {
    const TYPE: &'static str = DEFINITION_TYPE;
}

impl BodyType for DefinitionBody<NewOption> {
    const TYPE: &'static str = OPTION_TYPE;
}

impl BodyType for DefinitionBody<OptionChanges> {
    const TYPE: &'static str = OPTION_TYPE;
}

impl From<CustomFieldError> for ApiError {
    fn from(error: CustomFieldError) -> Self {
        match error {
            CustomFieldError::Invalid(problems) => Self::Invalid(
                problems
                    .into_iter()
                    .map(|p| FieldError::pointer(p.pointer, p.code.as_str(), p.detail))
                    .collect(),
            ),
            CustomFieldError::Store(error) => error.into(),
        }
    }
}

async fn definition_document(
    record: &DefinitionRecord,
    state: &AppState,
) -> Result<Document<DefinitionAttributes>, ApiError> {
    let listed = Listed::of(state, record).await?;
    Ok(Document::new(
        definition_object(record, &listed, &state.config.public_url),
        Vec::new(),
    ))
}

fn option_document(record: &OptionRecord, state: &AppState) -> Document<OptionAttributes> {
    Document::new(option_object(record, &state.config.public_url), Vec::new())
}

/// List the account's custom field definitions, oldest first.
#[utoipa::path(
    get, path = "/v2/custom_field_definitions", tag = "Custom fields",
    params(
        ("filter[entity_type]" = Option<String>, Query, description = "Shipment or Container"),
        ("filter[data_type]" = Option<String>, Query),
        ("filter[display_name]" = Option<String>, Query, description = "prefix, ignoring case"),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, body = ListDocument<DefinitionAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    principal: Principal,
    query: QueryParams,
) -> Result<ListDocument<DefinitionAttributes>, ApiError> {
    let page = query.page(PAGE_SIZE)?;
    let filter = DefinitionFilter {
        entity_type: query.choice(
            "filter[entity_type]",
            EntityType::parse,
            "Shipment or Container",
        )?,
        data_type: query.choice(
            "filter[data_type]",
            DataType::parse,
            "a data type such as short_text, number or enum",
        )?,
        display_name_prefix: query.filter("filter[display_name]").map(str::to_owned),
    };
    let found = state
        .store
        .list_custom_field_definitions(principal.account_id, &filter, page.into())
        .await?;
    let base = &state.config.public_url;
    let mut data = Vec::with_capacity(found.items.len());
    for record in &found.items {
        let listed = Listed::of(&state, record).await?;
        data.push(definition_object(record, &listed, base));
    }
    Ok(ListDocument::page(
        data,
        Vec::new(),
        &query,
        base,
        page,
        found.total,
    ))
}

/// Define a custom field.
#[utoipa::path(
    post, path = "/v2/custom_field_definitions", tag = "Custom fields",
    request_body(content = DefinitionInput, description = "`{data: {type: \"custom_field_definition\", attributes}}`"),
    responses(
        (status = 201, body = Document<DefinitionAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 422, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn create(
    state: AppState,
    principal: Principal,
    body: JsonApiBody<DefinitionBody<NewDefinition>>,
) -> Result<Response, ApiError> {
    let record =
        custom_fields::create_definition(&state, principal.account_id, &body.attributes.0).await?;
    Ok((
        StatusCode::CREATED,
        definition_document(&record, &state).await?,
    )
        .into_response())
}

/// Get a custom field definition.
#[utoipa::path(
    get, path = "/v2/custom_field_definitions/{id}", tag = "Custom fields",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = Document<DefinitionAttributes>),
        (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Document<DefinitionAttributes>, ApiError> {
    let record = state
        .store
        .custom_field_definition(principal.account_id, parse_uuid(&id)?)
        .await?;
    definition_document(&record, &state).await
}

/// Change a definition's `display_name`, `description`, `validation`, `default_format` or
/// `default_value`. `api_slug`, `entity_type` and `data_type` are fixed: a different value
/// is a 422 pointing at that attribute, and nothing changes.
#[utoipa::path(
    patch, path = "/v2/custom_field_definitions/{id}", tag = "Custom fields",
    params(("id" = Uuid, Path)),
    request_body(content = DefinitionInput),
    responses(
        (status = 200, body = Document<DefinitionAttributes>),
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
    body: JsonApiBody<DefinitionBody<DefinitionChanges>>,
) -> Result<Document<DefinitionAttributes>, ApiError> {
    let id = parse_uuid(&id)?;
    let record =
        custom_fields::update_definition(&state, principal.account_id, id, &body.attributes.0)
            .await?;
    definition_document(&record, &state).await
}

/// Delete a definition, its options and every value of it.
#[utoipa::path(
    delete, path = "/v2/custom_field_definitions/{id}", tag = "Custom fields",
    params(("id" = Uuid, Path)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn delete(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    custom_fields::delete_definition(&state, principal.account_id, parse_uuid(&id)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// List a definition's options in display order.
#[utoipa::path(
    get, path = "/v2/custom_field_definitions/{id}/options", tag = "Custom fields",
    params(
        ("id" = Uuid, Path),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, body = ListDocument<OptionAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list_options(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<ListDocument<OptionAttributes>, ApiError> {
    let page = query.page(PAGE_SIZE)?;
    let definition = state
        .store
        .custom_field_definition(principal.account_id, parse_uuid(&id)?)
        .await?;
    // Options are few (one per choice of one field), so they are paged in memory.
    let options = state
        .store
        .custom_field_options(principal.account_id, definition.id)
        .await?;
    let base = &state.config.public_url;
    Ok(ListDocument::page(
        page.slice(&options)
            .iter()
            .map(|option| option_object(option, base))
            .collect(),
        Vec::new(),
        &query,
        base,
        page,
        u64::try_from(options.len()).unwrap_or(u64::MAX),
    ))
}

/// Add an option to an `enum` or `enum_multi` definition.
#[utoipa::path(
    post, path = "/v2/custom_field_definitions/{id}/options", tag = "Custom fields",
    params(("id" = Uuid, Path)),
    request_body(content = OptionInput, description = "`{data: {type: \"custom_field_option\", attributes: {value, label, position}}}`"),
    responses(
        (status = 201, body = Document<OptionAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 422, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn create_option(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    body: JsonApiBody<DefinitionBody<NewOption>>,
) -> Result<Response, ApiError> {
    let record = custom_fields::create_option(
        &state,
        principal.account_id,
        parse_uuid(&id)?,
        &body.attributes.0,
    )
    .await?;
    Ok((StatusCode::CREATED, option_document(&record, &state)).into_response())
}

/// Get an option.
#[utoipa::path(
    get, path = "/v2/custom_field_definitions/{id}/options/{option_id}", tag = "Custom fields",
    params(("id" = Uuid, Path), ("option_id" = Uuid, Path)),
    responses(
        (status = 200, body = Document<OptionAttributes>),
        (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn show_option(
    state: AppState,
    principal: Principal,
    Path((id, option_id)): Path<(String, String)>,
) -> Result<Document<OptionAttributes>, ApiError> {
    let record = state
        .store
        .custom_field_option(
            principal.account_id,
            parse_uuid(&id)?,
            parse_uuid(&option_id)?,
        )
        .await?;
    Ok(option_document(&record, &state))
}

/// Change an option's `label` or `position`; its `value` is fixed.
#[utoipa::path(
    patch, path = "/v2/custom_field_definitions/{id}/options/{option_id}", tag = "Custom fields",
    params(("id" = Uuid, Path), ("option_id" = Uuid, Path)),
    request_body(content = OptionInput),
    responses(
        (status = 200, body = Document<OptionAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 422, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn update_option(
    state: AppState,
    principal: Principal,
    Path((id, option_id)): Path<(String, String)>,
    body: JsonApiBody<DefinitionBody<OptionChanges>>,
) -> Result<Document<OptionAttributes>, ApiError> {
    let record = custom_fields::update_option(
        &state,
        principal.account_id,
        parse_uuid(&id)?,
        parse_uuid(&option_id)?,
        &body.attributes.0,
    )
    .await?;
    Ok(option_document(&record, &state))
}

/// Delete an option. Values that use it keep it, shown as the raw value.
#[utoipa::path(
    delete, path = "/v2/custom_field_definitions/{id}/options/{option_id}", tag = "Custom fields",
    params(("id" = Uuid, Path), ("option_id" = Uuid, Path)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn delete_option(
    state: AppState,
    principal: Principal,
    Path((id, option_id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    custom_fields::delete_option(
        &state,
        principal.account_id,
        parse_uuid(&id)?,
        parse_uuid(&option_id)?,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}
