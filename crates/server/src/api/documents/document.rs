//! One document: show, edit (name, manual type, links) and delete.

use axum::body::to_bytes;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::Response;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::extract::{Path, parse_uuid};
use crate::api::jsonapi::{self, QueryParams};
use crate::app::AppState;
use crate::resources::documents::DocumentAttributes;
use crate::use_cases::documents::classify::DocumentType;

use super::input::{
    DocumentInput, containers_named, media_type, relationship_ids, shipments_named,
};
use super::resource::show_document;

/// Get a document.
#[utoipa::path(
    get, path = "/v2/documents/{id}", tag = "Documents",
    params(("id" = Uuid, Path), ("include" = Option<String>, Query)),
    responses(
        (status = 200, description = "The document", body = jsonapi::Document<DocumentAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn show(
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
        (status = 200, description = "The document", body = jsonapi::Document<DocumentAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 409, body = ErrorDocument), (status = 422, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn update(
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
pub(super) async fn destroy(
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
