//! The [`DocumentStore`](crate::DocumentStore) part of the contract.

use chrono::Duration;
use tidemark_domain::{
    AccountId, ApiKeyId, DomainEvent, DomainEventId, IdGenerator, JobId, JobState, NewJob,
    SequentialIds, ShipmentId,
};
use uuid::Uuid;

use super::{TestBackend, account_in, departed_voyage, t0, tracked};
use crate::{
    DOCUMENT_BUCKET_SIZE, DirectUpload, DocumentClassification, DocumentFilter, DocumentSort,
    DocumentSortField, DocumentStore, EmailSubmission, MailboxCursor, PageRequest, Representation,
    StoreError, StoredDocument, search_words,
};

/// Expands this part's cases; called by [`store_contract_tests!`](crate::store_contract_tests).
#[macro_export]
macro_rules! document_contract_tests {
    ($backend:path) => {
        $crate::store_contract_tests!(@cases_in documents $backend;
            a_document_is_stored_and_read_back_with_its_links,
            the_same_content_twice_in_an_account_is_a_conflict,
            a_deleted_document_is_gone_and_its_content_may_come_again,
            another_accounts_document_and_shipments_are_out_of_reach,
            documents_are_paged_newest_first_with_a_total,
            far_pages_match_a_plain_ordered_scan_across_buckets_and_deletions,
            documents_are_found_by_file_name_words,
            file_name_searches_count_and_page_only_the_accounts_live_documents,
            file_name_searches_combine_with_type_filters_and_other_sorts,
            the_last_search_term_is_a_prefix_and_the_others_whole_words,
            a_renamed_document_is_found_by_its_new_name_and_no_longer_by_its_old_one,
            documents_are_filtered_by_type_and_sorted_by_type,
            type_filter_totals_follow_classification_retyping_and_deletion,
            documents_are_found_by_the_numbers_of_linked_shipments_and_containers,
            a_classification_is_recorded_with_its_links_and_events,
            a_direct_upload_makes_one_document_only,
            link_targets_are_found_by_bl_and_container_numbers,
            a_documents_job_is_queued_with_it_and_only_if_it_is_stored,
            expired_direct_uploads_are_discarded_unless_they_made_a_document,
            a_discarded_direct_upload_makes_no_document_and_its_row_can_be_deleted,
            a_mailbox_message_is_recorded_as_one_email_submission_only,
            a_mailbox_cursor_moves_forward_and_starts_over_under_a_new_uid_validity,
        );
    };
}

const FIRST_PAGE: PageRequest = PageRequest {
    offset: 0,
    limit: 100,
};

fn document(
    ids: &SequentialIds,
    account: AccountId,
    file_name: &str,
    minute: i64,
) -> StoredDocument {
    let id = ids.next_id();
    StoredDocument {
        id,
        account_id: account,
        uploaded_by: Some(ApiKeyId(Uuid::from_u128(9))),
        source: "upload".to_owned(),
        name: file_name.to_owned(),
        file_name: file_name.to_owned(),
        content_type: "application/pdf".to_owned(),
        size_bytes: 1234,
        sha256: format!("{:064x}", id.as_u128()),
        storage_key: format!("accounts/{}/documents/{id}.pdf", account.0),
        document_type: None,
        document_type_manual: None,
        classification_notes: None,
        representation: None,
        shipment_ids: Vec::new(),
        container_ids: Vec::new(),
        email_submission_id: None,
        created_at: t0() + Duration::minutes(minute),
        updated_at: t0() + Duration::minutes(minute),
    }
}

fn by_words(words: &[&str]) -> DocumentFilter {
    DocumentFilter {
        filename_terms: words.iter().map(|w| (*w).to_owned()).collect(),
        ..DocumentFilter::default()
    }
}

fn names(page: &crate::Paged<StoredDocument>) -> Vec<&str> {
    page.items.iter().map(|d| d.file_name.as_str()).collect()
}

/// Uploads documents with these file names, a minute apart.
async fn upload_named(
    store: &dyn DocumentStore,
    ids: &SequentialIds,
    account: AccountId,
    file_names: &[&str],
) {
    for (minute, file_name) in file_names.iter().enumerate() {
        let d = document(ids, account, file_name, i64::try_from(minute).unwrap());
        store.insert_document(&d, None).await.unwrap();
    }
}

/// The file names a search finds (its first page, newest first), checked against its total.
async fn found(store: &dyn DocumentStore, account: AccountId, words: &[&str]) -> Vec<String> {
    let page = store
        .list_documents(
            account,
            &by_words(words),
            DocumentSort::default(),
            FIRST_PAGE,
        )
        .await
        .unwrap();
    assert_eq!(page.total as usize, page.items.len(), "{words:?}");
    page.items.into_iter().map(|d| d.file_name).collect()
}

pub async fn a_document_is_stored_and_read_back_with_its_links(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, update) = tracked(
        store.as_ref(),
        &ids,
        acme,
        "MAEU123456789",
        departed_voyage(),
    )
    .await;
    let mut stored = document(&ids, acme, "BL MAEU123456789.pdf", 0);
    stored.shipment_ids = vec![update.shipment.id];
    stored.container_ids = vec![update.new_containers[0].id];

    store.insert_document(&stored, None).await.unwrap();

    assert_eq!(store.document(acme, stored.id).await.unwrap(), stored);
}

pub async fn the_same_content_twice_in_an_account_is_a_conflict(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let globex = account_in(store.as_ref(), &ids, "globex").await;
    let first = document(&ids, acme, "a.pdf", 0);
    store.insert_document(&first, None).await.unwrap();

    let mut again = document(&ids, acme, "b.pdf", 1);
    again.sha256.clone_from(&first.sha256);
    let mut elsewhere = document(&ids, globex, "a.pdf", 1);
    elsewhere.sha256.clone_from(&first.sha256);

    assert!(matches!(
        store.insert_document(&again, None).await,
        Err(StoreError::Conflict {
            constraint: "documents_content"
        })
    ));
    assert_eq!(
        store
            .document_with_content(acme, &first.sha256)
            .await
            .unwrap(),
        Some(first.id)
    );
    store.insert_document(&elsewhere, None).await.unwrap();
    assert_eq!(
        store
            .list_documents(
                acme,
                &DocumentFilter::default(),
                DocumentSort::default(),
                FIRST_PAGE
            )
            .await
            .unwrap()
            .total,
        1
    );
}

pub async fn a_deleted_document_is_gone_and_its_content_may_come_again(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let first = document(&ids, acme, "a.pdf", 0);
    store.insert_document(&first, None).await.unwrap();

    store
        .delete_document(acme, first.id, t0() + Duration::hours(1))
        .await
        .unwrap();

    assert!(matches!(
        store.document(acme, first.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store
            .delete_document(acme, first.id, t0() + Duration::hours(2))
            .await,
        Err(StoreError::NotFound)
    ));
    let listed = store
        .list_documents(
            acme,
            &DocumentFilter::default(),
            DocumentSort::default(),
            FIRST_PAGE,
        )
        .await
        .unwrap();
    assert_eq!((listed.items.len(), listed.total), (0, 0));
    let mut again = document(&ids, acme, "a.pdf", 5);
    again.sha256.clone_from(&first.sha256);
    store.insert_document(&again, None).await.unwrap();
}

pub async fn another_accounts_document_and_shipments_are_out_of_reach(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let globex = account_in(store.as_ref(), &ids, "globex").await;
    let (_, theirs) = tracked(
        store.as_ref(),
        &ids,
        globex,
        "MAEU999999999",
        departed_voyage(),
    )
    .await;
    let mine = document(&ids, acme, "a.pdf", 0);
    store.insert_document(&mine, None).await.unwrap();

    let mut linked_to_theirs = document(&ids, acme, "b.pdf", 1);
    linked_to_theirs.shipment_ids = vec![theirs.shipment.id];

    assert!(matches!(
        store.document(globex, mine.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.delete_document(globex, mine.id, t0()).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.insert_document(&linked_to_theirs, None).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.document(acme, linked_to_theirs.id).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn documents_are_paged_newest_first_with_a_total(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    for minute in 0..5 {
        let d = document(&ids, acme, &format!("doc{minute}.pdf"), minute);
        store.insert_document(&d, None).await.unwrap();
    }

    let page = store
        .list_documents(
            acme,
            &DocumentFilter::default(),
            DocumentSort::default(),
            PageRequest {
                offset: 2,
                limit: 2,
            },
        )
        .await
        .unwrap();
    let oldest_first = store
        .list_documents(
            acme,
            &DocumentFilter::default(),
            DocumentSort {
                field: DocumentSortField::CreatedAt,
                descending: false,
            },
            PageRequest {
                offset: 0,
                limit: 1,
            },
        )
        .await
        .unwrap();

    assert_eq!(names(&page), ["doc2.pdf", "doc1.pdf"]);
    assert_eq!(page.total, 5);
    assert_eq!(names(&oldest_first), ["doc0.pdf"]);
}

pub async fn far_pages_match_a_plain_ordered_scan_across_buckets_and_deletions(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let size = usize::try_from(DOCUMENT_BUCKET_SIZE).unwrap();
    // Three buckets and a part: pages start and end inside buckets and across their bounds.
    let count = 2 * size + size / 2 + 7;
    let mut live = Vec::new();
    for i in 0..count {
        let d = document(
            &ids,
            acme,
            &format!("doc{i}.pdf"),
            i64::try_from(i).unwrap(),
        );
        store.insert_document(&d, None).await.unwrap();
        live.push(d.id);
        if i % 97 == 0 {
            // Another account's uploads interleave but count only for it.
            let theirs = document(&ids, other, "theirs.pdf", i64::try_from(i).unwrap());
            store.insert_document(&theirs, None).await.unwrap();
        }
    }
    // Deletions: scattered, a run across the first bucket bound, and the whole second
    // bucket but one, so some buckets hold few or no live documents.
    let mut deleted: Vec<usize> = (0..count).filter(|i| i % 13 == 5).collect();
    deleted.extend(size - 40..size + 40);
    deleted.extend(size..2 * size - 1);
    deleted.sort_unstable();
    deleted.dedup();
    for &i in &deleted {
        store
            .delete_document(acme, live[i], t0() + Duration::days(30))
            .await
            .unwrap();
    }
    let oldest_first: Vec<Uuid> = live
        .iter()
        .enumerate()
        .filter(|(i, _)| deleted.binary_search(i).is_err())
        .map(|(_, id)| *id)
        .collect();
    let newest_first: Vec<Uuid> = oldest_first.iter().rev().copied().collect();

    for (descending, expected) in [(true, &newest_first), (false, &oldest_first)] {
        for limit in [30_u32, 100] {
            let mut offset = 0;
            while offset <= expected.len() + 30 {
                let page = store
                    .list_documents(
                        acme,
                        &DocumentFilter::default(),
                        DocumentSort {
                            field: DocumentSortField::CreatedAt,
                            descending,
                        },
                        PageRequest {
                            offset: u64::try_from(offset).unwrap(),
                            limit,
                        },
                    )
                    .await
                    .unwrap();
                let got: Vec<Uuid> = page.items.iter().map(|d| d.id).collect();
                let end = (offset + usize::try_from(limit).unwrap()).min(expected.len());
                let want = expected.get(offset..end).unwrap_or_default();
                assert_eq!(
                    got, want,
                    "descending {descending}, offset {offset}, limit {limit}"
                );
                assert_eq!(page.total, u64::try_from(expected.len()).unwrap());
                offset += usize::try_from(limit).unwrap() - 7;
            }
        }
    }
}

pub async fn documents_are_found_by_file_name_words(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let names = [
        "BL_MAEU123456789.pdf",
        "Arrival Notice MSCU.pdf",
        "invoice-2026-03.pdf",
    ];
    upload_named(store.as_ref(), &ids, acme, &names).await;

    let find = |words| found(store.as_ref(), acme, words);
    assert_eq!(find(&["maeu123456789"]).await, ["BL_MAEU123456789.pdf"]);
    assert_eq!(
        find(&["arrival", "notice"]).await,
        ["Arrival Notice MSCU.pdf"]
    );
    assert_eq!(find(&["invo"]).await, ["invoice-2026-03.pdf"]);
    assert_eq!(find(&["pdf"]).await.len(), 3);
    assert!(find(&["notice", "invoice"]).await.is_empty());
}

/// A search fixture: one account's documents under a few shared words (some documents with
/// two words of one prefix, some named apart from their file), another account with the
/// same names, deletions and renames. Returns the store, the account and its live
/// documents in upload order, as the store should now see them.
async fn searched_documents(
    backend: &dyn TestBackend,
) -> (
    std::sync::Arc<dyn crate::Store>,
    AccountId,
    Vec<StoredDocument>,
) {
    let store = backend.store();
    let ids = &SequentialIds::default();
    let acme = account_in(store.as_ref(), ids, "acme").await;
    let other = account_in(store.as_ref(), ids, "other").await;
    const TYPES: [&str; 3] = ["commercial_invoice", "arrival_notice", "packing_list"];
    let mut live = Vec::new();
    for i in 0..70_usize {
        let (file_name, name) = match i % 5 {
            0 => (format!("invoice_MAEU{i:04}.pdf"), None),
            1 => (format!("invoices-march {i}.pdf"), None),
            2 => (format!("Arrival Notice MSCU{i:04}.pdf"), None),
            3 => (format!("invoice+invoices {i}.pdf"), None),
            _ => (
                format!("scan_{i}.PDF"),
                Some(format!("notice of arrival {i}")),
            ),
        };
        let minute = i64::try_from(i).unwrap();
        for account in [acme, other] {
            let mut d = document(ids, account, &file_name, minute);
            if let Some(name) = &name {
                d.name.clone_from(name);
            }
            d.document_type = Some(TYPES[i % TYPES.len()].to_owned());
            store.insert_document(&d, None).await.unwrap();
            if account == acme {
                live.push(d);
            }
        }
    }
    // Deleted documents leave every search; renamed ones (name only: the file name keeps
    // its words) are found by their new words only.
    let mut kept = Vec::new();
    for (i, mut d) in live.into_iter().enumerate() {
        if i % 7 == 3 {
            store
                .delete_document(acme, d.id, t0() + Duration::days(1))
                .await
                .unwrap();
            continue;
        }
        if i % 5 == 4 && i % 2 == 0 {
            d.name = format!("Bill of lading {i}");
            d.updated_at = t0() + Duration::days(1);
            store.update_document(&d).await.unwrap();
        }
        kept.push(d);
    }
    (store, acme, kept)
}

/// Whether a live document matches search `terms` by the rule of `filter[filename]`: every
/// term a whole word of its file name or name, the last one the start of a word.
fn matches_terms(d: &StoredDocument, terms: &[&str]) -> bool {
    let words: Vec<String> = search_words(&d.file_name)
        .chain(search_words(&d.name))
        .collect();
    let Some((last, whole)) = terms.split_last() else {
        return true;
    };
    whole.iter().all(|t| words.iter().any(|w| w == t)) && words.iter().any(|w| w.starts_with(last))
}

/// Lists with `filter` and `sort` page by page (pages of 4 starting at several offsets)
/// and checks each page and the total against `expected` (the matches in `sort`'s order).
async fn assert_pages(
    store: &dyn DocumentStore,
    acme: AccountId,
    filter: &DocumentFilter,
    sort: DocumentSort,
    expected: &[Uuid],
) {
    for offset in [
        0_usize,
        3,
        4,
        9,
        expected.len().saturating_sub(2),
        expected.len(),
    ] {
        let page = store
            .list_documents(
                acme,
                filter,
                sort,
                PageRequest {
                    offset: u64::try_from(offset).unwrap(),
                    limit: 4,
                },
            )
            .await
            .unwrap();
        let got: Vec<Uuid> = page.items.iter().map(|d| d.id).collect();
        let want = expected
            .get(offset..(offset + 4).min(expected.len()))
            .unwrap_or_default();
        assert_eq!(got, want, "{filter:?}, {sort:?}, offset {offset}");
        assert_eq!(
            page.total,
            u64::try_from(expected.len()).unwrap(),
            "{filter:?}, {sort:?}"
        );
    }
}

const SEARCHES: [&[&str]; 18] = [
    &["invoice"],
    &["inv"],
    &["invoices"],
    &["i"],
    &["pdf"],
    &["maeu00"],
    &["arrival", "notice"],
    &["notice", "arr"],
    &["invoice", "invoices"],
    &["pdf", "inv"],
    &["notice", "of"],
    &["bill", "of", "lading"],
    &["scan"],
    &["nothing"],
    &["invoice", "nothing"],
    &["invo", "pdf"],
    &["of", "a"],
    &["maeu0000", "pdf"],
];

pub async fn file_name_searches_count_and_page_only_the_accounts_live_documents(
    backend: &dyn TestBackend,
) {
    let (store, acme, live) = searched_documents(backend).await;

    for terms in SEARCHES {
        let oldest_first: Vec<Uuid> = live
            .iter()
            .filter(|d| matches_terms(d, terms))
            .map(|d| d.id)
            .collect();
        let newest_first: Vec<Uuid> = oldest_first.iter().rev().copied().collect();
        for (descending, expected) in [(true, &newest_first), (false, &oldest_first)] {
            let sort = DocumentSort {
                field: DocumentSortField::CreatedAt,
                descending,
            };
            assert_pages(store.as_ref(), acme, &by_words(terms), sort, expected).await;
        }
    }
}

pub async fn file_name_searches_combine_with_type_filters_and_other_sorts(
    backend: &dyn TestBackend,
) {
    let (store, acme, live) = searched_documents(backend).await;
    let by_type = |d: &&StoredDocument| d.document_type.clone().unwrap_or_default();

    for terms in SEARCHES {
        // Sorted by type, then upload order.
        let mut matched: Vec<&StoredDocument> =
            live.iter().filter(|d| matches_terms(d, terms)).collect();
        matched.sort_by_key(by_type);
        let by_type_order: Vec<Uuid> = matched.iter().map(|d| d.id).collect();
        let sort = DocumentSort {
            field: DocumentSortField::DocumentType,
            descending: false,
        };
        assert_pages(store.as_ref(), acme, &by_words(terms), sort, &by_type_order).await;

        // With a type filter, newest first.
        let arrival_notices: Vec<Uuid> = live
            .iter()
            .rev()
            .filter(|d| matches_terms(d, terms))
            .filter(|d| d.document_type.as_deref() == Some("arrival_notice"))
            .map(|d| d.id)
            .collect();
        let filter = DocumentFilter {
            document_types: vec!["arrival_notice".to_owned()],
            ..by_words(terms)
        };
        assert_pages(
            store.as_ref(),
            acme,
            &filter,
            DocumentSort::default(),
            &arrival_notices,
        )
        .await;
    }
}

pub async fn the_last_search_term_is_a_prefix_and_the_others_whole_words(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let names = ["invoice 1.pdf", "invoices 2.pdf", "invoice-invoices 3.pdf"];
    upload_named(store.as_ref(), &ids, acme, &names).await;

    let find = |words| found(store.as_ref(), acme, words);
    // A document with two words of the prefix is one match.
    assert_eq!(
        find(&["invo"]).await,
        ["invoice-invoices 3.pdf", "invoices 2.pdf", "invoice 1.pdf"]
    );
    assert_eq!(
        find(&["invoices"]).await,
        ["invoice-invoices 3.pdf", "invoices 2.pdf"]
    );
    // Before the last, a term is a whole word: "invoice" is not "invoices".
    assert_eq!(
        find(&["invoice", "pdf"]).await,
        ["invoice-invoices 3.pdf", "invoice 1.pdf"]
    );
    assert!(find(&["invo", "pdf"]).await.is_empty());
    assert_eq!(
        find(&["invoices", "invoice"]).await,
        ["invoice-invoices 3.pdf", "invoices 2.pdf"]
    );
}

pub async fn a_renamed_document_is_found_by_its_new_name_and_no_longer_by_its_old_one(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let mut renamed = document(&ids, acme, "scan_0001.pdf", 0);
    renamed.name = "Draft arrival notice".to_owned();
    store.insert_document(&renamed, None).await.unwrap();
    let kept = document(&ids, acme, "arrival notice MSCU.pdf", 1);
    store.insert_document(&kept, None).await.unwrap();

    renamed.name = "Final arrival notice, signed".to_owned();
    renamed.updated_at = t0() + Duration::hours(1);
    store.update_document(&renamed).await.unwrap();

    let find = |words| found(store.as_ref(), acme, words);
    assert!(find(&["draft"]).await.is_empty());
    assert_eq!(find(&["final"]).await, ["scan_0001.pdf"]);
    assert_eq!(find(&["signed"]).await, ["scan_0001.pdf"]);
    assert_eq!(
        find(&["arrival", "notice"]).await,
        ["arrival notice MSCU.pdf", "scan_0001.pdf"]
    );
    assert_eq!(
        find(&["scan"]).await,
        ["scan_0001.pdf"],
        "the file name keeps its words"
    );
}

pub async fn documents_are_filtered_by_type_and_sorted_by_type(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let mut expected = Vec::new();
    for (minute, kind) in ["packing_list", "arrival_notice", "bill_of_lading"]
        .into_iter()
        .enumerate()
    {
        let d = document(
            &ids,
            acme,
            &format!("{kind}.pdf"),
            i64::try_from(minute).unwrap(),
        );
        store.insert_document(&d, None).await.unwrap();
        store
            .record_document_classification(
                acme,
                d.id,
                &DocumentClassification {
                    document_type: kind.to_owned(),
                    classification_notes: "test".to_owned(),
                    representation: None,
                    shipment_ids: Vec::new(),
                    container_ids: Vec::new(),
                    at: t0() + Duration::hours(1),
                },
                &[],
            )
            .await
            .unwrap();
        expected.push(d);
    }
    // A manual type wins over the classified one.
    let mut manual = expected[0].clone();
    manual.document_type_manual = Some("commercial_invoice".to_owned());
    manual.updated_at = t0() + Duration::hours(2);
    store.update_document(&manual).await.unwrap();

    let filtered = store
        .list_documents(
            acme,
            &DocumentFilter {
                document_types: vec!["bill_of_lading".to_owned(), "commercial_invoice".to_owned()],
                ..DocumentFilter::default()
            },
            DocumentSort {
                field: DocumentSortField::DocumentType,
                descending: false,
            },
            FIRST_PAGE,
        )
        .await
        .unwrap();

    assert_eq!(names(&filtered), ["bill_of_lading.pdf", "packing_list.pdf"]);
    assert_eq!(filtered.total, 2);
    assert_eq!(
        filtered.items[1].document_type_manual.as_deref(),
        Some("commercial_invoice")
    );
}

fn classified_as(document_type: &str) -> DocumentClassification {
    DocumentClassification {
        document_type: document_type.to_owned(),
        classification_notes: "test".to_owned(),
        representation: None,
        shipment_ids: Vec::new(),
        container_ids: Vec::new(),
        at: t0() + Duration::hours(1),
    }
}

pub async fn type_filter_totals_follow_classification_retyping_and_deletion(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let other = account_in(store.as_ref(), &ids, "other").await;
    let [a, mut b, c] =
        [0, 1, 2].map(|minute| document(&ids, acme, &format!("{minute}.pdf"), minute));
    for d in [&a, &b, &c] {
        store.insert_document(d, None).await.unwrap();
    }
    let mut typed_at_upload = document(&ids, acme, "3.pdf", 3);
    typed_at_upload.document_type = Some("packing_list".to_owned());
    store.insert_document(&typed_at_upload, None).await.unwrap();
    let theirs = document(&ids, other, "theirs.pdf", 0);
    store.insert_document(&theirs, None).await.unwrap();
    for (account, id, kind) in [
        (acme, a.id, "bill_of_lading"),
        (acme, b.id, "bill_of_lading"),
        (acme, c.id, "arrival_notice"),
        (other, theirs.id, "bill_of_lading"),
    ] {
        store
            .record_document_classification(account, id, &classified_as(kind), &[])
            .await
            .unwrap();
    }
    let totals = || {
        let store = store.clone();
        async move {
            let mut totals = Vec::new();
            for types in [
                &["bill_of_lading"][..],
                &["arrival_notice"],
                &["packing_list"],
                &["bill_of_lading", "arrival_notice", "bill_of_lading"],
            ] {
                let filter = DocumentFilter {
                    document_types: types.iter().map(|t| (*t).to_owned()).collect(),
                    ..DocumentFilter::default()
                };
                let page = store
                    .list_documents(acme, &filter, DocumentSort::default(), FIRST_PAGE)
                    .await
                    .unwrap();
                assert_eq!(page.total as usize, page.items.len(), "{types:?}");
                totals.push(page.total);
            }
            totals
        }
    };
    assert_eq!(totals().await, [2, 1, 1, 3]);

    // A manual type wins, whatever a later classification says.
    b.document_type_manual = Some("arrival_notice".to_owned());
    store.update_document(&b).await.unwrap();
    assert_eq!(totals().await, [1, 2, 1, 3]);
    store
        .record_document_classification(acme, b.id, &classified_as("packing_list"), &[])
        .await
        .unwrap();
    assert_eq!(totals().await, [1, 2, 1, 3]);

    // Without it, the classified type counts again.
    b.document_type_manual = None;
    store.update_document(&b).await.unwrap();
    assert_eq!(totals().await, [1, 1, 2, 2]);

    store
        .delete_document(acme, c.id, t0() + Duration::days(1))
        .await
        .unwrap();
    store
        .delete_document(acme, typed_at_upload.id, t0() + Duration::days(1))
        .await
        .unwrap();
    assert_eq!(totals().await, [1, 0, 1, 1]);
}

pub async fn documents_are_found_by_the_numbers_of_linked_shipments_and_containers(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, update) = tracked(
        store.as_ref(),
        &ids,
        acme,
        "MAEU123456789",
        departed_voyage(),
    )
    .await;
    let container = update.new_containers[0].clone();
    let mut by_shipment = document(&ids, acme, "shipment.pdf", 0);
    by_shipment.shipment_ids = vec![update.shipment.id];
    let mut by_container = document(&ids, acme, "container.pdf", 1);
    by_container.container_ids = vec![container.id];
    let unlinked = document(&ids, acme, "unlinked.pdf", 2);
    for d in [&by_shipment, &by_container, &unlinked] {
        store.insert_document(d, None).await.unwrap();
    }

    let find = |reference: &str| {
        let store = store.clone();
        let filter = DocumentFilter {
            reference: Some(reference.to_owned()),
            ..DocumentFilter::default()
        };
        async move {
            let mut found: Vec<String> = store
                .list_documents(acme, &filter, DocumentSort::default(), FIRST_PAGE)
                .await
                .unwrap()
                .items
                .into_iter()
                .map(|d| d.file_name)
                .collect();
            found.sort();
            found
        }
    };
    // The shipment's numbers find its documents and its containers'.
    assert_eq!(
        find("MAEU123456789").await,
        ["container.pdf", "shipment.pdf"]
    );
    assert_eq!(find("PO-1").await, ["container.pdf", "shipment.pdf"]);
    // A container's number finds documents of the container and of its shipment.
    assert_eq!(
        find(&container.number).await,
        ["container.pdf", "shipment.pdf"]
    );
    assert!(find("NOTHING1234").await.is_empty());
}

pub async fn a_classification_is_recorded_with_its_links_and_events(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let (_, update) = tracked(
        store.as_ref(),
        &ids,
        acme,
        "MAEU123456789",
        departed_voyage(),
    )
    .await;
    let d = document(&ids, acme, "bl.pdf", 0);
    store.insert_document(&d, None).await.unwrap();
    let at = t0() + Duration::hours(3);
    let representation = Representation {
        id: ids.next_id(),
        schema_version: "tidemark.v1".to_owned(),
        payload: serde_json::json!({"bill_of_lading_numbers": ["MAEU123456789"]}),
        created_at: at,
    };
    let event = DomainEvent {
        id: DomainEventId::new(&ids),
        account_id: acme,
        event: "document.extracted".to_owned(),
        reference_type: "document".to_owned(),
        reference_id: d.id,
        shipment_id: None,
        container_id: None,
        payload: None,
        created_at: at,
    };

    store
        .record_document_classification(
            acme,
            d.id,
            &DocumentClassification {
                document_type: "bill_of_lading".to_owned(),
                classification_notes: "title says so".to_owned(),
                representation: Some(representation.clone()),
                shipment_ids: vec![update.shipment.id, update.shipment.id],
                container_ids: vec![update.new_containers[0].id],
                at,
            },
            std::slice::from_ref(&event),
        )
        .await
        .unwrap();

    let read = store.document(acme, d.id).await.unwrap();
    assert_eq!(read.document_type.as_deref(), Some("bill_of_lading"));
    assert_eq!(read.classification_notes.as_deref(), Some("title says so"));
    assert_eq!(read.representation, Some(representation));
    assert_eq!(read.shipment_ids, vec![update.shipment.id]);
    assert_eq!(read.container_ids, vec![update.new_containers[0].id]);
    assert_eq!(read.updated_at, at);
    let events = store.domain_events(acme, None, 100).await.unwrap();
    assert!(events.contains(&event));
    assert!(matches!(
        store
            .record_document_classification(
                acme,
                ids.next_id(),
                &DocumentClassification {
                    document_type: "unknown".to_owned(),
                    classification_notes: String::new(),
                    representation: None,
                    shipment_ids: Vec::new(),
                    container_ids: Vec::new(),
                    at,
                },
                &[],
            )
            .await,
        Err(StoreError::NotFound)
    ));
}

pub async fn a_direct_upload_makes_one_document_only(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let upload = DirectUpload {
        id: ids.next_id(),
        account_id: acme,
        created_by: None,
        file_name: "bl.pdf".to_owned(),
        declared_content_type: "application/pdf".to_owned(),
        byte_size: 1234,
        checksum: "1B2M2Y8AsgTpgAmY7PhCfg==".to_owned(),
        storage_key: "uploads/x".to_owned(),
        uploaded_at: None,
        document_id: None,
        created_at: t0(),
        expires_at: t0() + Duration::days(1),
    };
    store.create_direct_upload(&upload).await.unwrap();
    store
        .mark_direct_upload_uploaded(upload.id, t0() + Duration::minutes(1))
        .await
        .unwrap();
    let first = document(&ids, acme, "bl.pdf", 2);
    let second = document(&ids, acme, "bl-again.pdf", 3);

    store
        .insert_document(&first, Some(upload.id))
        .await
        .unwrap();
    let reused = store.insert_document(&second, Some(upload.id)).await;

    assert!(matches!(
        reused,
        Err(StoreError::Conflict {
            constraint: "direct_upload_used"
        })
    ));
    let read = store.direct_upload(upload.id).await.unwrap();
    assert_eq!(read.uploaded_at, Some(t0() + Duration::minutes(1)));
    assert_eq!(read.document_id, Some(first.id));
    assert!(matches!(
        store.document(acme, second.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.direct_upload(ids.next_id()).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn link_targets_are_found_by_bl_and_container_numbers(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let globex = account_in(store.as_ref(), &ids, "globex").await;
    let (_, update) = tracked(
        store.as_ref(),
        &ids,
        acme,
        "MAEU123456789",
        departed_voyage(),
    )
    .await;
    tracked(
        store.as_ref(),
        &ids,
        globex,
        "MAEU555555555",
        departed_voyage(),
    )
    .await;
    let container = &update.new_containers[0];

    let targets = store
        .link_targets(
            acme,
            &["MAEU123456789".to_owned(), "MAEU555555555".to_owned()],
            std::slice::from_ref(&container.number),
        )
        .await
        .unwrap();

    let shipment: ShipmentId = update.shipment.id;
    assert_eq!(
        targets.shipments,
        vec![(shipment, update.shipment.normalized_number.clone())]
    );
    assert_eq!(
        targets.containers,
        vec![(container.id, shipment, container.number.clone())]
    );
    assert!(
        store
            .link_targets(acme, &[], &[])
            .await
            .unwrap()
            .shipments
            .is_empty()
    );
}

fn classification_job(ids: &SequentialIds, document: &StoredDocument) -> NewJob {
    NewJob {
        id: JobId::new(ids),
        kind: "process_document".to_owned(),
        payload: serde_json::json!({"document_id": document.id}),
        dedup_key: Some(format!("document:{}", document.id)),
        run_at: document.created_at,
        max_attempts: 10,
    }
}

fn direct_upload(
    ids: &SequentialIds,
    account: AccountId,
    expires_at: chrono::DateTime<chrono::Utc>,
) -> DirectUpload {
    let id = ids.next_id();
    DirectUpload {
        id,
        account_id: account,
        created_by: None,
        file_name: "bl.pdf".to_owned(),
        declared_content_type: "application/pdf".to_owned(),
        byte_size: 1234,
        checksum: "1B2M2Y8AsgTpgAmY7PhCfg==".to_owned(),
        storage_key: format!("accounts/{}/documents/{id}", account.0),
        uploaded_at: None,
        document_id: None,
        created_at: t0(),
        expires_at,
    }
}

pub async fn a_documents_job_is_queued_with_it_and_only_if_it_is_stored(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let stored = document(&ids, acme, "a.pdf", 5);
    let job = classification_job(&ids, &stored);
    let mut duplicate = document(&ids, acme, "b.pdf", 6);
    duplicate.sha256.clone_from(&stored.sha256);
    let refused_job = classification_job(&ids, &duplicate);

    store
        .insert_document_with_job(&stored, None, Some(&job))
        .await
        .unwrap();
    let refused = store
        .insert_document_with_job(&duplicate, None, Some(&refused_job))
        .await;

    let queued = backend.reopen().await.job(job.id).await.unwrap();
    assert_eq!(queued.state, JobState::Queued);
    assert_eq!(queued.kind, "process_document");
    assert_eq!(queued.payload, job.payload);
    assert_eq!(queued.dedup_key, job.dedup_key);
    assert_eq!(queued.run_at, stored.created_at);
    assert!(matches!(
        refused,
        Err(StoreError::Conflict {
            constraint: "documents_content"
        })
    ));
    assert!(matches!(
        store.job(refused_job.id).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn expired_direct_uploads_are_discarded_unless_they_made_a_document(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let abandoned = direct_upload(&ids, acme, t0() + Duration::minutes(15));
    let attached = direct_upload(&ids, acme, t0() + Duration::minutes(10));
    let fresh = direct_upload(&ids, acme, t0() + Duration::hours(3));
    for upload in [&abandoned, &attached, &fresh] {
        store.create_direct_upload(upload).await.unwrap();
    }
    let document = document(&ids, acme, "attached.pdf", 1);
    store
        .insert_document(&document, Some(attached.id))
        .await
        .unwrap();
    let now = t0() + Duration::hours(2);

    let discarded = store
        .discard_expired_direct_uploads(now, now, 100)
        .await
        .unwrap();
    let again = store
        .discard_expired_direct_uploads(now, now + Duration::hours(1), 100)
        .await
        .unwrap();

    assert_eq!(discarded, vec![abandoned.clone()]);
    assert_eq!(
        again,
        vec![abandoned.clone()],
        "a discarded upload is found again until its row is deleted"
    );
    assert_eq!(
        store.direct_upload(attached.id).await.unwrap().document_id,
        Some(document.id)
    );
    assert!(store.direct_upload(fresh.id).await.is_ok());
    assert!(matches!(
        store.delete_direct_upload(attached.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.delete_direct_upload(fresh.id).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn a_discarded_direct_upload_makes_no_document_and_its_row_can_be_deleted(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let uploads: Vec<DirectUpload> = (1..=3)
        .map(|minute| direct_upload(&ids, acme, t0() + Duration::minutes(minute)))
        .collect();
    for upload in &uploads {
        store.create_direct_upload(upload).await.unwrap();
    }
    let now = t0() + Duration::hours(1);
    let first_two = store
        .discard_expired_direct_uploads(now, now, 2)
        .await
        .unwrap();
    let late = document(&ids, acme, "late.pdf", 61);
    let late_job = classification_job(&ids, &late);

    let attached = store
        .insert_document_with_job(&late, Some(uploads[0].id), Some(&late_job))
        .await;
    store.delete_direct_upload(uploads[0].id).await.unwrap();
    let after_delete = store.insert_document(&late, Some(uploads[0].id)).await;

    assert_eq!(
        first_two,
        uploads[..2].to_vec(),
        "oldest first, at most the limit"
    );
    assert!(matches!(
        attached,
        Err(StoreError::Conflict {
            constraint: "direct_upload_expired"
        })
    ));
    assert!(matches!(
        store.job(late_job.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.document(acme, late.id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store.direct_upload(uploads[0].id).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        after_delete,
        Err(StoreError::Conflict {
            constraint: "direct_upload_expired"
        })
    ));
    assert_eq!(
        store
            .discard_expired_direct_uploads(now, now, 100)
            .await
            .unwrap(),
        uploads[1..].to_vec()
    );
}

/// Checks a store upgraded from release 15 (migration 16 wrote the word index and the type
/// counts of the documents already there). Before the upgrade the account `acme` held, in
/// upload order: `invoice_MAEU1.pdf`; a document named `Invoice March` (file `scan.pdf`);
/// `invoice_old.pdf`, deleted; these three commercial invoices; and `Arrival Notice.pdf`,
/// an arrival notice. Another account held `invoice_theirs.pdf`. Backends' migration tests
/// seed that in their own SQL and call this.
pub async fn documents_from_before_the_word_index_are_found(
    store: &dyn DocumentStore,
    acme: AccountId,
) {
    let list = async |filter: DocumentFilter| {
        let page = store
            .list_documents(acme, &filter, DocumentSort::default(), FIRST_PAGE)
            .await
            .unwrap();
        let names: Vec<String> = page.items.into_iter().map(|d| d.name).collect();
        (page.total, names)
    };

    assert_eq!(
        list(by_words(&["invoice"])).await,
        (
            2,
            vec!["Invoice March".to_owned(), "invoice_MAEU1.pdf".to_owned()]
        )
    );
    assert_eq!(
        list(by_words(&["arrival", "not"])).await,
        (1, vec!["Arrival Notice.pdf".to_owned()])
    );
    let invoices = DocumentFilter {
        document_types: vec!["commercial_invoice".to_owned()],
        ..DocumentFilter::default()
    };
    assert_eq!(list(invoices).await.0, 2);
}

fn email(ids: &SequentialIds, account: AccountId, source_key: Option<&str>) -> EmailSubmission {
    EmailSubmission {
        id: ids.next_id(),
        account_id: account,
        subject: "Arrival notice".to_owned(),
        body: None,
        from: vec!["ops@forwarder.example".to_owned()],
        to: Vec::new(),
        cc: Vec::new(),
        sent_at: None,
        message_id: Some("m-1@forwarder.example".to_owned()),
        in_reply_to: None,
        references: Vec::new(),
        content_type: Some("multipart/mixed".to_owned()),
        status: "received".to_owned(),
        status_reason: None,
        source_key: source_key.map(str::to_owned),
        created_at: t0(),
        updated_at: t0(),
    }
}

pub async fn a_mailbox_message_is_recorded_as_one_email_submission_only(backend: &dyn TestBackend) {
    let store = backend.store();
    let ids = SequentialIds::default();
    let acme = account_in(store.as_ref(), &ids, "acme").await;
    let key = "imap://docs@mail.example/INBOX;UIDVALIDITY=7/;UID=42";
    let first = email(&ids, acme, Some(key));
    let again = email(&ids, acme, Some(key));
    let other_message = email(
        &ids,
        acme,
        Some("imap://docs@mail.example/INBOX;UIDVALIDITY=7/;UID=43"),
    );

    assert!(store.insert_email_submission(&first).await.unwrap());
    assert!(!store.insert_email_submission(&again).await.unwrap());
    assert!(store.insert_email_submission(&other_message).await.unwrap());
    // Mail delivered over SMTP has no source: any number of them, same Message-ID or not.
    assert!(
        store
            .insert_email_submission(&email(&ids, acme, None))
            .await
            .unwrap()
    );
    assert!(
        store
            .insert_email_submission(&email(&ids, acme, None))
            .await
            .unwrap()
    );

    let listed = store
        .list_email_submissions(acme, FIRST_PAGE)
        .await
        .unwrap();
    assert_eq!(listed.total, 4);
    assert_eq!(
        store
            .email_submission(acme, first.id)
            .await
            .unwrap()
            .source_key
            .as_deref(),
        Some(key)
    );
    assert!(matches!(
        store.email_submission(acme, again.id).await,
        Err(StoreError::NotFound)
    ));
}

pub async fn a_mailbox_cursor_moves_forward_and_starts_over_under_a_new_uid_validity(
    backend: &dyn TestBackend,
) {
    let store = backend.store();
    let mailbox = "imap://docs@mail.example:993/INBOX";
    let cursor = |uid_validity, last_uid| MailboxCursor {
        uid_validity,
        last_uid,
    };
    assert_eq!(store.mailbox_cursor(mailbox).await.unwrap(), None);

    store
        .save_mailbox_cursor(mailbox, cursor(7, 10), t0())
        .await
        .unwrap();
    store
        .save_mailbox_cursor(mailbox, cursor(7, 4), t0())
        .await
        .unwrap();
    assert_eq!(
        store.mailbox_cursor(mailbox).await.unwrap(),
        Some(cursor(7, 10))
    );
    store
        .save_mailbox_cursor(mailbox, cursor(u32::MAX, u32::MAX - 1), t0())
        .await
        .unwrap();
    assert_eq!(
        store.mailbox_cursor(mailbox).await.unwrap(),
        Some(cursor(u32::MAX, u32::MAX - 1))
    );
    store
        .save_mailbox_cursor(mailbox, cursor(8, 2), t0())
        .await
        .unwrap();

    let reopened = backend.reopen().await;
    assert_eq!(
        reopened.mailbox_cursor(mailbox).await.unwrap(),
        Some(cursor(8, 2))
    );
    assert_eq!(
        reopened
            .mailbox_cursor("imap://other@mail.example:993/INBOX")
            .await
            .unwrap(),
        None
    );
}
