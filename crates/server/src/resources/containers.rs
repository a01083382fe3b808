//! `container` and `transport_event`: a container with its milestones, and the events that
//! moved it.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use tidemark_domain::pickup::LfdSource;
use tidemark_domain::{
    AccountId, Container, ContainerId, RawEventId, Shipment, TransportEvent, TransportEventName,
};
use tidemark_store::{ContainerEventIds, StoreError};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::parts::core::Core;
use crate::resources::jsonapi::{Relationships, Resource, ResourceIdentifier, timestamp};

#[derive(Debug, Serialize, ToSchema)]
pub struct ContainerAttributes {
    pub number: String,
    pub seal_number: Option<String>,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    pub equipment_type: Option<String>,
    pub equipment_length: Option<u32>,
    pub equipment_height: Option<String>,
    pub weight_in_lbs: Option<u32>,
    /// Fees owed at the terminal (`{type, amount, currency_code}`), as terminals and EDI
    /// report them.
    #[schema(value_type = Vec<Object>)]
    pub fees_at_pod_terminal: Vec<tidemark_domain::pickup::PickupFee>,
    /// Holds in force at the terminal (`{name, status, description}`).
    #[schema(value_type = Vec<Object>)]
    pub holds_at_pod_terminal: Vec<tidemark_domain::pickup::PickupHold>,
    #[serde(with = "timestamp::option")]
    pub pickup_lfd: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub pickup_appointment_at: Option<DateTime<Utc>>,
    pub availability_known: bool,
    pub available_for_pickup: bool,
    #[serde(with = "timestamp::option")]
    pub pod_arrived_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub pod_discharged_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub final_destination_full_out_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub pod_full_out_at: Option<DateTime<Utc>>,
    #[serde(with = "timestamp::option")]
    pub empty_terminated_at: Option<DateTime<Utc>>,
    pub pod_timezone: Option<String>,
    pub final_destination_timezone: Option<String>,
    pub empty_terminated_timezone: Option<String>,
    pub current_status: &'static str,
    /// The container's own reference numbers, set by users (carriers' feeds carry none).
    pub ref_numbers: Vec<String>,
    /// When the shipment was last polled at its carrier.
    #[serde(with = "timestamp::option")]
    pub shipment_last_tracking_request_at: Option<DateTime<Utc>>,
    /// Terminal data (not collected yet: DCSA Track & Trace has none), always null.
    #[serde(with = "timestamp::option")]
    pub pod_last_tracking_request_at: Option<DateTime<Utc>>,
    /// When a terminal or an EDI status last reported on the container.
    #[serde(with = "timestamp::option")]
    pub terminal_checked_at: Option<DateTime<Utc>>,
    /// The yard place the terminal reported.
    pub location_at_pod_terminal: Option<String>,
    /// Terminal data, always null for now.
    pub pod_full_out_chassis_number: Option<String>,
    /// When the shipment left its port of lading (the container sails on it).
    #[serde(with = "timestamp::option")]
    pub pol_vessel_departed_at: Option<DateTime<Utc>>,
    /// Milestones and terminal data Tidemark does not collect yet, always null, present so
    /// that Terminal49's clients find every field they read (see
    /// docs/src/terminal49.md).
    #[serde(flatten)]
    pub not_collected: NotCollected,
}

/// Container attributes Terminal49 sends that Tidemark fills only when a source says:
/// import deadlines and the rail leg (from terminals, EDI and rail milestones, the rail
/// carriers' SCACs from the railroads EDI statuses name); origin gate and load times and
/// delivery stay null.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct NotCollected {
    pub import_deadlines: ImportDeadlines,
    pub ssl_lfd: Option<String>,
    pub empty_out_at: Option<String>,
    pub pol_full_in_at: Option<String>,
    pub pol_vessel_loaded_at: Option<String>,
    pub delivered_at: Option<String>,
    pub ind_facility_fees: Option<Vec<Value>>,
    pub ind_facility_holds: Option<Vec<Value>>,
    pub ind_facility_lfd_on: Option<String>,
    pub ind_eta_at: Option<String>,
    pub ind_ata_at: Option<String>,
    pub ind_rail_carrier_scac: Option<String>,
    pub ind_rail_unloaded_at: Option<String>,
    pub pod_rail_carrier_scac: Option<String>,
    pub pod_rail_loaded_at: Option<String>,
    pub pod_rail_departed_at: Option<String>,
    pub rail_last_tracking_request_at: Option<String>,
}

/// The last free days for pickup, by who reported them (terminals and EDI: 322 `NF`,
/// IFTSTA). Terminal49 always sends the object, each member null when unknown.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct ImportDeadlines {
    /// The terminal's last free day before demurrage (time zone: `pod_timezone`).
    #[serde(with = "timestamp::option")]
    pub pickup_lfd_terminal: Option<DateTime<Utc>>,
    /// The rail carrier's last free day at the inland destination.
    #[serde(with = "timestamp::option")]
    pub pickup_lfd_rail: Option<DateTime<Utc>>,
    /// The shipping line's last free day.
    #[serde(with = "timestamp::option")]
    pub pickup_lfd_line: Option<DateTime<Utc>>,
}

/// A last free day as Terminal49 shows it: the start of that day where the container is
/// (the port of discharge's zone, else UTC), in UTC.
fn start_of(day: Option<chrono::NaiveDate>, zone: Option<&str>) -> Option<DateTime<Utc>> {
    let midnight = day?.and_hms_opt(0, 0, 0)?;
    match zone.and_then(|zone| zone.parse::<chrono_tz::Tz>().ok()) {
        Some(zone) => midnight
            .and_local_timezone(zone)
            .earliest()
            .map(|at| at.with_timezone(&Utc)),
        None => Some(midnight.and_utc()),
    }
}

/// A pick-up notice's value as the container shows the same fact: a last free day as the
/// start of that day where the event happened (like `pickup_lfd`), an appointment as is.
fn notice_value(event: &TransportEvent, zone: Option<&str>) -> Option<String> {
    let value = event.value.as_deref()?;
    let day = chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d").ok();
    match day.and_then(|day| start_of(Some(day), zone)) {
        Some(start) => Some(start.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        None => Some(value.to_owned()),
    }
}

/// Where the container is to be picked up (Terminal49's `pickup_facility`): the terminal at
/// the port of discharge, unless it goes on inland (a rail leg, or a destination beyond the
/// port), where the inland facility is not known.
pub fn pickup_facility(container: &Container, shipment: &Shipment) -> Option<Uuid> {
    let inland = &container.inland;
    let by_rail = inland.pod_rail_loaded_at.is_some()
        || inland.pod_rail_departed_at.is_some()
        || inland.ind_eta_at.is_some()
        || inland.ind_ata_at.is_some()
        || inland.ind_rail_unloaded_at.is_some();
    let beyond_the_port = shipment
        .destination_locode
        .as_ref()
        .is_some_and(|destination| Some(destination) != shipment.port_of_discharge_locode.as_ref());
    if by_rail || beyond_the_port {
        return None;
    }
    shipment.pod_terminal_id
}

pub struct ContainerResource<'a> {
    pub container: &'a Container,
    /// The container's shipment, for time zones.
    pub shipment: Option<&'a Shipment>,
    /// The ids of its events, listed in its relationships (see [`event_ids_of`]).
    pub events: &'a ContainerEventIds,
    pub core: &'a Core,
}

/// The event ids of several containers, by container.
pub type EventIds = HashMap<ContainerId, ContainerEventIds>;

/// What a container without events lists.
static NO_EVENTS: ContainerEventIds = ContainerEventIds {
    transport_events: Vec::new(),
    raw_events: Vec::new(),
};

/// The event ids of these containers of the account, in one visit to the store. The ids
/// are collected before the future starts, so it holds no borrowing iterator.
pub fn event_ids_of(
    core: &Core,
    account: AccountId,
    containers: impl IntoIterator<Item = ContainerId>,
) -> impl Future<Output = Result<EventIds, StoreError>> + Send + '_ {
    let ids: Vec<ContainerId> = containers.into_iter().collect();
    async move { core.store.event_ids_of_containers(account, &ids).await }
}

/// One container's entry of `ids` (none when it has no events).
pub fn events_in(ids: &EventIds, container: ContainerId) -> &ContainerEventIds {
    ids.get(&container).unwrap_or(&NO_EVENTS)
}

impl Resource for ContainerResource<'_> {
    const TYPE: &'static str = "container";
    const PATH: &'static str = "containers";
    type Attributes = ContainerAttributes;

    fn id(&self) -> String {
        self.container.id.to_string()
    }

    fn attributes(&self) -> ContainerAttributes {
        let c = self.container;
        let zone = |locode: Option<&String>| {
            locode
                .and_then(|l| self.core.reference.time_zone_of(l))
                .map(str::to_owned)
        };
        let pod_zone = zone(
            self.shipment
                .and_then(|s| s.port_of_discharge_locode.as_ref()),
        );
        let destination_zone = zone(self.shipment.and_then(|s| {
            s.destination_locode
                .as_ref()
                .or(s.port_of_discharge_locode.as_ref())
        }));
        ContainerAttributes {
            number: c.number.clone(),
            seal_number: c.seal_number.clone(),
            created_at: c.created_at,
            equipment_type: c.equipment_type.clone(),
            equipment_length: c.equipment_length,
            equipment_height: c.equipment_height.clone(),
            weight_in_lbs: c.weight_in_lbs,
            fees_at_pod_terminal: c.pickup.fees.clone(),
            holds_at_pod_terminal: c.pickup.holds.clone(),
            pickup_lfd: start_of(c.pickup.last_free_day, pod_zone.as_deref()),
            pickup_appointment_at: c.pickup.appointment_at,
            availability_known: c.availability_known,
            available_for_pickup: c.available_for_pickup,
            pod_arrived_at: c.pod_arrived_at,
            pod_discharged_at: c.pod_discharged_at,
            final_destination_full_out_at: c.final_destination_full_out_at,
            pod_full_out_at: c.pod_full_out_at,
            empty_terminated_at: c.empty_terminated_at,
            final_destination_timezone: c
                .final_destination_full_out_at
                .and(destination_zone.clone()),
            empty_terminated_timezone: c.empty_terminated_at.and(destination_zone),
            pod_timezone: pod_zone.clone(),
            current_status: c.current_status.as_str(),
            ref_numbers: c.ref_numbers.clone(),
            shipment_last_tracking_request_at: self
                .shipment
                .and_then(|s| s.line_tracking_last_attempted_at),
            pod_last_tracking_request_at: None,
            terminal_checked_at: c.pickup.checked_at,
            location_at_pod_terminal: c.pickup.location.clone(),
            pod_full_out_chassis_number: None,
            pol_vessel_departed_at: self.shipment.and_then(|s| s.pol_atd_at),
            not_collected: NotCollected {
                import_deadlines: ImportDeadlines {
                    pickup_lfd_terminal: start_of(
                        (c.pickup.lfd_source == LfdSource::Terminal)
                            .then_some(c.pickup.last_free_day)
                            .flatten(),
                        pod_zone.as_deref(),
                    ),
                    pickup_lfd_rail: start_of(c.pickup.rail_last_free_day, pod_zone.as_deref()),
                    pickup_lfd_line: start_of(c.pickup.line_last_free_day, pod_zone.as_deref()),
                },
                ind_facility_lfd_on: c
                    .pickup
                    .rail_last_free_day
                    .map(|day| day.format("%Y-%m-%d").to_string()),
                ind_eta_at: c.inland.ind_eta_at.map(timestamp::format),
                ind_ata_at: c.inland.ind_ata_at.map(timestamp::format),
                ind_rail_unloaded_at: c.inland.ind_rail_unloaded_at.map(timestamp::format),
                pod_rail_loaded_at: c.inland.pod_rail_loaded_at.map(timestamp::format),
                pod_rail_departed_at: c.inland.pod_rail_departed_at.map(timestamp::format),
                pod_rail_carrier_scac: c.inland.pod_rail_carrier().map(str::to_owned),
                ind_rail_carrier_scac: c.inland.ind_rail_carrier().map(str::to_owned),
                ..NotCollected::default()
            },
        }
    }

    fn relationships(&self) -> Relationships {
        Relationships::default()
            .one(
                "shipment",
                Some(ResourceIdentifier::new(
                    "shipment",
                    self.container.shipment_id,
                )),
            )
            .one(
                "pod_terminal",
                self.shipment
                    .and_then(|s| s.pod_terminal_id)
                    .map(|id| ResourceIdentifier::new("terminal", id)),
            )
            .one(
                "pickup_facility",
                self.shipment
                    .and_then(|s| pickup_facility(self.container, s))
                    .map(|id| ResourceIdentifier::new("terminal", id)),
            )
            .listed(
                "transport_events",
                self.events
                    .transport_events
                    .iter()
                    .map(|id| ResourceIdentifier::new("transport_event", id))
                    .collect(),
                format!(
                    "{}/v2/containers/{}/transport_events",
                    self.core.public_url, self.container.id
                ),
            )
            .listed(
                "raw_events",
                self.events
                    .raw_events
                    .iter()
                    .map(|id| ResourceIdentifier::new("raw_event", id))
                    .collect(),
                format!(
                    "{}/v2/containers/{}/raw_events",
                    self.core.public_url, self.container.id
                ),
            )
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TransportEventAttributes {
    /// Such as `container.transport.vessel_departed`.
    pub event: &'static str,
    #[serde(with = "timestamp")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "timestamp")]
    pub timestamp: DateTime<Utc>,
    pub voyage_number: Option<String>,
    pub location_locode: Option<String>,
    pub timezone: Option<String>,
    /// Where it came from: `terminal` for what a terminal or rail ramp said (a terminal
    /// check, an X12 322, a terminal's or ramp's last free day and appointment notices),
    /// `shipping_line` for the rest.
    pub data_source: &'static str,
    /// Always null: Tidemark corrects an event in place rather than invalidating it.
    pub invalidated_at: Option<String>,
    /// On `container.pickup_*.changed` notices, the new last free day (the start of that
    /// day at the event's place, as `pickup_lfd` shows it) or appointment time; null when
    /// it was withdrawn, and on moves.
    pub value: Option<String>,
}

pub struct TransportEventResource<'a> {
    pub event: &'a TransportEvent,
    pub core: &'a Core,
    /// The vessels known by IMO (see [`vessels_of`]): fills the `vessel` relationship.
    pub vessels: &'a VesselIds,
    /// The raw events by carrier id (see [`source_events_of`]): fills `source_event`.
    pub sources: &'a SourceEvents,
}

/// The raw events a container's transport events came from, by the carrier's event id,
/// and where the events came from.
#[derive(Debug, Default)]
pub struct SourceEvents {
    ids: HashMap<String, RawEventId>,
    pub origins: Origins,
}

impl SourceEvents {
    fn get(&self, source_id: &str) -> Option<&RawEventId> {
        self.ids.get(source_id)
    }
}

/// The raw events a container's transport `events` came from, by the carrier's event id,
/// and where they came from.
pub async fn source_events_of<'a>(
    core: &Core,
    container: &Container,
    events: impl IntoIterator<Item = &'a TransportEvent>,
) -> Result<SourceEvents, StoreError> {
    let account = container.account_id;
    let raw = core
        .store
        .raw_events_of_container(account, container.id)
        .await?;
    // An EDI terminal status that stands for no move (availability) has no raw event.
    let from_edi = raw.iter().any(|r| Origins::needs_edi(&r.source_id))
        || events.into_iter().any(|e| Origins::needs_edi(&e.source_id));
    let origins = if from_edi {
        origins_of(core, account, &container.number).await?
    } else {
        Origins::default()
    };
    Ok(SourceEvents {
        ids: raw.into_iter().map(|raw| (raw.source_id, raw.id)).collect(),
        origins,
    })
}

/// Where an event came from, in the words of Terminal49's `data_source` (its OpenAPI
/// `transport_event` enum is `shipping_line`, `terminal`, `ais`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataSource {
    /// A carrier's own answer: its API (polled or pushed), its 315 or IFTSTA, its sandbox.
    ShippingLine,
    /// A terminal's or rail ramp's answer: a terminal check, an X12 322.
    Terminal,
}

impl DataSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ShippingLine => "shipping_line",
            Self::Terminal => "terminal",
        }
    }
}

/// What tells a container's events from a terminal's apart from the carrier's beyond their
/// ids: the EDI statuses it got in an X12 322 (Terminal Operations and Intermodal Ramp
/// Activity, which terminals and rail ramps send), read from the stored transactions.
#[derive(Debug, Default)]
pub struct Origins {
    /// The event ids (`edi:SENDER:CODE:…`) the container's 322 statuses stand for.
    terminal_edi_events: std::collections::HashSet<String>,
    /// The 322 transactions naming the container, as `(interchange, position)`: a
    /// terminal status's availability is known by them (`edi|{interchange}|{position}|…`).
    terminal_edi_transactions: std::collections::HashSet<(Uuid, u32)>,
}

/// The most transactions read to tell where one container's EDI events came from (the
/// tracking engine reads as many for a request).
const EDI_TRANSACTIONS_READ: u32 = 5_000;

/// The 322s naming `number` (a container number), for [`Origins::of`].
pub async fn origins_of(
    core: &Core,
    account: AccountId,
    number: &str,
) -> Result<Origins, StoreError> {
    let mut origins = Origins::default();
    let key = number.trim().to_uppercase();
    let transactions = core
        .store
        .edi_transactions_naming(account, &[key], EDI_TRANSACTIONS_READ)
        .await?;
    for transaction in transactions.iter().filter(|t| t.set_id.trim() == "322") {
        origins
            .terminal_edi_transactions
            .insert((transaction.message_id, transaction.position));
        let ids = transaction
            .events
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|event| event.get("event_id")?.as_str());
        origins.terminal_edi_events.extend(ids.map(str::to_owned));
    }
    Ok(origins)
}

impl Origins {
    /// Whether telling where the event with this id came from needs the EDI transactions.
    pub fn needs_edi(source_id: &str) -> bool {
        source_id.starts_with("edi:") || source_id.starts_with("edi|")
    }

    /// Where the event (raw or named) with this id came from. A terminal check's events
    /// and answers are `terminal|…`; an EDI status is `edi:…` (its own event) or
    /// `edi|{interchange}|{position}|…` (the availability it gives), a terminal's when its
    /// transaction is a 322; everything else is a carrier's.
    pub fn of(&self, source_id: &str) -> DataSource {
        // An estimate is `{id}@{when it was learnt}`; an id repeated within one answer is
        // `{id}|{what it is about}`.
        let id = match source_id.rsplit_once('@') {
            Some((id, learnt))
                if !learnt.is_empty() && learnt.bytes().all(|b| b.is_ascii_digit()) =>
            {
                id
            }
            _ => source_id,
        };
        if id.starts_with("terminal|") {
            return DataSource::Terminal;
        }
        if id.starts_with("edi:") {
            let event = id.split('|').next().unwrap_or(id);
            if self.terminal_edi_events.contains(event) {
                return DataSource::Terminal;
            }
        }
        if let Some(rest) = id.strip_prefix("edi|") {
            let mut parts = rest.split('|');
            let message = parts.next().and_then(|m| Uuid::parse_str(m).ok());
            let position = parts.next().and_then(|p| p.parse::<u32>().ok());
            if let (Some(message), Some(position)) = (message, position)
                && self
                    .terminal_edi_transactions
                    .contains(&(message, position))
            {
                return DataSource::Terminal;
            }
        }
        DataSource::ShippingLine
    }
}

/// Vessel ids by IMO number.
pub type VesselIds = HashMap<String, Uuid>;

/// The ids of the vessels these events name, in one query. Vessels are recorded by IMO
/// when a poll names them, so an event's vessel is normally known.
pub async fn vessels_of<'a>(
    core: &Core,
    events: impl IntoIterator<Item = &'a TransportEvent>,
) -> Result<VesselIds, StoreError> {
    vessel_ids(
        core,
        events.into_iter().filter_map(|e| e.vessel_imo.as_deref()),
    )
    .await
}

/// The ids of the vessels with these IMO numbers, in one query.
pub async fn vessel_ids(
    core: &Core,
    imos: impl IntoIterator<Item = &str>,
) -> Result<VesselIds, StoreError> {
    let mut imos: Vec<String> = imos.into_iter().map(str::to_owned).collect();
    imos.sort_unstable();
    imos.dedup();
    if imos.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(core
        .store
        .vessels_by_imos(&imos)
        .await?
        .into_iter()
        .filter_map(|v| v.imo.map(|imo| (imo, v.id)))
        .collect())
}

impl Resource for TransportEventResource<'_> {
    const TYPE: &'static str = "transport_event";
    const PATH: &'static str = "transport_events";
    type Attributes = TransportEventAttributes;

    fn id(&self) -> String {
        self.event.id.to_string()
    }

    fn attributes(&self) -> TransportEventAttributes {
        let e = self.event;
        let timezone = e
            .location_locode
            .as_deref()
            .and_then(|l| self.core.reference.time_zone_of(l))
            .map(str::to_owned);
        TransportEventAttributes {
            event: e.event.as_str(),
            created_at: e.created_at,
            timestamp: e.timestamp,
            voyage_number: e.voyage_number.clone(),
            location_locode: e.location_locode.clone(),
            timezone: timezone.clone(),
            data_source: match e.event {
                // What a terminal or rail ramp says (Terminal49's examples of these notices
                // say `terminal`).
                TransportEventName::PickupLfdTerminalChanged
                | TransportEventName::PickupLfdRailChanged
                | TransportEventName::PickupAppointmentChanged => DataSource::Terminal,
                _ => self.sources.origins.of(&e.source_id),
            }
            .as_str(),
            invalidated_at: None,
            value: notice_value(e, timezone.as_deref()),
        }
    }

    fn relationships(&self) -> Relationships {
        let e = self.event;
        Relationships::default()
            .one(
                "shipment",
                Some(ResourceIdentifier::new("shipment", e.shipment_id)),
            )
            .one(
                "container",
                Some(ResourceIdentifier::new("container", e.container_id)),
            )
            .one(
                "location",
                e.location_locode
                    .as_deref()
                    .and_then(|l| self.core.reference.port_by_locode(l))
                    .map(|p| ResourceIdentifier::new("port", p.id)),
            )
            .one(
                "vessel",
                e.vessel_imo
                    .as_ref()
                    .and_then(|imo| self.vessels.get(imo))
                    .map(|id| ResourceIdentifier::new("vessel", id)),
            )
            .one(
                "terminal",
                e.terminal_id
                    .map(|id| ResourceIdentifier::new("terminal", id)),
            )
            .one(
                "source_event",
                self.sources
                    .get(&e.source_id)
                    // An estimate is recorded as `{carrier's id}@{when it was learnt}`.
                    .or_else(|| {
                        let (id, learnt) = e.source_id.rsplit_once('@')?;
                        let learnt = learnt.bytes().all(|b| b.is_ascii_digit());
                        self.sources.get(id).filter(|_| learnt)
                    })
                    .map(|id| ResourceIdentifier::new("raw_event", id)),
            )
            .one("previous_version", None)
    }
}
