//! `GET /v2/documents`: the query (filters, sort, pages) and the list; and the document
//! types.

use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tidemark_store::{DocumentFilter, DocumentSort, DocumentSortField};

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument};
use crate::api::jsonapi::{self, ListLinks, ListMeta, QueryParams};
use crate::app::AppState;
use crate::resources::documents::DocumentAttributes;
use crate::use_cases::documents::classify::DocumentType;

use super::INCLUDES;
use super::resource::{included, resource};

/// Words of `filter[filename]` used (each cut to `tidemark_store::MAX_WORD_CHARS`).
const MAX_FILENAME_TERMS: usize = 8;

/// List the account's documents (beta).
#[utoipa::path(
    get, path = "/v2/documents", tag = "Documents",
    params(
        ("include" = Option<String>, Query, description = "shipments, cargos, account, user, last_document_representation, email_submission, current_extraction"),
        ("sort" = Option<String>, Query, description = "document_type, added_by or created_at; `-` for descending (default -created_at)"),
        ("filter[filename]" = Option<String>, Query, description = "words of the file name or name (the last may be a prefix)"),
        ("filter[reference]" = Option<String>, Query, description = "a BL, ref or container number of a linked shipment or container"),
        ("filter[document_types]" = Option<String>, Query, description = "comma-separated type codes"),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, description = "`data`, `included`, `links`, `meta`", body = jsonapi::ListDocument<DocumentAttributes>),
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
    let includes = query.includes("document", INCLUDES)?;
    let filter = filter_from(&query)?;
    let sort = sort_from(&query)?;
    let found = state
        .store
        .list_documents(principal.account_id, &filter, sort, page.into())
        .await?;
    let base = &state.config.public_url;
    let included = included(&state, &found.items, &includes).await?;
    let links: ListLinks = query.list_links(base, page, found.total);
    let body = json!({
        "data": found.items.iter().map(|d| resource(d, base)).collect::<Vec<_>>(),
        "included": included,
        "links": links,
        "meta": ListMeta::new(page.size, page.number, found.total),
    });
    Ok(jsonapi::json_body(&body))
}

fn filter_from(query: &QueryParams) -> Result<DocumentFilter, ApiError> {
    let mut filter = DocumentFilter::default();
    if let Some(value) = query.filter("filter[filename]") {
        // Split as documents' words are, so the two agree.
        let terms: Vec<String> = tidemark_store::search_words(value)
            .take(MAX_FILENAME_TERMS)
            .collect();
        if terms.is_empty() {
            return Err(ApiError::parameter(
                "filter[filename]",
                "invalid_filter",
                format!("filter[filename] needs letters or digits; got {value:?}."),
            ));
        }
        filter.filename_terms = terms;
    }
    if let Some(value) = query.filter("filter[reference]") {
        if value.chars().count() > 64 {
            return Err(ApiError::parameter(
                "filter[reference]",
                "invalid_filter",
                "filter[reference] is at most 64 characters.",
            ));
        }
        filter.reference = Some(value.to_uppercase());
    }
    if let Some(value) = query.filter("filter[document_types]") {
        for code in value.split(',').map(str::trim).filter(|c| !c.is_empty()) {
            let known: DocumentType = code.parse().map_err(|_| {
                ApiError::parameter(
                    "filter[document_types]",
                    "invalid_filter",
                    format!("{code:?} is not a document type; GET /v2/documents/types lists them."),
                )
            })?;
            filter.document_types.push(known.as_str().to_owned());
        }
    }
    Ok(filter)
}

fn sort_from(query: &QueryParams) -> Result<DocumentSort, ApiError> {
    let Some(value) = query.filter("sort") else {
        return Ok(DocumentSort::default());
    };
    let (descending, field) = match value.strip_prefix('-') {
        Some(field) => (true, field),
        None => (false, value),
    };
    let field = match field {
        "created_at" => DocumentSortField::CreatedAt,
        "document_type" => DocumentSortField::DocumentType,
        "added_by" => DocumentSortField::AddedBy,
        _ => {
            return Err(ApiError::parameter(
                "sort",
                "invalid_sort",
                format!(
                    "sort must be document_type, added_by or created_at, with - for descending; got {value:?}."
                ),
            ));
        }
    };
    Ok(DocumentSort { field, descending })
}

/// The document types and their labels.
#[utoipa::path(
    get, path = "/v2/documents/types", tag = "Documents",
    responses(
        (status = 200, description = "`{document_types: [{code, label}]}`", body = Object),
        (status = 401, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
pub(super) async fn types(_principal: Principal) -> Response {
    let types: Vec<Value> = DocumentType::ALL
        .iter()
        .map(|t| json!({"code": t.as_str(), "label": t.label()}))
        .collect();
    axum::Json(json!({"document_types": types})).into_response()
}
