//! Shipment documents: their metadata, links and search (the bytes live in object storage).

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use tidemark_domain::{AccountId, ApiKeyId, ContainerId, DomainEvent, NewJob, ShipmentId};
use tidemark_store::{
    DOCUMENT_BUCKET_SIZE, DirectUpload, DocumentClassification, DocumentFilter, DocumentSort,
    DocumentSortField, DocumentStore, EmailSubmission, LinkTargets, MailboxCursor, PageRequest,
    Paged, Representation, StoreError, StoreResult, StoredDocument, WordSearch, document_words,
    prefix_end,
};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::PgStore;
use crate::convert::{backend, on_unique, query_all, query_one};
use crate::tracking_requests::Condition;

const COLUMNS: &str = "d.id, d.account_id, d.uploaded_by, d.source, d.name, d.file_name, \
    d.content_type, d.size_bytes, d.sha256, d.storage_key, d.document_type, \
    d.document_type_manual, d.classification_notes, d.representation_id, \
    d.representation_version, d.representation, d.representation_at, d.created_at, d.updated_at, \
    d.email_submission_id";

fn from_row(row: &Row) -> StoreResult<StoredDocument> {
    let representation_id: Option<Uuid> = row.try_get(13).map_err(backend)?;
    let updated_at: DateTime<Utc> = row.try_get(18).map_err(backend)?;
    let representation = match representation_id {
        Some(id) => Some(Representation {
            id,
            schema_version: row
                .try_get::<_, Option<String>>(14)
                .map_err(backend)?
                .unwrap_or_default(),
            payload: row
                .try_get::<_, Option<serde_json::Value>>(15)
                .map_err(backend)?
                .unwrap_or(serde_json::Value::Null),
            created_at: row
                .try_get::<_, Option<DateTime<Utc>>>(16)
                .map_err(backend)?
                .unwrap_or(updated_at),
        }),
        None => None,
    };
    let size: i64 = row.try_get(7).map_err(backend)?;
    Ok(StoredDocument {
        id: row.try_get(0).map_err(backend)?,
        account_id: AccountId(row.try_get(1).map_err(backend)?),
        uploaded_by: row
            .try_get::<_, Option<Uuid>>(2)
            .map_err(backend)?
            .map(ApiKeyId),
        source: row.try_get(3).map_err(backend)?,
        name: row.try_get(4).map_err(backend)?,
        file_name: row.try_get(5).map_err(backend)?,
        content_type: row.try_get(6).map_err(backend)?,
        size_bytes: u64::try_from(size).map_err(backend)?,
        sha256: row.try_get(8).map_err(backend)?,
        storage_key: row.try_get(9).map_err(backend)?,
        document_type: row.try_get(10).map_err(backend)?,
        document_type_manual: row.try_get(11).map_err(backend)?,
        classification_notes: row.try_get(12).map_err(backend)?,
        representation,
        shipment_ids: Vec::new(),
        container_ids: Vec::new(),
        email_submission_id: row.try_get(19).map_err(backend)?,
        created_at: row.try_get(17).map_err(backend)?,
        updated_at,
    })
}

fn pair(row: &Row) -> StoreResult<(Uuid, Uuid)> {
    Ok((
        row.try_get(0).map_err(backend)?,
        row.try_get(1).map_err(backend)?,
    ))
}

async fn load_links(
    client: &impl GenericClient,
    documents: &mut [StoredDocument],
) -> StoreResult<()> {
    if documents.is_empty() {
        return Ok(());
    }
    let ids: Vec<Uuid> = documents.iter().map(|d| d.id).collect();
    let shipments = query_all(
        client,
        "SELECT document_id, shipment_id FROM document_shipments
         WHERE document_id = ANY($1) ORDER BY document_id, shipment_id",
        &[&ids],
        pair,
    )
    .await?;
    let containers = query_all(
        client,
        "SELECT document_id, container_id FROM document_containers
         WHERE document_id = ANY($1) ORDER BY document_id, container_id",
        &[&ids],
        pair,
    )
    .await?;
    let mut by_document: HashMap<Uuid, (Vec<ShipmentId>, Vec<ContainerId>)> = HashMap::new();
    for (document, shipment) in shipments {
        by_document
            .entry(document)
            .or_default()
            .0
            .push(ShipmentId(shipment));
    }
    for (document, container) in containers {
        by_document
            .entry(document)
            .or_default()
            .1
            .push(ContainerId(container));
    }
    for document in documents {
        let (shipments, containers) = by_document.remove(&document.id).unwrap_or_default();
        document.shipment_ids = shipments;
        document.container_ids = containers;
    }
    Ok(())
}

/// Adds links, checking each target is the account's; an unknown one is `NotFound`.
async fn add_links(
    tx: &deadpool_postgres::Transaction<'_>,
    account: AccountId,
    document: Uuid,
    shipments: &[ShipmentId],
    containers: &[ContainerId],
) -> StoreResult<()> {
    let shipment_ids: Vec<Uuid> = shipments.iter().map(|s| s.0).collect();
    let container_ids: Vec<Uuid> = containers.iter().map(|c| c.0).collect();
    if !shipment_ids.is_empty() {
        let statement = tx
            .prepare_cached(
                "WITH known AS (SELECT id FROM shipments WHERE id = ANY($2) AND account_id = $3),
                      added AS (INSERT INTO document_shipments (document_id, shipment_id)
                                SELECT $1, id FROM known ON CONFLICT DO NOTHING)
                 SELECT count(*) FROM known",
            )
            .await
            .map_err(backend)?;
        let known: i64 = tx
            .query_one(&statement, &[&document, &shipment_ids, &account.0])
            .await
            .map_err(backend)?
            .try_get(0)
            .map_err(backend)?;
        if usize::try_from(known).unwrap_or(0) < distinct(&shipment_ids) {
            return Err(StoreError::NotFound);
        }
    }
    if !container_ids.is_empty() {
        let statement = tx
            .prepare_cached(
                "WITH known AS (SELECT id FROM containers WHERE id = ANY($2) AND account_id = $3),
                      added AS (INSERT INTO document_containers (document_id, container_id)
                                SELECT $1, id FROM known ON CONFLICT DO NOTHING)
                 SELECT count(*) FROM known",
            )
            .await
            .map_err(backend)?;
        let known: i64 = tx
            .query_one(&statement, &[&document, &container_ids, &account.0])
            .await
            .map_err(backend)?
            .try_get(0)
            .map_err(backend)?;
        if usize::try_from(known).unwrap_or(0) < distinct(&container_ids) {
            return Err(StoreError::NotFound);
        }
    }
    Ok(())
}

fn distinct(ids: &[Uuid]) -> usize {
    ids.iter().collect::<std::collections::HashSet<_>>().len()
}

/// Counts an upload: one more live document, and the next upload position (`seq`). The
/// account's counter row stays locked until commit, so positions follow commit order.
async fn count_upload(
    tx: &deadpool_postgres::Transaction<'_>,
    account: AccountId,
) -> StoreResult<i64> {
    let statement = tx
        .prepare_cached(
            "INSERT INTO document_counts (account_id, live, next_seq) VALUES ($1, 1, 1)
             ON CONFLICT (account_id) DO UPDATE SET live = document_counts.live + 1,
                next_seq = document_counts.next_seq + 1
             RETURNING next_seq",
        )
        .await
        .map_err(backend)?;
    tx.query_one(&statement, &[&account.0])
        .await
        .map_err(backend)?
        .try_get(0)
        .map_err(backend)
}

/// Moves a document in or out of the live counts: the account's and its bucket's.
async fn change_counts(
    tx: &deadpool_postgres::Transaction<'_>,
    account: AccountId,
    seq: i64,
    delta: i64,
) -> StoreResult<()> {
    if delta < 0 {
        let statement = tx
            .prepare_cached("UPDATE document_counts SET live = live + $2 WHERE account_id = $1")
            .await
            .map_err(backend)?;
        tx.execute(&statement, &[&account.0, &delta])
            .await
            .map_err(backend)?;
    }
    let statement = tx
        .prepare_cached(
            "INSERT INTO document_buckets (account_id, bucket, live) VALUES ($1, $2, $3)
             ON CONFLICT (account_id, bucket)
             DO UPDATE SET live = document_buckets.live + excluded.live",
        )
        .await
        .map_err(backend)?;
    tx.execute(
        &statement,
        &[&account.0, &seq.div_euclid(DOCUMENT_BUCKET_SIZE), &delta],
    )
    .await
    .map_err(backend)?;
    Ok(())
}

/// Adds (`delta` 1) or removes (`delta` -1) a live document's `words` in the word index,
/// and counts them; a word no live document has any more loses its count row. Callers
/// hold the account's `document_counts` row, so the count rows of an account are changed
/// by one transaction at a time (no deadlocks between them).
async fn change_words(
    tx: &deadpool_postgres::Transaction<'_>,
    account: AccountId,
    seq: i64,
    words: Vec<String>,
    delta: i64,
) -> StoreResult<()> {
    if words.is_empty() {
        return Ok(());
    }
    let statement = tx
        .prepare_cached(if delta > 0 {
            "WITH w AS (SELECT DISTINCT unnest($2::text[]) AS word),
             entries AS (
                INSERT INTO document_words (account_id, word, seq) SELECT $1, word, $3 FROM w)
             INSERT INTO document_word_counts (account_id, word, live)
             SELECT $1, word, 1 FROM w ORDER BY word
             ON CONFLICT (account_id, word)
             DO UPDATE SET live = document_word_counts.live + 1"
        } else {
            "WITH entries AS (
                DELETE FROM document_words
                WHERE account_id = $1 AND word = ANY($2::text[]) AND seq = $3)
             UPDATE document_word_counts SET live = live - 1
             WHERE account_id = $1 AND word = ANY($2::text[])"
        })
        .await
        .map_err(backend)?;
    tx.execute(&statement, &[&account.0, &words, &seq])
        .await
        .map_err(backend)?;
    if delta < 0 {
        // Apart: a statement cannot change a row twice (its WITH parts and itself).
        let statement = tx
            .prepare_cached(
                "DELETE FROM document_word_counts
                 WHERE account_id = $1 AND word = ANY($2::text[]) AND live <= 0",
            )
            .await
            .map_err(backend)?;
        tx.execute(&statement, &[&account.0, &words])
            .await
            .map_err(backend)?;
    }
    Ok(())
}

/// Moves a live document's count from type `from` to type `to` (each the effective type:
/// the manual one when set, else the classified one; `None` counts nowhere). Rows change
/// in type order, so two transactions moving counts between the same types cannot
/// deadlock.
async fn change_type_count(
    tx: &deadpool_postgres::Transaction<'_>,
    account: AccountId,
    from: Option<&str>,
    to: Option<&str>,
) -> StoreResult<()> {
    if from == to {
        return Ok(());
    }
    let (types, deltas): (Vec<&str>, Vec<i64>) = [(from, -1), (to, 1)]
        .into_iter()
        .filter_map(|(document_type, delta)| Some((document_type?, delta)))
        .unzip();
    let statement = tx
        .prepare_cached(
            "INSERT INTO document_type_counts (account_id, document_type, live)
             SELECT $1, t, n FROM unnest($2::text[], $3::bigint[]) AS c (t, n) ORDER BY t
             ON CONFLICT (account_id, document_type)
             DO UPDATE SET live = document_type_counts.live + excluded.live",
        )
        .await
        .map_err(backend)?;
    tx.execute(&statement, &[&account.0, &types, &deltas])
        .await
        .map_err(backend)?;
    Ok(())
}

/// Holds the account's `document_counts` row until commit, as uploads and deletes do, so a
/// rename's word counts change in turn with theirs. Take it after the document's own row,
/// as a delete does.
async fn lock_counts(
    tx: &deadpool_postgres::Transaction<'_>,
    account: AccountId,
) -> StoreResult<()> {
    let statement = tx
        .prepare_cached("SELECT 1 FROM document_counts WHERE account_id = $1 FOR UPDATE")
        .await
        .map_err(backend)?;
    tx.execute(&statement, &[&account.0])
        .await
        .map_err(backend)?;
    Ok(())
}

/// Writes the word index of the documents there before it existed (migration 16), a
/// batch of documents at a time.
pub(crate) async fn index_existing_words(
    tx: &deadpool_postgres::Transaction<'_>,
) -> StoreResult<()> {
    const BATCH: i64 = 10_000;
    let read = tx
        .prepare(
            "SELECT account_id, seq, file_name, name FROM documents
             WHERE deleted_at IS NULL AND (account_id, seq) > ($1, $2)
             ORDER BY account_id, seq LIMIT $3",
        )
        .await
        .map_err(backend)?;
    let write = tx
        .prepare(
            "INSERT INTO document_words (account_id, word, seq)
             SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[])",
        )
        .await
        .map_err(backend)?;
    let mut after = (Uuid::nil(), i64::MIN);
    loop {
        let rows = tx
            .query(&read, &[&after.0, &after.1, &BATCH])
            .await
            .map_err(backend)?;
        let (mut accounts, mut words, mut seqs) = (Vec::new(), Vec::new(), Vec::new());
        for row in &rows {
            let account: Uuid = row.try_get(0).map_err(backend)?;
            let seq: i64 = row.try_get(1).map_err(backend)?;
            let file_name: &str = row.try_get(2).map_err(backend)?;
            let name: &str = row.try_get(3).map_err(backend)?;
            for word in document_words(file_name, name) {
                accounts.push(account);
                words.push(word);
                seqs.push(seq);
            }
            after = (account, seq);
        }
        tx.execute(&write, &[&accounts, &words, &seqs])
            .await
            .map_err(backend)?;
        if rows.len() < usize::try_from(BATCH).unwrap_or(usize::MAX) {
            break;
        }
    }
    tx.execute(
        "INSERT INTO document_word_counts (account_id, word, live)
         SELECT account_id, word, count(*) FROM document_words GROUP BY account_id, word",
        &[],
    )
    .await
    .map_err(backend)?;
    Ok(())
}

/// Resolves a file name search (`terms` not empty) against the account's word counts.
async fn resolve_words(
    client: &impl GenericClient,
    account: AccountId,
    terms: &[String],
) -> StoreResult<WordSearch> {
    let Some((last, whole)) = terms.split_last() else {
        return Ok(WordSearch::Nothing);
    };
    let counted = query_all(
        client,
        "SELECT word, live FROM document_word_counts WHERE account_id = $1 AND word = ANY($2)",
        &[&account.0, &whole],
        word_count,
    )
    .await?;
    let whole = whole
        .iter()
        .map(|term| {
            let live = counted.iter().find(|(word, _)| word == term).map(|c| c.1);
            (term.clone(), live)
        })
        .collect();
    let started = query_all(
        client,
        "SELECT word, live FROM document_word_counts
         WHERE account_id = $1 AND word >= $2 AND word < $3 ORDER BY word LIMIT 2",
        &[&account.0, last, &prefix_end(last)],
        word_count,
    )
    .await?;
    Ok(WordSearch::resolve(whole, last, &started))
}

fn word_count(row: &Row) -> StoreResult<(String, i64)> {
    Ok((
        row.try_get(0).map_err(backend)?,
        row.try_get(1).map_err(backend)?,
    ))
}

/// Binds the query of the upload positions (`seq`, column `seq`) of the account's live
/// documents that a resolved search matches; `None` when nothing can match.
fn matches(condition: &mut Condition, account: AccountId, search: &WordSearch) -> Option<String> {
    let having_all = |condition: &mut Condition, words: &[(String, i64)]| {
        let ((first, _), others) = words.split_first()?;
        // The rarest word's entries drive; each other word is one primary key lookup.
        let account = condition.bind(account.0);
        let first = condition.bind(first.clone());
        let mut sql = format!(
            "SELECT w.seq AS seq FROM document_words w
             WHERE w.account_id = {account} AND w.word = {first}"
        );
        for (word, _) in others {
            let word = condition.bind(word.clone());
            sql.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM document_words o
                    WHERE o.account_id = w.account_id AND o.word = {word} AND o.seq = w.seq)"
            ));
        }
        Some(sql)
    };
    match search {
        WordSearch::Nothing => None,
        WordSearch::Words(words) => having_all(condition, words),
        WordSearch::Prefix { words, from, to } => {
            let all = having_all(condition, words);
            let (account, from, to) = (
                condition.bind(account.0),
                condition.bind(from.clone()),
                condition.bind(to.clone()),
            );
            let started = format!(
                "SELECT seq FROM document_words
                 WHERE account_id = {account} AND word >= {from} AND word < {to}"
            );
            Some(match all {
                Some(all) => format!("{all} INTERSECT {started}"),
                None => started.replacen("SELECT seq", "SELECT DISTINCT seq", 1),
            })
        }
    }
}

/// The `WHERE` clauses of a list over `documents d`, with `search` the resolved file name
/// search (one that can match).
fn conditions(
    account: AccountId,
    filter: &DocumentFilter,
    search: Option<&WordSearch>,
) -> Condition {
    let mut condition = Condition::default();
    let placeholder = condition.bind(account.0);
    condition
        .clauses
        .push(format!("d.account_id = {placeholder}"));
    condition.clauses.push("d.deleted_at IS NULL".to_owned());
    if let Some(matched) = search.and_then(|search| matches(&mut condition, account, search)) {
        condition.clauses.push(format!("d.seq IN ({matched})"));
    }
    if let Some(reference) = &filter.reference {
        let account = condition.bind(account.0);
        let r = condition.bind(reference.clone());
        condition.clauses.push(format!(
            "d.id IN (
                SELECT ds.document_id FROM document_shipments ds JOIN shipments s
                    ON s.id = ds.shipment_id
                WHERE s.account_id = {account} AND (s.normalized_number = {r}
                    OR upper(s.bill_of_lading_number) = {r}
                    OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(s.ref_numbers) j
                               WHERE upper(j) = {r}))
                UNION
                SELECT dc.document_id FROM document_containers dc
                    JOIN containers c ON c.id = dc.container_id
                    JOIN shipments s ON s.id = c.shipment_id
                WHERE s.account_id = {account} AND (s.normalized_number = {r}
                    OR upper(s.bill_of_lading_number) = {r}
                    OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(s.ref_numbers) j
                               WHERE upper(j) = {r}))
                UNION
                SELECT ds.document_id FROM document_shipments ds JOIN containers c
                    ON c.shipment_id = ds.shipment_id
                WHERE c.account_id = {account} AND c.number = {r}
                UNION
                SELECT dc.document_id FROM document_containers dc JOIN containers c
                    ON c.id = dc.container_id
                WHERE c.account_id = {account} AND c.number = {r})"
        ));
    }
    if let [only] = filter.document_types.as_slice() {
        // `=` rather than `= ANY`: the type index then also gives the date order.
        let placeholder = condition.bind(only.clone());
        condition
            .clauses
            .push(format!("d.effective_type = {placeholder}"));
    } else if !filter.document_types.is_empty() {
        let placeholder = condition.bind(filter.document_types.clone());
        condition
            .clauses
            .push(format!("d.effective_type = ANY({placeholder})"));
    }
    condition
}

fn order_by(sort: DocumentSort) -> String {
    let direction = if sort.descending { "DESC" } else { "ASC" };
    match sort.field {
        DocumentSortField::CreatedAt => format!("d.seq {direction}"),
        DocumentSortField::DocumentType => {
            format!("d.effective_type {direction}, d.seq {direction}")
        }
        DocumentSortField::AddedBy => format!("d.uploaded_by {direction}, d.seq {direction}"),
    }
}

/// A page of the account's live documents in upload order, read through the counted index:
/// the running sum of the buckets (newest first when `descending`) finds the bucket holding
/// the page's first document and how many live ones of it to skip, so a far page skips
/// fewer than `DOCUMENT_BUCKET_SIZE` index entries instead of all before it. One statement,
/// so the buckets and the documents are read in one snapshot.
async fn counted_page(
    client: &impl GenericClient,
    account: AccountId,
    descending: bool,
    page: PageRequest,
    order: &str,
) -> StoreResult<Vec<StoredDocument>> {
    let (direction, bound) = if descending {
        ("DESC", "d.seq < (SELECT (bucket + 1) * $3 FROM t)")
    } else {
        ("ASC", "d.seq >= (SELECT bucket * $3 FROM t)")
    };
    let statement = client
        .prepare_cached(&format!(
            "WITH t AS (
                SELECT bucket, $2 - (running - live) AS skip FROM (
                    SELECT bucket, live,
                        (sum(live) OVER (ORDER BY bucket {direction}))::bigint AS running
                    FROM document_buckets WHERE account_id = $1) b
                WHERE running > $2 ORDER BY bucket {direction} LIMIT 1)
             SELECT {COLUMNS} FROM (SELECT d.id AS page_id FROM documents d
                    WHERE d.account_id = $1 AND d.deleted_at IS NULL AND {bound}
                    ORDER BY d.seq {direction} LIMIT $4
                    OFFSET coalesce((SELECT skip FROM t), 0)) p
             JOIN documents d ON d.id = p.page_id
             ORDER BY {order}"
        ))
        .await
        .map_err(backend)?;
    let offset = i64::try_from(page.offset).unwrap_or(i64::MAX);
    client
        .query(
            &statement,
            &[
                &account.0,
                &offset,
                &DOCUMENT_BUCKET_SIZE,
                &i64::from(page.limit),
            ],
        )
        .await
        .map_err(backend)?
        .iter()
        .map(from_row)
        .collect()
}

/// The number a counting query returns; none (no row) is 0.
async fn count(
    client: &impl GenericClient,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> StoreResult<i64> {
    let statement = client.prepare_cached(sql).await.map_err(backend)?;
    match client
        .query_opt(&statement, params)
        .await
        .map_err(backend)?
    {
        Some(row) => row.try_get(0).map_err(backend),
        None => Ok(0),
    }
}

async fn list(
    client: &impl GenericClient,
    account: AccountId,
    filter: &DocumentFilter,
    sort: DocumentSort,
    page: PageRequest,
) -> StoreResult<Paged<StoredDocument>> {
    let search = if filter.filename_terms.is_empty() {
        None
    } else {
        let search = resolve_words(client, account, &filter.filename_terms).await?;
        if search == WordSearch::Nothing {
            return Ok(Paged {
                items: Vec::new(),
                total: 0,
            });
        }
        Some(search)
    };
    // The word index holds only the account's live documents, so a search alone is
    // counted and paged without reading the documents table.
    let words_only = filter.reference.is_none() && filter.document_types.is_empty();
    let mut words = Condition::default();
    let matched = search
        .as_ref()
        .filter(|_| words_only)
        .and_then(|search| matches(&mut words, account, search));
    let mut condition = conditions(account, filter, search.as_ref());
    let clauses = condition.clauses.join(" AND ");
    let total = match (&search, &matched) {
        (Some(WordSearch::Words(found)), Some(_)) if found.len() == 1 => found[0].1,
        (None, _) if filter.reference.is_none() && !filter.document_types.is_empty() => {
            // Types only: a document counts under one type, so the counts add up.
            let mut types = filter.document_types.clone();
            types.sort_unstable();
            types.dedup();
            count(
                client,
                "SELECT coalesce(sum(live), 0)::bigint FROM document_type_counts
                 WHERE account_id = $1 AND document_type = ANY($2)",
                &[&account.0, &types],
            )
            .await?
        }
        (None, _) if *filter == DocumentFilter::default() => {
            count(
                client,
                "SELECT live FROM document_counts WHERE account_id = $1",
                &[&account.0],
            )
            .await?
        }
        (_, Some(matched)) => {
            count(
                client,
                &format!("SELECT count(*) FROM ({matched}) m"),
                &words.params(),
            )
            .await?
        }
        _ => {
            count(
                client,
                &format!("SELECT count(*) FROM documents d WHERE {clauses}"),
                &condition.params(),
            )
            .await?
        }
    };
    let order = order_by(sort);
    // Within the first bucket's worth, plain OFFSET skips as little as the buckets would.
    let mut documents = if *filter == DocumentFilter::default()
        && sort.field == DocumentSortField::CreatedAt
        && page.offset >= DOCUMENT_BUCKET_SIZE.unsigned_abs()
    {
        counted_page(client, account, sort.descending, page, &order).await?
    } else if let Some(matched) = matched.filter(|_| sort.field == DocumentSortField::CreatedAt) {
        // In upload order the matches page off the word index (a one-word search walks its
        // word's entries), and only the page's rows are read.
        let direction = if sort.descending { "DESC" } else { "ASC" };
        let limit = words.bind(i64::from(page.limit));
        let offset = words.bind(i64::try_from(page.offset).unwrap_or(i64::MAX));
        let account = words.bind(account.0);
        let statement = client
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM (SELECT seq FROM ({matched}) m ORDER BY seq {direction}
                    LIMIT {limit} OFFSET {offset}) p
                 JOIN documents d
                    ON d.account_id = {account} AND d.seq = p.seq AND d.deleted_at IS NULL
                 ORDER BY {order}"
            ))
            .await
            .map_err(backend)?;
        client
            .query(&statement, &words.params())
            .await
            .map_err(backend)?
            .iter()
            .map(from_row)
            .collect::<StoreResult<Vec<_>>>()?
    } else {
        let limit = condition.bind(i64::from(page.limit));
        let offset = condition.bind(i64::try_from(page.offset).unwrap_or(i64::MAX));
        // Deferred join: the page's ids come from an index alone (an index-only scan), then
        // only those rows are read.
        let statement = client
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM (SELECT d.id AS page_id FROM documents d
                    WHERE {clauses} ORDER BY {order} LIMIT {limit} OFFSET {offset}) p
                 JOIN documents d ON d.id = p.page_id
                 ORDER BY {order}"
            ))
            .await
            .map_err(backend)?;
        client
            .query(&statement, &condition.params())
            .await
            .map_err(backend)?
            .iter()
            .map(from_row)
            .collect::<StoreResult<Vec<_>>>()?
    };
    load_links(client, &mut documents).await?;
    Ok(Paged {
        items: documents,
        total: u64::try_from(total).map_err(backend)?,
    })
}

/// Runs `result`'s transaction to its end: commit on success, an explicit rollback on
/// failure (a dropped transaction would leave its locks until the connection is reused).
async fn finish<T>(
    tx: deadpool_postgres::Transaction<'_>,
    result: StoreResult<T>,
) -> StoreResult<T> {
    match result {
        Ok(value) => {
            tx.commit().await.map_err(backend)?;
            Ok(value)
        }
        Err(error) => {
            if let Err(rollback) = tx.rollback().await {
                tracing::warn!(error = ?rollback, "cannot roll back");
            }
            Err(error)
        }
    }
}

async fn insert(
    tx: &deadpool_postgres::Transaction<'_>,
    d: &StoredDocument,
    from_upload: Option<Uuid>,
    job: Option<&NewJob>,
) -> StoreResult<()> {
    let seq = count_upload(tx, d.account_id).await?;
    let statement = tx
        .prepare_cached(
            "INSERT INTO documents (id, account_id, uploaded_by, source, name, file_name,
                content_type, size_bytes, sha256, storage_key, document_type,
                document_type_manual, classification_notes, created_at, updated_at, seq,
                email_submission_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
        )
        .await
        .map_err(backend)?;
    let size = i64::try_from(d.size_bytes).map_err(backend)?;
    tx.execute(
        &statement,
        &[
            &d.id,
            &d.account_id.0,
            &d.uploaded_by.map(|k| k.0),
            &d.source,
            &d.name,
            &d.file_name,
            &d.content_type,
            &size,
            &d.sha256,
            &d.storage_key,
            &d.document_type,
            &d.document_type_manual,
            &d.classification_notes,
            &d.created_at,
            &d.updated_at,
            &seq,
            &d.email_submission_id,
        ],
    )
    .await
    .map_err(|e| on_unique(e, "documents_content"))?;
    add_links(tx, d.account_id, d.id, &d.shipment_ids, &d.container_ids).await?;
    change_counts(tx, d.account_id, seq, 1).await?;
    let words = document_words(&d.file_name, &d.name).into_iter().collect();
    change_words(tx, d.account_id, seq, words, 1).await?;
    let document_type = d.document_type_manual.as_ref().or(d.document_type.as_ref());
    change_type_count(tx, d.account_id, None, document_type.map(String::as_str)).await?;
    if let Some(upload) = from_upload {
        let claimed = tx
            .execute(
                "UPDATE direct_uploads SET document_id = $1
                 WHERE id = $2 AND account_id = $3 AND document_id IS NULL
                   AND discarded_at IS NULL",
                &[&d.id, &upload, &d.account_id.0],
            )
            .await
            .map_err(backend)?;
        if claimed == 0 {
            return Err(unclaimable_upload(tx, upload).await);
        }
    }
    if let Some(job) = job {
        crate::jobs::enqueue(tx, job, d.created_at).await?;
    }
    Ok(())
}

/// Why a direct upload could not be claimed: it made a document already, or it was
/// discarded as expired (or is gone).
async fn unclaimable_upload(tx: &deadpool_postgres::Transaction<'_>, upload: Uuid) -> StoreError {
    let row = match tx
        .query_opt(
            "SELECT document_id IS NOT NULL FROM direct_uploads
             WHERE id = $1 AND discarded_at IS NULL",
            &[&upload],
        )
        .await
    {
        Ok(row) => row,
        Err(error) => return backend(error),
    };
    match row.map(|row| row.try_get::<_, bool>(0)).transpose() {
        Ok(Some(true)) => StoreError::Conflict {
            constraint: "direct_upload_used",
        },
        Ok(_) => StoreError::Conflict {
            constraint: "direct_upload_expired",
        },
        Err(error) => backend(error),
    }
}

async fn document_with_content(
    client: &impl GenericClient,
    account: AccountId,
    sha256: &str,
) -> StoreResult<Option<Uuid>> {
    let found = query_one(
        client,
        "SELECT id FROM documents
         WHERE account_id = $1 AND sha256 = $2 AND deleted_at IS NULL",
        &[&account.0, &sha256],
        |row| row.try_get(0).map_err(backend),
    )
    .await;
    match found {
        Ok(id) => Ok(Some(id)),
        Err(StoreError::NotFound) => Ok(None),
        Err(error) => Err(error),
    }
}

const UPLOAD_COLUMNS: &str = "id, account_id, created_by, file_name, declared_content_type, \
    byte_size, checksum, storage_key, uploaded_at, document_id, created_at, expires_at";

fn upload_from_row(row: &Row) -> StoreResult<DirectUpload> {
    let size: i64 = row.try_get(5).map_err(backend)?;
    Ok(DirectUpload {
        id: row.try_get(0).map_err(backend)?,
        account_id: AccountId(row.try_get(1).map_err(backend)?),
        created_by: row
            .try_get::<_, Option<Uuid>>(2)
            .map_err(backend)?
            .map(ApiKeyId),
        file_name: row.try_get(3).map_err(backend)?,
        declared_content_type: row.try_get(4).map_err(backend)?,
        byte_size: u64::try_from(size).map_err(backend)?,
        checksum: row.try_get(6).map_err(backend)?,
        storage_key: row.try_get(7).map_err(backend)?,
        uploaded_at: row.try_get(8).map_err(backend)?,
        document_id: row.try_get(9).map_err(backend)?,
        created_at: row.try_get(10).map_err(backend)?,
        expires_at: row.try_get(11).map_err(backend)?,
    })
}

const EMAIL_COLUMNS: &str = "id, account_id, subject, body, from_addresses, to_addresses, \
    cc_addresses, sent_at, message_id, in_reply_to, references_ids, content_type, status, \
    status_reason, created_at, updated_at, source_key";

fn email_from_row(row: &Row) -> StoreResult<EmailSubmission> {
    let list = |index: usize| -> StoreResult<Vec<String>> {
        let value: serde_json::Value = row.try_get(index).map_err(backend)?;
        Ok(serde_json::from_value(value).unwrap_or_default())
    };
    Ok(EmailSubmission {
        id: row.try_get(0).map_err(backend)?,
        account_id: AccountId(row.try_get(1).map_err(backend)?),
        subject: row.try_get(2).map_err(backend)?,
        body: row.try_get(3).map_err(backend)?,
        from: list(4)?,
        to: list(5)?,
        cc: list(6)?,
        sent_at: row.try_get(7).map_err(backend)?,
        message_id: row.try_get(8).map_err(backend)?,
        in_reply_to: row.try_get(9).map_err(backend)?,
        references: list(10)?,
        content_type: row.try_get(11).map_err(backend)?,
        status: row.try_get(12).map_err(backend)?,
        status_reason: row.try_get(13).map_err(backend)?,
        created_at: row.try_get(14).map_err(backend)?,
        updated_at: row.try_get(15).map_err(backend)?,
        source_key: row.try_get(16).map_err(backend)?,
    })
}

#[async_trait]
impl DocumentStore for PgStore {
    async fn insert_document_with_job(
        &self,
        d: &StoredDocument,
        from_upload: Option<Uuid>,
        job: Option<&NewJob>,
    ) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let result = insert(&tx, d, from_upload, job).await;
        finish(tx, result).await
    }

    async fn document_with_content(
        &self,
        account: AccountId,
        sha256: &str,
    ) -> StoreResult<Option<Uuid>> {
        document_with_content(&self.client().await?, account, sha256).await
    }
    async fn document(&self, account: AccountId, id: Uuid) -> StoreResult<StoredDocument> {
        let client = self.client().await?;
        let document = query_one(
            &client,
            &format!(
                "SELECT {COLUMNS} FROM documents d
                 WHERE d.id = $1 AND d.account_id = $2 AND d.deleted_at IS NULL"
            ),
            &[&id, &account.0],
            from_row,
        )
        .await?;
        let mut documents = [document];
        load_links(&client, &mut documents).await?;
        let [document] = documents;
        Ok(document)
    }

    async fn list_documents(
        &self,
        account: AccountId,
        filter: &DocumentFilter,
        sort: DocumentSort,
        page: PageRequest,
    ) -> StoreResult<Paged<StoredDocument>> {
        list(&self.client().await?, account, filter, sort, page).await
    }

    async fn update_document(&self, d: &StoredDocument) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let result = async {
            // The document's row first, then the counts, in the order deletes take them.
            let before = tx
                .query_opt(
                    "SELECT seq, file_name, name, document_type, effective_type FROM documents
                     WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL FOR UPDATE",
                    &[&d.id, &d.account_id.0],
                )
                .await
                .map_err(backend)?
                .ok_or(StoreError::NotFound)?;
            let seq: i64 = before.try_get(0).map_err(backend)?;
            let file_name: &str = before.try_get(1).map_err(backend)?;
            let old_name: &str = before.try_get(2).map_err(backend)?;
            let classified: Option<&str> = before.try_get(3).map_err(backend)?;
            let old_type: Option<&str> = before.try_get(4).map_err(backend)?;
            lock_counts(&tx, d.account_id).await?;
            tx.execute(
                "UPDATE documents SET name = $3, document_type_manual = $4, updated_at = $5
                 WHERE id = $1 AND account_id = $2",
                &[
                    &d.id,
                    &d.account_id.0,
                    &d.name,
                    &d.document_type_manual,
                    &d.updated_at,
                ],
            )
            .await
            .map_err(backend)?;
            let (old, new) = (
                document_words(file_name, old_name),
                document_words(file_name, &d.name),
            );
            let gone = old.difference(&new).cloned().collect();
            change_words(&tx, d.account_id, seq, gone, -1).await?;
            let added = new.difference(&old).cloned().collect();
            change_words(&tx, d.account_id, seq, added, 1).await?;
            let new_type = d.document_type_manual.as_deref().or(classified);
            change_type_count(&tx, d.account_id, old_type, new_type).await?;
            for table in ["document_shipments", "document_containers"] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE document_id = $1"),
                    &[&d.id],
                )
                .await
                .map_err(backend)?;
            }
            add_links(&tx, d.account_id, d.id, &d.shipment_ids, &d.container_ids).await?;
            Ok(())
        }
        .await;
        finish(tx, result).await
    }

    async fn delete_document(
        &self,
        account: AccountId,
        id: Uuid,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let result = async {
            let deleted = tx
                .query_opt(
                    "UPDATE documents SET deleted_at = $3, updated_at = $3
                     WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL
                     RETURNING seq, file_name, name, effective_type",
                    &[&id, &account.0, &at],
                )
                .await
                .map_err(backend)?
                .ok_or(StoreError::NotFound)?;
            let seq: i64 = deleted.try_get(0).map_err(backend)?;
            change_counts(&tx, account, seq, -1).await?;
            let words = document_words(
                deleted.try_get(1).map_err(backend)?,
                deleted.try_get(2).map_err(backend)?,
            );
            change_words(&tx, account, seq, words.into_iter().collect(), -1).await?;
            let document_type: Option<&str> = deleted.try_get(3).map_err(backend)?;
            change_type_count(&tx, account, document_type, None).await?;
            Ok(())
        }
        .await;
        finish(tx, result).await
    }

    async fn record_document_classification(
        &self,
        account: AccountId,
        id: Uuid,
        c: &DocumentClassification,
        events: &[DomainEvent],
    ) -> StoreResult<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let result = async {
            let representation = c.representation.as_ref();
            let before = tx
                .query_opt(
                    "SELECT document_type_manual, effective_type FROM documents
                     WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL FOR UPDATE",
                    &[&id, &account.0],
                )
                .await
                .map_err(backend)?
                .ok_or(StoreError::NotFound)?;
            let manual: Option<&str> = before.try_get(0).map_err(backend)?;
            let old_type: Option<&str> = before.try_get(1).map_err(backend)?;
            let new_type = manual.unwrap_or(&c.document_type);
            change_type_count(&tx, account, old_type, Some(new_type)).await?;
            let changed = tx
                .execute(
                    "UPDATE documents SET document_type = $3, classification_notes = $4,
                        representation_id = $5, representation_version = $6, representation = $7,
                        representation_at = $8, updated_at = $9
                     WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL",
                    &[
                        &id,
                        &account.0,
                        &c.document_type,
                        &c.classification_notes,
                        &representation.map(|r| r.id),
                        &representation.map(|r| r.schema_version.clone()),
                        &representation.map(|r| r.payload.clone()),
                        &representation.map(|r| r.created_at),
                        &c.at,
                    ],
                )
                .await
                .map_err(backend)?;
            if changed == 0 {
                return Err(StoreError::NotFound);
            }
            add_links(&tx, account, id, &c.shipment_ids, &c.container_ids).await?;
            crate::shipments::insert_domain_events(&tx, events).await?;
            crate::webhooks::fan_out(&tx, events, false).await?;
            Ok(())
        }
        .await;
        finish(tx, result).await
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
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let row = tx
            .query_opt(
                "SELECT storage_key, original_storage_key FROM documents
                 WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL FOR UPDATE",
                &[&id, &account.0],
            )
            .await
            .map_err(backend)?
            .ok_or(StoreError::NotFound)?;
        let current: String = row.try_get(0).map_err(backend)?;
        let original: Option<String> = row.try_get(1).map_err(backend)?;
        if current != expected_key {
            return Err(StoreError::Conflict {
                constraint: "documents_storage_key",
            });
        }
        tx.execute(
            "UPDATE documents SET storage_key = $3, size_bytes = $4,
                original_storage_key = coalesce(original_storage_key, storage_key),
                updated_at = $5
             WHERE id = $1 AND account_id = $2",
            &[
                &id,
                &account.0,
                &new_key,
                &i64::try_from(size_bytes).unwrap_or(i64::MAX),
                &at,
            ],
        )
        .await
        .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(original.map(|_| current))
    }

    async fn link_targets(
        &self,
        account: AccountId,
        bl_numbers: &[String],
        container_numbers: &[String],
    ) -> StoreResult<LinkTargets> {
        let client = self.client().await?;
        let shipments = query_all(
            &client,
            "SELECT id, normalized_number FROM shipments
             WHERE account_id = $1 AND normalized_number = ANY($2) ORDER BY id",
            &[&account.0, &bl_numbers],
            |row| {
                Ok((
                    ShipmentId(row.try_get(0).map_err(backend)?),
                    row.try_get(1).map_err(backend)?,
                ))
            },
        )
        .await?;
        let containers = query_all(
            &client,
            "SELECT id, shipment_id, number FROM containers
             WHERE account_id = $1 AND number = ANY($2) ORDER BY id",
            &[&account.0, &container_numbers],
            |row| {
                Ok((
                    ContainerId(row.try_get(0).map_err(backend)?),
                    ShipmentId(row.try_get(1).map_err(backend)?),
                    row.try_get(2).map_err(backend)?,
                ))
            },
        )
        .await?;
        Ok(LinkTargets {
            shipments,
            containers,
        })
    }

    async fn insert_email_submission(&self, s: &EmailSubmission) -> StoreResult<bool> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "INSERT INTO email_submissions ({EMAIL_COLUMNS})
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                         $17)
                 ON CONFLICT (source_key) WHERE source_key IS NOT NULL DO NOTHING"
            ))
            .await
            .map_err(backend)?;
        let inserted = client
            .execute(
                &statement,
                &[
                    &s.id,
                    &s.account_id.0,
                    &s.subject,
                    &s.body,
                    &serde_json::json!(s.from),
                    &serde_json::json!(s.to),
                    &serde_json::json!(s.cc),
                    &s.sent_at,
                    &s.message_id,
                    &s.in_reply_to,
                    &serde_json::json!(s.references),
                    &s.content_type,
                    &s.status,
                    &s.status_reason,
                    &s.created_at,
                    &s.updated_at,
                    &s.source_key,
                ],
            )
            .await
            .map_err(|e| on_unique(e, "email_submissions_pkey"))?;
        Ok(inserted == 1)
    }

    async fn mailbox_cursor(&self, mailbox: &str) -> StoreResult<Option<MailboxCursor>> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT uid_validity, last_uid FROM mailbox_cursors WHERE mailbox = $1",
                &[&mailbox],
            )
            .await
            .map_err(backend)?;
        row.map(|row| {
            let number = |index: usize| -> StoreResult<u32> {
                let value: i64 = row.try_get(index).map_err(backend)?;
                u32::try_from(value).map_err(backend)
            };
            Ok(MailboxCursor {
                uid_validity: number(0)?,
                last_uid: number(1)?,
            })
        })
        .transpose()
    }

    async fn save_mailbox_cursor(
        &self,
        mailbox: &str,
        cursor: MailboxCursor,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        self.client()
            .await?
            .execute(
                "INSERT INTO mailbox_cursors (mailbox, uid_validity, last_uid, updated_at)
                 VALUES ($1, $2, $3, $4)
                 ON CONFLICT (mailbox) DO UPDATE SET
                     last_uid = CASE
                         WHEN mailbox_cursors.uid_validity = excluded.uid_validity
                         THEN greatest(mailbox_cursors.last_uid, excluded.last_uid)
                         ELSE excluded.last_uid END,
                     uid_validity = excluded.uid_validity,
                     updated_at = excluded.updated_at",
                &[
                    &mailbox,
                    &i64::from(cursor.uid_validity),
                    &i64::from(cursor.last_uid),
                    &at,
                ],
            )
            .await
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
            .client()
            .await?
            .execute(
                "UPDATE email_submissions SET status = $3, status_reason = $4, updated_at = $5
                 WHERE id = $1 AND account_id = $2",
                &[&id, &account.0, &status, &reason, &at],
            )
            .await
            .map_err(backend)?;
        if changed == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    async fn email_submission(&self, account: AccountId, id: Uuid) -> StoreResult<EmailSubmission> {
        query_one(
            &self.client().await?,
            &format!(
                "SELECT {EMAIL_COLUMNS} FROM email_submissions WHERE id = $1 AND account_id = $2"
            ),
            &[&id, &account.0],
            email_from_row,
        )
        .await
    }

    async fn list_email_submissions(
        &self,
        account: AccountId,
        page: PageRequest,
    ) -> StoreResult<Paged<EmailSubmission>> {
        let client = self.client().await?;
        let total: i64 = client
            .query_one(
                "SELECT count(*) FROM email_submissions WHERE account_id = $1",
                &[&account.0],
            )
            .await
            .and_then(|row| row.try_get(0))
            .map_err(backend)?;
        let items = query_all(
            &client,
            &format!(
                "SELECT {EMAIL_COLUMNS} FROM email_submissions WHERE account_id = $1
                 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3"
            ),
            &[
                &account.0,
                &i64::from(page.limit),
                &i64::try_from(page.offset).unwrap_or(i64::MAX),
            ],
            email_from_row,
        )
        .await?;
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
        let client = self.client().await?;
        let mut documents = query_all(
            &client,
            &format!(
                "SELECT {COLUMNS} FROM documents d
                 WHERE d.account_id = $1 AND d.deleted_at IS NULL
                   AND d.email_submission_id = ANY($2)
                 ORDER BY d.seq"
            ),
            &[&account.0, &submissions],
            from_row,
        )
        .await?;
        load_links(&client, &mut documents).await?;
        Ok(documents)
    }

    async fn create_direct_upload(&self, u: &DirectUpload) -> StoreResult<()> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "INSERT INTO direct_uploads ({UPLOAD_COLUMNS})
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
            ))
            .await
            .map_err(backend)?;
        let size = i64::try_from(u.byte_size).map_err(backend)?;
        client
            .execute(
                &statement,
                &[
                    &u.id,
                    &u.account_id.0,
                    &u.created_by.map(|k| k.0),
                    &u.file_name,
                    &u.declared_content_type,
                    &size,
                    &u.checksum,
                    &u.storage_key,
                    &u.uploaded_at,
                    &u.document_id,
                    &u.created_at,
                    &u.expires_at,
                ],
            )
            .await
            .map_err(|e| on_unique(e, "direct_uploads_pkey"))?;
        Ok(())
    }

    async fn direct_upload(&self, id: Uuid) -> StoreResult<DirectUpload> {
        query_one(
            &self.client().await?,
            &format!("SELECT {UPLOAD_COLUMNS} FROM direct_uploads WHERE id = $1"),
            &[&id],
            upload_from_row,
        )
        .await
    }

    async fn mark_direct_upload_uploaded(&self, id: Uuid, at: DateTime<Utc>) -> StoreResult<()> {
        let changed = self
            .client()
            .await?
            .execute(
                "UPDATE direct_uploads SET uploaded_at = $2 WHERE id = $1",
                &[&id, &at],
            )
            .await
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
        // `document_id IS NULL` is checked again on the locked row: an upload that made
        // its document while this ran is left alone (and one discarded first cannot be
        // claimed any more, as the claim checks `discarded_at`).
        let mut uploads = query_all(
            &self.client().await?,
            &format!(
                "UPDATE direct_uploads SET discarded_at = coalesce(discarded_at, $2)
                 WHERE document_id IS NULL
                   AND id IN (SELECT id FROM direct_uploads
                              WHERE document_id IS NULL AND expires_at < $1
                              ORDER BY expires_at, id LIMIT $3
                              FOR UPDATE SKIP LOCKED)
                 RETURNING {UPLOAD_COLUMNS}"
            ),
            &[&expired_before, &now, &i64::from(limit)],
            upload_from_row,
        )
        .await?;
        uploads.sort_by_key(|u| (u.expires_at, u.id));
        Ok(uploads)
    }

    async fn delete_direct_upload(&self, id: Uuid) -> StoreResult<()> {
        let deleted = self
            .client()
            .await?
            .execute(
                "DELETE FROM direct_uploads
                 WHERE id = $1 AND discarded_at IS NOT NULL AND document_id IS NULL",
                &[&id],
            )
            .await
            .map_err(backend)?;
        if deleted == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }
}
