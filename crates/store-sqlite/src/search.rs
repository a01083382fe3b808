//! The search term index (`search_terms`) on SQLite: written with the entities it
//! indexes, read by one range scan.

use rusqlite::{Connection, params};
use tidemark_domain::AccountId;
use tidemark_store::{SearchEntry, SearchHit, SearchKind, StoreResult, rank_hits, terms_of};
use uuid::Uuid;

use crate::convert::{backend, parse_ts, to_ts};

/// An entity's terms. `INDEXED BY` because SQLite 3.50's planner, without statistics,
/// deletes from this `WITHOUT ROWID` table through its primary key's `account_id` prefix,
/// reading every term of the account (35 ms at 200,000 terms) instead of the few of the
/// entity: writes slowed down as an account grew. A plan that cannot use the index is an
/// error at prepare time rather than a silent scan.
const DELETE_TERMS: &str = "DELETE FROM search_terms INDEXED BY search_terms_entity \
     WHERE account_id = ?1 AND kind = ?2 AND entity_id = ?3";

/// Replaces the entity's terms with `entry`'s. The caller holds the transaction.
pub fn index(tx: &Connection, account: AccountId, entry: &SearchEntry) -> StoreResult<()> {
    let account = account.0.to_string();
    let id = entry.id.to_string();
    tx.prepare_cached(DELETE_TERMS)
        .and_then(|mut stmt| stmt.execute(params![account, entry.kind.code(), id]))
        .map_err(backend)?;
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO search_terms (account_id, term, kind, entity_id, at)
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
        )
        .map_err(backend)?;
    let at = to_ts(entry.at);
    for term in &entry.terms {
        insert
            .execute(params![account, term, entry.kind.code(), id, at])
            .map_err(backend)?;
    }
    Ok(())
}

/// The entities with a term in `key..prefix_end(key)`, from at most `scan` rows, ranked.
pub fn search(
    conn: &Connection,
    account: AccountId,
    key: &str,
    scan: u32,
) -> StoreResult<Vec<SearchHit>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT kind, entity_id, at FROM search_terms
             WHERE account_id = ?1 AND term >= ?2 AND term < ?3
             ORDER BY term LIMIT ?4",
        )
        .map_err(backend)?;
    let rows = stmt
        .query_map(
            params![
                account.0.to_string(),
                key,
                tidemark_store::prefix_end(key),
                scan
            ],
            |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            },
        )
        .map_err(backend)?;
    let mut hits = Vec::new();
    for row in rows {
        let (kind, id, at) = row.map_err(backend)?;
        hits.push(SearchHit {
            kind: SearchKind::from_code(kind)
                .ok_or_else(|| backend(format!("unknown search kind {kind}")))?,
            id: Uuid::parse_str(&id).map_err(backend)?,
            at: parse_ts(&at).map_err(backend)?,
        });
    }
    Ok(rank_hits(hits))
}

/// Writes the terms of every existing shipment, container and tracking request (migration
/// 25's code step).
pub fn index_existing(tx: &Connection) -> StoreResult<()> {
    for (kind, sql) in [
        (
            SearchKind::Shipment,
            "SELECT account_id, id, created_at, json_array(bill_of_lading_number,
                 normalized_number), ref_numbers FROM shipments",
        ),
        (
            SearchKind::Container,
            "SELECT account_id, id, created_at, json_array(number), ref_numbers FROM containers",
        ),
        (
            SearchKind::TrackingRequest,
            "SELECT account_id, id, created_at, json_array(request_number), ref_numbers
             FROM tracking_requests",
        ),
    ] {
        let rows: Vec<(String, String, String, String, String)> = tx
            .prepare(sql)
            .and_then(|mut stmt| {
                stmt.query_map([], |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        row.get(2)?,
                        row.get(3)?,
                        row.get(4)?,
                    ))
                })
                .and_then(Iterator::collect)
            })
            .map_err(backend)?;
        for (account, id, at, numbers, ref_numbers) in rows {
            let numbers: Vec<String> = serde_json::from_str(&numbers).map_err(backend)?;
            let ref_numbers: Vec<String> = serde_json::from_str(&ref_numbers).map_err(backend)?;
            let entry = SearchEntry {
                kind,
                id: Uuid::parse_str(&id).map_err(backend)?,
                at: parse_ts(&at).map_err(backend)?,
                terms: terms_of(numbers.iter().chain(&ref_numbers).map(String::as_str)),
            };
            index(
                tx,
                AccountId(Uuid::parse_str(&account).map_err(backend)?),
                &entry,
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, params};

    use super::DELETE_TERMS;

    #[test]
    fn replacing_an_entitys_terms_reads_only_that_entitys_rows() {
        let mut conn = Connection::open_in_memory().expect("in memory");
        crate::migrations::run(&mut conn).expect("migrations");
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {DELETE_TERMS}"))
            .and_then(|mut stmt| {
                stmt.query_map(params!["account", 0, "entity"], |row| row.get(3))
                    .and_then(Iterator::collect)
            })
            .expect("a plan");
        assert_eq!(
            plan,
            [
                "SEARCH search_terms USING INDEX search_terms_entity (account_id=? AND kind=? AND entity_id=?)"
            ]
        );
    }
}
