//! Customers that an account tracks shipments for (Terminal49's `party`).

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::ids::{AccountId, PartyId};

/// The longest company name accepted, in characters.
pub const MAX_COMPANY_NAME_CHARS: usize = 200;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Party {
    pub id: PartyId,
    pub account_id: AccountId,
    pub company_name: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Why a company name is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompanyNameProblem {
    #[error("Company name can't be blank")]
    Blank,
    #[error("Company name is too long (maximum is {MAX_COMPANY_NAME_CHARS} characters)")]
    TooLong,
}

impl CompanyNameProblem {
    /// The JSON:API error `code`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Blank => "blank",
            Self::TooLong => "too_long",
        }
    }
}

/// The company name as stored: trimmed, non-blank and of bounded length.
pub fn company_name(raw: &str) -> Result<String, CompanyNameProblem> {
    let name = raw.trim();
    if name.is_empty() {
        return Err(CompanyNameProblem::Blank);
    }
    if name.chars().count() > MAX_COMPANY_NAME_CHARS {
        return Err(CompanyNameProblem::TooLong);
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_company_name_is_stored_trimmed() {
        assert_eq!(
            company_name("  ACME Imports "),
            Ok("ACME Imports".to_owned())
        );
    }

    #[test]
    fn a_blank_company_name_is_refused() {
        assert_eq!(company_name(" \t"), Err(CompanyNameProblem::Blank));
    }

    #[test]
    fn an_overlong_company_name_is_refused() {
        assert_eq!(
            company_name(&"x".repeat(MAX_COMPANY_NAME_CHARS + 1)),
            Err(CompanyNameProblem::TooLong)
        );
    }
}
