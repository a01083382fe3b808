//! Accepting and editing tracking requests.

use tidemark_domain::tracking_request::normalize_number;
use tidemark_domain::{
    AccountId, ApiKeyId, PartyId, RequestType, TrackingRequest, TrackingRequestId,
    TrackingRequestStatus, validate_request_number,
};
use tidemark_store::StoreError;

use crate::parts::core::Core;
use crate::use_cases::tracking::inference::{self, NumberInference};

/// No carrier issues longer numbers; longer input is a mistake, not a number.
const MAX_NUMBER_LENGTH: usize = 64;

/// A tracking request as submitted, before validation.
#[derive(Clone, Debug, Default)]
pub struct Submission {
    pub request_type: Option<String>,
    pub request_number: Option<String>,
    pub scac: Option<String>,
    pub ref_numbers: Vec<String>,
    pub shipment_tags: Vec<String>,
    pub auto_detect_scac: bool,
    pub initial_custom_fields: Option<serde_json::Value>,
    /// The id given in `relationships.customer`, if any.
    pub customer_id: Option<String>,
}

/// One reason to refuse a submission: where in the body, Terminal49's error code, a sentence.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// A JSON pointer into the request body.
    pub pointer: String,
    pub code: &'static str,
    pub detail: String,
    /// For a missing SCAC that could not be inferred: what the inference found (the
    /// candidates to choose from), shown in the error's `meta`.
    pub inference: Option<Box<NumberInference>>,
}

impl Problem {
    fn new(attribute: &'static str, code: &'static str, detail: impl Into<String>) -> Self {
        Self {
            pointer: format!("/data/attributes/{attribute}"),
            code,
            detail: detail.into(),
            inference: None,
        }
    }

    fn customer(code: &'static str, detail: impl Into<String>) -> Self {
        Self {
            pointer: "/data/relationships/customer/data/id".to_owned(),
            code,
            detail: detail.into(),
            inference: None,
        }
    }
}

/// The customer a submission names, which must be one of the account's parties.
async fn customer_of(
    core: &Core,
    account: AccountId,
    submission: &Submission,
) -> Result<Option<PartyId>, SubmitError> {
    let Some(raw) = submission.customer_id.as_deref() else {
        return Ok(None);
    };
    let Ok(id) = uuid::Uuid::parse_str(raw.trim()) else {
        return Err(SubmitError::Invalid(vec![Problem::customer(
            "invalid",
            format!("Customer id '{raw}' is not a valid id"),
        )]));
    };
    match core.store.party(account, PartyId(id)).await {
        Ok(party) => Ok(Some(party.id)),
        Err(StoreError::NotFound) => Err(SubmitError::Invalid(vec![Problem::customer(
            "not_found",
            format!("Customer '{raw}' does not exist in this account"),
        )])),
        Err(error) => Err(error.into()),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// Every problem found, so the client can fix them all at once.
    #[error("invalid tracking request")]
    Invalid(Vec<Problem>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<crate::use_cases::custom_fields::CustomFieldError> for SubmitError {
    fn from(error: crate::use_cases::custom_fields::CustomFieldError) -> Self {
        match error {
            crate::use_cases::custom_fields::CustomFieldError::Invalid(problems) => Self::Invalid(
                problems
                    .into_iter()
                    .map(|problem| Problem {
                        pointer: problem.pointer,
                        code: problem.code.as_str(),
                        detail: problem.detail,
                        inference: None,
                    })
                    .collect(),
            ),
            crate::use_cases::custom_fields::CustomFieldError::Store(error) => Self::Store(error),
        }
    }
}

/// Checks a submission against Terminal49's rules: all problems together.
pub fn validate(
    core: &Core,
    submission: &Submission,
) -> Result<(RequestType, String, String), Vec<Problem>> {
    let mut problems = Vec::new();
    let request_type = match submission.request_type.as_deref().map(str::trim) {
        None | Some("") => {
            problems.push(Problem::new(
                "request_type",
                "blank",
                "Request type can't be blank",
            ));
            None
        }
        Some(value) => {
            let parsed = RequestType::parse(value);
            if parsed.is_none() {
                problems.push(Problem::new(
                    "request_type",
                    "invalid_request_type",
                    format!(
                        "Request type '{value}' not recognized. Accepted request types are \
                         'bill_of_lading', 'booking_number', and 'container'"
                    ),
                ));
            }
            parsed
        }
    };
    let number = submission.request_number.as_deref().unwrap_or("");
    if number.trim().chars().count() > MAX_NUMBER_LENGTH {
        problems.push(Problem::new(
            "request_number",
            "too_long",
            format!("Request number is too long (maximum is {MAX_NUMBER_LENGTH} characters)"),
        ));
    }
    if let Err(found) =
        validate_request_number(request_type.unwrap_or(RequestType::BillOfLading), number)
    {
        problems.extend(
            found
                .into_iter()
                .map(|problem| Problem::new("request_number", problem.code(), problem.to_string())),
        );
    }
    let mut scac = submission
        .scac
        .as_deref()
        .map(|scac| scac.trim().to_uppercase())
        .unwrap_or_default();
    if scac.is_empty() {
        // Without a SCAC, the number's carrier is inferred; only a confident, single
        // answer is used (`auto_select`), otherwise the candidates go back to the client.
        match inference::infer(core, number) {
            Err(_) => problems.push(Problem::new("scac", "blank", "Scac can't be blank")),
            Ok(inferred) => match inferred.selected() {
                Some(line) => scac = line.scac.clone(),
                None => {
                    let detail = match inferred.candidates.as_slice() {
                        [] => "Scac can't be blank: no carrier could be inferred from the \
                               request number"
                            .to_owned(),
                        candidates => format!(
                            "Scac can't be blank: the request number may be {}; confirm \
                             the scac",
                            candidates
                                .iter()
                                .map(|c| format!("{} ({})", c.scac, c.name))
                                .collect::<Vec<_>>()
                                .join(" or ")
                        ),
                    };
                    problems.push(Problem {
                        inference: Some(Box::new(inferred)),
                        ..Problem::new("scac", "not_inferred", detail)
                    });
                }
            },
        }
    }
    if !scac.is_empty() {
        match core.reference.shipping_line(&scac) {
            None => problems.push(Problem::new(
                "scac",
                "not_recognized",
                format!("Scac '{scac}' is not recognized"),
            )),
            Some(line) => {
                let supported = match request_type {
                    Some(RequestType::BillOfLading) => line.bill_of_lading_tracking_support,
                    Some(RequestType::BookingNumber) => line.booking_number_tracking_support,
                    Some(RequestType::Container) => line.container_number_tracking_support,
                    None => true,
                };
                if let (false, Some(request_type)) = (supported, request_type) {
                    problems.push(Problem::new(
                        "request_type",
                        "invalid_request_type",
                        format!(
                            "{} does not support tracking by {}",
                            line.name,
                            request_type.as_str().replace('_', " ")
                        ),
                    ));
                }
            }
        }
    }
    match (problems.is_empty(), request_type) {
        (true, Some(request_type)) => {
            Ok((request_type, normalize_number(request_type, number), scac))
        }
        _ => Err(problems),
    }
}

/// Trims entries and drops empty and repeated ones, keeping the client's order.
pub fn clean_list(values: &[String]) -> Vec<String> {
    let mut cleaned: Vec<String> = Vec::new();
    for value in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
        if !cleaned.iter().any(|seen| seen == value) {
            cleaned.push(value.to_owned());
        }
    }
    cleaned
}

/// Accepts a tracking request: validated, stored as `pending`.
pub async fn submit(
    core: &Core,
    account: AccountId,
    submitted_by: ApiKeyId,
    submission: Submission,
) -> Result<TrackingRequest, SubmitError> {
    submit_by(core, account, Some(submitted_by), submission).await
}

/// Accepts a tracking request that an inbound EDI feed starts (`create_shipments`): no API
/// key submitted it.
pub async fn submit_from_feed(
    core: &Core,
    account: AccountId,
    submission: Submission,
) -> Result<TrackingRequest, SubmitError> {
    submit_by(core, account, None, submission).await
}

async fn submit_by(
    core: &Core,
    account: AccountId,
    submitted_by: Option<ApiKeyId>,
    submission: Submission,
) -> Result<TrackingRequest, SubmitError> {
    let (request_type, request_number, scac) =
        validate(core, &submission).map_err(SubmitError::Invalid)?;
    let customer_id = customer_of(core, account, &submission).await?;
    let initial_custom_fields = crate::use_cases::custom_fields::stage(
        core,
        account,
        submission.initial_custom_fields.as_ref(),
    )
    .await
    .map_err(SubmitError::from)?;
    let now = core.clock.now();
    let request = TrackingRequest {
        id: TrackingRequestId::new(core.ids.as_ref()),
        account_id: account,
        request_type,
        request_number,
        scac,
        ref_numbers: clean_list(&submission.ref_numbers),
        shipment_tags: clean_list(&submission.shipment_tags),
        status: TrackingRequestStatus::Pending,
        failed_reason: None,
        is_retrying: false,
        retry_count: None,
        shipment_id: None,
        initial_custom_fields,
        customer_id,
        submitted_by,
        polled_at: None,
        created_at: now,
        updated_at: now,
    };
    match core.store.create_tracking_request(&request).await {
        Ok(()) => {
            // If this is lost (a crash right here), the scheduler's sweep queues it again.
            if let Err(error) = super::queue_poll(core, account, request.id).await {
                tracing::warn!(error = ?error, "cannot queue the first poll; the sweep will");
            }
            // EDI that named the number before anyone tracked it applies now.
            if let Err(error) = crate::use_cases::edi::waiting::apply_waiting(core, &request).await
            {
                tracing::warn!(error = ?error, "cannot apply earlier EDI; the next interchange will");
            }
            Ok(request)
        }
        Err(StoreError::Conflict {
            constraint: "tracking_requests_active_number",
        }) => Err(SubmitError::Invalid(vec![Problem::new(
            "request_number",
            "duplicate",
            format!(
                "Request number '{}' with scac '{}' already exists in a tracking_request with \
                 a pending, awaiting_manifest, created or tracking_stopped status",
                request.request_number, request.scac
            ),
        )])),
        Err(error) => Err(error.into()),
    }
}

/// Replaces a request's ref numbers.
pub async fn update_ref_numbers(
    core: &Core,
    account: AccountId,
    id: TrackingRequestId,
    ref_numbers: &[String],
) -> Result<TrackingRequest, StoreError> {
    core.store
        .update_tracking_request_ref_numbers(
            account,
            id,
            &clean_list(ref_numbers),
            core.clock.now(),
        )
        .await
}
