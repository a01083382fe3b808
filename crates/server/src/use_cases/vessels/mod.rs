//! Vessels: who they are (from carrier data and AIS static reports), where they are (AIS
//! positions), where they will be (future positions along the sea route), and each
//! container's route map.

pub mod ais;
pub mod future;
pub mod map;
pub mod sandbox;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use tidemark_store::{StoreError, Vessel, VesselIdentity};
use uuid::Uuid;

use crate::parts::core::Core;

/// How many stored positions a positions window or a map leg reads at most.
pub const MAX_TRACK_POINTS: u32 = 20_000;

/// The vessels named by these `(imo, name)` pairs, created when first seen, by IMO.
/// Invalid IMOs (not seven digits) are skipped.
pub async fn vessels_named(
    core: &Core,
    named: &[(String, Option<String>)],
) -> Result<BTreeMap<String, Vessel>, StoreError> {
    let mut wanted: BTreeMap<String, Option<String>> = BTreeMap::new();
    for (imo, name) in named {
        let imo = imo.trim();
        if is_imo(imo) {
            let slot = wanted.entry(imo.to_owned()).or_default();
            if slot.is_none() {
                slot.clone_from(name);
            }
        }
    }
    if wanted.is_empty() {
        return Ok(BTreeMap::new());
    }
    let imos: Vec<String> = wanted.keys().cloned().collect();
    let mut found: BTreeMap<String, Vessel> = core
        .store
        .vessels_by_imos(&imos)
        .await?
        .into_iter()
        .filter_map(|v| v.imo.clone().map(|imo| (imo, v)))
        .collect();
    // Only what is new or lacks a name is written: a read-mostly path stays a read.
    let missing: Vec<VesselIdentity> = wanted
        .iter()
        .filter(|(imo, name)| {
            found
                .get(*imo)
                .is_none_or(|v| v.name.is_none() && name.is_some())
        })
        .map(|(imo, name)| VesselIdentity {
            imo: Some(imo.clone()),
            mmsi: None,
            name: name.clone(),
            new_vessel_id: core.ids.next_id(),
        })
        .collect();
    if !missing.is_empty() {
        for vessel in core
            .store
            .record_vessel_identities(&missing, core.clock.now())
            .await?
        {
            if let Some(imo) = vessel.imo.clone() {
                found.insert(imo, vessel);
            }
        }
    }
    Ok(found)
}

/// Records the vessels a carrier update names (by IMO), so `GET /vessels/{imo}` knows
/// them and AIS static reports can tie their MMSI to them. Best effort: a failure is
/// logged, and the map learns them again when it needs them.
pub async fn learn_vessels_of(
    core: &Core,
    update: &tidemark_domain::tracking_update::TrackingUpdate,
) {
    learn_vessels_named(core, &named_by(update)).await;
}

/// The vessels (IMO number, name) a tracking update's events name.
pub fn named_by(
    update: &tidemark_domain::tracking_update::TrackingUpdate,
) -> Vec<(String, Option<String>)> {
    update
        .raw_events
        .iter()
        .filter_map(|e| {
            e.reported
                .vessel_imo
                .clone()
                .map(|imo| (imo, e.reported.vessel_name.clone()))
        })
        .chain(
            update
                .new_events
                .iter()
                .filter_map(|e| e.vessel_imo.clone().map(|imo| (imo, e.vessel_name.clone()))),
        )
        .collect()
}

/// [`learn_vessels_of`] for the vessels several updates named ([`named_by`]), at once.
pub async fn learn_vessels_named(core: &Core, named: &[(String, Option<String>)]) {
    if let Err(error) = vessels_named(core, named).await {
        tracing::warn!(error = ?error, "cannot record the vessels a carrier named");
    }
}

/// Seven digits, as IMO ship numbers are.
pub fn is_imo(text: &str) -> bool {
    text.len() == 7 && text.bytes().all(|b| b.is_ascii_digit())
}

/// A vessel by its id or IMO number (the API accepts either in one path segment).
pub async fn find_vessel(core: &Core, id_or_imo: &str) -> Result<Vessel, StoreError> {
    let key = id_or_imo.trim();
    if let Ok(id) = Uuid::parse_str(key) {
        core.store.vessel(id).await
    } else if is_imo(key) {
        core.store.vessel_by_imo(key).await
    } else {
        Err(StoreError::NotFound)
    }
}

/// A vessel and its stored track over a window, for `GET /vessels/{id}`.
pub async fn vessel_with_track(
    core: &Core,
    id_or_imo: &str,
    window: Option<(DateTime<Utc>, DateTime<Utc>)>,
) -> Result<(Vessel, Option<Vec<tidemark_store::Fix>>), StoreError> {
    let vessel = find_vessel(core, id_or_imo).await?;
    let track = match window {
        Some((from, to)) => Some(
            core.store
                .vessel_track(vessel.id, from, to, MAX_TRACK_POINTS)
                .await?,
        ),
        None => None,
    };
    Ok((vessel, track))
}

/// Deletes track points older than `retention_days`; run from the periodic housekeeping.
pub async fn purge_old_positions(core: &Core, retention_days: u32) -> Result<u64, StoreError> {
    let retention = Duration::days(i64::from(retention_days));
    core.store
        .purge_vessel_positions(core.clock.now() - retention)
        .await
}
