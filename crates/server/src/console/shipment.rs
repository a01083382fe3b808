//! The shipment page: summary, route map, reference numbers and tags, custom fields,
//! linked documents, containers with their timeline, transport events; and its forms
//! (edit references and tags, set a custom field, stop/resume tracking, refresh, link a
//! document), each through the same use case as the API.

use axum::body::Bytes;
use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::Value;
use tidemark_domain::custom_fields::{DataType, EntityType, ReferenceType};
use tidemark_domain::{Container, Shipment, ShipmentId, TransportEvent};
use tidemark_store::{DocumentFilter, DocumentSort, EntityRef, PageRequest, StoredDocument};
use uuid::Uuid;

use super::board::{port_time, status_of};
use super::pages::{FormPairs, PageError, csrf_field, layout, writable};
use super::session::Session;
use crate::app::{App, AppState};
use crate::use_cases::custom_fields::{self, EntityField};
use crate::use_cases::documents::links;
use crate::use_cases::tracking::{self, REFRESH_PER_MINUTE, RefreshError, shipments};

/// Documents offered in the "link a document" select: the latest ones.
const LINKABLE_DOCUMENTS: u32 = 50;

fn parse_shipment(id: &str) -> Result<ShipmentId, PageError> {
    Uuid::parse_str(id)
        .map(ShipmentId)
        .map_err(|_| PageError::NotFound)
}

/// What an event says, for people: a move by its name ("vessel loaded"), a pick-up notice
/// with what it announces ("last free day (terminal): 2026-03-22").
fn event_label(event: &TransportEvent) -> String {
    use tidemark_domain::TransportEventName as E;
    let notice = match event.event {
        E::PickupLfdChanged => "last free day",
        E::PickupLfdTerminalChanged => "last free day (terminal)",
        E::PickupLfdLineChanged => "last free day (line)",
        E::PickupLfdRailChanged => "last free day (rail)",
        E::PickupAppointmentChanged => "pick-up appointment",
        _ => {
            return event
                .event
                .as_str()
                .trim_start_matches("container.transport.")
                .replace('_', " ");
        }
    };
    format!(
        "{notice}: {}",
        event.value.as_deref().unwrap_or("withdrawn")
    )
}

/// Where an event happened, for people: the terminal when the carrier named one Tidemark
/// knows, then the port by name and UN/LOCODE ("Virginia International Gateway, Norfolk
/// (USORF)").
fn event_place(app: &App, event: &TransportEvent) -> String {
    let Some(locode) = event.location_locode.as_deref() else {
        return String::new();
    };
    let port = app.reference.port_by_locode(locode).map_or_else(
        || locode.to_owned(),
        |port| format!("{} ({locode})", port.name),
    );
    match event.terminal_id.and_then(|id| app.reference.terminal(id)) {
        Some(terminal) => format!("{}, {port}", terminal.name),
        None => port,
    }
}

fn when(app: &App, locode: Option<&str>, at: Option<DateTime<Utc>>) -> String {
    at.map(|at| port_time(app, locode, at)).unwrap_or_default()
}

/// A milestone: its name, when it happened, when it is expected.
type Milestone = (&'static str, Option<DateTime<Utc>>, Option<DateTime<Utc>>);

/// Can the container be picked up, and if not why; by when; what it costs; when.
fn pickup_panel(app: &App, pod: Option<&str>, container: &Container) -> Markup {
    let facts = &container.pickup;
    if facts.is_empty() && !container.availability_known {
        return html! {
            section.pickup aria-label={"Pick-up of " (container.number)} {
                h3 { (container.number) }
                p.muted { "No terminal or EDI feed has reported on it yet." }
            }
        };
    }
    html! {
        section.pickup aria-label={"Pick-up of " (container.number)} {
            h3 { (container.number) }
            dl {
                dt { "Available" }
                dd {
                    (super::board::availability(container))
                    @if !container.available_for_pickup && !facts.holds.is_empty() { " — on hold" }
                    @if container.pod_full_out_at.is_some() { " (picked up)" }
                }
                dt { "Holds" }
                dd {
                    @if facts.holds.is_empty() { "none" }
                    @else {
                        ul {
                            @for hold in &facts.holds {
                                li { strong { (hold.name) } " (" (hold.status) ")" @if !hold.description.is_empty() { ": " (hold.description) } }
                            }
                        }
                    }
                }
                dt { "Last free day" }
                dd {
                    @let left = super::board::lfd_left(app, container);
                    @if left.is_empty() { "unknown" } @else { (left) }
                    @if let Some(line) = facts.line_last_free_day { br; span.muted { "line's: " (line) } }
                    @if let Some(rail) = facts.rail_last_free_day { br; span.muted { "rail ramp's: " (rail) } }
                }
                dt { "Fees" }
                dd {
                    @if facts.fees.is_empty() { "none reported" }
                    @else {
                        ul {
                            @for fee in &facts.fees {
                                li { (fee.kind.replace('_', " ")) ": " (fee.amount.as_deref().unwrap_or("amount not given")) " " (fee.currency_code.as_deref().unwrap_or("")) }
                            }
                        }
                    }
                }
                dt { "Appointment" }
                dd { @if facts.appointment_at.is_some() { (when(app, pod, facts.appointment_at)) } @else { "none" } }
                @if let Some(location) = &facts.location { dt { "Yard place" } dd { (location) } }
                dt { "Last reported" }
                dd { @if facts.checked_at.is_some() { (when(app, pod, facts.checked_at)) } @else { "never" } }
            }
        }
    }
}

/// One container's milestones.
fn milestones(shipment: &Shipment, container: &Container) -> [Milestone; 6] {
    [
        ("Departed", shipment.pol_atd_at, shipment.pol_etd_at),
        (
            "Arrived",
            shipment.pod_ata_at.or(container.pod_arrived_at),
            shipment.pod_eta_at,
        ),
        ("Discharged", container.pod_discharged_at, None),
        ("Picked up", container.pod_full_out_at, None),
        (
            "Delivered",
            container.final_destination_full_out_at,
            shipment.destination_eta_at,
        ),
        ("Empty returned", container.empty_terminated_at, None),
    ]
}

/// What the page says above its content after a form: done, or what was wrong.
enum Flash<'a> {
    None,
    Done(&'static str),
    Problems(&'a [String]),
}

/// `?done=` after a successful form (post, redirect, get).
#[derive(Debug, Default, Deserialize)]
pub struct DoneQuery {
    #[serde(default)]
    done: String,
}

fn done_message(done: &str) -> Option<&'static str> {
    Some(match done {
        "references" => "Reference numbers and tags saved.",
        "field" => "Custom field saved.",
        "stopped" => "Tracking stopped.",
        "resumed" => "Tracking resumed: the carrier is asked again at the next poll.",
        "refresh" => "Refresh queued: the carrier is asked now.",
        "linked" => "Document linked.",
        "unlinked" => "Document unlinked.",
        _ => return None,
    })
}

/// The text a form input shows for a stored value (canonical JSON).
fn input_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Number(number) => number.to_string(),
        Value::Object(object) => object
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    }
}

/// A submitted field value as the JSON the API would take for it.
fn raw_value(data_type: DataType, values: Vec<String>) -> Value {
    let first = values.first().map_or("", |v| v.trim()).to_owned();
    match data_type {
        DataType::EnumMulti => Value::from(
            values
                .into_iter()
                .filter(|v| !v.trim().is_empty())
                .collect::<Vec<_>>(),
        ),
        DataType::Boolean => match first.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::Null,
        },
        // A `datetime-local` input gives minutes (or seconds) without a zone: UTC.
        DataType::Datetime if first.len() == 16 => Value::from(format!("{first}:00Z")),
        DataType::Datetime if first.len() == 19 => Value::from(format!("{first}Z")),
        DataType::LongText => Value::from(values.into_iter().next().unwrap_or_default()),
        _ => Value::from(first),
    }
}

/// The input of one custom field, labelled by its display name.
fn field_input(field: &EntityField) -> Markup {
    let definition = &field.definition.definition;
    let id = format!("cf-{}", definition.api_slug);
    let current = field.value.as_ref().map(|v| &v.record.value);
    let text = current.map(input_text).unwrap_or_default();
    let label = html! { label for=(id) { (definition.display_name) } };
    html! {
        @match definition.data_type {
            DataType::EnumMulti => {
                fieldset {
                    legend { (definition.display_name) }
                    @for option in &field.options {
                        @let chosen = current.and_then(Value::as_array).is_some_and(|list| list.iter().any(|v| v.as_str() == Some(option.option.value.as_str())));
                        label.check {
                            @if chosen { input type="checkbox" name="value" value=(option.option.value) checked; }
                            @else { input type="checkbox" name="value" value=(option.option.value); }
                            " " (option.option.label)
                        }
                    }
                }
            }
            DataType::Enum => {
                div { (label) select #(id) name="value" {
                    option value="" { "(none)" }
                    @for option in &field.options {
                        @if text == option.option.value { option value=(option.option.value) selected { (option.option.label) } }
                        @else { option value=(option.option.value) { (option.option.label) } }
                    }
                } }
            }
            DataType::Boolean => {
                @let flag = current.and_then(Value::as_bool);
                div { (label) select #(id) name="value" {
                    @for (value, name, on) in [("", "(none)", flag.is_none()), ("true", "Yes", flag == Some(true)), ("false", "No", flag == Some(false))] {
                        @if on { option value=(value) selected { (name) } } @else { option value=(value) { (name) } }
                    }
                } }
            }
            DataType::LongText => { div { (label) textarea #(id) name="value" rows="3" { (text) } } }
            DataType::Date => { div { (label) input #(id) type="date" name="value" value=(text); } }
            DataType::Datetime => {
                div { (label) input #(id) type="datetime-local" name="value" value=(text.get(..16).unwrap_or(&text)); span.muted { " UTC" } }
            }
            DataType::Number => { div { (label) input #(id) name="value" inputmode="decimal" value=(text) size="14"; } }
            DataType::Reference => {
                div { (label) input #(id) name="value" value=(text) size="38"
                    placeholder={"id of a " (definition.reference_type.map_or("resource", ReferenceType::as_str))}; }
            }
            DataType::ShortText => { div { (label) input #(id) name="value" value=(text) size="30"; } }
        }
    }
}

fn custom_fields_markup(session: &Session, base: &str, fields: &[EntityField]) -> Markup {
    html! {
        h2 { "Custom fields" }
        @if fields.is_empty() {
            p.muted { "No custom fields are defined for shipments. " a href="/custom-fields" { "Define one" } "." }
        } @else if session.can_write() {
            @for field in fields {
                @let definition = &field.definition.definition;
                form.filters method="post" action={(base) "/custom-fields"} {
                    (csrf_field(session))
                    input type="hidden" name="field" value=(definition.api_slug);
                    (field_input(field))
                    button type="submit" { "Save" span.visually-hidden { " " (definition.display_name) } }
                    @if let Some(shown) = field.value.as_ref().and_then(|v| v.display_value.as_deref()) {
                        span.muted { "Now: " (shown) }
                    }
                }
            }
        } @else {
            dl.facts {
                @for field in fields {
                    dt { (field.definition.definition.display_name) }
                    dd { (field.value.as_ref().and_then(|v| v.display_value.as_deref()).unwrap_or("—")) }
                }
            }
        }
    }
}

fn references_markup(session: &Session, base: &str, shipment: &Shipment) -> Markup {
    html! {
        h2 { "Reference numbers and tags" }
        @if session.can_write() {
            form.stack method="post" action={(base) "/references"} {
                (csrf_field(session))
                div {
                    label for="ref_numbers" { "Reference numbers (one per line)" }
                    textarea #ref_numbers name="ref_numbers" rows="3" { (shipment.ref_numbers.join("\n")) }
                }
                div {
                    label for="tags" { "Tags (comma-separated)" }
                    input #tags name="tags" value=(shipment.tags.join(", ")) size="60";
                }
                div { button type="submit" { "Save references and tags" } }
            }
        } @else {
            dl.facts {
                dt { "Reference numbers" } dd { (if shipment.ref_numbers.is_empty() { "—".to_owned() } else { shipment.ref_numbers.join(", ") }) }
                dt { "Tags" } dd { (if shipment.tags.is_empty() { "—".to_owned() } else { shipment.tags.join(", ") }) }
            }
        }
    }
}

fn documents_markup(
    session: &Session,
    base: &str,
    linked: &[StoredDocument],
    linkable: &[StoredDocument],
) -> Markup {
    html! {
        h2 { "Documents" }
        @if linked.is_empty() {
            p { "No documents linked." }
        } @else {
            ul {
                @for document in linked {
                    li {
                        a href={"/documents/" (document.id)} { (document.name) }
                        @if session.can_write() {
                            " "
                            form.inline method="post" action={(base) "/documents/" (document.id) "/unlink"} {
                                (csrf_field(session))
                                button.small type="submit" { "Unlink" span.visually-hidden { " " (document.name) } }
                            }
                        }
                    }
                }
            }
        }
        @if session.can_write() && !linkable.is_empty() {
            form.filters method="post" action={(base) "/documents"} {
                (csrf_field(session))
                div {
                    label for="document" { "Document to link" }
                    select #document name="document" {
                        @for document in linkable { option value=(document.id) { (document.name) } }
                    }
                }
                button type="submit" { "Link document" }
            }
        }
    }
}

fn actions_markup(session: &Session, base: &str, shipment: &Shipment) -> Markup {
    html! {
        @if session.can_write() {
            div.actions {
                @if shipment.is_tracking() {
                    form method="post" action={(base) "/refresh"} {
                        (csrf_field(session))
                        button type="submit" { "Refresh" }
                    }
                    form method="post" action={(base) "/stop-tracking"} {
                        (csrf_field(session))
                        button type="submit" { "Stop tracking" }
                    }
                } @else {
                    form method="post" action={(base) "/resume-tracking"} {
                        (csrf_field(session))
                        button type="submit" { "Resume tracking" }
                    }
                }
            }
        }
    }
}

/// The latest documents not linked to the shipment yet, for the link form.
async fn linkable_documents(
    app: &App,
    session: &Session,
    linked: &[StoredDocument],
) -> Result<Vec<StoredDocument>, PageError> {
    if !session.can_write() {
        return Ok(Vec::new());
    }
    let found = app
        .store
        .list_documents(
            session.account_id,
            &DocumentFilter::default(),
            DocumentSort::default(),
            PageRequest {
                offset: 0,
                limit: LINKABLE_DOCUMENTS,
            },
        )
        .await?;
    Ok(found
        .items
        .into_iter()
        .filter(|d| !linked.iter().any(|l| l.id == d.id))
        .collect())
}

async fn render(
    app: &App,
    session: &Session,
    id: ShipmentId,
    flash: Flash<'_>,
) -> Result<Markup, PageError> {
    let shipment = app.store.shipment(session.account_id, id).await?;
    let containers = app.store.containers_of_shipment(shipment.id).await?;
    let events: Vec<TransportEvent> = app.store.transport_events_of_shipment(shipment.id).await?;
    let fields = custom_fields::fields_of(
        app,
        session.account_id,
        EntityRef {
            entity_type: EntityType::Shipment,
            id: shipment.id.0,
        },
    )
    .await?;
    let linked = links::of_shipment(app, session.account_id, &shipment).await?;
    let linkable = linkable_documents(app, session, &linked).await?;
    let pol = shipment.port_of_lading_locode.as_deref();
    let pod = shipment.port_of_discharge_locode.as_deref();
    let base = format!("/shipments/{}", shipment.id.0);
    let title = format!("Shipment {}", shipment.bill_of_lading_number);
    Ok(layout(
        session,
        &title,
        "",
        html! {
            @match flash {
                Flash::None => {}
                Flash::Done(message) => { p.notice role="status" { (message) } }
                Flash::Problems(problems) => {
                    div.error role="alert" {
                        p { "Not saved:" }
                        ul { @for problem in problems { li { (problem) } } }
                    }
                }
            }
            p {
                (shipment.shipping_line_scac) " · "
                (pol.unwrap_or("?")) " → " (pod.unwrap_or("?"))
                @if let Some(vessel) = &shipment.pod_vessel_name { " · " (vessel) }
                " · " (status_of(&shipment, &containers))
            }
            (actions_markup(session, &base, &shipment))
            (super::map::section(shipment.id))
            (references_markup(session, &base, &shipment))
            (custom_fields_markup(session, &base, &fields))
            (documents_markup(session, &base, &linked, &linkable))
            h2 { "Containers" }
            table {
                thead { tr { th scope="col" { "Number" } th scope="col" { "Type" } th scope="col" { "Status" } th scope="col" { "Available" } } }
                tbody {
                    @for container in &containers {
                        tr {
                            td { (container.number) }
                            td { (container.equipment_type.as_deref().unwrap_or("")) " " (container.equipment_length.map(|l| l.to_string()).unwrap_or_default()) }
                            td { (container.current_status.as_str().replace('_', " ")) }
                            td { (super::board::availability(container)) }
                        }
                    }
                }
            }
            h2 { "Pick-up" }
            @for container in &containers {
                (pickup_panel(app, pod, container))
            }
            h2 { "Timeline" }
            @for container in &containers {
                h3 { (container.number) }
                table {
                    thead { tr { th scope="col" { "Milestone" } th scope="col" { "Actual" } th scope="col" { "Estimated" } } }
                    tbody {
                        @for (name, actual, estimated) in milestones(&shipment, container) {
                            tr {
                                td { (name) }
                                td { (when(app, if name == "Departed" { pol } else { pod }, actual)) }
                                td { (when(app, if name == "Departed" { pol } else { pod }, estimated)) }
                            }
                        }
                    }
                }
            }
            h2 { "Transport events" }
            @if events.is_empty() { p { "No events yet." } } @else {
                table {
                    thead { tr { th scope="col" { "When" } th scope="col" { "Container" } th scope="col" { "Event" } th scope="col" { "Where" } th scope="col" { "Vessel" } } }
                    tbody {
                        @for event in &events {
                            tr {
                                td { (when(app, event.location_locode.as_deref(), Some(event.timestamp))) }
                                td { (containers.iter().find(|c| c.id == event.container_id).map(|c| c.number.as_str()).unwrap_or("")) }
                                td { (event_label(event)) }
                                td { (event_place(app, event)) }
                                td { (event.vessel_name.as_deref().unwrap_or("")) }
                            }
                        }
                    }
                }
            }
        },
    ))
}

/// `GET /shipments/{id}`.
pub async fn show(
    state: AppState,
    session: Session,
    Path(id): Path<String>,
    Query(query): Query<DoneQuery>,
) -> Result<Markup, PageError> {
    let flash = done_message(&query.done).map_or(Flash::None, Flash::Done);
    render(&state, &session, parse_shipment(&id)?, flash).await
}

fn done(id: ShipmentId, what: &str) -> Response {
    Redirect::to(&format!("/shipments/{}?done={what}", id.0)).into_response()
}

/// The page again with what was wrong, and `status`.
async fn refused(
    app: &App,
    session: &Session,
    id: ShipmentId,
    status: StatusCode,
    problems: &[String],
) -> Result<Response, PageError> {
    let page = render(app, session, id, Flash::Problems(problems)).await?;
    Ok((status, page).into_response())
}

/// The form of a shipment's POST, checked, and the shipment's id.
fn checked(
    session: &Session,
    headers: &HeaderMap,
    id: &str,
    body: &Bytes,
) -> Result<(ShipmentId, FormPairs), PageError> {
    let form = FormPairs::parse(body);
    writable(session, headers, &form)?;
    Ok((parse_shipment(id)?, form))
}

/// Splits a list typed into a form: one per line or comma-separated.
fn typed_list(text: &str) -> Vec<String> {
    text.split(['\n', ','])
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `POST /shipments/{id}/references`: replaces ref numbers and tags (`PATCH
/// /v2/shipments/{id}`).
pub async fn save_references(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, PageError> {
    let (id, form) = checked(&session, &headers, &id, &body)?;
    shipments::edit(
        &state,
        session.account_id,
        id,
        Some(typed_list(form.one("ref_numbers"))),
        Some(typed_list(form.one("tags"))),
    )
    .await?;
    Ok(done(id, "references"))
}

/// `POST /shipments/{id}/custom-fields`: sets (or, empty, clears) one field, checked as
/// `POST /v2/shipments/{id}/custom_fields` checks it.
pub async fn save_custom_field(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, PageError> {
    let (id, form) = checked(&session, &headers, &id, &body)?;
    let entity =
        custom_fields::entity(&state, session.account_id, EntityType::Shipment, id.0).await?;
    let slug = form.one("field");
    let result = async {
        let definition = custom_fields::definition_for(
            &state,
            session.account_id,
            entity,
            slug,
            "/data/attributes/api_slug",
        )
        .await?;
        let raw = raw_value(definition.definition.data_type, form.all("value"));
        custom_fields::set_value(&state, session.account_id, entity, &definition, &raw)
            .await
            .map(|_| ())
    }
    .await;
    match result {
        Ok(()) => Ok(done(id, "field")),
        Err(error) => {
            let problems = super::custom_fields::details(error)?;
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            refused(&state, &session, id, status, &problems).await
        }
    }
}

/// `POST /shipments/{id}/stop-tracking` (`PATCH /v2/shipments/{id}/stop_tracking`).
pub async fn stop_tracking(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, PageError> {
    let (id, _) = checked(&session, &headers, &id, &body)?;
    shipments::stop_tracking(&state.engine(), session.account_id, id, session.key_id).await?;
    Ok(done(id, "stopped"))
}

/// `POST /shipments/{id}/resume-tracking` (`PATCH /v2/shipments/{id}/resume_tracking`).
pub async fn resume_tracking(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, PageError> {
    let (id, _) = checked(&session, &headers, &id, &body)?;
    shipments::resume_tracking(&state.engine(), session.account_id, id).await?;
    Ok(done(id, "resumed"))
}

/// `POST /shipments/{id}/refresh`: polls the carrier now, within the API's refresh budget
/// of the key (`PATCH /v2/containers/{id}/refresh`).
pub async fn refresh(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, PageError> {
    let (id, _) = checked(&session, &headers, &id, &body)?;
    // The shipment must be the account's before the budget is spent on it.
    state.store.shipment(session.account_id, id).await?;
    let budget = state.rate_limits.check(
        session.key_id,
        "refresh",
        REFRESH_PER_MINUTE,
        state.clock.now(),
    );
    if !budget.allowed {
        let problem = format!(
            "At most {REFRESH_PER_MINUTE} refreshes a minute; try again in {} s.",
            budget.reset_seconds
        );
        return refused(
            &state,
            &session,
            id,
            StatusCode::TOO_MANY_REQUESTS,
            &[problem],
        )
        .await;
    }
    match tracking::refresh_shipment(&state, session.account_id, id).await {
        Ok(_) => Ok(done(id, "refresh")),
        Err(error @ RefreshError::TrackingStopped) => {
            let problems = [error.to_string()];
            refused(&state, &session, id, StatusCode::CONFLICT, &problems).await
        }
        Err(RefreshError::Store(error)) => Err(error.into()),
    }
}

fn parse_document(id: &str) -> Result<Uuid, PageError> {
    Uuid::parse_str(id.trim()).map_err(|_| PageError::NotFound)
}

/// `POST /shipments/{id}/documents`: links the chosen document to the shipment.
pub async fn link_document(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, PageError> {
    let (id, form) = checked(&session, &headers, &id, &body)?;
    let document = parse_document(form.one("document"))?;
    links::link_to_shipment(&state, session.account_id, document, id).await?;
    Ok(done(id, "linked"))
}

/// `POST /shipments/{id}/documents/{document}/unlink`.
pub async fn unlink_document(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path((id, document)): Path<(String, String)>,
    body: Bytes,
) -> Result<Response, PageError> {
    let (id, _) = checked(&session, &headers, &id, &body)?;
    let document = parse_document(&document)?;
    links::unlink_from_shipment(&state, session.account_id, document, id).await?;
    Ok(done(id, "unlinked"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_values_become_the_json_the_api_takes() {
        let one = |t: DataType, v: &str| raw_value(t, vec![v.to_owned()]);
        assert_eq!(one(DataType::Boolean, "true"), Value::Bool(true));
        assert_eq!(one(DataType::Boolean, ""), Value::Null);
        assert_eq!(
            one(DataType::Datetime, "2026-03-01T09:30"),
            Value::from("2026-03-01T09:30:00Z")
        );
        assert_eq!(one(DataType::Number, " 12.5 "), Value::from("12.5"));
        assert_eq!(
            raw_value(
                DataType::EnumMulti,
                vec!["a".to_owned(), String::new(), "b".to_owned()]
            ),
            serde_json::json!(["a", "b"])
        );
    }

    #[test]
    fn a_typed_list_splits_on_lines_and_commas() {
        assert_eq!(typed_list("PO-1\nPO-2, PO-3 ,\n"), ["PO-1", "PO-2", "PO-3"]);
    }
}
