//! Request bodies of uploads and edits, and the shipments and containers they name.

use axum::extract::Request;
use axum::http::header;
use serde::Deserialize;
use serde_json::Value;
use tidemark_domain::{ContainerId, ShipmentId};
use tidemark_store::StoreError;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, FieldError};
use crate::api::jsonapi::{self, BodyType};
use crate::app::AppState;

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

/// The essence of a `Content-Type` header, lower case.
pub(super) fn media_type(request: &Request) -> String {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// `(pointer, id)` of each member of a to-many relationship, type-checked.
pub(super) fn relationship_ids(
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

/// Shipment ids given by the client, each checked to be the account's.
pub(super) async fn shipments_named(
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
pub(super) async fn containers_named(
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
