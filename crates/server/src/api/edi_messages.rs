//! `/v2/edi_messages`: EDI interchanges (X12 315/322, EDIFACT IFTSTA) handed to Tidemark,
//! what reading each one found, and its acknowledgement (997 or CONTRL). Tidemark's own
//! resource: Terminal49 has none.

use axum::body::to_bytes;
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tidemark_store::{EdiMessage, EdiMessageFilter};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::extract::{Path, parse_uuid};
use crate::api::jsonapi::{self, ListMeta, QueryParams, timestamp};
use crate::app::AppState;
use crate::use_cases::edi::{
    self, AcknowledgementError, Channel, EDIFACT_MEDIA_TYPE, Inbound, ReceiveError, X12_MEDIA_TYPE,
};

/// The collection's path, whose body limit is an interchange's, not a JSON body's.
pub const PATH: &str = "/v2/edi_messages";

const STATUSES: &[&str] = &[
    "received",
    "processed",
    "partially_processed",
    "rejected",
    "duplicate",
    "unmatched",
];

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create, list))
        .routes(routes!(show))
        .routes(routes!(acknowledgement))
        // An interchange may be far larger than a JSON body; the use case bounds it.
        .layer(DefaultBodyLimit::max(edi::MAX_BYTES + 1))
}

/// Hand Tidemark an EDI interchange: X12 315 or 322 (`application/edi-x12`) or EDIFACT
/// IFTSTA (`application/edifact`), as the raw body. It is stored as received, then read:
/// each transaction naming a tracked bill of lading, booking or container updates it; a
/// broken transaction is listed in `errors` while the others are applied; the same sender's
/// control number sent again is a `duplicate` and changes nothing.
#[utoipa::path(
    post, path = "/v2/edi_messages", tag = "EDI Messages",
    request_body(content = String, description = "The interchange, as received. Send it with `Content-Type: application/edi-x12` (X12 315 or 322) or `application/edifact` (IFTSTA); `text/plain` is taken too", content_type = "text/plain"),
    responses(
        (status = 201, description = "The interchange as read", body = jsonapi::Document<Value>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 413, body = ErrorDocument),
        (status = 415, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn create(
    state: AppState,
    principal: Principal,
    request: Request,
) -> Result<Response, ApiError> {
    let media_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if !matches!(
        media_type.as_str(),
        X12_MEDIA_TYPE | EDIFACT_MEDIA_TYPE | "application/edi-consent" | "text/plain"
    ) {
        return Err(ApiError::MediaTypeNotAccepted {
            accepted: "Send the interchange as the body, with Content-Type application/edi-x12 \
                       (X12 315 or 322) or application/edifact (IFTSTA).",
        });
    }
    let bytes = to_bytes(request.into_body(), edi::MAX_BYTES)
        .await
        .map_err(|_| ApiError::PayloadTooLarge {
            limit: edi::MAX_BYTES,
        })?;
    let inbound = Inbound {
        channel: Channel::Api,
        source_name: None,
        create_shipments: false,
    };
    let message = edi::receive(&state.edi(), principal.account_id, &inbound, &bytes)
        .await
        .map_err(|error| match error {
            ReceiveError::Empty => ApiError::BadRequest(vec![FieldError::pointer(
                "",
                "empty",
                "The body is empty: send the interchange as the body.",
            )]),
            ReceiveError::TooLarge { limit, .. } => ApiError::PayloadTooLarge { limit },
            ReceiveError::Store(error) => error.into(),
        })?;
    let base = &state.config.public_url;
    let body = json!({
        "data": resource(&message, base),
        "links": {"self": link(base, message.id)},
    });
    Ok((StatusCode::CREATED, jsonapi::json_body(&body)).into_response())
}

/// List the account's EDI interchanges, newest first.
#[utoipa::path(
    get, path = "/v2/edi_messages", tag = "EDI Messages",
    params(
        ("filter[status]" = Option<String>, Query, description = "received, processed, partially_processed, rejected, duplicate, or unmatched (interchanges with transactions that name nothing tracked yet)"),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, description = "`data`, `links`, `meta`", body = jsonapi::ListDocument<Value>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn list(
    state: AppState,
    principal: Principal,
    query: QueryParams,
) -> Result<Response, ApiError> {
    let page = query.page(jsonapi::DEFAULT_PAGE_SIZE)?;
    let status = query.filter("filter[status]").map(str::to_owned);
    if let Some(status) = &status
        && !STATUSES.contains(&status.as_str())
    {
        return Err(ApiError::parameter(
            "filter[status]",
            "invalid_filter",
            format!("filter[status] must be one of {}.", STATUSES.join(", ")),
        ));
    }
    let found = state
        .store
        .list_edi_messages(
            principal.account_id,
            &EdiMessageFilter { status },
            page.into(),
        )
        .await?;
    let base = &state.config.public_url;
    let body = json!({
        "data": found.items.iter().map(|m| resource(m, base)).collect::<Vec<_>>(),
        "links": query.list_links(base, page, found.total),
        "meta": ListMeta::new(page.size, page.number, found.total),
    });
    Ok(jsonapi::json_body(&body))
}

/// Get an EDI interchange as read.
#[utoipa::path(
    get, path = "/v2/edi_messages/{id}", tag = "EDI Messages",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, description = "The interchange as read", body = jsonapi::Document<Value>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn show(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let message = state
        .store
        .edi_message(principal.account_id, parse_uuid(&id)?)
        .await?;
    let base = &state.config.public_url;
    let body = json!({
        "data": resource(&message, base),
        "links": {"self": link(base, message.id)},
    });
    Ok(jsonapi::json_body(&body))
}

/// The interchange's acknowledgement, to send back to its sender: an X12 997 for X12, an
/// EDIFACT CONTRL for IFTSTA, accepting each transaction read and rejecting each broken one
/// with its position and the standard's error code.
#[utoipa::path(
    get, path = "/v2/edi_messages/{id}/acknowledgement", tag = "EDI Messages",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, description = "The 997 (application/edi-x12) or CONTRL (application/edifact)", body = String, content_type = "application/edi-x12"),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 409, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn acknowledgement(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let ack = edi::acknowledgement(&state.edi(), principal.account_id, parse_uuid(&id)?)
        .await
        .map_err(|error| match error {
            AcknowledgementError::Store(error) => error.into(),
            other => ApiError::Conflict {
                code: "not_acknowledgeable",
                detail: other.to_string(),
            },
        })?;
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, ack.media_type)],
        ack.body,
    )
        .into_response())
}

fn link(base: &str, id: Uuid) -> String {
    format!("{base}{PATH}/{id}")
}

pub(crate) fn resource(m: &EdiMessage, base: &str) -> Value {
    json!({
        "id": m.id,
        "type": "edi_message",
        "attributes": {
            "status": m.status,
            "channel": m.channel,
            "source_name": m.source_name,
            "syntax": m.syntax,
            "sender": m.sender,
            "receiver": m.receiver,
            "control_number": m.control_number,
            "size_bytes": m.size_bytes,
            "transactions_count": m.transactions,
            "rejected_transactions_count": m.rejected_transactions,
            "statuses_count": m.statuses,
            "events_count": m.events,
            "unknown_codes_count": m.drift,
            "unmatched_transactions_count": m.unmatched,
            "errors": m.errors,
            "create_shipments": m.create_shipments,
            "created_at": timestamp::format(m.created_at),
            "updated_at": timestamp::format(m.updated_at),
        },
        "relationships": {
            "account": {"data": {"id": m.account_id, "type": "account"}},
            "duplicate_of": {"data": m.duplicate_of.map(|id| json!({"id": id, "type": "edi_message"}))},
        },
        "links": {
            "self": link(base, m.id),
            "acknowledgement": format!("{}/acknowledgement", link(base, m.id)),
        },
    })
}
