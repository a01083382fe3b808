//! Each carrier's shared state (budget, Retry-After, circuit, credentials), one row per
//! SCAC held `FOR UPDATE` while a process changes it.

use async_trait::async_trait;
use tidemark_domain::Shipment;
use tidemark_domain::carriers::CarrierState;
use tidemark_store::{CarrierStore, PollSchedule, StoreResult};

use crate::PgStore;
use crate::convert::backend;

#[async_trait]
impl CarrierStore for PgStore {
    async fn change_carrier_state(
        &self,
        scac: &str,
        change: &(dyn for<'s> Fn(&'s mut CarrierState) + Send + Sync),
    ) -> StoreResult<CarrierState> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(backend)?;
        let fresh = serde_json::to_value(CarrierState::new(scac)).map_err(backend)?;
        // The row exists before it is locked, so two first callers cannot both insert.
        tx.execute(
            "INSERT INTO carrier_states (scac, state) VALUES ($1, $2)
             ON CONFLICT (scac) DO NOTHING",
            &[&scac, &fresh],
        )
        .await
        .map_err(backend)?;
        let row = tx
            .query_one(
                "SELECT state FROM carrier_states WHERE scac = $1 FOR UPDATE",
                &[&scac],
            )
            .await
            .map_err(backend)?;
        let stored: serde_json::Value = row.try_get(0).map_err(backend)?;
        let mut state: CarrierState = serde_json::from_value(stored).map_err(backend)?;
        state.scac = scac.to_owned();
        change(&mut state);
        let written = serde_json::to_value(&state).map_err(backend)?;
        tx.execute(
            "UPDATE carrier_states SET state = $2 WHERE scac = $1",
            &[&scac, &written],
        )
        .await
        .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(state)
    }

    async fn carrier_states(&self) -> StoreResult<Vec<CarrierState>> {
        let client = self.client().await?;
        let rows = client
            .query("SELECT scac, state FROM carrier_states ORDER BY scac", &[])
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|row| {
                let scac: String = row.try_get(0).map_err(backend)?;
                let stored: serde_json::Value = row.try_get(1).map_err(backend)?;
                let mut state: CarrierState = serde_json::from_value(stored).map_err(backend)?;
                state.scac = scac;
                Ok(state)
            })
            .collect()
    }

    async fn shipments_due(
        &self,
        scac: &str,
        schedule: &PollSchedule,
        limit: u32,
    ) -> StoreResult<Vec<Shipment>> {
        let client = self.client().await?;
        crate::shipments::shipments_due(&client, scac, schedule, limit).await
    }
}
