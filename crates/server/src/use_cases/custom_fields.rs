//! Use cases of custom fields: definitions, options and values on shipments, containers and
//! tracking requests (whose values are copied onto the shipment they create),
//! the `filter[custom_fields][...]` of shipment and container lists, and the
//! `initial_custom_fields` a tracking request stages until its shipment exists.
//!
//! The rules are `tidemark_domain::custom_fields`; this module loads what they need, applies
//! them and stores the result.

use serde_json::Value;
use tidemark_domain::custom_fields::{
    Definition, DefinitionChanges, EntityType, FieldOption, FieldProblem, NewDefinition, NewOption,
    OptionChanges, ProblemCode, ReferenceType, StoredValue, check_definition_update,
    check_option_update, check_value, display_value, filter_key, validate_new_definition,
    validate_new_option,
};
use tidemark_domain::tracking_update::TrackingUpdate;
use tidemark_domain::{AccountId, ContainerId, ShipmentId, TrackingRequest, TrackingRequestId};
use tidemark_store::{
    CustomFieldFilter, DefinitionFilter, DefinitionRecord, EntityRef, NewValue, OptionRecord,
    PageRequest, StoreError, ValueFilter, ValueRecord,
};
use uuid::Uuid;

use crate::parts::core::Core;

/// Most `filter[custom_fields][...]` parameters one list request may carry.
pub const MAX_FILTERS: usize = 5;

#[derive(Debug, thiserror::Error)]
pub enum CustomFieldError {
    /// Every problem found with the request body.
    #[error("invalid custom field input")]
    Invalid(Vec<FieldProblem>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn invalid(problem: FieldProblem) -> CustomFieldError {
    CustomFieldError::Invalid(vec![problem])
}

/// A value with what people see of it.
#[derive(Clone, Debug, PartialEq)]
pub struct ShownValue {
    pub record: ValueRecord,
    pub display_value: Option<String>,
}

/// Options of a definition as the rules take them.
async fn options_of(
    core: &Core,
    account: AccountId,
    definition_id: Uuid,
) -> Result<Vec<FieldOption>, StoreError> {
    Ok(core
        .store
        .custom_field_options(account, definition_id)
        .await?
        .into_iter()
        .map(|record| record.option)
        .collect())
}

// Definitions.

pub async fn create_definition(
    core: &Core,
    account: AccountId,
    new: &NewDefinition,
) -> Result<DefinitionRecord, CustomFieldError> {
    let definition = validate_new_definition(new).map_err(CustomFieldError::Invalid)?;
    let now = core.clock.now();
    let record = DefinitionRecord {
        id: core.ids.next_id(),
        account_id: account,
        definition,
        created_at: now,
        updated_at: now,
    };
    match core.store.create_custom_field_definition(&record).await {
        Ok(()) => Ok(record),
        Err(StoreError::Conflict { .. }) => Err(invalid(FieldProblem::attribute(
            "api_slug",
            ProblemCode::Taken,
            format!(
                "Api slug '{}' has already been taken",
                record.definition.api_slug
            ),
        ))),
        Err(error) => Err(error.into()),
    }
}

/// Applies a PATCH: only `display_name`, `description`, `validation`, `default_format` and
/// `default_value` change; an attempt to change a fixed attribute changes nothing.
pub async fn update_definition(
    core: &Core,
    account: AccountId,
    id: Uuid,
    changes: &DefinitionChanges,
) -> Result<DefinitionRecord, CustomFieldError> {
    let mut record = core.store.custom_field_definition(account, id).await?;
    let options = options_of(core, account, id).await?;
    let updated = check_definition_update(&record.definition, &options, changes)
        .map_err(CustomFieldError::Invalid)?;
    if updated != record.definition {
        record.definition = updated;
        record.updated_at = core.clock.now();
        core.store.update_custom_field_definition(&record).await?;
    }
    Ok(record)
}

// Options.

pub async fn create_option(
    core: &Core,
    account: AccountId,
    definition_id: Uuid,
    new: &NewOption,
) -> Result<OptionRecord, CustomFieldError> {
    let definition = core
        .store
        .custom_field_definition(account, definition_id)
        .await?;
    let existing = options_of(core, account, definition_id).await?;
    let option = validate_new_option(
        &definition.definition,
        new,
        existing.iter().map(|o| o.value.as_str()),
    )
    .map_err(CustomFieldError::Invalid)?;
    let now = core.clock.now();
    let record = OptionRecord {
        id: core.ids.next_id(),
        account_id: account,
        definition_id,
        option,
        created_at: now,
        updated_at: now,
    };
    match core.store.create_custom_field_option(&record).await {
        Ok(()) => Ok(record),
        // Another request took the value between the check and the insert.
        Err(StoreError::Conflict { .. }) => Err(invalid(FieldProblem::attribute(
            "value",
            ProblemCode::Taken,
            "Value has already been taken",
        ))),
        Err(error) => Err(error.into()),
    }
}

pub async fn update_option(
    core: &Core,
    account: AccountId,
    definition_id: Uuid,
    id: Uuid,
    changes: &OptionChanges,
) -> Result<OptionRecord, CustomFieldError> {
    let mut record = core
        .store
        .custom_field_option(account, definition_id, id)
        .await?;
    let updated =
        check_option_update(&record.option, changes).map_err(CustomFieldError::Invalid)?;
    if updated != record.option {
        record.option = updated;
        record.updated_at = core.clock.now();
        core.store.update_custom_field_option(&record).await?;
    }
    Ok(record)
}

// Values.

/// The account's shipment, container or tracking request, or `NotFound`.
pub async fn entity(
    core: &Core,
    account: AccountId,
    entity_type: EntityType,
    id: Uuid,
) -> Result<EntityRef, StoreError> {
    match entity_type {
        EntityType::Shipment => core
            .store
            .shipment(account, ShipmentId(id))
            .await
            .map(|_| ()),
        EntityType::Container => core
            .store
            .container(account, ContainerId(id))
            .await
            .map(|_| ()),
        EntityType::TrackingRequest => core
            .store
            .tracking_request(account, TrackingRequestId(id))
            .await
            .map(|_| ()),
    }?;
    Ok(EntityRef { entity_type, id })
}

/// The definition named by `api_slug`, which must apply to `entity`'s type (a tracking
/// request's are shipment fields).
pub async fn definition_for(
    core: &Core,
    account: AccountId,
    entity: EntityRef,
    api_slug: &str,
    pointer: &str,
) -> Result<DefinitionRecord, CustomFieldError> {
    let unknown = || {
        invalid(FieldProblem::at(
            pointer,
            ProblemCode::Invalid,
            format!("No custom field definition has api_slug '{api_slug}'"),
        ))
    };
    let record = match core
        .store
        .custom_field_definition_by_slug(account, api_slug)
        .await
    {
        Ok(record) => record,
        Err(StoreError::NotFound) => return Err(unknown()),
        Err(error) => return Err(error.into()),
    };
    if record.definition.entity_type != entity.entity_type.fields_of() {
        return Err(invalid(FieldProblem::at(
            pointer,
            ProblemCode::Invalid,
            format!(
                "Custom field '{api_slug}' applies to {} entities, not {}",
                record.definition.entity_type,
                entity.entity_type.fields_of()
            ),
        )));
    }
    Ok(record)
}

/// Shows a stored value: its `display_value` under the definition's format and options.
pub async fn show(core: &Core, record: ValueRecord) -> Result<ShownValue, StoreError> {
    let definition = core
        .store
        .custom_field_definition(record.account_id, record.definition_id)
        .await?;
    let options = options_of(core, record.account_id, record.definition_id).await?;
    Ok(shown(&definition.definition, &options, record))
}

fn shown(definition: &Definition, options: &[FieldOption], record: ValueRecord) -> ShownValue {
    // A value stored before its definition's rules changed still shows; only a value of
    // the wrong type (which the store never holds) would show nothing.
    let value = StoredValue::from_json(definition, &record.value)
        .ok()
        .flatten();
    ShownValue {
        display_value: display_value(definition, options, value.as_ref()),
        record,
    }
}

/// What setting a value did.
#[derive(Clone, Debug, PartialEq)]
pub enum SetOutcome {
    /// The value was stored; `created` when the entity had none before.
    Set { value: ShownValue, created: bool },
    /// The value was empty (`null`, blank, `[]`) and not required: the entity's value, if
    /// any, was removed.
    Cleared { previous: Option<ValueRecord> },
}

/// Checks `raw` against the definition's type, validation and options, then stores it on
/// `entity` (or clears it, for an empty value).
pub async fn set_value(
    core: &Core,
    account: AccountId,
    entity: EntityRef,
    definition: &DefinitionRecord,
    raw: &Value,
) -> Result<SetOutcome, CustomFieldError> {
    let options = options_of(core, account, definition.id).await?;
    let checked =
        check_value(&definition.definition, &options, raw).map_err(CustomFieldError::Invalid)?;
    if let Some(StoredValue::Reference { reference_type, id }) = &checked {
        check_reference(core, account, *reference_type, *id).await?;
    }
    let previous = match core
        .store
        .custom_field_value_of(account, definition.id, entity.id)
        .await
    {
        Ok(record) => Some(record),
        Err(StoreError::NotFound) => None,
        Err(error) => return Err(error.into()),
    };
    let Some(value) = checked else {
        if let Some(previous) = &previous {
            match core
                .store
                .delete_custom_field_value(account, previous.id)
                .await
            {
                Ok(()) | Err(StoreError::NotFound) => {}
                Err(error) => return Err(error.into()),
            }
        }
        return Ok(SetOutcome::Cleared { previous });
    };
    let record = core
        .store
        .set_custom_field_value(&NewValue {
            id: core.ids.next_id(),
            account_id: account,
            definition_id: definition.id,
            entity,
            value,
            at: core.clock.now(),
        })
        .await?;
    Ok(SetOutcome::Set {
        value: shown(&definition.definition, &options, record),
        created: previous.is_none(),
    })
}

/// A reference must name one of the account's resources. Documents are not checked: their
/// store is not part of this feature.
async fn check_reference(
    core: &Core,
    account: AccountId,
    reference_type: ReferenceType,
    id: Uuid,
) -> Result<(), CustomFieldError> {
    let found = match reference_type {
        ReferenceType::Shipment => core
            .store
            .shipment(account, ShipmentId(id))
            .await
            .map(|_| ()),
        ReferenceType::Container => core
            .store
            .container(account, ContainerId(id))
            .await
            .map(|_| ()),
        ReferenceType::TrackingRequest => core
            .store
            .tracking_request(account, TrackingRequestId(id))
            .await
            .map(|_| ()),
        ReferenceType::Document => Ok(()),
    };
    match found {
        Ok(()) => Ok(()),
        Err(StoreError::NotFound) => Err(invalid(FieldProblem::attribute(
            "value",
            ProblemCode::Invalid,
            format!("Value must reference an existing {reference_type}"),
        ))),
        Err(error) => Err(error.into()),
    }
}

/// Several values, shown.
pub async fn show_all(
    core: &Core,
    records: Vec<ValueRecord>,
) -> Result<Vec<ShownValue>, StoreError> {
    let mut shown_values = Vec::with_capacity(records.len());
    for record in records {
        shown_values.push(show(core, record).await?);
    }
    Ok(shown_values)
}

/// One field an entity can have: its definition, options (for lists) and the entity's
/// value, if it has one.
#[derive(Clone, Debug, PartialEq)]
pub struct EntityField {
    pub definition: DefinitionRecord,
    pub options: Vec<OptionRecord>,
    pub value: Option<ShownValue>,
}

/// Most fields shown for one entity.
pub const MAX_ENTITY_FIELDS: u32 = 100;

/// Every field defined for `entity`'s type, oldest first, with the entity's values.
pub async fn fields_of(
    core: &Core,
    account: AccountId,
    entity: EntityRef,
) -> Result<Vec<EntityField>, StoreError> {
    let page = PageRequest {
        offset: 0,
        limit: MAX_ENTITY_FIELDS,
    };
    let definitions = core
        .store
        .list_custom_field_definitions(
            account,
            &DefinitionFilter {
                entity_type: Some(entity.entity_type),
                ..DefinitionFilter::default()
            },
            page,
        )
        .await?
        .items;
    let mut values = core
        .store
        .list_custom_field_values(
            account,
            &ValueFilter {
                entity_id: Some(entity.id),
                definition_id: None,
            },
            page,
        )
        .await?
        .items;
    let mut fields = Vec::with_capacity(definitions.len());
    for definition in definitions {
        let options = core
            .store
            .custom_field_options(account, definition.id)
            .await?;
        let plain: Vec<FieldOption> = options.iter().map(|o| o.option.clone()).collect();
        let value = values
            .iter()
            .position(|v| v.definition_id == definition.id)
            .map(|at| shown(&definition.definition, &plain, values.swap_remove(at)));
        fields.push(EntityField {
            definition,
            options,
            value,
        });
    }
    Ok(fields)
}

/// Deletes a definition with its options and every value of it.
pub async fn delete_definition(
    core: &Core,
    account: AccountId,
    id: Uuid,
) -> Result<(), StoreError> {
    core.store.delete_custom_field_definition(account, id).await
}

/// Deletes an option; values that use it keep it, shown as the raw value.
pub async fn delete_option(
    core: &Core,
    account: AccountId,
    definition_id: Uuid,
    id: Uuid,
) -> Result<(), StoreError> {
    core.store
        .delete_custom_field_option(account, definition_id, id)
        .await
}

// Filters.

/// A problem with one `filter[custom_fields][<api_slug>]` parameter: the parameter and a
/// sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterProblem {
    pub parameter: String,
    pub code: &'static str,
    pub detail: String,
}

/// Turns the `filter[custom_fields][<api_slug>]` parameters of a shipment or container list
/// into store filters: each slug must name a definition for `entity_type`, each value must
/// suit its data type.
pub async fn filters_from(
    core: &Core,
    account: AccountId,
    entity_type: EntityType,
    parameters: &[(String, String)],
) -> Result<Result<Vec<CustomFieldFilter>, FilterProblem>, StoreError> {
    const PREFIX: &str = "filter[custom_fields][";
    let mut filters = Vec::new();
    for (name, raw) in parameters {
        let Some(slug) = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.strip_suffix(']'))
        else {
            continue;
        };
        if filters.len() == MAX_FILTERS {
            return Ok(Err(FilterProblem {
                parameter: name.clone(),
                code: "too_many",
                detail: format!("At most {MAX_FILTERS} custom field filters may be combined."),
            }));
        }
        let definition = match core
            .store
            .custom_field_definition_by_slug(account, slug)
            .await
        {
            Ok(record) if record.definition.entity_type == entity_type => record,
            Ok(record) => {
                return Ok(Err(FilterProblem {
                    parameter: name.clone(),
                    code: "invalid",
                    detail: format!(
                        "Custom field '{slug}' applies to {} entities, not {entity_type}.",
                        record.definition.entity_type
                    ),
                }));
            }
            Err(StoreError::NotFound) => {
                return Ok(Err(FilterProblem {
                    parameter: name.clone(),
                    code: "invalid",
                    detail: format!("No custom field definition has api_slug '{slug}'."),
                }));
            }
            Err(error) => return Err(error),
        };
        match filter_key(&definition.definition, raw) {
            Ok(key) => filters.push(CustomFieldFilter {
                definition_id: definition.id,
                key,
            }),
            Err(problem) => {
                return Ok(Err(FilterProblem {
                    parameter: name.clone(),
                    code: problem.code.as_str(),
                    detail: format!("{}.", problem.detail),
                }));
            }
        }
    }
    Ok(Ok(filters))
}

// Initial custom fields of tracking requests.

/// One staged value: the field, the value in canonical JSON, and for a container field the
/// container number it is for (`None`: every container of the shipment).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Staged {
    api_slug: String,
    value: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    number: Option<String>,
}

/// The normalized `initial_custom_fields` kept on a tracking request.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct StagedFields {
    #[serde(default)]
    shipment: Vec<Staged>,
    #[serde(default)]
    containers: Vec<Staged>,
}

/// Checks a tracking request's `initial_custom_fields` (`{shipment: [{api_slug, value}],
/// containers: [{api_slug, value, number?}]}`) now, so a bad value is a 422 on submission
/// rather than lost later; returns them normalized for staging.
pub async fn stage(
    core: &Core,
    account: AccountId,
    raw: Option<&Value>,
) -> Result<Option<Value>, CustomFieldError> {
    const BASE: &str = "/data/attributes/initial_custom_fields";
    let Some(raw) = raw.filter(|raw| !raw.is_null()) else {
        return Ok(None);
    };
    let Some(object) = raw.as_object() else {
        return Err(invalid(FieldProblem::at(
            BASE,
            ProblemCode::Invalid,
            "Initial custom fields must be an object with shipment and containers lists",
        )));
    };
    let mut problems = Vec::new();
    let mut staged = StagedFields::default();
    for (key, entity_type) in [
        ("shipment", EntityType::Shipment),
        ("containers", EntityType::Container),
    ] {
        let entries = match object.get(key) {
            None | Some(Value::Null) => continue,
            Some(Value::Array(entries)) => entries,
            Some(_) => {
                problems.push(FieldProblem::at(
                    format!("{BASE}/{key}"),
                    ProblemCode::Invalid,
                    format!("Initial custom fields' {key} must be a list"),
                ));
                continue;
            }
        };
        for (index, entry) in entries.iter().enumerate() {
            let at = format!("{BASE}/{key}/{index}");
            match stage_entry(core, account, entity_type, entry, &at).await? {
                Ok(entry) if entity_type == EntityType::Shipment => staged.shipment.push(entry),
                Ok(entry) => staged.containers.push(entry),
                Err(found) => problems.extend(found),
            }
        }
    }
    if let Some(unknown) = object
        .keys()
        .find(|key| !matches!(key.as_str(), "shipment" | "containers"))
    {
        problems.push(FieldProblem::at(
            format!("{BASE}/{unknown}"),
            ProblemCode::Invalid,
            "Initial custom fields take only shipment and containers",
        ));
    }
    if !problems.is_empty() {
        return Err(CustomFieldError::Invalid(problems));
    }
    serde_json::to_value(staged)
        .map(Some)
        .map_err(|error| CustomFieldError::Store(StoreError::backend(error)))
}

async fn stage_entry(
    core: &Core,
    account: AccountId,
    entity_type: EntityType,
    entry: &Value,
    at: &str,
) -> Result<Result<Staged, Vec<FieldProblem>>, StoreError> {
    let slug = entry.get("api_slug").and_then(Value::as_str).unwrap_or("");
    let definition = match core
        .store
        .custom_field_definition_by_slug(account, slug)
        .await
    {
        Ok(record) if record.definition.entity_type == entity_type => record,
        Ok(_) => {
            return Ok(Err(vec![FieldProblem::at(
                format!("{at}/api_slug"),
                ProblemCode::Invalid,
                format!("Custom field '{slug}' does not apply to {entity_type} entities"),
            )]));
        }
        Err(StoreError::NotFound) => {
            return Ok(Err(vec![FieldProblem::at(
                format!("{at}/api_slug"),
                ProblemCode::Invalid,
                format!("No custom field definition has api_slug '{slug}'"),
            )]));
        }
        Err(error) => return Err(error),
    };
    let options = options_of(core, account, definition.id).await?;
    let raw = entry.get("value").unwrap_or(&Value::Null);
    let value = match check_value(&definition.definition, &options, raw) {
        Ok(value) => value,
        Err(problems) => {
            return Ok(Err(problems
                .into_iter()
                .map(|problem| FieldProblem {
                    pointer: format!("{at}/value"),
                    ..problem
                })
                .collect()));
        }
    };
    let number = entry
        .get("number")
        .and_then(Value::as_str)
        .map(|number| number.trim().to_uppercase())
        .filter(|number| !number.is_empty());
    Ok(Ok(Staged {
        api_slug: definition.definition.api_slug,
        value: value.map_or(Value::Null, |value| value.to_json()),
        number,
    }))
}

/// The values a tracking request holds for the shipment and containers an update creates,
/// to be written with the update: first the values set on the request itself
/// (`/v2/tracking_requests/{id}/custom_fields`), then those staged in its
/// `initial_custom_fields`; where both name a field, the first written is kept.
///
/// `defined` is what [`any_defined`] said for the account, when the caller asked it (once
/// for many requests): without a definition no request can hold a value, so none is read.
pub async fn staged_values(
    core: &Core,
    request: &TrackingRequest,
    update: &TrackingUpdate,
    defined: Option<bool>,
) -> Result<Vec<NewValue>, StoreError> {
    let mut values = if update.shipment_created && defined != Some(false) {
        request_values(core, request, update.shipment.id).await?
    } else {
        Vec::new()
    };
    values.extend(initial_values(core, request, update).await?);
    Ok(values)
}

/// Whether the account has any custom field definition: values (a request's own among
/// them) exist only of a definition, and go with it when it is deleted.
pub async fn any_defined(core: &Core, account: AccountId) -> Result<bool, StoreError> {
    const ONE: PageRequest = PageRequest {
        offset: 0,
        limit: 1,
    };
    let page = core
        .store
        .list_custom_field_definitions(account, &DefinitionFilter::default(), ONE)
        .await?;
    Ok(!page.items.is_empty())
}

/// The tracking request's own values (of shipment fields), copied onto its new shipment.
async fn request_values(
    core: &Core,
    request: &TrackingRequest,
    shipment: ShipmentId,
) -> Result<Vec<NewValue>, StoreError> {
    // A request holds at most one value per shipment field; a page this large holds all.
    const ALL: PageRequest = PageRequest {
        offset: 0,
        limit: 10_000,
    };
    let held = core
        .store
        .list_custom_field_values(
            request.account_id,
            &ValueFilter {
                entity_id: Some(request.id.0),
                ..ValueFilter::default()
            },
            ALL,
        )
        .await?;
    let now = core.clock.now();
    let mut values = Vec::with_capacity(held.items.len());
    for record in held.items {
        let definition = core
            .store
            .custom_field_definition(request.account_id, record.definition_id)
            .await?;
        let Ok(Some(value)) = StoredValue::from_json(&definition.definition, &record.value) else {
            continue;
        };
        values.push(NewValue {
            id: core.ids.next_id(),
            account_id: request.account_id,
            definition_id: record.definition_id,
            entity: EntityRef {
                entity_type: EntityType::Shipment,
                id: shipment.0,
            },
            value,
            at: now,
        });
    }
    Ok(values)
}

/// The values a tracking request staged (`initial_custom_fields`) for the shipment and
/// containers an update creates. Definitions deleted or changed to another entity type
/// since staging are skipped.
async fn initial_values(
    core: &Core,
    request: &TrackingRequest,
    update: &TrackingUpdate,
) -> Result<Vec<NewValue>, StoreError> {
    let Some(raw) = &request.initial_custom_fields else {
        return Ok(Vec::new());
    };
    if !update.shipment_created && update.new_containers.is_empty() {
        return Ok(Vec::new());
    }
    let Ok(staged) = serde_json::from_value::<StagedFields>(raw.clone()) else {
        tracing::warn!(tracking_request.id = %request.id, "unreadable initial_custom_fields");
        return Ok(Vec::new());
    };
    let account = request.account_id;
    let now = core.clock.now();
    let mut values = Vec::new();
    let mut targets: Vec<(&Staged, EntityRef)> = Vec::new();
    if update.shipment_created {
        for entry in &staged.shipment {
            targets.push((
                entry,
                EntityRef {
                    entity_type: EntityType::Shipment,
                    id: update.shipment.id.0,
                },
            ));
        }
    }
    for entry in &staged.containers {
        for container in &update.new_containers {
            if entry
                .number
                .as_ref()
                .is_none_or(|number| *number == container.number)
            {
                targets.push((
                    entry,
                    EntityRef {
                        entity_type: EntityType::Container,
                        id: container.id.0,
                    },
                ));
            }
        }
    }
    for (entry, entity) in targets {
        let definition = match core
            .store
            .custom_field_definition_by_slug(account, &entry.api_slug)
            .await
        {
            Ok(record) if record.definition.entity_type == entity.entity_type => record,
            Ok(_) | Err(StoreError::NotFound) => continue,
            Err(error) => return Err(error),
        };
        let Ok(Some(value)) = StoredValue::from_json(&definition.definition, &entry.value) else {
            continue;
        };
        values.push(NewValue {
            id: core.ids.next_id(),
            account_id: account,
            definition_id: definition.id,
            entity,
            value,
            at: now,
        });
    }
    Ok(values)
}
