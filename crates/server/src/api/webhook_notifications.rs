//! `/v2/webhook_notifications`: what was sent to which webhook, how each attempt went, and
//! the JSON:API document a receiver gets (rendered here, once, and kept for retries).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use tidemark_domain::{
    DeliveryStatus, NotificationLog, ShipmentId, Webhook, WebhookId, WebhookNotification,
    WebhookNotificationId,
};
use tidemark_store::NotificationFilter;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument};
use crate::api::extract::Path;
use crate::api::jsonapi::Included;
use crate::api::jsonapi::{
    DEFAULT_PAGE_SIZE, Document, ListDocument, QueryParams, Relationships, Resource,
    ResourceIdentifier, ResourceObject, included_object, resource_object, timestamp,
};
use crate::app::AppState;
pub use crate::resources::webhook_notifications::{
    NotificationAttributes, NotificationResource, reference_of,
};
use crate::use_cases::webhooks::payload::{included_for, shipment_contexts};
use crate::use_cases::webhooks::{catalogue, deliver};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(examples))
        .routes(routes!(show))
        .routes(routes!(redeliver))
}

const INCLUDES: &[&str] = &[
    "reference_object",
    "webhook",
    "webhook_notification_logs",
    "shipment",
    "container",
    "transport_event",
];

#[derive(Debug, Serialize, ToSchema)]
pub struct NotificationLogAttributes {
    pub attempt: u32,
    #[serde(with = "timestamp")]
    pub started_at: DateTime<Utc>,
    pub duration_ms: u64,
    pub response_status: Option<u16>,
    /// `[name, value]` pairs as the receiver sent them.
    pub response_headers: Vec<(String, String)>,
    /// The first 4 KiB of the response body.
    pub response_body: Option<String>,
    /// Why the attempt failed without a response: timeout, refused address, …
    pub error: Option<String>,
}

struct LogResource<'a>(&'a NotificationLog);

impl Resource for LogResource<'_> {
    const TYPE: &'static str = "webhook_notification_log";
    const PATH: &'static str = "webhook_notification_logs";
    type Attributes = NotificationLogAttributes;

    fn id(&self) -> String {
        self.0.id.to_string()
    }

    fn attributes(&self) -> NotificationLogAttributes {
        let l = self.0;
        NotificationLogAttributes {
            attempt: l.attempt,
            started_at: l.started_at,
            duration_ms: l.duration_ms,
            response_status: l.response_status,
            response_headers: l.response_headers.clone(),
            response_body: l.response_body.clone(),
            error: l.error.clone(),
        }
    }

    fn relationships(&self) -> Relationships {
        Relationships::default().one(
            "webhook_notification",
            Some(ResourceIdentifier::new(
                "webhook_notification",
                self.0.notification_id,
            )),
        )
    }
}

fn parse_id(id: &str) -> Result<WebhookNotificationId, ApiError> {
    Uuid::parse_str(id)
        .map(WebhookNotificationId)
        .map_err(|_| ApiError::NotFound)
}

fn filter_from(query: &QueryParams) -> Result<NotificationFilter, ApiError> {
    let event = query.filter("filter[event]").map(str::to_owned);
    if let Some(name) = &event
        && catalogue::event(name).is_none()
    {
        return Err(ApiError::parameter(
            "filter[event]",
            "invalid_filter",
            format!("filter[event] must be a webhook event name; got {name:?}."),
        ));
    }
    Ok(NotificationFilter {
        event,
        delivery_status: query.choice(
            "filter[delivery_status]",
            DeliveryStatus::parse,
            "pending, succeeded or failed",
        )?,
        webhook: query.id("filter[webhook_id]")?.map(WebhookId),
        created_from: query.time("filter[created_at][start]")?,
        created_to: query.time("filter[created_at][end]")?,
    })
}

/// The resource objects of `notifications` and what `include` asks for beside them, with
/// each included resource once. Logs, webhooks and shipments load per page, not per
/// notification.
async fn documents_of(
    state: &AppState,
    principal: &Principal,
    notifications: &[WebhookNotification],
    query: &QueryParams,
) -> Result<(Vec<ResourceObject<NotificationAttributes>>, Vec<Included>), ApiError> {
    let account = principal.account_id;
    let includes = query.includes("webhook_notification", INCLUDES)?;
    let base = &state.config.public_url;
    let ids: Vec<WebhookNotificationId> = notifications.iter().map(|n| n.id).collect();
    let logs = state.store.notification_logs_of(account, &ids).await?;
    let wanted: Vec<&str> = [
        "reference_object",
        "shipment",
        "container",
        "transport_event",
    ]
    .into_iter()
    .filter(|name| includes.contains(name))
    .collect();
    let contexts = if wanted.is_empty() {
        HashMap::new()
    } else {
        let mut shipments: Vec<ShipmentId> =
            notifications.iter().filter_map(|n| n.shipment_id).collect();
        shipments.sort_unstable();
        shipments.dedup();
        shipment_contexts(state, account, &shipments).await?
    };
    let mut webhooks: HashMap<WebhookId, Webhook> = HashMap::new();
    let mut data = Vec::with_capacity(notifications.len());
    let mut included: Vec<Included> = Vec::new();
    let mut add = |object: Included| {
        if !included
            .iter()
            .any(|o| o.id == object.id && o.kind == object.kind)
        {
            included.push(object);
        }
    };
    for n in notifications {
        let own_logs: Vec<NotificationLog> = logs
            .iter()
            .filter(|l| l.notification_id == n.id)
            .cloned()
            .collect();
        data.push(resource_object(
            &NotificationResource {
                notification: n,
                logs: &own_logs,
            },
            base,
        ));
        if includes.contains("webhook_notification_logs") {
            own_logs
                .iter()
                .for_each(|l| add(included_object(&LogResource(l), base)));
        }
        if includes.contains("webhook") {
            let webhook = match webhooks.entry(n.webhook_id) {
                Entry::Occupied(known) => known.into_mut(),
                Entry::Vacant(slot) => {
                    slot.insert(state.store.webhook(account, n.webhook_id).await?)
                }
            };
            add(included_object(
                &crate::api::webhooks::WebhookResource::for_key(webhook, principal.scope),
                base,
            ));
        }
        if !wanted.is_empty() {
            let reference = reference_of(n);
            for object in included_for(state, n, &contexts).await.unwrap_or_default() {
                let is_reference = object.kind == reference.kind && object.id == reference.id;
                if (is_reference && wanted.contains(&"reference_object"))
                    || wanted.contains(&object.kind)
                {
                    add(object);
                }
            }
        }
    }
    Ok((data, included))
}

/// List notifications, newest first. Filters Terminal49 lacks: event, delivery status,
/// webhook and creation time.
#[utoipa::path(
    get, path = "/v2/webhook_notifications", tag = "Webhook notifications",
    params(
        ("filter[event]" = Option<String>, Query),
        ("filter[delivery_status]" = Option<String>, Query, description = "pending, succeeded or failed"),
        ("filter[webhook_id]" = Option<Uuid>, Query),
        ("filter[created_at][start]" = Option<String>, Query, description = "ISO 8601"),
        ("filter[created_at][end]" = Option<String>, Query, description = "ISO 8601"),
        ("include" = Option<String>, Query, description = "webhook, webhook_notification_logs, reference_object, shipment, container, transport_event"),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, body = ListDocument<NotificationAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    principal: Principal,
    query: QueryParams,
) -> Result<ListDocument<NotificationAttributes>, ApiError> {
    let page = query.page(DEFAULT_PAGE_SIZE)?;
    query.includes("webhook_notification", INCLUDES)?;
    let filter = filter_from(&query)?;
    let found = state
        .store
        .list_notifications(principal.account_id, &filter, page.into())
        .await?;
    let (data, included) = documents_of(&state, &principal, &found.items, &query).await?;
    Ok(ListDocument::page(
        data,
        included,
        &query,
        &state.config.public_url,
        page,
        found.total,
    ))
}

/// Get a notification, with its delivery logs, webhook and reference object on request.
#[utoipa::path(
    get, path = "/v2/webhook_notifications/{id}", tag = "Webhook notifications",
    params(
        ("id" = Uuid, Path),
        ("include" = Option<String>, Query, description = "webhook, webhook_notification_logs, reference_object, shipment, container, transport_event"),
    ),
    responses(
        (status = 200, body = Document<NotificationAttributes>),
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
) -> Result<Document<NotificationAttributes>, ApiError> {
    let n = state
        .store
        .notification(principal.account_id, parse_id(&id)?)
        .await?;
    let (data, included) =
        documents_of(&state, &principal, std::slice::from_ref(&n), &query).await?;
    let object = data.into_iter().next().ok_or(ApiError::NotFound)?;
    Ok(Document::new(object, included))
}

/// Send a notification again, whatever happened before (Terminal49 cannot replay).
#[utoipa::path(
    post, path = "/v2/webhook_notifications/{id}/redeliver", tag = "Webhook notifications",
    params(("id" = Uuid, Path)),
    responses(
        (status = 202, body = Document<NotificationAttributes>),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn redeliver(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let n = deliver::redeliver(&state, principal.account_id, parse_id(&id)?).await?;
    let logs = state.store.notification_logs(n.account_id, n.id).await?;
    let document = Document::new(
        resource_object(
            &NotificationResource {
                notification: &n,
                logs: &logs,
            },
            &state.config.public_url,
        ),
        Vec::new(),
    );
    Ok((StatusCode::ACCEPTED, document).into_response())
}

/// An example delivery body for an event, as a receiver would get it.
#[utoipa::path(
    get, path = "/v2/webhook_notifications/examples", tag = "Webhook notifications",
    params(("event" = String, Query, description = "A webhook event name, from GET /v2/webhooks/events")),
    responses(
        (status = 200, description = "`{data: [webhook_notification]}` with `included`"),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn examples(
    _principal: Principal,
    query: QueryParams,
) -> Result<axum::Json<Value>, ApiError> {
    let Some(name) = query.get("event").filter(|e| !e.trim().is_empty()) else {
        return Err(ApiError::parameter(
            "event",
            "blank",
            "event is required: a webhook event name.",
        ));
    };
    let Some(event) = catalogue::event(name) else {
        return Err(ApiError::parameter(
            "event",
            "not_recognized",
            format!("{name:?} is not a webhook event; see GET /v2/webhooks/events."),
        ));
    };
    let example = crate::use_cases::webhooks::example::payload(event);
    Ok(axum::Json(json!({
        "data": [example["data"].clone()],
        "included": example["included"].clone(),
    })))
}
