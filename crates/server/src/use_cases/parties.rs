//! Use cases for parties: the customers an account tracks shipments for.

use tidemark_domain::party::{CompanyNameProblem, company_name};
use tidemark_domain::{AccountId, Party, PartyId};
use tidemark_store::StoreError;

use crate::parts::core::Core;

#[derive(Debug, thiserror::Error)]
pub enum PartyError {
    #[error("{0}")]
    InvalidName(CompanyNameProblem),
    /// The account already has a party of that name (ignoring case).
    #[error("'{0}' already exists in this account")]
    NameTaken(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn taken(error: StoreError, name: &str) -> PartyError {
    match error {
        StoreError::Conflict { .. } => PartyError::NameTaken(name.to_owned()),
        other => PartyError::Store(other),
    }
}

pub async fn create(core: &Core, account: AccountId, raw_name: &str) -> Result<Party, PartyError> {
    let name = company_name(raw_name).map_err(PartyError::InvalidName)?;
    let now = core.clock.now();
    let party = Party {
        id: PartyId::new(core.ids.as_ref()),
        account_id: account,
        company_name: name,
        created_at: now,
        updated_at: now,
    };
    core.store
        .create_party(&party)
        .await
        .map_err(|e| taken(e, &party.company_name))?;
    Ok(party)
}

pub async fn rename(
    core: &Core,
    account: AccountId,
    id: PartyId,
    raw_name: &str,
) -> Result<Party, PartyError> {
    let name = company_name(raw_name).map_err(PartyError::InvalidName)?;
    let mut party = core.store.party(account, id).await?;
    if party.company_name == name {
        return Ok(party);
    }
    party.company_name = name;
    party.updated_at = core.clock.now();
    core.store
        .update_party(&party)
        .await
        .map_err(|e| taken(e, &party.company_name))?;
    Ok(party)
}
