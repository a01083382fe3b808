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
