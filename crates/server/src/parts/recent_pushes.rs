//! The digests of carriers' push bodies accepted recently, per process, so a replayed push
//! is ignored (the pushes themselves are `use_cases::tracking::push`).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use chrono::{DateTime, Duration, Utc};
use sha2::Sha256;

/// How long an accepted push's body is remembered, so a replay of it is ignored.
const REPLAY_WINDOW: Duration = Duration::hours(24);

/// At most this many bodies are remembered (40 bytes each); past it, the oldest half goes.
/// A carrier's real pushes are far fewer a day, and only signed ones are remembered.
const MAX_REMEMBERED: usize = 100_000;

/// The digests of push bodies accepted recently, per process.
#[derive(Debug, Default)]
pub struct RecentPushes {
    seen: Mutex<HashMap<[u8; 32], DateTime<Utc>>>,
}

impl RecentPushes {
    /// Remembers `body` as accepted at `now`; false when it already was within the window.
    pub(crate) fn first_time(&self, scac: &str, body: &[u8], now: DateTime<Utc>) -> bool {
        use sha2::Digest;
        let digest: [u8; 32] = Sha256::new()
            .chain_update(scac.as_bytes())
            .chain_update([0])
            .chain_update(body)
            .finalize()
            .into();
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seen
            .get(&digest)
            .is_some_and(|at| now - *at < REPLAY_WINDOW)
        {
            return false;
        }
        if seen.len() >= MAX_REMEMBERED {
            seen.retain(|_, at| now - *at < REPLAY_WINDOW);
            if seen.len() >= MAX_REMEMBERED {
                let mut times: Vec<DateTime<Utc>> = seen.values().copied().collect();
                times.sort_unstable();
                if let Some(median) = times.get(times.len() / 2).copied() {
                    seen.retain(|_, at| *at > median);
                }
            }
        }
        seen.insert(digest, now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_push_body_accepted_once_is_refused_again_within_a_day() {
        let recent = RecentPushes::default();
        let now = DateTime::<Utc>::UNIX_EPOCH + Duration::days(20_000);

        assert!(recent.first_time("MAEU", b"[]", now));
        assert!(!recent.first_time("MAEU", b"[]", now + Duration::hours(23)));
        assert!(recent.first_time("MAEU", b"[]", now + Duration::hours(25)));
    }

    #[test]
    fn the_same_body_pushed_for_another_carrier_is_not_a_replay() {
        let recent = RecentPushes::default();
        let now = DateTime::<Utc>::UNIX_EPOCH;

        assert!(recent.first_time("MAEU", b"[]", now));
        assert!(recent.first_time("HLCU", b"[]", now));
    }
}
