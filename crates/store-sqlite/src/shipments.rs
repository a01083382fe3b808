//! Shipments, containers and transport events on SQLite.

use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::LazyLock;

use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, OptionalExtension, Row, params, params_from_iter};
use tidemark_domain::tracking_update::TrackingUpdate;
use tidemark_domain::{
    AccountId, ApiKeyId, Container, ContainerId, ContainerStatus, DomainEvent, DomainEventId,
    FailedReason, PartyId, RawEvent, RawEventId, ReportedEvent, Shipment, ShipmentId,
    TrackingRequest, TrackingRequestId, TransportEvent, TransportEventId, TransportEventName,
};
use tidemark_store::{
    AwaitingPickup, ContainerEventIds, ContainerFilter, PageRequest, Paged, PickupFilter,
    SearchEntry, SearchKind, ShipmentFilter, ShipmentSort, StoreError, StoreResult,
    TerminalSelection, TransportEventFilter,
};
use uuid::Uuid;

use crate::convert::{backend, parse_ts, to_ts};

/// Reads a row's columns in order, so column lists and readers cannot drift apart by index.
struct Columns<'r, 's> {
    row: &'r Row<'s>,
    next: usize,
}

impl<'r, 's> Columns<'r, 's> {
    fn new(row: &'r Row<'s>) -> Self {
        Self { row, next: 0 }
    }

    fn get<T: rusqlite::types::FromSql>(&mut self) -> rusqlite::Result<T> {
        let value = self.row.get(self.next);
        self.next += 1;
        value
    }

    fn invalid(&self, what: String) -> rusqlite::Error {
        rusqlite::Error::FromSqlConversionFailure(
            self.next - 1,
            rusqlite::types::Type::Text,
            what.into(),
        )
    }

    fn uuid(&mut self) -> rusqlite::Result<Uuid> {
        let text: String = self.get()?;
        Uuid::parse_str(&text).map_err(|e| self.invalid(e.to_string()))
    }

    fn opt_uuid(&mut self) -> rusqlite::Result<Option<Uuid>> {
        let text: Option<String> = self.get()?;
        text.map(|text| Uuid::parse_str(&text).map_err(|e| self.invalid(e.to_string())))
            .transpose()
    }

    fn ts(&mut self) -> rusqlite::Result<DateTime<Utc>> {
        self.opt_ts()?
            .ok_or_else(|| self.invalid("missing timestamp".to_owned()))
    }

    fn opt_ts(&mut self) -> rusqlite::Result<Option<DateTime<Utc>>> {
        let text: Option<String> = self.get()?;
        text.map(|text| parse_ts(&text).map_err(|e| self.invalid(e.to_string())))
            .transpose()
    }

    fn strings(&mut self) -> rusqlite::Result<Vec<String>> {
        let text: String = self.get()?;
        serde_json::from_str(&text).map_err(|e| self.invalid(e.to_string()))
    }
}

const SHIPMENT_COLUMNS: &str = "id, account_id, tracking_request_id, bill_of_lading_number, \
    normalized_number, ref_numbers, tags, shipping_line_scac, port_of_lading_locode, \
    port_of_discharge_locode, destination_locode, pod_vessel_name, pod_vessel_imo, \
    pod_voyage_number, pol_etd_at, pol_atd_at, pod_eta_at, pod_original_eta_at, pod_ata_at, \
    destination_eta_at, destination_ata_at, line_tracking_last_attempted_at, \
    line_tracking_last_succeeded_at, line_tracking_stopped_at, line_tracking_stopped_reason, \
    created_at, updated_at, line_tracking_stopped_by, customer_id, pol_original_etd_at, \
    destination_original_eta_at, pod_terminal_id";

fn shipment_from_row(row: &Row<'_>) -> rusqlite::Result<Shipment> {
    read_shipment(&mut Columns::new(row))
}

fn read_shipment(c: &mut Columns<'_, '_>) -> rusqlite::Result<Shipment> {
    Ok(Shipment {
        id: ShipmentId(c.uuid()?),
        account_id: AccountId(c.uuid()?),
        tracking_request_id: TrackingRequestId(c.uuid()?),
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
        pol_etd_at: c.opt_ts()?,
        pol_atd_at: c.opt_ts()?,
        pod_eta_at: c.opt_ts()?,
        pod_original_eta_at: c.opt_ts()?,
        pod_ata_at: c.opt_ts()?,
        destination_eta_at: c.opt_ts()?,
        destination_ata_at: c.opt_ts()?,
        line_tracking_last_attempted_at: c.opt_ts()?,
        line_tracking_last_succeeded_at: c.opt_ts()?,
        line_tracking_stopped_at: c.opt_ts()?,
        line_tracking_stopped_reason: c.get()?,
        created_at: c.ts()?,
        updated_at: c.ts()?,
        line_tracking_stopped_by: c.opt_uuid()?.map(ApiKeyId),
        customer_id: c.opt_uuid()?.map(PartyId),
        pol_original_etd_at: c.opt_ts()?,
        destination_original_eta_at: c.opt_ts()?,
        pod_terminal_id: c.opt_uuid()?,
    })
}

fn json(values: &[String]) -> StoreResult<String> {
    serde_json::to_string(values).map_err(backend)
}

fn upsert_shipment(tx: &Connection, s: &Shipment) -> StoreResult<()> {
    let (ref_numbers, tags) = (json(&s.ref_numbers)?, json(&s.tags)?);
    tx.prepare_cached(&format!(
            "INSERT INTO shipments ({SHIPMENT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, \
             ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, \
             ?26, ?27, ?28, ?29, ?30, ?31, ?32)
             ON CONFLICT (id) DO UPDATE SET
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
                updated_at = excluded.updated_at"
    ))
    .and_then(|mut stmt| {
        stmt.execute(params![
            s.id.0.to_string(),
            s.account_id.0.to_string(),
            s.tracking_request_id.0.to_string(),
            s.bill_of_lading_number,
            s.normalized_number,
            ref_numbers,
            tags,
            s.shipping_line_scac,
            s.port_of_lading_locode,
            s.port_of_discharge_locode,
            s.destination_locode,
            s.pod_vessel_name,
            s.pod_vessel_imo,
            s.pod_voyage_number,
            s.pol_etd_at.map(to_ts),
            s.pol_atd_at.map(to_ts),
            s.pod_eta_at.map(to_ts),
            s.pod_original_eta_at.map(to_ts),
            s.pod_ata_at.map(to_ts),
            s.destination_eta_at.map(to_ts),
            s.destination_ata_at.map(to_ts),
            s.line_tracking_last_attempted_at.map(to_ts),
            s.line_tracking_last_succeeded_at.map(to_ts),
            s.line_tracking_stopped_at.map(to_ts),
            s.line_tracking_stopped_reason,
            to_ts(s.created_at),
            to_ts(s.updated_at),
            s.line_tracking_stopped_by.map(|id| id.0.to_string()),
            s.customer_id.map(|id| id.0.to_string()),
            s.pol_original_etd_at.map(to_ts),
            s.destination_original_eta_at.map(to_ts),
            s.pod_terminal_id.map(|id| id.to_string()),
        ])
    })
    .map_err(backend)?;
    Ok(())
}

const CONTAINER_COLUMNS: &str = "id, account_id, shipment_id, number, seal_number, \
    iso_equipment_code, equipment_type, equipment_length, equipment_height, weight_in_lbs, \
    pod_arrived_at, pod_discharged_at, pod_full_out_at, final_destination_full_out_at, \
    empty_terminated_at, availability_known, available_for_pickup, current_status, created_at, \
    updated_at, ref_numbers, pickup, inland";

fn container_from_row(row: &Row<'_>) -> rusqlite::Result<Container> {
    read_container(&mut Columns::new(row))
}

fn read_container(c: &mut Columns<'_, '_>) -> rusqlite::Result<Container> {
    Ok(Container {
        id: ContainerId(c.uuid()?),
        account_id: AccountId(c.uuid()?),
        shipment_id: ShipmentId(c.uuid()?),
        number: c.get()?,
        seal_number: c.get()?,
        iso_equipment_code: c.get()?,
        equipment_type: c.get()?,
        equipment_length: c.get()?,
        equipment_height: c.get()?,
        weight_in_lbs: c.get()?,
        pod_arrived_at: c.opt_ts()?,
        pod_discharged_at: c.opt_ts()?,
        pod_full_out_at: c.opt_ts()?,
        final_destination_full_out_at: c.opt_ts()?,
        empty_terminated_at: c.opt_ts()?,
        availability_known: c.get()?,
        available_for_pickup: c.get()?,
        current_status: {
            let status: String = c.get()?;
            ContainerStatus::parse(&status)
                .ok_or_else(|| c.invalid(format!("unknown container status {status}")))?
        },
        created_at: c.ts()?,
        updated_at: c.ts()?,
        ref_numbers: c.strings()?,
        pickup: {
            let text: String = c.get()?;
            serde_json::from_str(&text).map_err(|e| c.invalid(e.to_string()))?
        },
        inland: {
            let text: String = c.get()?;
            serde_json::from_str(&text).map_err(|e| c.invalid(e.to_string()))?
        },
    })
}

fn upsert_container(tx: &Connection, c: &Container) -> StoreResult<()> {
    let ref_numbers = json(&c.ref_numbers)?;
    let pickup = serde_json::to_string(&c.pickup).map_err(backend)?;
    let inland = serde_json::to_string(&c.inland).map_err(backend)?;
    tx.prepare_cached(&format!(
        "INSERT INTO containers ({CONTAINER_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, \
             ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)
             ON CONFLICT (id) DO UPDATE SET seal_number = excluded.seal_number,
                pod_arrived_at = excluded.pod_arrived_at,
                pod_discharged_at = excluded.pod_discharged_at,
                pod_full_out_at = excluded.pod_full_out_at,
                final_destination_full_out_at = excluded.final_destination_full_out_at,
                empty_terminated_at = excluded.empty_terminated_at,
                availability_known = excluded.availability_known,
                available_for_pickup = excluded.available_for_pickup,
                pickup = excluded.pickup, inland = excluded.inland,
                current_status = excluded.current_status, updated_at = excluded.updated_at"
    ))
    .and_then(|mut stmt| {
        stmt.execute(params![
            c.id.0.to_string(),
            c.account_id.0.to_string(),
            c.shipment_id.0.to_string(),
            c.number,
            c.seal_number,
            c.iso_equipment_code,
            c.equipment_type,
            c.equipment_length,
            c.equipment_height,
            c.weight_in_lbs,
            c.pod_arrived_at.map(to_ts),
            c.pod_discharged_at.map(to_ts),
            c.pod_full_out_at.map(to_ts),
            c.final_destination_full_out_at.map(to_ts),
            c.empty_terminated_at.map(to_ts),
            c.availability_known,
            c.available_for_pickup,
            c.current_status.as_str(),
            to_ts(c.created_at),
            to_ts(c.updated_at),
            ref_numbers,
            pickup,
            inland,
        ])
    })
    .map_err(backend)?;
    Ok(())
}

const EVENT_COLUMNS: &str = "id, account_id, shipment_id, container_id, event, timestamp, \
    voyage_number, location_locode, vessel_name, vessel_imo, terminal_id, source_id, created_at, \
    value";

fn event_from_row(row: &Row<'_>) -> rusqlite::Result<TransportEvent> {
    let mut c = Columns::new(row);
    Ok(TransportEvent {
        id: TransportEventId(c.uuid()?),
        account_id: AccountId(c.uuid()?),
        shipment_id: ShipmentId(c.uuid()?),
        container_id: ContainerId(c.uuid()?),
        event: {
            let name: String = c.get()?;
            TransportEventName::parse(&name)
                .ok_or_else(|| c.invalid(format!("unknown event {name}")))?
        },
        timestamp: c.ts()?,
        voyage_number: c.get()?,
        location_locode: c.get()?,
        vessel_name: c.get()?,
        vessel_imo: c.get()?,
        terminal_id: c.opt_uuid()?,
        source_id: c.get()?,
        created_at: c.ts()?,
        value: c.get()?,
    })
}

fn upsert_event(tx: &Connection, e: &TransportEvent) -> StoreResult<()> {
    tx.prepare_cached(&format!(
        "INSERT INTO transport_events ({EVENT_COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
             ON CONFLICT (id) DO UPDATE SET event = excluded.event,
                timestamp = excluded.timestamp, voyage_number = excluded.voyage_number,
                location_locode = excluded.location_locode, vessel_name = excluded.vessel_name,
                vessel_imo = excluded.vessel_imo, terminal_id = excluded.terminal_id"
    ))
    .and_then(|mut stmt| {
        stmt.execute(params![
            e.id.0.to_string(),
            e.account_id.0.to_string(),
            e.shipment_id.0.to_string(),
            e.container_id.0.to_string(),
            e.event.as_str(),
            to_ts(e.timestamp),
            e.voyage_number,
            e.location_locode,
            e.vessel_name,
            e.vessel_imo,
            e.terminal_id.map(|id| id.to_string()),
            e.source_id,
            to_ts(e.created_at),
            e.value,
        ])
    })
    .map_err(backend)?;
    Ok(())
}

const RAW_EVENT_COLUMNS: &str = "id, account_id, shipment_id, container_number, source_id, \
    original_event, event, timestamp, estimated, location_locode, location_name, vessel_name, \
    vessel_imo, voyage_number, terminal_id, created_at";

fn raw_event_from_row(row: &Row<'_>) -> rusqlite::Result<RawEvent> {
    let mut c = Columns::new(row);
    Ok(RawEvent {
        id: RawEventId(c.uuid()?),
        account_id: AccountId(c.uuid()?),
        shipment_id: ShipmentId(c.uuid()?),
        container_number: c.get()?,
        source_id: c.get()?,
        reported: ReportedEvent {
            original_event: c.get()?,
            event: c.get()?,
            timestamp: c.ts()?,
            estimated: c.get()?,
            location_locode: c.get()?,
            location_name: c.get()?,
            vessel_name: c.get()?,
            vessel_imo: c.get()?,
            voyage_number: c.get()?,
            terminal_id: c.opt_uuid()?,
        },
        created_at: c.ts()?,
    })
}

fn upsert_raw_event(tx: &Connection, e: &RawEvent) -> StoreResult<()> {
    let r = &e.reported;
    tx.prepare_cached(&format!(
        "INSERT INTO raw_events ({RAW_EVENT_COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
             ON CONFLICT (shipment_id, source_id) DO UPDATE SET
                container_number = excluded.container_number,
                original_event = excluded.original_event, event = excluded.event,
                timestamp = excluded.timestamp, estimated = excluded.estimated,
                location_locode = excluded.location_locode,
                location_name = excluded.location_name, vessel_name = excluded.vessel_name,
                vessel_imo = excluded.vessel_imo, voyage_number = excluded.voyage_number,
                terminal_id = excluded.terminal_id"
    ))
    .and_then(|mut stmt| {
        stmt.execute(params![
            e.id.0.to_string(),
            e.account_id.0.to_string(),
            e.shipment_id.0.to_string(),
            e.container_number,
            e.source_id,
            r.original_event,
            r.event,
            to_ts(r.timestamp),
            r.estimated,
            r.location_locode,
            r.location_name,
            r.vessel_name,
            r.vessel_imo,
            r.voyage_number,
            r.terminal_id.map(|id| id.to_string()),
            to_ts(e.created_at),
        ])
    })
    .map_err(backend)?;
    Ok(())
}

pub fn raw_events_of_shipment(
    conn: &Connection,
    shipment: ShipmentId,
) -> StoreResult<Vec<RawEvent>> {
    conn.prepare_cached(&format!(
        "SELECT {RAW_EVENT_COLUMNS} FROM raw_events WHERE shipment_id = ?1 ORDER BY timestamp, id"
    ))
    .and_then(|mut stmt| {
        stmt.query_map([shipment.0.to_string()], raw_event_from_row)
            .and_then(Iterator::collect)
    })
    .map_err(backend)
}

pub fn raw_events_of_container(
    conn: &Connection,
    account: AccountId,
    container: ContainerId,
) -> StoreResult<Vec<RawEvent>> {
    let found = conn
        .prepare_cached(
            "SELECT shipment_id, number FROM containers WHERE id = ?1 AND account_id = ?2",
        )
        .and_then(|mut stmt| {
            stmt.query_row([container.0.to_string(), account.0.to_string()], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })
            .optional()
        })
        .map_err(backend)?;
    let Some((shipment, number)) = found else {
        return Err(StoreError::NotFound);
    };
    conn.prepare_cached(&format!(
        "SELECT {RAW_EVENT_COLUMNS} FROM raw_events
         WHERE shipment_id = ?1 AND (container_number IS NULL OR container_number = ?2)
         ORDER BY timestamp, id"
    ))
    .and_then(|mut stmt| {
        stmt.query_map([shipment, number], raw_event_from_row)
            .and_then(Iterator::collect)
    })
    .map_err(backend)
}

/// Found through the keys the reads of one container use: transport events by
/// `(container_id, source_id)`, raw events by `(shipment_id, source_id)`.
pub fn event_ids_of_containers(
    conn: &Connection,
    account: AccountId,
    containers: &[ContainerId],
) -> StoreResult<HashMap<ContainerId, ContainerEventIds>> {
    let mut found: HashMap<ContainerId, ContainerEventIds> = HashMap::new();
    if containers.is_empty() {
        return Ok(found);
    }
    let ids: Vec<String> = containers.iter().map(|id| id.0.to_string()).collect();
    let ids = serde_json::to_string(&ids).map_err(backend)?;
    let pair = |row: &Row<'_>| {
        let mut c = Columns::new(row);
        Ok((ContainerId(c.uuid()?), c.uuid()?))
    };
    let transport: Vec<(ContainerId, Uuid)> = conn
        .prepare_cached(
            "SELECT container_id, id FROM transport_events
             WHERE container_id IN (SELECT value FROM json_each(?1)) AND account_id = ?2
             ORDER BY timestamp, id",
        )
        .and_then(|mut stmt| {
            stmt.query_map([&ids, &account.0.to_string()], pair)
                .and_then(Iterator::collect)
        })
        .map_err(backend)?;
    let raw: Vec<(ContainerId, Uuid)> = conn
        .prepare_cached(
            "SELECT c.id, r.id FROM containers c
             JOIN raw_events r ON r.shipment_id = c.shipment_id
              AND (r.container_number IS NULL OR r.container_number = c.number)
             WHERE c.id IN (SELECT value FROM json_each(?1)) AND c.account_id = ?2
             ORDER BY r.timestamp, r.id",
        )
        .and_then(|mut stmt| {
            stmt.query_map([&ids, &account.0.to_string()], pair)
                .and_then(Iterator::collect)
        })
        .map_err(backend)?;
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

/// Writes a tracking result: the shipment, containers, events and raw events it changed, the
/// request's new state (unless the request changed meanwhile: `Conflict`), and the domain
/// events with their notifications. The caller holds the transaction (see `group_commit`).
pub fn write_tracking_result(
    tx: &Connection,
    request: &TrackingRequest,
    read_at: DateTime<Utc>,
    update: Option<&TrackingUpdate>,
    events: &[DomainEvent],
) -> StoreResult<()> {
    if let Some(update) = update {
        upsert_shipment(tx, &update.shipment)?;
        if update.shipment_created || update.bill_of_lading_learned {
            crate::search::index(
                tx,
                update.shipment.account_id,
                &SearchEntry::shipment(&update.shipment),
            )?;
        }
        for container in &update.new_containers {
            crate::search::index(tx, container.account_id, &SearchEntry::container(container))?;
        }
        for container in update
            .new_containers
            .iter()
            .chain(&update.changed_containers)
        {
            upsert_container(tx, container)?;
        }
        for event in update.new_events.iter().chain(&update.corrected_events) {
            upsert_event(tx, event)?;
        }
        for event in &update.raw_events {
            upsert_raw_event(tx, event)?;
        }
        for value in &update.initial_custom_field_values {
            crate::custom_fields::write_value(tx, value, true)?;
        }
    }
    let updated = tx
        .prepare_cached(
            "UPDATE tracking_requests SET status = ?2, failed_reason = ?3, is_retrying = ?4,
                retry_count = ?5, shipment_id = ?6, updated_at = ?7, polled_at = ?9
             WHERE id = ?1 AND updated_at = ?8 AND (shipment_id IS NULL OR shipment_id = ?6)",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                request.id.0.to_string(),
                request.status.as_str(),
                request.failed_reason.map(FailedReason::as_str),
                request.is_retrying,
                request.retry_count,
                request.shipment_id.map(|id| id.0.to_string()),
                to_ts(request.updated_at),
                to_ts(read_at),
                request.polled_at.map(to_ts),
            ])
        })
        .map_err(backend)?;
    if updated == 0 {
        // The caller's savepoint rolls back what was written above.
        return Err(StoreError::Conflict {
            constraint: "tracking_request_changed",
        });
    }
    let mut insert_event = tx
        .prepare_cached(
            "INSERT INTO domain_events (id, account_id, event, reference_type, reference_id,
                shipment_id, container_id, created_at, payload)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .map_err(backend)?;
    for event in events {
        insert_event
            .execute(params![
                event.id.0.to_string(),
                event.account_id.0.to_string(),
                event.event,
                event.reference_type,
                event.reference_id.to_string(),
                event.shipment_id.map(|id| id.0.to_string()),
                event.container_id.map(|id| id.0.to_string()),
                to_ts(event.created_at),
                event.payload.as_ref().map(serde_json::Value::to_string),
            ])
            .map_err(backend)?;
    }
    drop(insert_event);
    let paused = update.is_some_and(|u| u.shipment.notifications_paused());
    crate::webhooks::fan_out(tx, events, paused)
}

fn domain_event_from_row(row: &Row<'_>) -> rusqlite::Result<DomainEvent> {
    let mut c = Columns::new(row);
    Ok(DomainEvent {
        id: DomainEventId(c.uuid()?),
        account_id: AccountId(c.uuid()?),
        event: c.get()?,
        reference_type: c.get()?,
        reference_id: c.uuid()?,
        shipment_id: c.opt_uuid()?.map(ShipmentId),
        container_id: c.opt_uuid()?.map(ContainerId),
        created_at: c.ts()?,
        payload: c
            .get::<Option<String>>()?
            .map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(|e| c.invalid(e.to_string()))?,
    })
}

pub fn domain_events(
    conn: &Connection,
    account: AccountId,
    after: Option<DomainEventId>,
    limit: u32,
) -> StoreResult<Vec<DomainEvent>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, account_id, event, reference_type, reference_id, shipment_id,
                    container_id, created_at, payload
             FROM domain_events WHERE account_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
        )
        .map_err(backend)?;
    let after = after.map_or_else(String::new, |id| id.0.to_string());
    stmt.query_map(
        params![account.0.to_string(), after, limit],
        domain_event_from_row,
    )
    .and_then(Iterator::collect)
    .map_err(backend)
}

pub fn shipment(conn: &Connection, account: AccountId, id: ShipmentId) -> StoreResult<Shipment> {
    conn.prepare_cached(&format!(
        "SELECT {SHIPMENT_COLUMNS} FROM shipments WHERE id = ?1 AND account_id = ?2"
    ))
    .and_then(|mut stmt| {
        stmt.query_row([id.0.to_string(), account.0.to_string()], shipment_from_row)
            .optional()
    })
    .map_err(backend)?
    .ok_or(StoreError::NotFound)
}

/// A shipment and its containers in one statement (the containers joined to the shipment
/// row), so in one read transaction: a consistent snapshot, and one lock of the database
/// instead of two for the API's most frequent read.
pub fn shipment_with_containers(
    conn: &Connection,
    account: AccountId,
    id: ShipmentId,
) -> StoreResult<(Shipment, Vec<Container>)> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {}, {} FROM shipments s
             LEFT JOIN containers c ON c.shipment_id = s.id
             WHERE s.id = ?1 AND s.account_id = ?2 ORDER BY c.number",
            prefixed(SHIPMENT_COLUMNS, "s"),
            prefixed(CONTAINER_COLUMNS, "c"),
        )
    });
    let mut stmt = conn.prepare_cached(&SQL).map_err(backend)?;
    let mut rows = stmt
        .query([id.0.to_string(), account.0.to_string()])
        .map_err(backend)?;
    let mut shipment = None;
    let mut containers = Vec::new();
    // The container columns follow the shipment's, which are read from the first row only.
    let mut container_start = 0;
    while let Some(row) = rows.next().map_err(backend)? {
        if shipment.is_none() {
            let mut columns = Columns::new(row);
            shipment = Some(read_shipment(&mut columns).map_err(backend)?);
            container_start = columns.next;
        }
        // Without containers the one row's container columns are all null.
        if row.get_ref(container_start).map_err(backend)? != ValueRef::Null {
            let mut columns = Columns {
                row,
                next: container_start,
            };
            containers.push(read_container(&mut columns).map_err(backend)?);
        }
    }
    let shipment = shipment.ok_or(StoreError::NotFound)?;
    Ok((shipment, containers))
}

pub fn shipments_by_ids(
    conn: &Connection,
    account: AccountId,
    ids: &[ShipmentId],
) -> StoreResult<Vec<Shipment>> {
    let ids: Vec<String> = ids.iter().map(|id| id.0.to_string()).collect();
    let ids = serde_json::to_string(&ids).map_err(backend)?;
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {SHIPMENT_COLUMNS} FROM shipments
             WHERE account_id = ?1 AND id IN (SELECT value FROM json_each(?2)) ORDER BY id"
        ))
        .map_err(backend)?;
    stmt.query_map(params![account.0.to_string(), ids], shipment_from_row)
        .and_then(Iterator::collect)
        .map_err(backend)
}

/// Runs a counted, paged list query over `table` (aliased `t`).
pub(crate) fn paged<T>(
    conn: &Connection,
    select: &str,
    from_where: &str,
    order: &str,
    mut values: Vec<Value>,
    page: PageRequest,
    read: fn(&Row<'_>) -> rusqlite::Result<T>,
) -> StoreResult<Paged<T>> {
    let total: i64 = conn
        .query_row(
            &format!("SELECT count(*) {from_where}"),
            params_from_iter(values.iter()),
            |row| row.get(0),
        )
        .map_err(backend)?;
    values.push(Value::Integer(i64::from(page.limit)));
    values.push(Value::Integer(
        i64::try_from(page.offset).unwrap_or(i64::MAX),
    ));
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {select} {from_where} ORDER BY {order} LIMIT ? OFFSET ?"
        ))
        .map_err(backend)?;
    let items = stmt
        .query_map(params_from_iter(values.iter()), read)
        .and_then(Iterator::collect)
        .map_err(backend)?;
    Ok(Paged {
        items,
        total: u64::try_from(total).unwrap_or(0),
    })
}

fn prefixed(columns: &str, alias: &str) -> String {
    columns
        .split(',')
        .map(|c| format!("{alias}.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn list_shipments(
    conn: &Connection,
    account: AccountId,
    filter: &ShipmentFilter,
    page: PageRequest,
) -> StoreResult<Paged<Shipment>> {
    let mut clauses = vec!["s.account_id = ?".to_owned()];
    let mut values = vec![Value::Text(account.0.to_string())];
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
        clauses.push(format!(
            "s.id IN (SELECT t.entity_id FROM search_terms t \
             WHERE t.account_id = ? AND t.kind = {shipment} AND t.term >= ? AND t.term < ? \
             UNION SELECT c.shipment_id FROM search_terms t JOIN containers c ON c.id = t.entity_id \
             WHERE t.account_id = ? AND t.kind = {container} AND t.term >= ? AND t.term < ?)",
            shipment = SearchKind::Shipment.code(),
            container = SearchKind::Container.code(),
        ));
        for _ in 0..2 {
            values.extend([
                Value::Text(account.0.to_string()),
                Value::Text(key.clone()),
                Value::Text(end.clone()),
            ]);
        }
    }
    let mut equal = |column: &str, value: &Option<String>| {
        if let Some(value) = value {
            clauses.push(format!("{column} = ?"));
            values.push(Value::Text(value.trim().to_uppercase()));
        }
    };
    equal("s.normalized_number", &filter.number);
    equal("s.port_of_lading_locode", &filter.port_of_lading);
    equal("s.port_of_discharge_locode", &filter.port_of_discharge);
    equal("s.shipping_line_scac", &filter.scac);
    match filter.tracking_stopped {
        Some(true) => clauses.push("s.line_tracking_stopped_at IS NOT NULL".to_owned()),
        Some(false) => clauses.push("s.line_tracking_stopped_at IS NULL".to_owned()),
        None => {}
    }
    if let Some(status) = filter.container_status {
        clauses.push(
            "EXISTS (SELECT 1 FROM containers c WHERE c.shipment_id = s.id AND c.current_status = ?)"
                .to_owned(),
        );
        values.push(Value::Text(status.as_str().to_owned()));
    }
    if !filter.pickup.is_empty() {
        let mut inner = Vec::new();
        pickup_clauses(&filter.pickup, &mut inner, &mut values);
        clauses.push(format!(
            "EXISTS (SELECT 1 FROM containers c WHERE c.shipment_id = s.id AND {})",
            inner.join(" AND ")
        ));
    }
    if let Some(since) = filter.updated_since {
        clauses.push("s.updated_at >= ?".to_owned());
        values.push(Value::Text(to_ts(since)));
    }
    if let Some(customer) = filter.customer {
        clauses.push("s.customer_id = ?".to_owned());
        values.push(Value::Text(customer.0.to_string()));
    }
    if let Some(tag) = &filter.tag {
        clauses.push(
            "EXISTS (SELECT 1 FROM json_each(s.tags) WHERE lower(json_each.value) = lower(?))"
                .to_owned(),
        );
        values.push(Value::Text(tag.trim().to_owned()));
    }
    if let Some((from, to)) = filter.arriving_between {
        clauses.push("s.pod_ata_at IS NULL AND s.pod_eta_at >= ? AND s.pod_eta_at <= ?".to_owned());
        values.extend([Value::Text(to_ts(from)), Value::Text(to_ts(to))]);
    }
    crate::custom_fields::filter_clauses(
        account,
        &filter.custom_fields,
        "s.id",
        &mut clauses,
        &mut values,
    );
    let order = match filter.sort {
        ShipmentSort::Newest => "s.created_at DESC, s.id DESC",
        ShipmentSort::EtaAscending => "s.pod_eta_at IS NULL, s.pod_eta_at ASC, s.id ASC",
        ShipmentSort::EtaDescending => "s.pod_eta_at IS NULL, s.pod_eta_at DESC, s.id DESC",
    };
    paged(
        conn,
        &prefixed(SHIPMENT_COLUMNS, "s"),
        &format!("FROM shipments s WHERE {}", clauses.join(" AND ")),
        order,
        values,
        page,
        shipment_from_row,
    )
}

pub fn update_shipment(conn: &Connection, shipment: &Shipment) -> StoreResult<()> {
    let updated = conn
        .prepare_cached(
            "UPDATE shipments SET ref_numbers = ?3, tags = ?4, updated_at = ?5
             WHERE id = ?1 AND account_id = ?2",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                shipment.id.0.to_string(),
                shipment.account_id.0.to_string(),
                json(&shipment.ref_numbers)
                    .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?,
                json(&shipment.tags)
                    .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?,
                to_ts(shipment.updated_at),
            ])
        })
        .map_err(backend)?;
    if updated == 0 {
        return Err(StoreError::NotFound);
    }
    crate::search::index(conn, shipment.account_id, &SearchEntry::shipment(shipment))
}

/// Saves a container's user-editable fields: its ref numbers.
pub fn update_container(conn: &Connection, container: &Container) -> StoreResult<()> {
    let ref_numbers = json(&container.ref_numbers)?;
    let updated = conn
        .prepare_cached(
            "UPDATE containers SET ref_numbers = ?3, updated_at = ?4
             WHERE id = ?1 AND account_id = ?2",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                container.id.0.to_string(),
                container.account_id.0.to_string(),
                ref_numbers,
                to_ts(container.updated_at),
            ])
        })
        .map_err(backend)?;
    if updated == 0 {
        return Err(StoreError::NotFound);
    }
    crate::search::index(
        conn,
        container.account_id,
        &SearchEntry::container(container),
    )
}

pub fn shipments_to_poll(
    conn: &Connection,
    due_before: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<Shipment>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {SHIPMENT_COLUMNS} FROM shipments
             WHERE line_tracking_stopped_at IS NULL
               AND coalesce(line_tracking_last_attempted_at, created_at) <= ?1
             ORDER BY coalesce(line_tracking_last_attempted_at, created_at), id LIMIT ?2"
        ))
        .map_err(backend)?;
    stmt.query_map(params![to_ts(due_before), limit], shipment_from_row)
        .and_then(Iterator::collect)
        .map_err(backend)
}

pub fn containers_of_shipment(
    conn: &Connection,
    shipment: ShipmentId,
) -> StoreResult<Vec<Container>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {CONTAINER_COLUMNS} FROM containers WHERE shipment_id = ?1 ORDER BY number"
        ))
        .map_err(backend)?;
    stmt.query_map([shipment.0.to_string()], container_from_row)
        .and_then(Iterator::collect)
        .map_err(backend)
}

pub fn containers_of_shipments(
    conn: &Connection,
    shipments: &[ShipmentId],
) -> StoreResult<Vec<Container>> {
    let ids: Vec<String> = shipments.iter().map(|id| id.0.to_string()).collect();
    let ids = serde_json::to_string(&ids).map_err(backend)?;
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {CONTAINER_COLUMNS} FROM containers
             WHERE shipment_id IN (SELECT value FROM json_each(?1)) ORDER BY shipment_id, number"
        ))
        .map_err(backend)?;
    stmt.query_map([ids], container_from_row)
        .and_then(Iterator::collect)
        .map_err(backend)
}

/// Found through the shipment's containers: transport events have no index of their own by
/// shipment (migration 31), which would cost every event written an insert more.
pub fn transport_events_of_shipment(
    conn: &Connection,
    shipment: ShipmentId,
) -> StoreResult<Vec<TransportEvent>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {EVENT_COLUMNS} FROM transport_events
             WHERE container_id IN (SELECT id FROM containers WHERE shipment_id = ?1)
               AND shipment_id = ?1
             ORDER BY timestamp, id"
        ))
        .map_err(backend)?;
    stmt.query_map([shipment.0.to_string()], event_from_row)
        .and_then(Iterator::collect)
        .map_err(backend)
}

pub fn transport_event(
    conn: &Connection,
    account: AccountId,
    id: TransportEventId,
) -> StoreResult<TransportEvent> {
    conn.prepare_cached(&format!(
        "SELECT {EVENT_COLUMNS} FROM transport_events WHERE id = ?1 AND account_id = ?2"
    ))
    .and_then(|mut stmt| {
        stmt.query_row([id.0.to_string(), account.0.to_string()], event_from_row)
            .optional()
    })
    .map_err(backend)?
    .ok_or(StoreError::NotFound)
}

pub fn container(conn: &Connection, account: AccountId, id: ContainerId) -> StoreResult<Container> {
    conn.prepare_cached(&format!(
        "SELECT {CONTAINER_COLUMNS} FROM containers WHERE id = ?1 AND account_id = ?2"
    ))
    .and_then(|mut stmt| {
        stmt.query_row(
            [id.0.to_string(), account.0.to_string()],
            container_from_row,
        )
        .optional()
    })
    .map_err(backend)?
    .ok_or(StoreError::NotFound)
}

pub fn list_containers(
    conn: &Connection,
    account: AccountId,
    filter: &ContainerFilter,
    page: PageRequest,
) -> StoreResult<Paged<Container>> {
    let mut clauses = vec!["c.account_id = ?".to_owned()];
    let mut values = vec![Value::Text(account.0.to_string())];
    if let Some(number) = &filter.number {
        clauses.push("c.number = ?".to_owned());
        values.push(Value::Text(number.trim().to_uppercase()));
    }
    if let Some(status) = filter.status {
        clauses.push("c.current_status = ?".to_owned());
        values.push(Value::Text(status.as_str().to_owned()));
    }
    if let Some(port) = &filter.port {
        clauses.push("(s.port_of_lading_locode = ? OR s.port_of_discharge_locode = ?)".to_owned());
        let port = port.trim().to_uppercase();
        values.extend([Value::Text(port.clone()), Value::Text(port)]);
    }
    if let Some(scac) = &filter.scac {
        clauses.push("s.shipping_line_scac = ?".to_owned());
        values.push(Value::Text(scac.trim().to_uppercase()));
    }
    if let Some(since) = filter.updated_since {
        clauses.push("c.updated_at >= ?".to_owned());
        values.push(Value::Text(to_ts(since)));
    }
    if let Some(customer) = filter.customer {
        clauses.push("s.customer_id = ?".to_owned());
        values.push(Value::Text(customer.0.to_string()));
    }
    pickup_clauses(&filter.pickup, &mut clauses, &mut values);
    crate::custom_fields::filter_clauses(
        account,
        &filter.custom_fields,
        "c.id",
        &mut clauses,
        &mut values,
    );
    paged(
        conn,
        &prefixed(CONTAINER_COLUMNS, "c"),
        &format!(
            "FROM containers c JOIN shipments s ON s.id = c.shipment_id WHERE {}",
            clauses.join(" AND ")
        ),
        "c.updated_at DESC, c.id DESC",
        values,
        page,
        container_from_row,
    )
}

pub fn transport_events_of_container(
    conn: &Connection,
    account: AccountId,
    container: ContainerId,
    filter: &TransportEventFilter,
    page: PageRequest,
) -> StoreResult<Paged<TransportEvent>> {
    let mut clauses = vec!["account_id = ?".to_owned(), "container_id = ?".to_owned()];
    let mut values = vec![
        Value::Text(account.0.to_string()),
        Value::Text(container.0.to_string()),
    ];
    if let Some(event) = filter.event {
        clauses.push("event = ?".to_owned());
        values.push(Value::Text(event.as_str().to_owned()));
    }
    if let Some(from) = filter.from {
        clauses.push("timestamp >= ?".to_owned());
        values.push(Value::Text(to_ts(from)));
    }
    if let Some(to) = filter.to {
        clauses.push("timestamp <= ?".to_owned());
        values.push(Value::Text(to_ts(to)));
    }
    paged(
        conn,
        EVENT_COLUMNS,
        &format!("FROM transport_events WHERE {}", clauses.join(" AND ")),
        "timestamp, id",
        values,
        page,
        event_from_row,
    )
}

/// Tracked shipments due under `schedule`, by priority (see
/// `tidemark_domain::carriers::priority`; the conditions mirror `PollPriority::of_shipment`).
pub fn shipments_due(
    conn: &Connection,
    scac: &str,
    schedule: &tidemark_store::PollSchedule,
    limit: u32,
) -> StoreResult<Vec<Shipment>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {SHIPMENT_COLUMNS} FROM shipments
             WHERE line_tracking_stopped_at IS NULL AND shipping_line_scac = ?7
               AND coalesce(line_tracking_last_attempted_at, created_at) <= ?1
               AND coalesce(line_tracking_last_attempted_at, created_at) <= CASE
                   WHEN pod_ata_at IS NOT NULL OR pod_eta_at <= ?2 THEN ?3
                   WHEN pol_atd_at IS NOT NULL THEN ?4
                   ELSE ?5 END
             ORDER BY
               (julianday(?8) - julianday(coalesce(line_tracking_last_attempted_at, created_at)))
               / max(julianday(?8) - julianday(CASE
                   WHEN pod_ata_at IS NOT NULL OR pod_eta_at <= ?2 THEN ?3
                   WHEN pol_atd_at IS NOT NULL THEN ?4
                   ELSE ?5 END), 0.00001) DESC,
               CASE
                   WHEN pod_ata_at IS NOT NULL OR pod_eta_at <= ?2 THEN 0
                   WHEN pol_atd_at IS NOT NULL THEN 2
                   ELSE 1 END,
               id LIMIT ?6"
        ))
        .map_err(backend)?;
    stmt.query_map(
        params![
            to_ts(schedule.latest()),
            to_ts(schedule.arriving_by),
            to_ts(schedule.near_milestone_before),
            to_ts(schedule.at_sea_before),
            to_ts(schedule.routine_before),
            limit,
            scac,
            to_ts(schedule.now)
        ],
        shipment_from_row,
    )
    .and_then(Iterator::collect)
    .map_err(backend)
}

/// The clauses of a pick-up filter on containers aliased `c`.
fn pickup_clauses(filter: &PickupFilter, clauses: &mut Vec<String>, values: &mut Vec<Value>) {
    if let Some(available) = filter.available_for_pickup {
        clauses.push("c.available_for_pickup = ?".to_owned());
        values.push(Value::Integer(i64::from(available)));
    }
    if let Some(on_hold) = filter.on_hold {
        let comparison = if on_hold { "> 0" } else { "= 0" };
        clauses.push(format!(
            "coalesce(json_array_length(c.pickup, '$.holds'), 0) {comparison}"
        ));
    }
    if let Some(day) = filter.pickup_lfd_by {
        clauses.push(
            "c.pod_full_out_at IS NULL AND json_extract(c.pickup, '$.last_free_day') <= ?"
                .to_owned(),
        );
        values.push(Value::Text(day.format("%Y-%m-%d").to_string()));
    }
}

/// See `Store::containers_awaiting_pickup`. The terminal's own last ask of each container
/// comes from `terminal_checks` (one primary-key lookup per container; none: never asked,
/// `''`), compared as stored timestamps, whose fixed-width text orders as time does, as do
/// the arrival columns. Discharged containers sort before the others
/// (`pod_discharged_at IS NULL` is 0 for them), each group by its own key. The shipment's
/// bill of lading comes from the join the selection makes anyway.
pub fn containers_awaiting_pickup(
    conn: &Connection,
    selection: &TerminalSelection<'_>,
) -> StoreResult<Vec<AwaitingPickup>> {
    let ports = selection
        .ports
        .map(serde_json::to_string)
        .transpose()
        .map_err(backend)?;
    let others = serde_json::to_string(
        &selection
            .other_terminals
            .iter()
            .map(Uuid::to_string)
            .collect::<Vec<_>>(),
    )
    .map_err(backend)?;
    // A terminal's ports as a plain condition, so that the index of tracked shipments by
    // port of discharge drives the selection (an `?1 IS NULL OR` would read every container
    // not out); the sandbox's selection, by line, has none.
    let at_ports = if ports.is_some() {
        "AND s.port_of_discharge_locode IN (SELECT value FROM json_each(?1))"
    } else {
        ""
    };
    let arriving_only = if selection.arriving_only {
        "AND c.pod_discharged_at IS NULL"
    } else {
        ""
    };
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {}, s.bill_of_lading_number
             FROM containers c JOIN shipments s ON s.id = c.shipment_id
             LEFT JOIN terminal_checks t ON t.terminal = ?8 AND t.container_id = c.id
             WHERE s.line_tracking_stopped_at IS NULL
               AND c.pod_full_out_at IS NULL AND c.empty_terminated_at IS NULL
               {at_ports}
               {arriving_only}
               AND (?2 IS NULL OR s.shipping_line_scac = ?2)
               AND (s.pod_terminal_id IS NULL
                    OR s.pod_terminal_id NOT IN (SELECT value FROM json_each(?3)))
               AND CASE WHEN c.pod_discharged_at IS NOT NULL
                     THEN CASE WHEN t.asked_at >= c.pod_discharged_at THEN t.asked_at
                               ELSE '' END < ?4
                     ELSE coalesce(c.pod_arrived_at, s.pod_ata_at, s.pod_eta_at) <= ?6
                          AND coalesce(t.asked_at, '') < ?5
                   END
             ORDER BY c.pod_discharged_at IS NULL,
                      CASE WHEN c.pod_discharged_at IS NOT NULL THEN ''
                           ELSE coalesce(c.pod_arrived_at, s.pod_ata_at, s.pod_eta_at) END,
                      CASE WHEN c.pod_discharged_at IS NULL THEN coalesce(t.asked_at, '')
                           WHEN t.asked_at >= c.pod_discharged_at THEN t.asked_at
                           ELSE '' END,
                      c.id
             LIMIT ?7",
            prefixed(CONTAINER_COLUMNS, "c")
        ))
        .map_err(backend)?;
    // Unused when there are no ports, and still bound: SQLite counts `?1` among the
    // statement's parameters whether or not its text names it.
    stmt.query_map(
        params![
            ports,
            selection.scac,
            others,
            to_ts(selection.discharged_checked_before),
            to_ts(selection.arriving_checked_before),
            to_ts(selection.arriving_by),
            selection.limit,
            selection.terminal,
        ],
        |row| {
            let mut columns = Columns::new(row);
            Ok(AwaitingPickup {
                container: read_container(&mut columns)?,
                bill_of_lading_number: columns.get()?,
            })
        },
    )
    .and_then(Iterator::collect)
    .map_err(backend)
}

/// See `Store::record_terminal_asks`: one upsert for the batch, its ids as a JSON array.
pub fn record_terminal_asks(
    conn: &Connection,
    terminal: &str,
    containers: &[ContainerId],
    at: DateTime<Utc>,
) -> StoreResult<()> {
    if containers.is_empty() {
        return Ok(());
    }
    let ids = serde_json::to_string(
        &containers
            .iter()
            .map(|id| id.0.to_string())
            .collect::<Vec<_>>(),
    )
    .map_err(backend)?;
    let tx = conn.unchecked_transaction().map_err(backend)?;
    // The `WHERE` also tells SQLite's parser the `ON CONFLICT` is the upsert's, not a join's.
    tx.prepare_cached(
        "INSERT INTO terminal_checks (terminal, container_id, asked_at)
         SELECT ?1, value, ?3 FROM json_each(?2)
         WHERE value IN (SELECT id FROM containers)
         ON CONFLICT (terminal, container_id) DO UPDATE SET asked_at = excluded.asked_at",
    )
    .and_then(|mut stmt| stmt.execute(params![terminal, ids, to_ts(at)]))
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(())
}

/// See `Store::forget_finished_terminal_asks`.
pub fn forget_finished_terminal_asks(conn: &Connection) -> StoreResult<u64> {
    let forgotten = conn
        .prepare_cached(FORGET_TERMINAL_ASKS)
        .and_then(|mut stmt| stmt.execute([]))
        .map_err(backend)?;
    Ok(u64::try_from(forgotten).unwrap_or(u64::MAX))
}

/// Every terminal's asks of containers no terminal asks about any more (out, returned
/// empty, tracking stopped, or gone): one primary-key lookup per kept row, and the rows kept
/// are those of containers still in some terminal's window.
const FORGET_TERMINAL_ASKS: &str = "DELETE FROM terminal_checks WHERE NOT EXISTS (
     SELECT 1 FROM containers c JOIN shipments s ON s.id = c.shipment_id
     WHERE c.id = terminal_checks.container_id
       AND s.line_tracking_stopped_at IS NULL
       AND c.pod_full_out_at IS NULL AND c.empty_terminated_at IS NULL)";

/// See `Store::terminal_asks`.
pub fn terminal_asks(
    conn: &Connection,
    terminal: &str,
) -> StoreResult<Vec<(ContainerId, DateTime<Utc>)>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT container_id, asked_at FROM terminal_checks WHERE terminal = ?1
             ORDER BY container_id",
        )
        .map_err(backend)?;
    stmt.query_map([terminal], |row| {
        let mut columns = Columns::new(row);
        Ok((ContainerId(columns.uuid()?), columns.ts()?))
    })
    .and_then(Iterator::collect)
    .map_err(backend)
}
