//! `GET /v2/search`: the account's shipments, containers and tracking requests whose BL,
//! container, request or reference numbers start with the query or have a word that does
//! (the term index of `tidemark_store::search`), as Terminal49 ranks them: shipments, then
//! containers, then tracking requests, each newest first, at most [`MAX_RESULTS`].

use std::collections::HashMap;
use tidemark_domain::{
    AccountId, Container, ContainerId, Shipment, ShipmentId, TrackingRequest, TrackingRequestId,
};
use tidemark_store::{SEARCH_SCAN_LIMIT, SearchHit, SearchKind, StoreError};

use crate::parts::core::Core;

/// Results of one search at most, as Terminal49 answers.
pub const MAX_RESULTS: usize = 25;

/// One thing a search found, with what Terminal49's `search_result` shows of it.
#[derive(Clone, Debug, PartialEq)]
pub enum Found {
    Shipment {
        shipment: Box<Shipment>,
        containers_count: usize,
    },
    Container {
        container: Box<Container>,
        shipment: Box<Shipment>,
    },
    TrackingRequest(Box<TrackingRequest>),
}

/// Searches the account for `key` (a `tidemark_store::search_key`). A tracking request
/// that has created its shipment is left out: the shipment stands for it (Terminal49
/// filters such duplicates). An entity gone since the index was read is skipped.
pub async fn search(core: &Core, account: AccountId, key: &str) -> Result<Vec<Found>, StoreError> {
    let hits = core.store.search(account, key, SEARCH_SCAN_LIMIT).await?;
    let shipment_ids: Vec<ShipmentId> = hits
        .iter()
        .filter(|hit| hit.kind == SearchKind::Shipment)
        .take(MAX_RESULTS)
        .map(|hit| ShipmentId(hit.id))
        .collect();
    let shipments: HashMap<ShipmentId, Shipment> = core
        .store
        .shipments_by_ids(account, &shipment_ids)
        .await?
        .into_iter()
        .map(|shipment| (shipment.id, shipment))
        .collect();
    let mut counts: HashMap<ShipmentId, usize> = HashMap::new();
    for container in core.store.containers_of_shipments(&shipment_ids).await? {
        *counts.entry(container.shipment_id).or_default() += 1;
    }
    let mut found = Vec::new();
    for hit in hits {
        if found.len() == MAX_RESULTS {
            break;
        }
        let result = match hit.kind {
            SearchKind::Shipment => {
                shipments
                    .get(&ShipmentId(hit.id))
                    .map(|shipment| Found::Shipment {
                        shipment: Box::new(shipment.clone()),
                        containers_count: counts.get(&shipment.id).copied().unwrap_or(0),
                    })
            }
            SearchKind::Container => container_found(core, account, hit).await?,
            SearchKind::TrackingRequest => {
                match core
                    .store
                    .tracking_request(account, TrackingRequestId(hit.id))
                    .await
                {
                    Ok(request) if request.shipment_id.is_none() => {
                        Some(Found::TrackingRequest(Box::new(request)))
                    }
                    Ok(_) | Err(StoreError::NotFound) => None,
                    Err(error) => return Err(error),
                }
            }
        };
        found.extend(result);
    }
    Ok(found)
}

async fn container_found(
    core: &Core,
    account: AccountId,
    hit: SearchHit,
) -> Result<Option<Found>, StoreError> {
    let container = match core.store.container(account, ContainerId(hit.id)).await {
        Ok(container) => container,
        Err(StoreError::NotFound) => return Ok(None),
        Err(error) => return Err(error),
    };
    match core.store.shipment(account, container.shipment_id).await {
        Ok(shipment) => Ok(Some(Found::Container {
            container: Box::new(container),
            shipment: Box::new(shipment),
        })),
        Err(StoreError::NotFound) => Ok(None),
        Err(error) => Err(error),
    }
}
