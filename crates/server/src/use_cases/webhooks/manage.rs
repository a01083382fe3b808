//! Use cases on webhook subscriptions: create, change, rotate the secret.

use rand::RngCore;
use tidemark_domain::webhook::WebhookHeader as StoredHeader;
use tidemark_domain::{AccountId, Webhook, WebhookId};
use tidemark_store::StoreError;

use crate::parts::core::Core;
use crate::use_cases::webhooks::headers::{
    Problem, WebhookHeader, display_name, validate_events, validate_headers, validate_url,
};
use crate::use_cases::webhooks::signing::{SECRET_BYTES, generate_secret};

#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// Every problem found, so the client can fix them all at once.
    #[error("invalid webhook")]
    Invalid(Vec<Problem>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a client sends; absent fields keep their value on update.
#[derive(Debug, Default)]
pub struct WebhookInput {
    pub url: Option<String>,
    pub active: Option<bool>,
    pub events: Option<Vec<String>>,
    pub headers: Option<Vec<WebhookHeader>>,
}

fn new_secret() -> String {
    let mut random = [0_u8; SECRET_BYTES];
    rand::rng().fill_bytes(&mut random);
    generate_secret(random)
}

/// Applies `input` to `webhook`, returning every problem. `allow_private` is
/// `webhooks_allow_private`: whether a URL may name a non-public address.
fn apply(
    allow_private: bool,
    webhook: &mut Webhook,
    input: WebhookInput,
) -> Result<(), Vec<Problem>> {
    let mut problems = Vec::new();
    if let Some(url) = input.url {
        match validate_url(&url, allow_private) {
            Ok(url) => webhook.url = url.to_string(),
            Err(problem) => problems.push(problem),
        }
    }
    if let Some(active) = input.active {
        webhook.active = active;
    }
    if let Some(events) = input.events {
        problems.extend(validate_events(&events));
        webhook.events = events;
    }
    if let Some(headers) = input.headers {
        problems.extend(validate_headers(&headers));
        webhook.headers = headers
            .into_iter()
            .map(|h| StoredHeader {
                name: display_name(&h.name),
                value: h.value,
            })
            .collect();
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

pub async fn create(
    core: &Core,
    allow_private: bool,
    account: AccountId,
    mut input: WebhookInput,
) -> Result<Webhook, WebhookError> {
    let now = core.clock.now();
    let mut webhook = Webhook {
        id: WebhookId::new(core.ids.as_ref()),
        account_id: account,
        url: String::new(),
        active: true,
        events: Vec::new(),
        headers: Vec::new(),
        secret: new_secret(),
        previous_secret: None,
        previous_secret_expires_at: None,
        failing_since: None,
        created_at: now,
        updated_at: now,
    };
    // Required on create: a missing url or events list is reported as blank.
    input.url.get_or_insert_with(String::new);
    input.events.get_or_insert_with(Vec::new);
    apply(allow_private, &mut webhook, input).map_err(WebhookError::Invalid)?;
    core.store.create_webhook(&webhook).await?;
    Ok(webhook)
}

pub async fn update(
    core: &Core,
    allow_private: bool,
    account: AccountId,
    id: WebhookId,
    input: WebhookInput,
) -> Result<Webhook, WebhookError> {
    let mut webhook = core.store.webhook(account, id).await?;
    apply(allow_private, &mut webhook, input).map_err(WebhookError::Invalid)?;
    webhook.updated_at = core.clock.now();
    core.store.update_webhook(&webhook).await?;
    Ok(webhook)
}

/// Issues a new secret; the old one keeps signing for a day so receivers can switch.
pub async fn rotate_secret(
    core: &Core,
    account: AccountId,
    id: WebhookId,
) -> Result<Webhook, StoreError> {
    let mut webhook = core.store.webhook(account, id).await?;
    webhook.rotate_secret(new_secret(), core.clock.now());
    core.store.update_webhook(&webhook).await?;
    Ok(webhook)
}
