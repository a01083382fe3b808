//! The Webhooks pages: the account's webhooks with a form to create one (URL and events),
//! and each webhook's page: pause or resume, rotate the secret, send a test delivery (an
//! example payload of one of its events, signed with its secret, sent once and shown with
//! the answer), and its delivery log (each notification with every attempt's request,
//! response, status and timing, and redelivery). All through the same use cases as
//! `/v2/webhooks`, `/v2/webhooks/trigger` and `/v2/webhook_notifications`.

use axum::body::Bytes;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};
use maud::{Markup, html};
use tidemark_domain::{
    NotificationLog, Webhook, WebhookId, WebhookNotification, WebhookNotificationId,
};
use tidemark_store::{NotificationFilter, PageRequest};
use uuid::Uuid;

use super::pages::{FormPairs, PageError, csrf_field, layout, writable};
use super::session::Session;
use crate::app::{App, AppState};
use crate::use_cases::webhooks::deliver::{self, Attempt};
use crate::use_cases::webhooks::headers::Problem;
use crate::use_cases::webhooks::manage::{self, WebhookError, WebhookInput};
use crate::use_cases::webhooks::{catalogue, example};

/// Notifications the delivery log shows, newest first.
const LOG_SIZE: u32 = 50;

fn utc(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

fn parse_webhook(id: &str) -> Result<WebhookId, PageError> {
    Uuid::parse_str(id)
        .map(WebhookId)
        .map_err(|_| PageError::NotFound)
}

/// The create form: URL and events by group, as the event catalogue lists them.
fn create_form(session: &Session, url: &str, chosen: &[String]) -> Markup {
    html! {
        h2 { "New webhook" }
        form.stack method="post" action="/webhooks" {
            (csrf_field(session))
            div {
                label for="url" { "URL" }
                input #url type="url" name="url" value=(url) size="60" required placeholder="https://example.com/tidemark";
            }
            fieldset {
                legend { "Events" }
                @for group in catalogue::groups() {
                    div.event-group {
                        span.muted { (group.name) }
                        @for event in catalogue::events_in(group.id) {
                            label.check title=(event.description) {
                                @if chosen.iter().any(|c| c == event.name) {
                                    input type="checkbox" name="events" value=(event.name) checked;
                                } @else {
                                    input type="checkbox" name="events" value=(event.name);
                                }
                                " " (event.name)
                            }
                        }
                    }
                }
            }
            button type="submit" { "Create webhook" }
        }
    }
}

fn problems_markup(problems: &[Problem]) -> Markup {
    html! {
        div.error role="alert" {
            p { "The webhook was not created:" }
            ul { @for problem in problems { li { (problem.detail) } } }
        }
    }
}

async fn list_page(
    app: &App,
    session: &Session,
    form: Option<(&str, &[String], &[Problem])>,
) -> Result<Markup, PageError> {
    let webhooks = app
        .store
        .list_webhooks(
            session.account_id,
            PageRequest {
                offset: 0,
                limit: 100,
            },
        )
        .await?;
    let (url, chosen, problems) = form.unwrap_or(("", &[], &[]));
    Ok(layout(
        session,
        "Webhooks",
        "/webhooks",
        html! {
            @if !problems.is_empty() { (problems_markup(problems)) }
            @if webhooks.items.is_empty() {
                p { "No webhooks yet." }
            } @else {
                table {
                    caption.muted { (webhooks.total) " webhooks" }
                    thead { tr { th scope="col" { "URL" } th scope="col" { "Events" } th scope="col" { "State" } th scope="col" { "Failing since" } } }
                    tbody {
                        @for webhook in &webhooks.items {
                            tr {
                                td { a href={"/webhooks/" (webhook.id.0)} { (webhook.url) } }
                                td { (webhook.events.join(", ")) }
                                td { @if webhook.active { "active" } @else { "paused" } }
                                td { (webhook.failing_since.map(utc).unwrap_or_default()) }
                            }
                        }
                    }
                }
            }
            @if session.can_write() {
                (create_form(session, url, chosen))
            } @else {
                p.muted { "This API key is read-only: webhooks cannot be created with it." }
            }
        },
    ))
}

/// `GET /webhooks`.
pub async fn index(state: AppState, session: Session) -> Result<Markup, PageError> {
    list_page(&state, &session, None).await
}

/// `POST /webhooks`: creates the webhook and opens its page, or shows every problem.
pub async fn create(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, PageError> {
    let form = FormPairs::parse(&body);
    writable(&session, &headers, &form)?;
    let url = form.one("url").trim().to_owned();
    let events = form.all("events");
    let input = WebhookInput {
        url: Some(url.clone()),
        events: Some(events.clone()),
        ..WebhookInput::default()
    };
    match manage::create(
        &state,
        state.config.webhooks_allow_private,
        session.account_id,
        input,
    )
    .await
    {
        Ok(webhook) => Ok(Redirect::to(&format!("/webhooks/{}", webhook.id.0)).into_response()),
        Err(WebhookError::Invalid(problems)) => {
            let page = list_page(&state, &session, Some((&url, &events, &problems))).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
        Err(WebhookError::Store(error)) => Err(error.into()),
    }
}

/// A test delivery's outcome, shown on the webhook's page.
struct TestSent {
    event: String,
    body: String,
    attempt: Attempt,
}

fn headers_markup(headers: &[(String, String)]) -> Markup {
    html! {
        pre.headers { @for (name, value) in headers { (name) ": " (value) "\n" } }
    }
}

fn test_markup(sent: &TestSent) -> Markup {
    let attempt = &sent.attempt;
    html! {
        section.test-result aria-labelledby="test-result" {
            h2 #test-result { "Test delivery" }
            p role="status" {
                @if attempt.succeeded() { "Delivered: " } @else { "Not delivered: " }
                (sent.event) " → "
                @match (attempt.status, &attempt.error) {
                    (Some(status), _) => { "HTTP " (status) }
                    (None, Some(error)) => { (error) }
                    (None, None) => { "no answer" }
                }
                " in " (attempt.duration_ms) " ms."
            }
            details {
                summary { "Request" }
                (headers_markup(&attempt.request_headers))
                pre { (sent.body) }
            }
            details {
                summary { "Response" }
                (headers_markup(&attempt.response_headers))
                pre { (attempt.response_body.as_deref().unwrap_or("")) }
            }
        }
    }
}

fn attempt_markup(log: &NotificationLog) -> Markup {
    html! {
        li {
            "Attempt " (log.attempt) " at " (utc(log.started_at)) ": "
            @match (log.response_status, &log.error) {
                (Some(status), _) => { "HTTP " (status) }
                (None, Some(error)) => { (error) }
                (None, None) => { "no answer" }
            }
            " in " (log.duration_ms) " ms"
            @if !log.response_headers.is_empty() || log.response_body.is_some() {
                details {
                    summary { "Response" }
                    (headers_markup(&log.response_headers))
                    pre { (log.response_body.as_deref().unwrap_or("")) }
                }
            }
        }
    }
}

fn log_markup(
    session: &Session,
    webhook: &Webhook,
    notifications: &[WebhookNotification],
    logs: &[NotificationLog],
    total: u64,
) -> Markup {
    html! {
        h2 #delivery-log { "Delivery log" }
        @if notifications.is_empty() {
            p { "No deliveries yet: they appear here when one of its events happens." }
        } @else {
            table aria-labelledby="delivery-log" {
                caption.muted { "The latest " (notifications.len()) " of " (total) " notifications, newest first" }
                thead { tr {
                    th scope="col" { "Created" } th scope="col" { "Event" } th scope="col" { "Status" }
                    th scope="col" { "Attempts" } th scope="col" { "Request and responses" }
                    @if session.can_write() { th scope="col" { span.visually-hidden { "Actions" } } }
                } }
                tbody {
                    @for n in notifications {
                        tr {
                            td { (utc(n.created_at)) }
                            td { (n.event) }
                            td { (n.delivery_status.as_str())
                                @if let Some(next) = n.next_attempt_at { br; span.muted { "next " (utc(next)) } } }
                            td { (n.attempts) }
                            td {
                                details {
                                    summary { "Request body" }
                                    pre { (n.body.as_deref().unwrap_or("(not sent yet)")) }
                                }
                                ul.attempts {
                                    @for log in logs.iter().filter(|l| l.notification_id == n.id) {
                                        (attempt_markup(log))
                                    }
                                }
                            }
                            @if session.can_write() {
                                td {
                                    form method="post" action={"/webhooks/" (webhook.id.0) "/notifications/" (n.id.0) "/redeliver"} {
                                        (csrf_field(session))
                                        button type="submit" { "Redeliver" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

async fn webhook_page(
    app: &App,
    session: &Session,
    id: WebhookId,
    test: Option<&TestSent>,
) -> Result<Markup, PageError> {
    let webhook = app.store.webhook(session.account_id, id).await?;
    let found = app
        .store
        .list_notifications(
            session.account_id,
            &NotificationFilter {
                webhook: Some(id),
                ..NotificationFilter::default()
            },
            PageRequest {
                offset: 0,
                limit: LOG_SIZE,
            },
        )
        .await?;
    let ids: Vec<WebhookNotificationId> = found.items.iter().map(|n| n.id).collect();
    let logs = app
        .store
        .notification_logs_of(session.account_id, &ids)
        .await?;
    let base = format!("/webhooks/{}", webhook.id.0);
    Ok(layout(
        session,
        "Webhook",
        "/webhooks",
        html! {
            p { a href="/webhooks" { "All webhooks" } }
            dl.facts {
                dt { "URL" } dd { code { (webhook.url) } }
                dt { "Events" } dd { (webhook.events.join(", ")) }
                dt { "State" } dd {
                    @if webhook.active { "active" } @else { "paused" }
                    @if let Some(since) = webhook.failing_since { " · failing since " (utc(since)) }
                }
                dt { "Created" } dd { (utc(webhook.created_at)) }
                dt { "Signing secret" } dd {
                    // Whoever holds the secret can forge deliveries: writers only.
                    @if session.can_write() {
                        details { summary { "Show" } code { (webhook.secret) } }
                    } @else {
                        span.muted { "Shown to keys that can write." }
                    }
                    @if let Some(until) = webhook.previous_secret_expires_at {
                        span.muted { "The previous secret also signs until " (utc(until)) "." }
                    }
                }
            }
            @if session.can_write() {
                div.actions {
                    form method="post" action={(base) (if webhook.active { "/pause" } else { "/resume" })} {
                        (csrf_field(session))
                        button type="submit" { @if webhook.active { "Pause" } @else { "Resume" } }
                    }
                    form method="post" action={(base) "/rotate-secret"} {
                        (csrf_field(session))
                        button type="submit" { "Rotate secret" }
                    }
                }
                form.filters method="post" action={(base) "/test"} {
                    (csrf_field(session))
                    div {
                        label for="test-event" { "Event" }
                        select #test-event name="event" {
                            @for event in &webhook.events { option value=(event) { (event) } }
                        }
                    }
                    button type="submit" { "Send test" }
                }
            }
            @if let Some(sent) = test { (test_markup(sent)) }
            (log_markup(session, &webhook, &found.items, &logs, found.total))
        },
    ))
}

/// `GET /webhooks/{id}`.
pub async fn show(
    state: AppState,
    session: Session,
    Path(id): Path<String>,
) -> Result<Markup, PageError> {
    webhook_page(&state, &session, parse_webhook(&id)?, None).await
}

/// `POST /webhooks/{id}/test`: one example delivery of one of the webhook's events, signed
/// with its secrets and its own headers, as `POST /v2/webhooks/trigger` sends it. Not a
/// notification: nothing is retried or logged.
pub async fn send_test(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, PageError> {
    let form = FormPairs::parse(&body);
    writable(&session, &headers, &form)?;
    let id = parse_webhook(&id)?;
    let webhook = state.store.webhook(session.account_id, id).await?;
    let wanted = form.one("event");
    let Some(event) = catalogue::event(wanted)
        .or_else(|| webhook.events.first().and_then(|e| catalogue::event(e)))
    else {
        return Err(PageError::NotFound);
    };
    let payload = example::payload(event).to_string();
    let now = state.clock.now();
    let mut secrets = vec![webhook.secret.as_str()];
    if webhook.previous_secret_expires_at.is_some_and(|t| t > now) {
        secrets.extend(webhook.previous_secret.as_deref());
    }
    let custom: Vec<(String, String)> = webhook
        .headers
        .iter()
        .map(|h| (h.name.clone(), h.value.clone()))
        .collect();
    let request_headers = deliver::delivery_headers(
        &format!("test_{}", state.ids.next_id()),
        now,
        &secrets,
        payload.as_bytes(),
        &custom,
    );
    let attempt = deliver::send(
        &state.webhook_client,
        &webhook.url,
        request_headers,
        payload.clone().into_bytes(),
        now,
    )
    .await;
    let sent = TestSent {
        event: event.name.to_owned(),
        body: payload,
        attempt,
    };
    Ok(webhook_page(&state, &session, id, Some(&sent))
        .await?
        .into_response())
}

async fn set_active(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    id: String,
    body: Bytes,
    active: bool,
) -> Result<Redirect, PageError> {
    let form = FormPairs::parse(&body);
    writable(&session, &headers, &form)?;
    let id = parse_webhook(&id)?;
    let input = WebhookInput {
        active: Some(active),
        ..WebhookInput::default()
    };
    match manage::update(
        &state,
        state.config.webhooks_allow_private,
        session.account_id,
        id,
        input,
    )
    .await
    {
        Ok(_) | Err(WebhookError::Invalid(_)) => {}
        Err(WebhookError::Store(error)) => return Err(error.into()),
    }
    Ok(Redirect::to(&format!("/webhooks/{}", id.0)))
}

/// `POST /webhooks/{id}/pause`.
pub async fn pause(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Redirect, PageError> {
    set_active(state, session, headers, id, body, false).await
}

/// `POST /webhooks/{id}/resume`.
pub async fn resume(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Redirect, PageError> {
    set_active(state, session, headers, id, body, true).await
}

/// `POST /webhooks/{id}/rotate-secret`.
pub async fn rotate_secret(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Redirect, PageError> {
    let form = FormPairs::parse(&body);
    writable(&session, &headers, &form)?;
    let id = parse_webhook(&id)?;
    manage::rotate_secret(&state, session.account_id, id).await?;
    Ok(Redirect::to(&format!("/webhooks/{}", id.0)))
}

/// `POST /webhooks/{id}/notifications/{notification}/redeliver`.
pub async fn redeliver(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path((id, notification)): Path<(String, String)>,
    body: Bytes,
) -> Result<Redirect, PageError> {
    let form = FormPairs::parse(&body);
    writable(&session, &headers, &form)?;
    let id = parse_webhook(&id)?;
    let notification = Uuid::parse_str(&notification)
        .map(WebhookNotificationId)
        .map_err(|_| PageError::NotFound)?;
    let found = state
        .store
        .notification(session.account_id, notification)
        .await?;
    if found.webhook_id != id {
        return Err(PageError::NotFound);
    }
    deliver::redeliver(&state, session.account_id, notification).await?;
    Ok(Redirect::to(&format!("/webhooks/{}", id.0)))
}
