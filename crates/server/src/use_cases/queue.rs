//! The job queue as the use cases see it: the kinds of job, and queuing one (on its own or
//! inside the transaction of the change it follows). The workers that run them are `jobs/`.

use chrono::{DateTime, Utc};
use tidemark_domain::{JobId, NewJob};
use tidemark_store::StoreError;

use crate::parts::core::Core;

/// Every kind of job, named as stored in the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// Housekeeping: deletes finished jobs past their retention, expired idempotency keys,
    /// old vessel positions, direct uploads that expired unattached, and terminals' asks of
    /// containers no terminal asks about any more.
    PurgeFinishedJobs,
    /// Polls the carrier for one tracking request (and its shipment once there is one).
    Track,
    /// Delivers one webhook's due notifications.
    DeliverWebhook,
    /// Extracts, classifies and links one uploaded document, or re-runs one of the steps.
    ProcessDocument,
    /// Rotates the pages of a PDF document (a new file; the uploaded one stays).
    RotateDocument,
    /// Reads one received EDI interchange (if it was not read at once).
    ProcessEdiMessage,
    /// Applies the stored EDI statuses naming one tracking request.
    ApplyEdi,
    /// Asks one terminal about a batch of its discharged containers.
    CheckTerminal,
}

impl JobKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::PurgeFinishedJobs => "purge_finished_jobs",
            Self::Track => "track",
            Self::DeliverWebhook => "deliver_webhook",
            Self::ProcessDocument => "process_document",
            Self::RotateDocument => "rotate_document",
            Self::ProcessEdiMessage => "process_edi_message",
            Self::ApplyEdi => "apply_edi",
            Self::CheckTerminal => "check_terminal",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "purge_finished_jobs" => Some(Self::PurgeFinishedJobs),
            "track" => Some(Self::Track),
            "deliver_webhook" => Some(Self::DeliverWebhook),
            "process_document" => Some(Self::ProcessDocument),
            "rotate_document" => Some(Self::RotateDocument),
            "process_edi_message" => Some(Self::ProcessEdiMessage),
            "apply_edi" => Some(Self::ApplyEdi),
            "check_terminal" => Some(Self::CheckTerminal),
            _ => None,
        }
    }
}

/// A job of `kind`, to queue with [`enqueue`] or inside a store call that writes it in
/// the transaction of the change it follows.
pub fn new_job(
    core: &Core,
    kind: JobKind,
    payload: serde_json::Value,
    dedup_key: Option<String>,
    run_at: DateTime<Utc>,
) -> NewJob {
    NewJob {
        id: JobId::new(core.ids.as_ref()),
        kind: kind.name().to_owned(),
        payload,
        dedup_key,
        run_at,
        max_attempts: 10,
    }
}

/// Queues a job of `kind`. With a `dedup_key`, a job with the same key that is still
/// pending absorbs this one.
pub async fn enqueue(
    core: &Core,
    kind: JobKind,
    payload: serde_json::Value,
    dedup_key: Option<String>,
    run_at: DateTime<Utc>,
) -> Result<JobId, StoreError> {
    let job = new_job(core, kind, payload, dedup_key, run_at);
    core.store.enqueue_job(&job, core.clock.now()).await
}
