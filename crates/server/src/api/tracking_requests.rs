//! `/v2/tracking_requests`: submit a number to follow, and see how following it goes.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tidemark_domain::{TrackingRequest, TrackingRequestId, TrackingRequestStatus};
use tidemark_store::TrackingRequestFilter;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument, FieldError};
use crate::api::extract::Path;
use crate::api::jsonapi::Included;
use crate::api::jsonapi::{
    BodyType, DEFAULT_PAGE_SIZE, Document, Includes, JsonApiBody, ListDocument, QueryParams,
    included_object, resource_object,
};
use crate::api::shipments::{ShipmentResource, included_of};
use crate::app::AppState;
pub use crate::resources::tracking_requests::TrackingRequestAttributes;
use crate::use_cases::tracking::inference::{self, LineGuess, NumberInference};
use crate::use_cases::tracking::requests::{self, Submission, SubmitError};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(infer_number))
        .routes(routes!(show, update))
}

/// Relationships that `include` may name: the shipment and, through it, its containers and
/// ports.
const INCLUDES: &[&str] = &[
    "tracked_object.containers",
    "tracked_object.port_of_lading",
    "tracked_object.port_of_discharge",
    "tracked_object.destination",
    "tracked_object.pod_terminal",
    "tracked_object.destination_terminal",
];

/// What `include` asks for; Terminal49 includes the tracked shipment unless told otherwise,
/// in a list as in a single read.
fn includes_of(query: &QueryParams) -> Result<Includes, ApiError> {
    if query.get("include").is_none() {
        return Ok(Includes::of(&["tracked_object"]));
    }
    query.includes("tracking_request", INCLUDES)
}

/// The tracked shipment and what `includes` asks for through it.
async fn tracked_object_included(
    state: &AppState,
    requests: &[TrackingRequest],
    includes: &Includes,
) -> Result<Vec<Included>, ApiError> {
    let Some(account) = requests.first().map(|r| r.account_id) else {
        return Ok(Vec::new());
    };
    if !includes.contains("tracked_object") {
        return Ok(Vec::new());
    }
    // Two queries for the whole page, whatever its size.
    let ids: Vec<_> = requests.iter().filter_map(|r| r.shipment_id).collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let shipments = state.store.shipments_by_ids(account, &ids).await?;
    let containers = state.store.containers_of_shipments(&ids).await?;
    let per_shipment: Vec<Vec<_>> = shipments
        .iter()
        .map(|s| {
            containers
                .iter()
                .filter(|c| c.shipment_id == s.id)
                .cloned()
                .collect()
        })
        .collect();
    let customers = crate::api::shipments::customers_of(state, &shipments).await?;
    let resources: Vec<ShipmentResource<'_>> = shipments
        .iter()
        .zip(&per_shipment)
        .map(|(shipment, containers)| ShipmentResource {
            shipment,
            containers,
            customers: &customers,
            core: state,
        })
        .collect();
    let mut included: Vec<Included> = resources
        .iter()
        .map(|r| included_object(r, &state.config.public_url))
        .collect();
    included.extend(included_of(state, &includes.below("tracked_object"), &resources).await?);
    Ok(included)
}

/// Attributes of `POST /v2/tracking_requests`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct NewTrackingRequest {
    /// `bill_of_lading`, `booking_number` or `container`.
    pub request_type: Option<String>,
    /// At least 6 characters; container numbers must pass the ISO 6346 check digit.
    pub request_number: Option<String>,
    /// A SCAC from `GET /v2/shipping_lines` that supports the request type; `TEST` is the
    /// sandbox carrier. Without it the carrier is inferred from the number (as
    /// `POST /v2/tracking_requests/infer_number` does) and used when the inference is
    /// `auto_select`; otherwise the request is refused (422 `not_inferred`, with the
    /// inference and its candidates in the error's `meta`).
    pub scac: Option<String>,
    #[serde(default)]
    pub ref_numbers: Option<Vec<String>>,
    #[serde(default)]
    pub shipment_tags: Option<Vec<String>>,
    /// Accepted for Terminal49 compatibility: a missing `scac` is always inferred.
    #[serde(default)]
    pub auto_detect_vocc_scac: Option<bool>,
    /// Custom field values to apply once the shipment and containers exist.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub initial_custom_fields: Option<Value>,
}

impl BodyType for NewTrackingRequest {
    const TYPE: &'static str = "tracking_request";
}

/// Attributes of `PATCH /v2/tracking_requests/{id}`: `ref_numbers` (or Terminal49's
/// singular `ref_number`). Other attributes cannot be changed.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct TrackingRequestChanges(Map<String, Value>);

/// The documented shape of [`TrackingRequestChanges`].
#[derive(ToSchema)]
#[expect(
    dead_code,
    reason = "describes the request body in the OpenAPI document only"
)]
pub struct TrackingRequestPatch {
    ref_numbers: Option<Vec<String>>,
    /// Terminal49's singular form: replaces the ref numbers with this one.
    ref_number: Option<String>,
}

impl BodyType for TrackingRequestChanges {
    const TYPE: &'static str = "tracking_request";
}

impl From<SubmitError> for ApiError {
    fn from(error: SubmitError) -> Self {
        match error {
            SubmitError::Invalid(problems) => Self::Invalid(
                problems
                    .into_iter()
                    .map(|problem| FieldError {
                        // What the inference found, in `infer_number`'s shape.
                        meta: problem.inference.as_deref().and_then(|found| {
                            serde_json::to_value(InferNumberAttributes::from(found)).ok()
                        }),
                        ..FieldError::pointer(problem.pointer, problem.code, problem.detail)
                    })
                    .collect(),
            ),
            SubmitError::Store(error) => error.into(),
        }
    }
}

fn parse_id(id: &str) -> Result<TrackingRequestId, ApiError> {
    Uuid::parse_str(id)
        .map(TrackingRequestId)
        .map_err(|_| ApiError::NotFound)
}

fn filter_from(query: &QueryParams) -> Result<TrackingRequestFilter, ApiError> {
    let status = match query.filter("filter[status]") {
        None => None,
        Some(value) => Some(TrackingRequestStatus::parse(value).ok_or_else(|| {
            ApiError::parameter(
                "filter[status]",
                "invalid_filter",
                format!(
                    "filter[status] must be one of pending, awaiting_manifest, created, failed, \
                     tracking_stopped; got {value:?}."
                ),
            )
        })?),
    };
    Ok(TrackingRequestFilter {
        q: query.filter("q").map(str::to_owned),
        request_number: query.filter("filter[request_number]").map(str::to_owned),
        status,
        scac: query.filter("filter[scac]").map(str::to_owned),
        created_from: query.time("filter[created_at][start]")?,
        created_to: query.time("filter[created_at][end]")?,
        updated_from: query.time("filter[updated_at][start]")?,
        updated_to: query.time("filter[updated_at][end]")?,
    })
}

/// List tracking requests, newest first.
#[utoipa::path(
    get, path = "/v2/tracking_requests", tag = "Tracking requests",
    params(
        ("q" = Option<String>, Query, description = "Substring of the request number or a ref number"),
        ("filter[request_number]" = Option<String>, Query),
        ("filter[status]" = Option<String>, Query, description = "pending, awaiting_manifest, created, failed or tracking_stopped"),
        ("filter[scac]" = Option<String>, Query),
        ("filter[created_at][start]" = Option<String>, Query, description = "ISO 8601"),
        ("filter[created_at][end]" = Option<String>, Query, description = "ISO 8601"),
        ("filter[updated_at][start]" = Option<String>, Query, description = "ISO 8601"),
        ("filter[updated_at][end]" = Option<String>, Query, description = "ISO 8601"),
        ("include" = Option<String>, Query, description = "`tracked_object`"),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, body = ListDocument<TrackingRequestAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    principal: Principal,
    query: QueryParams,
) -> Result<ListDocument<TrackingRequestAttributes>, ApiError> {
    let page = query.page(DEFAULT_PAGE_SIZE)?;
    let includes = includes_of(&query)?;
    let filter = filter_from(&query)?;
    let found = state
        .store
        .list_tracking_requests(principal.account_id, &filter, page.into())
        .await?;
    let base = &state.config.public_url;
    let included = tracked_object_included(&state, &found.items, &includes).await?;
    Ok(ListDocument::page(
        found
            .items
            .iter()
            .map(|request| resource_object(request, base))
            .collect(),
        included,
        &query,
        base,
        page,
        found.total,
    ))
}

/// Submit a number to track. The request starts `pending`; a duplicate of a pending or
/// created request for the same number and SCAC is refused. Without a `scac`, the carrier
/// inferred from the number is used when it is certain (`auto_select`, the response shows
/// it); otherwise 422 with the candidates in the error's `meta`. Honours `Idempotency-Key`.
#[utoipa::path(
    post, path = "/v2/tracking_requests", tag = "Tracking requests",
    request_body(content = NewTrackingRequest, description = "`{data: {type: \"tracking_request\", attributes}}`"),
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for 24 hours")),
    responses(
        (status = 201, body = Document<TrackingRequestAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 403, body = ErrorDocument), (status = 409, body = ErrorDocument),
        (status = 413, body = ErrorDocument), (status = 415, body = ErrorDocument),
        (status = 422, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn create(
    state: AppState,
    principal: Principal,
    body: JsonApiBody<NewTrackingRequest>,
) -> Result<Response, ApiError> {
    let customer_id = body.relationship_id("customer", "party")?;
    let attributes = body.attributes;
    let submission = Submission {
        customer_id,
        request_type: attributes.request_type,
        request_number: attributes.request_number,
        scac: attributes.scac,
        ref_numbers: attributes.ref_numbers.unwrap_or_default(),
        shipment_tags: attributes.shipment_tags.unwrap_or_default(),
        auto_detect_scac: attributes.auto_detect_vocc_scac.unwrap_or(false),
        initial_custom_fields: attributes.initial_custom_fields,
    };
    let request =
        requests::submit(&state, principal.account_id, principal.key_id, submission).await?;
    let document = Document::new(
        resource_object(&request, &state.config.public_url),
        Vec::new(),
    );
    Ok((StatusCode::CREATED, document).into_response())
}

/// Get a tracking request. `tracked_object` is included by default.
#[utoipa::path(
    get, path = "/v2/tracking_requests/{id}", tag = "Tracking requests",
    params(
        ("id" = Uuid, Path),
        ("include" = Option<String>, Query, description = "`tracked_object` (the default)"),
    ),
    responses(
        (status = 200, body = Document<TrackingRequestAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn show(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<Document<TrackingRequestAttributes>, ApiError> {
    let includes = includes_of(&query)?;
    let request = state
        .store
        .tracking_request(principal.account_id, parse_id(&id)?)
        .await?;
    let included =
        tracked_object_included(&state, std::slice::from_ref(&request), &includes).await?;
    Ok(Document::new(
        resource_object(&request, &state.config.public_url),
        included,
    ))
}

/// Change a tracking request's ref numbers.
#[utoipa::path(
    patch, path = "/v2/tracking_requests/{id}", tag = "Tracking requests",
    params(("id" = Uuid, Path)),
    request_body(content = TrackingRequestPatch, description = "`ref_numbers` (array) or `ref_number` (string)"),
    responses(
        (status = 200, body = Document<TrackingRequestAttributes>),
        (status = 401, body = ErrorDocument), (status = 403, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 422, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn update(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    body: JsonApiBody<TrackingRequestChanges>,
) -> Result<Document<TrackingRequestAttributes>, ApiError> {
    let id = parse_id(&id)?;
    let ref_numbers = ref_numbers_change(&body.attributes.0)?;
    let request = match ref_numbers {
        Some(ref_numbers) => {
            requests::update_ref_numbers(&state, principal.account_id, id, &ref_numbers).await?
        }
        None => {
            state
                .store
                .tracking_request(principal.account_id, id)
                .await?
        }
    };
    Ok(Document::new(
        resource_object(&request, &state.config.public_url),
        Vec::new(),
    ))
}

/// The new ref numbers, or every reason the change is refused.
fn ref_numbers_change(attributes: &Map<String, Value>) -> Result<Option<Vec<String>>, ApiError> {
    let mut errors = Vec::new();
    let mut change = None;
    for (name, value) in attributes {
        let pointer = format!("/data/attributes/{name}");
        match (name.as_str(), value) {
            ("ref_numbers", Value::Array(items)) => {
                let strings: Option<Vec<String>> = items
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect();
                match strings {
                    Some(strings) => change = Some(strings),
                    None => errors.push(FieldError::pointer(
                        pointer,
                        "invalid",
                        "ref_numbers must be an array of strings",
                    )),
                }
            }
            ("ref_numbers", Value::Null) => change = Some(Vec::new()),
            ("ref_number", Value::String(one)) => change = Some(vec![one.clone()]),
            ("ref_numbers" | "ref_number", _) => errors.push(FieldError::pointer(
                pointer,
                "invalid",
                format!("{name} has the wrong type"),
            )),
            _ => errors.push(FieldError::pointer(
                pointer,
                "not_editable",
                format!("{name} cannot be changed; only ref_numbers can"),
            )),
        }
    }
    if errors.is_empty() {
        Ok(change)
    } else {
        Err(ApiError::Invalid(errors))
    }
}

/// Body of `POST /v2/tracking_requests/infer_number` (no JSON:API envelope, as
/// Terminal49's).
#[derive(Debug, Deserialize, ToSchema)]
pub struct InferNumberRequest {
    /// A container number, bill of lading or booking number.
    #[schema(example = "WHLU1234560")]
    pub number: Option<String>,
}

/// A line the number may belong to.
#[derive(Debug, Serialize, ToSchema)]
pub struct InferredLine {
    pub scac: String,
    pub name: String,
    /// From 0 to 1.
    pub confidence: f64,
}

/// What was checked about the number itself.
#[derive(Debug, Serialize, ToSchema)]
pub struct InferValidation {
    /// `false` when a container number's check digit fails.
    pub is_valid: Option<bool>,
    /// `container` or `shipment`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub check_digit_passed: Option<bool>,
    /// The number as it would be sent to the carrier, when that differs from the input.
    pub parsed_number: Option<String>,
    /// Why the number is doubtful or no line could be predicted.
    pub reason: Option<String>,
}

/// The predicted line.
#[derive(Debug, Serialize, ToSchema)]
pub struct InferShippingLine {
    /// `auto_select` (a tracking request without a scac uses `selected`),
    /// `needs_confirmation` or `no_prediction`.
    pub decision: &'static str,
    pub selected: Option<InferredLine>,
    /// Most likely first.
    pub candidates: Vec<InferredLine>,
}

/// Attributes of an `infer_number_results` object.
#[derive(Debug, Serialize, ToSchema)]
pub struct InferNumberAttributes {
    /// `container`, `bill_of_lading` or `booking`.
    pub number_type: &'static str,
    pub validation: InferValidation,
    pub shipping_line: InferShippingLine,
}

fn line(guess: &LineGuess) -> InferredLine {
    InferredLine {
        scac: guess.scac.clone(),
        name: guess.name.clone(),
        confidence: guess.confidence,
    }
}

impl From<&NumberInference> for InferNumberAttributes {
    fn from(found: &NumberInference) -> Self {
        let validation = &found.inference.validation;
        Self {
            number_type: found.inference.number_type.as_str(),
            validation: InferValidation {
                is_valid: validation.is_valid,
                kind: validation.kind,
                check_digit_passed: validation.check_digit_passed,
                parsed_number: validation.parsed_number.clone(),
                reason: validation.reason.clone(),
            },
            shipping_line: InferShippingLine {
                decision: found.inference.decision.as_str(),
                selected: found.selected().map(line),
                candidates: found.candidates.iter().map(line).collect(),
            },
        }
    }
}

/// `{"data": {"id": "req_…", "type": "infer_number_results", "attributes": …}}`
#[derive(Debug, Serialize, ToSchema)]
pub struct InferNumberData {
    pub id: String,
    #[serde(rename = "type")]
    #[schema(example = "infer_number_results")]
    pub kind: &'static str,
    pub attributes: InferNumberAttributes,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InferNumberDocument {
    pub data: InferNumberData,
}

/// Predict a number's type and carrier (SCAC) from bill-of-lading and booking prefixes and
/// ISO 6346 owner codes. A leasing company's container is never auto-selected; a wrong
/// check digit is reported and needs confirmation. `TEST` numbers infer the sandbox
/// carrier. `POST /v2/tracking_requests` without a `scac` uses the `auto_select` answer.
#[utoipa::path(
    post, path = "/v2/tracking_requests/infer_number", tag = "Tracking requests",
    request_body(content = InferNumberRequest, description = "`{\"number\": \"…\"}`"),
    responses(
        (status = 200, body = InferNumberDocument),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 422, body = ErrorDocument, description = "This reference number is not valid."),
        (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn infer_number(
    state: AppState,
    _principal: Principal,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let body: InferNumberRequest = serde_json::from_slice(&body).map_err(|error| {
        ApiError::BadRequest(vec![FieldError::pointer(
            "",
            "malformed_json",
            format!("The body is not valid JSON: {error}."),
        )])
    })?;
    let number = body.number.unwrap_or_default();
    let found = inference::infer(&state, &number).map_err(|error| {
        ApiError::Invalid(vec![FieldError::pointer(
            "/number",
            "invalid_number",
            format!("This reference number is not valid: {error}."),
        )])
    })?;
    Ok(crate::api::jsonapi::json_body(&InferNumberDocument {
        data: InferNumberData {
            id: format!("req_{}", state.ids.next_id()),
            kind: "infer_number_results",
            attributes: InferNumberAttributes::from(&found),
        },
    }))
}
