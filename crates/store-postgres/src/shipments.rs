//! Shipments, containers and transport events on PostgreSQL.
//!
//! A poll's outcome is written by `poll_results`, with the row builders and upserts here:
//! rows are upserted by id, updating only the columns a later carrier result may change.

use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use tidemark_domain::{
    AccountId, ApiKeyId, Container, ContainerId, ContainerStatus, DomainEvent, DomainEventId,
    PartyId, RawEvent, RawEventId, ReportedEvent, Shipment, ShipmentId, TrackingRequestId,
    TransportEvent, TransportEventId, TransportEventName,
};
use tidemark_store::{
    AwaitingPickup, ContainerEventIds, ContainerFilter, PageRequest, Paged, PickupFilter,
    SearchEntry, SearchKind, ShipmentFilter, ShipmentSort, StoreError, StoreResult,
    TerminalSelection, TransportEventFilter,
};
use tokio_postgres::Row;
use tokio_postgres::types::{FromSql, Json};
use uuid::Uuid;

use crate::convert::{backend, query_all, query_one, to_int};
use crate::tracking_requests::Condition;
use crate::unnest::Rows;

/// Reads a row's columns in order, so column lists and readers cannot drift apart by index.
struct Columns<'r> {
    row: &'r Row,
    next: usize,
}

impl<'r> Columns<'r> {
    fn new(row: &'r Row) -> Self {
        Self { row, next: 0 }
    }

    fn get<T: FromSql<'r>>(&mut self) -> StoreResult<T> {
        let value = self.row.try_get(self.next).map_err(backend);
        self.next += 1;
        value
    }

    fn opt_u32(&mut self) -> StoreResult<Option<u32>> {
        self.get::<Option<i32>>()?
            .map(u32::try_from)
            .transpose()
            .map_err(backend)
    }

    fn strings(&mut self) -> StoreResult<Vec<String>> {
        let Json(values) = self.get::<Json<Vec<String>>>()?;
        Ok(values)
    }
}

/// `columns` with each name prefixed by `alias.`.
fn prefixed(columns: &str, alias: &str) -> String {
    columns
        .split(',')
        .map(|c| format!("{alias}.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

const SHIPMENT_COLUMNS: &str = "id, account_id, tracking_request_id, bill_of_lading_number, \
    normalized_number, ref_numbers, tags, shipping_line_scac, port_of_lading_locode, \
    port_of_discharge_locode, destination_locode, pod_vessel_name, pod_vessel_imo, \
    pod_voyage_number, pol_etd_at, pol_atd_at, pod_eta_at, pod_original_eta_at, pod_ata_at, \
    destination_eta_at, destination_ata_at, line_tracking_last_attempted_at, \
    line_tracking_last_succeeded_at, line_tracking_stopped_at, line_tracking_stopped_reason, \
    created_at, updated_at, line_tracking_stopped_by, customer_id, pol_original_etd_at, \
    destination_original_eta_at, pod_terminal_id";

fn shipment_from_row(row: &Row) -> StoreResult<Shipment> {
    read_shipment(&mut Columns::new(row))
}

fn read_shipment(c: &mut Columns<'_>) -> StoreResult<Shipment> {
    Ok(Shipment {
        id: ShipmentId(c.get()?),
        account_id: AccountId(c.get()?),
        tracking_request_id: TrackingRequestId(c.get()?),
        bill_of_lading_number: c.get()?,
        normalized_number: c.get()?,
        ref_numbers: c.strings()?,
        tags: c.strings()?,
        shipping_line_scac: c.get()?,
        port_of_lading_locode: c.get()?,
        port_of_discharge_locode: c.get()?,
        destination_locode: c.get()?,
        pod_vessel_name: c.get()?,
        pod_vessel_imo: c.get()?,
        pod_voyage_number: c.get()?,
        pol_etd_at: c.get()?,
        pol_atd_at: c.get()?,
        pod_eta_at: c.get()?,
        pod_original_eta_at: c.get()?,
        pod_ata_at: c.get()?,
        destination_eta_at: c.get()?,
        destination_ata_at: c.get()?,
        line_tracking_last_attempted_at: c.get()?,
        line_tracking_last_succeeded_at: c.get()?,
        line_tracking_stopped_at: c.get()?,
        line_tracking_stopped_reason: c.get()?,
        created_at: c.get()?,
        updated_at: c.get()?,
        line_tracking_stopped_by: c.get::<Option<Uuid>>()?.map(ApiKeyId),
        customer_id: c.get::<Option<Uuid>>()?.map(PartyId),
        pol_original_etd_at: c.get()?,
        destination_original_eta_at: c.get()?,
        pod_terminal_id: c.get()?,
    })
}

/// How a shipment already written is updated: the columns a later carrier result may change.
pub(crate) const SHIPMENT_UPSERT: &str = "ON CONFLICT (id) DO UPDATE SET
    bill_of_lading_number = excluded.bill_of_lading_number,
    port_of_lading_locode = excluded.port_of_lading_locode,
    port_of_discharge_locode = excluded.port_of_discharge_locode,
    destination_locode = excluded.destination_locode,
    pod_vessel_name = excluded.pod_vessel_name, pod_vessel_imo = excluded.pod_vessel_imo,
    pod_voyage_number = excluded.pod_voyage_number, pol_etd_at = excluded.pol_etd_at,
    pol_atd_at = excluded.pol_atd_at, pod_eta_at = excluded.pod_eta_at,
    pod_original_eta_at = excluded.pod_original_eta_at, pod_ata_at = excluded.pod_ata_at,
    pol_original_etd_at = excluded.pol_original_etd_at,
    destination_original_eta_at = excluded.destination_original_eta_at,
    pod_terminal_id = excluded.pod_terminal_id,
    destination_eta_at = excluded.destination_eta_at,
    destination_ata_at = excluded.destination_ata_at,
    line_tracking_last_attempted_at = excluded.line_tracking_last_attempted_at,
    line_tracking_last_succeeded_at = excluded.line_tracking_last_succeeded_at,
    line_tracking_stopped_at = excluded.line_tracking_stopped_at,
    line_tracking_stopped_reason = excluded.line_tracking_stopped_reason,
    line_tracking_stopped_by = excluded.line_tracking_stopped_by,
    updated_at = excluded.updated_at";

pub(crate) fn shipment_rows<'a>(shipments: &[&'a Shipment]) -> Rows<'a> {
    let uuids = |f: fn(&Shipment) -> Uuid| shipments.iter().map(|s| f(s)).collect::<Vec<_>>();
    let ids = |f: fn(&Shipment) -> Option<Uuid>| shipments.iter().map(|s| f(s)).collect::<Vec<_>>();
    let text = |f: fn(&'a Shipment) -> &'a str| shipments.iter().map(|s| f(s)).collect::<Vec<_>>();
    let optional_text =
        |f: fn(&'a Shipment) -> Option<&'a str>| shipments.iter().map(|s| f(s)).collect::<Vec<_>>();
    let time = |f: fn(&Shipment) -> Option<DateTime<Utc>>| {
        shipments.iter().map(|s| f(s)).collect::<Vec<_>>()
    };
    let json = |f: fn(&'a Shipment) -> &'a Vec<String>| {
        shipments.iter().map(|s| Json(f(s))).collect::<Vec<_>>()
    };
    Rows::new(shipments.len())
        .column("id", "uuid", uuids(|s| s.id.0))
        .column("account_id", "uuid", uuids(|s| s.account_id.0))
        .column(
            "tracking_request_id",
            "uuid",
            uuids(|s| s.tracking_request_id.0),
        )
        .column(
            "bill_of_lading_number",
            "text",
            text(|s| &s.bill_of_lading_number),
        )
        .column("normalized_number", "text", text(|s| &s.normalized_number))
        .column("ref_numbers", "jsonb", json(|s| &s.ref_numbers))
        .column("tags", "jsonb", json(|s| &s.tags))
        .column(
            "shipping_line_scac",
            "text",
            text(|s| &s.shipping_line_scac),
        )
        .column(
            "port_of_lading_locode",
            "text",
            optional_text(|s| s.port_of_lading_locode.as_deref()),
        )
        .column(
            "port_of_discharge_locode",
            "text",
            optional_text(|s| s.port_of_discharge_locode.as_deref()),
        )
        .column(
            "destination_locode",
            "text",
            optional_text(|s| s.destination_locode.as_deref()),
        )
        .column(
            "pod_vessel_name",
            "text",
            optional_text(|s| s.pod_vessel_name.as_deref()),
        )
        .column(
            "pod_vessel_imo",
            "text",
            optional_text(|s| s.pod_vessel_imo.as_deref()),
        )
        .column(
            "pod_voyage_number",
            "text",
            optional_text(|s| s.pod_voyage_number.as_deref()),
        )
        .column("pol_etd_at", "timestamptz", time(|s| s.pol_etd_at))
        .column("pol_atd_at", "timestamptz", time(|s| s.pol_atd_at))
        .column("pod_eta_at", "timestamptz", time(|s| s.pod_eta_at))
        .column(
            "pod_original_eta_at",
            "timestamptz",
            time(|s| s.pod_original_eta_at),
        )
        .column("pod_ata_at", "timestamptz", time(|s| s.pod_ata_at))
        .column(
            "destination_eta_at",
            "timestamptz",
            time(|s| s.destination_eta_at),
        )
        .column(
            "destination_ata_at",
            "timestamptz",
            time(|s| s.destination_ata_at),
        )
        .column(
            "line_tracking_last_attempted_at",
            "timestamptz",
            time(|s| s.line_tracking_last_attempted_at),
        )
        .column(
            "line_tracking_last_succeeded_at",
            "timestamptz",
            time(|s| s.line_tracking_last_succeeded_at),
        )
        .column(
            "line_tracking_stopped_at",
            "timestamptz",
            time(|s| s.line_tracking_stopped_at),
        )
        .column(
            "line_tracking_stopped_reason",
            "text",
            optional_text(|s| s.line_tracking_stopped_reason.as_deref()),
        )
        .column("created_at", "timestamptz", time(|s| Some(s.created_at)))
        .column("updated_at", "timestamptz", time(|s| Some(s.updated_at)))
        .column(
            "line_tracking_stopped_by",
            "uuid",
            ids(|s| s.line_tracking_stopped_by.map(|id| id.0)),
        )
        .column("customer_id", "uuid", ids(|s| s.customer_id.map(|id| id.0)))
        .column(
            "pol_original_etd_at",
            "timestamptz",
            time(|s| s.pol_original_etd_at),
        )
        .column(
            "destination_original_eta_at",
            "timestamptz",
            time(|s| s.destination_original_eta_at),
        )
        .column("pod_terminal_id", "uuid", ids(|s| s.pod_terminal_id))
}

const CONTAINER_COLUMNS: &str = "id, account_id, shipment_id, number, seal_number, \
    iso_equipment_code, equipment_type, equipment_length, equipment_height, weight_in_lbs, \
    pod_arrived_at, pod_discharged_at, pod_full_out_at, final_destination_full_out_at, \
    empty_terminated_at, availability_known, available_for_pickup, current_status, created_at, \
    updated_at, ref_numbers, pickup, inland";

fn container_from_row(row: &Row) -> StoreResult<Container> {
    read_container(&mut Columns::new(row))
}

fn read_container(c: &mut Columns<'_>) -> StoreResult<Container> {
    Ok(Container {
        id: ContainerId(c.get()?),
        account_id: AccountId(c.get()?),
        shipment_id: ShipmentId(c.get()?),
        number: c.get()?,
        seal_number: c.get()?,
        iso_equipment_code: c.get()?,
        equipment_type: c.get()?,
        equipment_length: c.opt_u32()?,
        equipment_height: c.get()?,
        weight_in_lbs: c.opt_u32()?,
        pod_arrived_at: c.get()?,
        pod_discharged_at: c.get()?,
        pod_full_out_at: c.get()?,
        final_destination_full_out_at: c.get()?,
        empty_terminated_at: c.get()?,
        availability_known: c.get()?,
        available_for_pickup: c.get()?,
        current_status: {
            let status: &str = c.get()?;
            ContainerStatus::parse(status)
                .ok_or_else(|| backend(format!("unknown container status {status}")))?
        },
        created_at: c.get()?,
        updated_at: c.get()?,
        ref_numbers: c.strings()?,
        pickup: {
            let Json(pickup) = c.get::<Json<tidemark_domain::pickup::PickupFacts>>()?;
            pickup
        },
        inland: {
            let Json(inland) = c.get::<Json<tidemark_domain::pickup::InlandFacts>>()?;
            inland
        },
    })
}

/// How a container already written is updated: the columns a later carrier result may change.
pub(crate) const CONTAINER_UPSERT: &str =
    "ON CONFLICT (id) DO UPDATE SET seal_number = excluded.seal_number,
    pod_arrived_at = excluded.pod_arrived_at,
    pod_discharged_at = excluded.pod_discharged_at,
    pod_full_out_at = excluded.pod_full_out_at,
    final_destination_full_out_at = excluded.final_destination_full_out_at,
    empty_terminated_at = excluded.empty_terminated_at,
    availability_known = excluded.availability_known,
    available_for_pickup = excluded.available_for_pickup,
    pickup = excluded.pickup, inland = excluded.inland,
    current_status = excluded.current_status, updated_at = excluded.updated_at";

pub(crate) fn container_rows<'a>(containers: &[&'a Container]) -> StoreResult<Rows<'a>> {
    let uuids = |f: fn(&Container) -> Uuid| containers.iter().map(|c| f(c)).collect::<Vec<_>>();
    let text = |f: fn(&'a Container) -> Option<&'a str>| {
        containers.iter().map(|c| f(c)).collect::<Vec<_>>()
    };
    let time = |f: fn(&Container) -> Option<DateTime<Utc>>| {
        containers.iter().map(|c| f(c)).collect::<Vec<_>>()
    };
    let flag = |f: fn(&Container) -> bool| containers.iter().map(|c| f(c)).collect::<Vec<_>>();
    let count = |f: fn(&Container) -> Option<u32>| {
        containers
            .iter()
            .map(|c| f(c).map(to_int).transpose())
            .collect::<StoreResult<Vec<_>>>()
    };
    Ok(Rows::new(containers.len())
        .column("id", "uuid", uuids(|c| c.id.0))
        .column("account_id", "uuid", uuids(|c| c.account_id.0))
        .column("shipment_id", "uuid", uuids(|c| c.shipment_id.0))
        .column("number", "text", text(|c| Some(&c.number)))
        .column("seal_number", "text", text(|c| c.seal_number.as_deref()))
        .column(
            "iso_equipment_code",
            "text",
            text(|c| c.iso_equipment_code.as_deref()),
        )
        .column(
            "equipment_type",
            "text",
            text(|c| c.equipment_type.as_deref()),
        )
        .column("equipment_length", "int4", count(|c| c.equipment_length)?)
        .column(
            "equipment_height",
            "text",
            text(|c| c.equipment_height.as_deref()),
        )
        .column("weight_in_lbs", "int4", count(|c| c.weight_in_lbs)?)
        .column("pod_arrived_at", "timestamptz", time(|c| c.pod_arrived_at))
        .column(
            "pod_discharged_at",
            "timestamptz",
            time(|c| c.pod_discharged_at),
        )
        .column(
            "pod_full_out_at",
            "timestamptz",
            time(|c| c.pod_full_out_at),
        )
        .column(
            "final_destination_full_out_at",
            "timestamptz",
            time(|c| c.final_destination_full_out_at),
        )
        .column(
            "empty_terminated_at",
            "timestamptz",
            time(|c| c.empty_terminated_at),
        )
        .column("availability_known", "bool", flag(|c| c.availability_known))
        .column(
            "available_for_pickup",
            "bool",
            flag(|c| c.available_for_pickup),
        )
        .column(
            "current_status",
            "text",
            text(|c| Some(c.current_status.as_str())),
        )
        .column("created_at", "timestamptz", time(|c| Some(c.created_at)))
        .column("updated_at", "timestamptz", time(|c| Some(c.updated_at)))
        .column(
            "ref_numbers",
            "jsonb",
            containers.iter().map(|c| Json(&c.ref_numbers)).collect(),
        )
        .column(
            "pickup",
            "jsonb",
            containers.iter().map(|c| Json(&c.pickup)).collect(),
        )
        .column(
            "inland",
            "jsonb",
            containers.iter().map(|c| Json(&c.inland)).collect(),
        ))
}

const EVENT_COLUMNS: &str = "id, account_id, shipment_id, container_id, event, timestamp, \
    voyage_number, location_locode, vessel_name, vessel_imo, terminal_id, source_id, created_at, \
    value";

fn event_from_row(row: &Row) -> StoreResult<TransportEvent> {
    let mut c = Columns::new(row);
    Ok(TransportEvent {
        id: TransportEventId(c.get()?),
        account_id: AccountId(c.get()?),
        shipment_id: ShipmentId(c.get()?),
        container_id: ContainerId(c.get()?),
        event: {
            let name: &str = c.get()?;
            TransportEventName::parse(name)
                .ok_or_else(|| backend(format!("unknown event {name}")))?
        },
        timestamp: c.get()?,
        voyage_number: c.get()?,
        location_locode: c.get()?,
        vessel_name: c.get()?,
        vessel_imo: c.get()?,
        terminal_id: c.get()?,
        source_id: c.get()?,
        created_at: c.get()?,
        value: c.get()?,
    })
}

/// How an event the carrier corrected is updated (new events are plain inserts: their ids
/// are new, and `ON CONFLICT` would make each row a speculative insertion).
pub(crate) const EVENT_UPSERT: &str = "ON CONFLICT (id) DO UPDATE SET event = excluded.event,
    timestamp = excluded.timestamp, voyage_number = excluded.voyage_number,
    location_locode = excluded.location_locode, vessel_name = excluded.vessel_name,
    vessel_imo = excluded.vessel_imo, terminal_id = excluded.terminal_id";

pub(crate) fn event_rows<'a>(events: &[&'a TransportEvent]) -> Rows<'a> {
    let uuids = |f: fn(&TransportEvent) -> Uuid| events.iter().map(|e| f(e)).collect::<Vec<_>>();
    let text = |f: fn(&'a TransportEvent) -> Option<&'a str>| {
        events.iter().map(|e| f(e)).collect::<Vec<_>>()
    };
    let time =
        |f: fn(&TransportEvent) -> DateTime<Utc>| events.iter().map(|e| f(e)).collect::<Vec<_>>();
    Rows::new(events.len())
        .column("id", "uuid", uuids(|e| e.id.0))
        .column("account_id", "uuid", uuids(|e| e.account_id.0))
        .column("shipment_id", "uuid", uuids(|e| e.shipment_id.0))
        .column("container_id", "uuid", uuids(|e| e.container_id.0))
        .column("event", "text", text(|e| Some(e.event.as_str())))
        .column("timestamp", "timestamptz", time(|e| e.timestamp))
        .column(
            "voyage_number",
            "text",
            text(|e| e.voyage_number.as_deref()),
        )
        .column(
            "location_locode",
            "text",
            text(|e| e.location_locode.as_deref()),
        )
        .column("vessel_name", "text", text(|e| e.vessel_name.as_deref()))
        .column("vessel_imo", "text", text(|e| e.vessel_imo.as_deref()))
        .column(
            "terminal_id",
            "uuid",
            events.iter().map(|e| e.terminal_id).collect(),
        )
        .column("source_id", "text", text(|e| Some(&e.source_id)))
        .column("created_at", "timestamptz", time(|e| e.created_at))
        .column("value", "text", text(|e| e.value.as_deref()))
}

const RAW_EVENT_COLUMNS: &str = "id, account_id, shipment_id, container_number, source_id, \
    original_event, event, timestamp, estimated, location_locode, location_name, vessel_name, \
    vessel_imo, voyage_number, terminal_id, created_at";

fn raw_event_from_row(row: &Row) -> StoreResult<RawEvent> {
    let mut c = Columns::new(row);
    Ok(RawEvent {
        id: RawEventId(c.get()?),
        account_id: AccountId(c.get()?),
        shipment_id: ShipmentId(c.get()?),
        container_number: c.get()?,
        source_id: c.get()?,
        reported: ReportedEvent {
            original_event: c.get()?,
            event: c.get()?,
            timestamp: c.get()?,
            estimated: c.get()?,
            location_locode: c.get()?,
            location_name: c.get()?,
            vessel_name: c.get()?,
            vessel_imo: c.get()?,
            voyage_number: c.get()?,
            terminal_id: c.get()?,
        },
        created_at: c.get()?,
    })
}

/// How a raw event the carrier changed is updated.
pub(crate) const RAW_EVENT_UPSERT: &str = "ON CONFLICT (shipment_id, source_id) DO UPDATE SET
    container_number = excluded.container_number,
    original_event = excluded.original_event, event = excluded.event,
    timestamp = excluded.timestamp, estimated = excluded.estimated,
    location_locode = excluded.location_locode,
    location_name = excluded.location_name, vessel_name = excluded.vessel_name,
    vessel_imo = excluded.vessel_imo, voyage_number = excluded.voyage_number,
    terminal_id = excluded.terminal_id";

pub(crate) fn raw_event_rows<'a>(events: &[&'a RawEvent]) -> Rows<'a> {
    let uuids = |f: fn(&RawEvent) -> Uuid| events.iter().map(|e| f(e)).collect::<Vec<_>>();
    let text =
        |f: fn(&'a RawEvent) -> Option<&'a str>| events.iter().map(|e| f(e)).collect::<Vec<_>>();
    Rows::new(events.len())
        .column("id", "uuid", uuids(|e| e.id.0))
        .column("account_id", "uuid", uuids(|e| e.account_id.0))
        .column("shipment_id", "uuid", uuids(|e| e.shipment_id.0))
        .column(
            "container_number",
            "text",
            text(|e| e.container_number.as_deref()),
        )
        .column("source_id", "text", text(|e| Some(&e.source_id)))
        .column(
            "original_event",
            "text",
            text(|e| Some(&e.reported.original_event)),
        )
        .column("event", "text", text(|e| e.reported.event.as_deref()))
        .column(
            "timestamp",
            "timestamptz",
            events.iter().map(|e| e.reported.timestamp).collect(),
        )
        .column(
            "estimated",
            "bool",
            events.iter().map(|e| e.reported.estimated).collect(),
        )
        .column(
            "location_locode",
            "text",
            text(|e| e.reported.location_locode.as_deref()),
        )
        .column(
            "location_name",
            "text",
            text(|e| e.reported.location_name.as_deref()),
        )
        .column(
            "vessel_name",
            "text",
            text(|e| e.reported.vessel_name.as_deref()),
        )
        .column(
            "vessel_imo",
            "text",
            text(|e| e.reported.vessel_imo.as_deref()),
        )
        .column(
            "voyage_number",
            "text",
            text(|e| e.reported.voyage_number.as_deref()),
        )
        .column(
            "terminal_id",
            "uuid",
            events.iter().map(|e| e.reported.terminal_id).collect(),
        )
        .column(
            "created_at",
            "timestamptz",
            events.iter().map(|e| e.created_at).collect(),
        )
}

pub async fn raw_events_of_shipment(
    client: &impl GenericClient,
    shipment: ShipmentId,
) -> StoreResult<Vec<RawEvent>> {
    query_all(
        client,
        &format!(
            "SELECT {RAW_EVENT_COLUMNS} FROM raw_events WHERE shipment_id = $1 \
             ORDER BY timestamp, id"
        ),
        &[&shipment.0],
        raw_event_from_row,
    )
    .await
}

pub async fn raw_events_of_container(
    client: &impl GenericClient,
    account: AccountId,
    container: ContainerId,
) -> StoreResult<Vec<RawEvent>> {
    // Checked first so an unknown container is `NotFound`, not an empty list.
    let container = self::container(client, account, container).await?;
    query_all(
        client,
        &format!(
            "SELECT {RAW_EVENT_COLUMNS} FROM raw_events WHERE shipment_id = $1 \
             AND (container_number IS NULL OR container_number = $2) ORDER BY timestamp, id"
        ),
        &[&container.shipment_id.0, &container.number],
        raw_event_from_row,
    )
    .await
}

/// Found through the keys the reads of one container use: transport events by
/// `(container_id, source_id)`, raw events by their key `(shipment_id, source_id)`; the two
/// queries are sent together.
pub async fn event_ids_of_containers(
    client: &impl GenericClient,
    account: AccountId,
    containers: &[ContainerId],
) -> StoreResult<HashMap<ContainerId, ContainerEventIds>> {
    let mut found: HashMap<ContainerId, ContainerEventIds> = HashMap::new();
    if containers.is_empty() {
        return Ok(found);
    }
    fn pair(row: &Row) -> StoreResult<(ContainerId, Uuid)> {
        Ok((
            ContainerId(row.try_get(0).map_err(backend)?),
            row.try_get(1).map_err(backend)?,
        ))
    }
    let ids: Vec<Uuid> = containers.iter().map(|id| id.0).collect();
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&ids, &account.0];
    let (transport, raw) = futures_util::try_join!(
        query_all(
            client,
            "SELECT container_id, id FROM transport_events \
             WHERE container_id = ANY($1) AND account_id = $2 ORDER BY timestamp, id",
            &params,
            pair,
        ),
        query_all(
            client,
            "SELECT c.id, r.id FROM containers c \
             JOIN raw_events r ON r.shipment_id = c.shipment_id \
              AND (r.container_number IS NULL OR r.container_number = c.number) \
             WHERE c.id = ANY($1) AND c.account_id = $2 ORDER BY r.timestamp, r.id",
            &params,
            pair,
        ),
    )?;
    for (container, id) in transport {
        found
            .entry(container)
            .or_default()
            .transport_events
            .push(TransportEventId(id));
    }
    for (container, id) in raw {
        found
            .entry(container)
            .or_default()
            .raw_events
            .push(RawEventId(id));
    }
    Ok(found)
}

/// A change's domain events as rows.
pub(crate) fn domain_event_rows<'a>(events: &[&'a DomainEvent]) -> Rows<'a> {
    let uuids = |f: fn(&DomainEvent) -> Uuid| events.iter().map(|e| f(e)).collect::<Vec<_>>();
    let optional =
        |f: fn(&DomainEvent) -> Option<Uuid>| events.iter().map(|e| f(e)).collect::<Vec<_>>();
    let text = |f: fn(&'a DomainEvent) -> &'a str| events.iter().map(|e| f(e)).collect::<Vec<_>>();
    Rows::new(events.len())
        .column("id", "uuid", uuids(|e| e.id.0))
        .column("account_id", "uuid", uuids(|e| e.account_id.0))
        .column("event", "text", text(|e| e.event.as_str()))
        .column(
            "reference_type",
            "text",
            text(|e| e.reference_type.as_str()),
        )
        .column("reference_id", "uuid", uuids(|e| e.reference_id))
        .column(
            "shipment_id",
            "uuid",
            optional(|e| e.shipment_id.map(|id| id.0)),
        )
        .column(
            "container_id",
            "uuid",
            optional(|e| e.container_id.map(|id| id.0)),
        )
        .column(
            "created_at",
            "timestamptz",
            events.iter().map(|e| e.created_at).collect(),
        )
        .column(
            "payload",
            "jsonb",
            events.iter().map(|e| e.payload.as_ref()).collect(),
        )
}

/// Stores a change's domain events (the caller holds the transaction).
pub(crate) async fn insert_domain_events(
    tx: &deadpool_postgres::Transaction<'_>,
    events: &[DomainEvent],
) -> StoreResult<()> {
    let events: Vec<&DomainEvent> = events.iter().collect();
    crate::unnest::insert(tx, "domain_events", domain_event_rows(&events), "").await
}

pub async fn domain_events(
    client: &deadpool_postgres::Client,
    account: AccountId,
    after: Option<DomainEventId>,
    limit: u32,
) -> StoreResult<Vec<DomainEvent>> {
    let statement = client
        .prepare_cached(
            "SELECT id, account_id, event, reference_type, reference_id, shipment_id,
                    container_id, created_at, payload
             FROM domain_events
             WHERE account_id = $1 AND ($2::uuid IS NULL OR id > $2)
             ORDER BY id LIMIT $3",
        )
        .await
        .map_err(backend)?;
    let rows = client
        .query(
            &statement,
            &[&account.0, &after.map(|id| id.0), &i64::from(limit)],
        )
        .await
        .map_err(backend)?;
    rows.iter()
        .map(|row| {
            Ok(DomainEvent {
                id: DomainEventId(row.try_get(0).map_err(backend)?),
                account_id: AccountId(row.try_get(1).map_err(backend)?),
                event: row.try_get(2).map_err(backend)?,
                reference_type: row.try_get(3).map_err(backend)?,
                reference_id: row.try_get(4).map_err(backend)?,
                shipment_id: row
                    .try_get::<_, Option<Uuid>>(5)
                    .map_err(backend)?
                    .map(ShipmentId),
                container_id: row
                    .try_get::<_, Option<Uuid>>(6)
                    .map_err(backend)?
                    .map(ContainerId),
                created_at: row.try_get(7).map_err(backend)?,
                payload: row.try_get(8).map_err(backend)?,
            })
        })
        .collect()
}

pub async fn shipment(
    client: &impl GenericClient,
    account: AccountId,
    id: ShipmentId,
) -> StoreResult<Shipment> {
    query_one(
        client,
        &format!("SELECT {SHIPMENT_COLUMNS} FROM shipments WHERE id = $1 AND account_id = $2"),
        &[&id.0, &account.0],
        shipment_from_row,
    )
    .await
}

/// Runs a counted, paged list query: `SELECT {select} {from} WHERE {condition}`.
pub(crate) async fn paged<T>(
    client: &impl GenericClient,
    select: &str,
    from: &str,
    mut condition: Condition,
    order: &str,
    page: PageRequest,
    read: fn(&Row) -> StoreResult<T>,
) -> StoreResult<Paged<T>> {
    let clauses = condition.clauses.join(" AND ");

    // The filters take a bounded number of shapes, so caching each statement is fine.
    let count = client
        .prepare_cached(&format!("SELECT count(*) {from} WHERE {clauses}"))
        .await
        .map_err(backend)?;
    let total: i64 = client
        .query_one(&count, &condition.params())
        .await
        .map_err(backend)?
        .try_get(0)
        .map_err(backend)?;

    let limit = condition.bind(i64::from(page.limit));
    let offset = condition.bind(i64::try_from(page.offset).unwrap_or(i64::MAX));
    let select = client
        .prepare_cached(&format!(
            "SELECT {select} {from} WHERE {clauses}
             ORDER BY {order} LIMIT {limit} OFFSET {offset}"
        ))
        .await
        .map_err(backend)?;
    let items = client
        .query(&select, &condition.params())
        .await
        .map_err(backend)?
        .iter()
        .map(read)
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(Paged {
        items,
        total: u64::try_from(total).map_err(backend)?,
    })
}

pub async fn list_shipments(
    client: &impl GenericClient,
    account: AccountId,
    filter: &ShipmentFilter,
    page: PageRequest,
) -> StoreResult<Paged<Shipment>> {
    let mut condition = Condition::default();
    let placeholder = condition.bind(account.0);
    condition
        .clauses
        .push(format!("s.account_id = {placeholder}"));
    if let Some(q) = &filter.q {
        // The search index (GET /v2/search's): a range of the account's terms, so the cost
        // follows the matches, not the account's size. A query with no letter or digit
        // matches nothing.
        let Some(key) = tidemark_store::search_key(q) else {
            return Ok(Paged {
                items: Vec::new(),
                total: 0,
            });
        };
        let end = tidemark_store::prefix_end(&key);
        let (account, key, end) = (
            condition.bind(account.0),
            condition.bind(key),
            condition.bind(end),
        );
        condition.clauses.push(format!(
            "s.id IN (SELECT t.entity_id FROM search_terms t \
             WHERE t.account_id = {account} AND t.kind = {shipment} AND t.term >= {key} AND t.term < {end} \
             UNION SELECT c.shipment_id FROM search_terms t JOIN containers c ON c.id = t.entity_id \
             WHERE t.account_id = {account} AND t.kind = {container} AND t.term >= {key} AND t.term < {end})",
            shipment = SearchKind::Shipment.code(),
            container = SearchKind::Container.code(),
        ));
    }
    for (column, value) in [
        ("s.normalized_number", &filter.number),
        ("s.port_of_lading_locode", &filter.port_of_lading),
        ("s.port_of_discharge_locode", &filter.port_of_discharge),
        ("s.shipping_line_scac", &filter.scac),
    ] {
        if let Some(value) = value {
            let placeholder = condition.bind(value.trim().to_uppercase());
            condition.clauses.push(format!("{column} = {placeholder}"));
        }
    }
    match filter.tracking_stopped {
        Some(true) => condition
            .clauses
            .push("s.line_tracking_stopped_at IS NOT NULL".to_owned()),
        Some(false) => condition
            .clauses
            .push("s.line_tracking_stopped_at IS NULL".to_owned()),
        None => {}
    }
    if let Some(status) = filter.container_status {
        let placeholder = condition.bind(status.as_str());
        condition.clauses.push(format!(
            "EXISTS (SELECT 1 FROM containers c WHERE c.shipment_id = s.id \
             AND c.current_status = {placeholder})"
        ));
    }
    if !filter.pickup.is_empty() {
        let inner = pickup_clauses(&filter.pickup, &mut condition);
        condition.clauses.push(format!(
            "EXISTS (SELECT 1 FROM containers c WHERE c.shipment_id = s.id AND {})",
            inner.join(" AND ")
        ));
    }
    if let Some(since) = filter.updated_since {
        let placeholder = condition.bind(since);
        condition
            .clauses
            .push(format!("s.updated_at >= {placeholder}"));
    }
    if let Some(customer) = filter.customer {
        let placeholder = condition.bind(customer.0);
        condition
            .clauses
            .push(format!("s.customer_id = {placeholder}"));
    }
    if let Some(tag) = &filter.tag {
        let placeholder = condition.bind(tag.trim().to_lowercase());
        condition.clauses.push(format!(
            "EXISTS (SELECT 1 FROM jsonb_array_elements_text(s.tags) t \
             WHERE lower(t) = {placeholder})"
        ));
    }
    if let Some((from, to)) = filter.arriving_between {
        let from = condition.bind(from);
        let to = condition.bind(to);
        condition.clauses.push(format!(
            "s.pod_ata_at IS NULL AND s.pod_eta_at >= {from} AND s.pod_eta_at <= {to}"
        ));
    }
    crate::custom_fields::filter_clauses(account, &filter.custom_fields, "s.id", &mut condition);
    let order = match filter.sort {
        ShipmentSort::Newest => "s.created_at DESC, s.id DESC",
        ShipmentSort::EtaAscending => "s.pod_eta_at ASC NULLS LAST, s.id ASC",
        ShipmentSort::EtaDescending => "s.pod_eta_at DESC NULLS LAST, s.id DESC",
    };
    paged(
        client,
        &prefixed(SHIPMENT_COLUMNS, "s"),
        "FROM shipments s",
        condition,
        order,
        page,
        shipment_from_row,
    )
    .await
}

pub async fn update_shipment(client: &impl GenericClient, shipment: &Shipment) -> StoreResult<()> {
    let statement = client
        .prepare_cached(
            "UPDATE shipments SET ref_numbers = $3, tags = $4, updated_at = $5
             WHERE id = $1 AND account_id = $2",
        )
        .await
        .map_err(backend)?;
    let updated = client
        .execute(
            &statement,
            &[
                &shipment.id.0,
                &shipment.account_id.0,
                &Json(&shipment.ref_numbers),
                &Json(&shipment.tags),
                &shipment.updated_at,
            ],
        )
        .await
        .map_err(backend)?;
    if updated == 0 {
        return Err(StoreError::NotFound);
    }
    crate::search::index(
        client,
        shipment.account_id,
        &SearchEntry::shipment(shipment),
    )
    .await
}

/// Saves a container's user-editable fields: its ref numbers.
pub async fn update_container(
    client: &impl GenericClient,
    container: &Container,
) -> StoreResult<()> {
    let statement = client
        .prepare_cached(
            "UPDATE containers SET ref_numbers = $3, updated_at = $4
             WHERE id = $1 AND account_id = $2",
        )
        .await
        .map_err(backend)?;
    let updated = client
        .execute(
            &statement,
            &[
                &container.id.0,
                &container.account_id.0,
                &Json(&container.ref_numbers),
                &container.updated_at,
            ],
        )
        .await
        .map_err(backend)?;
    if updated == 0 {
        return Err(StoreError::NotFound);
    }
    crate::search::index(
        client,
        container.account_id,
        &SearchEntry::container(container),
    )
    .await
}

pub async fn shipments_to_poll(
    client: &impl GenericClient,
    due_before: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<Shipment>> {
    query_all(
        client,
        &format!(
            "SELECT {SHIPMENT_COLUMNS} FROM shipments
             WHERE line_tracking_stopped_at IS NULL
               AND coalesce(line_tracking_last_attempted_at, created_at) <= $1
             ORDER BY coalesce(line_tracking_last_attempted_at, created_at), id LIMIT $2"
        ),
        &[&due_before, &i64::from(limit)],
        shipment_from_row,
    )
    .await
}

pub async fn containers_of_shipment(
    client: &impl GenericClient,
    shipment: ShipmentId,
) -> StoreResult<Vec<Container>> {
    query_all(
        client,
        &format!(
            "SELECT {CONTAINER_COLUMNS} FROM containers WHERE shipment_id = $1 ORDER BY number"
        ),
        &[&shipment.0],
        container_from_row,
    )
    .await
}

/// A shipment's containers when the shipment is the account's; none otherwise.
/// A shipment and its containers in one statement (the containers joined to the shipment
/// row): the API's most frequent read costs the database one statement, not two.
pub async fn shipment_with_containers(
    client: &impl GenericClient,
    account: AccountId,
    id: ShipmentId,
) -> StoreResult<(Shipment, Vec<Container>)> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {}, {} FROM shipments s
             LEFT JOIN containers c ON c.shipment_id = s.id
             WHERE s.id = $1 AND s.account_id = $2 ORDER BY c.number",
            prefixed(SHIPMENT_COLUMNS, "s"),
            prefixed(CONTAINER_COLUMNS, "c"),
        )
    });
    let statement = client.prepare_cached(&SQL).await.map_err(backend)?;
    let rows = client
        .query(&statement, &[&id.0, &account.0])
        .await
        .map_err(backend)?;
    let first = rows.first().ok_or(StoreError::NotFound)?;
    let mut columns = Columns::new(first);
    let shipment = read_shipment(&mut columns)?;
    let container_start = columns.next;
    let mut containers = Vec::with_capacity(rows.len());
    for row in &rows {
        // Without containers the one row's container columns are all null.
        if row
            .try_get::<_, Option<Uuid>>(container_start)
            .map_err(backend)?
            .is_some()
        {
            containers.push(read_container(&mut Columns {
                row,
                next: container_start,
            })?);
        }
    }
    Ok((shipment, containers))
}

pub async fn shipments_by_ids(
    client: &impl GenericClient,
    account: AccountId,
    ids: &[ShipmentId],
) -> StoreResult<Vec<Shipment>> {
    let statement = client
        .prepare_cached(&format!(
            "SELECT {SHIPMENT_COLUMNS} FROM shipments
             WHERE account_id = $1 AND id = ANY($2) ORDER BY id"
        ))
        .await
        .map_err(backend)?;
    let ids: Vec<Uuid> = ids.iter().map(|id| id.0).collect();
    client
        .query(&statement, &[&account.0, &ids])
        .await
        .map_err(backend)?
        .iter()
        .map(shipment_from_row)
        .collect()
}

pub async fn containers_of_shipments(
    client: &impl GenericClient,
    shipments: &[ShipmentId],
) -> StoreResult<Vec<Container>> {
    let statement = client
        .prepare_cached(&format!(
            "SELECT {CONTAINER_COLUMNS} FROM containers WHERE shipment_id = ANY($1)
             ORDER BY shipment_id, number"
        ))
        .await
        .map_err(backend)?;
    let ids: Vec<Uuid> = shipments.iter().map(|id| id.0).collect();
    client
        .query(&statement, &[&ids])
        .await
        .map_err(backend)?
        .iter()
        .map(container_from_row)
        .collect()
}

/// Found through the shipment's containers: transport events have no index of their own by
/// shipment (migration 32), which would cost every event written an insert more.
pub async fn transport_events_of_shipment(
    client: &impl GenericClient,
    shipment: ShipmentId,
) -> StoreResult<Vec<TransportEvent>> {
    query_all(
        client,
        &format!(
            "SELECT {EVENT_COLUMNS} FROM transport_events
             WHERE container_id IN (SELECT id FROM containers WHERE shipment_id = $1)
               AND shipment_id = $1
             ORDER BY timestamp, id"
        ),
        &[&shipment.0],
        event_from_row,
    )
    .await
}

pub async fn transport_event(
    client: &impl GenericClient,
    account: AccountId,
    id: TransportEventId,
) -> StoreResult<TransportEvent> {
    query_one(
        client,
        &format!("SELECT {EVENT_COLUMNS} FROM transport_events WHERE id = $1 AND account_id = $2"),
        &[&id.0, &account.0],
        event_from_row,
    )
    .await
}

pub async fn container(
    client: &impl GenericClient,
    account: AccountId,
    id: ContainerId,
) -> StoreResult<Container> {
    query_one(
        client,
        &format!("SELECT {CONTAINER_COLUMNS} FROM containers WHERE id = $1 AND account_id = $2"),
        &[&id.0, &account.0],
        container_from_row,
    )
    .await
}

pub async fn list_containers(
    client: &impl GenericClient,
    account: AccountId,
    filter: &ContainerFilter,
    page: PageRequest,
) -> StoreResult<Paged<Container>> {
    let mut condition = Condition::default();
    let placeholder = condition.bind(account.0);
    condition
        .clauses
        .push(format!("c.account_id = {placeholder}"));
    if let Some(number) = &filter.number {
        let placeholder = condition.bind(number.trim().to_uppercase());
        condition.clauses.push(format!("c.number = {placeholder}"));
    }
    if let Some(status) = filter.status {
        let placeholder = condition.bind(status.as_str());
        condition
            .clauses
            .push(format!("c.current_status = {placeholder}"));
    }
    if let Some(port) = &filter.port {
        let placeholder = condition.bind(port.trim().to_uppercase());
        condition.clauses.push(format!(
            "(s.port_of_lading_locode = {placeholder} \
             OR s.port_of_discharge_locode = {placeholder})"
        ));
    }
    if let Some(scac) = &filter.scac {
        let placeholder = condition.bind(scac.trim().to_uppercase());
        condition
            .clauses
            .push(format!("s.shipping_line_scac = {placeholder}"));
    }
    if let Some(since) = filter.updated_since {
        let placeholder = condition.bind(since);
        condition
            .clauses
            .push(format!("c.updated_at >= {placeholder}"));
    }
    if let Some(customer) = filter.customer {
        let placeholder = condition.bind(customer.0);
        condition
            .clauses
            .push(format!("s.customer_id = {placeholder}"));
    }
    for clause in pickup_clauses(&filter.pickup, &mut condition) {
        condition.clauses.push(clause);
    }
    crate::custom_fields::filter_clauses(account, &filter.custom_fields, "c.id", &mut condition);
    paged(
        client,
        &prefixed(CONTAINER_COLUMNS, "c"),
        "FROM containers c JOIN shipments s ON s.id = c.shipment_id",
        condition,
        "c.updated_at DESC, c.id DESC",
        page,
        container_from_row,
    )
    .await
}

pub async fn transport_events_of_container(
    client: &impl GenericClient,
    account: AccountId,
    container: ContainerId,
    filter: &TransportEventFilter,
    page: PageRequest,
) -> StoreResult<Paged<TransportEvent>> {
    let mut condition = Condition::default();
    let account = condition.bind(account.0);
    let container = condition.bind(container.0);
    condition.clauses.push(format!("account_id = {account}"));
    condition
        .clauses
        .push(format!("container_id = {container}"));
    if let Some(event) = filter.event {
        let placeholder = condition.bind(event.as_str());
        condition.clauses.push(format!("event = {placeholder}"));
    }
    if let Some(from) = filter.from {
        let placeholder = condition.bind(from);
        condition
            .clauses
            .push(format!("timestamp >= {placeholder}"));
    }
    if let Some(to) = filter.to {
        let placeholder = condition.bind(to);
        condition
            .clauses
            .push(format!("timestamp <= {placeholder}"));
    }
    paged(
        client,
        EVENT_COLUMNS,
        "FROM transport_events",
        condition,
        "timestamp, id",
        page,
        event_from_row,
    )
    .await
}

/// Tracked shipments due under `schedule`, by priority (see
/// `tidemark_domain::carriers::priority`; the conditions mirror `PollPriority::of_shipment`).
pub async fn shipments_due(
    client: &impl GenericClient,
    scac: &str,
    schedule: &tidemark_store::PollSchedule,
    limit: u32,
) -> StoreResult<Vec<Shipment>> {
    query_all(
        client,
        &format!(
            "SELECT {SHIPMENT_COLUMNS} FROM shipments
             WHERE line_tracking_stopped_at IS NULL AND shipping_line_scac = $7
               AND coalesce(line_tracking_last_attempted_at, created_at) <= $1
               AND coalesce(line_tracking_last_attempted_at, created_at) <= CASE
                   WHEN pod_ata_at IS NOT NULL OR pod_eta_at <= $2::timestamptz THEN $3::timestamptz
                   WHEN pol_atd_at IS NOT NULL THEN $4::timestamptz
                   ELSE $5::timestamptz END
             ORDER BY
               EXTRACT(EPOCH FROM ($8::timestamptz - coalesce(line_tracking_last_attempted_at, created_at)))
               / greatest(EXTRACT(EPOCH FROM ($8::timestamptz - CASE
                   WHEN pod_ata_at IS NOT NULL OR pod_eta_at <= $2::timestamptz THEN $3::timestamptz
                   WHEN pol_atd_at IS NOT NULL THEN $4::timestamptz
                   ELSE $5::timestamptz END)), 1) DESC,
               CASE
                   WHEN pod_ata_at IS NOT NULL OR pod_eta_at <= $2::timestamptz THEN 0
                   WHEN pol_atd_at IS NOT NULL THEN 2
                   ELSE 1 END,
               id LIMIT $6"
        ),
        &[
            &schedule.latest(),
            &schedule.arriving_by,
            &schedule.near_milestone_before,
            &schedule.at_sea_before,
            &schedule.routine_before,
            &i64::from(limit),
            &scac,
            &schedule.now,
        ],
        shipment_from_row,
    )
    .await
}

/// The clauses of a pick-up filter on containers aliased `c`, their values bound.
fn pickup_clauses(filter: &PickupFilter, condition: &mut Condition) -> Vec<String> {
    let mut clauses = Vec::new();
    if let Some(available) = filter.available_for_pickup {
        let placeholder = condition.bind(available);
        clauses.push(format!("c.available_for_pickup = {placeholder}"));
    }
    if let Some(on_hold) = filter.on_hold {
        let comparison = if on_hold { "> 0" } else { "= 0" };
        clauses.push(format!(
            "jsonb_array_length(coalesce(c.pickup -> 'holds', '[]'::jsonb)) {comparison}"
        ));
    }
    if let Some(day) = filter.pickup_lfd_by {
        let placeholder = condition.bind(day.format("%Y-%m-%d").to_string());
        clauses.push(format!(
            "c.pod_full_out_at IS NULL AND (c.pickup ->> 'last_free_day') <= {placeholder}"
        ));
    }
    clauses
}

/// See `Store::containers_awaiting_pickup`. The terminal's own last ask of each container
/// comes from `terminal_checks` (one primary-key lookup per container; none: never asked,
/// `-infinity`). Discharged containers sort before the others (`pod_discharged_at IS NULL`
/// is false for them), each group by its own key. The shipment's bill of lading comes from
/// the join the selection makes anyway.
pub async fn containers_awaiting_pickup(
    client: &impl GenericClient,
    selection: &TerminalSelection<'_>,
) -> StoreResult<Vec<AwaitingPickup>> {
    let ports: Option<Vec<String>> = selection.ports.map(<[String]>::to_vec);
    let others: Vec<Uuid> = selection.other_terminals.to_vec();
    // A terminal's ports as a plain condition, so that the index of tracked shipments by
    // port of discharge can drive the selection whatever plan is cached (an `$1 IS NULL OR`
    // could not); the sandbox's selection, by line, has none.
    let at_ports = if ports.is_some() {
        "AND s.port_of_discharge_locode = ANY($1::text[])"
    } else {
        "AND $1::text[] IS NULL"
    };
    let arriving_only = if selection.arriving_only {
        "AND c.pod_discharged_at IS NULL"
    } else {
        ""
    };
    query_all(
        client,
        &format!(
            "SELECT {}, s.bill_of_lading_number
             FROM containers c JOIN shipments s ON s.id = c.shipment_id
             LEFT JOIN terminal_checks t ON t.terminal = $8 AND t.container_id = c.id
             WHERE s.line_tracking_stopped_at IS NULL
               AND c.pod_full_out_at IS NULL AND c.empty_terminated_at IS NULL
               {at_ports}
               {arriving_only}
               AND ($2::text IS NULL OR s.shipping_line_scac = $2)
               AND (s.pod_terminal_id IS NULL OR NOT (s.pod_terminal_id = ANY($3::uuid[])))
               AND CASE WHEN c.pod_discharged_at IS NOT NULL
                     THEN CASE WHEN t.asked_at >= c.pod_discharged_at THEN t.asked_at
                               ELSE '-infinity' END < $4
                     ELSE coalesce(c.pod_arrived_at, s.pod_ata_at, s.pod_eta_at) <= $6
                          AND coalesce(t.asked_at, '-infinity') < $5
                   END
             ORDER BY c.pod_discharged_at IS NULL,
                      CASE WHEN c.pod_discharged_at IS NULL
                           THEN coalesce(c.pod_arrived_at, s.pod_ata_at, s.pod_eta_at) END,
                      CASE WHEN c.pod_discharged_at IS NULL THEN coalesce(t.asked_at, '-infinity')
                           WHEN t.asked_at >= c.pod_discharged_at THEN t.asked_at
                           ELSE '-infinity' END,
                      c.id
             LIMIT $7",
            prefixed(CONTAINER_COLUMNS, "c")
        ),
        &[
            &ports,
            &selection.scac,
            &others,
            &selection.discharged_checked_before,
            &selection.arriving_checked_before,
            &selection.arriving_by,
            &i64::from(selection.limit),
            &selection.terminal,
        ],
        |row| {
            let mut columns = Columns::new(row);
            Ok(AwaitingPickup {
                container: read_container(&mut columns)?,
                bill_of_lading_number: columns.get()?,
            })
        },
    )
    .await
}

/// See `Store::record_terminal_asks`: one upsert for the batch, its ids as an array (each
/// once: an upsert may not touch a row twice).
pub async fn record_terminal_asks(
    client: &mut deadpool_postgres::Client,
    terminal: &str,
    containers: &[ContainerId],
    at: DateTime<Utc>,
) -> StoreResult<()> {
    if containers.is_empty() {
        return Ok(());
    }
    let ids: Vec<Uuid> = containers.iter().map(|id| id.0).collect();
    let tx = client.transaction().await.map_err(backend)?;
    let statement = tx
        .prepare_cached(
            "INSERT INTO terminal_checks (terminal, container_id, asked_at)
             SELECT DISTINCT $1::text, asked.id, $3::timestamptz
             FROM unnest($2::uuid[]) AS asked(id)
             WHERE EXISTS (SELECT 1 FROM containers c WHERE c.id = asked.id)
             ON CONFLICT (terminal, container_id) DO UPDATE SET asked_at = excluded.asked_at",
        )
        .await
        .map_err(backend)?;
    tx.execute(&statement, &[&terminal, &ids, &at])
        .await
        .map_err(backend)?;
    tx.commit().await.map_err(backend)?;
    Ok(())
}

/// See `Store::forget_finished_terminal_asks`.
pub async fn forget_finished_terminal_asks(client: &impl GenericClient) -> StoreResult<u64> {
    client
        .execute(FORGET_TERMINAL_ASKS, &[])
        .await
        .map_err(backend)
}

/// Every terminal's asks of containers no terminal asks about any more (out, returned
/// empty, tracking stopped, or gone): one primary-key lookup per kept row, and the rows kept
/// are those of containers still in some terminal's window. Rows another transaction holds
/// (a terminal recording its asks) are skipped, never waited for; the next pass forgets
/// them.
const FORGET_TERMINAL_ASKS: &str = "DELETE FROM terminal_checks WHERE (terminal, container_id) IN (
     SELECT t.terminal, t.container_id FROM terminal_checks t
     WHERE NOT EXISTS (
         SELECT 1 FROM containers c JOIN shipments s ON s.id = c.shipment_id
         WHERE c.id = t.container_id
           AND s.line_tracking_stopped_at IS NULL
           AND c.pod_full_out_at IS NULL AND c.empty_terminated_at IS NULL)
     FOR UPDATE SKIP LOCKED)";

/// See `Store::terminal_asks`.
pub async fn terminal_asks(
    client: &impl GenericClient,
    terminal: &str,
) -> StoreResult<Vec<(ContainerId, DateTime<Utc>)>> {
    query_all(
        client,
        "SELECT container_id, asked_at FROM terminal_checks WHERE terminal = $1
         ORDER BY container_id",
        &[&terminal],
        |row| {
            let mut columns = Columns::new(row);
            Ok((ContainerId(columns.get()?), columns.get()?))
        },
    )
    .await
}
