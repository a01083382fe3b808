//! Durable background jobs: their states and the retry rule.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::ids::JobId;

/// Where a job is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Waiting for `run_at`, or for a worker.
    Queued,
    /// Claimed by a worker until `locked_until`; after that another worker may take it.
    Running,
    Succeeded,
    /// Gave up: a permanent error, or too many attempts.
    Failed,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Succeeded => "succeeded",
            Self::Failed => "failed",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "queued" => Some(Self::Queued),
            "running" => Some(Self::Running),
            "succeeded" => Some(Self::Succeeded),
            "failed" => Some(Self::Failed),
            _ => None,
        }
    }
}

/// A job to put on the queue.
#[derive(Clone, Debug, PartialEq)]
pub struct NewJob {
    pub id: JobId,
    /// The job's kind, which names its handler (`"poll_container"`).
    pub kind: String,
    pub payload: serde_json::Value,
    /// While a job with this key is queued or running, enqueuing another is a no-op.
    pub dedup_key: Option<String>,
    pub run_at: DateTime<Utc>,
    pub max_attempts: u32,
}

/// A job as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub id: JobId,
    pub kind: String,
    pub payload: serde_json::Value,
    pub dedup_key: Option<String>,
    pub state: JobState,
    /// Attempts started so far, including the current one while running.
    pub attempts: u32,
    pub max_attempts: u32,
    pub run_at: DateTime<Utc>,
    pub locked_until: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Exponential backoff with jitter and a cap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    pub base: Duration,
    pub cap: Duration,
    /// Fraction of the delay that is randomized, in both directions (0.2 = ±20%).
    pub jitter: f64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            base: Duration::seconds(5),
            cap: Duration::hours(1),
            jitter: 0.2,
        }
    }
}

impl RetryPolicy {
    /// Delay before the next attempt after `attempts` failed ones. `random` is uniform in
    /// [0, 1), supplied by the caller so this stays pure.
    pub fn delay_after(&self, attempts: u32, random: f64) -> Duration {
        let exponent = attempts.saturating_sub(1).min(30);
        let base_ms = self.base.num_milliseconds().max(1);
        let cap_ms = self.cap.num_milliseconds().max(base_ms);
        let raw_ms = base_ms.saturating_mul(1_i64 << exponent).min(cap_ms);
        let spread = self.jitter.clamp(0.0, 1.0) * (random.clamp(0.0, 1.0) * 2.0 - 1.0);
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_precision_loss,
            reason = "delays are far below 2^52 ms"
        )]
        let jittered = (raw_ms as f64 * (1.0 + spread)).round() as i64;
        Duration::milliseconds(jittered.clamp(1, cap_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_jitter() -> RetryPolicy {
        RetryPolicy {
            jitter: 0.0,
            ..RetryPolicy::default()
        }
    }

    #[test]
    fn backoff_doubles_with_each_attempt() {
        let policy = no_jitter();

        assert_eq!(policy.delay_after(1, 0.5), Duration::seconds(5));
        assert_eq!(policy.delay_after(2, 0.5), Duration::seconds(10));
        assert_eq!(policy.delay_after(3, 0.5), Duration::seconds(20));
    }

    #[test]
    fn backoff_never_exceeds_the_cap() {
        assert_eq!(no_jitter().delay_after(40, 0.5), Duration::hours(1));
    }

    #[test]
    fn jitter_stays_within_its_fraction() {
        let policy = RetryPolicy::default();

        let low = policy.delay_after(2, 0.0);
        let high = policy.delay_after(2, 0.999_999);

        assert_eq!(low, Duration::seconds(8));
        assert!(high > Duration::milliseconds(11_990) && high <= Duration::seconds(12));
    }
}
