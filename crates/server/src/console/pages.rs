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
use crate::use_cases::accounts::keys::{self, KeyRejected};

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
    (status, body).into_response()
}

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
    headers: HeaderMap,
    Form(form): Form<SignIn>,
) -> Result<Response, PageError> {
    if !same_origin(&headers) {
        return Err(PageError::BadForm);
    }
    let refused = || {
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
    let key = match keys::authenticate(&state, secret).await {
        Ok(key) => key,
        Err(KeyRejected::Unknown) => return Ok(refused()),
        Err(KeyRejected::Store(error)) => return Err(error.into()),
    };
    let cookie = session::start(&state, key.account_id, key.id, state.clock.now()).await?;
    Ok(([(header::SET_COOKIE, cookie)], Redirect::to("/")).into_response())
}

#[derive(Deserialize)]
pub struct TokenOnly {
    #[serde(default)]
    csrf: String,
}

pub async fn sign_out(
    session: Session,
    headers: HeaderMap,
    Form(form): Form<TokenOnly>,
) -> Result<Response, PageError> {
    check_form(&session, &headers, &form.csrf)?;
    Ok((
        [(header::SET_COOKIE, session::end())],
        Redirect::to("/sign-in"),
    )
        .into_response())
}

/// A page whose console view is not built yet: says so and points at the API.
fn api_only(session: &Session, title: &str, path: &str, api: &str) -> Markup {
    layout(
        session,
        title,
        path,
        html! {
            p { "This page is not in the console yet. The same data is at "
                code { (api) } " in the " a href="/docs" { "API" } "." }
        },
    )
}

pub async fn custom_fields(session: Session) -> Markup {
    api_only(
        &session,
        "Custom fields",
        "/custom-fields",
        "/v2/custom_field_definitions",
    )
}

pub async fn api_keys(state: AppState, session: Session) -> Result<Markup, PageError> {
    let keys = state.store.list_api_keys(session.account_id).await?;
    Ok(layout(
        &session,
        "API keys",
        "/api-keys",
        html! {
            table {
                thead { tr { th scope="col" { "Prefix" } th scope="col" { "Scope" } th scope="col" { "Created" } th scope="col" { "Revoked" } } }
                tbody {
                    @for key in &keys {
                        tr {
                            td { code { (key.prefix) } @if key.id == session.key_id { " (this session)" } }
                            td { (key.scope.as_str()) }
                            td { (key.created_at.format("%Y-%m-%d %H:%M UTC")) }
                            td { (key.revoked_at.map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string()).unwrap_or_default()) }
                        }
                    }
                }
            }
        },
    ))
}

pub async fn carriers(state: AppState, session: Session) -> Markup {
    let scacs = state.carriers.connected_scacs();
    layout(
        &session,
        "Carriers",
        "/carriers",
        html! {
            @if scacs.is_empty() {
                p { "No carrier connectors are configured." }
            } @else {
                table {
                    thead { tr { th scope="col" { "SCAC" } th scope="col" { "Line" } } }
                    tbody {
                        @for scac in &scacs {
                            tr {
                                td { (scac) }
                                td { (state.reference.shipping_line(scac).map(|line| line.name.as_str()).unwrap_or("")) }
                            }
                        }
                    }
                }
            }
        },
    )
}
