//! Calls to one carrier: its rate budget and its health, as one state that every process
//! reads and changes atomically through the store (a row per SCAC, locked while
//! [`CarrierState::acquire`] or [`CarrierState::record`] runs), so N workers share one
//! budget instead of spending N of them.
//!
//! - Budget per minute: a sliding window, the times of the calls of the last 60 seconds and
//!   a [guard](WINDOW_GUARD) (a call reaches the carrier a little after it is allowed, and
//!   the carrier counts arrivals); a call is allowed while fewer than `per_minute` are in
//!   it, so no 60-second window the carrier sees ever holds more, even when hundreds of
//!   polls come due at once. Budget per day: a sliding 24 hours too, counted in
//!   [10-minute buckets](DAY_BUCKET) (a bucket counts until all of it is more than 24 hours
//!   old), of which each [`PollPriority`] may use its [share](PollPriority::day_share).
//! - `429`: the whole carrier waits for its `Retry-After` (a minute when absent, at most an
//!   hour).
//! - 5xx and timeouts: after [`FAILURES_TO_OPEN`] in a row the circuit opens for 30 seconds,
//!   doubling with each reopening up to 30 minutes; when that passes, one probe call goes
//!   through (half-open) and its outcome closes or reopens the circuit.
//! - 401/403: the credentials are refused; polls wait, and one probe every
//!   [`CREDENTIALS_PROBE`] finds out whether an operator fixed them.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::PollPriority;

/// Consecutive 5xx or timeouts that open the circuit.
pub const FAILURES_TO_OPEN: u32 = 5;
/// The first time the circuit is open; each reopening doubles it up to [`MAX_OPEN`].
pub const FIRST_OPEN: Duration = Duration::seconds(30);
pub const MAX_OPEN: Duration = Duration::minutes(30);
/// How long a half-open probe holds the circuit for itself (longer than a request's
/// timeout), so other processes do not probe at the same time.
pub const PROBE_HOLD: Duration = Duration::minutes(2);
/// How often a carrier that refused our credentials is probed again.
pub const CREDENTIALS_PROBE: Duration = Duration::minutes(5);
/// `Retry-After` when the carrier gives none, and the longest one honoured.
pub const DEFAULT_RETRY_AFTER: Duration = Duration::minutes(1);
pub const MAX_RETRY_AFTER: Duration = Duration::hours(1);
const WINDOW: Duration = Duration::minutes(1);
/// Added to the minute's window: the time a call may take to reach the carrier after it is
/// allowed (a token fetch, a slow connection), so two calls allowed 60 seconds apart never
/// land inside one minute of the carrier's.
pub const WINDOW_GUARD: Duration = Duration::seconds(2);
/// The day's calls are counted per bucket of this length.
pub const DAY_BUCKET: Duration = Duration::minutes(10);
const DAY: Duration = Duration::hours(24);

/// Everything shared about one carrier's calls (stored as JSON by the backends).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CarrierState {
    pub scac: String,
    /// When the calls of the last minute were allowed, oldest first.
    pub recent_calls: Vec<DateTime<Utc>>,
    /// The calls of the last 24 hours, per [`DAY_BUCKET`]: `(bucket start, calls)`, oldest
    /// first.
    pub day_buckets: Vec<(DateTime<Utc>, u32)>,
    /// A `429`'s `Retry-After`: no call before this.
    pub slowed_until: Option<DateTime<Utc>>,
    /// 5xx and timeouts in a row.
    pub consecutive_failures: u32,
    /// Times the circuit opened since it last closed (for the doubling).
    pub circuit_opens: u32,
    /// Set while the circuit is open (or a half-open probe holds it): no call before this.
    pub circuit_open_until: Option<DateTime<Utc>>,
    /// Since when the carrier refuses our credentials (401/403); cleared by a success.
    pub credentials_refused_at: Option<DateTime<Utc>>,
    /// The next probe of refused credentials.
    pub credentials_probe_at: Option<DateTime<Utc>>,
    pub last_success_at: Option<DateTime<Utc>>,
    pub last_error_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    /// Events the carrier sent that could not be read (drift), ever, and the last one's
    /// description with its raw payload.
    pub drift_events: u64,
    pub last_drift: Option<String>,
}

/// Why a call has to wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitReason {
    /// The carrier's budget (per minute or per day) is spent for now.
    Budget,
    /// The carrier answered 429; its `Retry-After` has not passed.
    RateLimited,
    /// The circuit is open after repeated 5xx or timeouts.
    CircuitOpen,
    /// The carrier refuses our credentials.
    CredentialsRefused,
}

impl WaitReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Budget => "budget",
            Self::RateLimited => "rate_limited",
            Self::CircuitOpen => "circuit_open",
            Self::CredentialsRefused => "credentials_refused",
        }
    }
}

/// The answer to "may I call this carrier now?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquire {
    /// Call now; the call is counted.
    Go,
    /// Not before `until`; nothing was counted.
    Wait {
        until: DateTime<Utc>,
        reason: WaitReason,
    },
}

/// How a call ended, as far as the carrier's health is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallOutcome {
    /// The carrier answered (with events, or that it does not know the number).
    Answered,
    /// 429, with the carrier's `Retry-After` if it gave one.
    RateLimited { retry_after: Option<Duration> },
    /// 5xx, a timeout or no connection.
    Unavailable(String),
    /// 401 or 403.
    CredentialsRefused(String),
    /// An answer we could not read: the carrier is up, the payload is the problem.
    Unreadable(String),
}

/// The budget of a carrier: calls per minute and per day; `None` is unlimited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub per_minute: Option<u32>,
    pub per_day: Option<u32>,
}

/// The last minute's calls (and the guard's), at `now`.
fn in_window(calls: &[DateTime<Utc>], now: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    calls
        .iter()
        .copied()
        .filter(|&at| at > now - WINDOW - WINDOW_GUARD && at <= now)
        .collect()
}

/// The start of the [`DAY_BUCKET`] holding `at`.
fn bucket_of(at: DateTime<Utc>) -> DateTime<Utc> {
    let length = DAY_BUCKET.num_seconds();
    let start = at.timestamp().div_euclid(length) * length;
    DateTime::from_timestamp(start, 0).unwrap_or(at)
}

/// The buckets that may hold a call of the last 24 hours at `now`: any part of them is.
fn day_window(buckets: &[(DateTime<Utc>, u32)], now: DateTime<Utc>) -> Vec<(DateTime<Utc>, u32)> {
    buckets
        .iter()
        .copied()
        .filter(|&(start, _)| start + DAY_BUCKET > now - DAY && start <= now)
        .collect()
}

/// The calls of `priority` allowed in a day of `per_day`: at least one.
fn day_allowance(per_day: u32, priority: PollPriority) -> u32 {
    let share = (f64::from(per_day) * priority.day_share()).floor();
    // per_day fits in u32, so its share does too.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a share of a u32 is a non-negative integer below it"
    )]
    let share = share as u32;
    share.max(1)
}

impl CarrierState {
    pub fn new(scac: &str) -> Self {
        Self {
            scac: scac.to_owned(),
            ..Self::default()
        }
    }

    /// The calls made in the minute before `now`.
    pub fn calls_last_minute(&self, now: DateTime<Utc>) -> usize {
        self.recent_calls
            .iter()
            .filter(|&&at| at > now - Duration::minutes(1))
            .count()
    }

    /// The calls made in the 24 hours before `now`, by their day buckets.
    pub fn calls_last_day(&self, now: DateTime<Utc>) -> u32 {
        self.day_buckets
            .iter()
            .filter(|&&(start, _)| start > now - Duration::hours(24))
            .map(|&(_, calls)| calls)
            .sum()
    }

    /// Whether a circuit is open (or held by a half-open probe) at `now`.
    pub fn circuit_open(&self, now: DateTime<Utc>) -> bool {
        self.circuit_open_until.is_some_and(|until| until > now)
    }

    /// Asks for one call at `now` with `priority`; counts it when allowed.
    pub fn acquire(
        &mut self,
        now: DateTime<Utc>,
        limits: Limits,
        priority: PollPriority,
    ) -> Acquire {
        let wait = |until, reason| Acquire::Wait { until, reason };
        if self.credentials_refused_at.is_some()
            && let Some(at) = self.credentials_probe_at.filter(|&at| at > now)
        {
            return wait(at, WaitReason::CredentialsRefused);
        }
        if let Some(until) = self.slowed_until.filter(|&until| until > now) {
            return wait(until, WaitReason::RateLimited);
        }
        if let Some(until) = self.circuit_open_until.filter(|&until| until > now) {
            return wait(until, WaitReason::CircuitOpen);
        }
        let recent = in_window(&self.recent_calls, now);
        if let Some(per_minute) = limits.per_minute
            && recent.len() >= per_minute as usize
        {
            // The call that frees a place is the one `per_minute` back from the newest.
            let frees = recent[recent.len() - per_minute as usize] + WINDOW + WINDOW_GUARD;
            return wait(
                frees.max(now + Duration::milliseconds(1)),
                WaitReason::Budget,
            );
        }
        let mut day = day_window(&self.day_buckets, now);
        if let Some(per_day) = limits.per_day {
            let allowance = day_allowance(per_day, priority);
            let mut used: u32 = day.iter().map(|&(_, calls)| calls).sum();
            if used >= allowance {
                // A place frees when enough of the oldest buckets have left the 24 hours.
                let mut frees = now + DAY;
                for &(start, calls) in &day {
                    used = used.saturating_sub(calls);
                    if used < allowance {
                        frees = start + DAY_BUCKET + DAY;
                        break;
                    }
                }
                return wait(
                    frees.max(now + Duration::milliseconds(1)),
                    WaitReason::Budget,
                );
            }
        }
        // Allowed: count it, and let a probe hold the circuit or the credentials' turn.
        self.recent_calls = recent;
        self.recent_calls.push(now);
        let bucket = bucket_of(now);
        match day.last_mut() {
            Some((start, calls)) if *start == bucket => *calls += 1,
            _ => day.push((bucket, 1)),
        }
        self.day_buckets = day;
        if self.circuit_open_until.is_some() {
            self.circuit_open_until = Some(now + PROBE_HOLD);
        }
        if self.credentials_refused_at.is_some() {
            self.credentials_probe_at = Some(now + CREDENTIALS_PROBE);
        }
        Acquire::Go
    }

    /// Records how a call ended.
    pub fn record(&mut self, now: DateTime<Utc>, outcome: &CallOutcome) {
        match outcome {
            CallOutcome::Answered => {
                self.last_success_at = Some(now);
                self.consecutive_failures = 0;
                self.circuit_opens = 0;
                self.circuit_open_until = None;
                self.credentials_refused_at = None;
                self.credentials_probe_at = None;
            }
            CallOutcome::RateLimited { retry_after } => {
                let wait = retry_after
                    .unwrap_or(DEFAULT_RETRY_AFTER)
                    .clamp(Duration::seconds(1), MAX_RETRY_AFTER);
                self.slowed_until = Some(now + wait);
                self.error(
                    now,
                    format!("rate limited; waiting {}s", wait.num_seconds()),
                );
            }
            CallOutcome::Unavailable(message) => {
                self.consecutive_failures += 1;
                let probing = self.circuit_open_until.is_some();
                if probing || self.consecutive_failures >= FAILURES_TO_OPEN {
                    self.circuit_opens += 1;
                    let doublings = self.circuit_opens.saturating_sub(1).min(16);
                    let open = (FIRST_OPEN * 2_i32.pow(doublings)).min(MAX_OPEN);
                    self.circuit_open_until = Some(now + open);
                }
                self.error(now, message.clone());
            }
            CallOutcome::CredentialsRefused(message) => {
                self.credentials_refused_at = self.credentials_refused_at.or(Some(now));
                self.credentials_probe_at = Some(now + CREDENTIALS_PROBE);
                self.error(now, message.clone());
            }
            CallOutcome::Unreadable(message) => {
                // The carrier is up: the circuit closes, the error is kept.
                self.consecutive_failures = 0;
                self.circuit_opens = 0;
                self.circuit_open_until = None;
                self.error(now, message.clone());
            }
        }
    }

    /// Counts events the carrier sent that could not be read, keeping the last one.
    pub fn record_drift(&mut self, count: u64, last: Option<String>) {
        self.drift_events += count;
        if last.is_some() {
            self.last_drift = last;
        }
    }

    fn error(&mut self, now: DateTime<Utc>, message: String) {
        self.last_error_at = Some(now);
        self.last_error = Some(message);
    }

    /// How many calls of routine priority the budget allows from `now` for the next
    /// `span`, at a pace that spreads the day's budget over the day: what the scheduler
    /// queues per tick, so a short budget is not spent by 10 a.m. and then leaves a herd of
    /// polls waiting for midnight. `None` when unlimited.
    pub fn capacity(&self, now: DateTime<Utc>, limits: Limits, span: Duration) -> Option<u32> {
        let span_seconds = span.num_seconds().max(1);
        let per_minute = limits.per_minute.map(|per_minute| {
            let in_span = i64::from(per_minute) * span_seconds / 60;
            let used = in_window(&self.recent_calls, now).len() as i64;
            (in_span.max(i64::from(per_minute)) - used).max(0)
        });
        let per_day = limits.per_day.map(|per_day| {
            let day = day_window(&self.day_buckets, now);
            let used: i64 = day.iter().map(|&(_, calls)| i64::from(calls)).sum();
            // The last hour's calls against an hour's share of the day, so the budget is
            // spread over the 24 hours rather than spent at once and then waited for.
            let last_hour: i64 = day
                .iter()
                .filter(|&&(start, _)| start + DAY_BUCKET > now - Duration::hours(1))
                .map(|&(_, calls)| i64::from(calls))
                .sum();
            let hourly = (i64::from(per_day) * (3_600 + span_seconds) / 86_400).max(1);
            (hourly - last_hour).min(i64::from(per_day) - used).max(0)
        });
        let capacity = match (per_minute, per_day) {
            (None, None) => return None,
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
        };
        Some(u32::try_from(capacity).unwrap_or(u32::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-03-01T10:00:00Z")
            .unwrap()
            .to_utc()
            + Duration::seconds(seconds)
    }

    const TEN_A_MINUTE: Limits = Limits {
        per_minute: Some(10),
        per_day: None,
    };

    #[test]
    fn no_sixty_seconds_ever_hold_more_calls_than_the_minute_budget() {
        let mut state = CarrierState::new("HLCU");
        let mut allowed = Vec::new();
        for tenth in 0..3_000 {
            let now = at(0) + Duration::milliseconds(tenth * 100);
            if state.acquire(now, TEN_A_MINUTE, PollPriority::Routine) == Acquire::Go {
                allowed.push(now);
            }
        }

        for (i, start) in allowed.iter().enumerate() {
            let in_minute = allowed[i..]
                .iter()
                .filter(|&&t| t < *start + WINDOW)
                .count();
            assert!(
                in_minute <= 10,
                "{in_minute} calls in the minute from {start}"
            );
        }
        assert_eq!(allowed.len(), 50, "five minutes of ten calls");
    }

    #[test]
    fn a_spent_minute_says_when_a_place_frees() {
        let mut state = CarrierState::new("HLCU");
        for second in 0..10 {
            assert_eq!(
                state.acquire(at(second), TEN_A_MINUTE, PollPriority::NewRequest),
                Acquire::Go
            );
        }

        assert_eq!(
            state.acquire(at(30), TEN_A_MINUTE, PollPriority::NewRequest),
            Acquire::Wait {
                until: at(62),
                reason: WaitReason::Budget
            }
        );
        assert_eq!(state.day_buckets, [(at(0), 10)]);
    }

    #[test]
    fn the_last_part_of_the_day_is_kept_for_urgent_polls() {
        let limits = Limits {
            per_minute: None,
            per_day: Some(10),
        };
        let mut state = CarrierState::new("COSU");
        for second in 0..8 {
            assert_eq!(
                state.acquire(at(second), limits, PollPriority::AtSea),
                Acquire::Go
            );
        }

        let Acquire::Wait { until, reason } = state.acquire(at(9), limits, PollPriority::AtSea)
        else {
            panic!("at sea may use only 80% of the day");
        };
        assert_eq!(reason, WaitReason::Budget);
        // The calls of 10:00 leave the 24 hours once their whole bucket has.
        assert_eq!(until.to_rfc3339(), "2026-03-02T10:10:00+00:00");
        assert_eq!(
            state.acquire(at(9), limits, PollPriority::NewRequest),
            Acquire::Go
        );
        assert!(matches!(
            state.acquire(at(86_400), limits, PollPriority::AtSea),
            Acquire::Wait { .. }
        ));
        assert_eq!(
            state.acquire(at(86_400 + 600), limits, PollPriority::AtSea),
            Acquire::Go
        );
    }

    #[test]
    fn no_24_hours_ever_hold_more_calls_than_the_day_budget() {
        let limits = Limits {
            per_minute: None,
            per_day: Some(100),
        };
        let mut state = CarrierState::new("COSU");
        let mut allowed = Vec::new();
        // A call asked for every 7 minutes over three days, across midnights.
        for step in 0..(3 * 24 * 60 / 7) {
            let now = at(step * 420);
            if state.acquire(now, limits, PollPriority::NewRequest) == Acquire::Go {
                allowed.push(now);
            }
        }

        for (i, start) in allowed.iter().enumerate() {
            let in_day = allowed[i..].iter().filter(|&&t| t < *start + DAY).count();
            assert!(in_day <= 100, "{in_day} calls in the 24 hours from {start}");
        }
        assert!(allowed.len() > 250, "{} calls in three days", allowed.len());
    }

    #[test]
    fn a_429_makes_the_whole_carrier_wait_for_retry_after() {
        let mut state = CarrierState::new("CMDU");
        state.record(
            at(0),
            &CallOutcome::RateLimited {
                retry_after: Some(Duration::seconds(120)),
            },
        );

        assert_eq!(
            state.acquire(at(60), Limits::default(), PollPriority::NewRequest),
            Acquire::Wait {
                until: at(120),
                reason: WaitReason::RateLimited
            }
        );
        assert_eq!(
            state.acquire(at(120), Limits::default(), PollPriority::NewRequest),
            Acquire::Go
        );
    }

    #[test]
    fn repeated_failures_open_the_circuit_and_one_probe_closes_it() {
        let mut state = CarrierState::new("MSCU");
        for second in 0..4 {
            state.record(at(second), &CallOutcome::Unavailable("503".to_owned()));
            assert!(!state.circuit_open(at(second)));
        }
        state.record(at(4), &CallOutcome::Unavailable("503".to_owned()));

        assert_eq!(
            state.acquire(at(10), Limits::default(), PollPriority::NewRequest),
            Acquire::Wait {
                until: at(34),
                reason: WaitReason::CircuitOpen
            }
        );
        assert_eq!(
            state.acquire(at(34), Limits::default(), PollPriority::NewRequest),
            Acquire::Go,
            "half-open: one probe"
        );
        assert!(
            matches!(
                state.acquire(at(35), Limits::default(), PollPriority::NewRequest),
                Acquire::Wait {
                    reason: WaitReason::CircuitOpen,
                    ..
                }
            ),
            "the probe holds the circuit"
        );
        state.record(at(36), &CallOutcome::Answered);
        assert_eq!(
            state.acquire(at(36), Limits::default(), PollPriority::NewRequest),
            Acquire::Go
        );
    }

    #[test]
    fn a_failed_probe_reopens_the_circuit_for_twice_as_long() {
        let mut state = CarrierState::new("MSCU");
        for second in 0..5 {
            state.record(at(second), &CallOutcome::Unavailable("timeout".to_owned()));
        }
        assert_eq!(
            state.acquire(at(34), Limits::default(), PollPriority::Routine),
            Acquire::Go
        );
        state.record(at(35), &CallOutcome::Unavailable("timeout".to_owned()));

        assert_eq!(state.circuit_open_until, Some(at(95)));
    }

    #[test]
    fn refused_credentials_wait_and_are_probed_until_they_work() {
        let mut state = CarrierState::new("HLCU");
        state.record(at(0), &CallOutcome::CredentialsRefused("401".to_owned()));

        assert_eq!(
            state.acquire(at(60), Limits::default(), PollPriority::NewRequest),
            Acquire::Wait {
                until: at(300),
                reason: WaitReason::CredentialsRefused
            }
        );
        assert_eq!(
            state.acquire(at(300), Limits::default(), PollPriority::NewRequest),
            Acquire::Go
        );
        state.record(at(301), &CallOutcome::Answered);
        assert_eq!(state.credentials_refused_at, None);
        assert_eq!(state.last_success_at, Some(at(301)));
    }

    #[test]
    fn the_scheduler_paces_a_day_budget_over_the_day() {
        let state = CarrierState::new("COSU");
        let limits = Limits {
            per_minute: None,
            per_day: Some(1_000),
        };

        // An hour and a minute's share of 1,000 a day: 42 calls.
        let capacity = state.capacity(at(0), limits, Duration::minutes(1)).unwrap();
        assert_eq!(capacity, 42);
        assert_eq!(
            state.capacity(at(0), TEN_A_MINUTE, Duration::minutes(1)),
            Some(10)
        );
        assert_eq!(
            state.capacity(at(0), Limits::default(), Duration::minutes(1)),
            None
        );
    }
}
