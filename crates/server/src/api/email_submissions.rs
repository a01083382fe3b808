//! `/v2/email_submissions`: the emails documents arrived in (the built-in SMTP receiver,
//! `email.smtp_listen`), each with the documents made of its attachments, in Terminal49's
//! shape. By default a response includes the documents and their representations.

use axum::response::Response;
use serde_json::{Value, json};
use tidemark_store::StoredDocument;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::documents::included as document_included;
use crate::api::error::{ApiError, ErrorDocument};
use crate::api::extract::{Path, parse_uuid};
use crate::api::jsonapi::{self, Includes, ListMeta, QueryParams};
use crate::app::AppState;
pub(crate) use crate::resources::email_submissions::{link, resource};

/// The relationships `include` accepts.
const INCLUDES: &[&str] = &[
    "account",
    "user",
    "documents",
    "documents.last_document_representation",
];

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(show))
}

/// List the account's email submissions, newest first.
#[utoipa::path(
    get, path = "/v2/email_submissions", tag = "Email Submissions",
    params(
        ("include" = Option<String>, Query, description = "account, user, documents, documents.last_document_representation (default: the last two)"),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, description = "`data`, `included`, `links`, `meta`", body = jsonapi::ListDocument<Value>),
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
    let includes = includes(&query)?;
    let found = state
        .store
        .list_email_submissions(principal.account_id, page.into())
        .await?;
    let ids: Vec<Uuid> = found.items.iter().map(|s| s.id).collect();
    let documents = state
        .store
        .documents_of_email_submissions(principal.account_id, &ids)
        .await?;
    let base = &state.config.public_url;
    let body = json!({
        "data": found.items.iter().map(|s| resource(s, &documents, base)).collect::<Vec<_>>(),
        "included": included(&state, principal, &documents, &includes).await?,
        "links": query.list_links(base, page, found.total),
        "meta": ListMeta::new(page.size, page.number, found.total),
    });
    Ok(jsonapi::json_body(&body))
}

/// Get an email submission.
#[utoipa::path(
    get, path = "/v2/email_submissions/{id}", tag = "Email Submissions",
    params(
        ("id" = Uuid, Path),
        ("include" = Option<String>, Query, description = "account, user, documents, documents.last_document_representation (default: the last two)"),
    ),
    responses(
        (status = 200, description = "The email submission", body = jsonapi::Document<Value>),
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
    let includes = includes(&query)?;
    let submission = state
        .store
        .email_submission(principal.account_id, parse_uuid(&id)?)
        .await?;
    let documents = state
        .store
        .documents_of_email_submissions(principal.account_id, &[submission.id])
        .await?;
    let base = &state.config.public_url;
    let mut body = json!({
        "data": resource(&submission, &documents, base),
        "links": {"self": link(base, submission.id)},
    });
    let included = included(&state, principal, &documents, &includes).await?;
    if !included.is_empty() {
        body["included"] = Value::Array(included);
    }
    Ok(jsonapi::json_body(&body))
}

/// `include` as asked, or Terminal49's default (the documents and their representations).
fn includes(query: &QueryParams) -> Result<Includes, ApiError> {
    if query.get("include").is_some() {
        query.includes("email_submission", INCLUDES)
    } else {
        Ok(Includes::of(&[
            "documents",
            "documents.last_document_representation",
        ]))
    }
}

/// The included resources: the documents (as `GET /v2/documents` shows them) and what
/// they include, and the account.
async fn included(
    state: &AppState,
    principal: Principal,
    documents: &[StoredDocument],
    includes: &Includes,
) -> Result<Vec<Value>, ApiError> {
    let base = &state.config.public_url;
    let mut out = Vec::new();
    if includes.contains("account") {
        let account = state.store.account(principal.account_id).await?;
        out.push(json!({
            "id": account.id, "type": "account",
            "attributes": {"company_name": account.name},
            "links": {"self": format!("{base}/v2/accounts/{}", account.id)},
        }));
    }
    if includes.contains("documents") {
        out.extend(
            documents
                .iter()
                .map(|d| crate::api::documents::resource(d, base)),
        );
        out.extend(document_included(state, documents, &includes.below("documents")).await?);
    }
    Ok(out)
}
