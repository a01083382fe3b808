//! Use cases on accounts and API keys, shared by the CLI and the API.

pub mod keys;

use tidemark_domain::{Account, AccountId, ApiKey, ApiKeyId, ApiKeyScope, ApiKeySecret};
use tidemark_store::StoreError;

use crate::app::App;

/// A new key: its stored record and the secret, which is shown once and never stored.
#[derive(Debug)]
pub struct IssuedKey {
    pub key: ApiKey,
    pub secret: ApiKeySecret,
}

fn new_key(app: &App, account: AccountId, scope: ApiKeyScope) -> IssuedKey {
    let secret = ApiKeySecret::from_random_bytes(rand::random());
    let key = ApiKey {
        id: ApiKeyId::new(app.ids.as_ref()),
        account_id: account,
        prefix: secret.prefix(),
        hash: secret.hash(),
        scope,
        created_at: app.clock.now(),
        revoked_at: None,
    };
    IssuedKey { key, secret }
}

/// The account with this name, created if it does not exist yet.
pub async fn find_or_create_account(app: &App, name: &str) -> Result<Account, StoreError> {
    if let Some(account) = app.store.account_by_name(name).await? {
        return Ok(account);
    }
    let account = Account {
        id: AccountId::new(app.ids.as_ref()),
        name: name.to_owned(),
        created_at: app.clock.now(),
    };
    match app.store.create_account(&account).await {
        Ok(()) => Ok(account),
        // Another process created it between our read and write.
        Err(StoreError::Conflict { .. }) => app
            .store
            .account_by_name(name)
            .await?
            .ok_or(StoreError::NotFound),
        Err(error) => Err(error),
    }
}

/// Issues a key for `account`.
pub async fn issue_key(
    app: &App,
    account: AccountId,
    scope: ApiKeyScope,
) -> Result<IssuedKey, StoreError> {
    let issued = new_key(app, account, scope);
    app.store.insert_api_key(&issued.key).await?;
    Ok(issued)
}

/// On a database with no account at all, creates `default` and a read-write key for it.
/// Returns the key when it did so.
pub async fn bootstrap(app: &App) -> Result<Option<IssuedKey>, StoreError> {
    let account = Account {
        id: AccountId::new(app.ids.as_ref()),
        name: "default".to_owned(),
        created_at: app.clock.now(),
    };
    let issued = new_key(app, account.id, ApiKeyScope::ReadWrite);
    let created = app
        .store
        .bootstrap_first_account(&account, &issued.key)
        .await?;
    Ok(created.then_some(issued))
}

/// Revokes one of the account's keys and forgets it in this process at once.
pub async fn revoke_key(app: &App, account: AccountId, id: ApiKeyId) -> Result<ApiKey, StoreError> {
    let key = app
        .store
        .revoke_api_key(account, id, app.clock.now())
        .await?;
    app.auth.forget(&key.hash);
    Ok(key)
}
