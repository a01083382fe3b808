//! Signing webhook deliveries, two ways at once.
//!
//! - **Terminal49** (`X-T49-Webhook-Signature`): lowercase hex HMAC-SHA256 of the raw body,
//!   keyed with the secret *string exactly as the API shows it* (NOTES §12.4; Terminal49's
//!   Ruby sample is `OpenSSL::HMAC.hexdigest('SHA256', secret, body)`). For our `whsec_…`
//!   secrets that means the whole text, prefix included, so a receiver written for Terminal49
//!   works by pasting the secret it was given. No timestamp, so it cannot stop replays.
//! - **Standard Webhooks** (`webhook-id`, `webhook-timestamp`, `webhook-signature`):
//!   `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, space-separated when several secrets
//!   sign at once (key rotation). The key is the base64-decoded part after `whsec_`, so the
//!   Standard Webhooks libraries verify our deliveries with the secret as shown. A secret not
//!   in `whsec_<base64>` form (a caller's own secret given to `POST /webhooks/trigger`) is
//!   used as raw UTF-8 bytes for both signatures.
//!
//! During a rotation both secrets sign the Standard Webhooks header; the Terminal49 header
//! holds one bare digest, so it is signed with the newest secret only.

use std::fmt;

use base64::Engine as _;
use base64::alphabet;
use base64::engine::general_purpose::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use chrono::{DateTime, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// The prefix of a Standard Webhooks secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// How many random bytes a generated secret holds: 256 bits, within the 24 to 64 bytes the
/// Standard Webhooks spec asks for.
pub const SECRET_BYTES: usize = 32;

/// The version tag of the one Standard Webhooks scheme we sign with (symmetric HMAC-SHA256).
const SCHEME_V1: &str = "v1";

/// How far a `webhook-timestamp` may be from the receiver's clock, as the Standard Webhooks
/// reference libraries default to.
pub const DEFAULT_TOLERANCE: TimeDelta = TimeDelta::minutes(5);

/// Accepts secrets with or without `=` padding: people paste them by hand.
const LENIENT_BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// A webhook's signing secret: its text as shown to the user, and the HMAC key that the
/// Standard Webhooks signature uses.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningSecret {
    text: String,
    key: Vec<u8>,
}

impl SigningSecret {
    /// Takes a secret as stored or supplied. `whsec_<base64>` keys the Standard Webhooks
    /// signature with the decoded bytes; any other text (or undecodable base64) with its
    /// UTF-8 bytes.
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let key = text
            .strip_prefix(SECRET_PREFIX)
            .and_then(|encoded| LENIENT_BASE64.decode(encoded).ok())
            .filter(|key| !key.is_empty())
            .unwrap_or_else(|| text.as_bytes().to_vec());
        Self { text, key }
    }

    /// The secret as the API shows it, and the Terminal49 signature's key.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The Standard Webhooks HMAC key.
    pub fn hmac_key(&self) -> &[u8] {
        &self.key
    }
}

/// Never prints the secret, so it cannot leak into logs.
impl fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningSecret(<redacted>)")
    }
}

/// A new secret, `whsec_` followed by the base64 of `random`. Production passes bytes from a
/// cryptographic RNG; tests pass fixed ones.
pub fn generate_secret(random: [u8; SECRET_BYTES]) -> String {
    format!("{SECRET_PREFIX}{}", STANDARD.encode(random))
}

fn mac(key: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length; the error type exists only for fixed-size MACs.
    match HmacSha256::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts keys of any length"),
    }
}

/// The `X-T49-Webhook-Signature` value: lowercase hex HMAC-SHA256 of `body`, keyed with the
/// secret's text.
pub fn t49_signature(secret: &str, body: &[u8]) -> String {
    let mut mac = mac(secret.as_bytes());
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

fn standard_mac(secret: &SigningSecret, msg_id: &str, timestamp: i64, body: &[u8]) -> HmacSha256 {
    let mut mac = mac(secret.hmac_key());
    mac.update(msg_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// One Standard Webhooks signature, `v1,<base64>`, over `"{msg_id}.{timestamp}.{body}"`.
pub fn standard_signature(
    secret: &SigningSecret,
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    let digest = standard_mac(secret, msg_id, timestamp, body)
        .finalize()
        .into_bytes();
    format!("{SCHEME_V1},{}", STANDARD.encode(digest))
}

/// The `webhook-signature` header value: one signature per secret, space-separated, in the
/// order given (newest first by convention), so a receiver holding any of them can verify.
pub fn standard_signatures<'a>(
    secrets: impl IntoIterator<Item = &'a SigningSecret>,
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    secrets
        .into_iter()
        .map(|secret| standard_signature(secret, msg_id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why a Standard Webhooks delivery failed verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The timestamp is further from now than the tolerance: an old message replayed, or a
    /// clock far off.
    #[error("the webhook timestamp is outside the allowed tolerance")]
    TimestampOutOfTolerance,
    /// The header held no `v1,<base64>` entry at all.
    #[error("the webhook-signature header holds no v1 signature")]
    NoSignature,
    /// No entry matched any of the secrets.
    #[error("no webhook signature matches")]
    Mismatch,
    /// No secret to verify with.
    #[error("no secret to verify with")]
    NoSecret,
}

/// Verifies a Standard Webhooks delivery as a receiver would: the timestamp must lie within
/// `tolerance` of `now` either way, and one `v1` entry of `header_value` must match one of
/// `secrets`. Entries of other versions are skipped, as the spec asks. Comparisons are
/// constant-time.
pub fn verify_standard<'a>(
    secrets: impl IntoIterator<Item = &'a SigningSecret>,
    msg_id: &str,
    timestamp: i64,
    body: &[u8],
    header_value: &str,
    now: DateTime<Utc>,
    tolerance: TimeDelta,
) -> Result<(), VerifyError> {
    let within = now
        .timestamp()
        .checked_sub(timestamp)
        .and_then(i64::checked_abs)
        .is_some_and(|skew| skew <= tolerance.num_seconds());
    if !within {
        return Err(VerifyError::TimestampOutOfTolerance);
    }

    let candidates: Vec<Vec<u8>> = header_value
        .split_whitespace()
        .filter_map(|entry| entry.split_once(','))
        .filter(|(version, _)| *version == SCHEME_V1)
        .filter_map(|(_, signature)| STANDARD.decode(signature).ok())
        .collect();
    if candidates.is_empty() {
        return Err(VerifyError::NoSignature);
    }

    let mut any_secret = false;
    for secret in secrets {
        any_secret = true;
        let expected = standard_mac(secret, msg_id, timestamp, body);
        if candidates
            .iter()
            .any(|candidate| expected.clone().verify_slice(candidate).is_ok())
        {
            return Ok(());
        }
    }
    Err(if any_secret {
        VerifyError::Mismatch
    } else {
        VerifyError::NoSecret
    })
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone as _;

    use super::*;

    // Vectors computed independently with Python's hmac, hashlib and base64.
    const SECRET: &str = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const OTHER_SECRET: &str = "whsec_q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=";
    const BODY: &[u8] =
        br#"{"data":{"id":"c6e6af71-f75d-49e3-9e79-50b719d8376e","type":"webhook_notification"}}"#;
    const MSG_ID: &str = "msg_c6e6af71-f75d-49e3-9e79-50b719d8376e";
    const TIMESTAMP: i64 = 1_674_087_231;
    const SIGNATURE: &str = "v1,2cf+yZOuLkCnBuxrMzrbBoV5Tyt7xXgRhTPaoFOPqDU=";
    const OTHER_SIGNATURE: &str = "v1,aZ6mvOV2rEXMdrQF6B6hnI/m1ct+XFlQ7hJxN3Tv/aU=";

    fn counting_bytes() -> [u8; SECRET_BYTES] {
        std::array::from_fn(|i| u8::try_from(i).expect("small"))
    }

    fn at(seconds: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(seconds, 0).single().expect("valid time")
    }

    fn verify(header: &str, secrets: &[SigningSecret], now: i64) -> Result<(), VerifyError> {
        verify_standard(
            secrets,
            MSG_ID,
            TIMESTAMP,
            BODY,
            header,
            at(now),
            DEFAULT_TOLERANCE,
        )
    }

    #[test]
    fn a_generated_secret_is_whsec_and_the_base64_of_the_random_bytes() {
        assert_eq!(generate_secret(counting_bytes()), SECRET);
    }

    #[test]
    fn a_whsec_secret_keys_the_standard_signature_with_its_decoded_bytes() {
        let secret = SigningSecret::new(SECRET);
        assert_eq!(secret.hmac_key(), counting_bytes());
        assert_eq!(secret.as_str(), SECRET);
    }

    #[test]
    fn the_terminal49_signature_is_hex_hmac_of_the_body_keyed_with_the_whole_secret_text() {
        assert_eq!(
            t49_signature(SECRET, BODY),
            "7d3d46d7375471b5ea136a889818f8a6ee3197e829454f4fa899ffed40ceeabf"
        );
    }

    #[test]
    fn the_standard_signature_matches_a_vector_computed_independently() {
        let secret = SigningSecret::new(SECRET);
        assert_eq!(
            standard_signature(&secret, MSG_ID, TIMESTAMP, BODY),
            SIGNATURE
        );
    }

    #[test]
    fn the_standard_signature_matches_the_vector_published_with_the_standard_webhooks_libraries() {
        let secret = SigningSecret::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            standard_signature(&secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1_614_265_330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_secret_not_in_whsec_form_keys_both_signatures_with_its_utf8_bytes() {
        let secret = SigningSecret::new("my-own-secret");
        assert_eq!(secret.hmac_key(), b"my-own-secret");
        assert_eq!(
            standard_signature(&secret, MSG_ID, TIMESTAMP, BODY),
            "v1,8r7IOgmcpvYCdfTIxrFBNKQTDj+xCF8bGrQY2xMZseU="
        );
        assert_eq!(
            t49_signature("my-own-secret", BODY),
            "112e104be5a367fb6d1260717bc4e2e634232d2662258161778ab162ef36b58d"
        );
    }

    #[test]
    fn during_a_rotation_the_header_holds_one_signature_per_secret_space_separated() {
        let secrets = [SigningSecret::new(SECRET), SigningSecret::new(OTHER_SECRET)];
        assert_eq!(
            standard_signatures(&secrets, MSG_ID, TIMESTAMP, BODY),
            format!("{SIGNATURE} {OTHER_SIGNATURE}")
        );
    }

    #[test]
    fn the_secret_never_appears_in_debug_output() {
        let shown = format!("{:?}", SigningSecret::new(SECRET));
        assert!(!shown.contains("AAEC"), "{shown}");
    }

    #[test]
    fn verification_accepts_a_matching_signature_within_the_tolerance() {
        let secrets = [SigningSecret::new(SECRET)];
        assert_eq!(verify(SIGNATURE, &secrets, TIMESTAMP), Ok(()));
        assert_eq!(verify(SIGNATURE, &secrets, TIMESTAMP + 300), Ok(()));
        assert_eq!(verify(SIGNATURE, &secrets, TIMESTAMP - 300), Ok(()));
    }

    #[test]
    fn verification_rejects_a_timestamp_outside_the_tolerance_either_way() {
        let secrets = [SigningSecret::new(SECRET)];
        let too_old = verify(SIGNATURE, &secrets, TIMESTAMP + 301);
        let too_new = verify(SIGNATURE, &secrets, TIMESTAMP - 301);
        assert_eq!(too_old, Err(VerifyError::TimestampOutOfTolerance));
        assert_eq!(too_new, Err(VerifyError::TimestampOutOfTolerance));
    }

    #[test]
    fn verification_accepts_any_entry_with_any_secret_and_skips_other_versions() {
        let old_only = [SigningSecret::new(OTHER_SECRET)];
        let header = format!("v2,bm90LWEtc2lnbmF0dXJl {SIGNATURE} {OTHER_SIGNATURE}");
        assert_eq!(verify(&header, &old_only, TIMESTAMP), Ok(()));

        let both = [
            SigningSecret::new("whsec_c29tZXRoaW5nLWVsc2U="),
            SigningSecret::new(SECRET),
        ];
        assert_eq!(verify(SIGNATURE, &both, TIMESTAMP), Ok(()));
    }

    #[test]
    fn verification_rejects_a_tampered_body_or_a_wrong_secret() {
        let secrets = [SigningSecret::new(SECRET)];
        let tampered = verify_standard(
            &secrets,
            MSG_ID,
            TIMESTAMP,
            b"{}",
            SIGNATURE,
            at(TIMESTAMP),
            DEFAULT_TOLERANCE,
        );
        assert_eq!(tampered, Err(VerifyError::Mismatch));
        let wrong = [SigningSecret::new(OTHER_SECRET)];
        assert_eq!(
            verify(SIGNATURE, &wrong, TIMESTAMP),
            Err(VerifyError::Mismatch)
        );
    }

    #[test]
    fn verification_rejects_a_header_without_v1_entries_and_an_empty_secret_list() {
        let secrets = [SigningSecret::new(SECRET)];
        assert_eq!(
            verify("", &secrets, TIMESTAMP),
            Err(VerifyError::NoSignature)
        );
        assert_eq!(
            verify("v1,not base64!", &secrets, TIMESTAMP),
            Err(VerifyError::NoSignature)
        );
        assert_eq!(
            verify(SIGNATURE, &[], TIMESTAMP),
            Err(VerifyError::NoSecret)
        );
    }
}
