//! EDI interchanges and their transactions (see `tidemark_store::EdiStore`).

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, Row, params};
use tidemark_domain::{AccountId, NewJob, TrackingRequest};
use tidemark_store::{
    EdiFinish, EdiMessage, EdiMessageFilter, EdiStore, EdiTransactionRecord, PageRequest, Paged,
    StoreError, StoreResult,
};
use uuid::Uuid;

use crate::SqliteStore;
use crate::convert::{backend, from_ts, on_unique, to_ts, uuid_from};

const COLUMNS: &str = "id, account_id, channel, source_name, syntax, sender, receiver, \
    control_number, status, transactions, rejected_transactions, statuses, events, drift, \
    unmatched, errors, duplicate_of, create_shipments, size_bytes, created_at, updated_at";

const TRANSACTION_COLUMNS: &str = "t.message_id, t.account_id, t.position, t.set_id, \
    t.control_number, t.numbers, t.scac, t.events, t.facts, t.segments, t.matched, t.created_at";

fn json_column(row: &Row<'_>, index: usize) -> rusqlite::Result<serde_json::Value> {
    let text: String = row.get(index)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(index, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn message_from_row(row: &Row<'_>) -> rusqlite::Result<EdiMessage> {
    let duplicate_of: Option<String> = row.get(16)?;
    Ok(EdiMessage {
        id: uuid_from(row, 0)?,
        account_id: AccountId(uuid_from(row, 1)?),
        channel: row.get(2)?,
        source_name: row.get(3)?,
        syntax: row.get(4)?,
        sender: row.get(5)?,
        receiver: row.get(6)?,
        control_number: row.get(7)?,
        status: row.get(8)?,
        transactions: row.get(9)?,
        rejected_transactions: row.get(10)?,
        statuses: row.get(11)?,
        events: row.get(12)?,
        drift: row.get(13)?,
        unmatched: row.get(14)?,
        errors: json_column(row, 15)?,
        duplicate_of: duplicate_of.and_then(|id| Uuid::parse_str(&id).ok()),
        create_shipments: row.get(17)?,
        size_bytes: row.get(18)?,
        created_at: from_ts(row, 19)?,
        updated_at: from_ts(row, 20)?,
    })
}

fn transaction_from_row(row: &Row<'_>) -> rusqlite::Result<EdiTransactionRecord> {
    let numbers = json_column(row, 5)?;
    Ok(EdiTransactionRecord {
        message_id: uuid_from(row, 0)?,
        account_id: AccountId(uuid_from(row, 1)?),
        position: row.get(2)?,
        set_id: row.get(3)?,
        control_number: row.get(4)?,
        numbers: serde_json::from_value(numbers).unwrap_or_default(),
        scac: row.get(6)?,
        events: json_column(row, 7)?,
        facts: json_column(row, 8)?,
        segments: row.get(9)?,
        matched: row.get(10)?,
        created_at: from_ts(row, 11)?,
    })
}

fn numbers_json(numbers: &[String]) -> StoreResult<String> {
    serde_json::to_string(numbers).map_err(backend)
}

#[async_trait]
impl EdiStore for SqliteStore {
    async fn insert_edi_message(
        &self,
        m: &EdiMessage,
        raw: &[u8],
        job: &NewJob,
    ) -> StoreResult<()> {
        {
            let mut conn = self.writer();
            let tx = conn.transaction().map_err(backend)?;
            tx.execute(
                &format!(
                    "INSERT INTO edi_messages ({COLUMNS}, raw)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                             ?16, ?17, ?18, ?19, ?20, ?21, ?22)"
                ),
                params![
                    m.id.to_string(),
                    m.account_id.0.to_string(),
                    m.channel,
                    m.source_name,
                    m.syntax,
                    m.sender,
                    m.receiver,
                    m.control_number,
                    m.status,
                    m.transactions,
                    m.rejected_transactions,
                    m.statuses,
                    m.events,
                    m.drift,
                    m.unmatched,
                    m.errors.to_string(),
                    m.duplicate_of.map(|id| id.to_string()),
                    m.create_shipments,
                    m.size_bytes,
                    to_ts(m.created_at),
                    to_ts(m.updated_at),
                    raw,
                ],
            )
            .map_err(|e| on_unique(e, "edi_messages_pkey"))?;
            crate::jobs::enqueue(&tx, job, m.created_at)?;
            tx.commit().map_err(backend)?;
        }
        self.wakeups.wake();
        Ok(())
    }

    async fn finish_edi_message(
        &self,
        m: &EdiMessage,
        interchange_key: Option<&str>,
        transactions: &[EdiTransactionRecord],
        event_ids: &[String],
        jobs: &[NewJob],
    ) -> StoreResult<EdiFinish> {
        let finish =
            self.finish_edi_message_in(m, interchange_key, transactions, event_ids, jobs)?;
        if finish == EdiFinish::Finished && !jobs.is_empty() {
            self.wakeups.wake();
        }
        Ok(finish)
    }

    async fn edi_message(&self, account: AccountId, id: Uuid) -> StoreResult<EdiMessage> {
        self.reader()
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM edi_messages WHERE id = ?1 AND account_id = ?2"
            ))
            .and_then(|mut stmt| {
                stmt.query_row(
                    params![id.to_string(), account.0.to_string()],
                    message_from_row,
                )
                .optional()
            })
            .map_err(backend)?
            .ok_or(StoreError::NotFound)
    }
    async fn edi_message_raw(&self, account: AccountId, id: Uuid) -> StoreResult<Vec<u8>> {
        self.reader()
            .prepare_cached("SELECT raw FROM edi_messages WHERE id = ?1 AND account_id = ?2")
            .and_then(|mut stmt| {
                stmt.query_row(params![id.to_string(), account.0.to_string()], |row| {
                    row.get(0)
                })
                .optional()
            })
            .map_err(backend)?
            .ok_or(StoreError::NotFound)
    }

    async fn list_edi_messages(
        &self,
        account: AccountId,
        filter: &EdiMessageFilter,
        page: PageRequest,
    ) -> StoreResult<Paged<EdiMessage>> {
        let condition = match filter.status.as_deref() {
            None => "1 = 1",
            Some("unmatched") => "unmatched > 0",
            Some(_) => "status = ?2",
        };
        let status = filter.status.clone().unwrap_or_default();
        let conn = self.reader();
        let total: i64 = conn
            .prepare_cached(&format!(
                "SELECT count(*) FROM edi_messages WHERE account_id = ?1 AND {condition}
                   AND ?2 = ?2"
            ))
            .and_then(|mut stmt| {
                stmt.query_row(params![account.0.to_string(), status], |row| row.get(0))
            })
            .map_err(backend)?;
        let items = conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM edi_messages WHERE account_id = ?1 AND {condition}
                   AND ?2 = ?2
                 ORDER BY created_at DESC, id DESC LIMIT ?3 OFFSET ?4"
            ))
            .and_then(|mut stmt| {
                stmt.query_map(
                    params![
                        account.0.to_string(),
                        status,
                        page.limit,
                        i64::try_from(page.offset).unwrap_or(i64::MAX)
                    ],
                    message_from_row,
                )?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(backend)?;
        Ok(Paged {
            items,
            total: u64::try_from(total).unwrap_or(0),
        })
    }

    async fn edi_transactions_naming(
        &self,
        account: AccountId,
        numbers: &[String],
        limit: u32,
    ) -> StoreResult<Vec<EdiTransactionRecord>> {
        if numbers.is_empty() {
            return Ok(Vec::new());
        }
        let numbers = numbers_json(numbers)?;
        // The limit is written in, not bound: SQLite plans with a bound LIMIT's value, so
        // binding one recompiles the cached statement on every call (a third of the call).
        self.reader()
            .prepare_cached(&format!(
                "SELECT {TRANSACTION_COLUMNS} FROM edi_transactions t
                 WHERE (t.message_id, t.position) IN (
                     SELECT message_id, position FROM edi_references
                     WHERE account_id = ?1 AND number IN (SELECT value FROM json_each(?2)))
                 ORDER BY t.created_at, t.message_id, t.position LIMIT {limit}"
            ))
            .and_then(|mut stmt| {
                stmt.query_map(
                    params![account.0.to_string(), numbers],
                    transaction_from_row,
                )?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(backend)
    }

    async fn edi_transactions_of(
        &self,
        account: AccountId,
        message: Uuid,
    ) -> StoreResult<Vec<EdiTransactionRecord>> {
        self.reader()
            .prepare_cached(&format!(
                "SELECT {TRANSACTION_COLUMNS} FROM edi_transactions t
                 WHERE t.account_id = ?1 AND t.message_id = ?2 ORDER BY t.position"
            ))
            .and_then(|mut stmt| {
                stmt.query_map(
                    params![account.0.to_string(), message.to_string()],
                    transaction_from_row,
                )?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(backend)
    }

    async fn mark_edi_matched(
        &self,
        account: AccountId,
        numbers: &[String],
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        if numbers.is_empty() {
            return Ok(());
        }
        let mut conn = self.writer();
        let tx = conn.transaction().map_err(backend)?;
        let account = account.0.to_string();
        // Each row flips once (the writer is one connection), so lowering `unmatched` by
        // the rows flipped keeps it exact without counting the interchange again.
        let mut flipped: BTreeMap<String, u32> = BTreeMap::new();
        {
            let mut flip = tx
                .prepare_cached(
                    "UPDATE edi_transactions SET matched = 1
                     WHERE matched = 0 AND (message_id, position) IN (
                         SELECT message_id, position FROM edi_references
                         WHERE account_id = ?1 AND number IN (SELECT value FROM json_each(?2)))
                     RETURNING message_id",
                )
                .map_err(backend)?;
            let mut rows = flip
                .query(params![account, numbers_json(numbers)?])
                .map_err(backend)?;
            while let Some(row) = rows.next().map_err(backend)? {
                *flipped.entry(row.get(0).map_err(backend)?).or_default() += 1;
            }
        }
        if !flipped.is_empty() {
            let mut lower = tx
                .prepare_cached(
                    "UPDATE edi_messages SET unmatched = max(unmatched - ?3, 0), updated_at = ?4
                     WHERE id = ?1 AND account_id = ?2",
                )
                .map_err(backend)?;
            let at = to_ts(at);
            for (message, count) in &flipped {
                lower
                    .execute(params![message, account, count, at])
                    .map_err(backend)?;
            }
        }
        tx.commit().map_err(backend)?;
        Ok(())
    }

    async fn tracking_requests_naming(
        &self,
        account: AccountId,
        numbers: &[String],
    ) -> StoreResult<Vec<(String, TrackingRequest)>> {
        if numbers.is_empty() {
            return Ok(Vec::new());
        }
        let columns = crate::tracking_requests::COLUMNS;
        let numbers = numbers_json(numbers)?;
        self.reader()
            .prepare_cached(&format!(
                "SELECT {columns}, found_by FROM (
                     SELECT *, upper(request_number) AS found_by FROM tracking_requests
                     WHERE account_id = ?1
                       AND status IN ('pending', 'awaiting_manifest', 'created')
                       AND upper(request_number) IN (SELECT value FROM json_each(?2))
                     UNION ALL
                     SELECT t.*, c.number AS found_by FROM containers c
                     JOIN tracking_requests t ON t.shipment_id = c.shipment_id
                     WHERE c.account_id = ?1
                       AND c.number IN (SELECT value FROM json_each(?2))
                       AND t.status IN ('pending', 'awaiting_manifest', 'created'))
                 ORDER BY id"
            ))
            .and_then(|mut stmt| {
                stmt.query_map(params![account.0.to_string(), numbers], |row| {
                    let found_by: String = row.get(18)?;
                    Ok((found_by, crate::tracking_requests::from_row(row)?))
                })?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(backend)
    }
}

impl SqliteStore {
    /// [`EdiStore::finish_edi_message`]'s transaction.
    fn finish_edi_message_in(
        &self,
        m: &EdiMessage,
        interchange_key: Option<&str>,
        transactions: &[EdiTransactionRecord],
        event_ids: &[String],
        jobs: &[NewJob],
    ) -> StoreResult<EdiFinish> {
        let mut conn = self.writer();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        let account = m.account_id.0.to_string();
        let status: Option<String> = tx
            .prepare_cached("SELECT status FROM edi_messages WHERE id = ?1 AND account_id = ?2")
            .and_then(|mut stmt| {
                stmt.query_row(params![m.id.to_string(), account], |row| row.get(0))
                    .optional()
            })
            .map_err(backend)?;
        match status.as_deref() {
            None => return Err(StoreError::NotFound),
            Some("received") => {}
            Some(_) => return Ok(EdiFinish::AlreadyFinished),
        }
        let earlier: Option<String> = match interchange_key {
            Some(key) => tx
                .prepare_cached(
                    "SELECT id FROM edi_messages WHERE account_id = ?1 AND interchange_key = ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![account, key], |row| row.get(0))
                        .optional()
                })
                .map_err(backend)?,
            None => None,
        };
        if let Some(earlier) = earlier {
            tx.execute(
                "UPDATE edi_messages SET status = 'duplicate', duplicate_of = ?3, syntax = ?4,
                        sender = ?5, receiver = ?6, control_number = ?7, updated_at = ?8
                 WHERE id = ?1 AND account_id = ?2",
                params![
                    m.id.to_string(),
                    account,
                    earlier,
                    m.syntax,
                    m.sender,
                    m.receiver,
                    m.control_number,
                    to_ts(m.updated_at),
                ],
            )
            .map_err(backend)?;
            tx.commit().map_err(backend)?;
            let earlier = Uuid::parse_str(&earlier).map_err(backend)?;
            return Ok(EdiFinish::Duplicate(earlier));
        }
        // One probe of the ids earlier interchanges recorded; a resent status is no new event.
        let ids = numbers_json(event_ids)?;
        let known: std::collections::HashSet<String> = if event_ids.is_empty() {
            std::collections::HashSet::new()
        } else {
            tx.prepare_cached(
                "SELECT event_id FROM edi_event_ids
                 WHERE account_id = ?1 AND event_id IN (SELECT value FROM json_each(?2))",
            )
            .and_then(|mut stmt| {
                stmt.query_map(params![account, ids], |row| row.get(0))?
                    .collect::<rusqlite::Result<_>>()
            })
            .map_err(backend)?
        };
        let resent = event_ids.iter().filter(|id| known.contains(*id)).count();
        let events = m
            .events
            .saturating_sub(u32::try_from(resent).unwrap_or(u32::MAX));
        tx.prepare_cached(
            "UPDATE edi_messages SET syntax = ?3, sender = ?4, receiver = ?5,
                    control_number = ?6, interchange_key = ?7, status = ?8, transactions = ?9,
                    rejected_transactions = ?10, statuses = ?11, events = ?12, drift = ?13,
                    unmatched = ?14, errors = ?15, updated_at = ?16
             WHERE id = ?1 AND account_id = ?2",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                m.id.to_string(),
                account,
                m.syntax,
                m.sender,
                m.receiver,
                m.control_number,
                interchange_key,
                m.status,
                m.transactions,
                m.rejected_transactions,
                m.statuses,
                events,
                m.drift,
                m.unmatched,
                m.errors.to_string(),
                to_ts(m.updated_at),
            ])
        })
        .map_err(|e| on_unique(e, "edi_messages_interchange"))?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO edi_transactions (message_id, account_id, position, set_id,
                         control_number, numbers, scac, events, facts, segments, matched,
                         created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                )
                .map_err(backend)?;
            let mut reference = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO edi_references (account_id, number, message_id, position)
                     VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(backend)?;
            let message = m.id.to_string();
            for t in transactions {
                insert
                    .execute(params![
                        message,
                        account,
                        t.position,
                        t.set_id,
                        t.control_number,
                        numbers_json(&t.numbers)?,
                        t.scac,
                        t.events.to_string(),
                        t.facts.to_string(),
                        t.segments,
                        t.matched,
                        to_ts(t.created_at),
                    ])
                    .map_err(backend)?;
                for number in &t.numbers {
                    reference
                        .execute(params![account, number, message, t.position])
                        .map_err(backend)?;
                }
            }
        }
        if !event_ids.is_empty() {
            tx.prepare_cached(
                "INSERT OR IGNORE INTO edi_event_ids (account_id, event_id)
                 SELECT ?1, value FROM json_each(?2)",
            )
            .and_then(|mut stmt| stmt.execute(params![account, ids]))
            .map_err(backend)?;
        }
        for job in jobs {
            crate::jobs::enqueue(&tx, job, m.updated_at)?;
        }
        tx.commit().map_err(backend)?;
        Ok(EdiFinish::Finished)
    }
}
