//! Use cases on accounts and API keys, shared by the CLI and the API.

pub mod keys;

use tidemark_domain::{Account, AccountId, ApiKey, ApiKeyId, ApiKeyScope, ApiKeySecret};
use tidemark_store::StoreError;

use crate::parts::auth_cache::AuthCache;
use crate::parts::core::Core;

/// A new key: its stored record and the secret, which is shown once and never stored.
#[derive(Debug)]
pub struct IssuedKey {
    pub key: ApiKey,
    pub secret: ApiKeySecret,
}

fn new_key(core: &Core, account: AccountId, scope: ApiKeyScope) -> IssuedKey {
    let secret = ApiKeySecret::from_random_bytes(rand::random());
    let key = ApiKey {
        id: ApiKeyId::new(core.ids.as_ref()),
        account_id: account,
        prefix: secret.prefix(),
        hash: secret.hash(),
        scope,
        created_at: core.clock.now(),
        revoked_at: None,
    };
    IssuedKey { key, secret }
}

/// The account with this name, created if it does not exist yet.
pub async fn find_or_create_account(core: &Core, name: &str) -> Result<Account, StoreError> {
    if let Some(account) = core.store.account_by_name(name).await? {
        return Ok(account);
    }
    let account = Account {
        id: AccountId::new(core.ids.as_ref()),
        name: name.to_owned(),
        created_at: core.clock.now(),
    };
    match core.store.create_account(&account).await {
        Ok(()) => Ok(account),
        // Another process created it between our read and write.
        Err(StoreError::Conflict { .. }) => core
            .store
            .account_by_name(name)
            .await?
            .ok_or(StoreError::NotFound),
        Err(error) => Err(error),
    }
}

/// Issues a key for `account`.
pub async fn issue_key(
    core: &Core,
    account: AccountId,
    scope: ApiKeyScope,
) -> Result<IssuedKey, StoreError> {
    let issued = new_key(core, account, scope);
    core.store.insert_api_key(&issued.key).await?;
    Ok(issued)
}

/// On a database with no account at all, creates `default` and a read-write key for it.
/// Returns the key when it did so.
pub async fn bootstrap(core: &Core) -> Result<Option<IssuedKey>, StoreError> {
    let account = Account {
        id: AccountId::new(core.ids.as_ref()),
        name: "default".to_owned(),
        created_at: core.clock.now(),
    };
    let issued = new_key(core, account.id, ApiKeyScope::ReadWrite);
    let created = core
        .store
        .bootstrap_first_account(&account, &issued.key)
        .await?;
    Ok(created.then_some(issued))
}

/// Revokes one of the account's keys and forgets it in this process at once.
pub async fn revoke_key(
    core: &Core,
    auth: &AuthCache,
    account: AccountId,
    id: ApiKeyId,
) -> Result<ApiKey, StoreError> {
    let key = core
        .store
        .revoke_api_key(account, id, core.clock.now())
        .await?;
    auth.forget(&key.hash);
    Ok(key)
}
