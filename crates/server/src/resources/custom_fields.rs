//! The JSON:API types of custom fields, which the definitions' and the values' resources
//! name in each other's relationships.

/// A custom field's value on a shipment or container.
pub const VALUE_TYPE: &str = "custom_field";
/// A custom field's definition.
pub const DEFINITION_TYPE: &str = "custom_field_definition";
