//! Accepted API keys, cached per process for `auth_cache_seconds` so the hot path needs no
//! database round trip (the checking itself is `use_cases::accounts::keys`).

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use chrono::{DateTime, Duration, Utc};
use tidemark_domain::ApiKey;

/// At most this many keys are cached (a few hundred bytes each). Keys are few; this only
/// keeps a flood of distinct valid keys from growing the cache without end.
const MAX_CACHED_KEYS: usize = 10_000;

/// A full cache looks for expired keys at most this often (one pass over it), so a flood
/// of distinct keys costs a pass a second, not one per request.
const SWEEP_EVERY: Duration = Duration::seconds(1);

/// Accepted keys by hash, with when they were read from the store.
#[derive(Debug)]
pub struct AuthCache {
    ttl: Duration,
    entries: RwLock<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    by_hash: HashMap<String, (ApiKey, DateTime<Utc>)>,
    /// When a full cache last dropped its expired keys.
    swept: Option<DateTime<Utc>>,
}

impl AuthCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: RwLock::new(Entries::default()),
        }
    }

    pub(crate) fn get(&self, hash: &str, now: DateTime<Utc>) -> Option<ApiKey> {
        let entries = self.entries.read().unwrap_or_else(PoisonError::into_inner);
        entries
            .by_hash
            .get(hash)
            .filter(|(_, fetched)| now - *fetched < self.ttl)
            .map(|(key, _)| key.clone())
    }

    pub(crate) fn put(&self, key: ApiKey, now: DateTime<Utc>) {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        let Entries { by_hash, swept } = &mut *entries;
        if by_hash.len() >= MAX_CACHED_KEYS && !by_hash.contains_key(&key.hash) {
            if swept.is_none_or(|at| now - at >= SWEEP_EVERY) {
                *swept = Some(now);
                by_hash.retain(|_, (_, fetched)| now - *fetched < self.ttl);
            }
            if by_hash.len() >= MAX_CACHED_KEYS {
                // Full of fresh keys: this one is read from the store each time until
                // some expire.
                return;
            }
        }
        by_hash.insert(key.hash.clone(), (key, now));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .by_hash
            .len()
    }

    /// Drops a key from this process's cache (after revocation).
    pub fn forget(&self, hash: &str) {
        self.entries
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .by_hash
            .remove(hash);
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use tidemark_domain::{AccountId, ApiKeyId, ApiKeyScope, IdGenerator, SequentialIds};

    use super::*;

    fn key(ids: &SequentialIds, n: usize) -> ApiKey {
        ApiKey {
            id: ApiKeyId(ids.next_id()),
            account_id: AccountId(ids.next_id()),
            prefix: format!("tm_{n}"),
            hash: format!("{n:064x}"),
            scope: ApiKeyScope::ReadOnly,
            created_at: Utc.timestamp_opt(1_800_000_000, 0).unwrap(),
            revoked_at: None,
        }
    }

    #[test]
    fn a_flood_of_distinct_keys_leaves_at_most_the_cap() {
        let cache = AuthCache::new(Duration::seconds(10));
        let ids = SequentialIds::default();
        let now = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
        for n in 0..(MAX_CACHED_KEYS * 2) {
            cache.put(key(&ids, n), now);
        }
        assert_eq!(cache.len(), MAX_CACHED_KEYS);
        assert!(
            cache.get(&format!("{:064x}", 0), now).is_some(),
            "the first stay"
        );

        // Once they expire, new keys take their place.
        let later = now + Duration::seconds(11);
        cache.put(key(&ids, usize::MAX), later);
        assert_eq!(cache.len(), 1);
        assert!(cache.get(&format!("{:064x}", usize::MAX), later).is_some());
    }
}
