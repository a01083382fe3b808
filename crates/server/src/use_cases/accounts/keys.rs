//! Checking a presented API key. Accepted keys are cached per process for
//! `auth_cache_seconds` so the hot path needs no database round trip; a revocation in this
//! process takes effect at once, elsewhere within that time.

use tidemark_domain::{ApiKey, ApiKeySecret};
use tidemark_store::StoreError;

use crate::parts::auth_cache::AuthCache;
use crate::parts::core::Core;

/// Why a presented key was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum KeyRejected {
    /// No such key, or it was revoked.
    #[error("unknown or revoked API key")]
    Unknown,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The live key whose secret is `secret`, from `auth` when it was accepted recently.
pub async fn authenticate(
    core: &Core,
    auth: &AuthCache,
    secret: &str,
) -> Result<ApiKey, KeyRejected> {
    let hash = ApiKeySecret::from_presented(secret).hash();
    let now = core.clock.now();
    let key = match auth.get(&hash, now) {
        Some(key) => key,
        None => {
            let key = core
                .store
                .api_key_by_hash(&hash)
                .await?
                .ok_or(KeyRejected::Unknown)?;
            auth.put(key.clone(), now);
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
    core: &Core,
    account: tidemark_domain::AccountId,
    id: tidemark_domain::ApiKeyId,
) -> Result<ApiKey, KeyRejected> {
    core.store
        .list_api_keys(account)
        .await?
        .into_iter()
        .find(|key| key.id == id && key.revoked_at.is_none())
        .ok_or(KeyRejected::Unknown)
}
