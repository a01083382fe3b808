//! Stored EDI waiting for a request: a new tracking request whose number an earlier
//! interchange named has that EDI applied. Apart from the intake (`super`), which starts
//! requests itself, so that starting a request never loops back into it.

use tidemark_store::StoreError;

use crate::parts::core::Core;
use crate::use_cases::queue::{self, JobKind};

/// Queues the application of stored EDI naming a new request's number, if any does (a
/// line fed by EDI reads its feed on its first poll anyway).
pub async fn apply_waiting(
    core: &Core,
    request: &tidemark_domain::TrackingRequest,
) -> Result<(), StoreError> {
    let number = number_key(&request.request_number);
    let waiting = core
        .store
        .edi_transactions_naming(request.account_id, &[number], 1)
        .await?;
    if waiting.is_empty() {
        return Ok(());
    }
    queue::enqueue(
        core,
        JobKind::ApplyEdi,
        serde_json::json!({"account_id": request.account_id, "tracking_request_id": request.id}),
        Some(format!("apply-edi:{}", request.id)),
        core.clock.now(),
    )
    .await
    .map(|_| ())
}

/// A number as transactions are found by: trimmed, upper-cased, without spaces.
pub fn number_key(number: &str) -> String {
    number
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_uppercase()
}
