//! Parties (customers) on PostgreSQL.

use deadpool_postgres::GenericClient;
use tidemark_domain::{AccountId, Party, PartyId};
use tidemark_store::{PageRequest, Paged, StoreError, StoreResult};
use tokio_postgres::Row;

use crate::convert::{backend, on_unique, query_one};
use crate::shipments::paged;
use crate::tracking_requests::Condition;

const COLUMNS: &str = "id, account_id, company_name, created_at, updated_at";

fn from_row(row: &Row) -> StoreResult<Party> {
    Ok(Party {
        id: PartyId(row.try_get(0).map_err(backend)?),
        account_id: AccountId(row.try_get(1).map_err(backend)?),
        company_name: row.try_get(2).map_err(backend)?,
        created_at: row.try_get(3).map_err(backend)?,
        updated_at: row.try_get(4).map_err(backend)?,
    })
}

pub async fn create(client: &impl GenericClient, party: &Party) -> StoreResult<()> {
    let statement = client
        .prepare_cached(&format!(
            "INSERT INTO parties ({COLUMNS}) VALUES ($1, $2, $3, $4, $5)"
        ))
        .await
        .map_err(backend)?;
    client
        .execute(
            &statement,
            &[
                &party.id.0,
                &party.account_id.0,
                &party.company_name,
                &party.created_at,
                &party.updated_at,
            ],
        )
        .await
        .map_err(|e| on_unique(e, "parties_by_name"))?;
    Ok(())
}

pub async fn get(
    client: &impl GenericClient,
    account: AccountId,
    id: PartyId,
) -> StoreResult<Party> {
    query_one(
        client,
        &format!("SELECT {COLUMNS} FROM parties WHERE id = $1 AND account_id = $2"),
        &[&id.0, &account.0],
        from_row,
    )
    .await
}

pub async fn list(
    client: &impl GenericClient,
    account: AccountId,
    page: PageRequest,
) -> StoreResult<Paged<Party>> {
    let mut condition = Condition::default();
    let placeholder = condition.bind(account.0);
    condition
        .clauses
        .push(format!("account_id = {placeholder}"));
    paged(
        client,
        COLUMNS,
        "FROM parties",
        condition,
        "created_at DESC, id DESC",
        page,
        from_row,
    )
    .await
}

pub async fn update(client: &impl GenericClient, party: &Party) -> StoreResult<()> {
    let statement = client
        .prepare_cached(
            "UPDATE parties SET company_name = $3, updated_at = $4
             WHERE id = $1 AND account_id = $2",
        )
        .await
        .map_err(backend)?;
    let changed = client
        .execute(
            &statement,
            &[
                &party.id.0,
                &party.account_id.0,
                &party.company_name,
                &party.updated_at,
            ],
        )
        .await
        .map_err(|e| on_unique(e, "parties_by_name"))?;
    if changed == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}
