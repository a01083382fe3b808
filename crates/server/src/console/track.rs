//! The Track page: one number, or many pasted as lines/CSV, each submitted through the
//! same use case as `POST /v2/tracking_requests`; and the account's tracking requests.

use axum::Form;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;
use tidemark_store::{PageRequest, TrackingRequestFilter};

use super::pages::{PageError, check_form, csrf_field, layout};
use super::session::Session;
use crate::app::{App, AppState};
use crate::use_cases::tracking::requests::{self, Submission, SubmitError};

/// The carrier a number is tracked with until carrier inference lands.
const DEFAULT_CARRIER: &str = "TEST";

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
pub struct RowResult {
    pub number: String,
    pub outcome: Result<(), String>,
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

async fn submit_one(
    app: &App,
    session: &Session,
    number: String,
    scac: String,
    request_type: String,
) -> Result<RowResult, PageError> {
    let submission = Submission {
        request_type: Some(request_type),
        request_number: Some(number.clone()),
        scac: Some(scac),
        ..Submission::default()
    };
    let outcome = match requests::submit(app, session.account_id, session.key_id, submission).await
    {
        Ok(_) => Ok(()),
        Err(SubmitError::Invalid(problems)) => Err(problems
            .into_iter()
            .map(|problem| problem.detail)
            .collect::<Vec<_>>()
            .join("; ")),
        Err(SubmitError::Store(error)) => return Err(error.into()),
    };
    Ok(RowResult { number, outcome })
}

fn form(session: &Session, scac: &str) -> Markup {
    html! {
        @if session.can_write() {
            form method="post" action="/track" {
                (csrf_field(session))
                div.filters {
                    div { label for="number" { "Number" } input #number name="number" size="24" autofocus; }
                    div {
                        label for="request_type" { "Type" }
                        select #request_type name="request_type" {
                            @for (value, name) in REQUEST_TYPES { option value=(value) { (name) } }
                        }
                    }
                    div { label for="scac" { "Carrier (SCAC)" } input #scac name="scac" value=(scac) size="6"; }
                }
                div {
                    label for="numbers" { "Many numbers (one per line: number, carrier, type)" }
                    textarea #numbers name="numbers" {}
                }
                p { button type="submit" { "Track" } }
            }
        } @else {
            p { "This API key is read-only: it cannot start tracking." }
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
                                    td {
                                        @match &row.outcome {
                                            Ok(()) => "accepted",
                                            Err(reason) => span.error { "refused: " (reason) },
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            (form(session, DEFAULT_CARRIER))
            (table)
        },
    ))
}

pub async fn page(state: AppState, session: Session) -> Result<Markup, PageError> {
    render(&state, &session, &[]).await
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
    let scac = if form.scac.trim().is_empty() {
        DEFAULT_CARRIER
    } else {
        form.scac.trim()
    };
    let request_type = if form.request_type.trim().is_empty() {
        "bill_of_lading"
    } else {
        form.request_type.trim()
    };
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
    let mut results = Vec::with_capacity(rows.len());
    for (number, scac, request_type) in rows {
        results.push(submit_one(&state, &session, number, scac, request_type).await?);
    }
    let status = if results.iter().any(|row| row.outcome.is_ok()) || results.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    Ok((status, render(&state, &session, &results).await?).into_response())
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
