//! `POST /v2/documents`: an upload as `multipart/form-data`, or a direct upload named by
//! its `signed_id`; and how a failed upload answers.

use axum::body::{Bytes, to_bytes};
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tidemark_store::{StoreError, StoredDocument};
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::jsonapi;
use crate::app::AppState;
use crate::resources::documents::DocumentAttributes;
use crate::use_cases::documents::upload::{self, NewDocument, UploadError};

use super::input::{
    DocumentInput, containers_named, media_type, relationship_ids, shipments_named,
};
use super::resource::{document_link, single};

/// Text fields of an upload form are short; more than this is a bad request.
const MAX_FORM_TEXT_BYTES: usize = 4096;

const MAX_FORM_FIELDS: usize = 64;

/// Upload a document: `multipart/form-data` with `file` (and optional `name`,
/// `shipment_ids`, `container_ids`), or JSON with `attributes.attached_document` set to a
/// direct upload's `signed_id`.
#[utoipa::path(
    post, path = "/v2/documents", tag = "Documents",
    request_body(content = DocumentInput, description = "multipart/form-data (`file`, `name`, `shipment_ids`, `container_ids`) or `{data: {type: \"document\", attributes: {name, attached_document}, relationships: {shipments, cargos}}}`"),
    responses(
        (status = 201, description = "The document", body = jsonapi::Document<DocumentAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 409, body = ErrorDocument),
        (status = 413, body = ErrorDocument), (status = 415, body = ErrorDocument),
        (status = 422, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn create(
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
        email_submission: None,
    };
    Ok(
        match upload::upload(
            state,
            &state.documents,
            state.config.max_document_bytes,
            new,
            bytes,
        )
        .await
        {
            Ok(doc) => created(state, &doc),
            Err(error) => upload_failure(error, "/file"),
        },
    )
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
        .signing_key()
        .await?
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
        email_submission: None,
    };
    Ok(
        match upload::from_direct_upload(state, &state.documents, new, &upload).await {
            Ok(doc) => created(state, &doc),
            Err(error) => upload_failure(error, POINTER),
        },
    )
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
        UploadError::UploadExpired => invalid(
            "upload_expired",
            "The direct upload expired before a document was made of it: start a new one."
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
