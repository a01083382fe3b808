//! `/v2/document_schemas/{id}`: the fields Tidemark extracts from each document type, as a
//! JSON Schema, in Terminal49's shape. The id is the full version
//! (`commercial_invoice@2026-03-01`) or the bare type for the current version.

use axum::response::Response;
use chrono::{NaiveDate, TimeZone, Utc};
use serde_json::json;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::error::{ApiError, ErrorDocument};
use crate::api::extract::Path;
use crate::api::jsonapi::{self, timestamp};
use crate::app::AppState;
use crate::use_cases::documents::fields::{self, SCHEMA_VERSION};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show))
}

/// Get a document schema: the fields extraction yields for a document type.
#[utoipa::path(
    get, path = "/v2/document_schemas/{id}", tag = "Document Schemas",
    params(("id" = String, Path, description = "`bill_of_lading@2026-03-01`, or a type code for its current schema")),
    responses(
        (status = 200, description = "The schema", body = Object),
        (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn show(state: AppState, Path(id): Path<String>) -> Result<Response, ApiError> {
    let document_type = fields::schema_named(&id).ok_or(ApiError::NotFound)?;
    let full_version = fields::schema_id(document_type).ok_or(ApiError::NotFound)?;
    // The schemas are part of the release: their time is their version's date.
    let released = NaiveDate::parse_from_str(SCHEMA_VERSION, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|d| timestamp::format(Utc.from_utc_datetime(&d)));
    let link = format!(
        "{}/v2/document_schemas/{full_version}",
        state.config.public_url
    );
    Ok(jsonapi::json_body(&json!({
        "data": {
            "id": full_version,
            "type": "document_schema",
            "attributes": {
                "document_type": document_type.as_str(),
                "label": document_type.label(),
                "schema_version": SCHEMA_VERSION,
                "full_version": full_version,
                "current": true,
                "draft": false,
                "active_at": released,
                "schema_format": "json_schema",
                "description": "Fields read from the document's text by labels and patterns; \
                                a field not found is null.",
                "schema_payload": fields::json_schema(document_type),
                "created_at": released,
                "updated_at": released,
            },
            "links": {"self": link},
        },
        "links": {"self": link},
    })))
}
