//! Vessels, their AIS positions and what is learned from static AIS data.
//!
//! A batch of positions is four statements whatever its size: create unknown MMSIs, lock
//! and read their vessels, insert the kept track points, update the latest fixes (arrays
//! through `unnest`).

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use deadpool_postgres::GenericClient;
use tidemark_domain::AccountId;
use tidemark_store::{
    AisPosition, Fix, PositionsRecorded, StoreError, StoreResult, Vessel, VesselIdentity,
    VesselStore, thin_track,
};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::PgStore;
use crate::convert::{backend, query_all};

const COLUMNS: &str = "id, imo, mmsi, name, latitude, longitude, speed_knots, course, heading, \
                       position_timestamp, created_at, updated_at";

fn from_row(row: &Row) -> StoreResult<Vessel> {
    let latitude: Option<f64> = row.try_get(4).map_err(backend)?;
    let longitude: Option<f64> = row.try_get(5).map_err(backend)?;
    let timestamp: Option<DateTime<Utc>> = row.try_get(9).map_err(backend)?;
    let latest = match (latitude, longitude, timestamp) {
        (Some(latitude), Some(longitude), Some(timestamp)) => Some(Fix {
            timestamp,
            latitude,
            longitude,
            speed_knots: row.try_get(6).map_err(backend)?,
            course: row.try_get(7).map_err(backend)?,
            heading: row.try_get(8).map_err(backend)?,
        }),
        _ => None,
    };
    Ok(Vessel {
        id: row.try_get(0).map_err(backend)?,
        imo: row.try_get(1).map_err(backend)?,
        mmsi: row.try_get(2).map_err(backend)?,
        name: row.try_get(3).map_err(backend)?,
        latest,
        created_at: row.try_get(10).map_err(backend)?,
        updated_at: row.try_get(11).map_err(backend)?,
    })
}

fn fix_from_row(row: &Row) -> StoreResult<Fix> {
    Ok(Fix {
        timestamp: row.try_get(0).map_err(backend)?,
        latitude: row.try_get(1).map_err(backend)?,
        longitude: row.try_get(2).map_err(backend)?,
        speed_knots: row.try_get(3).map_err(backend)?,
        course: row.try_get(4).map_err(backend)?,
        heading: row.try_get(5).map_err(backend)?,
    })
}

async fn by_uuid(client: &impl GenericClient, id: Uuid) -> StoreResult<Option<Vessel>> {
    Ok(query_all(
        client,
        &format!("SELECT {COLUMNS} FROM vessels WHERE id = $1"),
        &[&id],
        from_row,
    )
    .await?
    .pop())
}

async fn by_text(
    client: &impl GenericClient,
    column: &str,
    value: &str,
) -> StoreResult<Option<Vessel>> {
    Ok(query_all(
        client,
        &format!("SELECT {COLUMNS} FROM vessels WHERE {column} = $1 FOR UPDATE"),
        &[&value],
        from_row,
    )
    .await?
    .pop())
}

async fn record_identity(
    client: &impl GenericClient,
    identity: &VesselIdentity,
    now: DateTime<Utc>,
) -> StoreResult<Vessel> {
    let by_imo = match &identity.imo {
        Some(imo) => by_text(client, "imo", imo).await?,
        None => None,
    };
    let by_mmsi = match &identity.mmsi {
        Some(mmsi) => by_text(client, "mmsi", mmsi).await?,
        None => None,
    };
    let id = match (by_imo, by_mmsi) {
        (None, None) => {
            if identity.imo.is_none() && identity.mmsi.is_none() {
                return Err(StoreError::NotFound);
            }
            // A concurrent writer may have created it: then this is a no-op and the
            // update below names it.
            client
                .execute(
                    "INSERT INTO vessels (id, imo, mmsi, name, created_at, updated_at)
                     VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT DO NOTHING",
                    &[
                        &identity.new_vessel_id,
                        &identity.imo,
                        &identity.mmsi,
                        &identity.name,
                        &now,
                    ],
                )
                .await
                .map_err(backend)?;
            let found = match (&identity.imo, &identity.mmsi) {
                (Some(imo), _) => by_text(client, "imo", imo).await?,
                (None, Some(mmsi)) => by_text(client, "mmsi", mmsi).await?,
                (None, None) => None,
            };
            found.map_or(identity.new_vessel_id, |v| v.id)
        }
        (Some(vessel), None) | (None, Some(vessel)) => vessel.id,
        (Some(keep), Some(other)) if keep.id == other.id => keep.id,
        (Some(keep), Some(other)) => {
            // The MMSI's vessel is the IMO's vessel: its track and latest fix move over.
            client
                .execute(
                    "INSERT INTO vessel_positions
                       (vessel_id, timestamp, latitude, longitude, speed_knots, course, heading)
                     SELECT $1, timestamp, latitude, longitude, speed_knots, course, heading
                     FROM vessel_positions WHERE vessel_id = $2 ON CONFLICT DO NOTHING",
                    &[&keep.id, &other.id],
                )
                .await
                .map_err(backend)?;
            if other.latest.map(|f| f.timestamp) > keep.latest.map(|f| f.timestamp) {
                client
                    .execute(
                        "UPDATE vessels AS k SET latitude = o.latitude, longitude = o.longitude,
                                speed_knots = o.speed_knots, course = o.course,
                                heading = o.heading, position_timestamp = o.position_timestamp,
                                track_at = o.track_at
                         FROM vessels AS o WHERE k.id = $1 AND o.id = $2",
                        &[&keep.id, &other.id],
                    )
                    .await
                    .map_err(backend)?;
            }
            client
                .execute("DELETE FROM vessels WHERE id = $1", &[&other.id])
                .await
                .map_err(backend)?;
            keep.id
        }
    };
    client
        .execute(
            "UPDATE vessels SET imo = coalesce($2, imo), mmsi = coalesce($3, mmsi),
                    name = coalesce($4, name), updated_at = $5
             WHERE id = $1",
            &[&id, &identity.imo, &identity.mmsi, &identity.name, &now],
        )
        .await
        .map_err(backend)?;
    by_uuid(client, id).await?.ok_or(StoreError::NotFound)
}

#[async_trait]
impl VesselStore for PgStore {
    async fn record_positions(
        &self,
        positions: &[AisPosition],
        min_interval: Duration,
        now: DateTime<Utc>,
    ) -> StoreResult<PositionsRecorded> {
        let mut by_mmsi: HashMap<&str, Vec<&AisPosition>> = HashMap::new();
        for position in positions {
            by_mmsi.entry(&position.mmsi).or_default().push(position);
        }
        // Sorted so that concurrent batches lock vessels in one order.
        let mut mmsis: Vec<String> = by_mmsi.keys().map(|m| (*m).to_owned()).collect();
        mmsis.sort();
        let new_ids: Vec<Uuid> = mmsis
            .iter()
            .map(|m| {
                by_mmsi
                    .get(m.as_str())
                    .and_then(|v| v.first())
                    .map_or_else(Uuid::nil, |p| p.new_vessel_id)
            })
            .collect();

        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let new_vessels = tx
            .execute(
                "INSERT INTO vessels (id, mmsi, created_at, updated_at)
                 SELECT id, mmsi, $3, $3 FROM unnest($1::uuid[], $2::text[]) AS u (id, mmsi)
                 ORDER BY mmsi
                 ON CONFLICT (mmsi) DO NOTHING",
                &[&new_ids, &mmsis, &now],
            )
            .await
            .map_err(backend)?;
        let rows = tx
            .query(
                "SELECT id, mmsi, position_timestamp, track_at FROM vessels
                 WHERE mmsi = ANY($1) ORDER BY mmsi FOR UPDATE",
                &[&mmsis],
            )
            .await
            .map_err(backend)?;

        let mut outcome = PositionsRecorded {
            new_vessels,
            ..PositionsRecorded::default()
        };
        let mut track = TrackColumns::default();
        let mut latest = LatestColumns::default();
        for row in &rows {
            let id: Uuid = row.try_get(0).map_err(backend)?;
            let mmsi: String = row.try_get(1).map_err(backend)?;
            let known_latest: Option<DateTime<Utc>> = row.try_get(2).map_err(backend)?;
            let track_at: Option<DateTime<Utc>> = row.try_get(3).map_err(backend)?;
            let Some(reports) = by_mmsi.get(mmsi.as_str()) else {
                continue;
            };
            let mut fixes: Vec<Fix> = reports.iter().map(|p| p.fix).collect();
            fixes.sort_by_key(|f| f.timestamp);
            let kept = thin_track(track_at, &fixes, min_interval);
            outcome.thinned += (fixes.len() - kept.len()) as u64;
            for fix in &kept {
                track.push(id, fix);
            }
            let new_track_at = kept.last().map(|f| f.timestamp).or(track_at);
            let newest = fixes
                .last()
                .filter(|f| known_latest.is_none_or(|t| f.timestamp >= t))
                .copied();
            if newest.is_some() || !kept.is_empty() {
                latest.push(id, newest, new_track_at);
            }
        }
        outcome.stored = tx
            .execute(
                "INSERT INTO vessel_positions
                   (vessel_id, timestamp, latitude, longitude, speed_knots, course, heading)
                 SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::float8[], $4::float8[],
                                      $5::float8[], $6::float8[], $7::float8[])
                 ON CONFLICT DO NOTHING",
                &[
                    &track.vessel,
                    &track.timestamp,
                    &track.latitude,
                    &track.longitude,
                    &track.speed,
                    &track.course,
                    &track.heading,
                ],
            )
            .await
            .map_err(backend)?;
        tx.execute(
            "UPDATE vessels AS v SET
                latitude = coalesce(u.latitude, v.latitude),
                longitude = coalesce(u.longitude, v.longitude),
                speed_knots = CASE WHEN u.fresh THEN u.speed ELSE v.speed_knots END,
                course = CASE WHEN u.fresh THEN u.course ELSE v.course END,
                heading = CASE WHEN u.fresh THEN u.heading ELSE v.heading END,
                position_timestamp = coalesce(u.timestamp, v.position_timestamp),
                track_at = u.track_at,
                updated_at = CASE WHEN u.fresh THEN $10 ELSE v.updated_at END
             FROM unnest($1::uuid[], $2::bool[], $3::float8[], $4::float8[], $5::float8[],
                         $6::float8[], $7::float8[], $8::timestamptz[], $9::timestamptz[])
                  AS u (id, fresh, latitude, longitude, speed, course, heading, timestamp,
                        track_at)
             WHERE v.id = u.id",
            &[
                &latest.vessel,
                &latest.fresh,
                &latest.latitude,
                &latest.longitude,
                &latest.speed,
                &latest.course,
                &latest.heading,
                &latest.timestamp,
                &latest.track_at,
                &now,
            ],
        )
        .await
        .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(outcome)
    }

    async fn record_vessel_identities(
        &self,
        identities: &[VesselIdentity],
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<Vessel>> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let mut vessels = Vec::with_capacity(identities.len());
        for identity in identities {
            vessels.push(record_identity(&tx, identity, now).await?);
        }
        tx.commit().await.map_err(backend)?;
        Ok(vessels)
    }

    async fn vessel(&self, id: Uuid) -> StoreResult<Vessel> {
        by_uuid(&self.client().await?, id)
            .await?
            .ok_or(StoreError::NotFound)
    }

    async fn vessel_by_imo(&self, imo: &str) -> StoreResult<Vessel> {
        query_all(
            &self.client().await?,
            &format!("SELECT {COLUMNS} FROM vessels WHERE imo = $1"),
            &[&imo],
            from_row,
        )
        .await?
        .pop()
        .ok_or(StoreError::NotFound)
    }

    async fn vessels_by_imos(&self, imos: &[String]) -> StoreResult<Vec<Vessel>> {
        query_all(
            &self.client().await?,
            &format!("SELECT {COLUMNS} FROM vessels WHERE imo = ANY($1)"),
            &[&imos],
            from_row,
        )
        .await
    }

    async fn vessel_track(
        &self,
        id: Uuid,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<Fix>> {
        query_all(
            &self.client().await?,
            "SELECT timestamp, latitude, longitude, speed_knots, course, heading
             FROM vessel_positions
             WHERE vessel_id = $1 AND timestamp >= $2 AND timestamp <= $3
             ORDER BY timestamp LIMIT $4",
            &[&id, &from, &to, &i64::from(limit)],
            fix_from_row,
        )
        .await
    }

    async fn vessel_track_sampled(
        &self,
        id: Uuid,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        max_points: u32,
    ) -> StoreResult<Vec<Fix>> {
        // Sampled here: measured, a window function or a DISTINCT ON over time slices
        // costs the server more than sending the rows.
        let rows = self
            .client()
            .await?
            .query(
                "SELECT timestamp, latitude, longitude, speed_knots, course, heading
                 FROM vessel_positions
                 WHERE vessel_id = $1 AND timestamp >= $2 AND timestamp <= $3
                 ORDER BY timestamp",
                &[&id, &from, &to],
            )
            .await
            .map_err(backend)?;
        let total = rows.len();
        let stride = total.div_ceil(max_points.max(1) as usize).max(1);
        rows.iter()
            .enumerate()
            .filter(|(n, _)| n.is_multiple_of(stride) || n + 1 == total)
            .map(|(_, row)| fix_from_row(row))
            .collect()
    }

    async fn carrier_eta(
        &self,
        account: AccountId,
        imo: &str,
        locode: &str,
    ) -> StoreResult<Option<DateTime<Utc>>> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT timestamp FROM raw_events
                 WHERE vessel_imo = $1 AND location_locode = $2 AND account_id = $3
                   AND estimated AND (event IN ('vessel_arrived', 'transshipment_arrived',
                                                'feeder_arrived')
                                      OR upper(original_event) LIKE '%ARRI%')
                 ORDER BY created_at DESC, timestamp DESC LIMIT 1",
                &[&imo, &locode, &account.0],
            )
            .await
            .map_err(backend)?;
        rows.first()
            .map(|row| row.try_get(0).map_err(backend))
            .transpose()
    }

    async fn tracked_numbers(
        &self,
        scac: &str,
        limit: u32,
    ) -> StoreResult<Vec<(String, DateTime<Utc>)>> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT DISTINCT t.request_number, t.created_at
                 FROM shipments s JOIN tracking_requests t ON t.id = s.tracking_request_id
                 WHERE s.shipping_line_scac = $1 AND s.line_tracking_stopped_at IS NULL
                 ORDER BY t.created_at DESC, t.request_number LIMIT $2",
                &[&scac, &i64::from(limit)],
            )
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|row| {
                Ok((
                    row.try_get(0).map_err(backend)?,
                    row.try_get(1).map_err(backend)?,
                ))
            })
            .collect()
    }

    async fn purge_vessel_positions(&self, before: DateTime<Utc>) -> StoreResult<u64> {
        self.client()
            .await?
            .execute(
                "DELETE FROM vessel_positions WHERE timestamp < $1",
                &[&before],
            )
            .await
            .map_err(backend)
    }
}

#[derive(Default)]
struct TrackColumns {
    vessel: Vec<Uuid>,
    timestamp: Vec<DateTime<Utc>>,
    latitude: Vec<f64>,
    longitude: Vec<f64>,
    speed: Vec<Option<f64>>,
    course: Vec<Option<f64>>,
    heading: Vec<Option<f64>>,
}

impl TrackColumns {
    fn push(&mut self, vessel: Uuid, fix: &Fix) {
        self.vessel.push(vessel);
        self.timestamp.push(fix.timestamp);
        self.latitude.push(fix.latitude);
        self.longitude.push(fix.longitude);
        self.speed.push(fix.speed_knots);
        self.course.push(fix.course);
        self.heading.push(fix.heading);
    }
}

#[derive(Default)]
struct LatestColumns {
    vessel: Vec<Uuid>,
    fresh: Vec<bool>,
    latitude: Vec<Option<f64>>,
    longitude: Vec<Option<f64>>,
    speed: Vec<Option<f64>>,
    course: Vec<Option<f64>>,
    heading: Vec<Option<f64>>,
    timestamp: Vec<Option<DateTime<Utc>>>,
    track_at: Vec<Option<DateTime<Utc>>>,
}

impl LatestColumns {
    fn push(&mut self, vessel: Uuid, newest: Option<Fix>, track_at: Option<DateTime<Utc>>) {
        self.vessel.push(vessel);
        self.fresh.push(newest.is_some());
        self.latitude.push(newest.map(|f| f.latitude));
        self.longitude.push(newest.map(|f| f.longitude));
        self.speed.push(newest.and_then(|f| f.speed_knots));
        self.course.push(newest.and_then(|f| f.course));
        self.heading.push(newest.and_then(|f| f.heading));
        self.timestamp.push(newest.map(|f| f.timestamp));
        self.track_at.push(track_at);
    }
}
