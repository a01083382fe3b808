//! Asking terminals about containers on their way to pick-up: availability, last free day,
//! holds, fees, appointment and yard place, folded into each container's pick-up facts and
//! announced like a carrier's news (`container.transport.available`, `container.updated`).
//!
//! Each scheduler tick queues one `check_terminal` job per terminal (de-duplicated). A run
//! takes batches (the profile's batch size) of the containers that terminal should know,
//! as many as are due up to [`batches_per_run`],
//! asks, and writes what came back per shipment. A container is asked from [`LOOK_AHEAD`]
//! before its vessel's arrival at the port of discharge until it is out (gone full out or
//! returned empty):
//! - not yet discharged, once its POD arrival (the vessel's arrival, else the shipment's
//!   ATA, else its ETA) is within [`LOOK_AHEAD`]: every [`RECHECK_BEFORE_DISCHARGE`];
//! - discharged: at once (an ask made before the discharge does not count: what the terminal
//!   knows changes then), then every [`RECHECK`].
//!
//! Each interval runs from the terminal's own last ask about the container (kept per
//! terminal and container by the store), so two terminals serving one port (eModal and the
//! terminal's own API) each keep their own pace: one's ask never holds the other off.
//!
//! Discharged containers fill a batch first (longest unasked by this terminal first), then
//! the nearest arrivals; but one batch in [`ARRIVALS_EVERY`] asks the arrivals first, so that
//! a yard busy enough to fill every batch does not keep the boxes still at sea from ever
//! being asked (a customs hold is often placed before the vessel berths). A terminal asks about the containers at its facilities' ports;
//! when the carrier named the POD terminal and a configured terminal's facilities include
//! it ([`reach`](super::reach)), only that terminal asks. The sandbox terminal asks about
//! the sandbox line's (`TEST`) containers wherever they go and answers from each
//! container's stored discharge time (nothing known yet before discharge). A terminal that
//! fails is logged and asked again next tick; carrier tracking never waits for it.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use tidemark_domain::carriers::{Acquire, CarrierState};
use tidemark_domain::pickup::{HoldState, ObservedHold, PickupFee, PickupObservation};
use tidemark_domain::tracking_update::{self, CarrierReport, Known, Milestone, ReportedRawEvent};
use tidemark_domain::{Container, ContainerNumber, ReportedEvent, ShipmentId, TransportEventName};
use tidemark_store::{AwaitingPickup, StoreError, TerminalSelection};
use tidemark_terminals::{ContainerQuery, TerminalConnector, TerminalProfile, TerminalStatus};

use crate::use_cases::queue::{self, JobKind};
use crate::use_cases::terminals::Context;
use crate::use_cases::terminals::{SANDBOX, health, reach};
use crate::use_cases::tracking::engine;

/// A discharged container is asked again this long after a terminal was last asked.
pub const RECHECK: Duration = Duration::minutes(15);

/// A container not yet discharged is asked again this long after a terminal was last asked.
pub const RECHECK_BEFORE_DISCHARGE: Duration = Duration::hours(1);

/// How long before its vessel's arrival at the port of discharge a container is first asked.
pub const LOOK_AHEAD: Duration = Duration::days(3);

/// One batch in this many asks the containers not yet discharged first
/// ([`asks_arrivals_first`]): a fifth of a saturated terminal's calls, while the discharged,
/// whose pick-up is at stake, keep the rest.
pub const ARRIVALS_EVERY: u64 = 5;

/// Whether the `batch`-th batch (from 0) of the run at `now` asks the arrivals first: for
/// one batch in [`ARRIVALS_EVERY`], picked by a mix of the clock's second and the batch's
/// place rather than by counting, so that it needs no state kept between runs or processes,
/// and no tick rate, batch count or demo clock scale can line up with it and starve the
/// arrivals (a counter of runs would, at a scale that is a multiple of five).
pub fn asks_arrivals_first(now: DateTime<Utc>, batch: u32) -> bool {
    // SplitMix64's finalizer: every input bit moves every output bit.
    let mut mixed = now
        .timestamp()
        .cast_unsigned()
        .wrapping_add(u64::from(batch).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    mixed ^= mixed >> 31;
    mixed % ARRIVALS_EVERY == 0
}

/// What one run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckOutcome {
    pub asked: usize,
    pub answered: usize,
    pub shipments_updated: usize,
}

/// Queues a check of every terminal (one pending job each at most).
pub async fn sweep(context: &Context<'_>) -> Result<usize, StoreError> {
    let mut queued = 0;
    for id in context.terminals.ids() {
        queue::enqueue(
            context,
            JobKind::CheckTerminal,
            serde_json::json!({"terminal": id}),
            Some(format!("check-terminal:{id}")),
            context.clock.now(),
        )
        .await?;
        queued += 1;
    }
    Ok(queued)
}

/// At most this many batches in one run of a terminal whose profile sets no per-minute
/// budget: enough for a busy yard (10 batches a minute) without hammering an API whose limit
/// nobody published.
pub const MAX_BATCHES_PER_RUN: u32 = 10;

/// How many batches one run of `profile`'s terminal may ask (a run a scheduler tick, a
/// minute by default): at most [`MAX_BATCHES_PER_RUN`], its per-minute budget, and its day
/// budget's share of a minute (rounded up), so that a day budget is not spent in the
/// morning; at least one. The budgets themselves are enforced call by call
/// ([`health::acquire`]).
pub fn batches_per_run(profile: &TerminalProfile) -> u32 {
    const MINUTES_A_DAY: u32 = 24 * 60;
    let budget = profile.budget();
    let mut batches = MAX_BATCHES_PER_RUN;
    if let Some(per_minute) = budget.per_minute {
        batches = batches.min(per_minute);
    }
    if let Some(per_day) = budget.per_day {
        batches = batches.min(per_day.div_ceil(MINUTES_A_DAY));
    }
    batches.max(1)
}

/// How many batches a run at `now` may ask: [`batches_per_run`], and no more than the
/// budget's paced capacity for the next `span` (the scheduler's tick), which spreads a day
/// budget over the day as the carriers' scheduler does, so that a capped terminal is not
/// spent by the afternoon and then refused until the next day. Zero: none this tick.
pub fn batches_now(
    profile: &TerminalProfile,
    state: &CarrierState,
    now: DateTime<Utc>,
    span: Duration,
) -> u32 {
    let batches = batches_per_run(profile);
    state
        .capacity(now, health::limits_of(profile), span)
        .map_or(batches, |paced| batches.min(paced))
}

/// The terminal's due containers, a batch at a time, asked and written: as many batches as
/// are due, up to [`batches_now`], stopping at the first that is not full, that the budget
/// holds back or that fails. One batch a run capped every terminal at one call a tick, too
/// few for a yard of more than a few batches (`benches/terminal_budgets.rs`).
pub async fn check(context: &Context<'_>, terminal: &str) -> Result<CheckOutcome, StoreError> {
    let Some(connector) = context.terminals.get(terminal).cloned() else {
        return Ok(CheckOutcome::default());
    };
    let key = health::state_key(terminal);
    let state = context
        .store
        .carrier_states()
        .await?
        .into_iter()
        .find(|state| state.scac == key)
        .unwrap_or_else(|| CarrierState::new(&key));
    let span = Duration::from_std(context.scheduler_tick).unwrap_or(Duration::minutes(1));
    let now = context.clock.now();
    let batches = batches_now(connector.profile(), &state, now, span);
    let mut total = CheckOutcome::default();
    for batch in 0..batches {
        let arrivals_first = asks_arrivals_first(now, batch);
        let (outcome, next) = check_batch(context, terminal, &connector, arrivals_first).await?;
        total.asked += outcome.asked;
        total.answered += outcome.answered;
        total.shipments_updated += outcome.shipments_updated;
        if next == Next::Stop {
            break;
        }
    }
    Ok(total)
}

/// Whether a run goes on to another batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// The batch was full, or kept for the arrivals, and went through: more may be due.
    Batch,
    /// Nothing more is due, the budget holds the terminal back, or it failed.
    Stop,
}

/// One batch of the terminal's containers, asked and written; with `arrivals_first`, of
/// those not yet discharged when any is due (else as any other batch).
async fn check_batch(
    context: &Context<'_>,
    terminal: &str,
    connector: &Arc<dyn TerminalConnector>,
    arrivals_first: bool,
) -> Result<(CheckOutcome, Next), StoreError> {
    let now = context.clock.now();
    let profile = connector.profile();
    let batch = batch_of(profile);
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
    let other_terminals = reach::other_terminals(context, terminal);
    let select = |arriving_only| {
        let mut selection = selection(
            terminal,
            ports.as_deref(),
            scac,
            &other_terminals,
            batch,
            now,
        );
        selection.arriving_only = arriving_only;
        selection
    };
    let mut candidates = if arrivals_first {
        context
            .store
            .containers_awaiting_pickup(&select(true))
            .await?
    } else {
        Vec::new()
    };
    // A batch of arrivals says nothing of the discharged still due: the run goes on after it.
    let arrivals = !candidates.is_empty();
    if !arrivals {
        candidates = context
            .store
            .containers_awaiting_pickup(&select(false))
            .await?;
    }
    if candidates.is_empty() {
        return Ok((CheckOutcome::default(), Next::Stop));
    }
    let more_may_be_due =
        arrivals || candidates.len() >= usize::try_from(batch).unwrap_or(usize::MAX);
    let statuses = if sandbox {
        candidates
            .iter()
            .filter_map(|AwaitingPickup { container, .. }| {
                let number = ContainerNumber::parse(&container.number).ok()?;
                tidemark_terminals::sandbox::status_at(&number, container.pod_discharged_at?, now)
            })
            .collect()
    } else {
        if profile.needs_bill_of_lading() {
            // A terminal that looks up by container and bill of lading (Port of Virginia)
            // is not asked about a box whose bill is unknown; the box counts as asked, so
            // it waits its interval instead of taking the batch's first places every tick.
            let (known, unknown): (Vec<AwaitingPickup>, Vec<AwaitingPickup>) = candidates
                .into_iter()
                .partition(|candidate| known_bill(candidate).is_some());
            let skipped: Vec<_> = unknown
                .iter()
                .map(|candidate| candidate.container.id)
                .collect();
            context
                .store
                .record_terminal_asks(terminal, &skipped, now)
                .await?;
            candidates = known;
        }
        let queries: Vec<ContainerQuery> = candidates
            .iter()
            .filter_map(|candidate| {
                let number = ContainerNumber::parse(&candidate.container.number).ok()?;
                Some(ContainerQuery::new(number, known_bill(candidate)))
            })
            .collect();
        if queries.is_empty() {
            // A batch of boxes without a bill: counted as asked; the next batch may have some.
            let next = if more_may_be_due {
                Next::Batch
            } else {
                Next::Stop
            };
            return Ok((CheckOutcome::default(), next));
        }
        if let Acquire::Wait { reason, until } = health::acquire(context, terminal).await? {
            tracing::debug!(terminal, reason = reason.as_str(), %until, "the terminal waits");
            return Ok((CheckOutcome::default(), Next::Stop));
        }
        let result = connector.lookup(&queries).await;
        health::record(context, terminal, &result).await;
        match result {
            Ok(statuses) => statuses,
            Err(error) => {
                tracing::warn!(terminal, %error, "the terminal could not be asked; next tick asks again");
                let outcome = CheckOutcome {
                    asked: queries.len(),
                    ..CheckOutcome::default()
                };
                return Ok((outcome, Next::Stop));
            }
        }
    };
    let containers: Vec<Container> = candidates
        .into_iter()
        .map(|candidate| candidate.container)
        .collect();
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
    let mut asked = Vec::with_capacity(containers.len());
    let mut failed = None;
    for (shipment, answers) in by_shipment {
        match write(context, terminal, shipment, &answers, now).await {
            Ok(()) => {
                outcome.shipments_updated += 1;
                asked.extend(answers.iter().map(|(container, _)| container.id));
            }
            // Another write came first: this shipment is asked again next tick.
            Err(StoreError::Conflict { .. }) => {}
            Err(error) => {
                failed = Some(error);
                break;
            }
        }
    }
    // This terminal's last ask of every container whose answer was written (one statement),
    // from which its next ask is timed; other terminals keep their own.
    context
        .store
        .record_terminal_asks(terminal, &asked, now)
        .await?;
    match failed {
        Some(error) => Err(error),
        // A shipment another write came first to stays unrecorded and would be selected
        // again at once: the run stops there.
        None if more_may_be_due && asked.len() == containers.len() => Ok((outcome, Next::Batch)),
        None => Ok((outcome, Next::Stop)),
    }
}

/// How many containers one run of `profile`'s terminal asks about: its batch size (at least
/// one).
pub fn batch_of(profile: &TerminalProfile) -> u32 {
    u32::try_from(profile.batch_size())
        .unwrap_or(u32::MAX)
        .max(1)
}

/// Whom `terminal` asks about at `now`, at most `batch` of them: containers at `ports` (of
/// line `scac`, when given) that no one of `other_terminals` reaches, with the intervals of
/// this module ([`RECHECK`], [`RECHECK_BEFORE_DISCHARGE`], [`LOOK_AHEAD`]) measured from
/// `now`. The store orders them (discharged first, longest unasked first; then the nearest
/// arrivals): [`tidemark_store::Store::containers_awaiting_pickup`].
pub fn selection<'a>(
    terminal: &'a str,
    ports: Option<&'a [String]>,
    scac: Option<&'a str>,
    other_terminals: &'a [uuid::Uuid],
    batch: u32,
    now: DateTime<Utc>,
) -> TerminalSelection<'a> {
    TerminalSelection {
        terminal,
        ports,
        scac,
        other_terminals,
        discharged_checked_before: now - RECHECK,
        arriving_checked_before: now - RECHECK_BEFORE_DISCHARGE,
        arriving_by: now + LOOK_AHEAD,
        arriving_only: false,
        limit: batch,
    }
}

/// The bill of lading of a container's shipment (read with the selection), where it has one
/// that is not just the container number (a container request's shipment before its events
/// named its bill).
fn known_bill(candidate: &AwaitingPickup) -> Option<String> {
    let bill = candidate.bill_of_lading_number.trim();
    (!bill.is_empty() && !bill.eq_ignore_ascii_case(&candidate.container.number))
        .then(|| bill.to_owned())
}

/// The answers for one shipment's containers, as a report of pick-up facts and availability
/// milestones, planned and recorded like a poll's. A container the terminal did not answer
/// for is still marked as asked, so the batch moves on.
async fn write(
    context: &Context<'_>,
    terminal: &str,
    shipment_id: ShipmentId,
    answers: &[(&Container, Option<&TerminalStatus>)],
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let Some((first, _)) = answers.first() else {
        return Ok(());
    };
    let shipment = context
        .store
        .shipment(first.account_id, shipment_id)
        .await?;
    let request = context
        .store
        .tracking_request(shipment.account_id, shipment.tracking_request_id)
        .await?;
    let mut report = CarrierReport::default();
    let pod = shipment.port_of_discharge_locode.as_deref();
    for (container, status) in answers {
        match status {
            Some(status) => {
                let (observation, availability) = observation_of(&container.number, status, pod);
                report.pickup.push(observation);
                // Only a change of answer is a milestone (and a webhook).
                let changed = |m: &Milestone| {
                    !container.availability_known
                        || container.available_for_pickup
                            != (m.event == TransportEventName::Available)
                };
                report.milestones.extend(availability.filter(changed));
                report
                    .milestones
                    .extend(moves_of(&container.number, status, pod));
                report
                    .raw_events
                    .push(raw_answer(terminal, &container.number, status, pod));
            }
            None => report.pickup.push(PickupObservation {
                container_number: container.number.clone(),
                observed_at: now,
                ..PickupObservation::default()
            }),
        }
    }
    let containers = context.store.containers_of_shipment(shipment.id).await?;
    let events = context
        .store
        .transport_events_of_shipment(shipment.id)
        .await?;
    let raw_events = context.store.raw_events_of_shipment(shipment.id).await?;
    let update = tracking_update::plan(
        &request,
        Known {
            shipment: Some(&shipment),
            containers: &containers,
            events: &events,
            raw_events: &raw_events,
        },
        &report,
        context.ids.as_ref(),
        now,
    );
    engine::record(
        context,
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
    pod: Option<&str>,
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
        rail_carrier: None,
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
        location_locode: pod.map(str::to_owned),
        vessel_name: None,
        vessel_imo: None,
        voyage_number: None,
        terminal_id: None,
    });
    (observation, milestone)
}

/// The moves a terminal saw: the full container leaving its gate (`full_out`) and the empty
/// one coming back (`empty_in`), each at the time the terminal gives. Their ids name the
/// container and the move only, so a terminal that says it again changes nothing and one
/// that corrects the time corrects the event.
fn moves_of(container: &str, status: &TerminalStatus, pod: Option<&str>) -> Vec<Milestone> {
    [
        (TransportEventName::FullOut, status.full_out_at, "full_out"),
        (
            TransportEventName::EmptyIn,
            status.empty_returned_at,
            "empty_in",
        ),
    ]
    .into_iter()
    .filter_map(|(event, at, name)| {
        Some(Milestone {
            source_id: format!("terminal|{container}|{name}"),
            event,
            container_number: Some(container.to_owned()),
            at: at?,
            location_locode: pod.map(str::to_owned),
            vessel_name: None,
            vessel_imo: None,
            voyage_number: None,
            terminal_id: None,
        })
    })
    .collect()
}

/// The terminal's own answer for one container, kept as a raw event beside the carrier's
/// (`/v2/containers/{id}/raw_events`), so nothing it said is lost and drift shows. Its id
/// is the answer's digest: the same answer again is the same raw event, a new one is kept
/// beside the earlier ones.
fn raw_answer(
    terminal: &str,
    container: &str,
    status: &TerminalStatus,
    pod: Option<&str>,
) -> ReportedRawEvent {
    use sha2::{Digest, Sha256};
    let answer = if status.raw.is_null() {
        // A source without an answer of its own (the sandbox): what it reported, less when
        // it was asked, so the same news is the same raw event.
        let mut said = status.clone();
        said.checked_at = DateTime::<Utc>::UNIX_EPOCH;
        serde_json::to_string(&said).unwrap_or_default()
    } else {
        status.raw.to_string()
    };
    let digest = hex::encode(&Sha256::digest(answer.as_bytes())[..8]);
    let event = match (status.full_out_at, status.availability) {
        (Some(_), _) => Some("full_out"),
        (None, Some(true)) => Some("available"),
        _ => None,
    };
    ReportedRawEvent {
        source_id: format!("terminal|{terminal}|{container}|{digest}"),
        container_number: Some(container.to_owned()),
        reported: ReportedEvent {
            original_event: format!("terminal {terminal}: {answer}"),
            event: event.map(str::to_owned),
            timestamp: status.checked_at,
            estimated: false,
            location_locode: pod.map(str::to_owned),
            location_name: None,
            vessel_name: None,
            vessel_imo: None,
            voyage_number: None,
            terminal_id: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use tidemark_terminals::profile::{Confidence, Fact, Profiles};

    use super::*;

    fn with_budget(per_minute: Option<u32>, per_day: Option<u32>) -> TerminalProfile {
        let fact = |value| Fact {
            value,
            confidence: Confidence::Configured,
            source: "this test".to_owned(),
        };
        let mut profile = Profiles::embedded()
            .get("port_of_virginia")
            .expect("a built-in profile")
            .clone();
        profile.requests_per_minute = fact(per_minute);
        profile.requests_per_day = fact(per_day);
        profile
    }

    #[test]
    fn a_terminal_without_a_published_budget_asks_at_most_ten_batches_a_run() {
        assert_eq!(
            batches_per_run(&with_budget(None, None)),
            MAX_BATCHES_PER_RUN
        );
    }

    #[test]
    fn a_minute_budget_caps_the_batches_of_a_run() {
        assert_eq!(batches_per_run(&with_budget(Some(3), None)), 3);
    }

    #[test]
    fn a_day_budget_is_spread_over_the_day_a_run_at_a_time() {
        assert_eq!(batches_per_run(&with_budget(None, Some(1_000))), 1);
        assert_eq!(batches_per_run(&with_budget(None, Some(20_000))), 10);
        assert_eq!(batches_per_run(&with_budget(None, Some(5_000))), 4);
    }

    #[test]
    fn a_run_asks_at_least_one_batch() {
        assert_eq!(batches_per_run(&with_budget(Some(0), Some(0))), 1);
    }

    /// The share of the batches of 10,000 runs, `step` apart, of `batches` each, that are
    /// kept for the arrivals.
    fn arrivals_share(step: Duration, batches: u32) -> f64 {
        let start = DateTime::<Utc>::from_timestamp(1_780_000_000, 0).expect("a time");
        let runs = 10_000;
        let kept = (0..runs)
            .flat_map(|run| (0..batches).map(move |batch| (run, batch)))
            .filter(|&(run, batch)| asks_arrivals_first(start + step * run, batch))
            .count();
        #[expect(clippy::cast_precision_loss, reason = "a share")]
        let share = kept as f64 / f64::from(runs * i32::try_from(batches).expect("few"));
        share
    }

    #[test]
    fn about_one_batch_in_five_is_kept_for_the_arrivals_at_one_batch_a_minute() {
        let share = arrivals_share(Duration::minutes(1), 1);
        assert!((0.18..0.22).contains(&share), "{share}");
    }

    #[test]
    fn about_one_batch_in_five_is_kept_for_the_arrivals_at_ten_batches_a_minute() {
        let share = arrivals_share(Duration::minutes(1), 10);
        assert!((0.18..0.22).contains(&share), "{share}");
    }

    #[test]
    fn a_demo_clock_whose_step_is_a_multiple_of_five_still_keeps_one_batch_in_five() {
        // A minute's tick at TIDEMARK_DEMO_TIME_SCALE=14400: ten days of clock a run.
        let share = arrivals_share(Duration::minutes(14_400), 1);
        assert!((0.18..0.22).contains(&share), "{share}");
    }
}
