//! `tracking_request`: a number being followed with its carrier.

use chrono::{DateTime, Utc};
use serde::Serialize;
use tidemark_domain::TrackingRequest;
use utoipa::ToSchema;

use crate::resources::jsonapi::{Relationships, Resource, ResourceIdentifier, timestamp};

#[derive(Debug, Serialize, ToSchema)]
pub struct TrackingRequestAttributes {
    pub request_number: String,
    /// `bill_of_lading`, `booking_number` or `container`.
    pub request_type: &'static str,
    pub scac: String,
    pub ref_numbers: Vec<String>,
    pub shipment_tags: Vec<String>,
    /// `pending`, `awaiting_manifest`, `created`, `failed` or `tracking_stopped`.
    pub status: &'static str,
    pub failed_reason: Option<&'static str>,
    pub is_retrying: bool,
    pub retry_count: Option<u32>,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "timestamp")]
    pub updated_at: DateTime<Utc>,
}

impl Resource for TrackingRequest {
    const TYPE: &'static str = "tracking_request";
    const PATH: &'static str = "tracking_requests";
    type Attributes = TrackingRequestAttributes;

    fn id(&self) -> String {
        self.id.to_string()
    }

    fn attributes(&self) -> TrackingRequestAttributes {
        TrackingRequestAttributes {
            request_number: self.request_number.clone(),
            request_type: self.request_type.as_str(),
            scac: self.scac.clone(),
            ref_numbers: self.ref_numbers.clone(),
            shipment_tags: self.shipment_tags.clone(),
            status: self.status.as_str(),
            failed_reason: self
                .failed_reason
                .map(tidemark_domain::FailedReason::as_str),
            is_retrying: self.is_retrying,
            retry_count: self.retry_count,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }

    fn relationships(&self) -> Relationships {
        Relationships::default()
            .one(
                "tracked_object",
                self.shipment_id
                    .map(|id| ResourceIdentifier::new("shipment", id)),
            )
            .one(
                "customer",
                self.customer_id
                    .map(|id| ResourceIdentifier::new("party", id)),
            )
            // Tidemark's users are its API keys: the key that submitted the request.
            .one(
                "user",
                self.submitted_by
                    .map(|id| ResourceIdentifier::new("user", id)),
            )
    }
}
