//! Calls to terminals within their limits, and their health, across every worker process.
//!
//! A terminal's calls are counted, paused and probed exactly as a carrier's are
//! ([`tidemark_domain::carriers::CarrierState`]), in the same shared table under the key
//! `terminal:<profile id>`: the budget holds in every sliding minute and day whichever
//! process asks; refused credentials pause the terminal (one probe now and then finds out
//! whether the operator fixed them); repeated failures open its circuit. The carriers'
//! own views leave these keys out ([`is_terminal_key`]).

use chrono::{DateTime, Duration, Utc};
use tidemark_domain::carriers::{Acquire, CallOutcome, CarrierState, Limits, PollPriority};
use tidemark_store::StoreError;
use tidemark_terminals::{TerminalError, TerminalProfile, TerminalStatus};

use crate::use_cases::terminals::Context;
use crate::use_cases::tracking::limits::change_state;

pub use crate::parts::terminals::{is_terminal_key, state_key};

fn limits(context: &Context<'_>, terminal: &str) -> Limits {
    context
        .terminals
        .get(terminal)
        .map(|connector| limits_of(connector.profile()))
        .unwrap_or_default()
}

/// The budget a terminal's calls are held to: its profile's `requests_per_minute` and
/// `requests_per_day` (published, or the operator's); an unknown one is unlimited.
pub fn limits_of(profile: &TerminalProfile) -> Limits {
    let budget = profile.budget();
    Limits {
        per_minute: budget.per_minute,
        per_day: budget.per_day,
    }
}

/// One call to a terminal whose shared state is `state`, at `now`, under `limits`: `Go`
/// (counted) or wait. A terminal's calls count as a carrier's near a milestone (their share
/// of the day's budget).
pub fn take_call(state: &mut CarrierState, now: DateTime<Utc>, limits: Limits) -> Acquire {
    state.acquire(now, limits, PollPriority::NearMilestone)
}

/// Asks for one call to `terminal` now: `Go` (counted) or wait, for its budget, a 429, an
/// open circuit or refused credentials.
pub async fn acquire(context: &Context<'_>, terminal: &str) -> Result<Acquire, StoreError> {
    let now = context.clock.now();
    let limits = limits(context, terminal);
    let (decision, _) = change_state(context, &state_key(terminal), |state| {
        take_call(state, now, limits)
    })
    .await?;
    Ok(decision.unwrap_or(Acquire::Go))
}

fn outcome_of(result: &Result<Vec<TerminalStatus>, TerminalError>) -> CallOutcome {
    match result {
        Ok(_) => CallOutcome::Answered,
        Err(TerminalError::CredentialsRefused(why)) => CallOutcome::CredentialsRefused(why.clone()),
        Err(TerminalError::RateLimited { retry_after }) => CallOutcome::RateLimited {
            retry_after: retry_after.and_then(|wait| Duration::from_std(wait).ok()),
        },
        Err(TerminalError::Unavailable(why)) => CallOutcome::Unavailable(why.clone()),
        Err(error) => CallOutcome::Unreadable(error.to_string()),
    }
}

/// Records how a call to `terminal` ended, and logs what an operator must know. A failure
/// to record is logged, never fatal.
pub async fn record(
    context: &Context<'_>,
    terminal: &str,
    result: &Result<Vec<TerminalStatus>, TerminalError>,
) {
    let now = context.clock.now();
    let outcome = outcome_of(result);
    let written = change_state(context, &state_key(terminal), |state| {
        let refused_before = state.credentials_refused_at;
        state.record(now, &outcome);
        refused_before
    })
    .await;
    let was_refused = match written {
        Ok((refused_before, _)) => refused_before.flatten(),
        Err(error) => {
            tracing::error!(terminal, error = ?error, "cannot record a terminal call's outcome");
            return;
        }
    };
    match (&outcome, was_refused) {
        (CallOutcome::CredentialsRefused(why), None) => tracing::error!(
            terminal,
            error = %why,
            "the terminal refuses our credentials: it is paused (asked again only to probe); \
             check its credentials"
        ),
        (CallOutcome::Answered, Some(_)) => {
            tracing::info!(terminal, "the terminal accepts our credentials again");
        }
        _ => {}
    }
}

/// One terminal's health, for `tidemark terminals list` and the console's Carriers page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerminalHealth {
    pub id: String,
    pub per_minute: Option<u32>,
    pub per_day: Option<u32>,
    pub last_success_at: Option<DateTime<Utc>>,
    pub last_error_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    /// Since when it refuses our credentials: it is paused until a probe succeeds.
    pub credentials_refused_since: Option<DateTime<Utc>>,
    pub circuit_open_until: Option<DateTime<Utc>>,
    pub rate_limited_until: Option<DateTime<Utc>>,
    pub calls_last_minute: usize,
    pub calls_today: u32,
}

/// Every terminal with a connector (the sandbox's included), by id.
pub async fn health(context: &Context<'_>) -> Result<Vec<TerminalHealth>, StoreError> {
    let now = context.clock.now();
    let states = context.store.carrier_states().await?;
    Ok(context
        .terminals
        .ids()
        .into_iter()
        .map(|id| {
            let key = state_key(id);
            let state = states
                .iter()
                .find(|state| state.scac == key)
                .cloned()
                .unwrap_or_else(|| CarrierState::new(&key));
            let limits = limits(context, id);
            TerminalHealth {
                id: id.to_owned(),
                per_minute: limits.per_minute,
                per_day: limits.per_day,
                last_success_at: state.last_success_at,
                last_error_at: state.last_error_at,
                last_error: state.last_error.clone(),
                credentials_refused_since: state.credentials_refused_at,
                circuit_open_until: state.circuit_open_until.filter(|&until| until > now),
                rate_limited_until: state.slowed_until.filter(|&until| until > now),
                calls_last_minute: state.calls_last_minute(now),
                calls_today: state.calls_last_day(now),
            }
        })
        .collect())
}
