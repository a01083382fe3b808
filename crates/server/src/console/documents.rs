//! The Documents pages: the account's documents (search by file name or reference, newest
//! first), an upload form that also takes a file dropped on it, and each document's page
//! with a preview and a download. Through the same use cases as `/v2/documents` (upload:
//! size, type sniffing, duplicates, classification job).
//!
//! A document is never opened in Tidemark's origin by the browser: a PDF may carry script
//! (an `OpenAction`) that the browser's viewer runs in the frame of the origin serving it,
//! whatever that response's CSP says. So a PDF is always sent as an attachment (a
//! download), and its page previews the text Tidemark read from it (the extraction's
//! excerpt), escaped like any other text. Only images (never SVG: the upload's sniffing
//! admits none) are sent inline, for the page's `<img>`, with `nosniff`.

use axum::body::Body;
use axum::body::Bytes;
use axum::extract::{Multipart, Path, Query};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use futures::StreamExt;
use maud::{Markup, html};
use serde::Deserialize;
use tidemark_store::{DocumentFilter, DocumentSort, PageRequest, StoredDocument};
use uuid::Uuid;

use super::assets;
use super::pages::{FormPairs, PageError, check_form, csrf_field, layout, writable};
use super::session::Session;
use crate::app::{App, AppState};
use crate::parts::documents::storage::StorageError;
use crate::use_cases::documents::classify::DocumentType;
use crate::use_cases::documents::filename::{Disposition, content_disposition};
use crate::use_cases::documents::links;
use crate::use_cases::documents::upload::{NewDocument, UploadError, upload};

/// Documents listed per page.
const PAGE_SIZE: u32 = 50;

/// Content types sent inline for the page's `<img>`: raster images, which run no script.
fn inline_image(content_type: &str) -> bool {
    matches!(
        content_type,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    )
}

/// The extraction's text excerpt and the length of the whole text, once the document was
/// read (`process_document` keeps the first 2,000 characters).
fn text_excerpt(document: &StoredDocument) -> Option<(&str, Option<u64>)> {
    let payload = &document.representation.as_ref()?.payload;
    let excerpt = payload.get("text_excerpt")?.as_str()?;
    let length = payload
        .get("text_length")
        .and_then(serde_json::Value::as_u64);
    Some((excerpt, length))
}

/// The preview: an image as itself; any other file as the text read from it (never the
/// file in a frame); or why there is none.
fn preview(document: &StoredDocument, file: &str) -> Markup {
    if inline_image(&document.content_type) {
        return html! { img.preview src={(file) "?inline=1"} alt={"Preview of " (document.name)}; };
    }
    match text_excerpt(document) {
        Some((excerpt, length)) if !excerpt.trim().is_empty() => {
            let shown = excerpt.chars().count() as u64;
            html! {
                p.muted {
                    "The text Tidemark read from the file"
                    @if let Some(length) = length.filter(|l| *l > shown) {
                        " (the first " (shown) " of " (length) " characters)"
                    }
                    "; download it to see it as printed."
                }
                pre.preview-text { (excerpt) }
            }
        }
        Some(_) => html! {
            p.muted { "No text could be read from this file; download it to see it." }
        },
        None if document.document_type.is_none() => html! {
            p.muted { "The file is being read; its text shows here once it is (reload the page)." }
        },
        None => html! {
            p.muted { "No text could be read from this " (document.content_type) " file; download it to see it." }
        },
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct DocumentsQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    reference: String,
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / f64::from(1 << 20)),
        b if b >= 1 << 10 => format!("{:.0} kB", b as f64 / f64::from(1 << 10)),
        b => format!("{b} B"),
    }
}

fn type_label(document: &StoredDocument) -> String {
    let code = document
        .document_type_manual
        .as_deref()
        .or(document.document_type.as_deref());
    match code {
        Some(code) => code
            .parse::<DocumentType>()
            .map_or_else(|_| code.to_owned(), |t| t.label().to_owned()),
        None => "not classified yet".to_owned(),
    }
}

async fn list_page(
    app: &App,
    session: &Session,
    query: &DocumentsQuery,
    problem: Option<&str>,
) -> Result<Markup, PageError> {
    let filter = DocumentFilter {
        filename_terms: tidemark_store::search_words(&query.q).take(8).collect(),
        reference: Some(
            query
                .reference
                .trim()
                .chars()
                .take(64)
                .collect::<String>()
                .to_uppercase(),
        )
        .filter(|r| !r.is_empty()),
        ..DocumentFilter::default()
    };
    let found = app
        .store
        .list_documents(
            session.account_id,
            &filter,
            DocumentSort::default(),
            PageRequest {
                offset: 0,
                limit: PAGE_SIZE,
            },
        )
        .await?;
    Ok(layout(
        session,
        "Documents",
        "/documents",
        html! {
            @if let Some(problem) = problem {
                p.error role="alert" { "The file was not uploaded: " (problem) }
            }
            @if session.can_write() {
                form #upload .dropzone method="post" action="/documents" enctype="multipart/form-data" {
                    (csrf_field(session))
                    div {
                        label for="file" { "File" }
                        input #file type="file" name="file" required;
                    }
                    div {
                        label for="name" { "Name (optional)" }
                        input #name name="name" size="30";
                    }
                    button type="submit" { "Upload" }
                    p.muted.drop-hint { "…or drop a file here." }
                }
            }
            form.filters method="get" action="/documents" role="search" {
                div { label for="q" { "File name" } input #q type="search" name="q" value=(query.q); }
                div { label for="reference" { "Reference" } input #reference name="reference" value=(query.reference) placeholder="BL, container or reference"; }
                button type="submit" { "Search" }
            }
            @if found.items.is_empty() {
                p { "No documents yet." }
            } @else {
                table {
                    caption.muted { "The latest " (found.items.len()) " of " (found.total) " documents" }
                    thead { tr {
                        th scope="col" { "Name" } th scope="col" { "Type" } th scope="col" { "Size" }
                        th scope="col" { "Uploaded" } th scope="col" { "Shipments" } th scope="col" { "File" }
                    } }
                    tbody {
                        @for document in &found.items {
                            tr {
                                td { a href={"/documents/" (document.id)} { (document.name) } }
                                td { (type_label(document)) }
                                td { (size(document.size_bytes)) }
                                td { (document.created_at.format("%Y-%m-%d %H:%M UTC")) }
                                td { (document.shipment_ids.len()) }
                                td { a href={"/documents/" (document.id) "/file"} download { "Download" } }
                            }
                        }
                    }
                }
            }
            script src=(assets::documents()) defer {}
        },
    ))
}

/// `GET /documents`.
pub async fn index(
    state: AppState,
    session: Session,
    Query(query): Query<DocumentsQuery>,
) -> Result<Markup, PageError> {
    list_page(&state, &session, &query, None).await
}

/// The upload form's fields.
#[derive(Default)]
struct UploadForm {
    csrf: String,
    name: String,
    file: Option<(String, Option<String>, Bytes)>,
}

/// Reads the form; `Err` with what to tell the user.
async fn read_form(limit: usize, mut multipart: Multipart) -> Result<UploadForm, String> {
    let mut form = UploadForm::default();
    for _ in 0..16 {
        let Some(mut field) = multipart
            .next_field()
            .await
            .map_err(|e| format!("the form could not be read ({}).", e.body_text()))?
        else {
            return Ok(form);
        };
        let name = field.name().unwrap_or_default().to_owned();
        let max = if name == "file" { limit } else { 4096 };
        let file_name = field.file_name().map(str::to_owned);
        let content_type = field.content_type().map(str::to_owned);
        let mut bytes = Vec::new();
        while let Some(chunk) = field
            .chunk()
            .await
            .map_err(|e| format!("the form could not be read ({}).", e.body_text()))?
        {
            if bytes.len() + chunk.len() > max {
                return Err(format!("the file has more than {limit} bytes."));
            }
            bytes.extend_from_slice(&chunk);
        }
        match name.as_str() {
            "file" => {
                form.file = Some((
                    file_name.unwrap_or_default(),
                    content_type,
                    Bytes::from(bytes),
                ));
            }
            "csrf" => form.csrf = String::from_utf8_lossy(&bytes).into_owned(),
            "name" => form.name = String::from_utf8_lossy(&bytes).trim().to_owned(),
            _ => {}
        }
    }
    Err("the form has too many fields.".to_owned())
}

/// `POST /documents`: stores the file and opens its page, or says why not.
pub async fn create(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    multipart: Multipart,
) -> Result<Response, PageError> {
    let form = match read_form(state.config.max_document_bytes, multipart).await {
        Ok(form) => form,
        Err(problem) => return refused(&state, &session, StatusCode::BAD_REQUEST, &problem).await,
    };
    check_form(&session, &headers, &form.csrf)?;
    if !session.can_write() {
        return Err(PageError::ReadOnly);
    }
    let Some((file_name, content_type, bytes)) = form.file.filter(|(_, _, b)| !b.is_empty()) else {
        let problem = "choose a file (or drop one on the form).";
        return refused(&state, &session, StatusCode::UNPROCESSABLE_ENTITY, problem).await;
    };
    let new = NewDocument {
        account: session.account_id,
        uploaded_by: Some(session.key_id),
        name: Some(form.name).filter(|n| !n.is_empty()),
        file_name,
        declared_content_type: content_type,
        shipment_ids: Vec::new(),
        container_ids: Vec::new(),
        email_submission: None,
    };
    match upload(
        &state,
        &state.documents,
        state.config.max_document_bytes,
        new,
        bytes,
    )
    .await
    {
        Ok(document) => Ok(Redirect::to(&format!("/documents/{}", document.id)).into_response()),
        Err(UploadError::Store(error)) => Err(error.into()),
        Err(UploadError::Storage(error)) => {
            tracing::error!(error = %error, "console upload could not be stored");
            let problem = "the file could not be stored; try again shortly.";
            refused(&state, &session, StatusCode::SERVICE_UNAVAILABLE, problem).await
        }
        Err(error @ UploadError::TooLarge { .. }) => {
            refused(
                &state,
                &session,
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("{error}."),
            )
            .await
        }
        Err(error) => {
            refused(
                &state,
                &session,
                StatusCode::UNPROCESSABLE_ENTITY,
                &format!("{error}."),
            )
            .await
        }
    }
}

async fn refused(
    app: &App,
    session: &Session,
    status: StatusCode,
    problem: &str,
) -> Result<Response, PageError> {
    let page = list_page(app, session, &DocumentsQuery::default(), Some(problem)).await?;
    Ok((status, page).into_response())
}

fn parse_id(id: &str) -> Result<Uuid, PageError> {
    Uuid::parse_str(id).map_err(|_| PageError::NotFound)
}

/// `GET /documents/{id}`: the document, its preview and download.
pub async fn show(
    state: AppState,
    session: Session,
    Path(id): Path<String>,
) -> Result<Markup, PageError> {
    document_page(&state, session, parse_id(&id)?, None).await
}

/// `POST /documents/{id}/shipments`: links the document to the shipment with the bill of
/// lading typed in.
pub async fn link_shipment(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, PageError> {
    let form = FormPairs::parse(&body);
    writable(&session, &headers, &form)?;
    let id = parse_id(&id)?;
    let number = form
        .one("number")
        .trim()
        .chars()
        .take(64)
        .collect::<String>();
    let Some(shipment) = links::shipment_by_number(&state, session.account_id, &number).await?
    else {
        let problem = format!("No shipment has the bill of lading {number:?}.");
        let page = document_page(&state, session, id, Some(&problem)).await?;
        return Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response());
    };
    links::link_to_shipment(&state, session.account_id, id, shipment.id).await?;
    Ok(Redirect::to(&format!("/documents/{id}")).into_response())
}

async fn document_page(
    state: &App,
    session: Session,
    id: Uuid,
    problem: Option<&str>,
) -> Result<Markup, PageError> {
    let document = state.store.document(session.account_id, id).await?;
    let mut shipments = Vec::with_capacity(document.shipment_ids.len());
    for id in &document.shipment_ids {
        match state.store.shipment(session.account_id, *id).await {
            Ok(shipment) => shipments.push(shipment),
            Err(tidemark_store::StoreError::NotFound) => {}
            Err(error) => return Err(error.into()),
        }
    }
    let file = format!("/documents/{}/file", document.id);
    Ok(layout(
        &session,
        "Document",
        "/documents",
        html! {
            p { a href="/documents" { "All documents" } }
            dl.facts {
                dt { "Name" } dd { (document.name) }
                dt { "File" } dd { code { (document.file_name) } " · " (document.content_type) " · " (size(document.size_bytes)) }
                dt { "Type" } dd { (type_label(&document)) }
                @if let Some(notes) = &document.classification_notes { dt { "Classification" } dd { (notes) } }
                dt { "Uploaded" } dd { (document.created_at.format("%Y-%m-%d %H:%M UTC")) }
                dt { "Shipments" } dd {
                    @if shipments.is_empty() { "none linked" }
                    @for shipment in &shipments { a href={"/shipments/" (shipment.id.0)} { (shipment.bill_of_lading_number) } " " }
                }
                dt { "SHA-256" } dd { code { (document.sha256) } }
            }
            @if let Some(problem) = problem { p.error role="alert" { (problem) } }
            @if session.can_write() {
                form.filters method="post" action={"/documents/" (document.id) "/shipments"} {
                    (csrf_field(&session))
                    div {
                        label for="shipment_number" { "Bill of lading" }
                        input #shipment_number name="number" size="24" required;
                    }
                    button type="submit" { "Link to shipment" }
                }
            }
            p { a.button href=(file) download { "Download" } }
            h2 { "Preview" }
            (preview(&document, &file))
        },
    ))
}

#[derive(Debug, Default, Deserialize)]
pub struct FileQuery {
    #[serde(default)]
    inline: Option<String>,
}

/// `GET /documents/{id}/file`: the bytes, as an attachment, or inline (`?inline=1`) for a
/// raster image, which the preview's `<img>` shows; a PDF or any other type is always an
/// attachment, so no script in it runs in Tidemark's origin. Tidemark sniffed the type
/// from the bytes on upload.
pub async fn file(
    state: AppState,
    session: Session,
    Path(id): Path<String>,
    Query(query): Query<FileQuery>,
) -> Result<Response, PageError> {
    let document = state
        .store
        .document(session.account_id, parse_id(&id)?)
        .await?;
    let stream = match state.documents.stream(&document.storage_key).await {
        Ok(stream) => stream,
        Err(StorageError::NotFound) => return Err(PageError::NotFound),
        Err(error) => {
            tracing::error!(error = %error, "console download could not be read");
            return Ok((
                StatusCode::SERVICE_UNAVAILABLE,
                "The file could not be read; try again shortly.",
            )
                .into_response());
        }
    };
    let inline = query.inline.is_some() && inline_image(&document.content_type);
    let disposition = content_disposition(
        &document.file_name,
        if inline {
            Disposition::Inline
        } else {
            Disposition::Attachment
        },
    );
    let mut response =
        Body::from_stream(stream.map(|chunk| chunk.map_err(std::io::Error::other))).into_response();
    let headers = response.headers_mut();
    // The type was sniffed from the bytes, and nosniff keeps the browser to it; opened on
    // its own, the file is a sandboxed document that loads nothing and is framed nowhere.
    let policy = "default-src 'none'; sandbox; frame-ancestors 'none'";
    for (name, value) in [
        (header::CONTENT_TYPE, document.content_type.as_str()),
        (header::CONTENT_DISPOSITION, disposition.as_str()),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::CONTENT_SECURITY_POLICY, policy),
        (header::CACHE_CONTROL, "private, no-store"),
    ] {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    }
    headers.insert(
        header::CONTENT_LENGTH,
        HeaderValue::from(document.size_bytes),
    );
    Ok(response)
}
