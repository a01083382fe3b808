//! Asking terminals about discharged containers: availability, last free day, holds, fees,
//! appointment and yard place, folded into each container's pick-up facts and announced
//! like a carrier's news (`container.transport.available`, `container.updated`).
//!
//! Each scheduler tick queues one `check_terminal` job per terminal (de-duplicated). A run
//! takes one batch of the containers that terminal should know — discharged and not out,
//! at one of its ports, not asked within [`RECHECK`] — asks, and writes what came back per
//! shipment. The sandbox terminal answers from each container's stored discharge time, for
//! the sandbox line's (`TEST`) containers only. A terminal that fails is logged and asked
//! again next tick; carrier tracking never waits for it.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use tidemark_domain::pickup::{HoldState, ObservedHold, PickupFee, PickupObservation};
use tidemark_domain::tracking_update::{self, CarrierReport, Known, Milestone};
use tidemark_domain::{Container, ContainerNumber, ShipmentId, TransportEventName};
use tidemark_store::StoreError;
use tidemark_terminals::{ContainerQuery, TerminalStatus};

use crate::app::App;
use crate::use_cases::queue::{self, JobKind};
use crate::use_cases::terminals::SANDBOX;
use crate::use_cases::tracking::engine;

/// A container is asked again this long after its terminal last answered.
pub const RECHECK: Duration = Duration::minutes(15);

/// What one run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckOutcome {
    pub asked: usize,
    pub answered: usize,
    pub shipments_updated: usize,
}

/// Queues a check of every terminal (one pending job each at most).
pub async fn sweep(app: &App) -> Result<usize, StoreError> {
    let mut queued = 0;
    for id in app.terminals.ids() {
        queue::enqueue(
            app,
            JobKind::CheckTerminal,
            serde_json::json!({"terminal": id}),
            Some(format!("check-terminal:{id}")),
            app.clock.now(),
        )
        .await?;
        queued += 1;
    }
    Ok(queued)
}

/// One batch of the terminal's containers, asked and written.
pub async fn check(app: &App, terminal: &str) -> Result<CheckOutcome, StoreError> {
    let Some(connector) = app.terminals.get(terminal).cloned() else {
        return Ok(CheckOutcome::default());
    };
    let now = app.clock.now();
    let profile = connector.profile();
    let batch = u32::try_from(profile.batch_size())
        .unwrap_or(u32::MAX)
        .max(1);
    let sandbox = terminal == SANDBOX;
    let ports: Option<Vec<String>> = (!sandbox).then(|| {
        profile
            .facilities
            .value
            .iter()
            .flatten()
            .map(|facility| facility.locode.clone())
            .collect()
    });
    let scac = sandbox.then_some(tidemark_carriers::sandbox::SCAC);
    let containers = app
        .store
        .containers_awaiting_pickup(ports.as_deref(), scac, now - RECHECK, batch)
        .await?;
    if containers.is_empty() {
        return Ok(CheckOutcome::default());
    }
    let statuses = if sandbox {
        containers
            .iter()
            .filter_map(|container| {
                let number = ContainerNumber::parse(&container.number).ok()?;
                tidemark_terminals::sandbox::status_at(&number, container.pod_discharged_at?, now)
            })
            .collect()
    } else {
        let queries: Vec<ContainerQuery> = containers
            .iter()
            .filter_map(|container| {
                let number = ContainerNumber::parse(&container.number).ok()?;
                Some(ContainerQuery::new(number, None))
            })
            .collect();
        match connector.lookup(&queries).await {
            Ok(statuses) => statuses,
            Err(error) => {
                tracing::warn!(terminal, %error, "the terminal could not be asked; next tick asks again");
                return Ok(CheckOutcome {
                    asked: queries.len(),
                    ..CheckOutcome::default()
                });
            }
        }
    };
    let mut outcome = CheckOutcome {
        asked: containers.len(),
        answered: statuses.len(),
        shipments_updated: 0,
    };
    let mut by_shipment: BTreeMap<ShipmentId, Vec<(&Container, Option<&TerminalStatus>)>> =
        BTreeMap::new();
    for container in &containers {
        let status = statuses
            .iter()
            .find(|status| status.container_number.as_str() == container.number);
        by_shipment
            .entry(container.shipment_id)
            .or_default()
            .push((container, status));
    }
    for (shipment, answers) in by_shipment {
        match write(app, shipment, &answers, now).await {
            Ok(()) => outcome.shipments_updated += 1,
            // Another write came first: this shipment is asked again next tick.
            Err(StoreError::Conflict { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    Ok(outcome)
}

/// The answers for one shipment's containers, as a report of pick-up facts and availability
/// milestones, planned and recorded like a poll's. A container the terminal did not answer
/// for is still marked as asked, so the batch moves on.
async fn write(
    app: &App,
    shipment_id: ShipmentId,
    answers: &[(&Container, Option<&TerminalStatus>)],
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let Some((first, _)) = answers.first() else {
        return Ok(());
    };
    let shipment = app.store.shipment(first.account_id, shipment_id).await?;
    let request = app
        .store
        .tracking_request(shipment.account_id, shipment.tracking_request_id)
        .await?;
    let mut report = CarrierReport::default();
    for (container, status) in answers {
        match status {
            Some(status) => {
                let (observation, milestone) = observation_of(&container.number, status);
                report.pickup.push(observation);
                // Only a change of answer is a milestone (and a webhook).
                let changed = |m: &Milestone| {
                    !container.availability_known
                        || container.available_for_pickup
                            != (m.event == TransportEventName::Available)
                };
                report.milestones.extend(milestone.filter(changed));
            }
            None => report.pickup.push(PickupObservation {
                container_number: container.number.clone(),
                observed_at: now,
                ..PickupObservation::default()
            }),
        }
    }
    let containers = app.store.containers_of_shipment(shipment.id).await?;
    let events = app.store.transport_events_of_shipment(shipment.id).await?;
    let raw_events = app.store.raw_events_of_shipment(shipment.id).await?;
    let update = tracking_update::plan(
        &request,
        Known {
            shipment: Some(&shipment),
            containers: &containers,
            events: &events,
            raw_events: &raw_events,
        },
        &report,
        app.ids.as_ref(),
        now,
    );
    engine::record(
        app,
        request.status,
        request.updated_at,
        &request,
        Some(&update),
    )
    .await
}

/// A terminal's answer as a pick-up observation (its holds and fees complete: what it no
/// longer lists is lifted or paid) and, when it says, an availability milestone.
pub fn observation_of(
    container: &str,
    status: &TerminalStatus,
) -> (PickupObservation, Option<Milestone>) {
    let observation = PickupObservation {
        container_number: container.to_owned(),
        observed_at: status.checked_at,
        last_free_day: status.last_free_day,
        lfd_source: tidemark_domain::pickup::LfdSource::Terminal,
        holds: status
            .holds
            .iter()
            .map(|hold| ObservedHold {
                name: hold.kind.as_str().to_owned(),
                state: match hold.status {
                    tidemark_terminals::status::HoldStatus::Hold => HoldState::Hold,
                    tidemark_terminals::status::HoldStatus::Pending => HoldState::Pending,
                },
                description: hold.description.clone(),
            })
            .collect(),
        complete_holds: true,
        fees: status
            .fees
            .iter()
            .map(|fee| PickupFee {
                kind: fee.kind.as_str().to_owned(),
                amount: Some(fee.amount_decimal()),
                currency_code: Some(fee.currency_code.clone()),
            })
            .collect(),
        complete_fees: true,
        appointment_at: status.appointment_at,
        location: status.location.clone(),
    };
    let milestone = status.availability.map(|available| Milestone {
        source_id: format!(
            "terminal|{container}|{available}|{}",
            status.checked_at.timestamp()
        ),
        event: if available {
            TransportEventName::Available
        } else {
            TransportEventName::NotAvailable
        },
        container_number: Some(container.to_owned()),
        at: status.checked_at,
        location_locode: None,
        vessel_name: None,
        vessel_imo: None,
        voyage_number: None,
        terminal_id: None,
    });
    (observation, milestone)
}
