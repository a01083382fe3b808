//! Custom fields: user-defined attributes on shipments and containers (interface spec §2.9–2.11,
//! §4.2, §4.8, §4.9; Terminal49 notes §13).
//!
//! Three resources share these rules:
//! - a [`Definition`] names a field (`api_slug`), its [`DataType`], the [`EntityType`] it
//!   applies to, a [`Validation`] object and a [`DefaultFormat`];
//! - a [`FieldOption`] is one allowed value of an `enum` or `enum_multi` field;
//! - a [`StoredValue`] is one entity's value, checked by [`check_value`], indexed by
//!   [`StoredValue::index_keys`] and [`filter_key`], and shown by [`display_value`].
//!
//! Everything here is pure. The store enforces what needs a database: unique `api_slug` per
//! account, unique option values per definition (given the existing ones, [`check_option_value_unique`]
//! says whether a new one clashes) and the existence of referenced entities.
//!
//! Every failure is a [`FieldProblem`]: a JSON pointer into the request body, a Rails-style
//! `code` (Terminal49 is a Rails application) and a sentence for people. Functions that
//! validate a whole request return every problem at once.

mod decimal;
mod definition;
mod format;
mod option;
mod validation;
mod value;

use serde::{Deserialize, Deserializer, Serialize};

pub use decimal::{Decimal, DecimalError};
pub use definition::{
    Definition, DefinitionChanges, NewDefinition, check_definition_update, validate_api_slug,
    validate_new_definition,
};
pub use format::{DatePattern, DefaultFormat, NumberFormat, display_value};
pub use option::{
    FieldOption, NewOption, OptionChanges, check_option_update, check_option_value_unique,
    sort_options, validate_new_option,
};
pub use validation::{Bound, SafePattern, Validation};
pub use value::{StoredValue, check_value, filter_key};

/// The shipment or container a value belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntityRef {
    pub entity_type: EntityType,
    pub id: uuid::Uuid,
}

/// A value to write.
#[derive(Clone, Debug, PartialEq)]
pub struct NewValue {
    /// Used when the entity has no value of this field yet; an existing row keeps its id.
    pub id: uuid::Uuid,
    pub account_id: crate::AccountId,
    pub definition_id: uuid::Uuid,
    pub entity: EntityRef,
    pub value: StoredValue,
    pub at: chrono::DateTime<chrono::Utc>,
}

/// Longest `api_slug`, in characters.
pub const MAX_API_SLUG_LENGTH: usize = 64;
/// Longest `display_name`, in characters.
pub const MAX_DISPLAY_NAME_LENGTH: usize = 255;
/// Longest `description`, in characters.
pub const MAX_DESCRIPTION_LENGTH: usize = 2_000;
/// Longest `short_text` value, in characters; `validation.max_length` may only lower it.
pub const MAX_SHORT_TEXT_LENGTH: usize = 255;
/// Longest `long_text` value, in characters; `validation.max_length` may only lower it.
pub const MAX_LONG_TEXT_LENGTH: usize = 10_000;
/// Longest option `value` or `label`, in characters.
pub const MAX_OPTION_LENGTH: usize = 255;
/// Longest `validation.pattern`, in characters.
pub const MAX_PATTERN_LENGTH: usize = 256;
/// Longest `default_format`, in characters.
pub const MAX_FORMAT_LENGTH: usize = 64;

crate::string_enum! {
    /// The kind of entity a value belongs to, spelled in PascalCase as Terminal49 does.
    /// Definitions are only of shipments or containers (Terminal49's create accepts only
    /// these two); a tracking request holds values of shipment fields, for the shipment it
    /// will create.
    pub enum EntityType {
        Shipment => "Shipment",
        Container => "Container",
        TrackingRequest => "TrackingRequest",
    }
}

impl EntityType {
    /// The entity types a definition may be created for.
    pub const DEFINED: &'static [Self] = &[Self::Shipment, Self::Container];

    /// The entity type of the definitions whose values this entity holds: a tracking
    /// request's values are its future shipment's.
    pub fn fields_of(self) -> Self {
        match self {
            Self::TrackingRequest => Self::Shipment,
            other => other,
        }
    }

    /// [`Self::parse`], for the types a definition may be created for.
    pub fn parse_defined(text: &str) -> Option<Self> {
        Self::parse(text).filter(|kind| Self::DEFINED.contains(kind))
    }
}

crate::string_enum! {
    /// The type of a custom field's values (Terminal49 notes §13, plus `long_text`).
    pub enum DataType {
        /// A single line of text, at most [`MAX_SHORT_TEXT_LENGTH`] characters.
        ShortText => "short_text",
        /// Free text, at most [`MAX_LONG_TEXT_LENGTH`] characters. Not in Terminal49's
        /// OpenAPI enum; a Tidemark addition.
        LongText => "long_text",
        /// A decimal with at most 12 integer and 6 fraction digits, as Terminal49's
        /// `decimal(18,6)`.
        Number => "number",
        /// A calendar date, `YYYY-MM-DD`.
        Date => "date",
        /// An instant, RFC 3339, normalized to UTC.
        Datetime => "datetime",
        Boolean => "boolean",
        /// One of the definition's option values.
        Enum => "enum",
        /// A set of the definition's option values.
        EnumMulti => "enum_multi",
        /// The id of another resource, of the definition's `reference_type`.
        Reference => "reference",
    }
}

impl DataType {
    /// Whether the type takes options (`enum` and `enum_multi`).
    pub fn has_options(self) -> bool {
        matches!(self, Self::Enum | Self::EnumMulti)
    }

    /// Whether the type is text (`short_text` and `long_text`).
    pub fn is_text(self) -> bool {
        matches!(self, Self::ShortText | Self::LongText)
    }
}

crate::string_enum! {
    /// What a `reference` field points at: a JSON:API resource type Tidemark serves. The
    /// interface does not list the allowed values; these are the resources an account owns.
    pub enum ReferenceType {
        Shipment => "shipment",
        Container => "container",
        TrackingRequest => "tracking_request",
        Document => "document",
    }
}

crate::string_enum! {
    /// The `code` of a [`FieldProblem`], named after the Rails validation that Terminal49
    /// would report.
    pub enum ProblemCode {
        /// Missing or blank where a value is required.
        Blank => "blank",
        /// Wrong type or format, or a setting that does not apply.
        Invalid => "invalid",
        /// Longer than allowed.
        TooLong => "too_long",
        /// Above the maximum.
        LessThanOrEqualTo => "less_than_or_equal_to",
        /// Below the minimum.
        GreaterThanOrEqualTo => "greater_than_or_equal_to",
        /// Not one of the allowed values.
        Inclusion => "inclusion",
        /// Already used where it must be unique.
        Taken => "taken",
        /// An attribute that is fixed at creation.
        Immutable => "immutable",
    }
}

/// One validation failure: where it is in the request, what rule failed, and a sentence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldProblem {
    /// JSON pointer into the request body, such as `/data/attributes/value`.
    pub pointer: String,
    /// Machine-readable rule name.
    pub code: ProblemCode,
    /// Human-readable sentence naming the attribute and the rule.
    pub detail: String,
}

impl FieldProblem {
    /// A problem on `/data/attributes/<attribute>`.
    pub fn attribute(attribute: &str, code: ProblemCode, detail: impl Into<String>) -> Self {
        Self {
            pointer: format!("/data/attributes/{attribute}"),
            code,
            detail: detail.into(),
        }
    }

    /// A problem at an arbitrary JSON pointer.
    pub fn at(pointer: impl Into<String>, code: ProblemCode, detail: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            code,
            detail: detail.into(),
        }
    }
}

/// `Ok(value)` when no problem was found, `Err(problems)` otherwise.
fn collect<T>(value: T, problems: Vec<FieldProblem>) -> Result<T, Vec<FieldProblem>> {
    if problems.is_empty() {
        Ok(value)
    } else {
        Err(problems)
    }
}

/// Characters, not bytes, so limits mean something to people.
fn char_len(text: &str) -> usize {
    text.chars().count()
}

/// Marks a field as present, so `null` reads as `Some(None)` and absence (via `default`)
/// as `None`.
fn present<'de, T, D>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    T: Deserialize<'de>,
    D: Deserializer<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod test_support {
    use serde_json::Value;

    use super::{Definition, FieldOption, NewDefinition, validate_new_definition};

    /// A valid Shipment definition of `data_type` with `validation`.
    pub(super) fn definition(data_type: &str, validation: Value) -> Definition {
        let reference_type = (data_type == "reference").then(|| "shipment".to_owned());
        validate_new_definition(&NewDefinition {
            api_slug: Some("field".to_owned()),
            display_name: Some("Field".to_owned()),
            entity_type: Some("Shipment".to_owned()),
            data_type: Some(data_type.to_owned()),
            reference_type,
            validation: Some(validation),
            ..NewDefinition::default()
        })
        .expect("a valid definition")
    }

    /// An option with `value`, label `value` in upper case, and `position`.
    pub(super) fn option(value: &str, position: Option<i32>) -> FieldOption {
        FieldOption {
            value: value.to_owned(),
            label: value.to_uppercase(),
            position,
        }
    }
}
