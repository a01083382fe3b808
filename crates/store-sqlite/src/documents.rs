//! Shipment documents: their metadata, links and search (the bytes live in object storage).

use std::collections::{BTreeSet, HashMap};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params, params_from_iter};
use tidemark_domain::{AccountId, ApiKeyId, ContainerId, DomainEvent, NewJob, ShipmentId};
use tidemark_store::{
    DOCUMENT_BUCKET_SIZE, DirectUpload, DocumentClassification, DocumentFilter, DocumentSort,
    DocumentSortField, DocumentStore, EmailSubmission, LinkTargets, MailboxCursor, PageRequest,
    Paged, Representation, StoreError, StoreResult, StoredDocument, WordSearch, document_words,
    prefix_end,
};
use uuid::Uuid;

use crate::SqliteStore;
use crate::convert::{backend, from_optional_ts, from_ts, on_unique, to_ts, uuid_from};

const COLUMNS: &str = "d.id, d.account_id, d.uploaded_by, d.source, d.name, d.file_name, \
    d.content_type, d.size_bytes, d.sha256, d.storage_key, d.document_type, \
    d.document_type_manual, d.classification_notes, d.representation_id, \
    d.representation_version, d.representation, d.representation_at, d.created_at, d.updated_at, \
    d.email_submission_id";

fn opt_uuid(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<Uuid>> {
    let text: Option<String> = row.get(index)?;
    text.map(|text| {
        Uuid::parse_str(&text).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(
                index,
                rusqlite::types::Type::Text,
                Box::new(e),
            )
        })
    })
    .transpose()
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<StoredDocument> {
    let representation = match opt_uuid(row, 13)? {
        Some(id) => {
            let payload: Option<String> = row.get(15)?;
            Some(Representation {
                id,
                schema_version: row.get::<_, Option<String>>(14)?.unwrap_or_default(),
                payload: payload
                    .and_then(|text| serde_json::from_str(&text).ok())
                    .unwrap_or(serde_json::Value::Null),
                created_at: from_optional_ts(row, 16)?.unwrap_or(from_ts(row, 18)?),
            })
        }
        None => None,
    };
    let size: i64 = row.get(7)?;
    Ok(StoredDocument {
        id: uuid_from(row, 0)?,
        account_id: AccountId(uuid_from(row, 1)?),
        uploaded_by: opt_uuid(row, 2)?.map(ApiKeyId),
        source: row.get(3)?,
        name: row.get(4)?,
        file_name: row.get(5)?,
        content_type: row.get(6)?,
        size_bytes: u64::try_from(size).unwrap_or(0),
        sha256: row.get(8)?,
        storage_key: row.get(9)?,
        document_type: row.get(10)?,
        document_type_manual: row.get(11)?,
        classification_notes: row.get(12)?,
        representation,
        shipment_ids: Vec::new(),
        container_ids: Vec::new(),
        email_submission_id: opt_uuid(row, 19)?,
        created_at: from_ts(row, 17)?,
        updated_at: from_ts(row, 18)?,
    })
}

/// Fills in the links of `documents` with two queries.
fn load_links(conn: &Connection, documents: &mut [StoredDocument]) -> StoreResult<()> {
    if documents.is_empty() {
        return Ok(());
    }
    let ids: Vec<Value> = documents
        .iter()
        .map(|d| Value::Text(d.id.to_string()))
        .collect();
    let marks = vec!["?"; ids.len()].join(", ");
    let mut shipments: HashMap<Uuid, Vec<ShipmentId>> = HashMap::new();
    let mut containers: HashMap<Uuid, Vec<ContainerId>> = HashMap::new();
    for (table, column, is_shipment) in [
        ("document_shipments", "shipment_id", true),
        ("document_containers", "container_id", false),
    ] {
        let mut stmt = conn
            .prepare(&format!(
                "SELECT document_id, {column} FROM {table} WHERE document_id IN ({marks})
                 ORDER BY document_id, {column}"
            ))
            .map_err(backend)?;
        let pairs: Vec<(Uuid, Uuid)> = stmt
            .query_map(params_from_iter(ids.iter()), |row| {
                Ok((uuid_from(row, 0)?, uuid_from(row, 1)?))
            })
            .and_then(Iterator::collect)
            .map_err(backend)?;
        for (document, target) in pairs {
            if is_shipment {
                shipments
                    .entry(document)
                    .or_default()
                    .push(ShipmentId(target));
            } else {
                containers
                    .entry(document)
                    .or_default()
                    .push(ContainerId(target));
            }
        }
    }
    for document in documents {
        document.shipment_ids = shipments.remove(&document.id).unwrap_or_default();
        document.container_ids = containers.remove(&document.id).unwrap_or_default();
    }
    Ok(())
}

/// Adds links, checking each target is the account's; an unknown one is `NotFound`.
fn add_links(
    tx: &Transaction<'_>,
    account: AccountId,
    document: Uuid,
    shipments: &[ShipmentId],
    containers: &[ContainerId],
) -> StoreResult<()> {
    let account = account.0.to_string();
    let document = document.to_string();
    let mut link_shipment = tx
        .prepare_cached(
            "INSERT INTO document_shipments (document_id, shipment_id)
             SELECT ?1, id FROM shipments WHERE id = ?2 AND account_id = ?3
             ON CONFLICT DO NOTHING",
        )
        .map_err(backend)?;
    for shipment in shipments {
        let found: bool = tx
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM shipments WHERE id = ?1 AND account_id = ?2)",
                params![shipment.0.to_string(), account],
                |row| row.get(0),
            )
            .map_err(backend)?;
        if !found {
            return Err(StoreError::NotFound);
        }
        link_shipment
            .execute(params![document, shipment.0.to_string(), account])
            .map_err(backend)?;
    }
    let mut link_container = tx
        .prepare_cached(
            "INSERT INTO document_containers (document_id, container_id)
             SELECT ?1, id FROM containers WHERE id = ?2 AND account_id = ?3
             ON CONFLICT DO NOTHING",
        )
        .map_err(backend)?;
    for container in containers {
        let found: bool = tx
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM containers WHERE id = ?1 AND account_id = ?2)",
                params![container.0.to_string(), account],
                |row| row.get(0),
            )
            .map_err(backend)?;
        if !found {
            return Err(StoreError::NotFound);
        }
        link_container
            .execute(params![document, container.0.to_string(), account])
            .map_err(backend)?;
    }
    Ok(())
}

/// Counts an upload: one more live document, and the next upload position (`seq`), which
/// the write lock hands out in upload order.
fn count_upload(tx: &Transaction<'_>, account: AccountId) -> StoreResult<i64> {
    tx.prepare_cached(
        "INSERT INTO document_counts (account_id, live, next_seq) VALUES (?1, 1, 1)
         ON CONFLICT (account_id) DO UPDATE SET live = live + 1, next_seq = next_seq + 1
         RETURNING next_seq",
    )
    .and_then(|mut stmt| stmt.query_row([account.0.to_string()], |row| row.get(0)))
    .map_err(backend)
}

/// Moves a document in or out of the live counts: the account's and its bucket's.
fn change_counts(
    tx: &Transaction<'_>,
    account: AccountId,
    seq: i64,
    delta: i64,
) -> StoreResult<()> {
    if delta < 0 {
        tx.prepare_cached("UPDATE document_counts SET live = live + ?2 WHERE account_id = ?1")
            .and_then(|mut stmt| stmt.execute(params![account.0.to_string(), delta]))
            .map_err(backend)?;
    }
    tx.prepare_cached(
        "INSERT INTO document_buckets (account_id, bucket, live) VALUES (?1, ?2, ?3)
         ON CONFLICT (account_id, bucket) DO UPDATE SET live = live + excluded.live",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            account.0.to_string(),
            seq.div_euclid(DOCUMENT_BUCKET_SIZE),
            delta
        ])
    })
    .map_err(backend)?;
    Ok(())
}

/// Adds (`delta` 1) or removes (`delta` -1) a live document's `words` in the word index,
/// and counts them; a word no live document has any more loses its count row.
fn change_words<'a>(
    tx: &Transaction<'_>,
    account: AccountId,
    seq: i64,
    words: impl IntoIterator<Item = &'a String>,
    delta: i64,
) -> StoreResult<()> {
    let account = account.0.to_string();
    let mut entry = tx
        .prepare_cached(if delta > 0 {
            "INSERT INTO document_words (account_id, word, seq) VALUES (?1, ?2, ?3)"
        } else {
            "DELETE FROM document_words WHERE account_id = ?1 AND word = ?2 AND seq = ?3"
        })
        .map_err(backend)?;
    let mut count = tx
        .prepare_cached(
            "INSERT INTO document_word_counts (account_id, word, live) VALUES (?1, ?2, ?3)
             ON CONFLICT (account_id, word) DO UPDATE SET live = live + excluded.live
             RETURNING live",
        )
        .map_err(backend)?;
    let mut forget = tx
        .prepare_cached("DELETE FROM document_word_counts WHERE account_id = ?1 AND word = ?2")
        .map_err(backend)?;
    for word in words {
        entry
            .execute(params![account, word, seq])
            .map_err(backend)?;
        let live: i64 = count
            .query_row(params![account, word, delta], |row| row.get(0))
            .map_err(backend)?;
        if live <= 0 {
            forget.execute(params![account, word]).map_err(backend)?;
        }
    }
    Ok(())
}

/// Moves a live document's count from type `from` to type `to` (each the manual type when
/// set, else the classified one; `None` counts nowhere).
fn change_type_count(
    tx: &Transaction<'_>,
    account: AccountId,
    from: Option<&str>,
    to: Option<&str>,
) -> StoreResult<()> {
    if from == to {
        return Ok(());
    }
    let mut count = tx
        .prepare_cached(
            "INSERT INTO document_type_counts (account_id, document_type, live) VALUES (?1, ?2, ?3)
             ON CONFLICT (account_id, document_type) DO UPDATE SET live = live + excluded.live",
        )
        .map_err(backend)?;
    for (document_type, delta) in [(from, -1), (to, 1)] {
        if let Some(document_type) = document_type {
            count
                .execute(params![account.0.to_string(), document_type, delta])
                .map_err(backend)?;
        }
    }
    Ok(())
}

/// Writes the word index of the documents there before it existed (migration 16).
pub(crate) fn index_existing_words(tx: &Transaction<'_>) -> StoreResult<()> {
    let mut read = tx
        .prepare("SELECT account_id, seq, file_name, name FROM documents WHERE deleted_at IS NULL")
        .map_err(backend)?;
    let mut entry = tx
        .prepare("INSERT INTO document_words (account_id, word, seq) VALUES (?1, ?2, ?3)")
        .map_err(backend)?;
    let mut rows = read.query([]).map_err(backend)?;
    while let Some(row) = rows.next().map_err(backend)? {
        let account: String = row.get(0).map_err(backend)?;
        let seq: i64 = row.get(1).map_err(backend)?;
        let file_name: String = row.get(2).map_err(backend)?;
        let name: String = row.get(3).map_err(backend)?;
        for word in document_words(&file_name, &name) {
            entry
                .execute(params![account, word, seq])
                .map_err(backend)?;
        }
    }
    tx.execute(
        "INSERT INTO document_word_counts (account_id, word, live)
         SELECT account_id, word, count(*) FROM document_words GROUP BY account_id, word",
        [],
    )
    .map_err(backend)?;
    Ok(())
}

fn insert(
    conn: &mut Connection,
    d: &StoredDocument,
    from_upload: Option<Uuid>,
    job: Option<&NewJob>,
) -> StoreResult<()> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let seq = count_upload(&tx, d.account_id)?;
    tx.prepare_cached(
        "INSERT INTO documents (id, account_id, uploaded_by, source, name, file_name,
            content_type, size_bytes, sha256, storage_key, document_type, document_type_manual,
            classification_notes, created_at, updated_at, seq, email_submission_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    )
    .and_then(|mut stmt| {
        stmt.execute(params![
            d.id.to_string(),
            d.account_id.0.to_string(),
            d.uploaded_by.map(|k| k.0.to_string()),
            d.source,
            d.name,
            d.file_name,
            d.content_type,
            i64::try_from(d.size_bytes).unwrap_or(i64::MAX),
            d.sha256,
            d.storage_key,
            d.document_type,
            d.document_type_manual,
            d.classification_notes,
            to_ts(d.created_at),
            to_ts(d.updated_at),
            seq,
            d.email_submission_id.map(|id| id.to_string()),
        ])
    })
    .map_err(|e| on_unique(e, "documents_content"))?;
    add_links(&tx, d.account_id, d.id, &d.shipment_ids, &d.container_ids)?;
    change_counts(&tx, d.account_id, seq, 1)?;
    change_words(
        &tx,
        d.account_id,
        seq,
        &document_words(&d.file_name, &d.name),
        1,
    )?;
    let document_type = d.document_type_manual.as_ref().or(d.document_type.as_ref());
    change_type_count(&tx, d.account_id, None, document_type.map(String::as_str))?;
    if let Some(upload) = from_upload {
        let claimed = tx
            .execute(
                "UPDATE direct_uploads SET document_id = ?1
                 WHERE id = ?2 AND account_id = ?3 AND document_id IS NULL
                   AND discarded_at IS NULL",
                params![
                    d.id.to_string(),
                    upload.to_string(),
                    d.account_id.0.to_string()
                ],
            )
            .map_err(backend)?;
        if claimed == 0 {
            return Err(unclaimable_upload(&tx, upload));
        }
    }
    if let Some(job) = job {
        crate::jobs::enqueue(&tx, job, d.created_at)?;
    }
    tx.commit().map_err(backend)
}

/// Why a direct upload could not be claimed: it made a document already, or it was
/// discarded as expired (or is gone).
fn unclaimable_upload(tx: &Transaction<'_>, upload: Uuid) -> StoreError {
    let used = tx
        .query_row(
            "SELECT document_id IS NOT NULL FROM direct_uploads
             WHERE id = ?1 AND discarded_at IS NULL",
            [upload.to_string()],
            |row| row.get::<_, bool>(0),
        )
        .optional();
    match used {
        Ok(Some(true)) => StoreError::Conflict {
            constraint: "direct_upload_used",
        },
        Ok(_) => StoreError::Conflict {
            constraint: "direct_upload_expired",
        },
        Err(error) => backend(error),
    }
}

fn get(conn: &Connection, account: AccountId, id: Uuid) -> StoreResult<StoredDocument> {
    let document = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM documents d
             WHERE d.id = ?1 AND d.account_id = ?2 AND d.deleted_at IS NULL"
        ))
        .and_then(|mut stmt| {
            stmt.query_row([id.to_string(), account.0.to_string()], from_row)
                .optional()
        })
        .map_err(backend)?
        .ok_or(StoreError::NotFound)?;
    let mut documents = [document];
    load_links(conn, &mut documents)?;
    let [document] = documents;
    Ok(document)
}

/// Resolves a file name search (`terms` not empty) against the account's word counts.
fn resolve_words(conn: &Connection, account: &Value, terms: &[String]) -> StoreResult<WordSearch> {
    let Some((last, whole)) = terms.split_last() else {
        return Ok(WordSearch::Nothing);
    };
    let mut count = conn
        .prepare_cached("SELECT live FROM document_word_counts WHERE account_id = ?1 AND word = ?2")
        .map_err(backend)?;
    let whole = whole
        .iter()
        .map(|term| {
            let live: Option<i64> = count
                .query_row(params![account, term], |row| row.get(0))
                .optional()
                .map_err(backend)?;
            Ok((term.clone(), live))
        })
        .collect::<StoreResult<Vec<_>>>()?;
    let started: Vec<(String, i64)> = conn
        .prepare_cached(
            "SELECT word, live FROM document_word_counts
             WHERE account_id = ?1 AND word >= ?2 AND word < ?3 ORDER BY word LIMIT 2",
        )
        .and_then(|mut stmt| {
            stmt.query_map(params![account, last, prefix_end(last)], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .and_then(Iterator::collect)
        })
        .map_err(backend)?;
    Ok(WordSearch::resolve(whole, last, &started))
}

/// Whether the words (rarest first) have entries of comparable number, so that reading
/// them all once in upload order ([`count_having_all`]) beats looking each other word up
/// for every entry of the rarest (a B-tree descent each).
fn comparable(words: &[(String, i64)]) -> bool {
    match words {
        [(_, rarest), others @ ..] if !others.is_empty() => {
            let others: i64 = others.iter().map(|(_, live)| live).sum();
            rarest.saturating_mul(16) >= others
        }
        _ => false,
    }
}

/// Counts the account's live documents having all of `words` by reading each word's
/// entries once, all in upload order, and counting the positions every word reaches (a
/// merge of sorted lists). SQLite has no merge join; per-entry lookups cost ten times more
/// for two common words.
fn count_having_all(
    conn: &Connection,
    account: &Value,
    words: &[(String, i64)],
) -> StoreResult<i64> {
    let mut statements = words
        .iter()
        .map(|_| {
            conn.prepare(
                "SELECT seq FROM document_words WHERE account_id = ?1 AND word = ?2
                 ORDER BY seq",
            )
        })
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(backend)?;
    let mut cursors = statements
        .iter_mut()
        .zip(words)
        .map(|(statement, (word, _))| {
            statement.query_map(params![account, word], |row| row.get::<_, i64>(0))
        })
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(backend)?;
    let mut count = 0;
    let mut heads = Vec::with_capacity(cursors.len());
    for cursor in &mut cursors {
        match cursor.next().transpose().map_err(backend)? {
            Some(seq) => heads.push(seq),
            None => return Ok(0),
        }
    }
    loop {
        let highest = heads.iter().copied().max().unwrap_or_default();
        // After a match every list moves past it; otherwise those behind catch up.
        let matched = heads.iter().all(|&seq| seq == highest);
        count += i64::from(matched);
        for (head, cursor) in heads.iter_mut().zip(&mut cursors) {
            while *head < highest || matched && *head == highest {
                match cursor.next().transpose().map_err(backend)? {
                    Some(seq) => *head = seq,
                    None => return Ok(count),
                }
            }
        }
    }
}

/// The upload positions (`seq`, column `seq`) of the account's live documents that a
/// resolved search matches, as a query and its values; `None` when nothing can match.
fn matches(account: &Value, search: &WordSearch) -> Option<(String, Vec<Value>)> {
    let having_all = |words: &[(String, i64)]| {
        let ((first, _), others) = words.split_first()?;
        // The rarest word's entries drive; each other word is one primary key lookup.
        let mut sql = "SELECT w.seq AS seq FROM document_words w
            WHERE w.account_id = ? AND w.word = ?"
            .to_owned();
        let mut values = vec![account.clone(), Value::Text(first.clone())];
        for (word, _) in others {
            sql.push_str(
                " AND EXISTS (SELECT 1 FROM document_words o
                    WHERE o.account_id = w.account_id AND o.word = ? AND o.seq = w.seq)",
            );
            values.push(Value::Text(word.clone()));
        }
        Some((sql, values))
    };
    match search {
        WordSearch::Nothing => None,
        WordSearch::Words(words) => having_all(words),
        WordSearch::Prefix { words, from, to } => {
            let range = [
                account.clone(),
                Value::Text(from.clone()),
                Value::Text(to.clone()),
            ];
            let started = "SELECT seq FROM document_words
                WHERE account_id = ? AND word >= ? AND word < ?";
            Some(match having_all(words) {
                Some((sql, mut values)) => {
                    values.extend(range);
                    (format!("{sql} INTERSECT {started}"), values)
                }
                None => (
                    started.replacen("SELECT seq", "SELECT DISTINCT seq", 1),
                    range.into(),
                ),
            })
        }
    }
}

/// The `WHERE` clauses of a list over `documents d`, and their values; `matched` is what a
/// file name search matched.
fn conditions(
    account: AccountId,
    filter: &DocumentFilter,
    matched: Option<&(String, Vec<Value>)>,
) -> (String, Vec<Value>) {
    let account = Value::Text(account.0.to_string());
    let mut clauses = vec![
        "d.account_id = ?".to_owned(),
        "d.deleted_at IS NULL".to_owned(),
    ];
    let mut values = vec![account.clone()];
    if let Some((sql, matched)) = matched {
        clauses.push(format!("d.seq IN ({sql})"));
        values.extend(matched.iter().cloned());
    }
    if let Some(reference) = &filter.reference {
        let r = Value::Text(reference.clone());
        clauses.push(
            "d.id IN (
                SELECT ds.document_id FROM document_shipments ds JOIN shipments s
                    ON s.id = ds.shipment_id
                WHERE s.account_id = ? AND (s.normalized_number = ?
                    OR upper(s.bill_of_lading_number) = ?
                    OR EXISTS (SELECT 1 FROM json_each(s.ref_numbers) j
                               WHERE upper(j.value) = ?))
                UNION
                SELECT dc.document_id FROM document_containers dc
                    JOIN containers c ON c.id = dc.container_id
                    JOIN shipments s ON s.id = c.shipment_id
                WHERE s.account_id = ? AND (s.normalized_number = ?
                    OR upper(s.bill_of_lading_number) = ?
                    OR EXISTS (SELECT 1 FROM json_each(s.ref_numbers) j
                               WHERE upper(j.value) = ?))
                UNION
                SELECT ds.document_id FROM document_shipments ds JOIN containers c
                    ON c.shipment_id = ds.shipment_id
                WHERE c.account_id = ? AND c.number = ?
                UNION
                SELECT dc.document_id FROM document_containers dc JOIN containers c
                    ON c.id = dc.container_id
                WHERE c.account_id = ? AND c.number = ?)"
                .to_owned(),
        );
        values.extend([
            account.clone(),
            r.clone(),
            r.clone(),
            r.clone(),
            account.clone(),
            r.clone(),
            r.clone(),
            r.clone(),
            account.clone(),
            r.clone(),
            account,
            r,
        ]);
    }
    if !filter.document_types.is_empty() {
        let marks = vec!["?"; filter.document_types.len()].join(", ");
        clauses.push(format!(
            "coalesce(d.document_type_manual, d.document_type) IN ({marks})"
        ));
        values.extend(filter.document_types.iter().map(|t| Value::Text(t.clone())));
    }
    (clauses.join(" AND "), values)
}

fn order_by(sort: DocumentSort) -> String {
    let direction = if sort.descending { "DESC" } else { "ASC" };
    match sort.field {
        DocumentSortField::CreatedAt => format!("d.seq {direction}"),
        DocumentSortField::DocumentType => format!(
            "coalesce(d.document_type_manual, d.document_type) {direction}, d.seq {direction}"
        ),
        DocumentSortField::AddedBy => format!("d.uploaded_by {direction}, d.seq {direction}"),
    }
}

/// A page of the account's live documents in upload order, read through the counted index:
/// the buckets, newest first when `descending`, are summed until the one holding the page's
/// first document, so a far page skips fewer than `DOCUMENT_BUCKET_SIZE` index entries
/// instead of all before it. One read transaction, so buckets and documents agree.
fn counted_page(
    conn: &Connection,
    account: AccountId,
    descending: bool,
    page: PageRequest,
    order: &str,
) -> StoreResult<Vec<StoredDocument>> {
    let tx = conn.unchecked_transaction().map_err(backend)?;
    let direction = if descending { "DESC" } else { "ASC" };
    let mut skip = i64::try_from(page.offset).unwrap_or(i64::MAX);
    let mut start = None;
    {
        let mut buckets = tx
            .prepare_cached(&format!(
                "SELECT bucket, live FROM document_buckets WHERE account_id = ?1
                 ORDER BY bucket {direction}"
            ))
            .map_err(backend)?;
        let mut rows = buckets.query([account.0.to_string()]).map_err(backend)?;
        while let Some(row) = rows.next().map_err(backend)? {
            let (bucket, live): (i64, i64) =
                (row.get(0).map_err(backend)?, row.get(1).map_err(backend)?);
            if skip < live {
                start = Some(bucket);
                break;
            }
            skip -= live;
        }
    }
    let Some(bucket) = start else {
        return Ok(Vec::new());
    };
    let (bound, from_seq) = if descending {
        ("d.seq < ?2", (bucket + 1) * DOCUMENT_BUCKET_SIZE)
    } else {
        ("d.seq >= ?2", bucket * DOCUMENT_BUCKET_SIZE)
    };
    let documents = tx
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM (SELECT d.rowid AS page_rowid FROM documents d
                WHERE d.account_id = ?1 AND d.deleted_at IS NULL AND {bound}
                ORDER BY d.seq {direction} LIMIT ?3 OFFSET ?4) p
             JOIN documents d ON d.rowid = p.page_rowid
             ORDER BY {order}"
        ))
        .and_then(|mut stmt| {
            stmt.query_map(
                params![account.0.to_string(), from_seq, i64::from(page.limit), skip],
                from_row,
            )
            .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
        })
        .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(documents)
}

fn list(
    conn: &Connection,
    account: AccountId,
    filter: &DocumentFilter,
    sort: DocumentSort,
    page: PageRequest,
) -> StoreResult<Paged<StoredDocument>> {
    let account_value = Value::Text(account.0.to_string());
    let search = if filter.filename_terms.is_empty() {
        None
    } else {
        let search = resolve_words(conn, &account_value, &filter.filename_terms)?;
        let Some(matched) = matches(&account_value, &search) else {
            return Ok(Paged {
                items: Vec::new(),
                total: 0,
            });
        };
        Some((search, matched))
    };
    let matched = search.as_ref().map(|(_, matched)| matched);
    // The word index holds only the account's live documents, so a search alone is
    // counted and paged without reading the documents table.
    let words_only = filter.reference.is_none() && filter.document_types.is_empty();
    let (clauses, mut values) = conditions(account, filter, matched);
    let total: i64 = match &search {
        None if *filter == DocumentFilter::default() => conn
            .prepare_cached("SELECT live FROM document_counts WHERE account_id = ?1")
            .and_then(|mut stmt| {
                stmt.query_row([&account_value], |row| row.get(0))
                    .optional()
            })
            .map_err(backend)?
            .unwrap_or(0),
        Some((WordSearch::Words(words), _)) if words_only && words.len() == 1 => words[0].1,
        Some((WordSearch::Words(words), _)) if words_only && comparable(words) => {
            count_having_all(conn, &account_value, words)?
        }
        None if filter.reference.is_none() => {
            // Types only: a document counts under one type, so the counts add up.
            let types: BTreeSet<&String> = filter.document_types.iter().collect();
            let marks = vec!["?"; types.len()].join(", ");
            conn.prepare_cached(&format!(
                "SELECT coalesce(sum(live), 0) FROM document_type_counts
                 WHERE account_id = ? AND document_type IN ({marks})"
            ))
            .and_then(|mut stmt| {
                let values = std::iter::once(account_value.clone())
                    .chain(types.iter().map(|t| Value::Text((*t).clone())));
                stmt.query_row(params_from_iter(values), |row| row.get(0))
            })
            .map_err(backend)?
        }
        Some((_, (sql, matched))) if words_only => conn
            .prepare_cached(&format!("SELECT count(*) FROM ({sql})"))
            .and_then(|mut stmt| stmt.query_row(params_from_iter(matched.iter()), |row| row.get(0)))
            .map_err(backend)?,
        _ => conn
            .prepare_cached(&format!("SELECT count(*) FROM documents d WHERE {clauses}"))
            .and_then(|mut stmt| stmt.query_row(params_from_iter(values.iter()), |row| row.get(0)))
            .map_err(backend)?,
    };
    let order = order_by(sort);
    let limit = Value::Integer(i64::from(page.limit));
    let offset = Value::Integer(i64::try_from(page.offset).unwrap_or(i64::MAX));
    // Within the first bucket's worth, plain OFFSET skips as little as the buckets would.
    let mut documents = if *filter == DocumentFilter::default()
        && sort.field == DocumentSortField::CreatedAt
        && page.offset >= DOCUMENT_BUCKET_SIZE.unsigned_abs()
    {
        counted_page(conn, account, sort.descending, page, &order)?
    } else if let Some((sql, matched)) =
        matched.filter(|_| words_only && sort.field == DocumentSortField::CreatedAt)
    {
        // In upload order the matches page off the word index (a one-word search walks its
        // word's entries), and only the page's rows are read. CROSS JOIN keeps the page
        // outside: walking the documents in order instead, SQLite would rerun the page's
        // query for each of them.
        let direction = if sort.descending { "DESC" } else { "ASC" };
        let values = matched
            .iter()
            .cloned()
            .chain([limit, offset, account_value]);
        conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM (SELECT seq FROM ({sql}) ORDER BY seq {direction}
                LIMIT ? OFFSET ?) p
             CROSS JOIN documents d
                ON d.account_id = ? AND d.seq = p.seq AND d.deleted_at IS NULL
             ORDER BY {order}"
        ))
        .and_then(|mut stmt| {
            stmt.query_map(params_from_iter(values), from_row)
                .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
        })
        .map_err(backend)?
    } else {
        values.extend([limit, offset]);
        // Deferred join: the page's rowids come from an index alone, then only those rows
        // are read, so skipping to a far page does not read the skipped rows.
        conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM (SELECT d.rowid AS page_rowid FROM documents d
                WHERE {clauses} ORDER BY {order} LIMIT ? OFFSET ?) p
             JOIN documents d ON d.rowid = p.page_rowid
             ORDER BY {order}"
        ))
        .and_then(|mut stmt| {
            stmt.query_map(params_from_iter(values.iter()), from_row)
                .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
        })
        .map_err(backend)?
    };
    load_links(conn, &mut documents)?;
    Ok(Paged {
        items: documents,
        total: u64::try_from(total).unwrap_or(0),
    })
}

/// What a rename or retype changes from: seq, file name, name, classified and counted type.
type Before = (i64, String, String, Option<String>, Option<String>);

fn update(conn: &mut Connection, d: &StoredDocument) -> StoreResult<()> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let (seq, file_name, old_name, classified, old_type): Before = tx
        .query_row(
            "SELECT seq, file_name, name, document_type,
                coalesce(document_type_manual, document_type)
             FROM documents WHERE id = ?1 AND account_id = ?2 AND deleted_at IS NULL",
            params![d.id.to_string(), d.account_id.0.to_string()],
            |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            },
        )
        .optional()
        .map_err(backend)?
        .ok_or(StoreError::NotFound)?;
    tx.execute(
        "UPDATE documents SET name = ?3, document_type_manual = ?4, updated_at = ?5
         WHERE id = ?1 AND account_id = ?2",
        params![
            d.id.to_string(),
            d.account_id.0.to_string(),
            d.name,
            d.document_type_manual,
            to_ts(d.updated_at),
        ],
    )
    .map_err(backend)?;
    let (before, after) = (
        document_words(&file_name, &old_name),
        document_words(&file_name, &d.name),
    );
    change_words(&tx, d.account_id, seq, before.difference(&after), -1)?;
    change_words(&tx, d.account_id, seq, after.difference(&before), 1)?;
    let new_type = d.document_type_manual.as_ref().or(classified.as_ref());
    change_type_count(
        &tx,
        d.account_id,
        old_type.as_deref(),
        new_type.map(String::as_str),
    )?;
    for table in ["document_shipments", "document_containers"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE document_id = ?1"),
            [d.id.to_string()],
        )
        .map_err(backend)?;
    }
    add_links(&tx, d.account_id, d.id, &d.shipment_ids, &d.container_ids)?;
    tx.commit().map_err(backend)
}

fn delete(
    conn: &mut Connection,
    account: AccountId,
    id: Uuid,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let (seq, file_name, name, document_type): (i64, String, String, Option<String>) = tx
        .query_row(
            "UPDATE documents SET deleted_at = ?3, updated_at = ?3
             WHERE id = ?1 AND account_id = ?2 AND deleted_at IS NULL
             RETURNING seq, file_name, name, coalesce(document_type_manual, document_type)",
            params![id.to_string(), account.0.to_string(), to_ts(at)],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
        .optional()
        .map_err(backend)?
        .ok_or(StoreError::NotFound)?;
    change_counts(&tx, account, seq, -1)?;
    change_words(&tx, account, seq, &document_words(&file_name, &name), -1)?;
    change_type_count(&tx, account, document_type.as_deref(), None)?;
    tx.commit().map_err(backend)
}

fn insert_events(tx: &Transaction<'_>, events: &[DomainEvent]) -> StoreResult<()> {
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO domain_events (id, account_id, event, reference_type, reference_id,
                shipment_id, container_id, created_at, payload)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .map_err(backend)?;
    for event in events {
        insert
            .execute(params![
                event.id.0.to_string(),
                event.account_id.0.to_string(),
                event.event,
                event.reference_type,
                event.reference_id.to_string(),
                event.shipment_id.map(|id| id.0.to_string()),
                event.container_id.map(|id| id.0.to_string()),
                to_ts(event.created_at),
                event.payload.as_ref().map(serde_json::Value::to_string),
            ])
            .map_err(backend)?;
    }
    Ok(())
}

fn record_classification(
    conn: &mut Connection,
    account: AccountId,
    id: Uuid,
    c: &DocumentClassification,
    events: &[DomainEvent],
) -> StoreResult<()> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let representation = c.representation.as_ref();
    let (manual, old_type): (Option<String>, Option<String>) = tx
        .query_row(
            "SELECT document_type_manual, coalesce(document_type_manual, document_type)
             FROM documents WHERE id = ?1 AND account_id = ?2 AND deleted_at IS NULL",
            params![id.to_string(), account.0.to_string()],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()
        .map_err(backend)?
        .ok_or(StoreError::NotFound)?;
    let new_type = manual.as_deref().unwrap_or(&c.document_type);
    change_type_count(&tx, account, old_type.as_deref(), Some(new_type))?;
    let changed = tx
        .execute(
            "UPDATE documents SET document_type = ?3, classification_notes = ?4,
                representation_id = ?5, representation_version = ?6, representation = ?7,
                representation_at = ?8, updated_at = ?9
             WHERE id = ?1 AND account_id = ?2 AND deleted_at IS NULL",
            params![
                id.to_string(),
                account.0.to_string(),
                c.document_type,
                c.classification_notes,
                representation.map(|r| r.id.to_string()),
                representation.map(|r| r.schema_version.clone()),
                representation.map(|r| r.payload.to_string()),
                representation.map(|r| to_ts(r.created_at)),
                to_ts(c.at),
            ],
        )
        .map_err(backend)?;
    if changed == 0 {
        return Err(StoreError::NotFound);
    }
    add_links(&tx, account, id, &c.shipment_ids, &c.container_ids)?;
    insert_events(&tx, events)?;
    crate::webhooks::fan_out(&tx, events, false)?;
    tx.commit().map_err(backend)
}

fn link_targets(
    conn: &Connection,
    account: AccountId,
    bl_numbers: &[String],
    container_numbers: &[String],
) -> StoreResult<LinkTargets> {
    let mut targets = LinkTargets::default();
    let account = Value::Text(account.0.to_string());
    if !bl_numbers.is_empty() {
        let marks = vec!["?"; bl_numbers.len()].join(", ");
        let values: Vec<Value> = std::iter::once(account.clone())
            .chain(bl_numbers.iter().map(|n| Value::Text(n.clone())))
            .collect();
        let mut stmt = conn
            .prepare(&format!(
                "SELECT id, normalized_number FROM shipments
                 WHERE account_id = ? AND normalized_number IN ({marks}) ORDER BY id"
            ))
            .map_err(backend)?;
        targets.shipments = stmt
            .query_map(params_from_iter(values.iter()), |row| {
                Ok((ShipmentId(uuid_from(row, 0)?), row.get(1)?))
            })
            .and_then(Iterator::collect)
            .map_err(backend)?;
    }
    if !container_numbers.is_empty() {
        let marks = vec!["?"; container_numbers.len()].join(", ");
        let values: Vec<Value> = std::iter::once(account)
            .chain(container_numbers.iter().map(|n| Value::Text(n.clone())))
            .collect();
        let mut stmt = conn
            .prepare(&format!(
                "SELECT id, shipment_id, number FROM containers
                 WHERE account_id = ? AND number IN ({marks}) ORDER BY id"
            ))
            .map_err(backend)?;
        targets.containers = stmt
            .query_map(params_from_iter(values.iter()), |row| {
                Ok((
                    ContainerId(uuid_from(row, 0)?),
                    ShipmentId(uuid_from(row, 1)?),
                    row.get(2)?,
                ))
            })
            .and_then(Iterator::collect)
            .map_err(backend)?;
    }
    Ok(targets)
}

const UPLOAD_COLUMNS: &str = "id, account_id, created_by, file_name, declared_content_type, \
    byte_size, checksum, storage_key, uploaded_at, document_id, created_at, expires_at";

fn upload_from_row(row: &Row<'_>) -> rusqlite::Result<DirectUpload> {
    let size: i64 = row.get(5)?;
    Ok(DirectUpload {
        id: uuid_from(row, 0)?,
        account_id: AccountId(uuid_from(row, 1)?),
        created_by: opt_uuid(row, 2)?.map(ApiKeyId),
        file_name: row.get(3)?,
        declared_content_type: row.get(4)?,
        byte_size: u64::try_from(size).unwrap_or(0),
        checksum: row.get(6)?,
        storage_key: row.get(7)?,
        uploaded_at: from_optional_ts(row, 8)?,
        document_id: opt_uuid(row, 9)?,
        created_at: from_ts(row, 10)?,
        expires_at: from_ts(row, 11)?,
    })
}

const EMAIL_COLUMNS: &str = "id, account_id, subject, body, from_addresses, to_addresses, \
    cc_addresses, sent_at, message_id, in_reply_to, references_ids, content_type, status, \
    status_reason, created_at, updated_at, source_key";

fn email_from_row(row: &Row<'_>) -> rusqlite::Result<EmailSubmission> {
    let list = |index: usize| -> rusqlite::Result<Vec<String>> {
        let text: String = row.get(index)?;
        Ok(serde_json::from_str(&text).unwrap_or_default())
    };
    Ok(EmailSubmission {
        id: uuid_from(row, 0)?,
        account_id: AccountId(uuid_from(row, 1)?),
        subject: row.get(2)?,
        body: row.get(3)?,
        from: list(4)?,
        to: list(5)?,
        cc: list(6)?,
        sent_at: from_optional_ts(row, 7)?,
        message_id: row.get(8)?,
        in_reply_to: row.get(9)?,
        references: list(10)?,
        content_type: row.get(11)?,
        status: row.get(12)?,
        status_reason: row.get(13)?,
        created_at: from_ts(row, 14)?,
        updated_at: from_ts(row, 15)?,
        source_key: row.get(16)?,
    })
}

#[async_trait]
impl DocumentStore for SqliteStore {
    async fn insert_document_with_job(
        &self,
        document: &StoredDocument,
        from_upload: Option<Uuid>,
        job: Option<&NewJob>,
    ) -> StoreResult<()> {
        insert(&mut self.writer(), document, from_upload, job)?;
        if job.is_some() {
            self.wakeups.wake();
        }
        Ok(())
    }

    async fn document_with_content(
        &self,
        account: AccountId,
        sha256: &str,
    ) -> StoreResult<Option<Uuid>> {
        self.reader()
            .prepare_cached(
                "SELECT id FROM documents
                 WHERE account_id = ?1 AND sha256 = ?2 AND deleted_at IS NULL",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![account.0.to_string(), sha256], |row| {
                    uuid_from(row, 0)
                })
                .optional()
            })
            .map_err(backend)
    }

    async fn document(&self, account: AccountId, id: Uuid) -> StoreResult<StoredDocument> {
        get(&self.reader(), account, id)
    }

    async fn list_documents(
        &self,
        account: AccountId,
        filter: &DocumentFilter,
        sort: DocumentSort,
        page: PageRequest,
    ) -> StoreResult<Paged<StoredDocument>> {
        list(&self.reader(), account, filter, sort, page)
    }

    async fn update_document(&self, document: &StoredDocument) -> StoreResult<()> {
        update(&mut self.writer(), document)
    }

    async fn delete_document(
        &self,
        account: AccountId,
        id: Uuid,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        delete(&mut self.writer(), account, id, at)
    }

    async fn record_document_classification(
        &self,
        account: AccountId,
        id: Uuid,
        classification: &DocumentClassification,
        events: &[DomainEvent],
    ) -> StoreResult<()> {
        record_classification(&mut self.writer(), account, id, classification, events)
    }

    async fn replace_document_file(
        &self,
        account: AccountId,
        id: Uuid,
        expected_key: &str,
        new_key: &str,
        size_bytes: u64,
        at: DateTime<Utc>,
    ) -> StoreResult<Option<String>> {
        let mut conn = self.writer();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        let (current, original): (String, Option<String>) = tx
            .query_row(
                "SELECT storage_key, original_storage_key FROM documents
                 WHERE id = ?1 AND account_id = ?2 AND deleted_at IS NULL",
                params![id.to_string(), account.0.to_string()],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(backend)?
            .ok_or(StoreError::NotFound)?;
        if current != expected_key {
            return Err(StoreError::Conflict {
                constraint: "documents_storage_key",
            });
        }
        tx.execute(
            "UPDATE documents SET storage_key = ?3, size_bytes = ?4,
                original_storage_key = coalesce(original_storage_key, storage_key),
                updated_at = ?5
             WHERE id = ?1 AND account_id = ?2",
            params![
                id.to_string(),
                account.0.to_string(),
                new_key,
                i64::try_from(size_bytes).unwrap_or(i64::MAX),
                to_ts(at),
            ],
        )
        .map_err(backend)?;
        tx.commit().map_err(backend)?;
        Ok(original.map(|_| current))
    }

    async fn link_targets(
        &self,
        account: AccountId,
        bl_numbers: &[String],
        container_numbers: &[String],
    ) -> StoreResult<LinkTargets> {
        link_targets(&self.reader(), account, bl_numbers, container_numbers)
    }

    async fn insert_email_submission(&self, s: &EmailSubmission) -> StoreResult<bool> {
        let list =
            |items: &[String]| serde_json::to_string(items).unwrap_or_else(|_| "[]".to_owned());
        let inserted = self
            .writer()
            .execute(
                &format!(
                    "INSERT INTO email_submissions ({EMAIL_COLUMNS})
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                             ?16, ?17)
                     ON CONFLICT (source_key) WHERE source_key IS NOT NULL DO NOTHING"
                ),
                params![
                    s.id.to_string(),
                    s.account_id.0.to_string(),
                    s.subject,
                    s.body,
                    list(&s.from),
                    list(&s.to),
                    list(&s.cc),
                    s.sent_at.map(to_ts),
                    s.message_id,
                    s.in_reply_to,
                    list(&s.references),
                    s.content_type,
                    s.status,
                    s.status_reason,
                    to_ts(s.created_at),
                    to_ts(s.updated_at),
                    s.source_key,
                ],
            )
            .map_err(|e| on_unique(e, "email_submissions_pkey"))?;
        Ok(inserted == 1)
    }

    async fn mailbox_cursor(&self, mailbox: &str) -> StoreResult<Option<MailboxCursor>> {
        self.reader()
            .prepare_cached("SELECT uid_validity, last_uid FROM mailbox_cursors WHERE mailbox = ?1")
            .and_then(|mut stmt| {
                stmt.query_row([mailbox], |row| {
                    Ok(MailboxCursor {
                        uid_validity: row.get(0)?,
                        last_uid: row.get(1)?,
                    })
                })
                .optional()
            })
            .map_err(backend)
    }

    async fn save_mailbox_cursor(
        &self,
        mailbox: &str,
        cursor: MailboxCursor,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        self.writer()
            .execute(
                "INSERT INTO mailbox_cursors (mailbox, uid_validity, last_uid, updated_at)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (mailbox) DO UPDATE SET
                     last_uid = CASE WHEN uid_validity = excluded.uid_validity
                                     THEN max(last_uid, excluded.last_uid)
                                     ELSE excluded.last_uid END,
                     uid_validity = excluded.uid_validity,
                     updated_at = excluded.updated_at",
                params![mailbox, cursor.uid_validity, cursor.last_uid, to_ts(at)],
            )
            .map_err(backend)?;
        Ok(())
    }

    async fn finish_email_submission(
        &self,
        account: AccountId,
        id: Uuid,
        status: &str,
        reason: Option<&str>,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        let changed = self
            .writer()
            .execute(
                "UPDATE email_submissions SET status = ?3, status_reason = ?4, updated_at = ?5
                 WHERE id = ?1 AND account_id = ?2",
                params![
                    id.to_string(),
                    account.0.to_string(),
                    status,
                    reason,
                    to_ts(at)
                ],
            )
            .map_err(backend)?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    async fn email_submission(&self, account: AccountId, id: Uuid) -> StoreResult<EmailSubmission> {
        self.reader()
            .prepare_cached(&format!(
                "SELECT {EMAIL_COLUMNS} FROM email_submissions WHERE id = ?1 AND account_id = ?2"
            ))
            .and_then(|mut stmt| {
                stmt.query_row(
                    params![id.to_string(), account.0.to_string()],
                    email_from_row,
                )
                .optional()
            })
            .map_err(backend)?
            .ok_or(StoreError::NotFound)
    }

    async fn list_email_submissions(
        &self,
        account: AccountId,
        page: PageRequest,
    ) -> StoreResult<Paged<EmailSubmission>> {
        let conn = self.reader();
        let total: i64 = conn
            .query_row(
                "SELECT count(*) FROM email_submissions WHERE account_id = ?1",
                [account.0.to_string()],
                |row| row.get(0),
            )
            .map_err(backend)?;
        let items = conn
            .prepare_cached(&format!(
                "SELECT {EMAIL_COLUMNS} FROM email_submissions WHERE account_id = ?1
                 ORDER BY created_at DESC, id DESC LIMIT ?2 OFFSET ?3"
            ))
            .and_then(|mut stmt| {
                stmt.query_map(
                    params![
                        account.0.to_string(),
                        i64::from(page.limit),
                        i64::try_from(page.offset).unwrap_or(i64::MAX)
                    ],
                    email_from_row,
                )?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(backend)?;
        Ok(Paged {
            items,
            total: u64::try_from(total).unwrap_or(0),
        })
    }

    async fn documents_of_email_submissions(
        &self,
        account: AccountId,
        submissions: &[Uuid],
    ) -> StoreResult<Vec<StoredDocument>> {
        if submissions.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.reader();
        let marks = vec!["?"; submissions.len()].join(", ");
        let values: Vec<Value> = std::iter::once(Value::Text(account.0.to_string()))
            .chain(submissions.iter().map(|id| Value::Text(id.to_string())))
            .collect();
        let mut documents = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM documents d
                 WHERE d.account_id = ? AND d.deleted_at IS NULL
                   AND d.email_submission_id IN ({marks})
                 ORDER BY d.seq"
            ))
            .and_then(|mut stmt| {
                stmt.query_map(params_from_iter(values.iter()), from_row)?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(backend)?;
        load_links(&conn, &mut documents)?;
        Ok(documents)
    }

    async fn create_direct_upload(&self, u: &DirectUpload) -> StoreResult<()> {
        self.writer()
            .prepare_cached(&format!(
                "INSERT INTO direct_uploads ({UPLOAD_COLUMNS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
            ))
            .and_then(|mut stmt| {
                stmt.execute(params![
                    u.id.to_string(),
                    u.account_id.0.to_string(),
                    u.created_by.map(|k| k.0.to_string()),
                    u.file_name,
                    u.declared_content_type,
                    i64::try_from(u.byte_size).unwrap_or(i64::MAX),
                    u.checksum,
                    u.storage_key,
                    u.uploaded_at.map(to_ts),
                    u.document_id.map(|id| id.to_string()),
                    to_ts(u.created_at),
                    to_ts(u.expires_at),
                ])
            })
            .map_err(|e| on_unique(e, "direct_uploads_pkey"))?;
        Ok(())
    }

    async fn direct_upload(&self, id: Uuid) -> StoreResult<DirectUpload> {
        self.reader()
            .prepare_cached(&format!(
                "SELECT {UPLOAD_COLUMNS} FROM direct_uploads WHERE id = ?1"
            ))
            .and_then(|mut stmt| stmt.query_row([id.to_string()], upload_from_row).optional())
            .map_err(backend)?
            .ok_or(StoreError::NotFound)
    }

    async fn mark_direct_upload_uploaded(&self, id: Uuid, at: DateTime<Utc>) -> StoreResult<()> {
        let changed = self
            .writer()
            .execute(
                "UPDATE direct_uploads SET uploaded_at = ?2 WHERE id = ?1",
                params![id.to_string(), to_ts(at)],
            )
            .map_err(backend)?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    async fn discard_expired_direct_uploads(
        &self,
        expired_before: DateTime<Utc>,
        now: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<DirectUpload>> {
        // One writer: nothing can claim an upload between the select and the update.
        self.writer()
            .prepare_cached(&format!(
                "UPDATE direct_uploads SET discarded_at = coalesce(discarded_at, ?2)
                 WHERE id IN (SELECT id FROM direct_uploads
                              WHERE document_id IS NULL AND expires_at < ?1
                              ORDER BY expires_at, id LIMIT ?3)
                 RETURNING {UPLOAD_COLUMNS}"
            ))
            .and_then(|mut stmt| {
                stmt.query_map(
                    params![to_ts(expired_before), to_ts(now), limit],
                    upload_from_row,
                )?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map(|mut uploads| {
                uploads.sort_by_key(|u| (u.expires_at, u.id));
                uploads
            })
            .map_err(backend)
    }

    async fn delete_direct_upload(&self, id: Uuid) -> StoreResult<()> {
        let deleted = self
            .writer()
            .execute(
                "DELETE FROM direct_uploads
                 WHERE id = ?1 AND discarded_at IS NOT NULL AND document_id IS NULL",
                [id.to_string()],
            )
            .map_err(backend)?;
        if deleted == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }
}
