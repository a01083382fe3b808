//! Signed, expiring links and ids: the download link that needs no API key, the direct
//! upload's URL and its `signed_id`. HMAC-SHA256 under the server's signing key; each
//! purpose signs its own message so that one kind can never stand in for another.

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use tidemark_store::{Store, StoreError};
use uuid::Uuid;

type HmacSha256 = Hmac<Sha256>;

/// What a signature authorises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// `GET` a document's bytes.
    Download,
    /// `PUT` a direct upload's bytes.
    Upload,
    /// Name a direct upload in `attached_document`.
    Blob,
    /// The console's session cookie: which API key signed in, until when.
    ConsoleSession,
    /// The console's form token, bound to one session.
    ConsoleForm,
}

impl Purpose {
    fn label(self) -> &'static str {
        match self {
            Self::Download => "download",
            Self::Upload => "upload",
            Self::Blob => "blob",
            Self::ConsoleSession => "console-session",
            Self::ConsoleForm => "console-form",
        }
    }
}

/// The name of the setting that keeps the generated secret in the database.
pub const SECRET_SETTING: &str = "signing_secret";

/// A signing key, derived from a secret.
#[derive(Clone)]
pub struct SigningKey([u8; 32]);

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningKey(…)")
    }
}

/// The key this process signs with: the configured one (`signing_secret`), else the one
/// generated once for the whole installation and kept in the database, so every process,
/// and the same process after a restart, signs and verifies alike. Read on first use and
/// kept.
#[derive(Debug)]
pub struct Signer {
    configured: Option<SigningKey>,
    shared: tokio::sync::OnceCell<SigningKey>,
}

impl Signer {
    pub fn new(configured: Option<SigningKey>) -> Self {
        Self {
            configured,
            shared: tokio::sync::OnceCell::new(),
        }
    }

    /// The key; without a configured one, the installation's (generated and stored by the
    /// first process that needs it).
    pub async fn key(&self, store: &dyn Store) -> Result<&SigningKey, StoreError> {
        if let Some(key) = &self.configured {
            return Ok(key);
        }
        self.shared
            .get_or_try_init(|| async {
                let proposed = hex::encode(rand::random::<[u8; 32]>());
                let secret = store.setting_or_init(SECRET_SETTING, &proposed).await?;
                Ok(SigningKey::from_secret(&secret))
            })
            .await
    }
}

impl SigningKey {
    /// The key of a secret: every process given the same secret signs alike.
    pub fn from_secret(secret: &str) -> Self {
        use sha2::Digest;
        Self(Sha256::digest(secret.as_bytes()).into())
    }

    fn mac(&self, purpose: Purpose, id: Uuid, expires: Option<i64>) -> HmacSha256 {
        let mut mac =
            <HmacSha256 as Mac>::new_from_slice(&self.0).expect("HMAC accepts keys of any length");
        mac.update(purpose.label().as_bytes());
        mac.update(b":");
        mac.update(id.as_bytes());
        if let Some(expires) = expires {
            mac.update(b":");
            mac.update(&expires.to_be_bytes());
        }
        mac
    }

    /// The hex signature of `id` for `purpose` until `expires`.
    pub fn sign(&self, purpose: Purpose, id: Uuid, expires: DateTime<Utc>) -> String {
        hex::encode(
            self.mac(purpose, id, Some(expires.timestamp()))
                .finalize()
                .into_bytes(),
        )
    }

    /// Whether `signature` is this key's for `id` and `purpose` until `expires` (unix
    /// seconds), and that time has not passed. Compared in constant time.
    pub fn verify(
        &self,
        purpose: Purpose,
        id: Uuid,
        expires: i64,
        signature: &str,
        now: DateTime<Utc>,
    ) -> bool {
        let Ok(signature) = hex::decode(signature) else {
            return false;
        };
        now.timestamp() <= expires
            && self
                .mac(purpose, id, Some(expires))
                .verify_slice(&signature)
                .is_ok()
    }

    /// A `signed_id` naming a direct upload: `<id>--<signature>`.
    pub fn signed_id(&self, id: Uuid) -> String {
        let signature = hex::encode(self.mac(Purpose::Blob, id, None).finalize().into_bytes());
        format!("{id}--{}", &signature[..32])
    }

    /// The upload a `signed_id` names, if this key signed it.
    pub fn verify_signed_id(&self, signed_id: &str) -> Option<Uuid> {
        let (id, signature) = signed_id.trim().split_once("--")?;
        let id = Uuid::parse_str(id).ok()?;
        let signature = hex::decode(signature).ok()?;
        self.mac(Purpose::Blob, id, None)
            .verify_truncated_left(&signature)
            .ok()
            .filter(|()| signature.len() == 16)
            .map(|()| id)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0)
            .single()
            .expect("valid")
    }

    #[test]
    fn a_signature_holds_until_it_expires_and_only_for_its_purpose_and_id() {
        let key = SigningKey::from_secret("s3cret");
        let id = Uuid::from_u128(1);
        let expires = at() + Duration::minutes(15);
        let signature = key.sign(Purpose::Download, id, expires);

        assert!(key.verify(Purpose::Download, id, expires.timestamp(), &signature, at()));
        assert!(!key.verify(
            Purpose::Download,
            id,
            expires.timestamp(),
            &signature,
            expires + Duration::seconds(1)
        ));
        assert!(!key.verify(Purpose::Upload, id, expires.timestamp(), &signature, at()));
        assert!(!key.verify(
            Purpose::Download,
            Uuid::from_u128(2),
            expires.timestamp(),
            &signature,
            at()
        ));
        assert!(!key.verify(
            Purpose::Download,
            id,
            expires.timestamp() + 3600,
            &signature,
            at()
        ));
        assert!(!SigningKey::from_secret("other").verify(
            Purpose::Download,
            id,
            expires.timestamp(),
            &signature,
            at()
        ));
    }

    #[test]
    fn a_signed_id_names_its_upload_and_cannot_be_forged() {
        let key = SigningKey::from_secret("s3cret");
        let id = Uuid::from_u128(42);
        let signed = key.signed_id(id);

        assert_eq!(key.verify_signed_id(&signed), Some(id));
        assert_eq!(key.verify_signed_id(&format!("{id}--00")), None);
        assert_eq!(key.verify_signed_id(&id.to_string()), None);
        assert_eq!(
            key.verify_signed_id(
                &signed.replace(&id.to_string(), &Uuid::from_u128(43).to_string())
            ),
            None
        );
    }
}
