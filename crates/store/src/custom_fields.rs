//! User-defined custom fields: definitions, options and values on shipments and containers.
//!
//! The rules (what a valid definition, option or value is) live in
//! `tidemark_domain::custom_fields`; the store keeps what they produce and enforces what needs
//! the database: unique `api_slug` per account, unique option values per definition, one value
//! per field and entity, and the index keys that make `filter[custom_fields][<api_slug>]` one
//! indexed lookup.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tidemark_domain::AccountId;
use tidemark_domain::custom_fields::{DataType, Definition, EntityType, FieldOption};
pub use tidemark_domain::custom_fields::{EntityRef, NewValue};
use uuid::Uuid;

use crate::{PageRequest, Paged, StoreResult};

/// A definition as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct DefinitionRecord {
    pub id: Uuid,
    pub account_id: AccountId,
    pub definition: Definition,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// An option of an `enum` or `enum_multi` definition, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionRecord {
    pub id: Uuid,
    pub account_id: AccountId,
    pub definition_id: Uuid,
    pub option: FieldOption,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One entity's value of one field, as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueRecord {
    pub id: Uuid,
    pub account_id: AccountId,
    pub definition_id: Uuid,
    /// The definition's slug, read with the value.
    pub api_slug: String,
    pub entity: EntityRef,
    /// The value in canonical JSON ([`StoredValue::to_json`]); read it back with
    /// [`StoredValue::from_json`] and its definition.
    pub value: serde_json::Value,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Which definitions to list. Every set field must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DefinitionFilter {
    pub entity_type: Option<EntityType>,
    pub data_type: Option<DataType>,
    /// Case-insensitive prefix of the display name.
    pub display_name_prefix: Option<String>,
}

/// Which values to list. Every set field must match.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValueFilter {
    pub entity_id: Option<Uuid>,
    pub definition_id: Option<Uuid>,
}

/// `filter[custom_fields][<api_slug>]` on shipments and containers: entities whose value of
/// the definition has this index key ([`StoredValue::index_keys`], `filter_key`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomFieldFilter {
    pub definition_id: Uuid,
    pub key: String,
}

/// User-defined custom fields: definitions, options and values on shipments and containers.
#[async_trait]
pub trait CustomFieldStore: Send + Sync {
    /// Stores a new definition; a slug the account already uses is
    /// `Conflict { constraint: "custom_field_definitions_slug" }`.
    async fn create_custom_field_definition(&self, record: &DefinitionRecord) -> StoreResult<()>;
    /// One of the account's definitions; another account's is `NotFound`.
    async fn custom_field_definition(
        &self,
        account: AccountId,
        id: Uuid,
    ) -> StoreResult<DefinitionRecord>;
    /// The account's definition with this slug.
    async fn custom_field_definition_by_slug(
        &self,
        account: AccountId,
        api_slug: &str,
    ) -> StoreResult<DefinitionRecord>;
    /// The account's definitions matching `filter`, oldest first.
    async fn list_custom_field_definitions(
        &self,
        account: AccountId,
        filter: &DefinitionFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<DefinitionRecord>>;
    /// Saves a definition's mutable attributes and `updated_at`; the slug, entity type and
    /// data type stay as created.
    async fn update_custom_field_definition(&self, record: &DefinitionRecord) -> StoreResult<()>;
    /// Deletes a definition with its options and every value of it.
    async fn delete_custom_field_definition(&self, account: AccountId, id: Uuid)
    -> StoreResult<()>;

    /// Stores a new option; a value the definition's options already use is
    /// `Conflict { constraint: "custom_field_options_value" }`.
    async fn create_custom_field_option(&self, record: &OptionRecord) -> StoreResult<()>;
    /// One option of one of the account's definitions.
    async fn custom_field_option(
        &self,
        account: AccountId,
        definition_id: Uuid,
        id: Uuid,
    ) -> StoreResult<OptionRecord>;
    /// Every option of a definition, in display order (position, unpositioned last, value).
    async fn custom_field_options(
        &self,
        account: AccountId,
        definition_id: Uuid,
    ) -> StoreResult<Vec<OptionRecord>>;
    /// Saves an option's label, position and `updated_at`.
    async fn update_custom_field_option(&self, record: &OptionRecord) -> StoreResult<()>;
    /// Deletes an option; values that use it are left as they are.
    async fn delete_custom_field_option(
        &self,
        account: AccountId,
        definition_id: Uuid,
        id: Uuid,
    ) -> StoreResult<()>;

    /// Sets an entity's value of a field, replacing any earlier one, with its index keys, in
    /// one transaction; returns the stored value.
    async fn set_custom_field_value(&self, value: &NewValue) -> StoreResult<ValueRecord>;
    /// Writes each value whose entity has none of that field yet, leaving existing ones;
    /// returns how many were written. For values staged before their entity existed.
    async fn insert_custom_field_values_if_absent(&self, values: &[NewValue]) -> StoreResult<u64>;
    /// One of the account's values.
    async fn custom_field_value(&self, account: AccountId, id: Uuid) -> StoreResult<ValueRecord>;
    /// An entity's value of one field.
    async fn custom_field_value_of(
        &self,
        account: AccountId,
        definition_id: Uuid,
        entity_id: Uuid,
    ) -> StoreResult<ValueRecord>;
    /// The account's values matching `filter`, oldest first.
    async fn list_custom_field_values(
        &self,
        account: AccountId,
        filter: &ValueFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<ValueRecord>>;
    /// Deletes one of the account's values with its index keys.
    async fn delete_custom_field_value(&self, account: AccountId, id: Uuid) -> StoreResult<()>;
}
