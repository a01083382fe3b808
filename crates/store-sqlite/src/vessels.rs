//! Vessels, their AIS positions and what is learned from static AIS data.

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use tidemark_domain::AccountId;
use tidemark_store::{
    AisPosition, Fix, PositionsRecorded, StoreError, StoreResult, Vessel, VesselIdentity,
    VesselStore, thin_track,
};
use uuid::Uuid;

use crate::SqliteStore;
use crate::convert::{backend, from_optional_ts, from_ts, to_ts, uuid_from};

const COLUMNS: &str = "id, imo, mmsi, name, latitude, longitude, speed_knots, course, heading, \
                       position_timestamp, created_at, updated_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<Vessel> {
    let latitude: Option<f64> = row.get(4)?;
    let longitude: Option<f64> = row.get(5)?;
    let timestamp = from_optional_ts(row, 9)?;
    let latest = match (latitude, longitude, timestamp) {
        (Some(latitude), Some(longitude), Some(timestamp)) => Some(Fix {
            timestamp,
            latitude,
            longitude,
            speed_knots: row.get(6)?,
            course: row.get(7)?,
            heading: row.get(8)?,
        }),
        _ => None,
    };
    Ok(Vessel {
        id: uuid_from(row, 0)?,
        imo: row.get(1)?,
        mmsi: row.get(2)?,
        name: row.get(3)?,
        latest,
        created_at: from_ts(row, 10)?,
        updated_at: from_ts(row, 11)?,
    })
}

fn one(conn: &Connection, condition: &str, value: &str) -> StoreResult<Option<Vessel>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM vessels WHERE {condition} = ?1"
    ))
    .and_then(|mut stmt| stmt.query_row([value], from_row).optional())
    .map_err(backend)
}

/// What the batch needs to know about a vessel.
struct Known {
    id: String,
    latest: Option<DateTime<Utc>>,
    track_at: Option<DateTime<Utc>>,
}

fn record_positions(
    conn: &mut Connection,
    positions: &[AisPosition],
    min_interval: Duration,
    now: DateTime<Utc>,
) -> StoreResult<PositionsRecorded> {
    let mut by_mmsi: HashMap<&str, Vec<&AisPosition>> = HashMap::new();
    for position in positions {
        by_mmsi.entry(&position.mmsi).or_default().push(position);
    }
    let tx = conn.transaction().map_err(backend)?;
    let mut outcome = PositionsRecorded::default();
    {
        let now_text = to_ts(now);
        let mut create = tx
            .prepare_cached(
                "INSERT INTO vessels (id, mmsi, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)
                 ON CONFLICT (mmsi) DO NOTHING",
            )
            .map_err(backend)?;
        let mut find = tx
            .prepare_cached("SELECT id, position_timestamp, track_at FROM vessels WHERE mmsi = ?1")
            .map_err(backend)?;
        let mut insert = tx
            .prepare_cached(
                "INSERT INTO vessel_positions
                   (vessel_id, timestamp, latitude, longitude, speed_knots, course, heading)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
            )
            .map_err(backend)?;
        let mut update = tx
            .prepare_cached(
                "UPDATE vessels SET latitude = ?2, longitude = ?3, speed_knots = ?4, course = ?5,
                        heading = ?6, position_timestamp = ?7, track_at = ?8, updated_at = ?9
                 WHERE id = ?1",
            )
            .map_err(backend)?;
        for (mmsi, mut reports) in by_mmsi {
            let Some(first) = reports.first() else {
                continue;
            };
            let read = |find: &mut rusqlite::CachedStatement<'_>| {
                find.query_row([mmsi], |row| {
                    Ok(Known {
                        id: row.get(0)?,
                        latest: from_optional_ts(row, 1)?,
                        track_at: from_optional_ts(row, 2)?,
                    })
                })
                .optional()
                .map_err(backend)
            };
            // Known vessels are the common case: look first, create only when missing.
            let known = match read(&mut find)? {
                Some(known) => known,
                None => {
                    outcome.new_vessels += create
                        .execute(params![first.new_vessel_id.to_string(), mmsi, now_text])
                        .map_err(backend)? as u64;
                    read(&mut find)?.ok_or(StoreError::NotFound)?
                }
            };
            reports.sort_by_key(|p| p.fix.timestamp);
            let fixes: Vec<Fix> = reports.iter().map(|p| p.fix).collect();
            let kept = thin_track(known.track_at, &fixes, min_interval);
            for fix in &kept {
                outcome.stored += insert
                    .execute(params![
                        known.id,
                        to_ts(fix.timestamp),
                        fix.latitude,
                        fix.longitude,
                        fix.speed_knots,
                        fix.course,
                        fix.heading,
                    ])
                    .map_err(backend)? as u64;
            }
            outcome.thinned += (fixes.len() - kept.len()) as u64;
            let newest = fixes
                .last()
                .filter(|fix| known.latest.is_none_or(|latest| fix.timestamp >= latest));
            let track_at = kept.last().map(|fix| fix.timestamp).or(known.track_at);
            if let Some(fix) = newest {
                update
                    .execute(params![
                        known.id,
                        fix.latitude,
                        fix.longitude,
                        fix.speed_knots,
                        fix.course,
                        fix.heading,
                        to_ts(fix.timestamp),
                        track_at.map(to_ts),
                        now_text,
                    ])
                    .map_err(backend)?;
            } else if !kept.is_empty() {
                tx.execute(
                    "UPDATE vessels SET track_at = ?2 WHERE id = ?1",
                    params![known.id, track_at.map(to_ts)],
                )
                .map_err(backend)?;
            }
        }
    }
    tx.commit().map_err(backend)?;
    Ok(outcome)
}

fn record_identity(
    conn: &Connection,
    identity: &VesselIdentity,
    now: DateTime<Utc>,
) -> StoreResult<Vessel> {
    let now_text = to_ts(now);
    let by_imo = match &identity.imo {
        Some(imo) => one(conn, "imo", imo)?,
        None => None,
    };
    let by_mmsi = match &identity.mmsi {
        Some(mmsi) => one(conn, "mmsi", mmsi)?,
        None => None,
    };
    let id = match (by_imo, by_mmsi) {
        (None, None) => {
            if identity.imo.is_none() && identity.mmsi.is_none() {
                return Err(StoreError::NotFound);
            }
            conn.execute(
                "INSERT INTO vessels (id, imo, mmsi, name, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                params![
                    identity.new_vessel_id.to_string(),
                    identity.imo,
                    identity.mmsi,
                    identity.name,
                    now_text
                ],
            )
            .map_err(backend)?;
            identity.new_vessel_id
        }
        (Some(vessel), None) | (None, Some(vessel)) => vessel.id,
        (Some(keep), Some(other)) if keep.id == other.id => keep.id,
        (Some(keep), Some(other)) => {
            // The MMSI's vessel is the IMO's vessel: its track and latest fix move over.
            let (keep_id, other_id) = (keep.id.to_string(), other.id.to_string());
            conn.execute(
                "INSERT INTO vessel_positions
                   (vessel_id, timestamp, latitude, longitude, speed_knots, course, heading)
                 SELECT ?1, timestamp, latitude, longitude, speed_knots, course, heading
                 FROM vessel_positions WHERE vessel_id = ?2 ON CONFLICT DO NOTHING",
                params![keep_id, other_id],
            )
            .map_err(backend)?;
            if other.latest.map(|f| f.timestamp) > keep.latest.map(|f| f.timestamp) {
                conn.execute(
                    "UPDATE vessels SET (latitude, longitude, speed_knots, course, heading,
                            position_timestamp, track_at) =
                       (SELECT latitude, longitude, speed_knots, course, heading,
                               position_timestamp, track_at FROM vessels WHERE id = ?2)
                     WHERE id = ?1",
                    params![keep_id, other_id],
                )
                .map_err(backend)?;
            }
            conn.execute("DELETE FROM vessels WHERE id = ?1", [other_id])
                .map_err(backend)?;
            keep.id
        }
    };
    conn.execute(
        "UPDATE vessels SET imo = coalesce(?2, imo), mmsi = coalesce(?3, mmsi),
                name = coalesce(?4, name), updated_at = ?5
         WHERE id = ?1",
        params![
            id.to_string(),
            identity.imo,
            identity.mmsi,
            identity.name,
            now_text
        ],
    )
    .map_err(backend)?;
    one(conn, "id", &id.to_string())?.ok_or(StoreError::NotFound)
}

fn fix_from_row(row: &Row<'_>) -> rusqlite::Result<Fix> {
    Ok(Fix {
        timestamp: from_ts(row, 0)?,
        latitude: row.get(1)?,
        longitude: row.get(2)?,
        speed_knots: row.get(3)?,
        course: row.get(4)?,
        heading: row.get(5)?,
    })
}

#[async_trait]
impl VesselStore for SqliteStore {
    async fn record_positions(
        &self,
        positions: &[AisPosition],
        min_interval: Duration,
        now: DateTime<Utc>,
    ) -> StoreResult<PositionsRecorded> {
        record_positions(&mut self.writer(), positions, min_interval, now)
    }

    async fn record_vessel_identities(
        &self,
        identities: &[VesselIdentity],
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<Vessel>> {
        let mut conn = self.writer();
        let tx = conn.transaction().map_err(backend)?;
        let vessels = identities
            .iter()
            .map(|identity| record_identity(&tx, identity, now))
            .collect::<StoreResult<Vec<_>>>()?;
        tx.commit().map_err(backend)?;
        Ok(vessels)
    }

    async fn vessel(&self, id: Uuid) -> StoreResult<Vessel> {
        one(&self.reader(), "id", &id.to_string())?.ok_or(StoreError::NotFound)
    }

    async fn vessel_by_imo(&self, imo: &str) -> StoreResult<Vessel> {
        one(&self.reader(), "imo", imo)?.ok_or(StoreError::NotFound)
    }

    async fn vessels_by_imos(&self, imos: &[String]) -> StoreResult<Vec<Vessel>> {
        let conn = self.reader();
        let mut found = Vec::new();
        for imo in imos {
            if let Some(vessel) = one(&conn, "imo", imo)? {
                found.push(vessel);
            }
        }
        Ok(found)
    }

    async fn vessel_track(
        &self,
        id: Uuid,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<Fix>> {
        let conn = self.reader();
        let mut stmt = conn
            .prepare_cached(
                "SELECT timestamp, latitude, longitude, speed_knots, course, heading
                 FROM vessel_positions
                 WHERE vessel_id = ?1 AND timestamp >= ?2 AND timestamp <= ?3
                 ORDER BY timestamp LIMIT ?4",
            )
            .map_err(backend)?;
        stmt.query_map(
            params![id.to_string(), to_ts(from), to_ts(to), limit],
            fix_from_row,
        )
        .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
        .map_err(backend)
    }

    async fn vessel_track_sampled(
        &self,
        id: Uuid,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        max_points: u32,
    ) -> StoreResult<Vec<Fix>> {
        let conn = self.reader();
        let (id, from, to) = (id.to_string(), to_ts(from), to_ts(to));
        // Counted on the primary key alone; then every row is stepped over but only the
        // sampled ones are decoded (window functions cost more than the decoding saved).
        let total: u64 = conn
            .prepare_cached(
                "SELECT count(*) FROM vessel_positions
                 WHERE vessel_id = ?1 AND timestamp >= ?2 AND timestamp <= ?3",
            )
            .and_then(|mut stmt| stmt.query_row(params![id, from, to], |row| row.get(0)))
            .map_err(backend)?;
        let stride = total.div_ceil(u64::from(max_points.max(1))).max(1);
        let mut stmt = conn
            .prepare_cached(
                "SELECT timestamp, latitude, longitude, speed_knots, course, heading
                 FROM vessel_positions
                 WHERE vessel_id = ?1 AND timestamp >= ?2 AND timestamp <= ?3
                 ORDER BY timestamp",
            )
            .map_err(backend)?;
        let mut rows = stmt.query(params![id, from, to]).map_err(backend)?;
        let mut sampled = Vec::with_capacity(usize::try_from(total / stride + 2).unwrap_or(0));
        let mut n = 0_u64;
        while let Some(row) = rows.next().map_err(backend)? {
            if n.is_multiple_of(stride) || n + 1 == total {
                sampled.push(fix_from_row(row).map_err(backend)?);
            }
            n += 1;
        }
        Ok(sampled)
    }

    async fn carrier_eta(
        &self,
        account: AccountId,
        imo: &str,
        locode: &str,
    ) -> StoreResult<Option<DateTime<Utc>>> {
        self.reader()
            .prepare_cached(
                "SELECT timestamp FROM raw_events
                 WHERE vessel_imo = ?1 AND location_locode = ?2 AND account_id = ?3
                   AND estimated AND (event IN ('vessel_arrived', 'transshipment_arrived',
                                                'feeder_arrived')
                                      OR upper(original_event) LIKE '%ARRI%')
                 ORDER BY created_at DESC, timestamp DESC LIMIT 1",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![imo, locode, account.0.to_string()], |row| {
                    from_ts(row, 0)
                })
                .optional()
            })
            .map_err(backend)
    }

    async fn tracked_numbers(
        &self,
        scac: &str,
        limit: u32,
    ) -> StoreResult<Vec<(String, DateTime<Utc>)>> {
        let conn = self.reader();
        let mut stmt = conn
            .prepare_cached(
                "SELECT DISTINCT t.request_number, t.created_at
                 FROM shipments s JOIN tracking_requests t ON t.id = s.tracking_request_id
                 WHERE s.shipping_line_scac = ?1 AND s.line_tracking_stopped_at IS NULL
                 ORDER BY t.created_at DESC, t.request_number LIMIT ?2",
            )
            .map_err(backend)?;
        stmt.query_map(params![scac, limit], |row| {
            Ok((row.get(0)?, from_ts(row, 1)?))
        })
        .and_then(Iterator::collect::<rusqlite::Result<Vec<_>>>)
        .map_err(backend)
    }

    async fn purge_vessel_positions(&self, before: DateTime<Utc>) -> StoreResult<u64> {
        self.writer()
            .execute(
                "DELETE FROM vessel_positions WHERE timestamp < ?1",
                [to_ts(before)],
            )
            .map(|n| n as u64)
            .map_err(backend)
    }
}
