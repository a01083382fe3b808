//! `/v2/documents` (beta): upload, list, show, download, edit and delete shipment
//! documents. Uploads come as `multipart/form-data`, or as JSON naming a direct upload
//! (`/v2/direct_uploads`) in `attributes.attached_document`.
//!
//! Every route here reads its own body with its own limit (the document size for uploads,
//! `max_body_bytes` for JSON), so the router lifts axum's default limit.

use std::collections::BTreeSet;

use axum::Router;
use axum::body::{Body, Bytes, to_bytes};
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Query, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tidemark_domain::{Container, ContainerId, Shipment, ShipmentId};
use tidemark_store::{DocumentFilter, DocumentSort, DocumentSortField, StoreError, StoredDocument};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::containers::ContainerResource;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::extract::{Path, parse_uuid};
use crate::api::jsonapi::{
    self, BodyType, Includes, ListLinks, ListMeta, QueryParams, included_object, timestamp,
};
use crate::api::shipments::{ShipmentResource, customers_of};
use crate::app::AppState;
use crate::documents::classify::DocumentType;
use crate::documents::filename::{Disposition, content_disposition};
use crate::documents::signing::Purpose;
use crate::documents::upload::{self, NewDocument, UploadError};

/// The relationships `include` accepts (`current_extraction` is an alias).
const INCLUDES: &[&str] = &[
    "shipments",
    "cargos",
    "account",
    "user",
    "last_document_representation",
    "email_submission",
    "current_extraction",
];
/// Text fields of an upload form are short; more than this is a bad request.
const MAX_FORM_TEXT_BYTES: usize = 4096;
const MAX_FORM_FIELDS: usize = 64;
/// Words of `filter[filename]` used (each cut to `tidemark_store::MAX_WORD_CHARS`).
const MAX_FILENAME_TERMS: usize = 8;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(types))
        .routes(routes!(show, update, destroy))
        .routes(routes!(download))
        .routes(routes!(download_url))
        .layer(DefaultBodyLimit::disable())
}

/// Routes that need no API key: their links are signed and expire.
pub fn public_router() -> Router<AppState> {
    Router::new().route("/v2/documents/{id}/content", get(signed_download))
}

/// `document` attributes (spec §2.8).
#[derive(Debug, Serialize, ToSchema)]
pub struct DocumentAttributes {
    pub id: Uuid,
    pub name: String,
    /// `null` until classification ran.
    pub document_type: Option<String>,
    pub document_type_manual: Option<String>,
    pub classification_notes: Option<String>,
    /// `upload` (multipart) or `api` (direct upload).
    pub source: String,
    pub file_name: String,
    pub file_content_type: String,
    pub file_size_bytes: u64,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "timestamp")]
    pub updated_at: DateTime<Utc>,
}

/// Attributes of `POST /v2/documents` as JSON, and of `PATCH`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct DocumentInput {
    pub name: Option<String>,
    /// The `signed_id` of a finished direct upload.
    pub attached_document: Option<String>,
    /// A type code from `GET /v2/documents/types`, or null to clear it.
    #[serde(default, deserialize_with = "present")]
    pub document_type_manual: Option<Option<String>>,
}

/// Tells a member sent as `null` (`Some(None)`) from an absent one (`None`).
fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(deserializer).map(Some)
}

impl BodyType for DocumentInput {
    const TYPE: &'static str = "document";
}

fn document_link(base: &str, id: Uuid) -> String {
    format!("{base}/v2/documents/{id}")
}

/// The resource object of a document.
pub fn resource(doc: &StoredDocument, base: &str) -> Value {
    let attributes = DocumentAttributes {
        id: doc.id,
        name: doc.name.clone(),
        document_type: doc.document_type.clone(),
        document_type_manual: doc.document_type_manual.clone(),
        classification_notes: doc.classification_notes.clone(),
        source: doc.source.clone(),
        file_name: doc.file_name.clone(),
        file_content_type: doc.content_type.clone(),
        file_size_bytes: doc.size_bytes,
        created_at: doc.created_at,
        updated_at: doc.updated_at,
    };
    let link = document_link(base, doc.id);
    json!({
        "id": doc.id,
        "type": "document",
        "attributes": attributes,
        "relationships": {
            "account": {"data": {"id": doc.account_id, "type": "account"}},
            // Tidemark's users are its API keys: the key that uploaded the document.
            "user": {"data": doc.uploaded_by.map(|k| json!({"id": k, "type": "user"}))},
            "email_submission": {"data": null},
            "last_document_representation": {"data": doc.representation.as_ref()
                .map(|r| json!({"id": r.id, "type": "document_representation"}))},
            "shipments": {"data": doc.shipment_ids.iter()
                .map(|id| json!({"id": id, "type": "shipment"})).collect::<Vec<_>>()},
            "cargos": {"data": doc.container_ids.iter()
                .map(|id| json!({"id": id, "type": "container"})).collect::<Vec<_>>()},
        },
        "links": {"self": link, "download": format!("{link}/download")},
    })
}

/// The resources `includes` asks for, related to `docs`, each once.
pub async fn included(
    state: &AppState,
    docs: &[StoredDocument],
    includes: &Includes,
) -> Result<Vec<Value>, ApiError> {
    let base = &state.config.public_url;
    let mut out = Vec::new();
    let Some(first) = docs.first() else {
        return Ok(out);
    };
    let account = first.account_id;
    if includes.contains("account") {
        let account = state.store.account(account).await?;
        out.push(json!({
            "id": account.id, "type": "account",
            "attributes": {"company_name": account.name},
            "links": {"self": format!("{base}/v2/accounts/{}", account.id)},
        }));
    }
    if includes.contains("user") {
        let users: BTreeSet<_> = docs.iter().filter_map(|d| d.uploaded_by).collect();
        out.extend(users.into_iter().map(|id| {
            json!({"id": id, "type": "user", "attributes": {},
                   "links": {"self": format!("{base}/v2/api_keys/{id}")}})
        }));
    }
    let want_shipments = includes.contains("shipments");
    let want_cargos = includes.contains("cargos");
    if want_shipments || want_cargos {
        let container_ids: BTreeSet<ContainerId> = docs
            .iter()
            .flat_map(|d| d.container_ids.iter().copied())
            .collect();
        let mut containers: Vec<Container> = Vec::new();
        if want_cargos {
            for id in &container_ids {
                match state.store.container(account, *id).await {
                    Ok(container) => containers.push(container),
                    Err(StoreError::NotFound) => {}
                    Err(error) => return Err(error.into()),
                }
            }
        }
        let mut shipment_ids: BTreeSet<ShipmentId> =
            containers.iter().map(|c| c.shipment_id).collect();
        if want_shipments {
            shipment_ids.extend(docs.iter().flat_map(|d| d.shipment_ids.iter().copied()));
        }
        let ids: Vec<ShipmentId> = shipment_ids.into_iter().collect();
        let shipments: Vec<Shipment> = state.store.shipments_by_ids(account, &ids).await?;
        if want_shipments {
            let linked: BTreeSet<ShipmentId> = docs
                .iter()
                .flat_map(|d| d.shipment_ids.iter().copied())
                .collect();
            let all_containers = state.store.containers_of_shipments(&ids).await?;
            let customers = customers_of(state, &shipments).await?;
            for shipment in shipments.iter().filter(|s| linked.contains(&s.id)) {
                let own: Vec<Container> = all_containers
                    .iter()
                    .filter(|c| c.shipment_id == shipment.id)
                    .cloned()
                    .collect();
                out.push(to_value(included_object(
                    &ShipmentResource {
                        shipment,
                        containers: &own,
                        customers: &customers,
                        state,
                    },
                    base,
                )));
            }
        }
        for container in &containers {
            out.push(to_value(included_object(
                &ContainerResource {
                    container,
                    shipment: shipments.iter().find(|s| s.id == container.shipment_id),
                    state,
                },
                base,
            )));
        }
    }
    if includes.contains("last_document_representation") || includes.contains("current_extraction")
    {
        for doc in docs {
            if let Some(r) = &doc.representation {
                out.push(json!({
                    "id": r.id, "type": "document_representation",
                    "attributes": {
                        "schema_version": r.schema_version,
                        "payload": r.payload,
                        "created_at": timestamp::format(r.created_at),
                        "updated_at": timestamp::format(r.created_at),
                    },
                    "links": {"self": document_link(base, doc.id)},
                }));
            }
        }
    }
    Ok(out)
}

fn to_value<T: Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn single(state: &AppState, doc: &StoredDocument, included: Vec<Value>) -> Value {
    let base = &state.config.public_url;
    let mut document = json!({
        "data": resource(doc, base),
        "links": {"self": document_link(base, doc.id)},
    });
    if !included.is_empty() {
        document["included"] = Value::Array(included);
    }
    document
}

/// One document's JSON:API document, with what `query` includes.
async fn show_document(
    state: &AppState,
    doc: &StoredDocument,
    query: &QueryParams,
) -> Result<Value, ApiError> {
    let includes = query.includes("document", INCLUDES)?;
    let included = included(state, std::slice::from_ref(doc), &includes).await?;
    Ok(single(state, doc, included))
}

/// The error response of a failed upload; `file` is where the file was given (a form
/// field or a body member), for `source`.
fn upload_failure(error: UploadError, file: &str) -> Response {
    let invalid = |code, detail: String| {
        ApiError::Invalid(vec![FieldError::pointer(file, code, detail)]).into_response()
    };
    match error {
        UploadError::TooLarge { limit } => ApiError::PayloadTooLarge { limit }.into_response(),
        UploadError::Refused(reason) => invalid("unsupported_file_type", format!("{reason}.")),
        UploadError::Duplicate(existing) => duplicate(existing),
        UploadError::UnknownLink => invalid(
            "not_found",
            "A linked shipment or container does not exist.".to_owned(),
        ),
        UploadError::NotUploaded => invalid(
            "upload_incomplete",
            "The direct upload's file has not been uploaded yet: PUT it to the upload URL first."
                .to_owned(),
        ),
        UploadError::UploadUsed => ApiError::Conflict {
            code: "upload_already_used",
            detail: "This direct upload already made a document.".to_owned(),
        }
        .into_response(),
        UploadError::Storage(error) => {
            ApiError::Internal(anyhow::Error::new(error).context("document storage"))
                .into_response()
        }
        UploadError::Store(error) => ApiError::from(error).into_response(),
    }
}

/// 409 for content the account already has, naming the existing document.
fn duplicate(existing: Uuid) -> Response {
    let body = json!({
        "errors": [{
            "status": "409",
            "title": "Conflict",
            "code": "duplicate_document",
            "detail": format!("The same file was already uploaded as document {existing}."),
            "source": null,
            "meta": {"existing_document_id": existing},
        }],
        "meta": {"existing_document_id": existing},
    });
    (StatusCode::CONFLICT, jsonapi::json_body(&body)).into_response()
}

fn created(state: &AppState, doc: &StoredDocument) -> Response {
    let mut response = (
        StatusCode::CREATED,
        jsonapi::json_body(&single(state, doc, Vec::new())),
    )
        .into_response();
    if let Ok(location) = HeaderValue::from_str(&document_link(&state.config.public_url, doc.id)) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// The essence of a `Content-Type` header, lower case.
fn media_type(request: &Request) -> String {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// List the account's documents (beta).
#[utoipa::path(
    get, path = "/v2/documents", tag = "Documents",
    params(
        ("include" = Option<String>, Query, description = "shipments, cargos, account, user, last_document_representation, email_submission, current_extraction"),
        ("sort" = Option<String>, Query, description = "document_type, added_by or created_at; `-` for descending (default -created_at)"),
        ("filter[filename]" = Option<String>, Query, description = "words of the file name or name (the last may be a prefix)"),
        ("filter[reference]" = Option<String>, Query, description = "a BL, ref or container number of a linked shipment or container"),
        ("filter[document_types]" = Option<String>, Query, description = "comma-separated type codes"),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, description = "`data`, `included`, `links`, `meta`", body = Object),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    principal: Principal,
    query: QueryParams,
) -> Result<Response, ApiError> {
    let page = query.page(jsonapi::DEFAULT_PAGE_SIZE)?;
    let includes = query.includes("document", INCLUDES)?;
    let filter = filter_from(&query)?;
    let sort = sort_from(&query)?;
    let found = state
        .store
        .list_documents(principal.account_id, &filter, sort, page.into())
        .await?;
    let base = &state.config.public_url;
    let included = included(&state, &found.items, &includes).await?;
    let links: ListLinks = query.list_links(base, page, found.total);
    let body = json!({
        "data": found.items.iter().map(|d| resource(d, base)).collect::<Vec<_>>(),
        "included": included,
        "links": links,
        "meta": ListMeta { size: page.size, total: found.total },
    });
    Ok(jsonapi::json_body(&body))
}

fn filter_from(query: &QueryParams) -> Result<DocumentFilter, ApiError> {
    let mut filter = DocumentFilter::default();
    if let Some(value) = query.filter("filter[filename]") {
        // Split as documents' words are, so the two agree.
        let terms: Vec<String> = tidemark_store::search_words(value)
            .take(MAX_FILENAME_TERMS)
            .collect();
        if terms.is_empty() {
            return Err(ApiError::parameter(
                "filter[filename]",
                "invalid_filter",
                format!("filter[filename] needs letters or digits; got {value:?}."),
            ));
        }
        filter.filename_terms = terms;
    }
    if let Some(value) = query.filter("filter[reference]") {
        if value.chars().count() > 64 {
            return Err(ApiError::parameter(
                "filter[reference]",
                "invalid_filter",
                "filter[reference] is at most 64 characters.",
            ));
        }
        filter.reference = Some(value.to_uppercase());
    }
    if let Some(value) = query.filter("filter[document_types]") {
        for code in value.split(',').map(str::trim).filter(|c| !c.is_empty()) {
            let known: DocumentType = code.parse().map_err(|_| {
                ApiError::parameter(
                    "filter[document_types]",
                    "invalid_filter",
                    format!("{code:?} is not a document type; GET /v2/documents/types lists them."),
                )
            })?;
            filter.document_types.push(known.as_str().to_owned());
        }
    }
    Ok(filter)
}

fn sort_from(query: &QueryParams) -> Result<DocumentSort, ApiError> {
    let Some(value) = query.filter("sort") else {
        return Ok(DocumentSort::default());
    };
    let (descending, field) = match value.strip_prefix('-') {
        Some(field) => (true, field),
        None => (false, value),
    };
    let field = match field {
        "created_at" => DocumentSortField::CreatedAt,
        "document_type" => DocumentSortField::DocumentType,
        "added_by" => DocumentSortField::AddedBy,
        _ => {
            return Err(ApiError::parameter(
                "sort",
                "invalid_sort",
                format!(
                    "sort must be document_type, added_by or created_at, with - for descending; got {value:?}."
                ),
            ));
        }
    };
    Ok(DocumentSort { field, descending })
}

/// Upload a document: `multipart/form-data` with `file` (and optional `name`,
/// `shipment_ids`, `container_ids`), or JSON with `attributes.attached_document` set to a
/// direct upload's `signed_id`.
#[utoipa::path(
    post, path = "/v2/documents", tag = "Documents",
    request_body(content = DocumentInput, description = "multipart/form-data (`file`, `name`, `shipment_ids`, `container_ids`) or `{data: {type: \"document\", attributes: {name, attached_document}, relationships: {shipments, cargos}}}`"),
    responses(
        (status = 201, description = "The document", body = Object),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 409, body = ErrorDocument),
        (status = 413, body = ErrorDocument), (status = 415, body = ErrorDocument),
        (status = 422, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn create(
    state: AppState,
    principal: Principal,
    request: Request,
) -> Result<Response, ApiError> {
    match media_type(&request).as_str() {
        "multipart/form-data" => {
            let multipart = Multipart::from_request(request, &state)
                .await
                .map_err(|rejection| malformed_form(&rejection.body_text()))?;
            create_from_form(&state, principal, multipart).await
        }
        "application/json" | jsonapi::CONTENT_TYPE => {
            let limit = state.config.max_body_bytes;
            let bytes = to_bytes(request.into_body(), limit)
                .await
                .map_err(|_| ApiError::PayloadTooLarge { limit })?;
            let body = jsonapi::parse_body::<DocumentInput>(&bytes)?;
            create_from_upload(&state, principal, body).await
        }
        _ => Err(ApiError::UnsupportedMediaType),
    }
}

fn malformed_form(detail: &str) -> ApiError {
    ApiError::BadRequest(vec![FieldError::pointer(
        "",
        "malformed_form",
        format!("The multipart body could not be read: {detail}"),
    )])
}

/// The fields of an upload form.
#[derive(Default)]
struct Form {
    file: Option<(String, Option<String>, Bytes)>,
    name: Option<String>,
    shipment_ids: Vec<(String, String)>,
    container_ids: Vec<(String, String)>,
}

async fn read_form(state: &AppState, mut multipart: Multipart) -> Result<Form, Response> {
    let limit = state.config.max_document_bytes;
    let mut form = Form::default();
    let mut fields = 0;
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(error) => return Err(malformed_form(&error.body_text()).into_response()),
        };
        fields += 1;
        if fields > MAX_FORM_FIELDS {
            return Err(malformed_form("too many fields").into_response());
        }
        let name = field.name().unwrap_or_default().to_owned();
        let is_file = name == "file";
        let file_name = field.file_name().map(str::to_owned);
        let content_type = field.content_type().map(str::to_owned);
        let max = if is_file { limit } else { MAX_FORM_TEXT_BYTES };
        let mut bytes = Vec::new();
        let mut field = field;
        loop {
            match field.chunk().await {
                Ok(Some(chunk)) => {
                    if bytes.len() + chunk.len() > max {
                        return Err(if is_file {
                            upload_failure(UploadError::TooLarge { limit }, "/file")
                        } else {
                            ApiError::Invalid(vec![FieldError::pointer(
                                format!("/{name}"),
                                "too_long",
                                format!("{name} is longer than {max} bytes."),
                            )])
                            .into_response()
                        });
                    }
                    bytes.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(error) => return Err(malformed_form(&error.body_text()).into_response()),
            }
        }
        if is_file {
            form.file = Some((
                file_name.unwrap_or_default(),
                content_type,
                Bytes::from(bytes),
            ));
            continue;
        }
        let Ok(text) = String::from_utf8(bytes) else {
            return Err(ApiError::Invalid(vec![FieldError::pointer(
                format!("/{name}"),
                "invalid",
                format!("{name} must be UTF-8 text."),
            )])
            .into_response());
        };
        let values = || {
            text.split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(|v| (name.clone(), v.to_owned()))
                .collect::<Vec<_>>()
        };
        match name.as_str() {
            "name" => form.name = Some(text.clone()),
            "shipment_id" | "shipment_ids" | "shipment_ids[]" => form.shipment_ids.extend(values()),
            "container_id" | "container_ids" | "container_ids[]" | "cargo_ids" | "cargo_ids[]" => {
                form.container_ids.extend(values());
            }
            // Other fields are ignored, as browsers add some of their own.
            _ => {}
        }
    }
    Ok(form)
}

/// Shipment ids given by the client, each checked to be the account's.
async fn shipments_named(
    state: &AppState,
    principal: Principal,
    given: &[(String, String)],
) -> Result<Vec<ShipmentId>, ApiError> {
    let mut ids = Vec::new();
    for (pointer, value) in given {
        let id = Uuid::parse_str(value).ok().map(ShipmentId);
        let found = match id {
            Some(id) => match state.store.shipment(principal.account_id, id).await {
                Ok(_) => Some(id),
                Err(StoreError::NotFound) => None,
                Err(error) => return Err(error.into()),
            },
            None => None,
        };
        let Some(id) = found else {
            return Err(ApiError::Invalid(vec![FieldError::pointer(
                pointer.clone(),
                "not_found",
                format!("No shipment {value:?} in this account."),
            )]));
        };
        ids.push(id);
    }
    Ok(ids)
}

/// Container ids given by the client, each checked to be the account's.
async fn containers_named(
    state: &AppState,
    principal: Principal,
    given: &[(String, String)],
) -> Result<Vec<ContainerId>, ApiError> {
    let mut ids = Vec::new();
    for (pointer, value) in given {
        let id = Uuid::parse_str(value).ok().map(ContainerId);
        let found = match id {
            Some(id) => match state.store.container(principal.account_id, id).await {
                Ok(_) => Some(id),
                Err(StoreError::NotFound) => None,
                Err(error) => return Err(error.into()),
            },
            None => None,
        };
        let Some(id) = found else {
            return Err(ApiError::Invalid(vec![FieldError::pointer(
                pointer.clone(),
                "not_found",
                format!("No container {value:?} in this account."),
            )]));
        };
        ids.push(id);
    }
    Ok(ids)
}

async fn create_from_form(
    state: &AppState,
    principal: Principal,
    multipart: Multipart,
) -> Result<Response, ApiError> {
    let form = match read_form(state, multipart).await {
        Ok(form) => form,
        Err(response) => return Ok(response),
    };
    let Some((file_name, content_type, bytes)) = form.file else {
        return Err(ApiError::Invalid(vec![FieldError::pointer(
            "/file",
            "blank",
            "The form needs a file field holding the document.",
        )]));
    };
    let pointers = |given: Vec<(String, String)>| {
        given
            .into_iter()
            .map(|(name, value)| (format!("/{name}"), value))
            .collect::<Vec<_>>()
    };
    let shipment_ids = shipments_named(state, principal, &pointers(form.shipment_ids)).await?;
    let container_ids = containers_named(state, principal, &pointers(form.container_ids)).await?;
    let new = NewDocument {
        account: principal.account_id,
        uploaded_by: Some(principal.key_id),
        name: form.name,
        file_name,
        declared_content_type: content_type,
        shipment_ids,
        container_ids,
    };
    Ok(match upload::upload(state, new, bytes).await {
        Ok(doc) => created(state, &doc),
        Err(error) => upload_failure(error, "/file"),
    })
}

/// `(pointer, id)` of each member of a to-many relationship, type-checked.
fn relationship_ids(
    body: &jsonapi::JsonApiBody<DocumentInput>,
    names: &[&str],
    expected_type: &str,
) -> Result<Option<Vec<(String, String)>>, ApiError> {
    let Some((name, relationship)) = names.iter().find_map(|name| {
        body.relationships
            .as_ref()
            .and_then(|r| r.get(*name))
            .map(|r| (*name, r))
    }) else {
        return Ok(None);
    };
    let pointer = format!("/data/relationships/{name}/data");
    let Some(items) = relationship.get("data").and_then(Value::as_array) else {
        return Err(ApiError::Invalid(vec![FieldError::pointer(
            pointer,
            "invalid",
            format!("{name}.data must be an array of {{type, id}}."),
        )]));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            if item.get("type").and_then(Value::as_str) != Some(expected_type) {
                return Err(ApiError::Invalid(vec![FieldError::pointer(
                    format!("{pointer}/{i}/type"),
                    "invalid_type",
                    format!("Each {name} member must be of type '{expected_type}'."),
                )]));
            }
            match item.get("id").and_then(Value::as_str) {
                Some(id) => Ok((format!("{pointer}/{i}/id"), id.to_owned())),
                None => Err(ApiError::Invalid(vec![FieldError::pointer(
                    format!("{pointer}/{i}/id"),
                    "blank",
                    format!("Each {name} member needs an id."),
                )])),
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

async fn create_from_upload(
    state: &AppState,
    principal: Principal,
    body: jsonapi::JsonApiBody<DocumentInput>,
) -> Result<Response, ApiError> {
    const POINTER: &str = "/data/attributes/attached_document";
    let invalid = |code, detail: &str| {
        ApiError::Invalid(vec![FieldError::pointer(POINTER, code, detail.to_owned())])
    };
    let Some(signed_id) = body.attributes.attached_document.as_deref() else {
        return Err(invalid(
            "blank",
            "attached_document must be the signed_id of a direct upload (POST /v2/direct_uploads), or send the file as multipart/form-data.",
        ));
    };
    let not_found = || {
        invalid(
            "not_found",
            "attached_document names no direct upload of this account.",
        )
    };
    let upload_id = state
        .config
        .signing_key
        .verify_signed_id(signed_id)
        .ok_or_else(not_found)?;
    let upload = match state.store.direct_upload(upload_id).await {
        Ok(upload) if upload.account_id == principal.account_id => upload,
        Ok(_) | Err(StoreError::NotFound) => return Err(not_found()),
        Err(error) => return Err(error.into()),
    };
    let shipments = relationship_ids(&body, &["shipments"], "shipment")?.unwrap_or_default();
    let containers =
        relationship_ids(&body, &["cargos", "containers"], "container")?.unwrap_or_default();
    let new = NewDocument {
        account: principal.account_id,
        uploaded_by: Some(principal.key_id),
        name: body.attributes.name.clone(),
        file_name: upload.file_name.clone(),
        declared_content_type: Some(upload.declared_content_type.clone()),
        shipment_ids: shipments_named(state, principal, &shipments).await?,
        container_ids: containers_named(state, principal, &containers).await?,
    };
    Ok(
        match upload::from_direct_upload(state, new, &upload).await {
            Ok(doc) => created(state, &doc),
            Err(error) => upload_failure(error, POINTER),
        },
    )
}

/// Get a document.
#[utoipa::path(
    get, path = "/v2/documents/{id}", tag = "Documents",
    params(("id" = Uuid, Path), ("include" = Option<String>, Query)),
    responses(
        (status = 200, description = "The document", body = Object),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<Response, ApiError> {
    let doc = state
        .store
        .document(principal.account_id, parse_uuid(&id)?)
        .await?;
    Ok(jsonapi::json_body(
        &show_document(&state, &doc, &query).await?,
    ))
}

/// Edit a document: `name`, `document_type_manual` (a type code, or null to clear it),
/// and its links (`relationships.shipments`, `relationships.cargos`; each replaces the
/// links it names).
#[utoipa::path(
    patch, path = "/v2/documents/{id}", tag = "Documents",
    params(("id" = Uuid, Path)),
    request_body(content = DocumentInput, description = "`{data: {type: \"document\", attributes: {name, document_type_manual}, relationships: {shipments, cargos}}}`"),
    responses(
        (status = 200, description = "The document", body = Object),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 409, body = ErrorDocument), (status = 422, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn update(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    query: QueryParams,
    request: Request,
) -> Result<Response, ApiError> {
    let id = parse_uuid(&id)?;
    if !matches!(
        media_type(&request).as_str(),
        "application/json" | jsonapi::CONTENT_TYPE
    ) {
        return Err(ApiError::UnsupportedMediaType);
    }
    let limit = state.config.max_body_bytes;
    let bytes = to_bytes(request.into_body(), limit)
        .await
        .map_err(|_| ApiError::PayloadTooLarge { limit })?;
    let body = jsonapi::parse_body::<DocumentInput>(&bytes)?;
    let mut doc = state.store.document(principal.account_id, id).await?;
    if let Some(name) = &body.attributes.name {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 255 {
            return Err(ApiError::Invalid(vec![FieldError::pointer(
                "/data/attributes/name",
                "invalid",
                "name must have 1 to 255 characters.",
            )]));
        }
        name.clone_into(&mut doc.name);
    }
    if let Some(manual) = &body.attributes.document_type_manual {
        doc.document_type_manual = match manual.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(code) => Some(
                code.parse::<DocumentType>()
                    .map_err(|_| {
                        ApiError::Invalid(vec![FieldError::pointer(
                            "/data/attributes/document_type_manual",
                            "invalid",
                            format!("{code:?} is not a document type; GET /v2/documents/types lists them."),
                        )])
                    })?
                    .as_str()
                    .to_owned(),
            ),
        };
    }
    if let Some(shipments) = relationship_ids(&body, &["shipments"], "shipment")? {
        doc.shipment_ids = shipments_named(&state, principal, &shipments).await?;
        doc.shipment_ids.sort_unstable();
        doc.shipment_ids.dedup();
    }
    if let Some(containers) = relationship_ids(&body, &["cargos", "containers"], "container")? {
        doc.container_ids = containers_named(&state, principal, &containers).await?;
        doc.container_ids.sort_unstable();
        doc.container_ids.dedup();
    }
    doc.updated_at = state.clock.now();
    state.store.update_document(&doc).await?;
    Ok(jsonapi::json_body(
        &show_document(&state, &doc, &query).await?,
    ))
}

/// Delete a document (soft: it disappears from the API; the same file may be uploaded
/// again).
#[utoipa::path(
    delete, path = "/v2/documents/{id}", tag = "Documents",
    params(("id" = Uuid, Path)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn destroy(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state
        .store
        .delete_document(principal.account_id, parse_uuid(&id)?, state.clock.now())
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The document types and their labels.
#[utoipa::path(
    get, path = "/v2/documents/types", tag = "Documents",
    responses(
        (status = 200, description = "`{document_types: [{code, label}]}`", body = Object),
        (status = 401, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn types(_principal: Principal) -> Response {
    let types: Vec<Value> = DocumentType::ALL
        .iter()
        .map(|t| json!({"code": t.as_str(), "label": t.label()}))
        .collect();
    axum::Json(json!({"document_types": types})).into_response()
}

/// Download a document's bytes.
#[utoipa::path(
    get, path = "/v2/documents/{id}/download", tag = "Documents",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, description = "The file, with its content type"),
        (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn download(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let doc = state
        .store
        .document(principal.account_id, parse_uuid(&id)?)
        .await?;
    file_response(&state, &doc).await
}

/// A signed link to the document's bytes that needs no API key, for `signed_url_seconds`.
#[utoipa::path(
    get, path = "/v2/documents/{id}/download_url", tag = "Documents",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, description = "`{download_url, expires_at}`", body = Object),
        (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn download_url(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let doc = state
        .store
        .document(principal.account_id, parse_uuid(&id)?)
        .await?;
    let expires = state.clock.now() + state.config.signed_url_ttl;
    let url = signed_download_link(&state, &doc, expires);
    Ok(axum::Json(json!({
        "download_url": url,
        "expires_at": timestamp::format(expires),
    }))
    .into_response())
}

/// The signed, expiring link to a document's bytes. The signature covers the document
/// and the expiry; the account only routes the lookup (ids are unique, so another account
/// finds nothing).
pub fn signed_download_link(
    state: &AppState,
    doc: &StoredDocument,
    expires: DateTime<Utc>,
) -> String {
    let signature = state
        .config
        .signing_key
        .sign(Purpose::Download, doc.id, expires);
    format!(
        "{}/v2/documents/{}/content?account={}&expires={}&signature={signature}",
        state.config.public_url,
        doc.id,
        doc.account_id,
        expires.timestamp()
    )
}

#[derive(Debug, Deserialize)]
pub struct Signed {
    pub account: Option<String>,
    pub expires: Option<String>,
    pub signature: Option<String>,
}

impl Signed {
    /// Whether the link is signed for `purpose` and `id` and has not expired.
    pub fn verify(&self, state: &AppState, purpose: Purpose, id: Uuid) -> bool {
        let (Some(expires), Some(signature)) = (&self.expires, &self.signature) else {
            return false;
        };
        let Ok(expires) = expires.parse::<i64>() else {
            return false;
        };
        state
            .config
            .signing_key
            .verify(purpose, id, expires, signature, state.clock.now())
    }
}

/// `GET` of a signed download link: the bytes, with no API key.
async fn signed_download(
    state: AppState,
    Path(id): Path<String>,
    query: Result<Query<Signed>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let id = parse_uuid(&id)?;
    let Ok(Query(signed)) = query else {
        return Err(ApiError::Forbidden("This link is not valid."));
    };
    if !signed.verify(&state, Purpose::Download, id) {
        return Err(ApiError::Forbidden(
            "This link is not valid or has expired; ask for a new one at download_url.",
        ));
    }
    let account = signed
        .account
        .as_deref()
        .and_then(|a| Uuid::parse_str(a).ok())
        .ok_or(ApiError::NotFound)?;
    let doc = state
        .store
        .document(tidemark_domain::AccountId(account), id)
        .await?;
    file_response(&state, &doc).await
}

/// The bytes of `doc`, streamed, with headers that keep a browser from running them.
async fn file_response(state: &AppState, doc: &StoredDocument) -> Result<Response, ApiError> {
    let stream = match state.documents.stream(&doc.storage_key).await {
        Ok(stream) => stream,
        Err(crate::documents::storage::StorageError::NotFound) => return Err(ApiError::NotFound),
        Err(error) => {
            return Err(ApiError::Internal(
                anyhow::Error::new(error).context("reading a document"),
            ));
        }
    };
    let disposition = content_disposition(&doc.file_name, Disposition::Attachment);
    let body = Body::from_stream(stream.map(|chunk| chunk.map_err(std::io::Error::other)));
    let mut response = body.into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, doc.content_type.as_str()),
        (header::CONTENT_DISPOSITION, disposition.as_str()),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; sandbox",
        ),
        (header::CACHE_CONTROL, "private, no-store"),
    ] {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(doc.size_bytes));
    Ok(response)
}

/// A document as an `included` member (webhook deliveries of `document.*` events).
pub fn included_document(
    doc: &StoredDocument,
    base: &str,
) -> crate::api::jsonapi::ResourceObject<Value> {
    use crate::api::jsonapi::{Relationships, ResourceIdentifier, ResourceObject, SelfLink};
    let object = resource(doc, base);
    ResourceObject {
        id: doc.id.to_string(),
        kind: "document",
        attributes: object["attributes"].clone(),
        relationships: Relationships::default()
            .one(
                "account",
                Some(ResourceIdentifier::new("account", doc.account_id)),
            )
            .one(
                "user",
                doc.uploaded_by.map(|k| ResourceIdentifier::new("user", k)),
            )
            .one(
                "last_document_representation",
                doc.representation
                    .as_ref()
                    .map(|r| ResourceIdentifier::new("document_representation", r.id)),
            )
            .many(
                "shipments",
                doc.shipment_ids
                    .iter()
                    .map(|id| ResourceIdentifier::new("shipment", id))
                    .collect(),
            )
            .many(
                "cargos",
                doc.container_ids
                    .iter()
                    .map(|id| ResourceIdentifier::new("container", id))
                    .collect(),
            ),
        links: SelfLink {
            self_: document_link(base, doc.id),
        },
    }
}
