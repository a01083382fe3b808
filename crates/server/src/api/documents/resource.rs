//! Documents as JSON:API resources: attributes, relationships, links, and the resources
//! `include` adds.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Value, json};
use tidemark_domain::{Container, ContainerId, Shipment, ShipmentId};
use tidemark_store::{StoreError, StoredDocument};

use crate::api::containers::{ContainerResource, event_ids_of, events_in};
use crate::api::error::ApiError;
use crate::api::jsonapi::{Includes, QueryParams, included_object, timestamp};
use crate::api::shipments::{ShipmentResource, customers_of};
use crate::app::AppState;

use super::INCLUDES;
pub use crate::resources::documents::{
    DocumentAttributes, document_link, included_document, resource,
};

/// The resources `includes` asks for, related to `docs`, each once.
pub async fn included(
    state: &AppState,
    docs: &[StoredDocument],
    includes: &Includes,
) -> Result<Vec<Value>, ApiError> {
    let base = &state.config.public_url;
    let mut out = Vec::new();
    let Some(first) = docs.first() else {
        return Ok(out);
    };
    let account = first.account_id;
    if includes.contains("account") {
        let account = state.store.account(account).await?;
        out.push(json!({
            "id": account.id, "type": "account",
            "attributes": {"company_name": account.name},
            "links": {"self": format!("{base}/v2/accounts/{}", account.id)},
        }));
    }
    if includes.contains("user") {
        let users: BTreeSet<_> = docs.iter().filter_map(|d| d.uploaded_by).collect();
        out.extend(users.into_iter().map(|id| {
            json!({"id": id, "type": "user", "attributes": {},
                   "links": {"self": format!("{base}/v2/api_keys/{id}")}})
        }));
    }
    let want_shipments = includes.contains("shipments");
    let want_cargos = includes.contains("cargos");
    if want_shipments || want_cargos {
        let container_ids: BTreeSet<ContainerId> = docs
            .iter()
            .flat_map(|d| d.container_ids.iter().copied())
            .collect();
        let mut containers: Vec<Container> = Vec::new();
        if want_cargos {
            for id in &container_ids {
                match state.store.container(account, *id).await {
                    Ok(container) => containers.push(container),
                    Err(StoreError::NotFound) => {}
                    Err(error) => return Err(error.into()),
                }
            }
        }
        let mut shipment_ids: BTreeSet<ShipmentId> =
            containers.iter().map(|c| c.shipment_id).collect();
        if want_shipments {
            shipment_ids.extend(docs.iter().flat_map(|d| d.shipment_ids.iter().copied()));
        }
        let ids: Vec<ShipmentId> = shipment_ids.into_iter().collect();
        let shipments: Vec<Shipment> = state.store.shipments_by_ids(account, &ids).await?;
        if want_shipments {
            let linked: BTreeSet<ShipmentId> = docs
                .iter()
                .flat_map(|d| d.shipment_ids.iter().copied())
                .collect();
            let all_containers = state.store.containers_of_shipments(&ids).await?;
            let customers = customers_of(state, &shipments).await?;
            for shipment in shipments.iter().filter(|s| linked.contains(&s.id)) {
                let own: Vec<Container> = all_containers
                    .iter()
                    .filter(|c| c.shipment_id == shipment.id)
                    .cloned()
                    .collect();
                out.push(to_value(included_object(
                    &ShipmentResource {
                        shipment,
                        containers: &own,
                        customers: &customers,
                        core: state,
                    },
                    base,
                )));
            }
        }
        let events = event_ids_of(state, account, containers.iter().map(|c| c.id)).await?;
        for container in &containers {
            out.push(to_value(included_object(
                &ContainerResource {
                    container,
                    shipment: shipments.iter().find(|s| s.id == container.shipment_id),
                    events: events_in(&events, container.id),
                    core: state,
                },
                base,
            )));
        }
    }
    if includes.contains("email_submission") {
        let ids: BTreeSet<uuid::Uuid> = docs.iter().filter_map(|d| d.email_submission_id).collect();
        for id in ids {
            match state.store.email_submission(account, id).await {
                Ok(submission) => {
                    let attached = state
                        .store
                        .documents_of_email_submissions(account, &[id])
                        .await?;
                    out.push(crate::resources::email_submissions::resource(
                        &submission,
                        &attached,
                        base,
                    ));
                }
                Err(StoreError::NotFound) => {}
                Err(error) => return Err(error.into()),
            }
        }
    }
    if includes.contains("last_document_representation") || includes.contains("current_extraction")
    {
        for doc in docs {
            if let Some(r) = &doc.representation {
                out.push(json!({
                    "id": r.id, "type": "document_representation",
                    "attributes": {
                        "schema_version": r.schema_version,
                        "payload": r.payload,
                        "created_at": timestamp::format(r.created_at),
                        "updated_at": timestamp::format(r.created_at),
                    },
                    "links": {"self": document_link(base, doc.id)},
                }));
            }
        }
    }
    Ok(out)
}

fn to_value<T: Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

pub(super) fn single(state: &AppState, doc: &StoredDocument, included: Vec<Value>) -> Value {
    let base = &state.config.public_url;
    let mut document = json!({
        "data": resource(doc, base),
        "links": {"self": document_link(base, doc.id)},
    });
    if !included.is_empty() {
        document["included"] = Value::Array(included);
    }
    document
}

/// One document's JSON:API document, with what `query` includes.
pub(super) async fn show_document(
    state: &AppState,
    doc: &StoredDocument,
    query: &QueryParams,
) -> Result<Value, ApiError> {
    let includes = query.includes("document", INCLUDES)?;
    let included = included(state, std::slice::from_ref(doc), &includes).await?;
    Ok(single(state, doc, included))
}
