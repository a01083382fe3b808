//! The injected clock: nothing in Tidemark reads the system time except [`SystemClock`].

use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};

pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The real wall clock.
#[derive(Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[expect(
        clippy::disallowed_methods,
        reason = "this is the one place that reads the system time"
    )]
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that runs `scale` times faster than the wall clock from the moment it is made,
/// for demonstrations: with a scale of 1440 a day passes every minute, so a sandbox voyage
/// plays out in minutes.
#[derive(Debug)]
pub struct ScaledClock {
    anchor: DateTime<Utc>,
    scale: i64,
}

impl ScaledClock {
    pub fn new(scale: u32) -> Self {
        Self {
            anchor: SystemClock.now(),
            scale: i64::from(scale.max(1)),
        }
    }
}

impl Clock for ScaledClock {
    fn now(&self) -> DateTime<Utc> {
        let real = SystemClock.now() - self.anchor;
        let scaled_ms = real.num_milliseconds().saturating_mul(self.scale);
        self.anchor + Duration::milliseconds(scaled_ms)
    }
}

/// A loop meant to run every `interval` of a clock `scale` times as fast as real time (the
/// [`ScaledClock`]): how much passes on that clock between two runs, and how long to wait in
/// real time. A fast demo clock would otherwise let days pass between two looks; the loop
/// then runs as often as the clock asks, but at most once a real second (so the clock's
/// interval grows instead).
pub fn scaled_interval(
    interval: std::time::Duration,
    scale: u32,
) -> (std::time::Duration, std::time::Duration) {
    let scale = scale.max(1);
    let real = (interval / scale).max(std::time::Duration::from_secs(1));
    (real.saturating_mul(scale).max(interval), real)
}

/// A clock that only moves when told to, for deterministic tests.
#[derive(Debug)]
pub struct MockClock {
    now: Mutex<DateTime<Utc>>,
}

impl MockClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Mutex::new(start),
        }
    }

    pub fn advance(&self, by: Duration) {
        let mut now = self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *now += by;
    }

    pub fn set(&self, to: DateTime<Utc>) {
        *self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = to;
    }
}

impl Clock for MockClock {
    fn now(&self) -> DateTime<Utc> {
        *self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_demo_clock_the_interval_is_the_same_in_both_times() {
        let minute = std::time::Duration::from_secs(60);
        assert_eq!(scaled_interval(minute, 1), (minute, minute));
    }

    #[test]
    fn a_demo_clock_runs_as_often_as_its_time_asks_but_at_most_once_a_real_second() {
        use std::time::Duration as Std;
        // Twice as fast: every 30 real seconds, a minute of the clock.
        assert_eq!(
            scaled_interval(Std::from_secs(60), 2),
            (Std::from_secs(60), Std::from_secs(30))
        );
        // A day every 6 seconds: once a second, four hours of the clock.
        assert_eq!(
            scaled_interval(Std::from_secs(60), 14_400),
            (Std::from_secs(14_400), Std::from_secs(1))
        );
    }

    #[test]
    fn a_scaled_clock_starts_at_the_real_time() {
        let clock = ScaledClock::new(1440);

        let drift = clock.now() - SystemClock.now();

        assert!(drift < Duration::seconds(60), "{drift}");
    }

    #[test]
    fn a_mock_clock_moves_only_when_told() {
        let start = SystemClock.now();
        let clock = MockClock::new(start);

        clock.advance(Duration::hours(2));

        assert_eq!(clock.now(), start + Duration::hours(2));
    }
}
