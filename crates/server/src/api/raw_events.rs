//! `/v2/containers/{id}/raw_events`: what the carrier said about a container, event by
//! event, before Tidemark named the milestones (Terminal49's deprecated raw feed, kept for
//! clients that still read it).

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use tidemark_domain::{AccountId, ContainerId, RawEvent};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::api::auth::Principal;
use crate::api::error::{ApiError, ErrorDocument};
use crate::api::extract::Path;
use crate::api::jsonapi::{
    DEFAULT_PAGE_SIZE, Includes, ListDocument, QueryParams, Relationships, Resource,
    ResourceIdentifier, resource_object, timestamp,
};
use crate::api::vessels::vessel_objects;
use crate::app::AppState;
use crate::config::TerminalConfig;
use crate::resources::containers::{DataSource, Origins, VesselIds, origins_of, vessel_ids};
use crate::resources::ports::port_objects;
use crate::resources::terminals::terminal_objects;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list))
}

/// Relationships raw events may include; Terminal49 includes all three unless told
/// otherwise (its live raw events carry their terminals in `included`).
const INCLUDES: &[&str] = &["location", "vessel", "terminal"];

/// The line whose events these are (every raw event of a container is its shipment's); a
/// terminal's answers and 322s name their own provider ([`Provider::terminal_of`]).
async fn provider_of(
    state: &AppState,
    account: AccountId,
    events: &[RawEvent],
) -> Result<Provider, ApiError> {
    let Some(first) = events.first() else {
        return Ok(Provider {
            scac: String::new(),
            name: None,
        });
    };
    let shipment = state.store.shipment(account, first.shipment_id).await?;
    let name = state
        .reference
        .shipping_line(&shipment.shipping_line_scac)
        .map(|line| line.name.clone());
    Ok(Provider {
        scac: shipment.shipping_line_scac,
        name,
    })
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RawEventAttributes {
    /// Terminal49's raw event name (`vessel_loaded`, `full_out`, …), or null.
    pub event: Option<String>,
    /// The event in the carrier's terms (DCSA event type, code and classifier).
    pub original_event: String,
    #[serde(with = "timestamp")]
    pub timestamp: DateTime<Utc>,
    pub estimated: bool,
    /// Deprecated by Terminal49: the event's local date when it happened.
    pub actual_on: Option<NaiveDate>,
    /// Deprecated by Terminal49: the event's local date when it is expected.
    pub estimated_on: Option<NaiveDate>,
    #[serde(with = "timestamp::option")]
    pub actual_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub estimated_at: Option<DateTime<Utc>>,
    pub timezone: Option<String>,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    pub location_name: Option<String>,
    pub location_locode: Option<String>,
    pub vessel_name: Option<String>,
    pub vessel_imo: Option<String>,
    /// The event's place in the container's feed, in time order.
    pub index: usize,
    pub voyage_number: Option<String>,
    /// When an estimated event is expected (the same as `estimated_at`).
    #[serde(with = "timestamp::option")]
    pub will_occur_at: Option<DateTime<Utc>>,
    /// Always null: a re-sent event replaces the one it corrects.
    pub invalidated_at: Option<String>,
    /// Where it came from: `terminal` for a terminal's answer or an X12 322 (sent by
    /// terminals and rail ramps), `shipping_line` for the rest.
    pub data_source: &'static str,
    /// Who reported it: the SCAC of the line; for a terminal's answer the id of the
    /// terminal asked (`port_of_virginia`, `sandbox`, `apm_pier400`: as in `original_event`); for
    /// an X12 322 the interchange's sender id (a terminal or rail ramp).
    pub data_provider_code: String,
    /// The name of the line, or of the profile of the terminal asked (null for a 322's
    /// sender).
    pub data_provider_name: Option<String>,
}

struct RawEventResource<'a> {
    event: &'a RawEvent,
    index: usize,
    /// The container asked about: a vessel-level event concerns it too.
    container: ContainerId,
    provider: &'a Provider,
    vessels: &'a VesselIds,
    origins: &'a Origins,
    state: &'a AppState,
}

/// Who reported a raw event: its code and name (`data_provider_code`, `data_provider_name`).
#[derive(Clone)]
struct Provider {
    scac: String,
    name: Option<String>,
}

impl Provider {
    /// Who reported the raw event with this id, where it came from a terminal: the terminal
    /// asked (`terminal|{terminal}|{container}|{digest}`: its id, the profile's or its
    /// table's name, `configured` telling which profile a table is), named as its profile
    /// names it, or the sender of an X12 322 (`edi:{sender}:…`). `None` for the line's own.
    fn terminal_of(
        source_id: &str,
        origins: &Origins,
        configured: &[TerminalConfig],
    ) -> Option<Self> {
        if origins.of(source_id) != DataSource::Terminal {
            return None;
        }
        if let Some(rest) = source_id.strip_prefix("terminal|") {
            let (terminal, _) = rest.split_once('|')?;
            let profile = configured
                .iter()
                .find(|config| config.name == terminal)
                .map_or(terminal, |config| config.profile_id.as_str());
            let name = tidemark_terminals::profile::Profiles::embedded()
                .get(profile)
                .map(|found| found.name.clone());
            return Some(Self {
                scac: terminal.to_owned(),
                name,
            });
        }
        let (sender, _) = source_id.strip_prefix("edi:")?.split_once(':')?;
        Some(Self {
            scac: sender.to_owned(),
            name: None,
        })
    }
}

impl Resource for RawEventResource<'_> {
    const TYPE: &'static str = "raw_event";
    const PATH: &'static str = "raw_events";
    type Attributes = RawEventAttributes;

    fn id(&self) -> String {
        self.event.id.to_string()
    }

    fn attributes(&self) -> RawEventAttributes {
        let r = &self.event.reported;
        let timezone = r
            .location_locode
            .as_deref()
            .and_then(|l| self.state.reference.time_zone_of(l));
        let local_date = timezone
            .and_then(|zone| zone.parse::<chrono_tz::Tz>().ok())
            .map_or_else(
                || r.timestamp.date_naive(),
                |zone| r.timestamp.with_timezone(&zone).date_naive(),
            );
        let provider = Provider::terminal_of(
            &self.event.source_id,
            self.origins,
            &self.state.config.terminals,
        )
        .unwrap_or_else(|| self.provider.clone());
        RawEventAttributes {
            event: r.event.clone(),
            original_event: r.original_event.clone(),
            timestamp: r.timestamp,
            estimated: r.estimated,
            actual_on: (!r.estimated).then_some(local_date),
            estimated_on: r.estimated.then_some(local_date),
            actual_at: (!r.estimated).then_some(r.timestamp),
            estimated_at: r.estimated.then_some(r.timestamp),
            timezone: timezone.map(str::to_owned),
            created_at: self.event.created_at,
            location_name: r.location_name.clone(),
            location_locode: r.location_locode.clone(),
            vessel_name: r.vessel_name.clone(),
            vessel_imo: r.vessel_imo.clone(),
            index: self.index,
            voyage_number: r.voyage_number.clone(),
            will_occur_at: r.estimated.then_some(r.timestamp),
            invalidated_at: None,
            data_source: self.origins.of(&self.event.source_id).as_str(),
            data_provider_code: provider.scac,
            data_provider_name: provider.name,
        }
    }

    fn relationships(&self) -> Relationships {
        Relationships::default()
            .one(
                "location",
                self.event
                    .reported
                    .location_locode
                    .as_deref()
                    .and_then(|l| self.state.reference.port_by_locode(l))
                    .map(|p| ResourceIdentifier::new("port", p.id)),
            )
            .one(
                "vessel",
                self.event
                    .reported
                    .vessel_imo
                    .as_ref()
                    .and_then(|imo| self.vessels.get(imo))
                    .map(|id| ResourceIdentifier::new("vessel", id)),
            )
            .one(
                "container",
                Some(ResourceIdentifier::new("container", self.container)),
            )
            .one(
                "terminal",
                self.event
                    .reported
                    .terminal_id
                    .map(|id| ResourceIdentifier::new("terminal", id)),
            )
    }
}

/// A container's raw carrier events in time order, estimates included. Deprecated by
/// Terminal49 in favour of transport events; paginated here like every list.
#[utoipa::path(
    get, path = "/v2/containers/{id}/raw_events", tag = "Containers",
    params(
        ("id" = Uuid, Path),
        ("include" = Option<String>, Query, description = "location, vessel, terminal (all three when absent)"),
        ("page[number]" = Option<u32>, Query), ("page[size]" = Option<u32>, Query),
    ),
    responses(
        (status = 200, body = ListDocument<RawEventAttributes>),
        (status = 400, body = ErrorDocument), (status = 401, body = ErrorDocument),
        (status = 404, body = ErrorDocument), (status = 429, body = ErrorDocument),
    ),
    security(("token" = []))
)]
async fn list(
    state: AppState,
    principal: Principal,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<ListDocument<RawEventAttributes>, ApiError> {
    let page = query.page(DEFAULT_PAGE_SIZE)?;
    let includes = match query.get("include") {
        None => Includes::of(INCLUDES),
        Some(_) => query.includes("raw_event", INCLUDES)?,
    };
    let container = Uuid::parse_str(&id)
        .map(ContainerId)
        .map_err(|_| ApiError::NotFound)?;
    let events = state
        .store
        .raw_events_of_container(principal.account_id, container)
        .await?;
    let base = &state.config.public_url;
    let provider = provider_of(&state, principal.account_id, &events).await?;
    let imos = events
        .iter()
        .filter_map(|e| e.reported.vessel_imo.as_deref());
    let vessels = vessel_ids(&state, imos.clone()).await?;
    let origins = if events.iter().any(|e| Origins::needs_edi(&e.source_id)) {
        let number = state
            .store
            .container(principal.account_id, container)
            .await?
            .number;
        origins_of(&state, principal.account_id, &number).await?
    } else {
        Origins::default()
    };
    let mut included = Vec::new();
    if includes.contains("location") {
        let locodes = events
            .iter()
            .filter_map(|e| e.reported.location_locode.as_deref());
        included.extend(port_objects(state.reference, locodes, base));
    }
    if includes.contains("vessel") {
        included.extend(vessel_objects(&state, imos).await?);
    }
    if includes.contains("terminal") {
        let terminals = events.iter().filter_map(|e| e.reported.terminal_id);
        included.extend(terminal_objects(state.reference, terminals, base));
    }
    let offset = usize::try_from(page.offset()).unwrap_or(usize::MAX);
    let data = events
        .iter()
        .enumerate()
        .skip(offset)
        .take(page.size as usize)
        .map(|(index, event)| {
            resource_object(
                &RawEventResource {
                    event,
                    index,
                    container,
                    provider: &provider,
                    vessels: &vessels,
                    origins: &origins,
                    state: &state,
                },
                base,
            )
        })
        .collect();
    Ok(ListDocument::page(
        data,
        included,
        &query,
        base,
        page,
        events.len() as u64,
    ))
}
