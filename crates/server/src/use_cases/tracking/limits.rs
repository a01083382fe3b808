//! Calls to carriers within their limits and their health, across every worker process.
//!
//! Before a poll calls its carrier it [`acquire`]s a call from the carrier's shared state
//! (`tidemark_domain::carriers::calls`, one row per SCAC in the store): the budget per
//! minute and per day, a 429's `Retry-After`, an open circuit, refused credentials. After
//! the call it [`record`]s the outcome there, counts it on `/metrics` and logs what an
//! operator must know. The scheduler asks [`capacities`] how many polls each carrier can
//! take before its next tick, so polls wait in the database (still due) rather than as a
//! herd of jobs; nothing is lost while waiting: the next tick finds them again.
//!
//! Metrics are labelled only with SCACs that have a connector (never with user input).

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};
use tidemark_carriers::profile::RateBudget;
use tidemark_carriers::{CarrierError, CarrierSnapshot};
use tidemark_domain::carriers::{Acquire, CallOutcome, CarrierState, Limits, PollPriority};
use tidemark_store::StoreError;

use crate::parts::core::Core;
use crate::use_cases::tracking::Engine;

/// The most a drift sample (the description and raw payload of an event that could not be
/// read) keeps.
const DRIFT_SAMPLE_CHARS: usize = 4_500;

fn limits(budget: RateBudget) -> Limits {
    Limits {
        per_minute: budget.per_minute,
        per_day: budget.per_day,
    }
}

/// Changes the shared state under `key` (a SCAC, or a terminal's key) with `change`, and
/// returns what the change decided beside the state as written. The store takes a plain
/// `Fn`, which may run again when another process wrote first: the last run's answer counts.
pub(crate) async fn change_state<T: Send>(
    core: &Core,
    key: &str,
    change: impl Fn(&mut CarrierState) -> T + Send + Sync,
) -> Result<(Option<T>, CarrierState), StoreError> {
    let decided = Mutex::new(None);
    let written = core
        .store
        .change_carrier_state(key, &|state| {
            let answer = change(state);
            *decided
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(answer);
        })
        .await?;
    let decided = decided
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Ok((decided, written))
}

/// Asks for one call to `scac` now, for a poll of `priority`.
pub async fn acquire(
    engine: &Engine<'_>,
    scac: &str,
    priority: PollPriority,
) -> Result<Acquire, StoreError> {
    let now = engine.clock.now();
    let limits = limits(engine.carriers.budget(scac));
    let (decision, _) =
        change_state(engine, scac, |state| state.acquire(now, limits, priority)).await?;
    let decision = decision.unwrap_or(Acquire::Go);
    if let Acquire::Wait { reason, .. } = decision {
        metrics::counter!("tidemark_carrier_polls_waiting_total", "scac" => scac.to_owned(), "reason" => reason.as_str())
            .increment(1);
    }
    Ok(decision)
}

/// What a call's result means for the carrier's health.
fn outcome_of(result: &Result<CarrierSnapshot, CarrierError>) -> CallOutcome {
    match result {
        Ok(_) | Err(CarrierError::NotFound) => CallOutcome::Answered,
        Err(CarrierError::RateLimited { retry_after }) => CallOutcome::RateLimited {
            retry_after: retry_after.and_then(|wait| Duration::from_std(wait).ok()),
        },
        Err(CarrierError::Unavailable(message)) => CallOutcome::Unavailable(message.clone()),
        Err(CarrierError::CredentialsRefused(message)) => {
            CallOutcome::CredentialsRefused(message.clone())
        }
        Err(CarrierError::UnexpectedPayload(message)) => CallOutcome::Unreadable(message.clone()),
    }
}

fn outcome_name(outcome: &CallOutcome) -> &'static str {
    match outcome {
        CallOutcome::Answered => "answered",
        CallOutcome::RateLimited { .. } => "rate_limited",
        CallOutcome::Unavailable(_) => "unavailable",
        CallOutcome::CredentialsRefused(_) => "credentials_refused",
        CallOutcome::Unreadable(_) => "unreadable",
    }
}

/// Records how a call to `scac` ended: in the carrier's shared state, on `/metrics` (calls
/// by outcome, drift) and in the logs. A failure to record is logged, never fatal: the
/// poll's own result matters more.
pub async fn record(
    engine: &Engine<'_>,
    scac: &str,
    result: &Result<CarrierSnapshot, CarrierError>,
) {
    let now = engine.clock.now();
    let outcome = outcome_of(result);
    let (drift, sample) = match result {
        Ok(snapshot) if !snapshot.skipped.is_empty() => (
            snapshot.skipped.len() as u64,
            snapshot.skipped.last().map(|skip| {
                let raw = snapshot.skipped_raw.last().map_or("", String::as_str);
                format!("{skip}; raw: {raw}")
                    .chars()
                    .take(DRIFT_SAMPLE_CHARS)
                    .collect::<String>()
            }),
        ),
        _ => (0, None),
    };
    metrics::counter!("tidemark_carrier_calls_total", "scac" => scac.to_owned(), "outcome" => outcome_name(&outcome))
        .increment(1);
    if drift > 0 {
        metrics::counter!("tidemark_carrier_drift_events_total", "scac" => scac.to_owned())
            .increment(drift);
        tracing::warn!(
            scac,
            skipped = drift,
            last = sample.as_deref().unwrap_or_default(),
            "the carrier sent events that could not be read (drift); the others were kept"
        );
    }
    let written = change_state(engine, scac, |state| {
        let before = (state.credentials_refused_at, state.circuit_open(now));
        state.record(now, &outcome);
        state.record_drift(drift, sample.clone());
        before
    })
    .await;
    let (before, written) = match written {
        Ok(changed) => changed,
        Err(error) => {
            tracing::error!(scac, error = ?error, "cannot record a carrier call's outcome");
            return;
        }
    };
    let (was_refused, was_open) = before.unwrap_or((None, false));
    match (&outcome, was_refused) {
        (CallOutcome::CredentialsRefused(message), None) => tracing::error!(
            scac,
            error = %message,
            "the carrier refuses our credentials: its polls wait (pending, is_retrying) and \
             resume once a probe succeeds; check its credentials"
        ),
        (CallOutcome::Answered, Some(_)) => {
            tracing::info!(scac, "the carrier accepts our credentials again");
        }
        _ => {}
    }
    match (was_open, written.circuit_open(now)) {
        (false, true) => tracing::warn!(
            scac,
            until = ?written.circuit_open_until,
            failures = written.consecutive_failures,
            "the carrier keeps failing: its circuit is open"
        ),
        (true, false) => tracing::info!(scac, "the carrier answers again: its circuit is closed"),
        _ => {}
    }
    export(&written, now);
}

/// Sets the per-carrier gauges from a state.
fn export(state: &CarrierState, now: DateTime<Utc>) {
    let flag = |on: bool| if on { 1.0 } else { 0.0 };
    let scac = state.scac.clone();
    metrics::gauge!("tidemark_carrier_credentials_refused", "scac" => scac.clone())
        .set(flag(state.credentials_refused_at.is_some()));
    metrics::gauge!("tidemark_carrier_circuit_open", "scac" => scac.clone())
        .set(flag(state.circuit_open(now)));
    metrics::gauge!("tidemark_carrier_rate_limited", "scac" => scac)
        .set(flag(state.slowed_until.is_some_and(|until| until > now)));
}

/// Refreshes the per-carrier gauges from the database, so every process's `/metrics`
/// shows the shared truth. Only SCACs with a connector are exported.
pub async fn export_gauges(engine: &Engine<'_>) -> Result<(), StoreError> {
    let now = engine.clock.now();
    let states = engine.store.carrier_states().await?;
    for scac in engine.carriers.scacs() {
        let state = states
            .iter()
            .find(|state| state.scac == scac)
            .cloned()
            .unwrap_or_else(|| CarrierState::new(scac));
        export(&state, now);
    }
    Ok(())
}

/// How many polls each carrier can take before the scheduler's next tick: `None` for
/// unlimited, 0 while it must wait (429, open circuit, refused credentials; except the one
/// probe that finds out whether it recovered).
pub async fn capacities(
    engine: &Engine<'_>,
    span: Duration,
) -> Result<HashMap<String, Option<u32>>, StoreError> {
    let now = engine.clock.now();
    let states = engine.store.carrier_states().await?;
    Ok(states
        .into_iter()
        .map(|state| {
            let limits = limits(engine.carriers.budget(&state.scac));
            // `acquire` on a copy says whether the carrier is blocked for its health.
            let mut probe = state.clone();
            let capacity = match probe.acquire(now, Limits::default(), PollPriority::NewRequest) {
                Acquire::Wait { .. } => Some(0),
                Acquire::Go
                    if state.circuit_open_until.is_some()
                        || state.credentials_refused_at.is_some() =>
                {
                    Some(1)
                }
                Acquire::Go => state.capacity(now, limits, span),
            };
            (state.scac.clone(), capacity)
        })
        .collect())
}

/// The capacity of a carrier never called yet.
pub fn fresh_capacity(engine: &Engine<'_>, scac: &str, span: Duration) -> Option<u32> {
    CarrierState::new(scac).capacity(
        engine.clock.now(),
        limits(engine.carriers.budget(scac)),
        span,
    )
}

/// One carrier's health, for `tidemark carriers list` and operators.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CarrierHealth {
    pub scac: String,
    /// Whether this process has a connector for it.
    pub configured: bool,
    pub budget: RateBudget,
    pub last_success_at: Option<DateTime<Utc>>,
    pub last_error_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    /// Since when the carrier refuses our credentials.
    pub credentials_refused_since: Option<DateTime<Utc>>,
    /// Until when the circuit is open, if it is.
    pub circuit_open_until: Option<DateTime<Utc>>,
    /// Until when a 429 asked us to wait, if it still does.
    pub rate_limited_until: Option<DateTime<Utc>>,
    pub calls_last_minute: usize,
    pub calls_today: u32,
    /// Events that could not be read, ever, and the last one (with its raw payload).
    pub drift_events: u64,
    pub last_drift: Option<String>,
}

/// Every configured carrier's health, and any other carrier ever called, by SCAC.
pub async fn health(engine: &Engine<'_>) -> Result<Vec<CarrierHealth>, StoreError> {
    let now = engine.clock.now();
    let mut states: Vec<CarrierState> = engine.store.carrier_states().await?;
    states.retain(|state| !crate::parts::terminals::is_terminal_key(&state.scac));
    for scac in engine.carriers.scacs() {
        if !states.iter().any(|state| state.scac == scac) {
            states.push(CarrierState::new(scac));
        }
    }
    states.sort_by(|a, b| a.scac.cmp(&b.scac));
    Ok(states
        .into_iter()
        .map(|state| CarrierHealth {
            configured: engine.carriers.get(&state.scac).is_some(),
            budget: engine.carriers.budget(&state.scac),
            last_success_at: state.last_success_at,
            last_error_at: state.last_error_at,
            last_error: state.last_error.clone(),
            credentials_refused_since: state.credentials_refused_at,
            circuit_open_until: state.circuit_open_until.filter(|&until| until > now),
            rate_limited_until: state.slowed_until.filter(|&until| until > now),
            calls_last_minute: state.calls_last_minute(now),
            calls_today: state.calls_last_day(now),
            drift_events: state.drift_events,
            last_drift: state.last_drift,
            scac: state.scac,
        })
        .collect())
}
