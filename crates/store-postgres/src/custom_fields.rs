//! User-defined custom fields: definitions, options and values on shipments and containers.

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tidemark_domain::AccountId;
use tidemark_domain::custom_fields::{Definition, EntityType, FieldOption};
use tidemark_store::{
    CustomFieldFilter, CustomFieldStore, DefinitionFilter, DefinitionRecord, EntityRef, NewValue,
    OptionRecord, PageRequest, Paged, StoreError, StoreResult, ValueFilter, ValueRecord,
};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::PgStore;
use crate::convert::{backend, on_unique, query_all, query_one};
use crate::shipments::paged;
use crate::tracking_requests::Condition;

const DEFINITION_COLUMNS: &str = "id, account_id, definition, created_at, updated_at";
const OPTION_COLUMNS: &str =
    "id, account_id, definition_id, value, label, position, created_at, updated_at";
const VALUE_COLUMNS: &str = "v.id, v.account_id, v.definition_id, d.api_slug, v.entity_type, \
                             v.entity_id, v.value, v.created_at, v.updated_at";
const VALUE_FROM: &str =
    "FROM custom_field_values v JOIN custom_field_definitions d ON d.id = v.definition_id";
/// Options in display order: by position, unpositioned last, then by value.
const OPTION_ORDER: &str = "position NULLS LAST, value";

fn definition_from_row(row: &Row) -> StoreResult<DefinitionRecord> {
    let json: serde_json::Value = row.try_get(2).map_err(backend)?;
    Ok(DefinitionRecord {
        id: row.try_get(0).map_err(backend)?,
        account_id: AccountId(row.try_get(1).map_err(backend)?),
        definition: serde_json::from_value(json).map_err(backend)?,
        created_at: row.try_get(3).map_err(backend)?,
        updated_at: row.try_get(4).map_err(backend)?,
    })
}

fn option_from_row(row: &Row) -> StoreResult<OptionRecord> {
    Ok(OptionRecord {
        id: row.try_get(0).map_err(backend)?,
        account_id: AccountId(row.try_get(1).map_err(backend)?),
        definition_id: row.try_get(2).map_err(backend)?,
        option: FieldOption {
            value: row.try_get(3).map_err(backend)?,
            label: row.try_get(4).map_err(backend)?,
            position: row.try_get(5).map_err(backend)?,
        },
        created_at: row.try_get(6).map_err(backend)?,
        updated_at: row.try_get(7).map_err(backend)?,
    })
}

fn value_from_row(row: &Row) -> StoreResult<ValueRecord> {
    let entity_type: String = row.try_get(4).map_err(backend)?;
    Ok(ValueRecord {
        id: row.try_get(0).map_err(backend)?,
        account_id: AccountId(row.try_get(1).map_err(backend)?),
        definition_id: row.try_get(2).map_err(backend)?,
        api_slug: row.try_get(3).map_err(backend)?,
        entity: EntityRef {
            entity_type: EntityType::parse(&entity_type)
                .ok_or_else(|| backend(format!("unknown entity type {entity_type}")))?,
            id: row.try_get(5).map_err(backend)?,
        },
        value: row.try_get(6).map_err(backend)?,
        created_at: row.try_get(7).map_err(backend)?,
        updated_at: row.try_get(8).map_err(backend)?,
    })
}

fn definition_json(definition: &Definition) -> StoreResult<serde_json::Value> {
    serde_json::to_value(definition).map_err(backend)
}

/// `ILIKE` pattern matching texts that start with `prefix`.
fn prefix_pattern(prefix: &str) -> String {
    let escaped = prefix
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("{escaped}%")
}

/// Fails with `NotFound` when a statement changed no row.
fn changed_one(changed: u64) -> StoreResult<()> {
    if changed == 0 {
        Err(StoreError::NotFound)
    } else {
        Ok(())
    }
}

async fn execute(
    client: &impl GenericClient,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> StoreResult<u64> {
    let statement = client.prepare_cached(sql).await.map_err(backend)?;
    client.execute(&statement, params).await.map_err(backend)
}

async fn value_by_entity(
    client: &impl GenericClient,
    account: AccountId,
    definition_id: Uuid,
    entity_id: Uuid,
) -> StoreResult<ValueRecord> {
    query_one(
        client,
        &format!(
            "SELECT {VALUE_COLUMNS} {VALUE_FROM}
             WHERE v.account_id = $1 AND v.definition_id = $2 AND v.entity_id = $3"
        ),
        &[&account.0, &definition_id, &entity_id],
        value_from_row,
    )
    .await
}

/// Writes `value` (replacing the entity's earlier value unless `keep_existing`) and its index
/// keys; returns whether a row was written.
pub(crate) async fn write_value(
    tx: &deadpool_postgres::Transaction<'_>,
    value: &NewValue,
    keep_existing: bool,
) -> StoreResult<bool> {
    let json = value.value.to_json();
    let conflict = if keep_existing {
        "DO NOTHING"
    } else {
        "DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at"
    };
    let statement = tx
        .prepare_cached(&format!(
            "INSERT INTO custom_field_values (id, account_id, definition_id, entity_type,
                entity_id, value, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
             ON CONFLICT (definition_id, entity_id) {conflict}
             RETURNING id"
        ))
        .await
        .map_err(backend)?;
    let Some(row) = tx
        .query_opt(
            &statement,
            &[
                &value.id,
                &value.account_id.0,
                &value.definition_id,
                &value.entity.entity_type.as_str(),
                &value.entity.id,
                &json,
                &value.at,
            ],
        )
        .await
        .map_err(backend)?
    else {
        return Ok(false);
    };
    let value_id: Uuid = row.try_get(0).map_err(backend)?;
    execute(
        tx,
        "DELETE FROM custom_field_value_keys WHERE value_id = $1",
        &[&value_id],
    )
    .await?;
    let keys = value.value.index_keys();
    execute(
        tx,
        "INSERT INTO custom_field_value_keys
            (account_id, definition_id, filter_key, entity_id, value_id)
         SELECT $1, $2, key, $3, $4 FROM unnest($5::text[]) AS key
         ON CONFLICT DO NOTHING",
        &[
            &value.account_id.0,
            &value.definition_id,
            &value.entity.id,
            &value_id,
            &keys,
        ],
    )
    .await?;
    Ok(true)
}

/// Adds one clause per `filter[custom_fields][...]` to a shipment or container list query:
/// the entity's id must be among those the key index gives for that field and key.
pub fn filter_clauses(
    account: AccountId,
    filters: &[CustomFieldFilter],
    entity_id_column: &str,
    condition: &mut Condition,
) {
    for filter in filters {
        let account = condition.bind(account.0);
        let definition = condition.bind(filter.definition_id);
        let key = condition.bind(filter.key.clone());
        condition.clauses.push(format!(
            "{entity_id_column} IN (SELECT k.entity_id FROM custom_field_value_keys k
             WHERE k.account_id = {account} AND k.definition_id = {definition}
               AND k.filter_key = {key})"
        ));
    }
}

#[async_trait]
impl CustomFieldStore for PgStore {
    async fn create_custom_field_definition(&self, record: &DefinitionRecord) -> StoreResult<()> {
        let definition = &record.definition;
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "INSERT INTO custom_field_definitions (id, account_id, api_slug, display_name,
                    entity_type, data_type, definition, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .await
            .map_err(backend)?;
        client
            .execute(
                &statement,
                &[
                    &record.id,
                    &record.account_id.0,
                    &definition.api_slug,
                    &definition.display_name,
                    &definition.entity_type.as_str(),
                    &definition.data_type.as_str(),
                    &definition_json(definition)?,
                    &record.created_at,
                    &record.updated_at,
                ],
            )
            .await
            .map_err(|e| on_unique(e, "custom_field_definitions_slug"))?;
        Ok(())
    }

    async fn custom_field_definition(
        &self,
        account: AccountId,
        id: Uuid,
    ) -> StoreResult<DefinitionRecord> {
        query_one(
            &self.client().await?,
            &format!(
                "SELECT {DEFINITION_COLUMNS} FROM custom_field_definitions
                 WHERE id = $1 AND account_id = $2"
            ),
            &[&id, &account.0],
            definition_from_row,
        )
        .await
    }

    async fn custom_field_definition_by_slug(
        &self,
        account: AccountId,
        api_slug: &str,
    ) -> StoreResult<DefinitionRecord> {
        query_one(
            &self.client().await?,
            &format!(
                "SELECT {DEFINITION_COLUMNS} FROM custom_field_definitions
                 WHERE account_id = $1 AND api_slug = $2"
            ),
            &[&account.0, &api_slug],
            definition_from_row,
        )
        .await
    }

    async fn list_custom_field_definitions(
        &self,
        account: AccountId,
        filter: &DefinitionFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<DefinitionRecord>> {
        let mut condition = Condition::default();
        let placeholder = condition.bind(account.0);
        condition
            .clauses
            .push(format!("account_id = {placeholder}"));
        if let Some(entity_type) = filter.entity_type {
            let placeholder = condition.bind(entity_type.as_str());
            condition
                .clauses
                .push(format!("entity_type = {placeholder}"));
        }
        if let Some(data_type) = filter.data_type {
            let placeholder = condition.bind(data_type.as_str());
            condition.clauses.push(format!("data_type = {placeholder}"));
        }
        if let Some(prefix) = &filter.display_name_prefix {
            let placeholder = condition.bind(prefix_pattern(prefix));
            condition
                .clauses
                .push(format!("display_name ILIKE {placeholder} ESCAPE '\\'"));
        }
        paged(
            &self.client().await?,
            DEFINITION_COLUMNS,
            "FROM custom_field_definitions",
            condition,
            "created_at, id",
            page,
            definition_from_row,
        )
        .await
    }

    async fn update_custom_field_definition(&self, record: &DefinitionRecord) -> StoreResult<()> {
        let changed = execute(
            &self.client().await?,
            "UPDATE custom_field_definitions
             SET display_name = $3, definition = $4, updated_at = $5
             WHERE id = $1 AND account_id = $2",
            &[
                &record.id,
                &record.account_id.0,
                &record.definition.display_name,
                &definition_json(&record.definition)?,
                &record.updated_at,
            ],
        )
        .await?;
        changed_one(changed)
    }

    async fn delete_custom_field_definition(
        &self,
        account: AccountId,
        id: Uuid,
    ) -> StoreResult<()> {
        // Options, values and their keys go with it (ON DELETE CASCADE).
        let changed = execute(
            &self.client().await?,
            "DELETE FROM custom_field_definitions WHERE id = $1 AND account_id = $2",
            &[&id, &account.0],
        )
        .await?;
        changed_one(changed)
    }

    async fn create_custom_field_option(&self, record: &OptionRecord) -> StoreResult<()> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "INSERT INTO custom_field_options ({OPTION_COLUMNS})
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
            ))
            .await
            .map_err(backend)?;
        client
            .execute(
                &statement,
                &[
                    &record.id,
                    &record.account_id.0,
                    &record.definition_id,
                    &record.option.value,
                    &record.option.label,
                    &record.option.position,
                    &record.created_at,
                    &record.updated_at,
                ],
            )
            .await
            .map_err(|e| on_unique(e, "custom_field_options_value"))?;
        Ok(())
    }

    async fn custom_field_option(
        &self,
        account: AccountId,
        definition_id: Uuid,
        id: Uuid,
    ) -> StoreResult<OptionRecord> {
        query_one(
            &self.client().await?,
            &format!(
                "SELECT {OPTION_COLUMNS} FROM custom_field_options
                 WHERE id = $1 AND definition_id = $2 AND account_id = $3"
            ),
            &[&id, &definition_id, &account.0],
            option_from_row,
        )
        .await
    }

    async fn custom_field_options(
        &self,
        account: AccountId,
        definition_id: Uuid,
    ) -> StoreResult<Vec<OptionRecord>> {
        query_all(
            &self.client().await?,
            &format!(
                "SELECT {OPTION_COLUMNS} FROM custom_field_options
                 WHERE definition_id = $1 AND account_id = $2 ORDER BY {OPTION_ORDER}"
            ),
            &[&definition_id, &account.0],
            option_from_row,
        )
        .await
    }

    async fn update_custom_field_option(&self, record: &OptionRecord) -> StoreResult<()> {
        let changed = execute(
            &self.client().await?,
            "UPDATE custom_field_options SET label = $4, position = $5, updated_at = $6
             WHERE id = $1 AND definition_id = $2 AND account_id = $3",
            &[
                &record.id,
                &record.definition_id,
                &record.account_id.0,
                &record.option.label,
                &record.option.position,
                &record.updated_at,
            ],
        )
        .await?;
        changed_one(changed)
    }

    async fn delete_custom_field_option(
        &self,
        account: AccountId,
        definition_id: Uuid,
        id: Uuid,
    ) -> StoreResult<()> {
        let changed = execute(
            &self.client().await?,
            "DELETE FROM custom_field_options
             WHERE id = $1 AND definition_id = $2 AND account_id = $3",
            &[&id, &definition_id, &account.0],
        )
        .await?;
        changed_one(changed)
    }

    async fn set_custom_field_value(&self, value: &NewValue) -> StoreResult<ValueRecord> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        write_value(&tx, value, false).await?;
        let stored =
            value_by_entity(&tx, value.account_id, value.definition_id, value.entity.id).await?;
        tx.commit().await.map_err(backend)?;
        Ok(stored)
    }

    async fn insert_custom_field_values_if_absent(&self, values: &[NewValue]) -> StoreResult<u64> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let mut written = 0;
        for value in values {
            if write_value(&tx, value, true).await? {
                written += 1;
            }
        }
        tx.commit().await.map_err(backend)?;
        Ok(written)
    }

    async fn custom_field_value(&self, account: AccountId, id: Uuid) -> StoreResult<ValueRecord> {
        query_one(
            &self.client().await?,
            &format!("SELECT {VALUE_COLUMNS} {VALUE_FROM} WHERE v.id = $1 AND v.account_id = $2"),
            &[&id, &account.0],
            value_from_row,
        )
        .await
    }

    async fn custom_field_value_of(
        &self,
        account: AccountId,
        definition_id: Uuid,
        entity_id: Uuid,
    ) -> StoreResult<ValueRecord> {
        value_by_entity(&self.client().await?, account, definition_id, entity_id).await
    }

    async fn list_custom_field_values(
        &self,
        account: AccountId,
        filter: &ValueFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<ValueRecord>> {
        let mut condition = Condition::default();
        let placeholder = condition.bind(account.0);
        condition
            .clauses
            .push(format!("v.account_id = {placeholder}"));
        if let Some(entity_id) = filter.entity_id {
            let placeholder = condition.bind(entity_id);
            condition
                .clauses
                .push(format!("v.entity_id = {placeholder}"));
        }
        if let Some(definition_id) = filter.definition_id {
            let placeholder = condition.bind(definition_id);
            condition
                .clauses
                .push(format!("v.definition_id = {placeholder}"));
        }
        paged(
            &self.client().await?,
            VALUE_COLUMNS,
            VALUE_FROM,
            condition,
            "v.created_at, v.id",
            page,
            value_from_row,
        )
        .await
    }

    async fn delete_custom_field_value(&self, account: AccountId, id: Uuid) -> StoreResult<()> {
        let changed = execute(
            &self.client().await?,
            "DELETE FROM custom_field_values WHERE id = $1 AND account_id = $2",
            &[&id, &account.0],
        )
        .await?;
        changed_one(changed)
    }
}
