//! Vessels, their AIS positions and what is learned from static AIS data.
//!
//! A vessel is known by its IMO number (from carrier data and AIS static reports), by its
//! MMSI (from AIS), or both once a static report ties them together. Positions are stored
//! thinned: at most one per vessel per `min_interval`, so a chatty feed cannot grow the
//! table faster than the retention purge shrinks it. The latest fix is kept on the vessel
//! row unthinned.

use async_trait::async_trait;
use chrono::{DateTime, Duration, Utc};
use tidemark_domain::AccountId;
use uuid::Uuid;

use crate::StoreResult;

/// A vessel and its latest known position.
#[derive(Clone, Debug, PartialEq)]
pub struct Vessel {
    pub id: Uuid,
    /// Seven digits.
    pub imo: Option<String>,
    /// Nine digits.
    pub mmsi: Option<String>,
    pub name: Option<String>,
    /// The latest fix, whether or not it was stored in the track.
    pub latest: Option<Fix>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One position report of a vessel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fix {
    pub timestamp: DateTime<Utc>,
    /// Degrees.
    pub latitude: f64,
    /// Degrees.
    pub longitude: f64,
    /// Speed over ground, knots.
    pub speed_knots: Option<f64>,
    /// Course over ground, degrees.
    pub course: Option<f64>,
    /// True heading, degrees.
    pub heading: Option<f64>,
}

/// A position as received from AIS, keyed by MMSI.
#[derive(Clone, Debug, PartialEq)]
pub struct AisPosition {
    pub mmsi: String,
    pub fix: Fix,
    /// The id the vessel gets if this MMSI is new (callers mint one per report; unused
    /// ones cost nothing).
    pub new_vessel_id: Uuid,
}

/// Who a vessel is: from a static AIS report (MMSI with IMO and name) or from carrier
/// data (IMO and name). At least one of `imo` and `mmsi` must be set.
#[derive(Clone, Debug, PartialEq)]
pub struct VesselIdentity {
    pub imo: Option<String>,
    pub mmsi: Option<String>,
    pub name: Option<String>,
    /// The id the vessel gets if it is new.
    pub new_vessel_id: Uuid,
}

/// What a batch of positions did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PositionsRecorded {
    /// Rows added to the tracks.
    pub stored: u64,
    /// Reports that only refreshed the latest fix, or were older than it and too close to
    /// the stored track (thinned away).
    pub thinned: u64,
    /// Vessels first seen in this batch.
    pub new_vessels: u64,
}

/// Vessels, their AIS positions and what is learned from static AIS data.
#[async_trait]
pub trait VesselStore: Send + Sync {
    /// Writes a batch of positions in one transaction: vessels unknown by MMSI are
    /// created, each vessel's latest fix moves to its newest report, and a report joins
    /// the stored track only when it is at least `min_interval` after the last stored one.
    async fn record_positions(
        &self,
        positions: &[AisPosition],
        min_interval: Duration,
        now: DateTime<Utc>,
    ) -> StoreResult<PositionsRecorded>;

    /// Records who vessels are, in one transaction, and returns each vessel as it now
    /// stands (in input order). A report naming an IMO and an MMSI known as two vessels
    /// merges them into the IMO's vessel (its id stays; the MMSI's track moves to it).
    async fn record_vessel_identities(
        &self,
        identities: &[VesselIdentity],
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<Vessel>>;

    /// `NotFound` when unknown.
    async fn vessel(&self, id: Uuid) -> StoreResult<Vessel>;

    /// `NotFound` when unknown.
    async fn vessel_by_imo(&self, imo: &str) -> StoreResult<Vessel>;

    /// The vessels known by these IMO numbers (unknown ones are left out).
    async fn vessels_by_imos(&self, imos: &[String]) -> StoreResult<Vec<Vessel>>;

    /// The stored track between `from` and `to` (inclusive), oldest first, at most
    /// `limit` points (the oldest ones).
    async fn vessel_track(
        &self,
        id: Uuid,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<Fix>>;

    /// The stored track between `from` and `to`, oldest first, evenly sampled down to
    /// about `max_points` (the first and last points always kept) when it has more: what
    /// a map draws, read without decoding every stored point.
    async fn vessel_track_sampled(
        &self,
        id: Uuid,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        max_points: u32,
    ) -> StoreResult<Vec<Fix>>;

    /// The carrier's latest estimated arrival of the vessel with this IMO at `locode`
    /// (the last recorded estimated arrival among the account's raw carrier events).
    async fn carrier_eta(
        &self,
        account: AccountId,
        imo: &str,
        locode: &str,
    ) -> StoreResult<Option<DateTime<Utc>>>;

    /// The request numbers of shipments still tracked at this carrier, with when their
    /// tracking request was made (distinct pairs, across accounts, at most `limit`): the
    /// sandbox carrier's vessels report positions for these voyages.
    async fn tracked_numbers(
        &self,
        scac: &str,
        limit: u32,
    ) -> StoreResult<Vec<(String, DateTime<Utc>)>>;

    /// Deletes stored track points older than `before`; returns how many.
    async fn purge_vessel_positions(&self, before: DateTime<Utc>) -> StoreResult<u64>;
}

/// Which of a vessel's reports join its stored track, given the time of the last stored
/// point: each kept report is at least `min_interval` after the one before. `fixes` must
/// be in time order. Shared by the backends so they thin alike.
#[must_use]
pub fn thin_track(
    last_stored: Option<DateTime<Utc>>,
    fixes: &[Fix],
    min_interval: Duration,
) -> Vec<Fix> {
    let mut kept = Vec::new();
    let mut last = last_stored;
    for fix in fixes {
        if last.is_none_or(|t| fix.timestamp >= t + min_interval) {
            kept.push(*fix);
            last = Some(fix.timestamp);
        }
    }
    kept
}
