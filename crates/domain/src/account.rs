//! Accounts and their API keys.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::ids::{AccountId, ApiKeyId};

/// Every tenant-scoped resource belongs to exactly one account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Account {
    pub id: AccountId,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

/// What a key may do: read-only keys are refused every write with 403.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApiKeyScope {
    ReadOnly,
    ReadWrite,
}

impl ApiKeyScope {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read_only",
            Self::ReadWrite => "read_write",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "read_only" => Some(Self::ReadOnly),
            "read_write" => Some(Self::ReadWrite),
            _ => None,
        }
    }

    pub fn can_write(self) -> bool {
        self == Self::ReadWrite
    }
}

/// A stored API key: its hash and visible prefix, never the secret itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiKey {
    pub id: ApiKeyId,
    pub account_id: AccountId,
    pub prefix: String,
    pub hash: String,
    pub scope: ApiKeyScope,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// The secret a client sends, shown once at creation.
///
/// Keys carry 192 random bits, so a single SHA-256 is a sound verifier: there is nothing to
/// brute-force that a slow password hash would protect.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKeySecret(String);

/// Visible characters kept for identifying a key in listings and logs.
const PREFIX_LEN: usize = 12;
const KEY_TAG: &str = "tmk_";

impl ApiKeySecret {
    /// Builds a key from 24 bytes of cryptographic randomness supplied by the caller.
    pub fn from_random_bytes(bytes: [u8; 24]) -> Self {
        Self(format!("{KEY_TAG}{}", hex::encode(bytes)))
    }

    /// Wraps a key as received from a client, for hashing and lookup.
    pub fn from_presented(value: &str) -> Self {
        Self(value.to_owned())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn prefix(&self) -> String {
        self.0.chars().take(PREFIX_LEN).collect()
    }

    /// Lowercase hex SHA-256 of the whole key: what the store keeps and looks up by.
    pub fn hash(&self) -> String {
        hex::encode(Sha256::digest(self.0.as_bytes()))
    }
}

impl fmt::Debug for ApiKeySecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKeySecret({}…)", self.prefix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_has_192_bits_of_hex_after_its_tag() {
        let key = ApiKeySecret::from_random_bytes([7; 24]);

        assert!(key.expose().starts_with("tmk_"));
        assert_eq!(key.expose().len(), 4 + 48);
    }

    #[test]
    fn the_prefix_identifies_a_key_without_revealing_it() {
        let key = ApiKeySecret::from_random_bytes([0xab; 24]);

        assert_eq!(key.prefix(), "tmk_abababab");
    }

    #[test]
    fn the_hash_is_stable_and_differs_between_keys() {
        let a = ApiKeySecret::from_random_bytes([1; 24]);
        let b = ApiKeySecret::from_random_bytes([2; 24]);

        assert_eq!(a.hash(), ApiKeySecret::from_presented(a.expose()).hash());
        assert_ne!(a.hash(), b.hash());
        assert_eq!(a.hash().len(), 64);
    }

    #[test]
    fn debug_output_never_shows_the_secret() {
        let key = ApiKeySecret::from_random_bytes([9; 24]);

        assert!(!format!("{key:?}").contains(key.expose()));
    }
}
