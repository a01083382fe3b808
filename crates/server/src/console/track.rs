//! The Track page: one number with its type and carrier left to inference (the use case of
//! `POST /v2/tracking_requests/infer_number`; until it is confident, the candidates to choose
//! from), or many pasted as lines/CSV or uploaded as a CSV or XLSX file, each submitted
//! through the same use case as `POST /v2/tracking_requests` with its own result; and the
//! account's tracking requests.
//!
//! An uploaded file is never parsed here: the extraction child reads it under its memory,
//! CPU and time limits and answers its rows (`use_cases::documents::spreadsheet`), which
//! are then taken as a paste is.

use axum::Form;
use axum::body::Bytes;
use axum::extract::Multipart;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;
use tidemark_store::{PageRequest, TrackingRequestFilter};

use super::pages::{PageError, check_form, csrf_field, layout};
use super::session::Session;
use crate::app::{App, AppState};
use crate::parts::rate_limit::Bucket;
use crate::use_cases::tracking::inference::LineGuess;
use crate::use_cases::tracking::requests::{self, Submission, SubmitError};
use tidemark_domain::carriers::NumberType;

/// Largest file of numbers taken.
pub const MAX_UPLOAD_BYTES: usize = 2 << 20;

/// At most this many numbers in one paste.
const MAX_ROWS: usize = 500;

const REQUEST_TYPES: &[(&str, &str)] = &[
    ("bill_of_lading", "Bill of lading"),
    ("booking_number", "Booking"),
    ("container", "Container"),
];

#[derive(Debug, Default, Deserialize)]
pub struct TrackForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    number: String,
    #[serde(default)]
    request_type: String,
    #[serde(default)]
    scac: String,
    /// Many numbers: one per line, `number[,scac[,request_type]]`.
    #[serde(default)]
    numbers: String,
}

/// What became of one submitted number.
pub enum Outcome {
    Accepted {
        scac: String,
    },
    Refused(String),
    /// The carrier could not be inferred with confidence: the lines it may be.
    ChooseCarrier {
        request_type: String,
        candidates: Vec<LineGuess>,
    },
}

/// One submitted number and what became of it.
pub struct RowResult {
    pub number: String,
    pub outcome: Outcome,
}

/// The lines of a paste: `number[,scac[,request_type]]`, blank lines and a header skipped.
fn pasted_rows<'a>(
    text: &'a str,
    scac: &'a str,
    request_type: &'a str,
) -> Vec<(String, String, String)> {
    text.lines()
        .map(|line| {
            line.split([',', ';', '\t'])
                .map(str::trim)
                .collect::<Vec<_>>()
        })
        .filter(|cells| cells.first().is_some_and(|first| !first.is_empty()))
        .filter(|cells| !cells[0].eq_ignore_ascii_case("number"))
        .take(MAX_ROWS)
        .map(|cells| {
            let cell = |i: usize, default: &str| {
                cells
                    .get(i)
                    .filter(|value| !value.is_empty())
                    .map_or_else(|| default.to_owned(), |value| (*value).to_owned())
            };
            (cell(0, ""), cell(1, scac), cell(2, request_type))
        })
        .collect()
}

/// The request type of a number whose type was left to inference.
fn inferred_type(number: &str) -> String {
    match tidemark_domain::carriers::infer(number).map(|found| found.number_type) {
        Ok(NumberType::Container) => "container",
        Ok(NumberType::Booking) => "booking_number",
        _ => "bill_of_lading",
    }
    .to_owned()
}

async fn submit_one(
    app: &App,
    session: &Session,
    number: String,
    scac: String,
    request_type: String,
) -> Result<RowResult, PageError> {
    let request_type = if request_type.is_empty() {
        inferred_type(&number)
    } else {
        request_type
    };
    let submission = Submission {
        request_type: Some(request_type.clone()),
        request_number: Some(number.clone()),
        scac: Some(scac).filter(|s| !s.is_empty()),
        ..Submission::default()
    };
    let outcome = match requests::submit(app, session.account_id, session.key_id, submission).await
    {
        Ok(request) => Outcome::Accepted {
            scac: request.scac.clone(),
        },
        Err(SubmitError::Invalid(problems)) => {
            // Only the carrier is missing: the lines it may be, to choose from.
            let only_carrier = problems.iter().all(|p| p.code == "not_inferred");
            match problems.iter().find_map(|p| p.inference.as_ref()) {
                Some(found) if only_carrier && !found.candidates.is_empty() => {
                    Outcome::ChooseCarrier {
                        request_type,
                        candidates: found.candidates.clone(),
                    }
                }
                _ => Outcome::Refused(
                    problems
                        .into_iter()
                        .map(|problem| problem.detail)
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
            }
        }
        Err(SubmitError::Store(error)) => return Err(error.into()),
    };
    Ok(RowResult { number, outcome })
}

fn form(session: &Session) -> Markup {
    html! {
        @if session.can_write() {
            form method="post" action="/track" {
                (csrf_field(session))
                div.filters {
                    div { label for="number" { "Number" } input #number name="number" size="24" autofocus; }
                    div {
                        label for="request_type" { "Type" }
                        select #request_type name="request_type" {
                            option value="" { "Infer from the number" }
                            @for (value, name) in REQUEST_TYPES { option value=(value) { (name) } }
                        }
                    }
                    div { label for="scac" { "Carrier (SCAC)" } input #scac name="scac" size="8" placeholder="inferred"; }
                }
                div {
                    label for="numbers" { "Many numbers (one per line: number, carrier, type)" }
                    textarea #numbers name="numbers" {}
                }
                p { button type="submit" { "Track" } }
            }
            form.filters method="post" action="/track/upload" enctype="multipart/form-data" {
                (csrf_field(session))
                div {
                    label for="numbers_file" { "File of numbers (CSV or XLSX)" }
                    input #numbers_file type="file" name="file" required
                        accept=".csv,.txt,.xlsx,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
                }
                button type="submit" { "Upload numbers" }
                span.muted { "One number a row; optional carrier and type in the next columns." }
            }
            p.muted { "A blank type or carrier is inferred from the number; when the carrier is not certain, you choose it." }
        } @else {
            p { "This API key is read-only: it cannot start tracking." }
        }
    }
}

/// A result's cell: accepted, refused with the reason, or the carriers to choose from.
fn outcome_markup(session: &Session, row: &RowResult) -> Markup {
    html! {
        @match &row.outcome {
            Outcome::Accepted { scac } => { "accepted (" (scac) ")" }
            Outcome::Refused(reason) => { span.error { "refused: " (reason) } }
            Outcome::ChooseCarrier { request_type, candidates } => {
                span { "choose the carrier:" }
                @for candidate in candidates {
                    form.inline method="post" action="/track" {
                        (csrf_field(session))
                        input type="hidden" name="number" value=(row.number);
                        input type="hidden" name="request_type" value=(request_type);
                        input type="hidden" name="scac" value=(candidate.scac);
                        " "
                        button.small type="submit" {
                            "Track with " (candidate.scac)
                            span.visually-hidden { " " (candidate.name) }
                        }
                        span.muted { " " (candidate.name) " (" (format!("{:.0}", candidate.confidence * 100.0)) "%)" }
                    }
                }
            }
        }
    }
}

async fn requests_table(app: &App, session: &Session) -> Result<Markup, PageError> {
    let found = app
        .store
        .list_tracking_requests(
            session.account_id,
            &TrackingRequestFilter::default(),
            PageRequest {
                offset: 0,
                limit: 50,
            },
        )
        .await?;
    Ok(html! {
        h2 { "Tracking requests" }
        @if found.items.is_empty() { p { "None yet." } } @else {
            table {
                caption.muted { "The latest " (found.items.len()) " of " (found.total) }
                thead { tr { th scope="col" { "Number" } th scope="col" { "Carrier" } th scope="col" { "Status" } th scope="col" { "Failed reason" } th scope="col" { "Retries" } th scope="col" { "Shipment" } } }
                tbody {
                    @for request in &found.items {
                        tr {
                            td { (request.request_number) }
                            td { (request.scac) }
                            td { (request.status.as_str().replace('_', " ")) }
                            td { (request.failed_reason.map(|r| r.as_str().replace('_', " ")).unwrap_or_default()) }
                            td { (request.retry_count.unwrap_or(0)) @if request.is_retrying { " (retrying)" } }
                            td { @if let Some(id) = request.shipment_id { a href={"/shipments/" (id.0)} { "open" } } }
                        }
                    }
                }
            }
        }
    })
}

async fn render(app: &App, session: &Session, results: &[RowResult]) -> Result<Markup, PageError> {
    let table = requests_table(app, session).await?;
    Ok(layout(
        session,
        "Track",
        "/track",
        html! {
            @if !results.is_empty() {
                section aria-label="Results" {
                    h2 { "Results" }
                    table {
                        thead { tr { th scope="col" { "Number" } th scope="col" { "Result" } } }
                        tbody {
                            @for row in results {
                                tr {
                                    td { (row.number) }
                                    td { (outcome_markup(session, row)) }
                                }
                            }
                        }
                    }
                }
            }
            (form(session))
            (table)
        },
    ))
}

pub async fn page(state: AppState, session: Session) -> Result<Markup, PageError> {
    render(&state, &session, &[]).await
}

/// The page with each row's result: 200 when any was accepted (or none was given), 422
/// when every one was refused.
async fn answer(
    app: &App,
    session: &Session,
    rows: Vec<(String, String, String)>,
) -> Result<Response, PageError> {
    let mut results = Vec::with_capacity(rows.len());
    let limit = Bucket::TrackingRequests.limit(app.rate_limits.default_limit());
    for (number, scac, request_type) in rows {
        // Each number is a tracking request, counted as `POST /v2/tracking_requests` counts
        // it, so a paste or a file is no way around the key's limit.
        let budget = app.rate_limits.check(
            session.key_id,
            Bucket::TrackingRequests.name(),
            limit,
            app.clock.now(),
        );
        if !budget.allowed {
            results.push(RowResult {
                number,
                outcome: Outcome::Refused(format!(
                    "Not submitted: at most {limit} tracking requests a minute with this API \
                     key; try again in {} s.",
                    budget.reset_seconds
                )),
            });
            continue;
        }
        results.push(submit_one(app, session, number, scac, request_type).await?);
    }
    let status = if results.is_empty()
        || results
            .iter()
            .any(|row| !matches!(row.outcome, Outcome::Refused(_)))
    {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    Ok((status, render(app, session, &results).await?).into_response())
}

pub async fn submit(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Form(form): Form<TrackForm>,
) -> Result<Response, PageError> {
    check_form(&session, &headers, &form.csrf)?;
    if !session.can_write() {
        return Err(PageError::ReadOnly);
    }
    let scac = form.scac.trim();
    let request_type = form.request_type.trim();
    let mut rows = pasted_rows(&form.numbers, scac, request_type);
    if !form.number.trim().is_empty() {
        rows.insert(
            0,
            (
                form.number.trim().to_owned(),
                scac.to_owned(),
                request_type.to_owned(),
            ),
        );
    }
    answer(&state, &session, rows).await
}

/// The rows of an uploaded file (XLSX or CSV/plain text, one number a row), read by the
/// extraction child; `Err` with what to tell the user, naming the limit met.
async fn file_rows(app: &App, bytes: &[u8]) -> Result<Vec<(String, String, String)>, String> {
    // One row more than taken: the first may be a header.
    let rows = app
        .extractor
        .read_rows(bytes, MAX_ROWS + 1)
        .await
        .map_err(|error| error.to_string())?;
    let text = rows
        .iter()
        .map(|cells| cells.join("\t"))
        .collect::<Vec<_>>()
        .join("\n");
    let rows = pasted_rows(&text, "", "");
    if rows.is_empty() {
        return Err("the file has no numbers.".to_owned());
    }
    Ok(rows)
}

/// Reads the upload form: its token and the file's bytes; `Err` with what to tell the user.
async fn read_upload(mut multipart: Multipart) -> Result<(String, Bytes), String> {
    let unreadable = |e: axum::extract::multipart::MultipartError| {
        format!("the form could not be read ({}).", e.body_text())
    };
    let (mut csrf, mut file) = (String::new(), None);
    for _ in 0..8 {
        let Some(field) = multipart.next_field().await.map_err(unreadable)? else {
            break;
        };
        match field.name() {
            Some("csrf") => csrf = field.text().await.map_err(unreadable)?,
            Some("file") => file = Some(field.bytes().await.map_err(unreadable)?),
            _ => {}
        }
    }
    let file = file
        .filter(|bytes| !bytes.is_empty())
        .ok_or_else(|| "choose a file of numbers.".to_owned())?;
    Ok((csrf, file))
}

/// `POST /track/upload`: a CSV or XLSX file of numbers, each row tracked as a pasted one.
pub async fn upload(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    multipart: Multipart,
) -> Result<Response, PageError> {
    let problem = |problem: String| (problem, StatusCode::UNPROCESSABLE_ENTITY);
    let (csrf, bytes) = match read_upload(multipart).await {
        Ok(read) => read,
        Err(message) => return refused(&state, &session, problem(message)).await,
    };
    check_form(&session, &headers, &csrf)?;
    if !session.can_write() {
        return Err(PageError::ReadOnly);
    }
    match file_rows(&state, &bytes).await {
        Ok(rows) => answer(&state, &session, rows).await,
        Err(message) => refused(&state, &session, problem(message)).await,
    }
}

async fn refused(
    app: &App,
    session: &Session,
    (message, status): (String, StatusCode),
) -> Result<Response, PageError> {
    let table = requests_table(app, session).await?;
    let page = layout(
        session,
        "Track",
        "/track",
        html! {
            p.error role="alert" { "The file was not tracked: " (message) }
            (form(session))
            (table)
        },
    );
    Ok((status, page).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paste_gives_one_row_per_line_with_defaults_for_missing_cells() {
        let rows = pasted_rows(
            "number,scac\nABC1\n\nDEF2, MAEU ,container\n",
            "TEST",
            "bill_of_lading",
        );
        assert_eq!(
            rows,
            vec![
                (
                    "ABC1".to_owned(),
                    "TEST".to_owned(),
                    "bill_of_lading".to_owned()
                ),
                ("DEF2".to_owned(), "MAEU".to_owned(), "container".to_owned()),
            ]
        );
    }
}
