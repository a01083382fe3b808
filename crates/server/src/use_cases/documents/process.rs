//! The background job that reads an uploaded document: extracts its text, sets its
//! `document_type` with notes saying why, links it to the account's shipments and
//! containers whose numbers appear in it, and announces `document.extracted` or
//! `document.extraction_failed`, all recorded in one transaction.
//!
//! The same job re-runs one step on request ([`Action`]): `reclassify` (optionally to a
//! type the user gives), `reextract` (the fields) and `relink` (the links).

use chrono::{DateTime, Utc};
use tidemark_domain::{AccountId, ContainerId, DomainEvent, DomainEventId, NewJob, ShipmentId};
use tidemark_store::{DocumentClassification, Representation, StoreError, StoredDocument};
use uuid::Uuid;

use crate::parts::core::Core;
use crate::parts::documents::storage::StorageError;
use crate::use_cases::documents::Files;
use crate::use_cases::documents::classify::DocumentType;
use crate::use_cases::documents::fields;
use crate::use_cases::documents::references::{BL_PREFIXES, find_references, matching_bl_numbers};
use crate::use_cases::queue::{self, JobKind};

/// The version of the extraction payload (`document_representation.schema_version`).
pub const SCHEMA_VERSION: &str = "2026-03-01";
/// How much of the text the representation keeps.
const EXCERPT_CHARS: usize = 2_000;
/// At most this many candidate numbers are looked up.
const MAX_CANDIDATES: usize = 50;

/// What the job does to a document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Action {
    /// Everything, as after an upload: type, fields and links.
    #[default]
    Process,
    /// The type again, from the text or as the user says; the fields follow the type.
    Reclassify { document_type: Option<DocumentType> },
    /// The fields again; type and links stay.
    Reextract,
    /// The links again (added to those the document has); type and fields stay.
    Relink,
}

impl Action {
    /// The action a job's payload names (`action`, `document_type`); none is `Process`.
    pub fn from_payload(action: Option<&str>, document_type: Option<DocumentType>) -> Option<Self> {
        match action {
            None | Some("process") => Some(Self::Process),
            Some("reclassify") => Some(Self::Reclassify { document_type }),
            Some("reextract") => Some(Self::Reextract),
            Some("relink") => Some(Self::Relink),
            Some(_) => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Process => "process",
            Self::Reclassify { .. } => "reclassify",
            Self::Reextract => "reextract",
            Self::Relink => "relink",
        }
    }
}

/// The job that classifies a document, queued in the transaction that stores it.
pub fn job(core: &Core, account: AccountId, document: Uuid, run_at: DateTime<Utc>) -> NewJob {
    queue::new_job(
        core,
        JobKind::ProcessDocument,
        serde_json::json!({"account_id": account, "document_id": document}),
        Some(format!("document:{document}")),
        run_at,
    )
}

/// Queues `action` on a live document of the account (`NotFound` otherwise). The same
/// action still pending absorbs it.
pub async fn request(
    core: &Core,
    account: AccountId,
    document: Uuid,
    action: Action,
) -> Result<(), StoreError> {
    core.store.document(account, document).await?;
    let given = match action {
        Action::Reclassify { document_type } => document_type,
        _ => None,
    };
    let payload = serde_json::json!({
        "account_id": account, "document_id": document,
        "action": action.name(), "document_type": given,
    });
    let dedup = match action {
        Action::Reclassify {
            document_type: Some(given),
        } => format!("document-reclassify:{document}:{given}"),
        other => format!("document-{}:{document}", other.name()),
    };
    queue::enqueue(
        core,
        JobKind::ProcessDocument,
        payload,
        Some(dedup),
        core.clock.now(),
    )
    .await?;
    Ok(())
}

/// What the job did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Extracted {
        document_type: String,
        shipments: usize,
        containers: usize,
    },
    ExtractionFailed(String),
    /// The document was deleted meanwhile.
    Gone,
}

#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Classifies and links one document.
pub async fn process(
    core: &Core,
    files: Files<'_>,
    account: AccountId,
    id: Uuid,
) -> Result<Outcome, ProcessError> {
    run(core, files, account, id, Action::Process).await
}

/// Runs `action` on one document.
pub async fn run(
    core: &Core,
    files: Files<'_>,
    account: AccountId,
    id: Uuid,
    action: Action,
) -> Result<Outcome, ProcessError> {
    let document = match core.store.document(account, id).await {
        Ok(document) => document,
        Err(StoreError::NotFound) => return Ok(Outcome::Gone),
        Err(error) => return Err(error.into()),
    };
    let bytes = files.storage.get(&document.storage_key).await?;
    // Read in a child process under OS limits (`isolate`): a hostile file costs at most
    // what the limits allow, and is stopped, not abandoned, past them.
    let extracted = files
        .extractor
        .extract(&document.content_type, &document.file_name, &bytes)
        .await;
    drop(bytes);
    let now = core.clock.now();
    let (classification, event, outcome) = match extracted {
        Ok(result) => {
            let text = result.text;
            let (shipments, containers, payload) = links_in(core, &document, &text).await?;
            let kept = kept_classification(&document);
            let (document_type, notes, confidence) = match (action, kept) {
                (
                    Action::Reclassify {
                        document_type: Some(given),
                    },
                    _,
                ) => (
                    given,
                    format!("Set to {} ({given}) by the user.", given.label()),
                    1.0,
                ),
                (Action::Reextract | Action::Relink, Some(kept)) => kept,
                _ => (result.document_type, result.notes, result.confidence),
            };
            let outcome = Outcome::Extracted {
                document_type: document_type.as_str().to_owned(),
                shipments: shipments.len(),
                containers: containers.len(),
            };
            let mut payload = payload;
            payload["document_type"] = serde_json::json!(document_type.as_str());
            payload["confidence"] = serde_json::json!(confidence);
            payload["document_schema"] = serde_json::json!(fields::schema_id(document_type));
            payload["fields"] = serde_json::Value::Object(fields::extract(document_type, &text));
            let representation = match (action, &document.representation) {
                (Action::Relink, Some(kept)) => kept.clone(),
                _ => Representation {
                    id: core.ids.next_id(),
                    schema_version: SCHEMA_VERSION.to_owned(),
                    payload,
                    created_at: now,
                },
            };
            let links = matches!(action, Action::Process | Action::Relink);
            (
                DocumentClassification {
                    document_type: document_type.as_str().to_owned(),
                    classification_notes: notes,
                    representation: Some(representation),
                    shipment_ids: if links { shipments } else { Vec::new() },
                    container_ids: if links { containers } else { Vec::new() },
                    at: now,
                },
                "document.extracted",
                outcome,
            )
        }
        Err(error) => (
            // As Terminal49: a document whose extraction failed is `unknown`, with no
            // representation.
            DocumentClassification {
                document_type: DocumentType::Unknown.as_str().to_owned(),
                classification_notes: format!("No text could be read: {error}."),
                representation: None,
                shipment_ids: Vec::new(),
                container_ids: Vec::new(),
                at: now,
            },
            "document.extraction_failed",
            Outcome::ExtractionFailed(error.to_string()),
        ),
    };
    let event = DomainEvent {
        id: DomainEventId::new(core.ids.as_ref()),
        account_id: account,
        event: event.to_owned(),
        reference_type: "document".to_owned(),
        reference_id: document.id,
        shipment_id: classification
            .shipment_ids
            .first()
            .or(document.shipment_ids.first())
            .copied(),
        container_id: None,
        payload: None,
        created_at: now,
    };
    match core
        .store
        .record_document_classification(account, id, &classification, &[event])
        .await
    {
        Ok(()) => {}
        Err(StoreError::NotFound) => return Ok(Outcome::Gone),
        Err(error) => return Err(error.into()),
    }
    if let Err(error) = crate::use_cases::webhooks::deliver::queue_due(core).await {
        tracing::warn!(error = ?error, "cannot queue webhook deliveries");
    }
    Ok(outcome)
}

/// The type, notes and confidence the document has, when it was classified.
fn kept_classification(document: &StoredDocument) -> Option<(DocumentType, String, f32)> {
    let document_type = document.document_type.as_deref()?.parse().ok()?;
    let confidence = document
        .representation
        .as_ref()
        .and_then(|r| r.payload["confidence"].as_f64())
        .unwrap_or(0.0);
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a confidence between 0 and 1"
    )]
    let confidence = confidence as f32;
    Some((
        document_type,
        document.classification_notes.clone().unwrap_or_default(),
        confidence,
    ))
}

/// The account's shipments and containers whose numbers `text` mentions, and the numbers
/// found (the representation's payload).
async fn links_in(
    core: &Core,
    document: &StoredDocument,
    text: &str,
) -> Result<(Vec<ShipmentId>, Vec<ContainerId>, serde_json::Value), StoreError> {
    link_numbers(core, document.account_id, text).await
}

/// The account's shipments and containers whose bill of lading or container numbers
/// `text` mentions, and the numbers found (a representation's payload).
pub async fn link_numbers(
    core: &Core,
    account: AccountId,
    text: &str,
) -> Result<(Vec<ShipmentId>, Vec<ContainerId>, serde_json::Value), StoreError> {
    let references = find_references(text);
    let candidates: Vec<String> = references
        .bl_candidates
        .iter()
        .take(MAX_CANDIDATES)
        .cloned()
        .collect();
    // Carriers print their BL numbers with or without their SCAC prefix: look up both.
    let mut lookups = Vec::new();
    for candidate in &candidates {
        lookups.push(candidate.clone());
        match BL_PREFIXES.iter().find(|p| candidate.starts_with(**p)) {
            Some(prefix) => lookups.push(candidate[prefix.len()..].to_owned()),
            None => lookups.extend(BL_PREFIXES.iter().map(|p| format!("{p}{candidate}"))),
        }
    }
    let container_numbers: Vec<String> = references
        .container_numbers
        .iter()
        .take(MAX_CANDIDATES)
        .cloned()
        .collect();
    let targets = core
        .store
        .link_targets(account, &lookups, &container_numbers)
        .await?;
    let known: Vec<&str> = targets.shipments.iter().map(|(_, n)| n.as_str()).collect();
    let matched = matching_bl_numbers(&candidates, &known);
    let mut shipments: Vec<ShipmentId> = targets
        .shipments
        .iter()
        .filter(|(_, number)| matched.contains(&number.as_str()))
        .map(|(id, _)| *id)
        .collect();
    let containers: Vec<ContainerId> = targets.containers.iter().map(|(id, _, _)| *id).collect();
    // A container's shipment is the document's too.
    shipments.extend(targets.containers.iter().map(|(_, shipment, _)| *shipment));
    shipments.sort_unstable();
    shipments.dedup();
    let excerpt: String = text.chars().take(EXCERPT_CHARS).collect();
    let payload = serde_json::json!({
        "bill_of_lading_numbers": candidates,
        "container_numbers": references.container_numbers,
        "matched_bill_of_lading_numbers": matched,
        "text_excerpt": excerpt,
        "text_length": text.chars().count(),
    });
    Ok((shipments, containers, payload))
}
