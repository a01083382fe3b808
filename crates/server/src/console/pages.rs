//! The layout every page shares, signing in and out, and the smaller pages.

use axum::Form;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{DOCTYPE, Markup, html};
use serde::Deserialize;
use tidemark_store::StoreError;

use super::assets;
use super::session::{self, Session};
use crate::app::AppState;
use crate::parts::rate_limit::{AUTH_FAILURES, client_key};
use crate::use_cases::accounts;
use crate::use_cases::accounts::keys::{self, KeyRejected};
use crate::use_cases::tracking::limits;
use tidemark_carriers::profile::Profiles;
use tidemark_domain::{ApiKeyId, ApiKeyScope};

/// The navigation: (name, path). Names are the accessible names tests look for.
const NAV: &[(&str, &str)] = &[
    ("Shipments", "/"),
    ("Track", "/track"),
    ("Documents", "/documents"),
    ("Webhooks", "/webhooks"),
    ("Custom fields", "/custom-fields"),
    ("API keys", "/api-keys"),
    ("Carriers", "/carriers"),
];

/// Why a console page could not be shown.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error("not found")]
    NotFound,
    #[error("This API key is read-only.")]
    ReadOnly,
    #[error("The form expired or came from another site; reload the page and try again.")]
    BadForm,
    #[error("Too many requests with this API key; try again in {retry_after_seconds} s.")]
    TooManyRequests { retry_after_seconds: u64 },
    #[error("Too many refused sign-ins from this address; try again in a minute.")]
    TooManySignIns,
    #[error("The server took too long to answer; try again shortly.")]
    Unavailable,
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for PageError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound => Self::NotFound,
            other => Self::Store(other),
        }
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        error_page(&self)
    }
}

/// A bare page telling what went wrong, with the right status.
pub fn error_page(error: &PageError) -> Response {
    let (status, message) = match error {
        PageError::NotFound => (StatusCode::NOT_FOUND, "Not found.".to_owned()),
        PageError::ReadOnly => (StatusCode::FORBIDDEN, error.to_string()),
        PageError::BadForm => (StatusCode::FORBIDDEN, error.to_string()),
        PageError::TooManyRequests { .. } | PageError::TooManySignIns => {
            (StatusCode::TOO_MANY_REQUESTS, error.to_string())
        }
        PageError::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, error.to_string()),
        PageError::Store(store) => {
            tracing::error!(error = %store, "console page failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "The database could not answer; try again shortly.".to_owned(),
            )
        }
    };
    let body = document(
        "Error",
        html! { main { h1 { "Error" } p.error role="alert" { (message) } p { a href="/" { "Back to Shipments" } } } },
    );
    let retry_after = match error {
        PageError::TooManyRequests {
            retry_after_seconds,
        } => Some(*retry_after_seconds),
        PageError::TooManySignIns => Some(60),
        _ => None,
    };
    match retry_after {
        Some(seconds) => {
            (status, [(header::RETRY_AFTER, seconds.to_string())], body).into_response()
        }
        None => (status, body).into_response(),
    }
}

/// htmx's settings for a page under a CSP without `unsafe-inline` or `unsafe-eval`.
const HTMX_CONFIG: &str = r#"{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"selfRequestsOnly":true}"#;

fn document(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Tidemark" }
                link rel="icon" href="data:,";
                link rel="stylesheet" href=(assets::css());
                // Under the page's CSP (`security_headers`): htmx adds no <style> of its
                // own, evaluates no code and runs no <script> found in a swapped fragment.
                meta name="htmx-config" content=(HTMX_CONFIG);
                script src=(assets::htmx()) defer {}
            }
            body { (body) }
        }
    }
}

/// A signed-in page: navigation, "Sign out", a heading named `title`, then `content`.
pub fn layout(session: &Session, title: &str, current: &str, content: Markup) -> Markup {
    document(
        title,
        html! {
            header {
                span.brand { "Tidemark" }
                nav aria-label="Console" {
                    ul {
                        @for (name, path) in NAV {
                            li {
                                @if *path == current {
                                    a href=(path) aria-current="page" { (name) }
                                } @else {
                                    a href=(path) { (name) }
                                }
                            }
                        }
                    }
                }
                form method="post" action="/sign-out" {
                    (csrf_field(session))
                    @if !session.can_write() { span.muted { "Read-only " } }
                    button type="submit" { "Sign out" }
                }
            }
            main { h1 { (title) } (content) }
        },
    )
}

/// The hidden form token every POST form of a session carries.
pub fn csrf_field(session: &Session) -> Markup {
    html! { input type="hidden" name="csrf" value=(session.csrf); }
}

/// Refuses a form that does not carry this session's token, or that came from another site.
pub fn check_form(session: &Session, headers: &HeaderMap, token: &str) -> Result<(), PageError> {
    if !same_origin(headers) || !session.form_token_matches(token) {
        return Err(PageError::BadForm);
    }
    Ok(())
}

/// Whether a POST's `Origin` (when the browser sends one) is this server's `Host`.
pub fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let origin_host = origin.split_once("://").map(|(_, rest)| rest);
    origin_host.is_some() && origin_host == host
}

/// The name/value pairs of a submitted form; names may repeat (`events`).
pub struct FormPairs(Vec<(String, String)>);

impl FormPairs {
    pub fn parse(body: &[u8]) -> Self {
        Self(
            form_urlencoded::parse(body)
                .map(|(name, value)| (name.into_owned(), value.into_owned()))
                .collect(),
        )
    }

    pub fn one(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    }

    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .collect()
    }
}

/// A signed-in writer's form, checked: the session may write and the token is its own.
pub fn writable(session: &Session, headers: &HeaderMap, form: &FormPairs) -> Result<(), PageError> {
    check_form(session, headers, form.one("csrf"))?;
    if !session.can_write() {
        return Err(PageError::ReadOnly);
    }
    Ok(())
}

fn sign_in_page(message: Option<&str>) -> Markup {
    document(
        "Sign in",
        html! {
            main.signin {
                h1 { "Sign in" }
                @if let Some(message) = message { p.error role="alert" { (message) } }
                form method="post" action="/sign-in" {
                    label for="api_key" { "API key" }
                    input #api_key type="password" name="api_key" autocomplete="current-password" required autofocus;
                    button type="submit" { "Sign in" }
                }
                p.muted { "Use an API key of your account; a read-only key gives a read-only console." }
            }
        },
    )
}

pub async fn sign_in_form() -> Markup {
    sign_in_page(None)
}

#[derive(Deserialize)]
pub struct SignIn {
    #[serde(default)]
    api_key: String,
}

pub async fn sign_in(
    state: AppState,
    client: ClientAddress,
    headers: HeaderMap,
    Form(form): Form<SignIn>,
) -> Result<Response, PageError> {
    if !same_origin(&headers) {
        return Err(PageError::BadForm);
    }
    // Refused sign-ins count against the address with the API's failed keys, so a key
    // cannot be guessed faster through the console than through the API.
    let failures_limit = state.config.limits.unauthenticated_per_minute;
    let now = state.clock.now();
    if let Some(address) = client.0
        && state
            .client_limits
            .exhausted(address, AUTH_FAILURES, failures_limit, now)
    {
        return Err(PageError::TooManySignIns);
    }
    let refused = || {
        if let Some(address) = client.0
            && !state
                .client_limits
                .check(address, AUTH_FAILURES, failures_limit, now)
                .allowed
        {
            return PageError::TooManySignIns.into_response();
        }
        (
            StatusCode::UNAUTHORIZED,
            sign_in_page(Some("That API key was not accepted.")),
        )
            .into_response()
    };
    let secret = form.api_key.trim();
    if secret.is_empty() {
        return Ok(refused());
    }
    let key = match keys::authenticate(&state, &state.auth, secret).await {
        Ok(key) => key,
        Err(KeyRejected::Unknown) => return Ok(refused()),
        Err(KeyRejected::Store(error)) => return Err(error.into()),
    };
    let cookie = session::start(&state, key.account_id, key.id, now).await?;
    Ok(([(header::SET_COOKIE, cookie)], Redirect::to("/")).into_response())
}

/// The client's address, as the rate limit of failed sign-ins counts it (`None` for requests
/// that did not come through a socket, as in tests).
pub struct ClientAddress(Option<std::net::IpAddr>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for ClientAddress {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Self(
            parts
                .extensions
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .map(|info| client_key(info.0.ip())),
        ))
    }
}

#[derive(Deserialize)]
pub struct TokenOnly {
    #[serde(default)]
    csrf: String,
}

pub async fn sign_out(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Form(form): Form<TokenOnly>,
) -> Result<Response, PageError> {
    check_form(&session, &headers, &form.csrf)?;
    session.end(&state).await?;
    Ok((
        [(header::SET_COOKIE, session::end())],
        Redirect::to("/sign-in"),
    )
        .into_response())
}

/// The API keys page: the account's keys, a form to create one (its secret shown once, in
/// the answer to the form) and "Revoke" on each live key, through the same use cases as
/// `/v2/api_keys`.
async fn api_keys_page(
    state: &AppState,
    session: &Session,
    issued: Option<&accounts::IssuedKey>,
) -> Result<Markup, PageError> {
    let keys = state.store.list_api_keys(session.account_id).await?;
    let time = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
    Ok(layout(
        session,
        "API keys",
        "/api-keys",
        html! {
            @if let Some(issued) = issued {
                section.test-result aria-labelledby="new-key" {
                    h2 #new-key { "New API key" }
                    p role="status" { "Created a " (issued.key.scope.as_str().replace('_', "-")) " key. Copy it now: it is not shown again." }
                    p { label for="new-key-secret" { "Key" } input #new-key-secret readonly value=(issued.secret.expose()) size="60"; }
                }
            }
            table {
                thead { tr {
                    th scope="col" { "Prefix" } th scope="col" { "Scope" } th scope="col" { "Created" } th scope="col" { "Revoked" }
                    @if session.can_write() { th scope="col" { span.visually-hidden { "Actions" } } }
                } }
                tbody {
                    @for key in &keys {
                        tr {
                            td { code { (key.prefix) } @if key.id == session.key_id { " (this session)" } }
                            td { (key.scope.as_str()) }
                            td { (time(key.created_at)) }
                            td { (key.revoked_at.map(time).unwrap_or_default()) }
                            @if session.can_write() {
                                td {
                                    @if key.revoked_at.is_none() {
                                        form method="post" action={"/api-keys/" (key.id.0) "/revoke"} {
                                            (csrf_field(session))
                                            button type="submit" { "Revoke" span.visually-hidden { " key " (key.prefix) } }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if session.can_write() {
                h2 { "New API key" }
                form.filters method="post" action="/api-keys" {
                    (csrf_field(session))
                    label.check { input type="checkbox" name="read_only" value="true"; " Read-only" }
                    button type="submit" { "Create API key" }
                }
                p.muted { "Revoking the key of this session signs it out." }
            } @else {
                p.muted { "This API key is read-only: it cannot create or revoke keys." }
            }
        },
    ))
}

/// `GET /api-keys`.
pub async fn api_keys(state: AppState, session: Session) -> Result<Markup, PageError> {
    api_keys_page(&state, &session, None).await
}

/// `POST /api-keys`: issues a key and shows its secret, once (never cached).
pub async fn create_api_key(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, PageError> {
    let form = FormPairs::parse(&body);
    writable(&session, &headers, &form)?;
    let scope = if form.one("read_only").is_empty() {
        ApiKeyScope::ReadWrite
    } else {
        ApiKeyScope::ReadOnly
    };
    let issued = accounts::issue_key(&state, session.account_id, scope).await?;
    let page = api_keys_page(&state, &session, Some(&issued)).await?;
    Ok((
        StatusCode::CREATED,
        [(header::CACHE_CONTROL, "no-store")],
        page,
    )
        .into_response())
}

/// `POST /api-keys/{id}/revoke`.
pub async fn revoke_api_key(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    axum::extract::Path(id): axum::extract::Path<String>,
    body: axum::body::Bytes,
) -> Result<Redirect, PageError> {
    let form = FormPairs::parse(&body);
    writable(&session, &headers, &form)?;
    let id = uuid::Uuid::parse_str(&id).map_err(|_| PageError::NotFound)?;
    accounts::revoke_key(&state, &state.auth, session.account_id, ApiKeyId(id)).await?;
    Ok(Redirect::to("/api-keys"))
}

/// The Carriers page: each configured line with its health, from the same data as
/// `tidemark carriers list` (shared by every process through the database). A brand's calls
/// count against its family's line, whose health it shows.
pub async fn carriers(state: AppState, session: Session) -> Result<Markup, PageError> {
    let health = limits::health(&state.engine()).await?;
    let terminals = crate::use_cases::terminals::health::health(&state.terminals_context()).await?;
    let now = state.clock.now();
    let profiles = Profiles::embedded();
    let time = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
    let connected = state.carriers.connected_scacs();
    Ok(layout(
        &session,
        "Carriers",
        "/carriers",
        html! {
            @if connected.is_empty() {
                p { "No carrier connectors are configured." }
            } @else {
                table {
                    caption.muted { "Configured lines and their health" }
                    thead { tr {
                        th scope="col" { "SCAC" } th scope="col" { "Line" } th scope="col" { "State" }
                        th scope="col" { "Last success" } th scope="col" { "Last error" }
                        th scope="col" { "Credentials" } th scope="col" { "Circuit" } th scope="col" { "Calls (minute / today)" }
                    } }
                    tbody {
                        @for scac in &connected {
                            @let family = profiles.get(scac).map_or(*scac, |p| p.family());
                            @let h = health.iter().find(|h| h.scac == family);
                            @let refused = h.and_then(|h| h.credentials_refused_since);
                            @let open = h.and_then(|h| h.circuit_open_until).filter(|until| *until > now);
                            tr {
                                td { (scac) @if family != *scac { br; span.muted { "via " (family) } } }
                                td { (state.reference.shipping_line(scac).map(|line| line.name.as_str()).unwrap_or("")) }
                                td {
                                    @if refused.is_some() { span.error { "credentials refused" } }
                                    @else if open.is_some() { span.error { "circuit open" } }
                                    @else if h.and_then(|h| h.rate_limited_until).is_some() { "rate limited" }
                                    @else if h.and_then(|h| h.last_success_at).is_some() { "working" }
                                    @else { "not called yet" }
                                }
                                td { (h.and_then(|h| h.last_success_at).map(time).unwrap_or_else(|| "—".to_owned())) }
                                td {
                                    @match h.and_then(|h| h.last_error.as_deref().map(|e| (h.last_error_at, e))) {
                                        Some((at, error)) => { (at.map(time).unwrap_or_default()) br; span.muted { (error) } }
                                        None => { "—" }
                                    }
                                }
                                td { @match refused { Some(since) => { span.error { "refused since " (time(since)) } } None => { "accepted" } } }
                                td { @match open { Some(until) => { span.error { "open until " (time(until)) } } None => { "closed" } } }
                                td { (h.map_or(0, |h| h.calls_last_minute)) " / " (h.map_or(0, |h| h.calls_today)) }
                            }
                        }
                    }
                }
                p.muted { "The same as " code { "tidemark carriers list" } "; " code { "tidemark carriers check SCAC" } " makes one real call." }
            }
            h2 { "Terminals" }
            table {
                caption.muted { "Terminals asked about discharged containers, and their health" }
                thead { tr {
                    th scope="col" { "Terminal" } th scope="col" { "State" } th scope="col" { "Last success" }
                    th scope="col" { "Last error" } th scope="col" { "Calls (minute / today)" }
                } }
                tbody {
                    @for t in &terminals {
                        tr {
                            td { (t.id) }
                            td {
                                @if t.id == crate::use_cases::terminals::SANDBOX { "built in (TEST voyages)" }
                                @else if let Some(since) = t.credentials_refused_since { span.error { "paused: credentials refused since " (time(since)) } }
                                @else if let Some(until) = t.circuit_open_until { span.error { "circuit open until " (time(until)) } }
                                @else if t.rate_limited_until.is_some() { "rate limited" }
                                @else if t.last_success_at.is_some() { "working" }
                                @else { "not asked yet" }
                            }
                            td { (t.last_success_at.map(time).unwrap_or_else(|| "—".to_owned())) }
                            td {
                                @match t.last_error.as_deref() {
                                    Some(error) => { (t.last_error_at.map(time).unwrap_or_default()) br; span.muted { (error) } }
                                    None => { "—" }
                                }
                            }
                            td { (t.calls_last_minute) " / " (t.calls_today) }
                        }
                    }
                }
            }
            p.muted { code { "tidemark terminals list" } " shows their settings; " code { "tidemark terminals check PROFILE" } " makes one real call." }
        },
    ))
}
