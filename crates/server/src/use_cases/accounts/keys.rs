//! Checking a presented API key. Accepted keys are cached per process for
//! `auth_cache_seconds` so the hot path needs no database round trip; a revocation in this
//! process takes effect at once, elsewhere within that time.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use chrono::{DateTime, Duration, Utc};
use tidemark_domain::{ApiKey, ApiKeySecret};
use tidemark_store::StoreError;

use crate::app::App;

/// Accepted keys by hash, with when they were read from the store.
#[derive(Debug)]
pub struct AuthCache {
    ttl: Duration,
    entries: RwLock<HashMap<String, (ApiKey, DateTime<Utc>)>>,
}

impl AuthCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: RwLock::new(HashMap::new()),
        }
    }

    fn get(&self, hash: &str, now: DateTime<Utc>) -> Option<ApiKey> {
        let entries = self.entries.read().unwrap_or_else(PoisonError::into_inner);
        entries
            .get(hash)
            .filter(|(_, fetched)| now - *fetched < self.ttl)
            .map(|(key, _)| key.clone())
    }

    fn put(&self, key: ApiKey, now: DateTime<Utc>) {
        let mut entries = self.entries.write().unwrap_or_else(PoisonError::into_inner);
        // Bounded: keys are few, but never let a flood of distinct keys grow it forever.
        if entries.len() > 10_000 {
            entries.retain(|_, (_, fetched)| now - *fetched < self.ttl);
        }
        entries.insert(key.hash.clone(), (key, now));
    }

    /// Drops a key from this process's cache (after revocation).
    pub fn forget(&self, hash: &str) {
        self.entries
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(hash);
    }
}

/// Why a presented key was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum KeyRejected {
    /// No such key, or it was revoked.
    #[error("unknown or revoked API key")]
    Unknown,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The live key whose secret is `secret`.
pub async fn authenticate(app: &App, secret: &str) -> Result<ApiKey, KeyRejected> {
    let hash = ApiKeySecret::from_presented(secret).hash();
    let now = app.clock.now();
    let key = match app.auth.get(&hash, now) {
        Some(key) => key,
        None => {
            let key = app
                .store
                .api_key_by_hash(&hash)
                .await?
                .ok_or(KeyRejected::Unknown)?;
            app.auth.put(key.clone(), now);
            key
        }
    };
    if key.revoked_at.is_some() {
        return Err(KeyRejected::Unknown);
    }
    Ok(key)
}

/// The account's key `id`, if it is still live (a signed-in console session names its key
/// by id, so revoking the key ends the session).
pub async fn live_key(
    app: &App,
    account: tidemark_domain::AccountId,
    id: tidemark_domain::ApiKeyId,
) -> Result<ApiKey, KeyRejected> {
    app.store
        .list_api_keys(account)
        .await?
        .into_iter()
        .find(|key| key.id == id && key.revoked_at.is_none())
        .ok_or(KeyRejected::Unknown)
}
