//! What every process shares about each carrier (its budget, `Retry-After`, circuit and
//! credentials, [`CarrierState`]), and the tracked shipments due for a poll by priority.
//!
//! The state of a carrier is one row, changed only by [`CarrierStore::change_carrier_state`]
//! while the row is held, so the budget is spent once across all worker processes.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tidemark_domain::Shipment;
use tidemark_domain::carriers::CarrierState;

use crate::StoreResult;

/// When each priority of tracked shipment is due (`tidemark_domain::carriers::priority`):
/// a shipment is due when its last attempt (else its creation) is at or before its
/// priority's bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PollSchedule {
    pub now: DateTime<Utc>,
    /// A shipment whose ETA is at or before this (or that has arrived) is near its
    /// milestone.
    pub arriving_by: DateTime<Utc>,
    pub near_milestone_before: DateTime<Utc>,
    pub routine_before: DateTime<Utc>,
    pub at_sea_before: DateTime<Utc>,
}

impl PollSchedule {
    /// The latest of the bounds: nothing last polled after it is due.
    pub fn latest(&self) -> DateTime<Utc> {
        self.near_milestone_before
            .max(self.routine_before)
            .max(self.at_sea_before)
    }
}

#[async_trait]
pub trait CarrierStore: Send + Sync {
    /// Reads the carrier's state (a fresh one the first time), lets `change` alter it and
    /// writes it back, holding the row meanwhile: concurrent callers, in any process, take
    /// turns. Returns the state as written. `change` may run more than once if the
    /// database asks for a retry, so it must only change the state it is given.
    async fn change_carrier_state(
        &self,
        scac: &str,
        change: &(dyn for<'s> Fn(&'s mut CarrierState) + Send + Sync),
    ) -> StoreResult<CarrierState>;

    /// Every carrier's state that was ever written, by SCAC.
    async fn carrier_states(&self) -> StoreResult<Vec<CarrierState>>;

    /// Up to `limit` tracked shipments of carrier `scac` due for a poll under `schedule`,
    /// across accounts, the most overdue for its own interval first (waiting time divided
    /// by its priority's interval), the more urgent priority first among equals: a shipment
    /// near a milestone is polled as often as its short interval asks, and one at sea is
    /// still polled, later, when a budget is short, rather than starved.
    async fn shipments_due(
        &self,
        scac: &str,
        schedule: &PollSchedule,
        limit: u32,
    ) -> StoreResult<Vec<Shipment>>;
}
