//! The search term index (`search_terms`) on PostgreSQL: written with the entities it
//! indexes, read by one range scan.

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use tidemark_domain::AccountId;
use tidemark_store::{
    SearchEntry, SearchHit, SearchKind, StoreResult, prefix_end, rank_hits, terms_of,
};
use tokio_postgres::types::Json;
use uuid::Uuid;

use crate::convert::backend;
use crate::unnest::Rows;

/// Replaces the entity's terms with `entry`'s. The caller holds the transaction.
pub async fn index(
    tx: &impl GenericClient,
    account: AccountId,
    entry: &SearchEntry,
) -> StoreResult<()> {
    let delete = tx
        .prepare_cached(
            "DELETE FROM search_terms WHERE account_id = $1 AND kind = $2 AND entity_id = $3",
        )
        .await
        .map_err(backend)?;
    tx.execute(&delete, &[&account.0, &entry.kind.code(), &entry.id])
        .await
        .map_err(backend)?;
    let insert = tx
        .prepare_cached(
            "INSERT INTO search_terms (account_id, term, kind, entity_id, at)
             SELECT $1, term, $2, $3, $4 FROM unnest($5::text[]) AS term
             ON CONFLICT DO NOTHING",
        )
        .await
        .map_err(backend)?;
    let terms: Vec<&str> = entry.terms.iter().map(String::as_str).collect();
    tx.execute(
        &insert,
        &[&account.0, &entry.kind.code(), &entry.id, &entry.at, &terms],
    )
    .await
    .map_err(backend)?;
    Ok(())
}

/// The terms of `entries` as `search_terms` rows, each tagged with its entry's batch item
/// (see [`Rows::items`]).
pub(crate) fn term_rows(entries: Vec<(i32, AccountId, SearchEntry)>) -> Rows<'static> {
    let (mut accounts, mut terms, mut kinds, mut ids, mut ats, mut items) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for (item, account, entry) in entries {
        for term in entry.terms {
            accounts.push(account.0);
            terms.push(term);
            kinds.push(entry.kind.code());
            ids.push(entry.id);
            ats.push(entry.at);
            items.push(item);
        }
    }
    Rows::new(terms.len())
        .column("account_id", "uuid", accounts)
        .column("term", "text", terms)
        .column("kind", "int2", kinds)
        .column("entity_id", "uuid", ids)
        .column("at", "timestamptz", ats)
        .items(items)
}

/// The entities with a term in `key..prefix_end(key)`, from at most `scan` rows, ranked.
pub async fn search(
    client: &impl GenericClient,
    account: AccountId,
    key: &str,
    scan: u32,
) -> StoreResult<Vec<SearchHit>> {
    let statement = client
        .prepare_cached(
            "SELECT kind, entity_id, at FROM search_terms
             WHERE account_id = $1 AND term >= $2 AND term < $3
             ORDER BY term LIMIT $4",
        )
        .await
        .map_err(backend)?;
    let rows = client
        .query(
            &statement,
            &[&account.0, &key, &prefix_end(key), &i64::from(scan)],
        )
        .await
        .map_err(backend)?;
    let mut hits = Vec::with_capacity(rows.len());
    for row in &rows {
        let kind: i16 = row.try_get(0).map_err(backend)?;
        hits.push(SearchHit {
            kind: SearchKind::from_code(i64::from(kind))
                .ok_or_else(|| backend(format!("unknown search kind {kind}")))?,
            id: row.try_get(1).map_err(backend)?,
            at: row.try_get(2).map_err(backend)?,
        });
    }
    Ok(rank_hits(hits))
}

/// Writes the terms of every existing shipment, container and tracking request (migration
/// 25's code step), in batches by id.
pub(crate) async fn index_existing(tx: &deadpool_postgres::Transaction<'_>) -> StoreResult<()> {
    const BATCH: i64 = 10_000;
    for (kind, table, numbers) in [
        (
            SearchKind::Shipment,
            "shipments",
            "jsonb_build_array(bill_of_lading_number, normalized_number)",
        ),
        (
            SearchKind::Container,
            "containers",
            "jsonb_build_array(number)",
        ),
        (
            SearchKind::TrackingRequest,
            "tracking_requests",
            "jsonb_build_array(request_number)",
        ),
    ] {
        let read = tx
            .prepare(&format!(
                "SELECT id, account_id, created_at, {numbers}, ref_numbers FROM {table}
                 WHERE id > $1 ORDER BY id LIMIT $2"
            ))
            .await
            .map_err(backend)?;
        let mut after = Uuid::nil();
        loop {
            let rows = tx.query(&read, &[&after, &BATCH]).await.map_err(backend)?;
            for row in &rows {
                let id: Uuid = row.try_get(0).map_err(backend)?;
                let account: Uuid = row.try_get(1).map_err(backend)?;
                let at: DateTime<Utc> = row.try_get(2).map_err(backend)?;
                let Json(numbers): Json<Vec<Option<String>>> = row.try_get(3).map_err(backend)?;
                let Json(ref_numbers): Json<Vec<String>> = row.try_get(4).map_err(backend)?;
                let entry = SearchEntry {
                    kind,
                    id,
                    at,
                    terms: terms_of(
                        numbers
                            .iter()
                            .flatten()
                            .chain(&ref_numbers)
                            .map(String::as_str),
                    ),
                };
                index(tx, AccountId(account), &entry).await?;
                after = id;
            }
            if rows.len() < BATCH as usize {
                break;
            }
        }
    }
    Ok(())
}
