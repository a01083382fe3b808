//! `document`: an uploaded file with its classification and links.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use tidemark_store::StoredDocument;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::resources::jsonapi::timestamp;

/// `document` attributes (spec §2.8).
#[derive(Debug, Serialize, ToSchema)]
pub struct DocumentAttributes {
    pub id: Uuid,
    pub name: String,
    /// `null` until classification ran.
    pub document_type: Option<String>,
    pub document_type_manual: Option<String>,
    pub classification_notes: Option<String>,
    /// `upload` (multipart), `api` (direct upload) or `email` (an attachment).
    pub source: String,
    pub file_name: String,
    pub file_content_type: String,
    pub file_size_bytes: u64,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "timestamp")]
    pub updated_at: DateTime<Utc>,
}

pub fn document_link(base: &str, id: Uuid) -> String {
    format!("{base}/v2/documents/{id}")
}

/// The resource object of a document.
pub fn resource(doc: &StoredDocument, base: &str) -> Value {
    let attributes = DocumentAttributes {
        id: doc.id,
        name: doc.name.clone(),
        document_type: doc.document_type.clone(),
        document_type_manual: doc.document_type_manual.clone(),
        classification_notes: doc.classification_notes.clone(),
        source: doc.source.clone(),
        file_name: doc.file_name.clone(),
        file_content_type: doc.content_type.clone(),
        file_size_bytes: doc.size_bytes,
        created_at: doc.created_at,
        updated_at: doc.updated_at,
    };
    let link = document_link(base, doc.id);
    json!({
        "id": doc.id,
        "type": "document",
        "attributes": attributes,
        "relationships": {
            "account": {"data": {"id": doc.account_id, "type": "account"}},
            // Tidemark's users are its API keys: the key that uploaded the document.
            "user": {"data": doc.uploaded_by.map(|k| json!({"id": k, "type": "user"}))},
            "email_submission": {"data": doc.email_submission_id
                .map(|id| json!({"id": id, "type": "email_submission"}))},
            "last_document_representation": {"data": doc.representation.as_ref()
                .map(|r| json!({"id": r.id, "type": "document_representation"}))},
            "shipments": {"data": doc.shipment_ids.iter()
                .map(|id| json!({"id": id, "type": "shipment"})).collect::<Vec<_>>()},
            "cargos": {"data": doc.container_ids.iter()
                .map(|id| json!({"id": id, "type": "container"})).collect::<Vec<_>>()},
        },
        "links": {"self": link, "download": format!("{link}/download")},
    })
}

/// A document as an `included` member (webhook deliveries of `document.*` events).
pub fn included_document(doc: &StoredDocument, base: &str) -> crate::resources::jsonapi::Included {
    use crate::resources::jsonapi::{Relationships, ResourceIdentifier, ResourceObject, SelfLink};
    let object = resource(doc, base);
    ResourceObject {
        id: doc.id.to_string(),
        kind: "document",
        attributes: crate::resources::jsonapi::erased(&object["attributes"]),
        relationships: Relationships::default()
            .one(
                "account",
                Some(ResourceIdentifier::new("account", doc.account_id)),
            )
            .one(
                "user",
                doc.uploaded_by.map(|k| ResourceIdentifier::new("user", k)),
            )
            .one(
                "email_submission",
                doc.email_submission_id
                    .map(|id| ResourceIdentifier::new("email_submission", id)),
            )
            .one(
                "last_document_representation",
                doc.representation
                    .as_ref()
                    .map(|r| ResourceIdentifier::new("document_representation", r.id)),
            )
            .many(
                "shipments",
                doc.shipment_ids
                    .iter()
                    .map(|id| ResourceIdentifier::new("shipment", id))
                    .collect(),
            )
            .many(
                "cargos",
                doc.container_ids
                    .iter()
                    .map(|id| ResourceIdentifier::new("container", id))
                    .collect(),
            ),
        links: SelfLink {
            self_: document_link(base, doc.id),
        },
    }
}
