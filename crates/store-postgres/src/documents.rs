//! Shipment documents: their metadata, links and search (the bytes live in object storage).

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use tidemark_domain::{AccountId, ApiKeyId, ContainerId, DomainEvent, NewJob, ShipmentId};
use tidemark_store::{
    DOCUMENT_BUCKET_SIZE, DirectUpload, DocumentClassification, DocumentFilter, DocumentSort,
    DocumentSortField, DocumentStore, LinkTargets, PageRequest, Paged, Representation, StoreError,
    StoreResult, StoredDocument,
};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::PgStore;
use crate::convert::{backend, on_unique, query_all, query_one};
use crate::tracking_requests::Condition;

const COLUMNS: &str = "d.id, d.account_id, d.uploaded_by, d.source, d.name, d.file_name, \
    d.content_type, d.size_bytes, d.sha256, d.storage_key, d.document_type, \
    d.document_type_manual, d.classification_notes, d.representation_id, \
    d.representation_version, d.representation, d.representation_at, d.created_at, d.updated_at";

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

fn conditions(account: AccountId, filter: &DocumentFilter) -> Condition {
    let mut condition = Condition::default();
    let placeholder = condition.bind(account.0);
    condition
        .clauses
        .push(format!("d.account_id = {placeholder}"));
    condition.clauses.push("d.deleted_at IS NULL".to_owned());
    if !filter.filename_terms.is_empty() {
        let last = filter.filename_terms.len() - 1;
        // Terms are letters and digits only, so they need no quoting in a tsquery.
        let query: Vec<String> = filter
            .filename_terms
            .iter()
            .enumerate()
            .map(|(i, term)| {
                if i == last {
                    format!("{term}:*")
                } else {
                    term.clone()
                }
            })
            .collect();
        let placeholder = condition.bind(query.join(" & "));
        condition
            .clauses
            .push(format!("d.search @@ to_tsquery('simple', {placeholder})"));
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

async fn list(
    client: &impl GenericClient,
    account: AccountId,
    filter: &DocumentFilter,
    sort: DocumentSort,
    page: PageRequest,
) -> StoreResult<Paged<StoredDocument>> {
    let mut condition = conditions(account, filter);
    let clauses = condition.clauses.join(" AND ");
    let total: i64 = if *filter == DocumentFilter::default() {
        let statement = client
            .prepare_cached("SELECT live FROM document_counts WHERE account_id = $1")
            .await
            .map_err(backend)?;
        match client
            .query_opt(&statement, &[&account.0])
            .await
            .map_err(backend)?
        {
            Some(row) => row.try_get(0).map_err(backend)?,
            None => 0,
        }
    } else {
        let statement = client
            .prepare_cached(&format!("SELECT count(*) FROM documents d WHERE {clauses}"))
            .await
            .map_err(backend)?;
        client
            .query_one(&statement, &condition.params())
            .await
            .map_err(backend)?
            .try_get(0)
            .map_err(backend)?
    };
    let order = order_by(sort);
    // Within the first bucket's worth, plain OFFSET skips as little as the buckets would.
    if *filter == DocumentFilter::default()
        && sort.field == DocumentSortField::CreatedAt
        && page.offset >= DOCUMENT_BUCKET_SIZE.unsigned_abs()
    {
        let mut documents = counted_page(client, account, sort.descending, page, &order).await?;
        load_links(client, &mut documents).await?;
        return Ok(Paged {
            items: documents,
            total: u64::try_from(total).map_err(backend)?,
        });
    }
    // With a file name search the few matches come from the GIN index; an order the
    // date index could give would tempt the planner to walk the whole account instead.
    let inner_order = if filter.filename_terms.is_empty() {
        order.clone()
    } else {
        order.replace("d.seq", "(d.seq + 0)")
    };
    let limit = condition.bind(i64::from(page.limit));
    let offset = condition.bind(i64::try_from(page.offset).unwrap_or(i64::MAX));
    // Deferred join: the page's ids come from an index alone (an index-only scan), then
    // only those rows are read.
    let statement = client
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM (SELECT d.id AS page_id FROM documents d
                WHERE {clauses} ORDER BY {inner_order} LIMIT {limit} OFFSET {offset}) p
             JOIN documents d ON d.id = p.page_id
             ORDER BY {order}"
        ))
        .await
        .map_err(backend)?;
    let mut documents = client
        .query(&statement, &condition.params())
        .await
        .map_err(backend)?
        .iter()
        .map(from_row)
        .collect::<StoreResult<Vec<_>>>()?;
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
                document_type_manual, classification_notes, created_at, updated_at, seq)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
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
        ],
    )
    .await
    .map_err(|e| on_unique(e, "documents_content"))?;
    add_links(tx, d.account_id, d.id, &d.shipment_ids, &d.container_ids).await?;
    change_counts(tx, d.account_id, seq, 1).await?;
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
            let changed = tx
                .execute(
                    "UPDATE documents SET name = $3, document_type_manual = $4, updated_at = $5
                     WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL",
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
            if changed == 0 {
                return Err(StoreError::NotFound);
            }
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
            let seq: i64 = tx
                .query_opt(
                    "UPDATE documents SET deleted_at = $3, updated_at = $3
                     WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL
                     RETURNING seq",
                    &[&id, &account.0, &at],
                )
                .await
                .map_err(backend)?
                .ok_or(StoreError::NotFound)?
                .try_get(0)
                .map_err(backend)?;
            change_counts(&tx, account, seq, -1).await?;
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
