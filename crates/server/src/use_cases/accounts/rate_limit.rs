//! Per-key rate limiting over a rolling minute.
//!
//! A sliding-window counter (the previous fixed minute's count weighted by how much of it
//! still overlaps the rolling window, plus the current minute's count) keeps memory at one
//! small entry per key whatever the limit. Limits are per process: with N API processes a
//! key may make up to N times the limit.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use chrono::{DateTime, Utc};
use tidemark_domain::ApiKeyId;

const WINDOW_SECONDS: i64 = 60;

/// What a check decided, and what to tell the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimitStatus {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the window has room again (for `RateLimit-Reset` and `Retry-After`).
    pub reset_seconds: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Window {
    /// Start of the current fixed minute, in seconds since the epoch.
    started: i64,
    current: u32,
    previous: u32,
}

/// Rate limits keyed by API key and bucket (`"default"`, later `"refresh"`, …).
#[derive(Debug)]
pub struct RateLimiter {
    default_limit: u32,
    windows: Mutex<HashMap<(ApiKeyId, &'static str), Window>>,
}

impl RateLimiter {
    pub fn new(default_limit: u32) -> Self {
        Self {
            default_limit,
            windows: Mutex::new(HashMap::new()),
        }
    }

    pub fn default_limit(&self) -> u32 {
        self.default_limit
    }

    /// Counts one request of `key` in `bucket` against `limit`, unless over it.
    pub fn check(
        &self,
        key: ApiKeyId,
        bucket: &'static str,
        limit: u32,
        now: DateTime<Utc>,
    ) -> RateLimitStatus {
        let now_ms = now.timestamp_millis();
        let minute = now.timestamp().div_euclid(WINDOW_SECONDS) * WINDOW_SECONDS;
        let mut windows = self.windows.lock().unwrap_or_else(PoisonError::into_inner);
        let window = windows.entry((key, bucket)).or_default();
        if window.started != minute {
            window.previous = if window.started == minute - WINDOW_SECONDS {
                window.current
            } else {
                0
            };
            window.current = 0;
            window.started = minute;
        }
        let elapsed_ms = now_ms - minute * 1000;
        let overlap = 1.0 - (elapsed_ms as f64 / (WINDOW_SECONDS * 1000) as f64);
        let weighted = f64::from(window.previous) * overlap + f64::from(window.current);
        let allowed = weighted + 1.0 <= f64::from(limit);
        if allowed {
            window.current += 1;
        }
        let used = f64::from(window.previous) * overlap + f64::from(window.current);
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "clamped to 0..=limit first"
        )]
        let remaining = (f64::from(limit) - used)
            .floor()
            .clamp(0.0, f64::from(limit)) as u32;
        let to_next_minute = u64::try_from(WINDOW_SECONDS * 1000 - elapsed_ms)
            .unwrap_or(0)
            .div_ceil(1000)
            .max(1);
        RateLimitStatus {
            allowed,
            limit,
            remaining,
            reset_seconds: to_next_minute,
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};
    use tidemark_domain::{IdGenerator, SequentialIds};

    use super::*;

    fn at(seconds: i64) -> DateTime<Utc> {
        // A whole minute, so offsets below are seconds into a fixed window.
        Utc.timestamp_opt(1_799_999_940, 0).unwrap() + Duration::seconds(seconds)
    }

    #[test]
    fn requests_under_the_limit_are_allowed_and_counted_down() {
        let limiter = RateLimiter::new(3);
        let key = ApiKeyId(SequentialIds::default().next_id());

        let first = limiter.check(key, "default", 3, at(0));
        let second = limiter.check(key, "default", 3, at(1));

        assert!(first.allowed && second.allowed);
        assert_eq!(first.remaining, 2);
        assert_eq!(second.remaining, 1);
    }

    #[test]
    fn the_request_over_the_limit_is_refused_with_a_reset_time() {
        let limiter = RateLimiter::new(2);
        let key = ApiKeyId(SequentialIds::default().next_id());
        limiter.check(key, "default", 2, at(10));
        limiter.check(key, "default", 2, at(11));

        let third = limiter.check(key, "default", 2, at(12));

        assert!(!third.allowed);
        assert_eq!(third.remaining, 0);
        assert_eq!(third.reset_seconds, 48);
    }

    #[test]
    fn the_window_rolls_so_a_burst_still_counts_a_minute_later() {
        let limiter = RateLimiter::new(10);
        let key = ApiKeyId(SequentialIds::default().next_id());
        for second in 50..60 {
            assert!(limiter.check(key, "default", 10, at(second)).allowed);
        }

        let just_after = limiter.check(key, "default", 10, at(61));
        let much_later = limiter.check(key, "default", 10, at(125));

        assert!(
            !just_after.allowed,
            "most of the burst is still in the window"
        );
        assert!(much_later.allowed);
    }

    #[test]
    fn keys_and_buckets_are_limited_separately() {
        let limiter = RateLimiter::new(1);
        let ids = SequentialIds::default();
        let (a, b) = (ApiKeyId(ids.next_id()), ApiKeyId(ids.next_id()));
        limiter.check(a, "default", 1, at(0));

        assert!(limiter.check(b, "default", 1, at(0)).allowed);
        assert!(limiter.check(a, "refresh", 1, at(0)).allowed);
        assert!(!limiter.check(a, "default", 1, at(0)).allowed);
    }
}
