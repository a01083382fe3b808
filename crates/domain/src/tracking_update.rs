//! Applying what a carrier reports to what Tidemark knows: a pure function from the known
//! shipment, containers and events plus a [`CarrierReport`] to a [`TrackingUpdate`] that the
//! store writes in one transaction.
//!
//! Rules:
//! - An actual milestone is recorded once per container, recognised by the carrier's event
//!   id; a re-sent event changes nothing, a corrected one (same id, other time or place)
//!   replaces the recorded one.
//! - A milestone without a container (vessel arrivals and departures) applies to every
//!   container of the shipment.
//! - An estimate is recorded as an `estimated.*` event only when its time changes, so
//!   repeated polls of an unchanged ETA add nothing.
//! - Shipment and container fields are derived from the events, never invented: a field with
//!   no event behind it stays `None`.

use chrono::{DateTime, Utc};

use crate::ids::{ContainerId, IdGenerator, RawEventId, ShipmentId, TransportEventId};
use crate::shipment::{
    Container, RawEvent, ReportedEvent, Shipment, TransportEvent, equipment_from_iso_code,
};
use crate::tracking::{ContainerStatus, TransportEventName};
use crate::tracking_request::TrackingRequest;

/// A container the carrier reports on the shipment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportedContainer {
    pub number: String,
    pub iso_equipment_code: Option<String>,
}

/// One milestone as the carrier reports it, already named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Milestone {
    /// The carrier's event id.
    pub source_id: String,
    pub event: TransportEventName,
    /// `None` for vessel-level events, which apply to every container.
    pub container_number: Option<String>,
    pub at: DateTime<Utc>,
    pub location_locode: Option<String>,
    pub vessel_name: Option<String>,
    pub vessel_imo: Option<String>,
    pub voyage_number: Option<String>,
    /// The reference terminal where it happened, when the carrier named one Tidemark knows.
    pub terminal_id: Option<uuid::Uuid>,
}

/// One event as the carrier reported it, whether or not it names a milestone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportedRawEvent {
    /// The carrier's event id (an estimate's leaves its time out, so a moved estimate
    /// replaces the earlier one).
    pub source_id: String,
    /// `None` for vessel-level events.
    pub container_number: Option<String>,
    pub reported: ReportedEvent,
}

/// Everything a carrier said about one shipment in one poll.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CarrierReport {
    pub containers: Vec<ReportedContainer>,
    pub port_of_lading: Option<String>,
    pub port_of_discharge: Option<String>,
    pub destination: Option<String>,
    pub milestones: Vec<Milestone>,
    pub raw_events: Vec<ReportedRawEvent>,
    /// The terminal at the port of discharge, as the carrier named it.
    pub pod_terminal: Option<ReportedFacility>,
    /// The bill of lading the events name, when they name one: a container request's
    /// shipment is known by it rather than by the container's number.
    pub transport_document: Option<String>,
    /// Reports on containers' pick-up (last free day, holds, fees, appointment) from
    /// terminals and EDI, applied in time order.
    pub pickup: Vec<crate::pickup::PickupObservation>,
    /// The arrival estimate at the port of discharge that the answer still states beside the
    /// actual arrival that replaced it (a line that answers with the voyage as it stands, ETA
    /// and ATA side by side): no milestone, but the shipment's ETA.
    pub replaced_pod_eta: Option<DateTime<Utc>>,
}

/// A facility as a carrier names it: by its SMDG code, or by name when it has none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReportedFacility {
    pub smdg_code: Option<String>,
    pub name: Option<String>,
}

/// What Tidemark already has for the shipment.
#[derive(Clone, Copy, Debug, Default)]
pub struct Known<'a> {
    pub shipment: Option<&'a Shipment>,
    pub containers: &'a [Container],
    pub events: &'a [TransportEvent],
    pub raw_events: &'a [RawEvent],
}

/// The changes to write, all in one transaction.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackingUpdate {
    /// The shipment as it should now be stored (created when it did not exist).
    pub shipment: Shipment,
    pub shipment_created: bool,
    /// The shipment of a container request learned its bill of lading in this poll (its
    /// carrier's first answer named none): the stored number and search terms change.
    pub bill_of_lading_learned: bool,
    pub new_containers: Vec<Container>,
    /// Containers whose derived fields changed.
    pub changed_containers: Vec<Container>,
    pub new_events: Vec<TransportEvent>,
    /// Recorded events the carrier corrected.
    pub corrected_events: Vec<TransportEvent>,
    /// Raw events new in this poll, and recorded ones the carrier changed.
    pub raw_events: Vec<RawEvent>,
    /// For each known container whose pickup fields changed, Terminal49's changeset
    /// (`{"available_for_pickup": [false, true]}`), announced as `container.updated`.
    pub container_changesets: Vec<(ContainerId, serde_json::Map<String, serde_json::Value>)>,
    /// Values staged on the tracking request (`initial_custom_fields`) for the shipment and
    /// containers this update creates: written in the same transaction, so they cannot be
    /// lost between the two; a value already set is kept.
    pub initial_custom_field_values: Vec<crate::custom_fields::NewValue>,
}

impl TrackingUpdate {
    /// An update of the shipment's own fields only (tracking stopped or resumed, a poll
    /// attempted).
    pub fn shipment_only(shipment: Shipment) -> Self {
        Self {
            shipment,
            shipment_created: false,
            bill_of_lading_learned: false,
            new_containers: Vec::new(),
            changed_containers: Vec::new(),
            new_events: Vec::new(),
            corrected_events: Vec::new(),
            raw_events: Vec::new(),
            container_changesets: Vec::new(),
            initial_custom_field_values: Vec::new(),
        }
    }

    /// Whether anything besides bookkeeping timestamps changed.
    pub fn changes_anything(&self) -> bool {
        self.shipment_created
            || self.bill_of_lading_learned
            || !self.new_containers.is_empty()
            || !self.changed_containers.is_empty()
            || !self.new_events.is_empty()
            || !self.corrected_events.is_empty()
            || !self.raw_events.is_empty()
    }
}

fn new_shipment(request: &TrackingRequest, ids: &dyn IdGenerator, now: DateTime<Utc>) -> Shipment {
    Shipment {
        id: ShipmentId::new(ids),
        account_id: request.account_id,
        tracking_request_id: request.id,
        bill_of_lading_number: request.request_number.clone(),
        normalized_number: request.request_number.replace(' ', ""),
        ref_numbers: request.ref_numbers.clone(),
        tags: request.shipment_tags.clone(),
        shipping_line_scac: request.scac.clone(),
        port_of_lading_locode: None,
        port_of_discharge_locode: None,
        destination_locode: None,
        pod_vessel_name: None,
        pod_vessel_imo: None,
        pod_voyage_number: None,
        pol_etd_at: None,
        pol_atd_at: None,
        pod_eta_at: None,
        pod_original_eta_at: None,
        pol_original_etd_at: None,
        destination_original_eta_at: None,
        pod_terminal_id: None,
        pod_ata_at: None,
        destination_eta_at: None,
        destination_ata_at: None,
        line_tracking_last_attempted_at: None,
        line_tracking_last_succeeded_at: None,
        line_tracking_stopped_at: None,
        line_tracking_stopped_reason: None,
        line_tracking_stopped_by: None,
        customer_id: request.customer_id,
        created_at: now,
        updated_at: now,
    }
}

fn new_container(
    shipment: &Shipment,
    reported: &ReportedContainer,
    ids: &dyn IdGenerator,
    now: DateTime<Utc>,
) -> Container {
    let (length, height, kind) = reported
        .iso_equipment_code
        .as_deref()
        .map_or((None, None, None), equipment_from_iso_code);
    Container {
        id: ContainerId::new(ids),
        account_id: shipment.account_id,
        shipment_id: shipment.id,
        number: reported.number.clone(),
        ref_numbers: Vec::new(),
        seal_number: None,
        iso_equipment_code: reported.iso_equipment_code.clone(),
        equipment_type: kind.map(str::to_owned),
        equipment_length: length,
        equipment_height: height.map(str::to_owned),
        weight_in_lbs: None,
        pod_arrived_at: None,
        pod_discharged_at: None,
        pod_full_out_at: None,
        final_destination_full_out_at: None,
        empty_terminated_at: None,
        availability_known: false,
        available_for_pickup: false,
        pickup: crate::pickup::PickupFacts::default(),
        inland: crate::pickup::InlandFacts::default(),
        current_status: ContainerStatus::New,
        created_at: now,
        updated_at: now,
    }
}

/// Tracking ends by itself this long after the vessel arrived at the port of discharge.
pub const ARRIVAL_WINDOW_DAYS: i64 = 56;

/// Why tracking should stop by itself after this update, if it should: every container has
/// been returned empty, or the arrival is long past.
pub fn stop_reason(
    update: &TrackingUpdate,
    containers: &[Container],
    now: DateTime<Utc>,
) -> Option<&'static str> {
    let mut all: Vec<&Container> = update
        .new_containers
        .iter()
        .chain(&update.changed_containers)
        .collect();
    for known in containers {
        if !all.iter().any(|c| c.id == known.id) {
            all.push(known);
        }
    }
    if !all.is_empty()
        && all
            .iter()
            .all(|c| c.current_status == ContainerStatus::EmptyReturned)
    {
        return Some("all_containers_terminated");
    }
    let arrived = update.shipment.pod_ata_at?;
    (now - arrived > chrono::Duration::days(ARRIVAL_WINDOW_DAYS)).then_some("past_arrival_window")
}

/// A container request's shipment is known by the container's number until its carrier
/// names the bill of lading; the first answer that does (the first of all, or a later one)
/// gives it its bill.
fn learn_bill_of_lading(
    shipment: &mut Shipment,
    request: &TrackingRequest,
    report: &CarrierReport,
) -> bool {
    let still_the_container = shipment.bill_of_lading_number == request.request_number;
    match &report.transport_document {
        Some(document)
            if request.request_type == crate::tracking::RequestType::Container
                && still_the_container
                && *document != request.request_number =>
        {
            shipment.bill_of_lading_number.clone_from(document);
            true
        }
        _ => false,
    }
}

/// Plans the update for one poll of the carrier.
pub fn plan(
    request: &TrackingRequest,
    known: Known<'_>,
    report: &CarrierReport,
    ids: &dyn IdGenerator,
    now: DateTime<Utc>,
) -> TrackingUpdate {
    let mut shipment = known
        .shipment
        .cloned()
        .unwrap_or_else(|| new_shipment(request, ids, now));
    let shipment_created = known.shipment.is_none();
    // A new shipment takes the bill as it is made; a known one has learned it.
    let bill_of_lading_learned =
        learn_bill_of_lading(&mut shipment, request, report) && !shipment_created;

    let mut containers: Vec<Container> = known.containers.to_vec();
    let mut new_containers = Vec::new();
    for reported in &report.containers {
        if !containers.iter().any(|c| c.number == reported.number) {
            let container = new_container(&shipment, reported, ids, now);
            new_containers.push(container.clone());
            containers.push(container);
        }
    }

    let mut events: Vec<TransportEvent> = known.events.to_vec();
    let mut new_events = Vec::new();
    let mut corrected_events = Vec::new();
    let mut milestones: Vec<&Milestone> = report.milestones.iter().collect();
    milestones.sort_by_key(|m| (m.at, m.source_id.clone()));
    for milestone in milestones {
        let targets: Vec<&Container> = match &milestone.container_number {
            Some(number) => containers.iter().filter(|c| &c.number == number).collect(),
            None => containers.iter().collect(),
        };
        for container in targets {
            record(
                milestone,
                container,
                &shipment,
                &mut events,
                &mut new_events,
                &mut corrected_events,
                ids,
                now,
            );
        }
    }

    if containers.is_empty() {
        // A bill of lading whose answer has no container yet (vessel estimates, document
        // events): its shipment-level facts are kept from the milestones themselves.
        let shipment_level = shipment_level_events(&shipment, report, now);
        derive_shipment_fields(&mut shipment, report, &shipment_level);
    } else {
        derive_shipment_fields(&mut shipment, report, &events);
    }
    let mut changed_containers = Vec::new();
    let mut container_changesets = Vec::new();
    let mut pickup: Vec<&crate::pickup::PickupObservation> = report.pickup.iter().collect();
    pickup.sort_by_key(|observation| observation.observed_at);
    for container in &mut containers {
        let before = container.clone();
        derive_container_fields(container, &shipment, &events);
        for observation in pickup
            .iter()
            .filter(|o| o.container_number == container.number)
        {
            container.pickup.apply(observation);
            if let Some(carrier) = &observation.rail_carrier {
                container.inland.apply_rail_carrier(carrier);
            }
        }
        let is_new = new_containers.iter().any(|c| c.id == container.id);
        let was = if is_new {
            crate::pickup::PickupFacts::default()
        } else {
            before.pickup.clone()
        };
        for notice in pickup_notices(&was, container, &shipment, ids, now) {
            events.push(notice.clone());
            new_events.push(notice);
        }
        if is_new {
            if let Some(slot) = new_containers.iter_mut().find(|c| c.id == container.id) {
                *slot = container.clone();
            }
        } else if *container != before {
            container.updated_at = now;
            let changeset = pickup_changeset(&before, container);
            if !changeset.is_empty() {
                container_changesets.push((container.id, changeset));
            }
            changed_containers.push(container.clone());
        }
    }
    if shipment_created || known.shipment != Some(&shipment) {
        shipment.updated_at = now;
    }
    let raw_events = raw_events_to_write(&shipment, known.raw_events, report, ids, now);
    TrackingUpdate {
        shipment,
        shipment_created,
        bill_of_lading_learned,
        new_containers,
        changed_containers,
        new_events,
        corrected_events,
        raw_events,
        container_changesets,
        initial_custom_field_values: Vec::new(),
    }
}

/// The `container.pickup_*.changed` transport events for what changed between two states
/// of a container's pick-up facts: the last free day it shows, each source's own (line,
/// terminal, rail ramp) and the appointment. The new value (a date, or the appointment's
/// time) is the event's `value`; `None` when it was withdrawn.
fn pickup_notices(
    was: &crate::pickup::PickupFacts,
    container: &Container,
    shipment: &Shipment,
    ids: &dyn IdGenerator,
    now: DateTime<Utc>,
) -> Vec<TransportEvent> {
    use TransportEventName as E;
    let is = &container.pickup;
    let day = |day: Option<chrono::NaiveDate>| day.map(|d| d.format("%Y-%m-%d").to_string());
    let changes = [
        (
            E::PickupLfdChanged,
            day(was.last_free_day),
            day(is.last_free_day),
        ),
        (
            E::PickupLfdLineChanged,
            day(was.line_last_free_day),
            day(is.line_last_free_day),
        ),
        (
            E::PickupLfdTerminalChanged,
            day(was.terminal_last_free_day()),
            day(is.terminal_last_free_day()),
        ),
        (
            E::PickupLfdRailChanged,
            day(was.rail_last_free_day),
            day(is.rail_last_free_day),
        ),
        (
            E::PickupAppointmentChanged,
            was.appointment_at.map(rfc3339),
            is.appointment_at.map(rfc3339),
        ),
    ];
    let at = is.checked_at.unwrap_or(now);
    changes
        .into_iter()
        .filter(|(_, before, after)| before != after)
        .map(|(event, _, value)| {
            // A rail ramp's day is kept at the inland destination, the others at the port.
            let place = if event == E::PickupLfdRailChanged {
                shipment.destination_locode.clone()
            } else {
                shipment.port_of_discharge_locode.clone()
            };
            TransportEvent {
                id: TransportEventId::new(ids),
                account_id: shipment.account_id,
                shipment_id: shipment.id,
                container_id: container.id,
                event,
                timestamp: at,
                voyage_number: None,
                location_locode: place,
                vessel_name: None,
                vessel_imo: None,
                terminal_id: shipment
                    .pod_terminal_id
                    .filter(|_| event != E::PickupLfdRailChanged),
                // Each change is its own event, like a new estimate. A shown day a terminal
                // or rail ramp gave is the terminal's news (`terminal|`: `data_source`).
                source_id: if event == E::PickupLfdChanged
                    && value.is_some()
                    && is.lfd_source != crate::pickup::LfdSource::Line
                {
                    format!("terminal|{event}@{}", now.timestamp_micros())
                } else {
                    format!("{event}@{}", now.timestamp_micros())
                },
                value,
                created_at: now,
            }
        })
        .collect()
}

fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The pickup fields Terminal49 reports in `container.updated` changesets, where they
/// differ. Tidemark derives only availability from carrier events; terminal fields (last
/// free day, holds, fees, appointments) have no source yet.
fn pickup_changeset(
    before: &Container,
    after: &Container,
) -> serde_json::Map<String, serde_json::Value> {
    let mut changeset = serde_json::Map::new();
    if before.available_for_pickup != after.available_for_pickup {
        changeset.insert(
            "available_for_pickup".to_owned(),
            serde_json::json!([before.available_for_pickup, after.available_for_pickup]),
        );
    }
    use crate::pickup::PickupFacts;
    use serde_json::{Value, json};
    type Field = (&'static str, fn(&PickupFacts) -> Value);
    let fields: [Field; 6] = [
        ("holds_at_pod_terminal", |f| json!(f.holds)),
        ("fees_at_pod_terminal", |f| json!(f.fees)),
        ("pickup_lfd", |f| json!(f.last_free_day)),
        ("pickup_lfd_line", |f| json!(f.line_last_free_day)),
        ("pickup_lfd_rail", |f| json!(f.rail_last_free_day)),
        ("pickup_appointment_at", |f| json!(f.appointment_at)),
    ];
    for (name, value_of) in fields {
        let (was, is) = (value_of(&before.pickup), value_of(&after.pickup));
        if was != is {
            changeset.insert(name.to_owned(), json!([was, is]));
        }
    }
    changeset
}

/// The reported raw events that are new or differ from the recorded ones with their id.
fn raw_events_to_write(
    shipment: &Shipment,
    known: &[RawEvent],
    report: &CarrierReport,
    ids: &dyn IdGenerator,
    now: DateTime<Utc>,
) -> Vec<RawEvent> {
    let mut written: Vec<RawEvent> = Vec::new();
    for raw in &report.raw_events {
        let recorded = written
            .iter()
            .chain(known)
            .find(|e| e.source_id == raw.source_id);
        match recorded {
            Some(e) if e.reported == raw.reported && e.container_number == raw.container_number => {
            }
            Some(e) => {
                let corrected = RawEvent {
                    container_number: raw.container_number.clone(),
                    reported: raw.reported.clone(),
                    ..e.clone()
                };
                written.retain(|w| w.id != corrected.id);
                written.push(corrected);
            }
            None => written.push(RawEvent {
                id: RawEventId::new(ids),
                account_id: shipment.account_id,
                shipment_id: shipment.id,
                container_number: raw.container_number.clone(),
                source_id: raw.source_id.clone(),
                reported: raw.reported.clone(),
                created_at: now,
            }),
        }
    }
    written
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; a struct would only rename the arguments"
)]
fn record(
    milestone: &Milestone,
    container: &Container,
    shipment: &Shipment,
    events: &mut Vec<TransportEvent>,
    new_events: &mut Vec<TransportEvent>,
    corrected_events: &mut Vec<TransportEvent>,
    ids: &dyn IdGenerator,
    now: DateTime<Utc>,
) {
    let fresh = |source_id: String| {
        event_of(
            milestone,
            shipment,
            container.id,
            TransportEventId::new(ids),
            source_id,
            now,
        )
    };
    if milestone.event.is_estimate() {
        // The latest recorded estimate of this milestone for this container.
        let latest = events
            .iter()
            .filter(|e| {
                e.container_id == container.id
                    && e.event == milestone.event
                    && e.location_locode == milestone.location_locode
            })
            .max_by_key(|e| e.created_at);
        if latest.is_some_and(|e| e.timestamp == milestone.at) {
            return;
        }
        // Each new estimate is its own event, named by when it was learnt, so an estimate
        // that moves back to an earlier value is recorded again too.
        let event = fresh(format!(
            "{}@{}",
            milestone.source_id,
            now.timestamp_micros()
        ));
        events.push(event.clone());
        new_events.push(event);
        return;
    }
    match events
        .iter_mut()
        .find(|e| e.container_id == container.id && e.source_id == milestone.source_id)
    {
        None => {
            let event = fresh(milestone.source_id.clone());
            events.push(event.clone());
            new_events.push(event);
        }
        Some(existing) => {
            let corrected = existing.timestamp != milestone.at
                || existing.location_locode != milestone.location_locode
                || existing.event != milestone.event
                || existing.terminal_id != milestone.terminal_id;
            if corrected {
                existing.timestamp = milestone.at;
                existing
                    .location_locode
                    .clone_from(&milestone.location_locode);
                existing.event = milestone.event;
                existing.vessel_name.clone_from(&milestone.vessel_name);
                existing.vessel_imo.clone_from(&milestone.vessel_imo);
                existing.voyage_number.clone_from(&milestone.voyage_number);
                existing.terminal_id = milestone.terminal_id;
                if let Some(slot) = new_events.iter_mut().find(|e| e.id == existing.id) {
                    *slot = existing.clone();
                } else {
                    corrected_events.push(existing.clone());
                }
            }
        }
    }
}

/// The report's milestones as the shipment's own events, for a shipment without containers
/// (they are not stored: transport events belong to containers).
fn shipment_level_events(
    shipment: &Shipment,
    report: &CarrierReport,
    now: DateTime<Utc>,
) -> Vec<TransportEvent> {
    report
        .milestones
        .iter()
        .map(|milestone| {
            event_of(
                milestone,
                shipment,
                ContainerId(uuid::Uuid::nil()),
                TransportEventId(uuid::Uuid::nil()),
                milestone.source_id.clone(),
                now,
            )
        })
        .collect()
}

/// A milestone as a container's transport event.
fn event_of(
    milestone: &Milestone,
    shipment: &Shipment,
    container_id: ContainerId,
    id: TransportEventId,
    source_id: String,
    now: DateTime<Utc>,
) -> TransportEvent {
    TransportEvent {
        id,
        account_id: shipment.account_id,
        shipment_id: shipment.id,
        container_id,
        event: milestone.event,
        timestamp: milestone.at,
        voyage_number: milestone.voyage_number.clone(),
        location_locode: milestone.location_locode.clone(),
        vessel_name: milestone.vessel_name.clone(),
        vessel_imo: milestone.vessel_imo.clone(),
        terminal_id: milestone.terminal_id,
        source_id,
        value: None,
        created_at: now,
    }
}

/// The time of the first estimate of `event` at `place` ever recorded: what the carrier
/// promised when tracking began, kept to show how the estimate moved since.
fn first_estimate(
    events: &[TransportEvent],
    event: TransportEventName,
    place: Option<&str>,
) -> Option<DateTime<Utc>> {
    events
        .iter()
        .filter(|e| e.event == event && e.location_locode.as_deref() == place)
        .min_by_key(|e| e.created_at)
        .map(|e| e.timestamp)
}

/// The latest event with this name (at `locode`, when given), by its timestamp.
fn latest<'a>(
    events: &'a [TransportEvent],
    name: TransportEventName,
    locode: Option<&str>,
) -> Option<&'a TransportEvent> {
    events
        .iter()
        .filter(|e| e.event == name)
        .filter(|e| locode.is_none_or(|l| e.location_locode.as_deref() == Some(l)))
        .max_by_key(|e| (e.created_at, e.timestamp))
}

fn derive_shipment_fields(
    shipment: &mut Shipment,
    report: &CarrierReport,
    events: &[TransportEvent],
) {
    use TransportEventName as E;
    if report.port_of_lading.is_some() {
        shipment
            .port_of_lading_locode
            .clone_from(&report.port_of_lading);
    }
    if report.port_of_discharge.is_some() {
        shipment
            .port_of_discharge_locode
            .clone_from(&report.port_of_discharge);
    }
    if report.destination.is_some() {
        shipment.destination_locode.clone_from(&report.destination);
    }
    let pol = shipment.port_of_lading_locode.clone();
    let pod = shipment.port_of_discharge_locode.clone();
    let destination = shipment.destination_locode.clone();

    shipment.pol_atd_at = latest(events, E::VesselDeparted, pol.as_deref()).map(|e| e.timestamp);
    shipment.pol_etd_at = latest(events, E::EstimatedVesselDeparted, pol.as_deref())
        .map(|e| e.timestamp)
        .or(shipment.pol_etd_at);
    shipment.pod_ata_at = latest(events, E::VesselArrived, pod.as_deref()).map(|e| e.timestamp);
    // The line's latest word on the ETA: an estimate it restates beside the actual arrival
    // is newer than any estimate milestone kept from earlier polls.
    let eta = report
        .replaced_pod_eta
        .or_else(|| latest(events, E::EstimatedVesselArrived, pod.as_deref()).map(|e| e.timestamp));
    if eta.is_some() {
        shipment.pod_eta_at = eta;
    }
    if shipment.pol_original_etd_at.is_none() {
        shipment.pol_original_etd_at =
            first_estimate(events, E::EstimatedVesselDeparted, pol.as_deref());
    }
    if shipment.pod_original_eta_at.is_none() {
        shipment.pod_original_eta_at =
            first_estimate(events, E::EstimatedVesselArrived, pod.as_deref())
                .or(report.replaced_pod_eta);
    }
    if destination.is_some() && destination != pod {
        shipment.destination_ata_at = latest(
            events,
            E::ArrivedAtInlandDestination,
            destination.as_deref(),
        )
        .map(|e| e.timestamp);
        let eta = latest(
            events,
            E::EstimatedArrivedAtInlandDestination,
            destination.as_deref(),
        )
        .map(|e| e.timestamp);
        if eta.is_some() {
            shipment.destination_eta_at = eta;
        }
        if shipment.destination_original_eta_at.is_none() {
            shipment.destination_original_eta_at = first_estimate(
                events,
                E::EstimatedArrivedAtInlandDestination,
                destination.as_deref(),
            );
        }
    }
    // The vessel that brings the cargo to the port of discharge: the last one loaded, else
    // the one the latest estimate of the arrival there names.
    let named = |e: &&TransportEvent| e.vessel_name.is_some() || e.vessel_imo.is_some();
    let actual = events
        .iter()
        .filter(|e| {
            !e.event.is_estimate()
                && matches!(
                    e.event,
                    E::VesselLoaded
                        | E::TransshipmentLoaded
                        | E::VesselArrived
                        | E::VesselDeparted
                        | E::TransshipmentDeparted
                )
        })
        .filter(named)
        .max_by_key(|e| e.timestamp);
    let estimated = || {
        events
            .iter()
            .filter(|e| {
                e.event == E::EstimatedVesselArrived
                    && (pod.is_none() || e.location_locode.as_deref() == pod.as_deref())
            })
            .filter(named)
            .max_by_key(|e| (e.created_at, e.timestamp))
    };
    if let Some(last_vessel) = actual.or_else(estimated) {
        shipment
            .pod_vessel_name
            .clone_from(&last_vessel.vessel_name);
        shipment.pod_vessel_imo.clone_from(&last_vessel.vessel_imo);
        shipment
            .pod_voyage_number
            .clone_from(&last_vessel.voyage_number);
    }
}

fn derive_container_fields(container: &mut Container, shipment: &Shipment, all: &[TransportEvent]) {
    use TransportEventName as E;
    let events: Vec<TransportEvent> = all
        .iter()
        .filter(|e| e.container_id == container.id)
        .cloned()
        .collect();
    let pod = shipment.port_of_discharge_locode.as_deref();
    let at = |name| latest(&events, name, None).map(|e: &TransportEvent| e.timestamp);
    let at_pod = |name| latest(&events, name, pod).map(|e: &TransportEvent| e.timestamp);
    container.pod_arrived_at = at_pod(E::VesselArrived);
    container.pod_discharged_at = at_pod(E::VesselDischarged);
    let destination = shipment
        .destination_locode
        .as_deref()
        .filter(|d| Some(*d) != pod);
    // With no port of discharge known, a full out at the inland destination (a rail ramp's
    // out-gate) is that place's, not the port's.
    container.pod_full_out_at = events
        .iter()
        .filter(|e| e.event == E::FullOut)
        .filter(|e| match pod {
            Some(pod) => e.location_locode.as_deref() == Some(pod),
            None => destination.is_none_or(|d| e.location_locode.as_deref() != Some(d)),
        })
        .max_by_key(|e| (e.created_at, e.timestamp))
        .map(|e| e.timestamp);
    container.empty_terminated_at = at(E::EmptyIn);
    if let Some(destination) = destination {
        container.final_destination_full_out_at =
            latest(&events, E::FullOut, Some(destination)).map(|e| e.timestamp);
    }
    let last_actual = events
        .iter()
        .filter(|e| !e.event.is_estimate() && !e.event.is_pickup_notice())
        .max_by_key(|e| e.timestamp);
    // The railroads come from EDI statuses (pick-up observations), not milestones: kept.
    container.inland = crate::pickup::InlandFacts {
        pod_rail_loaded_at: at(E::RailLoaded),
        pod_rail_departed_at: at(E::RailDeparted),
        ind_eta_at: at(E::EstimatedArrivedAtInlandDestination),
        ind_ata_at: at(E::RailArrived).or_else(|| at(E::ArrivedAtInlandDestination)),
        ind_rail_unloaded_at: at(E::RailUnloaded),
        pod_rail_carrier_scac: container.inland.pod_rail_carrier_scac.take(),
        ind_rail_carrier_scac: container.inland.ind_rail_carrier_scac.take(),
    };
    let availability = events
        .iter()
        .filter(|e| matches!(e.event, E::Available | E::NotAvailable))
        .max_by_key(|e| e.timestamp);
    container.availability_known = availability.is_some();
    container.available_for_pickup = availability.is_some_and(|e| e.event == E::Available)
        && container.pod_full_out_at.is_none();
    container.current_status = match last_actual.map(|e| e.event) {
        None | Some(E::EmptyOut | E::FullIn) => ContainerStatus::New,
        Some(E::EmptyIn) => ContainerStatus::EmptyReturned,
        Some(E::FullOut) if container.final_destination_full_out_at.is_some() => {
            ContainerStatus::Delivered
        }
        Some(E::FullOut | E::Delivered) => ContainerStatus::PickedUp,
        Some(E::Available) => ContainerStatus::Available,
        Some(E::NotAvailable) => ContainerStatus::NotAvailable,
        Some(E::VesselDischarged) => {
            if container.availability_known {
                ContainerStatus::NotAvailable
            } else {
                ContainerStatus::Grounded
            }
        }
        Some(E::RailLoaded | E::RailDeparted | E::RailArrived) => ContainerStatus::OnRail,
        Some(E::RailUnloaded | E::ArrivedAtInlandDestination) => ContainerStatus::Available,
        Some(_) => ContainerStatus::OnShip,
    };
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;
    use crate::ids::{AccountId, SequentialIds, TrackingRequestId};
    use crate::tracking::{RequestType, TrackingRequestStatus};

    fn t(hours: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 5, 1, 0, 0, 0)
            .single()
            .expect("valid")
            + Duration::hours(hours)
    }

    fn request(ids: &SequentialIds) -> TrackingRequest {
        TrackingRequest {
            id: TrackingRequestId::new(ids),
            account_id: AccountId::new(ids),
            request_type: RequestType::BillOfLading,
            request_number: "TESTBL0001".to_owned(),
            scac: "TEST".to_owned(),
            ref_numbers: vec!["PO-1".to_owned()],
            shipment_tags: vec!["hot".to_owned()],
            status: TrackingRequestStatus::Pending,
            failed_reason: None,
            is_retrying: false,
            retry_count: None,
            shipment_id: None,
            initial_custom_fields: None,
            customer_id: None,
            submitted_by: None,
            polled_at: None,
            created_at: t(0),
            updated_at: t(0),
        }
    }

    fn milestone(
        id: &str,
        event: TransportEventName,
        container: Option<&str>,
        at: DateTime<Utc>,
        locode: &str,
    ) -> Milestone {
        Milestone {
            source_id: id.to_owned(),
            event,
            container_number: container.map(str::to_owned),
            at,
            location_locode: Some(locode.to_owned()),
            vessel_name: Some("TIDEMARK SPIRIT".to_owned()),
            vessel_imo: Some("9321483".to_owned()),
            voyage_number: Some("001E".to_owned()),
            terminal_id: None,
        }
    }

    fn report(milestones: Vec<Milestone>) -> CarrierReport {
        CarrierReport {
            pod_terminal: None,
            transport_document: None,
            pickup: Vec::new(),
            replaced_pod_eta: None,
            containers: vec![
                ReportedContainer {
                    number: "TDMU1000001".to_owned(),
                    iso_equipment_code: Some("45G1".to_owned()),
                },
                ReportedContainer {
                    number: "TDMU1000002".to_owned(),
                    iso_equipment_code: None,
                },
            ],
            port_of_lading: Some("CNSHA".to_owned()),
            port_of_discharge: Some("NLRTM".to_owned()),
            destination: None,
            milestones,
            raw_events: Vec::new(),
        }
    }

    fn raw(id: &str, container: Option<&str>, at: DateTime<Utc>) -> ReportedRawEvent {
        ReportedRawEvent {
            source_id: id.to_owned(),
            container_number: container.map(str::to_owned),
            reported: ReportedEvent {
                original_event: "EQUIPMENT LOAD ACT".to_owned(),
                event: Some("vessel_loaded".to_owned()),
                timestamp: at,
                estimated: false,
                location_locode: Some("CNSHA".to_owned()),
                location_name: None,
                vessel_name: None,
                vessel_imo: None,
                voyage_number: None,
                terminal_id: None,
            },
        }
    }

    #[test]
    fn raw_events_are_kept_once_and_replaced_when_the_carrier_changes_them() {
        let ids = SequentialIds::default();
        let request = request(&ids);
        let mut first_report = report(Vec::new());
        first_report.raw_events = vec![
            raw("load-1", Some("TDMU1000001"), t(10)),
            raw("gate-out", Some("TDMU1000001"), t(5)),
        ];
        let first = plan(&request, Known::default(), &first_report, &ids, t(30));
        assert_eq!(first.raw_events.len(), 2);

        let mut second_report = first_report.clone();
        second_report.raw_events[0].reported.timestamp = t(12);
        let second = plan(
            &request,
            Known {
                shipment: Some(&first.shipment),
                raw_events: &first.raw_events,
                ..Known::default()
            },
            &second_report,
            &ids,
            t(31),
        );

        assert_eq!(
            second.raw_events.len(),
            1,
            "only the changed one is written"
        );
        assert_eq!(second.raw_events[0].id, first.raw_events[0].id);
        assert_eq!(second.raw_events[0].reported.timestamp, t(12));
        assert_eq!(second.raw_events[0].created_at, t(30));
    }

    fn voyage_so_far() -> Vec<Milestone> {
        use TransportEventName as E;
        vec![
            milestone(
                "load-1",
                E::VesselLoaded,
                Some("TDMU1000001"),
                t(10),
                "CNSHA",
            ),
            milestone(
                "load-2",
                E::VesselLoaded,
                Some("TDMU1000002"),
                t(11),
                "CNSHA",
            ),
            milestone("depart", E::VesselDeparted, None, t(20), "CNSHA"),
            milestone("eta", E::EstimatedVesselArrived, None, t(500), "NLRTM"),
        ]
    }

    /// Applies `update` to what is known, as the store would.
    fn applied(
        update: &TrackingUpdate,
        containers: &mut Vec<Container>,
        events: &mut Vec<TransportEvent>,
    ) {
        for changed in update
            .new_containers
            .iter()
            .chain(&update.changed_containers)
        {
            containers.retain(|c| c.id != changed.id);
            containers.push(changed.clone());
        }
        for changed in update.new_events.iter().chain(&update.corrected_events) {
            events.retain(|e| e.id != changed.id);
            events.push(changed.clone());
        }
    }

    #[test]
    fn a_first_report_creates_the_shipment_its_containers_and_their_events() {
        let ids = SequentialIds::default();
        let request = request(&ids);

        let update = plan(
            &request,
            Known::default(),
            &report(voyage_so_far()),
            &ids,
            t(30),
        );

        assert!(update.shipment_created);
        assert_eq!(update.new_containers.len(), 2);
        // Two loads, plus departure and estimate for each of the two containers.
        assert_eq!(update.new_events.len(), 6);
        let shipment = &update.shipment;
        assert_eq!(shipment.port_of_lading_locode.as_deref(), Some("CNSHA"));
        assert_eq!(shipment.port_of_discharge_locode.as_deref(), Some("NLRTM"));
        assert_eq!(shipment.pol_atd_at, Some(t(20)));
        assert_eq!(shipment.pod_eta_at, Some(t(500)));
        assert_eq!(shipment.pod_original_eta_at, Some(t(500)));
        assert_eq!(shipment.pod_vessel_name.as_deref(), Some("TIDEMARK SPIRIT"));
        assert_eq!(shipment.ref_numbers, vec!["PO-1"]);
        assert_eq!(shipment.tags, vec!["hot"]);
    }

    #[test]
    fn containers_are_on_ship_once_their_vessel_departed() {
        let ids = SequentialIds::default();

        let update = plan(
            &request(&ids),
            Known::default(),
            &report(voyage_so_far()),
            &ids,
            t(30),
        );

        assert!(
            update
                .new_containers
                .iter()
                .all(|c| c.current_status == ContainerStatus::OnShip)
        );
        assert_eq!(update.new_containers[0].equipment_length, Some(40));
        assert_eq!(
            update.new_containers[0].equipment_height.as_deref(),
            Some("high_cube")
        );
    }

    /// The updates of two polls (at hours 30 and 31), the second knowing what the first
    /// wrote.
    fn two_polls(
        first: Vec<Milestone>,
        second: Vec<Milestone>,
    ) -> (TrackingUpdate, TrackingUpdate) {
        let ids = SequentialIds::default();
        let request = request(&ids);
        let first = plan(&request, Known::default(), &report(first), &ids, t(30));
        let (mut containers, mut events) = (Vec::new(), Vec::new());
        applied(&first, &mut containers, &mut events);
        let second = plan(
            &request,
            Known {
                shipment: Some(&first.shipment),
                containers: &containers,
                events: &events,
                ..Known::default()
            },
            &report(second),
            &ids,
            t(31),
        );
        (first, second)
    }

    #[test]
    fn the_same_report_again_changes_nothing() {
        let (first, second) = two_polls(voyage_so_far(), voyage_so_far());

        assert!(!second.changes_anything(), "{second:#?}");
        assert_eq!(second.shipment, first.shipment);
    }

    #[test]
    fn a_corrected_event_replaces_the_recorded_one() {
        let mut corrected = voyage_so_far();
        corrected[2].at = t(21);

        let (_, second) = two_polls(voyage_so_far(), corrected);

        assert!(second.new_events.is_empty());
        assert_eq!(
            second.corrected_events.len(),
            2,
            "one departure per container"
        );
        assert!(second.corrected_events.iter().all(|e| e.timestamp == t(21)));
        assert_eq!(second.shipment.pol_atd_at, Some(t(21)));
    }

    #[test]
    fn an_event_keeps_its_terminal_and_learns_one_named_later() {
        let terminal = uuid::Uuid::from_u128(7);
        let mut named = voyage_so_far();
        named[0].terminal_id = Some(terminal);
        let mut named_later = named.clone();
        named_later[2].terminal_id = Some(terminal);

        let (first, second) = two_polls(named, named_later);

        let loaded = first
            .new_events
            .iter()
            .find(|e| e.source_id == "load-1")
            .expect("the load is recorded");
        assert_eq!(loaded.terminal_id, Some(terminal));
        assert!(second.new_events.is_empty());
        assert_eq!(
            second.corrected_events.len(),
            2,
            "one departure per container"
        );
        assert!(
            second
                .corrected_events
                .iter()
                .all(|e| e.terminal_id == Some(terminal))
        );
    }

    #[test]
    fn an_eta_restated_beside_the_actual_arrival_is_the_shipments_eta_over_earlier_estimates() {
        let ids = SequentialIds::default();
        let request = request(&ids);
        let first = plan(
            &request,
            Known::default(),
            &report(voyage_so_far()),
            &ids,
            t(30),
        );
        let (mut containers, mut events) = (Vec::new(), Vec::new());
        applied(&first, &mut containers, &mut events);
        let mut arrived = voyage_so_far();
        arrived.pop();
        arrived.push(milestone(
            "ata",
            TransportEventName::VesselArrived,
            None,
            t(515),
            "NLRTM",
        ));
        let mut answer = report(arrived);
        answer.replaced_pod_eta = Some(t(520));

        let second = plan(
            &request,
            Known {
                shipment: Some(&first.shipment),
                containers: &containers,
                events: &events,
                ..Known::default()
            },
            &answer,
            &ids,
            t(600),
        );

        assert_eq!(second.shipment.pod_eta_at, Some(t(520)));
        assert_eq!(second.shipment.pod_original_eta_at, Some(t(500)));
        assert_eq!(second.shipment.pod_ata_at, Some(t(515)));
    }

    #[test]
    fn a_container_requests_shipment_takes_the_bill_of_lading_a_later_answer_names() {
        let ids = SequentialIds::default();
        let mut request = request(&ids);
        request.request_type = RequestType::Container;
        request.request_number = "TDMU1000001".to_owned();
        let first = plan(
            &request,
            Known::default(),
            &report(voyage_so_far()),
            &ids,
            t(30),
        );
        assert_eq!(first.shipment.bill_of_lading_number, "TDMU1000001");
        let mut named = report(voyage_so_far());
        named.transport_document = Some("TESTBL0001".to_owned());

        let second = plan(
            &request,
            Known {
                shipment: Some(&first.shipment),
                ..Known::default()
            },
            &named,
            &ids,
            t(60),
        );

        assert!(second.bill_of_lading_learned);
        assert_eq!(second.shipment.bill_of_lading_number, "TESTBL0001");
        let third = plan(
            &request,
            Known {
                shipment: Some(&second.shipment),
                ..Known::default()
            },
            &named,
            &ids,
            t(90),
        );
        assert!(!third.bill_of_lading_learned, "learned once");
    }

    #[test]
    fn a_bill_of_lading_requests_shipment_keeps_its_bill_whatever_the_answer_names() {
        let ids = SequentialIds::default();
        let request = request(&ids);
        let first = plan(
            &request,
            Known::default(),
            &report(voyage_so_far()),
            &ids,
            t(30),
        );
        let mut named = report(voyage_so_far());
        named.transport_document = Some("OTHERBL0002".to_owned());

        let second = plan(
            &request,
            Known {
                shipment: Some(&first.shipment),
                ..Known::default()
            },
            &named,
            &ids,
            t(60),
        );

        assert!(!second.bill_of_lading_learned);
        assert_eq!(second.shipment.bill_of_lading_number, "TESTBL0001");
    }

    #[test]
    fn an_estimate_is_recorded_again_only_when_it_changes() {
        let ids = SequentialIds::default();
        let request = request(&ids);
        let first = plan(
            &request,
            Known::default(),
            &report(voyage_so_far()),
            &ids,
            t(30),
        );
        let (mut containers, mut events) = (Vec::new(), Vec::new());
        applied(&first, &mut containers, &mut events);
        let mut slipped = voyage_so_far();
        slipped[3].at = t(530);

        let second = plan(
            &request,
            Known {
                shipment: Some(&first.shipment),
                containers: &containers,
                events: &events,
                ..Known::default()
            },
            &report(slipped),
            &ids,
            t(100),
        );

        assert_eq!(second.new_events.len(), 2);
        assert!(
            second
                .new_events
                .iter()
                .all(|e| e.event == TransportEventName::EstimatedVesselArrived)
        );
        assert_eq!(second.shipment.pod_eta_at, Some(t(530)));
        assert_eq!(second.shipment.pod_original_eta_at, Some(t(500)));
    }

    #[test]
    fn the_first_departure_estimate_is_kept_when_the_estimate_slips() {
        use TransportEventName as E;
        let ids = SequentialIds::default();
        let request = request(&ids);
        let planned = |at| {
            vec![
                milestone(
                    "load-1",
                    E::VesselLoaded,
                    Some("TDMU1000001"),
                    t(10),
                    "CNSHA",
                ),
                milestone("etd", E::EstimatedVesselDeparted, None, at, "CNSHA"),
            ]
        };
        let first = plan(
            &request,
            Known::default(),
            &report(planned(t(40))),
            &ids,
            t(30),
        );
        let (mut containers, mut events) = (Vec::new(), Vec::new());
        applied(&first, &mut containers, &mut events);

        let second = plan(
            &request,
            Known {
                shipment: Some(&first.shipment),
                containers: &containers,
                events: &events,
                ..Known::default()
            },
            &report(planned(t(90))),
            &ids,
            t(60),
        );

        assert_eq!(second.shipment.pol_etd_at, Some(t(90)));
        assert_eq!(second.shipment.pol_original_etd_at, Some(t(40)));
    }

    #[test]
    fn an_estimate_that_moves_back_is_recorded_again() {
        let ids = SequentialIds::default();
        let request = request(&ids);
        let (mut containers, mut events) = (Vec::new(), Vec::new());
        let mut shipment = None;
        for (poll, eta) in [(30, 500), (40, 520), (50, 500)] {
            let mut milestones = voyage_so_far();
            milestones[3].at = t(eta);
            let update = plan(
                &request,
                Known {
                    shipment: shipment.as_ref(),
                    containers: &containers,
                    events: &events,
                    ..Known::default()
                },
                &report(milestones),
                &ids,
                t(poll),
            );
            applied(&update, &mut containers, &mut events);
            shipment = Some(update.shipment);
        }

        assert_eq!(shipment.and_then(|s| s.pod_eta_at), Some(t(500)));
        let estimates = events
            .iter()
            .filter(|e| e.event == TransportEventName::EstimatedVesselArrived)
            .count();
        assert_eq!(estimates, 6, "three estimates for each of two containers");
    }

    #[test]
    fn a_container_event_applies_to_that_container_only() {
        use TransportEventName as E;
        let ids = SequentialIds::default();
        let mut milestones = voyage_so_far();
        milestones.push(milestone("disc-1", E::VesselArrived, None, t(510), "NLRTM"));
        milestones.push(milestone(
            "disc-2",
            E::VesselDischarged,
            Some("TDMU1000001"),
            t(520),
            "NLRTM",
        ));
        milestones.push(milestone(
            "out-1",
            E::FullOut,
            Some("TDMU1000001"),
            t(600),
            "NLRTM",
        ));

        let update = plan(
            &request(&ids),
            Known::default(),
            &report(milestones),
            &ids,
            t(700),
        );

        let first = &update.new_containers[0];
        let second = &update.new_containers[1];
        assert_eq!(first.current_status, ContainerStatus::PickedUp);
        assert_eq!(first.pod_full_out_at, Some(t(600)));
        assert_eq!(first.pod_discharged_at, Some(t(520)));
        assert_eq!(second.current_status, ContainerStatus::OnShip);
        assert_eq!(second.pod_arrived_at, Some(t(510)));
        assert_eq!(update.shipment.pod_ata_at, Some(t(510)));
    }

    #[test]
    fn an_empty_return_ends_the_containers_journey() {
        use TransportEventName as E;
        let ids = SequentialIds::default();
        let mut milestones = voyage_so_far();
        milestones.push(milestone(
            "in-1",
            E::EmptyIn,
            Some("TDMU1000001"),
            t(800),
            "NLRTM",
        ));

        let update = plan(
            &request(&ids),
            Known::default(),
            &report(milestones),
            &ids,
            t(900),
        );

        assert_eq!(
            update.new_containers[0].current_status,
            ContainerStatus::EmptyReturned
        );
        assert_eq!(update.new_containers[0].empty_terminated_at, Some(t(800)));
    }

    #[test]
    fn tracking_stops_once_every_container_is_returned_empty() {
        use TransportEventName as E;
        let ids = SequentialIds::default();
        let mut milestones = voyage_so_far();
        milestones.push(milestone(
            "in-1",
            E::EmptyIn,
            Some("TDMU1000001"),
            t(800),
            "NLRTM",
        ));
        let one_returned = plan(
            &request(&ids),
            Known::default(),
            &report(milestones.clone()),
            &ids,
            t(900),
        );
        milestones.push(milestone(
            "in-2",
            E::EmptyIn,
            Some("TDMU1000002"),
            t(810),
            "NLRTM",
        ));

        let both_returned = plan(
            &request(&ids),
            Known::default(),
            &report(milestones),
            &ids,
            t(900),
        );

        assert_eq!(stop_reason(&one_returned, &[], t(900)), None);
        assert_eq!(
            stop_reason(&both_returned, &[], t(900)),
            Some("all_containers_terminated")
        );
    }

    #[test]
    fn tracking_stops_long_after_arrival() {
        use TransportEventName as E;
        let ids = SequentialIds::default();
        let mut milestones = voyage_so_far();
        milestones.push(milestone("arrive", E::VesselArrived, None, t(500), "NLRTM"));
        let update = plan(
            &request(&ids),
            Known::default(),
            &report(milestones),
            &ids,
            t(600),
        );

        assert_eq!(
            stop_reason(&update, &[], t(500) + chrono::Duration::days(56)),
            None
        );
        assert_eq!(
            stop_reason(&update, &[], t(500) + chrono::Duration::days(57)),
            Some("past_arrival_window")
        );
    }

    #[test]
    fn a_shipment_field_without_an_event_behind_it_stays_empty() {
        let ids = SequentialIds::default();

        let update = plan(
            &request(&ids),
            Known::default(),
            &report(Vec::new()),
            &ids,
            t(1),
        );

        assert_eq!(update.shipment.pol_atd_at, None);
        assert_eq!(update.shipment.pod_eta_at, None);
        assert_eq!(update.shipment.pod_vessel_name, None);
        assert!(
            update
                .new_containers
                .iter()
                .all(|c| c.current_status == ContainerStatus::New)
        );
    }

    fn terminal_says(day: u32, hours: i64) -> crate::pickup::PickupObservation {
        crate::pickup::PickupObservation {
            container_number: "TDMU1000001".to_owned(),
            observed_at: t(hours),
            last_free_day: chrono::NaiveDate::from_ymd_opt(2026, 5, day),
            lfd_source: crate::pickup::LfdSource::Terminal,
            ..Default::default()
        }
    }

    fn railroad_says(scac: &str, leg: crate::pickup::RailLeg) -> crate::pickup::PickupObservation {
        crate::pickup::PickupObservation {
            container_number: "TDMU1000001".to_owned(),
            observed_at: t(35),
            rail_carrier: Some(crate::pickup::ObservedRailCarrier {
                scac: scac.to_owned(),
                leg,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_railroad_named_for_a_container_is_kept_on_its_rail_leg() {
        let ids = SequentialIds::default();
        let mut report = report(voyage_so_far());
        report.pickup = vec![railroad_says("UP", crate::pickup::RailLeg::FromPort)];

        let update = after_first_poll(&report, &ids);

        let container = update
            .changed_containers
            .iter()
            .find(|c| c.number == "TDMU1000001")
            .expect("the container changed");
        assert_eq!(
            container.inland.pod_rail_carrier_scac.as_deref(),
            Some("UP")
        );
        assert_eq!(container.inland.ind_rail_carrier_scac, None);
    }

    #[test]
    fn a_railroad_is_no_terminal_report_and_no_changeset_field() {
        let ids = SequentialIds::default();
        let mut report = report(voyage_so_far());
        report.pickup = vec![railroad_says("UP", crate::pickup::RailLeg::FromPort)];

        let update = after_first_poll(&report, &ids);

        assert!(update.container_changesets.is_empty());
        assert!(notices(&update).is_empty());
        assert!(
            update
                .changed_containers
                .iter()
                .all(|c| c.pickup.checked_at.is_none())
        );
    }

    #[test]
    fn a_railroad_stays_when_a_later_report_does_not_name_it() {
        let ids = SequentialIds::default();
        let request = request(&ids);
        let mut report = report(voyage_so_far());
        report.pickup = vec![railroad_says(
            "BNSF",
            crate::pickup::RailLeg::InlandDestination,
        )];
        let first = plan(&request, Known::default(), &report, &ids, t(30));
        let (mut containers, mut events) = (Vec::new(), Vec::new());
        applied(&first, &mut containers, &mut events);
        report.pickup = Vec::new();

        let again = plan(
            &request,
            Known {
                shipment: Some(&first.shipment),
                containers: &containers,
                events: &events,
                ..Known::default()
            },
            &report,
            &ids,
            t(40),
        );

        assert!(again.changed_containers.is_empty(), "{again:#?}");
        let container = containers
            .iter()
            .find(|c| c.number == "TDMU1000001")
            .expect("created");
        assert_eq!(container.inland.ind_rail_carrier(), Some("BNSF"));
    }

    /// Plans `report` on top of a first poll of the voyage so far, as the store would.
    fn after_first_poll(report: &CarrierReport, ids: &SequentialIds) -> TrackingUpdate {
        let request = request(ids);
        let first = plan(
            &request,
            Known::default(),
            &self::report(voyage_so_far()),
            ids,
            t(30),
        );
        let (mut containers, mut events) = (Vec::new(), Vec::new());
        applied(&first, &mut containers, &mut events);
        plan(
            &request,
            Known {
                shipment: Some(&first.shipment),
                containers: &containers,
                events: &events,
                ..Known::default()
            },
            report,
            ids,
            t(40),
        )
    }

    fn notices(update: &TrackingUpdate) -> Vec<(&str, Option<&str>)> {
        update
            .new_events
            .iter()
            .filter(|e| e.event.is_pickup_notice())
            .map(|e| (e.event.as_str(), e.value.as_deref()))
            .collect()
    }

    #[test]
    fn a_terminals_first_last_free_day_is_announced_with_its_value() {
        let ids = SequentialIds::default();
        let mut report = report(voyage_so_far());
        report.pickup = vec![terminal_says(7, 35)];

        let update = after_first_poll(&report, &ids);

        assert_eq!(
            notices(&update),
            vec![
                ("container.pickup_lfd.changed", Some("2026-05-07")),
                ("container.pickup_lfd_terminal.changed", Some("2026-05-07")),
            ]
        );
        let notice = &update.new_events[0];
        assert_eq!(notice.timestamp, t(35), "when the terminal said it");
        assert_eq!(notice.location_locode.as_deref(), Some("NLRTM"));
    }

    #[test]
    fn a_last_free_day_said_again_is_not_announced_again() {
        let ids = SequentialIds::default();
        let request = request(&ids);
        let mut report = report(voyage_so_far());
        report.pickup = vec![terminal_says(7, 35)];
        let first = plan(&request, Known::default(), &report, &ids, t(30));
        let (mut containers, mut events) = (Vec::new(), Vec::new());
        applied(&first, &mut containers, &mut events);
        report.pickup = vec![terminal_says(7, 36)];

        let again = plan(
            &request,
            Known {
                shipment: Some(&first.shipment),
                containers: &containers,
                events: &events,
                ..Known::default()
            },
            &report,
            &ids,
            t(40),
        );

        assert_eq!(notices(&first).len(), 2, "the first report announces it");
        assert!(notices(&again).is_empty());
    }

    #[test]
    fn a_lines_last_free_day_after_the_terminals_is_announced_as_the_lines_only() {
        let ids = SequentialIds::default();
        let mut report = report(voyage_so_far());
        let mut line = terminal_says(9, 36);
        line.lfd_source = crate::pickup::LfdSource::Line;
        report.pickup = vec![terminal_says(7, 35), line];

        let update = after_first_poll(&report, &ids);

        assert_eq!(
            notices(&update),
            vec![
                ("container.pickup_lfd.changed", Some("2026-05-07")),
                ("container.pickup_lfd_line.changed", Some("2026-05-09")),
                ("container.pickup_lfd_terminal.changed", Some("2026-05-07")),
            ]
        );
    }

    #[test]
    fn an_appointment_is_announced_with_its_time() {
        let ids = SequentialIds::default();
        let mut report = report(voyage_so_far());
        report.pickup = vec![crate::pickup::PickupObservation {
            appointment_at: Some(t(60)),
            ..terminal_says(7, 35)
        }];
        report.pickup[0].last_free_day = None;

        let update = after_first_poll(&report, &ids);

        assert_eq!(
            notices(&update),
            vec![(
                "container.pickup_appointment.changed",
                Some("2026-05-03T12:00:00Z")
            )]
        );
    }

    #[test]
    fn a_pickup_notice_leaves_the_containers_status_as_its_moves_say() {
        let ids = SequentialIds::default();
        let mut report = report(voyage_so_far());
        report.pickup = vec![terminal_says(7, 900)];

        let update = after_first_poll(&report, &ids);

        let container = update
            .changed_containers
            .iter()
            .find(|c| c.number == "TDMU1000001")
            .expect("its pick-up facts changed");
        assert_eq!(container.current_status, ContainerStatus::OnShip);
    }
}
