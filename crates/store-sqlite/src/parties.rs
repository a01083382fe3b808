//! Parties (customers) on SQLite.

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, params};
use tidemark_domain::{AccountId, Party, PartyId};
use tidemark_store::{PageRequest, Paged, StoreError, StoreResult};

use crate::convert::{backend, from_ts, on_unique, to_ts, uuid_from};
use crate::shipments::paged;

const COLUMNS: &str = "id, account_id, company_name, created_at, updated_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<Party> {
    Ok(Party {
        id: PartyId(uuid_from(row, 0)?),
        account_id: AccountId(uuid_from(row, 1)?),
        company_name: row.get(2)?,
        created_at: from_ts(row, 3)?,
        updated_at: from_ts(row, 4)?,
    })
}

pub fn create(conn: &Connection, party: &Party) -> StoreResult<()> {
    conn.prepare_cached(&format!(
        "INSERT INTO parties ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5)"
    ))
    .and_then(|mut stmt| {
        stmt.execute(params![
            party.id.0.to_string(),
            party.account_id.0.to_string(),
            party.company_name,
            to_ts(party.created_at),
            to_ts(party.updated_at),
        ])
    })
    .map_err(|e| on_unique(e, "parties_by_name"))?;
    Ok(())
}

pub fn get(conn: &Connection, account: AccountId, id: PartyId) -> StoreResult<Party> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM parties WHERE id = ?1 AND account_id = ?2"
    ))
    .and_then(|mut stmt| {
        stmt.query_row([id.0.to_string(), account.0.to_string()], from_row)
            .optional()
    })
    .map_err(backend)?
    .ok_or(StoreError::NotFound)
}

pub fn list(conn: &Connection, account: AccountId, page: PageRequest) -> StoreResult<Paged<Party>> {
    paged(
        conn,
        COLUMNS,
        "FROM parties WHERE account_id = ?",
        "created_at DESC, id DESC",
        vec![Value::Text(account.0.to_string())],
        page,
        from_row,
    )
}

pub fn update(conn: &Connection, party: &Party) -> StoreResult<()> {
    let changed = conn
        .prepare_cached(
            "UPDATE parties SET company_name = ?3, updated_at = ?4
             WHERE id = ?1 AND account_id = ?2",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                party.id.0.to_string(),
                party.account_id.0.to_string(),
                party.company_name,
                to_ts(party.updated_at),
            ])
        })
        .map_err(|e| on_unique(e, "parties_by_name"))?;
    if changed == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}
