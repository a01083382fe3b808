//! Rate limiting over a rolling minute: per API key, and per client address for failed
//! authentication ([`RateLimiter<IpAddr>`](RateLimiter), see [`client_key`]).
//!
//! A sliding-window counter (the previous fixed minute's count weighted by how much of it
//! still overlaps the rolling window, plus the current minute's count) keeps memory at one
//! small entry per key whatever the limit. Limits are per process: with N API processes a
//! key may make up to N times the limit.
//!
//! Memory does not grow with traffic: once a minute (on the first check of each minute)
//! windows that no longer count anything are dropped, and at most `max_entries` windows
//! are kept; while full, keys not yet tracked are refused until the next minute's sweep
//! makes room.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Mutex, PoisonError};

use chrono::{DateTime, Utc};
use tidemark_domain::ApiKeyId;

/// Refreshes per minute per API key, as in Terminal49: each one costs a carrier call. The
/// API and the console count against the same bucket.
pub const REFRESH_PER_MINUTE: u32 = 10;

const WINDOW_SECONDS: i64 = 60;

/// The windows a [`RateLimiter::new`] keeps at most (one per API key and bucket in use in
/// the last two minutes, about 100 bytes each).
pub const MAX_TRACKED_KEYS: usize = 100_000;

/// The bucket of a client address's failed authentications: API requests with a bad key and
/// refused console sign-ins count together.
pub const AUTH_FAILURES: &str = "auth_failures";

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

/// Rate limits keyed by `K` (an API key, or a client address) and bucket (`"default"`,
/// `"refresh"`, …).
#[derive(Debug)]
pub struct RateLimiter<K = ApiKeyId> {
    default_limit: u32,
    /// At most this many windows are tracked: when full, new keys are refused until the
    /// next minute's sweep drops windows that aged out (memory stays bounded whoever the
    /// clients are).
    max_entries: usize,
    state: Mutex<Windows<K>>,
}

#[derive(Debug)]
struct Windows<K> {
    by_key: HashMap<(K, &'static str), Window>,
    /// The minute (its start, in seconds since the epoch) of the last sweep.
    swept: i64,
}

impl<K: Eq + Hash> Windows<K> {
    /// On the first call in a new minute, drops the windows older than the previous
    /// minute: they count nothing any more. Windows only age at minute boundaries, so one
    /// sweep a minute finds them all; its cost, one pass over at most `max_entries`
    /// windows, is spread over that minute's checks.
    fn sweep(&mut self, minute: i64) {
        if self.swept == minute {
            return;
        }
        self.swept = minute;
        self.by_key
            .retain(|_, window| window.started >= minute - WINDOW_SECONDS);
        // Give back the memory of a past burst of keys.
        if self.by_key.capacity() > 64 && self.by_key.len() < self.by_key.capacity() / 4 {
            self.by_key.shrink_to(self.by_key.len() * 2);
        }
    }
}

impl RateLimiter {
    /// A limiter of API keys, tracking at most [`MAX_TRACKED_KEYS`] windows.
    pub fn new(default_limit: u32) -> Self {
        Self::bounded(default_limit, MAX_TRACKED_KEYS)
    }
}

/// What a request is counted against: as in Terminal49, creating tracking requests has a
/// bucket of its own (so a bulk import does not starve reads), and refreshes a small one.
/// The API and the console map their routes to the same buckets, so a key has one set of
/// limits whichever door it comes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bucket {
    Default,
    TrackingRequests,
    Refresh,
}

impl Bucket {
    pub fn name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::TrackingRequests => "tracking_requests",
            Self::Refresh => "refresh",
        }
    }

    /// The bucket's limit a minute, given the configured default.
    pub fn limit(self, default_limit: u32) -> u32 {
        match self {
            Self::Default | Self::TrackingRequests => default_limit,
            Self::Refresh => REFRESH_PER_MINUTE,
        }
    }
}

/// The key a client address is limited by: an IPv4 address, or an IPv6 address's /64 (what
/// one subscriber is usually given, so that rotating addresses inside it does not help).
pub fn client_key(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(Ipv6Addr::from(prefix))
            }
        },
    }
}

impl<K: Eq + Hash + Copy> RateLimiter<K> {
    /// A limiter that tracks at most `max_entries` keys.
    pub fn bounded(default_limit: u32, max_entries: usize) -> Self {
        Self {
            default_limit,
            max_entries,
            state: Mutex::new(Windows {
                by_key: HashMap::new(),
                swept: i64::MIN,
            }),
        }
    }

    fn windows(&self) -> std::sync::MutexGuard<'_, Windows<K>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many windows are tracked now.
    pub fn tracked(&self) -> usize {
        self.windows().by_key.len()
    }

    /// Whether `key` has used up `limit` in `bucket`, without counting anything.
    pub fn exhausted(&self, key: K, bucket: &'static str, limit: u32, now: DateTime<Utc>) -> bool {
        let windows = self.windows();
        let Some(window) = windows.by_key.get(&(key, bucket)) else {
            return false;
        };
        let minute = now.timestamp().div_euclid(WINDOW_SECONDS) * WINDOW_SECONDS;
        let (previous, current) = if window.started == minute {
            (window.previous, window.current)
        } else if window.started == minute - WINDOW_SECONDS {
            (window.current, 0)
        } else {
            (0, 0)
        };
        let elapsed_ms = now.timestamp_millis() - minute * 1000;
        let overlap = 1.0 - (elapsed_ms as f64 / (WINDOW_SECONDS * 1000) as f64);
        f64::from(previous) * overlap + f64::from(current) + 1.0 > f64::from(limit)
    }

    pub fn default_limit(&self) -> u32 {
        self.default_limit
    }

    /// Counts one request of `key` in `bucket` against `limit`, unless over it.
    pub fn check(
        &self,
        key: K,
        bucket: &'static str,
        limit: u32,
        now: DateTime<Utc>,
    ) -> RateLimitStatus {
        let now_ms = now.timestamp_millis();
        let minute = now.timestamp().div_euclid(WINDOW_SECONDS) * WINDOW_SECONDS;
        let mut windows = self.windows();
        windows.sweep(minute);
        if windows.by_key.len() >= self.max_entries && !windows.by_key.contains_key(&(key, bucket))
        {
            // Full of windows that still count: this minute's sweep already ran, so none
            // ages out before the next minute.
            return RateLimitStatus {
                allowed: false,
                limit,
                remaining: 0,
                reset_seconds: u64::try_from(WINDOW_SECONDS).unwrap_or(60),
            };
        }
        let window = windows.by_key.entry((key, bucket)).or_default();
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
    fn an_exhausted_key_is_seen_without_counting() {
        let limiter = RateLimiter::bounded(2, 10);
        let address: IpAddr = "192.0.2.7".parse().unwrap();
        assert!(!limiter.exhausted(address, "auth", 2, at(0)));
        limiter.check(address, "auth", 2, at(0));
        assert!(!limiter.exhausted(address, "auth", 2, at(1)));
        limiter.check(address, "auth", 2, at(1));

        assert!(limiter.exhausted(address, "auth", 2, at(2)));
        assert!(!limiter.exhausted(address, "auth", 2, at(200)));
    }

    #[test]
    fn a_bounded_limiter_forgets_old_windows_and_refuses_new_keys_when_full() {
        let limiter = RateLimiter::bounded(5, 2);
        let address = |n: u8| IpAddr::from([192, 0, 2, n]);
        limiter.check(address(1), "auth", 5, at(0));
        limiter.check(address(2), "auth", 5, at(0));

        assert!(!limiter.check(address(3), "auth", 5, at(1)).allowed, "full");
        assert!(
            limiter.check(address(1), "auth", 5, at(1)).allowed,
            "known keys count on"
        );
        assert!(
            limiter.check(address(3), "auth", 5, at(130)).allowed,
            "old windows were dropped"
        );
    }

    #[test]
    fn a_flood_of_distinct_addresses_leaves_at_most_the_cap() {
        let limiter = RateLimiter::bounded(5, 1_000);
        for n in 0..100_000u32 {
            let address = IpAddr::from(n.to_be_bytes());
            limiter.check(address, AUTH_FAILURES, 5, at(i64::from(n % 50)));
        }
        assert_eq!(limiter.tracked(), 1_000);

        // Two minutes later the flood counts nothing: the first check sweeps it away.
        let later: IpAddr = "198.51.100.1".parse().unwrap();
        assert!(limiter.check(later, AUTH_FAILURES, 5, at(180)).allowed);
        assert_eq!(limiter.tracked(), 1);
    }

    #[test]
    fn idle_windows_are_dropped_even_below_the_cap() {
        let limiter = RateLimiter::new(100);
        let ids = SequentialIds::default();
        for second in 0..50 {
            let key = ApiKeyId(ids.next_id());
            limiter.check(key, "default", 100, at(second));
            limiter.check(key, "refresh", 100, at(second));
        }
        assert_eq!(limiter.tracked(), 100);

        // The previous minute's windows still count (the rolling window overlaps it)…
        let active = ApiKeyId(ids.next_id());
        limiter.check(active, "default", 100, at(61));
        assert_eq!(limiter.tracked(), 101);
        // …those from before it no longer do.
        limiter.check(active, "default", 100, at(121));
        assert_eq!(limiter.tracked(), 1);
    }

    #[test]
    fn api_key_limiters_are_bounded_too() {
        let limiter = RateLimiter::new(100);
        let ids = SequentialIds::default();
        for _ in 0..(MAX_TRACKED_KEYS + 10_000) {
            limiter.check(ApiKeyId(ids.next_id()), "default", 100, at(0));
        }
        assert_eq!(limiter.tracked(), MAX_TRACKED_KEYS);
    }

    #[test]
    fn ipv6_clients_are_limited_by_their_64_prefix() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        assert_eq!(client_key(a), client_key(b));
        assert_eq!(client_key(mapped), "192.0.2.1".parse::<IpAddr>().unwrap());
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
