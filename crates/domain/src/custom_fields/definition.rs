//! Custom field definitions: creation and update rules (interface spec §2.10, §4.8).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::format::DefaultFormat;
use super::value::{Target, check_value_at};
use super::{
    DataType, EntityType, FieldOption, FieldProblem, MAX_API_SLUG_LENGTH, MAX_DESCRIPTION_LENGTH,
    MAX_DISPLAY_NAME_LENGTH, ProblemCode, ReferenceType, StoredValue, Validation, char_len,
    collect,
};

/// A checked custom field definition. The store adds its id, account and timestamps.
///
/// Serde reads and writes the wire attributes (`validation` as an object, `default_format`
/// as a string, `default_value` as JSON), re-checking them on the way in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "DefinitionWire", into = "DefinitionWire")]
pub struct Definition {
    /// The field's name in the API; unique per account, fixed at creation.
    pub api_slug: String,
    /// The name people see.
    pub display_name: String,
    /// Free text explaining the field.
    pub description: Option<String>,
    /// What the values belong to; fixed at creation.
    pub entity_type: EntityType,
    /// The type of the values; fixed at creation.
    pub data_type: DataType,
    /// What a `reference` field points at; `Some` exactly for `reference` fields.
    pub reference_type: Option<ReferenceType>,
    /// The rules values must follow.
    pub validation: Validation,
    /// How `display_value` shows values; `None` for the type's default.
    pub default_format: Option<DefaultFormat>,
    /// A value to suggest for entities without one; checked like a value, but never required.
    pub default_value: Option<StoredValue>,
}

/// The attributes of `POST /custom_field_definitions`, as sent. Everything is optional so
/// that [`validate_new_definition`] can report every missing attribute at once.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct NewDefinition {
    /// Required; see [`validate_api_slug`].
    pub api_slug: Option<String>,
    /// Required; trimmed.
    pub display_name: Option<String>,
    /// Optional; trimmed, blank means none.
    pub description: Option<String>,
    /// Required: `Shipment` or `Container`.
    pub entity_type: Option<String>,
    /// Required: one of [`DataType`].
    pub data_type: Option<String>,
    /// Required for `reference` fields, forbidden otherwise.
    pub reference_type: Option<String>,
    /// Optional rules object; see [`Validation`].
    pub validation: Option<Value>,
    /// Optional; see [`DefaultFormat`].
    pub default_format: Option<String>,
    /// Optional; checked like a value.
    pub default_value: Option<Value>,
}

/// The attributes of `PATCH /custom_field_definitions/{id}`, as sent. For the mutable
/// attributes the outer `Option` is "present", the inner one "not null", so `null` clears.
/// The fixed attributes may be sent, but only with their current value.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct DefinitionChanges {
    /// Fixed: accepted only if equal to the current value.
    pub api_slug: Option<String>,
    /// Fixed: accepted only if equal to the current value.
    pub entity_type: Option<String>,
    /// Fixed: accepted only if equal to the current value.
    pub data_type: Option<String>,
    /// Fixed: accepted only if equal to the current value.
    pub reference_type: Option<String>,
    /// A new display name; `null` is ignored, as the name cannot be removed.
    pub display_name: Option<String>,
    /// A new description, or `Some(None)` to remove it.
    #[serde(deserialize_with = "super::present")]
    pub description: Option<Option<String>>,
    /// A new rules object, or `Some(None)` to remove every rule.
    #[serde(deserialize_with = "super::present")]
    pub validation: Option<Option<Value>>,
    /// A new format, or `Some(None)` for the type's default.
    #[serde(deserialize_with = "super::present")]
    pub default_format: Option<Option<String>>,
    /// A new default value, or `Some(None)` to remove it.
    #[serde(deserialize_with = "super::present")]
    pub default_value: Option<Option<Value>>,
}

/// Checks an `api_slug`: 1 to 64 characters, a lowercase letter first, then lowercase
/// letters, digits and underscores. Uniqueness is the store's job.
pub fn validate_api_slug(api_slug: Option<&str>) -> Result<String, FieldProblem> {
    let slug = api_slug.unwrap_or_default();
    if slug.trim().is_empty() {
        return Err(FieldProblem::attribute(
            "api_slug",
            ProblemCode::Blank,
            "Api slug can't be blank",
        ));
    }
    if char_len(slug) > MAX_API_SLUG_LENGTH {
        return Err(FieldProblem::attribute(
            "api_slug",
            ProblemCode::TooLong,
            format!("Api slug is too long (maximum is {MAX_API_SLUG_LENGTH} characters)"),
        ));
    }
    let mut chars = slug.chars();
    let starts_with_letter = chars.next().is_some_and(|first| first.is_ascii_lowercase());
    let rest_allowed = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !(starts_with_letter && rest_allowed) {
        return Err(FieldProblem::attribute(
            "api_slug",
            ProblemCode::Invalid,
            "Api slug must start with a lowercase letter and contain only lowercase letters, \
             digits and underscores",
        ));
    }
    Ok(slug.to_owned())
}

/// Checks a new definition, returning it normalized or every problem found.
///
/// A `default_value` for an `enum` or `enum_multi` field cannot be checked before the
/// options exist, so it is rejected here; set it with an update once options are created.
pub fn validate_new_definition(new: &NewDefinition) -> Result<Definition, Vec<FieldProblem>> {
    let mut problems = Vec::new();
    let api_slug = keep(validate_api_slug(new.api_slug.as_deref()), &mut problems);
    let display_name = keep(
        check_display_name(new.display_name.as_deref()),
        &mut problems,
    );
    let description = keep(check_description(new.description.as_deref()), &mut problems);
    let entity_type = keep(
        parse_choice(
            "entity_type",
            "Entity type",
            new.entity_type.as_deref(),
            EntityType::DEFINED,
            EntityType::as_str,
            EntityType::parse_defined,
        ),
        &mut problems,
    );
    let data_type = keep(
        parse_choice(
            "data_type",
            "Data type",
            new.data_type.as_deref(),
            DataType::ALL,
            DataType::as_str,
            DataType::parse,
        ),
        &mut problems,
    );

    // The remaining attributes are judged against the data type, so they wait for it.
    let Some(data_type) = data_type else {
        return Err(problems);
    };
    let reference_type = keep(
        check_reference_type(data_type, new.reference_type.as_deref()),
        &mut problems,
    );
    let validation = match Validation::parse(data_type, new.validation.as_ref()) {
        Ok(validation) => Some(validation),
        Err(found) => {
            problems.extend(found);
            None
        }
    };
    let default_format = keep(
        DefaultFormat::parse_attribute(data_type, new.default_format.as_deref()),
        &mut problems,
    );

    let (
        Some(api_slug),
        Some(display_name),
        Some(description),
        Some(entity_type),
        Some(reference_type),
        Some(validation),
        Some(default_format),
    ) = (
        api_slug,
        display_name,
        description,
        entity_type,
        reference_type,
        validation,
        default_format,
    )
    else {
        return Err(problems);
    };
    let mut definition = Definition {
        api_slug,
        display_name,
        description,
        entity_type,
        data_type,
        reference_type,
        validation,
        default_format,
        default_value: None,
    };
    if let Some(raw) = &new.default_value {
        match check_value_at(&definition, &[], raw, &Target::DEFAULT_VALUE) {
            Ok(value) => definition.default_value = value,
            Err(found) => problems.extend(found),
        }
    }
    collect(definition, problems)
}

/// Applies a PATCH to `current`: only `display_name`, `description`, `validation`,
/// `default_format` and `default_value` may change. A different `api_slug`, `entity_type`,
/// `data_type` or `reference_type` is an `immutable` problem on that attribute.
///
/// The default value, new or kept, is re-checked against the resulting validation and
/// `options`. Values already stored on entities are not: a rule applies from the next write.
pub fn check_definition_update(
    current: &Definition,
    options: &[FieldOption],
    changes: &DefinitionChanges,
) -> Result<Definition, Vec<FieldProblem>> {
    let mut problems = Vec::new();
    let fixed = [
        (
            "api_slug",
            "Api slug",
            changes.api_slug.as_deref(),
            Some(current.api_slug.as_str()),
        ),
        (
            "entity_type",
            "Entity type",
            changes.entity_type.as_deref(),
            Some(current.entity_type.as_str()),
        ),
        (
            "data_type",
            "Data type",
            changes.data_type.as_deref(),
            Some(current.data_type.as_str()),
        ),
        (
            "reference_type",
            "Reference type",
            changes.reference_type.as_deref(),
            current.reference_type.map(ReferenceType::as_str),
        ),
    ];
    for (attribute, name, sent, kept) in fixed {
        if sent.is_some() && sent != kept {
            problems.push(FieldProblem::attribute(
                attribute,
                ProblemCode::Immutable,
                format!("{name} can't be changed after creation"),
            ));
        }
    }

    let mut updated = current.clone();
    if let Some(display_name) = &changes.display_name
        && let Some(name) = keep(check_display_name(Some(display_name)), &mut problems)
    {
        updated.display_name = name;
    }
    if let Some(description) = &changes.description
        && let Some(text) = keep(check_description(description.as_deref()), &mut problems)
    {
        updated.description = text;
    }
    if let Some(validation) = &changes.validation {
        match Validation::parse(current.data_type, validation.as_ref()) {
            Ok(validation) => updated.validation = validation,
            Err(found) => problems.extend(found),
        }
    }
    if let Some(format) = &changes.default_format {
        let parsed = DefaultFormat::parse_attribute(current.data_type, format.as_deref());
        if let Some(format) = keep(parsed, &mut problems) {
            updated.default_format = format;
        }
    }
    // Only re-check the default when its rules or itself change: an option deleted since
    // must not block renaming the field.
    if changes.default_value.is_some() || changes.validation.is_some() {
        let default_value = match &changes.default_value {
            Some(raw) => raw.clone().unwrap_or(Value::Null),
            None => updated
                .default_value
                .as_ref()
                .map_or(Value::Null, StoredValue::to_json),
        };
        match check_value_at(&updated, options, &default_value, &Target::DEFAULT_VALUE) {
            Ok(value) => updated.default_value = value,
            Err(found) => problems.extend(found),
        }
    }
    collect(updated, problems)
}

fn check_display_name(display_name: Option<&str>) -> Result<String, FieldProblem> {
    let name = display_name.unwrap_or_default().trim();
    if name.is_empty() {
        return Err(FieldProblem::attribute(
            "display_name",
            ProblemCode::Blank,
            "Display name can't be blank",
        ));
    }
    if char_len(name) > MAX_DISPLAY_NAME_LENGTH {
        return Err(FieldProblem::attribute(
            "display_name",
            ProblemCode::TooLong,
            format!("Display name is too long (maximum is {MAX_DISPLAY_NAME_LENGTH} characters)"),
        ));
    }
    Ok(name.to_owned())
}

/// A blank description is no description.
fn check_description(description: Option<&str>) -> Result<Option<String>, FieldProblem> {
    let text = description.unwrap_or_default().trim();
    if char_len(text) > MAX_DESCRIPTION_LENGTH {
        return Err(FieldProblem::attribute(
            "description",
            ProblemCode::TooLong,
            format!("Description is too long (maximum is {MAX_DESCRIPTION_LENGTH} characters)"),
        ));
    }
    Ok((!text.is_empty()).then(|| text.to_owned()))
}

fn parse_choice<T: Copy>(
    attribute: &str,
    name: &str,
    sent: Option<&str>,
    all: &[T],
    as_str: fn(T) -> &'static str,
    parse: fn(&str) -> Option<T>,
) -> Result<T, FieldProblem> {
    let text = sent.unwrap_or_default().trim();
    if text.is_empty() {
        return Err(FieldProblem::attribute(
            attribute,
            ProblemCode::Blank,
            format!("{name} can't be blank"),
        ));
    }
    parse(text).ok_or_else(|| {
        let allowed: Vec<&str> = all.iter().map(|value| as_str(*value)).collect();
        FieldProblem::attribute(
            attribute,
            ProblemCode::Inclusion,
            format!("{name} must be one of: {}", allowed.join(", ")),
        )
    })
}

fn check_reference_type(
    data_type: DataType,
    sent: Option<&str>,
) -> Result<Option<ReferenceType>, FieldProblem> {
    let text = sent.unwrap_or_default().trim();
    if data_type != DataType::Reference {
        if text.is_empty() {
            return Ok(None);
        }
        return Err(FieldProblem::attribute(
            "reference_type",
            ProblemCode::Invalid,
            "Reference type applies only to reference fields",
        ));
    }
    parse_choice(
        "reference_type",
        "Reference type",
        Some(text),
        ReferenceType::ALL,
        ReferenceType::as_str,
        ReferenceType::parse,
    )
    .map(Some)
}

/// The value, or `None` after recording its problem.
fn keep<T>(result: Result<T, FieldProblem>, problems: &mut Vec<FieldProblem>) -> Option<T> {
    result.map_err(|problem| problems.push(problem)).ok()
}

/// The wire form of a definition, for serde.
#[derive(Serialize, Deserialize)]
struct DefinitionWire {
    api_slug: String,
    display_name: String,
    description: Option<String>,
    entity_type: EntityType,
    data_type: DataType,
    reference_type: Option<ReferenceType>,
    #[serde(default)]
    validation: Value,
    default_format: Option<String>,
    #[serde(default)]
    default_value: Value,
}

impl From<Definition> for DefinitionWire {
    fn from(definition: Definition) -> Self {
        Self {
            validation: definition.validation.to_json(),
            default_format: definition
                .default_format
                .as_ref()
                .map(|format| format.as_str().to_owned()),
            default_value: definition
                .default_value
                .as_ref()
                .map_or(Value::Null, StoredValue::to_json),
            api_slug: definition.api_slug,
            display_name: definition.display_name,
            description: definition.description,
            entity_type: definition.entity_type,
            data_type: definition.data_type,
            reference_type: definition.reference_type,
        }
    }
}

impl TryFrom<DefinitionWire> for Definition {
    type Error = String;

    fn try_from(wire: DefinitionWire) -> Result<Self, Self::Error> {
        let details = |problems: Vec<FieldProblem>| {
            problems
                .into_iter()
                .map(|problem| problem.detail)
                .collect::<Vec<_>>()
                .join("; ")
        };
        let validation =
            Validation::parse(wire.data_type, Some(&wire.validation)).map_err(details)?;
        let default_format =
            DefaultFormat::parse_attribute(wire.data_type, wire.default_format.as_deref())
                .map_err(|problem| problem.detail)?;
        let mut definition = Self {
            api_slug: wire.api_slug,
            display_name: wire.display_name,
            description: wire.description,
            entity_type: wire.entity_type,
            data_type: wire.data_type,
            reference_type: wire.reference_type,
            validation,
            default_format,
            default_value: None,
        };
        definition.default_value = StoredValue::from_json(&definition, &wire.default_value)
            .map_err(|problem| problem.detail)?;
        Ok(definition)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{definition, option};
    use super::*;

    fn new_definition() -> NewDefinition {
        NewDefinition {
            api_slug: Some("po_number".to_owned()),
            display_name: Some(" Purchase Order Number ".to_owned()),
            entity_type: Some("Shipment".to_owned()),
            data_type: Some("short_text".to_owned()),
            ..NewDefinition::default()
        }
    }

    fn pointers(problems: &[FieldProblem]) -> Vec<&str> {
        problems
            .iter()
            .map(|problem| problem.pointer.as_str())
            .collect()
    }

    #[test]
    fn a_complete_definition_is_accepted_and_trimmed() {
        let definition = validate_new_definition(&new_definition()).expect("valid");

        assert_eq!(definition.display_name, "Purchase Order Number");
        assert_eq!(definition.entity_type, EntityType::Shipment);
        assert_eq!(definition.data_type, DataType::ShortText);
    }

    #[test]
    fn every_missing_attribute_is_reported_at_once() {
        let problems = validate_new_definition(&NewDefinition::default()).expect_err("rejected");

        assert_eq!(
            pointers(&problems),
            [
                "/data/attributes/api_slug",
                "/data/attributes/display_name",
                "/data/attributes/entity_type",
                "/data/attributes/data_type",
            ]
        );
        assert!(
            problems
                .iter()
                .all(|problem| problem.code == ProblemCode::Blank)
        );
    }

    #[test]
    fn an_api_slug_must_start_with_a_lowercase_letter() {
        for slug in ["1st_ref", "_ref", "Ref", "po-number", "po number", "réf"] {
            let problem = validate_api_slug(Some(slug)).expect_err(slug);

            assert_eq!(problem.code, ProblemCode::Invalid, "{slug}");
        }
    }

    #[test]
    fn an_api_slug_may_hold_digits_and_underscores() {
        assert_eq!(
            validate_api_slug(Some("po_number_2")),
            Ok("po_number_2".to_owned())
        );
    }

    #[test]
    fn an_api_slug_longer_than_64_characters_is_too_long() {
        let slug = "a".repeat(65);

        let problem = validate_api_slug(Some(&slug)).expect_err("rejected");

        assert_eq!(problem.code, ProblemCode::TooLong);
    }

    #[test]
    fn an_unknown_entity_type_lists_the_allowed_ones() {
        let new = NewDefinition {
            entity_type: Some("TrackingRequest".to_owned()),
            ..new_definition()
        };

        let problems = validate_new_definition(&new).expect_err("rejected");

        assert_eq!(problems[0].code, ProblemCode::Inclusion);
        assert_eq!(
            problems[0].detail,
            "Entity type must be one of: Shipment, Container"
        );
    }

    #[test]
    fn an_unknown_data_type_is_rejected() {
        let new = NewDefinition {
            data_type: Some("text".to_owned()),
            ..new_definition()
        };

        let problems = validate_new_definition(&new).expect_err("rejected");

        assert_eq!(pointers(&problems), ["/data/attributes/data_type"]);
    }

    #[test]
    fn a_reference_field_needs_a_reference_type() {
        let new = NewDefinition {
            data_type: Some("reference".to_owned()),
            ..new_definition()
        };

        let problems = validate_new_definition(&new).expect_err("rejected");

        assert_eq!(pointers(&problems), ["/data/attributes/reference_type"]);
        assert_eq!(problems[0].code, ProblemCode::Blank);
    }

    #[test]
    fn a_reference_type_on_another_data_type_is_rejected() {
        let new = NewDefinition {
            reference_type: Some("shipment".to_owned()),
            ..new_definition()
        };

        let problems = validate_new_definition(&new).expect_err("rejected");

        assert_eq!(
            problems[0].detail,
            "Reference type applies only to reference fields"
        );
    }

    #[test]
    fn validation_problems_are_reported_with_the_other_problems() {
        let new = NewDefinition {
            api_slug: None,
            data_type: Some("number".to_owned()),
            validation: Some(json!({"max_length": 3})),
            ..new_definition()
        };

        let problems = validate_new_definition(&new).expect_err("rejected");

        assert_eq!(
            pointers(&problems),
            [
                "/data/attributes/api_slug",
                "/data/attributes/validation/max_length"
            ]
        );
    }

    #[test]
    fn a_default_format_on_a_text_field_is_rejected() {
        let new = NewDefinition {
            default_format: Some("0.00".to_owned()),
            ..new_definition()
        };

        let problems = validate_new_definition(&new).expect_err("rejected");

        assert_eq!(
            problems[0].detail,
            "Default format does not apply to short_text fields"
        );
    }

    #[test]
    fn a_default_value_is_checked_against_the_validation() {
        let new = NewDefinition {
            data_type: Some("number".to_owned()),
            validation: Some(json!({"max": 10})),
            default_value: Some(json!(11)),
            ..new_definition()
        };

        let problems = validate_new_definition(&new).expect_err("rejected");

        assert_eq!(problems[0].pointer, "/data/attributes/default_value");
        assert_eq!(problems[0].detail, "Default value must be at most 10");
    }

    #[test]
    fn a_default_value_is_normalized() {
        let new = NewDefinition {
            data_type: Some("number".to_owned()),
            default_value: Some(json!("7.50")),
            ..new_definition()
        };

        let definition = validate_new_definition(&new).expect("valid");

        assert_eq!(
            definition.default_value.map(|value| value.to_json()),
            Some(json!(7.5))
        );
    }

    #[test]
    fn changing_the_display_name_and_validation_is_allowed() {
        let current = definition("number", Value::Null);
        let changes = DefinitionChanges {
            display_name: Some("Weight".to_owned()),
            validation: Some(Some(json!({"min": 0}))),
            ..DefinitionChanges::default()
        };

        let updated = check_definition_update(&current, &[], &changes).expect("valid");

        assert_eq!(updated.display_name, "Weight");
        assert_eq!(updated.validation.to_json(), json!({"min": 0}));
    }

    #[test]
    fn changing_a_fixed_attribute_points_at_it() {
        let current = definition("number", Value::Null);
        let changes = DefinitionChanges {
            api_slug: Some("other".to_owned()),
            entity_type: Some("Container".to_owned()),
            data_type: Some("date".to_owned()),
            ..DefinitionChanges::default()
        };

        let problems = check_definition_update(&current, &[], &changes).expect_err("rejected");

        assert_eq!(
            pointers(&problems),
            [
                "/data/attributes/api_slug",
                "/data/attributes/entity_type",
                "/data/attributes/data_type",
            ]
        );
        assert!(
            problems
                .iter()
                .all(|problem| problem.code == ProblemCode::Immutable)
        );
        assert_eq!(
            problems[0].detail,
            "Api slug can't be changed after creation"
        );
    }

    #[test]
    fn resending_a_fixed_attribute_unchanged_is_not_a_change() {
        let current = definition("number", Value::Null);
        let changes = DefinitionChanges {
            api_slug: Some("field".to_owned()),
            data_type: Some("number".to_owned()),
            entity_type: Some("Shipment".to_owned()),
            ..DefinitionChanges::default()
        };

        assert_eq!(
            check_definition_update(&current, &[], &changes),
            Ok(current)
        );
    }

    #[test]
    fn a_null_description_removes_it() {
        let mut current = definition("number", Value::Null);
        current.description = Some("Gross weight".to_owned());
        let changes: DefinitionChanges =
            serde_json::from_value(json!({"description": null})).expect("parses");

        let updated = check_definition_update(&current, &[], &changes).expect("valid");

        assert_eq!(updated.description, None);
    }

    #[test]
    fn an_absent_description_is_kept() {
        let mut current = definition("number", Value::Null);
        current.description = Some("Gross weight".to_owned());
        let changes: DefinitionChanges = serde_json::from_value(json!({})).expect("parses");

        let updated = check_definition_update(&current, &[], &changes).expect("valid");

        assert_eq!(updated.description.as_deref(), Some("Gross weight"));
    }

    #[test]
    fn an_enum_default_value_is_checked_against_the_options_on_update() {
        let current = definition("enum", Value::Null);
        let changes = DefinitionChanges {
            default_value: Some(Some(json!("b"))),
            ..DefinitionChanges::default()
        };

        let problems = check_definition_update(&current, &[option("a", None)], &changes)
            .expect_err("rejected");

        assert_eq!(
            problems[0].detail,
            "Default value is not one of the options: a"
        );
    }

    #[test]
    fn a_tighter_validation_is_checked_against_the_kept_default_value() {
        let mut current = definition("number", Value::Null);
        current.default_value = Some(StoredValue::Number(
            crate::custom_fields::Decimal::parse("50").expect("parses"),
        ));
        let changes = DefinitionChanges {
            validation: Some(Some(json!({"max": 10}))),
            ..DefinitionChanges::default()
        };

        let problems = check_definition_update(&current, &[], &changes).expect_err("rejected");

        assert_eq!(problems[0].pointer, "/data/attributes/default_value");
    }

    #[test]
    fn a_definition_round_trips_through_its_wire_form() {
        let new = NewDefinition {
            data_type: Some("date".to_owned()),
            validation: Some(json!({"required": true, "min": "2024-01-01"})),
            default_format: Some("MMM D, YYYY".to_owned()),
            default_value: Some(json!("2024-06-01")),
            ..new_definition()
        };
        let definition = validate_new_definition(&new).expect("valid");

        let wire = serde_json::to_value(&definition).expect("serializes");
        let back: Definition = serde_json::from_value(wire.clone()).expect("deserializes");

        assert_eq!(back, definition);
        assert_eq!(
            wire["validation"],
            json!({"required": true, "min": "2024-01-01"})
        );
        assert_eq!(wire["default_format"], json!("MMM D, YYYY"));
    }
}
