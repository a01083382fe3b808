//! `/v2/webhooks`: subscriptions to tracking events, the event catalogue, secret rotation
//! and one-off test deliveries.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tidemark_domain::{ApiKeyScope, Webhook, WebhookId};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::extract::Path;
use crate::api::jsonapi::{
    BodyType, DEFAULT_PAGE_SIZE, Document, JsonApiBody, ListDocument, QueryParams, Resource,
    resource_object, timestamp,
};
use crate::app::AppState;
use crate::use_cases::webhooks::headers::{WebhookHeader, validate_url};
use crate::use_cases::webhooks::manage::{self, WebhookError, WebhookInput};
use crate::use_cases::webhooks::{catalogue, deliver, example};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(events))
        .routes(routes!(ips))
        .routes(routes!(trigger))
        .routes(routes!(show, update, delete))
        .routes(routes!(rotate_secret))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookAttributes {
    pub url: String,
    pub active: bool,
    pub events: Vec<String>,
    /// Signs deliveries (`X-T49-Webhook-Signature` and `webhook-signature`). `null` to a
    /// read-only key: whoever holds the secret can forge deliveries.
    pub secret: Option<String>,
    pub headers: Vec<WebhookHeader>,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "timestamp")]
    pub updated_at: DateTime<Utc>,
    /// Until when the secret before the last rotation still signs too.
    #[serde(with = "timestamp::option")]
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
}

pub struct WebhookResource<'a> {
    pub webhook: &'a Webhook,
    /// Whether the caller may see the signing secret (keys that can write only).
    pub secret_visible: bool,
}

impl<'a> WebhookResource<'a> {
    /// The webhook as a key of `scope` sees it.
    pub fn for_key(webhook: &'a Webhook, scope: ApiKeyScope) -> Self {
        Self {
            webhook,
            secret_visible: scope.can_write(),
        }
    }
}

impl Resource for WebhookResource<'_> {
    const TYPE: &'static str = "webhook";
    const PATH: &'static str = "webhooks";
    type Attributes = WebhookAttributes;

    fn id(&self) -> String {
        self.webhook.id.to_string()
    }

    fn attributes(&self) -> WebhookAttributes {
        let w = self.webhook;
        WebhookAttributes {
            url: w.url.clone(),
            active: w.active,
            events: w.events.clone(),
            secret: self.secret_visible.then(|| w.secret.clone()),
            headers: w
                .headers
                .iter()
                .map(|h| WebhookHeader {
                    name: h.name.clone(),
                    value: h.value.clone(),
                })
                .collect(),
            created_at: w.created_at,
            updated_at: w.updated_at,
            previous_secret_expires_at: w.previous_secret_expires_at,
        }
    }
}

/// Attributes of `POST` and `PATCH /v2/webhooks`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct WebhookBody {
    pub url: Option<String>,
    pub active: Option<bool>,
    pub events: Option<Vec<String>>,
    pub headers: Option<Vec<WebhookHeader>>,
}

impl BodyType for WebhookBody {
    const TYPE: &'static str = "webhook";
}

impl From<WebhookBody> for WebhookInput {
    fn from(body: WebhookBody) -> Self {
        Self {
            url: body.url,
            active: body.active,
            events: body.events,
            headers: body.headers,
        }
    }
}

impl From<WebhookError> for ApiError {
    fn from(error: WebhookError) -> Self {
        match error {
            WebhookError::Invalid(problems) => Self::Invalid(
                problems
                    .into_iter()
                    .map(|p| FieldError::pointer(p.pointer, p.code, p.detail))
                    .collect(),
            ),
            WebhookError::Store(error) => error.into(),
        }
    }
}

fn parse_id(id: &str) -> Result<WebhookId, ApiError> {
    Uuid::parse_str(id)
        .map(WebhookId)
        .map_err(|_| ApiError::NotFound)
}

fn document(
    state: &AppState,
    principal: &Principal,
    webhook: &Webhook,
) -> Document<WebhookAttributes> {
    Document::new(
        resource_object(
            &WebhookResource::for_key(webhook, principal.scope),
            &state.config.public_url,
        ),
        Vec::new(),
    )
}

/// List webhooks, newest first.
#[utoipa::path(
    get, path = "/v2/webhooks", tag = "Webhooks",
    params(("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query)),
    responses(
        (status = 200, body = ListDocument<WebhookAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    principal: Principal,
    query: QueryParams,
) -> Result<ListDocument<WebhookAttributes>, ApiError> {
    let page = query.page(DEFAULT_PAGE_SIZE)?;
    let found = state
        .store
        .list_webhooks(principal.account_id, page.into())
        .await?;
    let base = &state.config.public_url;
    Ok(ListDocument::page(
        found
            .items
            .iter()
            .map(|webhook| {
                resource_object(&WebhookResource::for_key(webhook, principal.scope), base)
            })
            .collect(),
        Vec::new(),
        &query,
        base,
        page,
        found.total,
    ))
}

/// Subscribe a URL to events. The server generates the secret.
#[utoipa::path(
    post, path = "/v2/webhooks", tag = "Webhooks",
    request_body(content = WebhookBody, description = "`{data: {type: \"webhook\", attributes: {url, events, active?, headers?}}}`"),
    responses(
        (status = 201, body = Document<WebhookAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 422, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn create(
    state: AppState,
    principal: Principal,
    body: JsonApiBody<WebhookBody>,
) -> Result<Response, ApiError> {
    let webhook = manage::create(
        &state,
        state.config.webhooks_allow_private,
        principal.account_id,
        body.attributes.into(),
    )
    .await?;
    Ok((StatusCode::CREATED, document(&state, &principal, &webhook)).into_response())
}

/// Get a webhook.
#[utoipa::path(
    get, path = "/v2/webhooks/{id}", tag = "Webhooks",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = Document<WebhookAttributes>),
        (status = 401, body = ErrorDocument), (status = 404, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Document<WebhookAttributes>, ApiError> {
    let webhook = state
        .store
        .webhook(principal.account_id, parse_id(&id)?)
        .await?;
    Ok(document(&state, &principal, &webhook))
}

/// Change a webhook's url, events, headers or whether it is active.
#[utoipa::path(
    patch, path = "/v2/webhooks/{id}", tag = "Webhooks",
    params(("id" = Uuid, Path)),
    request_body(content = WebhookBody),
    responses(
        (status = 200, body = Document<WebhookAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 404, body = ErrorDocument),
        (status = 422, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn update(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    body: JsonApiBody<WebhookBody>,
) -> Result<Document<WebhookAttributes>, ApiError> {
    let id = parse_id(&id)?;
    let webhook = manage::update(
        &state,
        state.config.webhooks_allow_private,
        principal.account_id,
        id,
        body.attributes.into(),
    )
    .await?;
    Ok(document(&state, &principal, &webhook))
}

/// Delete a webhook, with its notifications and their logs.
#[utoipa::path(
    delete, path = "/v2/webhooks/{id}", tag = "Webhooks",
    params(("id" = Uuid, Path)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn delete(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    state
        .store
        .delete_webhook(principal.account_id, parse_id(&id)?)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Issue a new secret. The old one keeps signing deliveries beside it for 24 hours.
#[utoipa::path(
    post, path = "/v2/webhooks/{id}/rotate_secret", tag = "Webhooks",
    params(("id" = Uuid, Path)),
    responses(
        (status = 200, body = Document<WebhookAttributes>),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn rotate_secret(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
) -> Result<Document<WebhookAttributes>, ApiError> {
    let webhook = manage::rotate_secret(&state, principal.account_id, parse_id(&id)?).await?;
    Ok(document(&state, &principal, &webhook))
}

/// `{webhook_notification_ips, last_updated}`, Terminal49's shape (not a JSON:API document).
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookIps {
    /// The addresses deliveries leave from (`webhook_egress_ips`); empty when the
    /// installation has not declared them.
    pub webhook_notification_ips: Vec<String>,
    /// When the list was last loaded (the process's start).
    #[serde(with = "timestamp")]
    pub last_updated: DateTime<Utc>,
}

/// The IP addresses webhook notifications are sent from, to allow through a firewall.
#[utoipa::path(
    get, path = "/v2/webhooks/ips", tag = "Webhooks",
    responses(
        (status = 200, body = WebhookIps, content_type = "application/vnd.api+json"),
        (status = 401, body = ErrorDocument, content_type = "application/vnd.api+json"),
        (status = 429, body = ErrorDocument, content_type = "application/vnd.api+json"),
    ),
    security(("token" = []))
)]
async fn ips(state: AppState, _principal: Principal) -> Response {
    let egress = crate::use_cases::webhooks::egress::egress_ips(
        &state.config.webhook_egress_ips,
        state.started_at,
    );
    crate::api::jsonapi::json_body(&WebhookIps {
        webhook_notification_ips: egress.ips,
        last_updated: egress.last_updated,
    })
}

/// The webhook events, grouped as Terminal49 groups them.
#[utoipa::path(
    get, path = "/v2/webhooks/events", tag = "Webhooks",
    responses((status = 200, description = "`{data: [webhook_event_category]}`"), (status = 401, body = ErrorDocument)),
    security(("token" = []))
)]
async fn events(_principal: Principal) -> axum::Json<Value> {
    let data: Vec<Value> = catalogue::groups()
        .iter()
        .map(|group| {
            json!({
                "id": group.id,
                "type": "webhook_event_category",
                "attributes": {
                    "name": group.name,
                    "events": catalogue::events_in(group.id)
                        .map(|e| json!({"name": e.name, "description": e.description}))
                        .collect::<Vec<_>>(),
                },
            })
        })
        .collect();
    axum::Json(json!({ "data": data }))
}

/// `POST /v2/webhooks/trigger`'s plain JSON body (not JSON:API, as Terminal49's).
#[derive(Debug, Deserialize, ToSchema)]
pub struct TriggerBody {
    pub url: Option<String>,
    pub event: Option<String>,
    /// Signs the test delivery as a webhook with this secret would be signed.
    pub secret: Option<String>,
}

fn trigger_problem(member: &str, code: &'static str, detail: String) -> ApiError {
    ApiError::Invalid(vec![FieldError::pointer(
        format!("/{member}"),
        code,
        detail,
    )])
}

/// Send one example delivery to a URL and show what was sent and answered.
#[utoipa::path(
    post, path = "/v2/webhooks/trigger", tag = "Webhooks",
    request_body(content = TriggerBody),
    responses(
        (status = 200, description = "`{url, succeeded, error, status_code, request_headers, request_body, response_headers, response_body}`"),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 422, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn trigger(
    state: AppState,
    _principal: Principal,
    body: axum::body::Bytes,
) -> Result<axum::Json<Value>, ApiError> {
    let body: TriggerBody = serde_json::from_slice(&body).map_err(|error| {
        ApiError::BadRequest(vec![FieldError::pointer(
            "",
            "malformed_json",
            format!("The body is not valid JSON: {error}."),
        )])
    })?;
    let Some(url) = body.url.filter(|u| !u.trim().is_empty()) else {
        return Err(trigger_problem(
            "url",
            "blank",
            "url is required".to_owned(),
        ));
    };
    let url = validate_url(&url, state.config.webhooks_allow_private)
        .map_err(|p| trigger_problem("url", p.code, p.detail))?;
    let name = body.event.unwrap_or_default();
    let Some(event) = catalogue::event(&name) else {
        return Err(trigger_problem(
            "event",
            "not_recognized",
            format!("event {name:?} is not a webhook event"),
        ));
    };
    let payload = serde_json::to_string(&example::payload(event))
        .map_err(|error| ApiError::Internal(anyhow::anyhow!("example payload: {error}")))?;
    let secrets: Vec<&str> = body.secret.as_deref().into_iter().collect();
    let headers = deliver::delivery_headers(
        &format!("trigger_{}", state.ids.next_id()),
        state.clock.now(),
        &secrets,
        payload.as_bytes(),
        &[],
    );
    let attempt = deliver::send(
        &state.webhook_client,
        url.as_str(),
        headers,
        payload.clone().into_bytes(),
        state.clock.now(),
    )
    .await;
    Ok(axum::Json(json!({
        "url": url.as_str(),
        "succeeded": attempt.succeeded(),
        "error": attempt.error,
        "status_code": attempt.status,
        "request_headers": attempt.request_headers.iter()
            .filter(|(name, _)| !secrets.is_empty() || !name.to_ascii_lowercase().contains("signature"))
            .map(|(n, v)| json!({"name": n, "value": v})).collect::<Vec<_>>(),
        "request_body": payload,
        "response_headers": attempt.response_headers.iter()
            .map(|(n, v)| json!({"name": n, "value": v})).collect::<Vec<_>>(),
        "response_body": attempt.response_body,
    })))
}
