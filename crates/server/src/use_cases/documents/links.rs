//! A shipment's documents, and linking a document to a shipment (what `PATCH
//! /v2/documents/{id}` does with `relationships.shipments`, one shipment at a time).

use tidemark_domain::{AccountId, Shipment, ShipmentId};
use tidemark_store::{DocumentFilter, DocumentSort, PageRequest, StoreError, StoredDocument};
use uuid::Uuid;

use crate::parts::core::Core;

/// At most this many documents are listed with a shipment.
pub const MAX_LISTED: u32 = 100;

/// The documents linked to `shipment`, newest first: those found by its bill of lading
/// number (the API's `filter[reference]`) that name it among their shipments.
pub async fn of_shipment(
    core: &Core,
    account: AccountId,
    shipment: &Shipment,
) -> Result<Vec<StoredDocument>, StoreError> {
    let filter = DocumentFilter {
        reference: Some(shipment.bill_of_lading_number.to_uppercase()),
        ..DocumentFilter::default()
    };
    let found = core
        .store
        .list_documents(
            account,
            &filter,
            DocumentSort::default(),
            PageRequest {
                offset: 0,
                limit: MAX_LISTED,
            },
        )
        .await?;
    Ok(found
        .items
        .into_iter()
        .filter(|document| document.shipment_ids.contains(&shipment.id))
        .collect())
}

/// Links one of the account's documents to one of its shipments (both must exist; another
/// account's is `NotFound`); linking twice changes nothing.
pub async fn link_to_shipment(
    core: &Core,
    account: AccountId,
    document: Uuid,
    shipment: ShipmentId,
) -> Result<StoredDocument, StoreError> {
    let mut stored = core.store.document(account, document).await?;
    core.store.shipment(account, shipment).await?;
    if !stored.shipment_ids.contains(&shipment) {
        stored.shipment_ids.push(shipment);
        stored.shipment_ids.sort_unstable();
        stored.updated_at = core.clock.now();
        core.store.update_document(&stored).await?;
    }
    Ok(stored)
}

/// Removes a document's link to a shipment; no link, no change.
pub async fn unlink_from_shipment(
    core: &Core,
    account: AccountId,
    document: Uuid,
    shipment: ShipmentId,
) -> Result<StoredDocument, StoreError> {
    let mut stored = core.store.document(account, document).await?;
    if stored.shipment_ids.contains(&shipment) {
        stored.shipment_ids.retain(|id| *id != shipment);
        stored.updated_at = core.clock.now();
        core.store.update_document(&stored).await?;
    }
    Ok(stored)
}

/// The account's shipment whose bill of lading (or original request number) is `number`,
/// ignoring case and surrounding spaces.
pub async fn shipment_by_number(
    core: &Core,
    account: AccountId,
    number: &str,
) -> Result<Option<Shipment>, StoreError> {
    let number = number.trim();
    if number.is_empty() {
        return Ok(None);
    }
    let found = core
        .store
        .list_shipments(
            account,
            &tidemark_store::ShipmentFilter {
                q: Some(number.to_owned()),
                ..tidemark_store::ShipmentFilter::default()
            },
            PageRequest {
                offset: 0,
                limit: 20,
            },
        )
        .await?;
    Ok(found
        .items
        .into_iter()
        .find(|s| s.bill_of_lading_number.eq_ignore_ascii_case(number)))
}
