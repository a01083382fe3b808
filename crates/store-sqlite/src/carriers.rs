//! Each carrier's shared state (budget, Retry-After, circuit, credentials), one row per
//! SCAC changed in one write transaction.

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};
use tidemark_domain::Shipment;
use tidemark_domain::carriers::CarrierState;
use tidemark_store::{CarrierStore, PollSchedule, StoreResult};

use crate::SqliteStore;
use crate::convert::backend;

fn decode(scac: String, stored: &str) -> StoreResult<CarrierState> {
    let mut state: CarrierState = serde_json::from_str(stored).map_err(backend)?;
    state.scac = scac;
    Ok(state)
}

#[async_trait]
impl CarrierStore for SqliteStore {
    async fn change_carrier_state(
        &self,
        scac: &str,
        change: &(dyn for<'s> Fn(&'s mut CarrierState) + Send + Sync),
    ) -> StoreResult<CarrierState> {
        let mut conn = self.writer();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(backend)?;
        let stored: Option<String> = tx
            .query_row(
                "SELECT state FROM carrier_states WHERE scac = ?1",
                [scac],
                |row| row.get(0),
            )
            .optional()
            .map_err(backend)?;
        let mut state = match stored {
            Some(stored) => decode(scac.to_owned(), &stored)?,
            None => CarrierState::new(scac),
        };
        change(&mut state);
        let written = serde_json::to_string(&state).map_err(backend)?;
        tx.execute(
            "INSERT INTO carrier_states (scac, state) VALUES (?1, ?2)
             ON CONFLICT (scac) DO UPDATE SET state = excluded.state",
            params![scac, written],
        )
        .map_err(backend)?;
        tx.commit().map_err(backend)?;
        Ok(state)
    }

    async fn carrier_states(&self) -> StoreResult<Vec<CarrierState>> {
        let conn = self.reader();
        let mut stmt = conn
            .prepare_cached("SELECT scac, state FROM carrier_states ORDER BY scac")
            .map_err(backend)?;
        let rows = stmt
            .query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })
            .and_then(Iterator::collect::<Result<Vec<_>, _>>)
            .map_err(backend)?;
        rows.into_iter()
            .map(|(scac, stored)| decode(scac, &stored))
            .collect()
    }

    async fn shipments_due(
        &self,
        scac: &str,
        schedule: &PollSchedule,
        limit: u32,
    ) -> StoreResult<Vec<Shipment>> {
        crate::shipments::shipments_due(&self.reader(), scac, schedule, limit)
    }
}
