//! User-defined custom fields: definitions, options and values on shipments and containers.

use async_trait::async_trait;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, params};
use tidemark_domain::AccountId;
use tidemark_domain::custom_fields::{Definition, EntityType, FieldOption};
use tidemark_store::{
    CustomFieldFilter, CustomFieldStore, DefinitionFilter, DefinitionRecord, EntityRef, NewValue,
    OptionRecord, PageRequest, Paged, StoreError, StoreResult, ValueFilter, ValueRecord,
};
use uuid::Uuid;

use crate::SqliteStore;
use crate::convert::{backend, from_ts, on_unique, to_ts, uuid_from};
use crate::shipments::paged;

const DEFINITION_COLUMNS: &str = "id, account_id, definition, created_at, updated_at";
const OPTION_COLUMNS: &str =
    "id, account_id, definition_id, value, label, position, created_at, updated_at";
const VALUE_COLUMNS: &str = "v.id, v.account_id, v.definition_id, d.api_slug, v.entity_type, \
                             v.entity_id, v.value, v.created_at, v.updated_at";
/// Options in display order: by position, unpositioned last, then by value.
const OPTION_ORDER: &str = "position IS NULL, position, value";

fn invalid(index: usize, what: impl Into<String>) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        index,
        rusqlite::types::Type::Text,
        what.into().into(),
    )
}

fn definition_from_row(row: &Row<'_>) -> rusqlite::Result<DefinitionRecord> {
    let json: String = row.get(2)?;
    let definition: Definition =
        serde_json::from_str(&json).map_err(|e| invalid(2, e.to_string()))?;
    Ok(DefinitionRecord {
        id: uuid_from(row, 0)?,
        account_id: AccountId(uuid_from(row, 1)?),
        definition,
        created_at: from_ts(row, 3)?,
        updated_at: from_ts(row, 4)?,
    })
}

fn option_from_row(row: &Row<'_>) -> rusqlite::Result<OptionRecord> {
    Ok(OptionRecord {
        id: uuid_from(row, 0)?,
        account_id: AccountId(uuid_from(row, 1)?),
        definition_id: uuid_from(row, 2)?,
        option: FieldOption {
            value: row.get(3)?,
            label: row.get(4)?,
            position: row.get(5)?,
        },
        created_at: from_ts(row, 6)?,
        updated_at: from_ts(row, 7)?,
    })
}

fn value_from_row(row: &Row<'_>) -> rusqlite::Result<ValueRecord> {
    let entity_type: String = row.get(4)?;
    let json: String = row.get(6)?;
    Ok(ValueRecord {
        id: uuid_from(row, 0)?,
        account_id: AccountId(uuid_from(row, 1)?),
        definition_id: uuid_from(row, 2)?,
        api_slug: row.get(3)?,
        entity: EntityRef {
            entity_type: EntityType::parse(&entity_type)
                .ok_or_else(|| invalid(4, format!("unknown entity type {entity_type}")))?,
            id: uuid_from(row, 5)?,
        },
        value: serde_json::from_str(&json).map_err(|e| invalid(6, e.to_string()))?,
        created_at: from_ts(row, 7)?,
        updated_at: from_ts(row, 8)?,
    })
}

fn definition_json(definition: &Definition) -> StoreResult<String> {
    serde_json::to_string(definition).map_err(backend)
}

/// `LIKE` pattern matching texts that start with `prefix`.
fn prefix_pattern(prefix: &str) -> String {
    let escaped = prefix
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("{escaped}%")
}

fn one<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    read: fn(&Row<'_>) -> rusqlite::Result<T>,
) -> StoreResult<T> {
    conn.prepare_cached(sql)
        .and_then(|mut stmt| stmt.query_row(params, read).optional())
        .map_err(backend)?
        .ok_or(StoreError::NotFound)
}

fn value_by_entity(
    conn: &Connection,
    account: AccountId,
    definition_id: Uuid,
    entity_id: Uuid,
) -> StoreResult<ValueRecord> {
    one(
        conn,
        &format!(
            "SELECT {VALUE_COLUMNS} FROM custom_field_values v
             JOIN custom_field_definitions d ON d.id = v.definition_id
             WHERE v.account_id = ?1 AND v.definition_id = ?2 AND v.entity_id = ?3"
        ),
        params![
            account.0.to_string(),
            definition_id.to_string(),
            entity_id.to_string()
        ],
        value_from_row,
    )
}

/// Writes `value` (replacing the entity's earlier value unless `keep_existing`) and its index
/// keys; returns whether a row was written.
pub(crate) fn write_value(
    tx: &Connection,
    value: &NewValue,
    keep_existing: bool,
) -> StoreResult<bool> {
    let json = value.value.to_json().to_string();
    let conflict = if keep_existing {
        "DO NOTHING"
    } else {
        "DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at"
    };
    let value_id: Option<String> = tx
        .prepare_cached(&format!(
            "INSERT INTO custom_field_values (id, account_id, definition_id, entity_type,
                entity_id, value, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
             ON CONFLICT (definition_id, entity_id) {conflict}
             RETURNING id"
        ))
        .and_then(|mut stmt| {
            stmt.query_row(
                params![
                    value.id.to_string(),
                    value.account_id.0.to_string(),
                    value.definition_id.to_string(),
                    value.entity.entity_type.as_str(),
                    value.entity.id.to_string(),
                    json,
                    to_ts(value.at),
                ],
                |row| row.get(0),
            )
            .optional()
        })
        .map_err(backend)?;
    let Some(value_id) = value_id else {
        return Ok(false);
    };
    tx.prepare_cached("DELETE FROM custom_field_value_keys WHERE value_id = ?1")
        .and_then(|mut stmt| stmt.execute([&value_id]))
        .map_err(backend)?;
    let mut insert = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO custom_field_value_keys
                (account_id, definition_id, filter_key, entity_id, value_id)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(backend)?;
    for key in value.value.index_keys() {
        insert
            .execute(params![
                value.account_id.0.to_string(),
                value.definition_id.to_string(),
                key,
                value.entity.id.to_string(),
                value_id,
            ])
            .map_err(backend)?;
    }
    Ok(true)
}

#[async_trait]
impl CustomFieldStore for SqliteStore {
    async fn create_custom_field_definition(&self, record: &DefinitionRecord) -> StoreResult<()> {
        let definition = &record.definition;
        let json = definition_json(definition)?;
        self.writer()
            .prepare_cached(
                "INSERT INTO custom_field_definitions (id, account_id, api_slug, display_name,
                    entity_type, data_type, definition, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    record.id.to_string(),
                    record.account_id.0.to_string(),
                    definition.api_slug,
                    definition.display_name,
                    definition.entity_type.as_str(),
                    definition.data_type.as_str(),
                    json,
                    to_ts(record.created_at),
                    to_ts(record.updated_at),
                ])
            })
            .map_err(|e| on_unique(e, "custom_field_definitions_slug"))?;
        Ok(())
    }

    async fn custom_field_definition(
        &self,
        account: AccountId,
        id: Uuid,
    ) -> StoreResult<DefinitionRecord> {
        one(
            &self.reader(),
            &format!(
                "SELECT {DEFINITION_COLUMNS} FROM custom_field_definitions
                 WHERE id = ?1 AND account_id = ?2"
            ),
            [id.to_string(), account.0.to_string()],
            definition_from_row,
        )
    }

    async fn custom_field_definition_by_slug(
        &self,
        account: AccountId,
        api_slug: &str,
    ) -> StoreResult<DefinitionRecord> {
        one(
            &self.reader(),
            &format!(
                "SELECT {DEFINITION_COLUMNS} FROM custom_field_definitions
                 WHERE account_id = ?1 AND api_slug = ?2"
            ),
            [account.0.to_string(), api_slug.to_owned()],
            definition_from_row,
        )
    }

    async fn list_custom_field_definitions(
        &self,
        account: AccountId,
        filter: &DefinitionFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<DefinitionRecord>> {
        let mut clauses = vec!["account_id = ?"];
        let mut values = vec![Value::Text(account.0.to_string())];
        if let Some(entity_type) = filter.entity_type {
            clauses.push("entity_type = ?");
            values.push(Value::Text(entity_type.as_str().to_owned()));
        }
        if let Some(data_type) = filter.data_type {
            clauses.push("data_type = ?");
            values.push(Value::Text(data_type.as_str().to_owned()));
        }
        if let Some(prefix) = &filter.display_name_prefix {
            // SQLite's LIKE ignores ASCII case.
            clauses.push("display_name LIKE ? ESCAPE '\\'");
            values.push(Value::Text(prefix_pattern(prefix)));
        }
        paged(
            &self.reader(),
            DEFINITION_COLUMNS,
            &format!(
                "FROM custom_field_definitions WHERE {}",
                clauses.join(" AND ")
            ),
            "created_at, id",
            values,
            page,
            definition_from_row,
        )
    }

    async fn update_custom_field_definition(&self, record: &DefinitionRecord) -> StoreResult<()> {
        let definition = &record.definition;
        let json = definition_json(definition)?;
        let changed = self
            .writer()
            .prepare_cached(
                "UPDATE custom_field_definitions
                 SET display_name = ?3, definition = ?4, updated_at = ?5
                 WHERE id = ?1 AND account_id = ?2",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    record.id.to_string(),
                    record.account_id.0.to_string(),
                    definition.display_name,
                    json,
                    to_ts(record.updated_at),
                ])
            })
            .map_err(backend)?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    async fn delete_custom_field_definition(
        &self,
        account: AccountId,
        id: Uuid,
    ) -> StoreResult<()> {
        // Options, values and their keys go with it (ON DELETE CASCADE).
        let changed = self
            .writer()
            .prepare_cached(
                "DELETE FROM custom_field_definitions WHERE id = ?1 AND account_id = ?2",
            )
            .and_then(|mut stmt| stmt.execute([id.to_string(), account.0.to_string()]))
            .map_err(backend)?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    async fn create_custom_field_option(&self, record: &OptionRecord) -> StoreResult<()> {
        self.writer()
            .prepare_cached(&format!(
                "INSERT INTO custom_field_options ({OPTION_COLUMNS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
            ))
            .and_then(|mut stmt| {
                stmt.execute(params![
                    record.id.to_string(),
                    record.account_id.0.to_string(),
                    record.definition_id.to_string(),
                    record.option.value,
                    record.option.label,
                    record.option.position,
                    to_ts(record.created_at),
                    to_ts(record.updated_at),
                ])
            })
            .map_err(|e| on_unique(e, "custom_field_options_value"))?;
        Ok(())
    }

    async fn custom_field_option(
        &self,
        account: AccountId,
        definition_id: Uuid,
        id: Uuid,
    ) -> StoreResult<OptionRecord> {
        one(
            &self.reader(),
            &format!(
                "SELECT {OPTION_COLUMNS} FROM custom_field_options
                 WHERE id = ?1 AND definition_id = ?2 AND account_id = ?3"
            ),
            [
                id.to_string(),
                definition_id.to_string(),
                account.0.to_string(),
            ],
            option_from_row,
        )
    }

    async fn custom_field_options(
        &self,
        account: AccountId,
        definition_id: Uuid,
    ) -> StoreResult<Vec<OptionRecord>> {
        self.reader()
            .prepare_cached(&format!(
                "SELECT {OPTION_COLUMNS} FROM custom_field_options
                 WHERE definition_id = ?1 AND account_id = ?2 ORDER BY {OPTION_ORDER}"
            ))
            .and_then(|mut stmt| {
                stmt.query_map(
                    [definition_id.to_string(), account.0.to_string()],
                    option_from_row,
                )
                .and_then(Iterator::collect)
            })
            .map_err(backend)
    }

    async fn update_custom_field_option(&self, record: &OptionRecord) -> StoreResult<()> {
        let changed = self
            .writer()
            .prepare_cached(
                "UPDATE custom_field_options SET label = ?4, position = ?5, updated_at = ?6
                 WHERE id = ?1 AND definition_id = ?2 AND account_id = ?3",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    record.id.to_string(),
                    record.definition_id.to_string(),
                    record.account_id.0.to_string(),
                    record.option.label,
                    record.option.position,
                    to_ts(record.updated_at),
                ])
            })
            .map_err(backend)?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    async fn delete_custom_field_option(
        &self,
        account: AccountId,
        definition_id: Uuid,
        id: Uuid,
    ) -> StoreResult<()> {
        let changed = self
            .writer()
            .prepare_cached(
                "DELETE FROM custom_field_options
                 WHERE id = ?1 AND definition_id = ?2 AND account_id = ?3",
            )
            .and_then(|mut stmt| {
                stmt.execute([
                    id.to_string(),
                    definition_id.to_string(),
                    account.0.to_string(),
                ])
            })
            .map_err(backend)?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    async fn set_custom_field_value(&self, value: &NewValue) -> StoreResult<ValueRecord> {
        let mut conn = self.writer();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        write_value(&tx, value, false)?;
        let stored = value_by_entity(&tx, value.account_id, value.definition_id, value.entity.id)?;
        tx.commit().map_err(backend)?;
        Ok(stored)
    }

    async fn insert_custom_field_values_if_absent(&self, values: &[NewValue]) -> StoreResult<u64> {
        let mut conn = self.writer();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        let mut written = 0;
        for value in values {
            if write_value(&tx, value, true)? {
                written += 1;
            }
        }
        tx.commit().map_err(backend)?;
        Ok(written)
    }

    async fn custom_field_value(&self, account: AccountId, id: Uuid) -> StoreResult<ValueRecord> {
        one(
            &self.reader(),
            &format!(
                "SELECT {VALUE_COLUMNS} FROM custom_field_values v
                 JOIN custom_field_definitions d ON d.id = v.definition_id
                 WHERE v.id = ?1 AND v.account_id = ?2"
            ),
            [id.to_string(), account.0.to_string()],
            value_from_row,
        )
    }

    async fn custom_field_value_of(
        &self,
        account: AccountId,
        definition_id: Uuid,
        entity_id: Uuid,
    ) -> StoreResult<ValueRecord> {
        value_by_entity(&self.reader(), account, definition_id, entity_id)
    }

    async fn list_custom_field_values(
        &self,
        account: AccountId,
        filter: &ValueFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<ValueRecord>> {
        let mut clauses = vec!["v.account_id = ?"];
        let mut values = vec![Value::Text(account.0.to_string())];
        if let Some(entity_id) = filter.entity_id {
            clauses.push("v.entity_id = ?");
            values.push(Value::Text(entity_id.to_string()));
        }
        if let Some(definition_id) = filter.definition_id {
            clauses.push("v.definition_id = ?");
            values.push(Value::Text(definition_id.to_string()));
        }
        paged(
            &self.reader(),
            VALUE_COLUMNS,
            &format!(
                "FROM custom_field_values v
                 JOIN custom_field_definitions d ON d.id = v.definition_id WHERE {}",
                clauses.join(" AND ")
            ),
            "v.created_at, v.id",
            values,
            page,
            value_from_row,
        )
    }

    async fn delete_custom_field_value(&self, account: AccountId, id: Uuid) -> StoreResult<()> {
        let changed = self
            .writer()
            .prepare_cached("DELETE FROM custom_field_values WHERE id = ?1 AND account_id = ?2")
            .and_then(|mut stmt| stmt.execute([id.to_string(), account.0.to_string()]))
            .map_err(backend)?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }
}

/// Adds one clause per `filter[custom_fields][...]` to a shipment or container list query:
/// the entity's id must be among those the key index gives for that field and key.
pub fn filter_clauses(
    account: AccountId,
    filters: &[CustomFieldFilter],
    entity_id_column: &str,
    clauses: &mut Vec<String>,
    values: &mut Vec<Value>,
) {
    for filter in filters {
        clauses.push(format!(
            "{entity_id_column} IN (SELECT k.entity_id FROM custom_field_value_keys k
             WHERE k.account_id = ? AND k.definition_id = ? AND k.filter_key = ?)"
        ));
        values.extend([
            Value::Text(account.0.to_string()),
            Value::Text(filter.definition_id.to_string()),
            Value::Text(filter.key.clone()),
        ]);
    }
}
