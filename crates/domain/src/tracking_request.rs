//! A tracking request: the number a client submitted, and where following it stands.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::ids::{AccountId, ApiKeyId, PartyId, ShipmentId, TrackingRequestId};
use crate::tracking::{FailedReason, RequestType, TrackingRequestStatus};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrackingRequest {
    pub id: TrackingRequestId,
    pub account_id: AccountId,
    pub request_type: RequestType,
    /// As submitted, trimmed and upper-cased (carriers' numbers are case-insensitive).
    pub request_number: String,
    /// The SCAC as submitted, upper-cased.
    pub scac: String,
    pub ref_numbers: Vec<String>,
    /// Copied onto the shipment when it is created.
    pub shipment_tags: Vec<String>,
    pub status: TrackingRequestStatus,
    pub failed_reason: Option<FailedReason>,
    pub is_retrying: bool,
    pub retry_count: Option<u32>,
    /// The shipment this request resolved to (`tracked_object`), once there is one.
    pub shipment_id: Option<ShipmentId>,
    /// `initial_custom_fields` as submitted, kept until the shipment exists to apply them.
    pub initial_custom_fields: Option<serde_json::Value>,
    /// The customer (party) the number is tracked for; copied onto the shipment.
    pub customer_id: Option<PartyId>,
    /// The API key that submitted it (Terminal49's `user`), when known.
    pub submitted_by: Option<ApiKeyId>,
    /// When its carrier was last asked about it while it had no shipment: paces the
    /// re-checks of `awaiting_manifest` and retrying requests, which a user's edit (that
    /// moves `updated_at`) must not postpone.
    pub polled_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl TrackingRequest {
    /// Whether a new request for the same number and SCAC would be a duplicate of this one.
    pub fn blocks_duplicates(&self) -> bool {
        matches!(
            self.status,
            TrackingRequestStatus::Pending | TrackingRequestStatus::Created
        )
    }
}

/// Normalizes a submitted number as its kind allows: a container number is ISO 6346's, in
/// capitals; a bill of lading or booking is kept as the user wrote it (trimmed), because
/// some lines' references are case-sensitive (CMA CGM's hashed booking references).
pub fn normalize_number(request_type: crate::RequestType, number: &str) -> String {
    match request_type {
        crate::RequestType::Container => number.trim().to_uppercase(),
        crate::RequestType::BillOfLading | crate::RequestType::BookingNumber => {
            number.trim().to_owned()
        }
    }
}
