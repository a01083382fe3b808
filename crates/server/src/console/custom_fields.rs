//! The Custom fields pages: the account's definitions with a form to define one, and each
//! definition's page (edit its name, description and rules, delete it, and for list types
//! its options: add, relabel, reorder, delete). Through the same use cases as
//! `/v2/custom_field_definitions` and its `options`, so every rule and message is the API's.

use axum::body::Bytes;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use serde_json::{Map, Value};
use tidemark_domain::custom_fields::{
    DataType, DefinitionChanges, EntityType, NewDefinition, NewOption, OptionChanges, ReferenceType,
};
use tidemark_store::{DefinitionFilter, DefinitionRecord, PageRequest};
use uuid::Uuid;

use super::pages::{FormPairs, PageError, csrf_field, layout, writable};
use super::session::Session;
use crate::app::{App, AppState};
use crate::use_cases::custom_fields::{self, CustomFieldError};

/// Definitions listed on the page.
const LISTED: u32 = 200;

fn parse_id(id: &str) -> Result<Uuid, PageError> {
    Uuid::parse_str(id).map_err(|_| PageError::NotFound)
}

fn is_list(data_type: DataType) -> bool {
    matches!(data_type, DataType::Enum | DataType::EnumMulti)
}

fn type_name(data_type: DataType) -> &'static str {
    match data_type {
        DataType::ShortText => "Short text",
        DataType::LongText => "Long text",
        DataType::Number => "Number",
        DataType::Date => "Date",
        DataType::Datetime => "Date and time",
        DataType::Boolean => "Yes / no",
        DataType::Enum => "List (one)",
        DataType::EnumMulti => "List (several)",
        DataType::Reference => "Reference",
    }
}

/// A trimmed form value, `None` when blank.
fn given(form: &FormPairs, name: &str) -> Option<String> {
    Some(form.one(name).trim().to_owned()).filter(|v| !v.is_empty())
}

/// The `validation` object of the form's rule fields, as the API takes it: numbers where
/// they read as numbers (a date bound stays a string, and the rules say what is wrong).
fn validation_from(form: &FormPairs) -> Value {
    let mut rules = Map::new();
    if !form.one("required").is_empty() {
        rules.insert("required".to_owned(), Value::Bool(true));
    }
    for key in ["min", "max", "max_length"] {
        if let Some(text) = given(form, key) {
            let value = serde_json::from_str::<serde_json::Number>(&text)
                .map_or(Value::String(text), Value::Number);
            rules.insert(key.to_owned(), value);
        }
    }
    if let Some(pattern) = given(form, "pattern") {
        rules.insert("pattern".to_owned(), Value::String(pattern));
    }
    Value::Object(rules)
}

/// A rule's current value as a form shows it.
fn rule_text(rules: &Value, key: &str) -> String {
    match rules.get(key) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Number(number)) => number.to_string(),
        _ => String::new(),
    }
}

/// The rule fields (required, min, max, max length, pattern), prefilled from `rules`.
fn rule_inputs(rules: &Value) -> Markup {
    let required = rules.get("required").and_then(Value::as_bool) == Some(true);
    html! {
        fieldset {
            legend { "Rules" }
            div.filters {
                label.check {
                    @if required { input type="checkbox" name="required" value="true" checked; }
                    @else { input type="checkbox" name="required" value="true"; }
                    " Required"
                }
                div { label for="min" { "Minimum" } input #min name="min" value=(rule_text(rules, "min")) size="12"; }
                div { label for="max" { "Maximum" } input #max name="max" value=(rule_text(rules, "max")) size="12"; }
                div { label for="max_length" { "Maximum length" } input #max_length name="max_length" inputmode="numeric" value=(rule_text(rules, "max_length")) size="6"; }
                div { label for="pattern" { "Pattern" } input #pattern name="pattern" value=(rule_text(rules, "pattern")) size="20"; }
            }
            p.muted { "Minimum and maximum apply to numbers and dates; length and pattern to texts." }
        }
    }
}

fn problems_markup(intro: &str, problems: &[String]) -> Markup {
    html! {
        @if !problems.is_empty() {
            div.error role="alert" {
                p { (intro) }
                ul { @for problem in problems { li { (problem) } } }
            }
        }
    }
}

/// The sentences of a use case's problems (a store failure stays an error).
pub(super) fn details(error: CustomFieldError) -> Result<Vec<String>, PageError> {
    match error {
        CustomFieldError::Invalid(problems) => Ok(problems.into_iter().map(|p| p.detail).collect()),
        CustomFieldError::Store(error) => Err(error.into()),
    }
}

fn create_form(session: &Session, form: Option<&FormPairs>) -> Markup {
    let value = |name: &str| form.map(|f| f.one(name).to_owned()).unwrap_or_default();
    let rules = form.map_or(Value::Null, validation_from);
    html! {
        h2 { "New custom field" }
        form.stack method="post" action="/custom-fields" {
            (csrf_field(session))
            div.filters {
                div { label for="display_name" { "Name" } input #display_name name="display_name" value=(value("display_name")) size="24" required; }
                div { label for="api_slug" { "API slug" } input #api_slug name="api_slug" value=(value("api_slug")) size="20" required placeholder="lowercase_with_underscores"; }
                div {
                    label for="entity_type" { "Applies to" }
                    select #entity_type name="entity_type" {
                        @for entity in EntityType::ALL {
                            @if value("entity_type") == entity.as_str() { option value=(entity.as_str()) selected { (entity.as_str()) } }
                            @else { option value=(entity.as_str()) { (entity.as_str()) } }
                        }
                    }
                }
                div {
                    label for="data_type" { "Type" }
                    select #data_type name="data_type" {
                        @for data_type in DataType::ALL {
                            @if value("data_type") == data_type.as_str() { option value=(data_type.as_str()) selected { (type_name(*data_type)) } }
                            @else { option value=(data_type.as_str()) { (type_name(*data_type)) } }
                        }
                    }
                }
                div {
                    label for="reference_type" { "Refers to (references only)" }
                    select #reference_type name="reference_type" {
                        option value="" { "—" }
                        @for reference in ReferenceType::ALL {
                            @if value("reference_type") == reference.as_str() { option value=(reference.as_str()) selected { (reference.as_str().replace('_', " ")) } }
                            @else { option value=(reference.as_str()) { (reference.as_str().replace('_', " ")) } }
                        }
                    }
                }
            }
            div { label for="description" { "Description" } input #description name="description" value=(value("description")) size="60"; }
            (rule_inputs(&rules))
            div { button type="submit" { "Create custom field" } }
        }
    }
}

async fn list_page(
    app: &App,
    session: &Session,
    form: Option<&FormPairs>,
    problems: &[String],
) -> Result<Markup, PageError> {
    let found = app
        .store
        .list_custom_field_definitions(
            session.account_id,
            &DefinitionFilter::default(),
            PageRequest {
                offset: 0,
                limit: LISTED,
            },
        )
        .await?;
    Ok(layout(
        session,
        "Custom fields",
        "/custom-fields",
        html! {
            (problems_markup("The custom field was not created:", problems))
            @if found.items.is_empty() {
                p { "No custom fields yet." }
            } @else {
                table {
                    caption.muted { (found.total) " custom fields" }
                    thead { tr {
                        th scope="col" { "Name" } th scope="col" { "API slug" } th scope="col" { "Applies to" }
                        th scope="col" { "Type" } th scope="col" { "Required" }
                    } }
                    tbody {
                        @for record in &found.items {
                            @let d = &record.definition;
                            tr {
                                td { a href={"/custom-fields/" (record.id)} { (d.display_name) } }
                                td { code { (d.api_slug) } }
                                td { (d.entity_type.as_str()) }
                                td { (type_name(d.data_type)) }
                                td { @if d.validation.required { "yes" } @else { "no" } }
                            }
                        }
                    }
                }
            }
            @if session.can_write() {
                (create_form(session, form))
            } @else {
                p.muted { "This API key is read-only: custom fields cannot be defined with it." }
            }
        },
    ))
}

/// `GET /custom-fields`.
pub async fn index(state: AppState, session: Session) -> Result<Markup, PageError> {
    list_page(&state, &session, None, &[]).await
}

/// `POST /custom-fields`: defines a field and opens its page, or lists every problem.
pub async fn create(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, PageError> {
    let form = FormPairs::parse(&body);
    writable(&session, &headers, &form)?;
    let new = NewDefinition {
        api_slug: Some(form.one("api_slug").trim().to_owned()),
        display_name: Some(form.one("display_name").to_owned()),
        description: given(&form, "description"),
        entity_type: Some(form.one("entity_type").to_owned()),
        data_type: Some(form.one("data_type").to_owned()),
        reference_type: given(&form, "reference_type"),
        validation: Some(validation_from(&form)),
        default_format: None,
        default_value: None,
    };
    match custom_fields::create_definition(&state, session.account_id, &new).await {
        Ok(record) => Ok(Redirect::to(&format!("/custom-fields/{}", record.id)).into_response()),
        Err(error) => {
            let problems = details(error)?;
            let page = list_page(&state, &session, Some(&form), &problems).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
    }
}

fn edit_form(session: &Session, record: &DefinitionRecord) -> Markup {
    let d = &record.definition;
    html! {
        h2 { "Edit" }
        form.stack method="post" action={"/custom-fields/" (record.id)} {
            (csrf_field(session))
            div.filters {
                div { label for="display_name" { "Name" } input #display_name name="display_name" value=(d.display_name) size="24" required; }
                div { label for="description" { "Description" } input #description name="description" value=(d.description.as_deref().unwrap_or("")) size="50"; }
            }
            (rule_inputs(&d.validation.to_json()))
            div { button type="submit" { "Save changes" } }
        }
        form method="post" action={"/custom-fields/" (record.id) "/delete"} {
            (csrf_field(session))
            p.muted { "Deleting the field deletes every value of it." }
            button type="submit" { "Delete custom field" }
        }
    }
}

async fn options_markup(
    app: &App,
    session: &Session,
    record: &DefinitionRecord,
) -> Result<Markup, PageError> {
    let options = app
        .store
        .custom_field_options(session.account_id, record.id)
        .await?;
    let base = format!("/custom-fields/{}/options", record.id);
    Ok(html! {
        h2 { "Options" }
        @if options.is_empty() { p { "No options yet: values can only be one of its options." } }
        @else {
            table {
                thead { tr {
                    th scope="col" { "Value" } th scope="col" { "Label" } th scope="col" { "Position" }
                    @if session.can_write() { th scope="col" { span.visually-hidden { "Actions" } } }
                } }
                tbody {
                    @for option in &options {
                        @let id = format!("option-{}", option.id);
                        tr {
                            td { code { (option.option.value) } }
                            @if session.can_write() {
                                td colspan="2" {
                                    form.filters method="post" action={(base) "/" (option.id)} {
                                        (csrf_field(session))
                                        div { label for={(id) "-label"} { "Label of " (option.option.value) }
                                              input id={(id) "-label"} name="label" value=(option.option.label) size="20"; }
                                        div { label for={(id) "-position"} { "Position of " (option.option.value) }
                                              input id={(id) "-position"} name="position" inputmode="numeric" size="4"
                                                value=(option.option.position.map(|p| p.to_string()).unwrap_or_default()); }
                                        button type="submit" { "Save" span.visually-hidden { " option " (option.option.value) } }
                                    }
                                }
                                td {
                                    form method="post" action={(base) "/" (option.id) "/delete"} {
                                        (csrf_field(session))
                                        button type="submit" { "Delete" span.visually-hidden { " option " (option.option.value) } }
                                    }
                                }
                            } @else {
                                td { (option.option.label) }
                                td { (option.option.position.map(|p| p.to_string()).unwrap_or_default()) }
                            }
                        }
                    }
                }
            }
        }
        @if session.can_write() {
            form.filters method="post" action=(base) {
                (csrf_field(session))
                div { label for="option_value" { "Option value" } input #option_value name="value" size="16" required; }
                div { label for="option_label" { "Option label" } input #option_label name="label" size="20"; }
                div { label for="option_position" { "Option position" } input #option_position name="position" inputmode="numeric" size="4"; }
                button type="submit" { "Add option" }
            }
        }
    })
}

async fn definition_page(
    app: &App,
    session: &Session,
    id: Uuid,
    problems: &[String],
) -> Result<Markup, PageError> {
    let record = app
        .store
        .custom_field_definition(session.account_id, id)
        .await?;
    let d = &record.definition;
    let options = if is_list(d.data_type) {
        Some(options_markup(app, session, &record).await?)
    } else {
        None
    };
    Ok(layout(
        session,
        &format!("Custom field {}", d.display_name),
        "/custom-fields",
        html! {
            p { a href="/custom-fields" { "All custom fields" } }
            (problems_markup("Not saved:", problems))
            dl.facts {
                dt { "API slug" } dd { code { (d.api_slug) } }
                dt { "Applies to" } dd { (d.entity_type.as_str()) }
                dt { "Type" } dd { (type_name(d.data_type))
                    @if let Some(reference) = d.reference_type { " to a " (reference.as_str().replace('_', " ")) } }
                dt { "Description" } dd { (d.description.as_deref().unwrap_or("—")) }
                dt { "Rules" } dd { code { (d.validation.to_json()) } }
            }
            @if let Some(options) = options { (options) }
            @if session.can_write() { (edit_form(session, &record)) }
        },
    ))
}

/// `GET /custom-fields/{id}`.
pub async fn show(
    state: AppState,
    session: Session,
    Path(id): Path<String>,
) -> Result<Markup, PageError> {
    definition_page(&state, &session, parse_id(&id)?, &[]).await
}

/// The outcome of a definition page's form: back to the page, or the page with problems.
async fn outcome<T>(
    app: &App,
    session: &Session,
    id: Uuid,
    result: Result<T, CustomFieldError>,
) -> Result<Response, PageError> {
    match result {
        Ok(_) => Ok(Redirect::to(&format!("/custom-fields/{id}")).into_response()),
        Err(error) => {
            let problems = details(error)?;
            let page = definition_page(app, session, id, &problems).await?;
            Ok((StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
        }
    }
}

fn checked(session: &Session, headers: &HeaderMap, body: &Bytes) -> Result<FormPairs, PageError> {
    let form = FormPairs::parse(body);
    writable(session, headers, &form)?;
    Ok(form)
}

/// `POST /custom-fields/{id}`: name, description and rules (`PATCH
/// /v2/custom_field_definitions/{id}`).
pub async fn update(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, PageError> {
    let form = checked(&session, &headers, &body)?;
    let id = parse_id(&id)?;
    let changes = DefinitionChanges {
        display_name: Some(form.one("display_name").to_owned()),
        description: Some(given(&form, "description")),
        validation: Some(Some(validation_from(&form))),
        ..DefinitionChanges::default()
    };
    let result = custom_fields::update_definition(&state, session.account_id, id, &changes).await;
    outcome(&state, &session, id, result).await
}

/// `POST /custom-fields/{id}/delete`.
pub async fn delete(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Redirect, PageError> {
    checked(&session, &headers, &body)?;
    custom_fields::delete_definition(&state, session.account_id, parse_id(&id)?).await?;
    Ok(Redirect::to("/custom-fields"))
}

/// The typed position: a whole number or nothing; otherwise the definition's page saying so.
async fn position(
    app: &App,
    session: &Session,
    id: Uuid,
    form: &FormPairs,
) -> Result<Result<Option<i64>, Response>, PageError> {
    let Some(text) = given(form, "position") else {
        return Ok(Ok(None));
    };
    if let Ok(position) = text.parse() {
        return Ok(Ok(Some(position)));
    }
    let problems = [format!("Position must be a whole number; got {text:?}.")];
    let page = definition_page(app, session, id, &problems).await?;
    Ok(Err((StatusCode::UNPROCESSABLE_ENTITY, page).into_response()))
}

/// `POST /custom-fields/{id}/options`: adds an option.
pub async fn create_option(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, PageError> {
    let form = checked(&session, &headers, &body)?;
    let id = parse_id(&id)?;
    let position = match position(&state, &session, id, &form).await? {
        Ok(position) => position,
        Err(refused) => return Ok(refused),
    };
    let new = NewOption {
        value: Some(form.one("value").to_owned()),
        label: given(&form, "label"),
        position,
    };
    let result = custom_fields::create_option(&state, session.account_id, id, &new).await;
    outcome(&state, &session, id, result).await
}

/// `POST /custom-fields/{id}/options/{option}`: relabels or moves an option.
pub async fn update_option(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path((id, option)): Path<(String, String)>,
    body: Bytes,
) -> Result<Response, PageError> {
    let form = checked(&session, &headers, &body)?;
    let (id, option) = (parse_id(&id)?, parse_id(&option)?);
    let position = match position(&state, &session, id, &form).await? {
        Ok(position) => position,
        Err(refused) => return Ok(refused),
    };
    let changes = OptionChanges {
        value: None,
        label: Some(form.one("label").to_owned()),
        position: Some(position),
    };
    let result =
        custom_fields::update_option(&state, session.account_id, id, option, &changes).await;
    outcome(&state, &session, id, result).await
}

/// `POST /custom-fields/{id}/options/{option}/delete`.
pub async fn delete_option(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    Path((id, option)): Path<(String, String)>,
    body: Bytes,
) -> Result<Redirect, PageError> {
    checked(&session, &headers, &body)?;
    let id = parse_id(&id)?;
    custom_fields::delete_option(&state, session.account_id, id, parse_id(&option)?).await?;
    Ok(Redirect::to(&format!("/custom-fields/{id}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_fields_become_the_apis_validation_object() {
        let form =
            FormPairs::parse(b"required=true&min=1&max=2024-01-31&max_length=&pattern=%5EPO");
        assert_eq!(
            validation_from(&form),
            serde_json::json!({"required": true, "min": 1, "max": "2024-01-31", "pattern": "^PO"})
        );
    }
}
