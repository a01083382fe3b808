//! Events a carrier pushes to us (a DCSA Track & Trace event subscription). A push is a
//! doorbell: its signature is checked, the tracking requests it concerns are found, and
//! each gets an immediate poll, so pushed and polled events go through one path.
//!
//! T&T 2.2 pushes a JSON array of events, 3.0 an object with `events`; both are accepted on
//! the same callback, with the same signature rule.
//!
//! The signature covers the body only (DCSA defines no timestamp), so a captured push could
//! be sent again; a body accepted in the last day is acknowledged and ignored
//! ([`RecentPushes`](crate::parts::recent_pushes::RecentPushes)). A callback with no
//! subscription and one with a bad signature answer alike, so the callback does not tell
//! which carriers are configured.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tidemark_carriers::{CarrierError, CarrierEvent, CarrierSnapshot, DocumentType};
use tidemark_store::StoreError;

use crate::config::CarrierConfig;
use crate::parts::core::Core;
use crate::parts::recent_pushes::RecentPushes;

#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// No subscription is configured for this carrier.
    #[error("no event subscription for this carrier")]
    UnknownCarrier,
    #[error("the notification signature does not match")]
    BadSignature,
    #[error("the notification body is not DCSA events: {0}")]
    Malformed(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Checks `Notification-Signature` (`sha256=<hex HMAC-SHA256 of the raw body>`, the prefix
/// optional) in constant time.
pub fn signature_matches(secret: &str, signature: &str, body: &[u8]) -> bool {
    let hex_part = signature
        .trim()
        .strip_prefix("sha256=")
        .unwrap_or(signature.trim());
    let Ok(expected) = hex::decode(hex_part) else {
        return false;
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&expected).is_ok()
}

fn numbers_of(events: &[CarrierEvent]) -> Vec<String> {
    let mut numbers: Vec<String> = events
        .iter()
        .flat_map(|event| {
            event
                .document_numbers(DocumentType::TransportDocument)
                .chain(event.document_numbers(DocumentType::Booking))
                .map(str::to_owned)
                .chain(event.equipment_reference.clone())
                .collect::<Vec<_>>()
        })
        .map(|n| n.trim().to_uppercase())
        .collect();
    numbers.sort();
    numbers.dedup();
    numbers
}

/// Reads a push's events: a JSON object is a T&T 3.0 notification (`{"events": [...]}`),
/// anything else is read as 2.2's array, unless none of its events reads as 2.2 and some
/// read as 3.0 (an array of 3.0 events, as the 2023 Beta sends).
fn parse_push(body: &[u8]) -> Result<CarrierSnapshot, CarrierError> {
    let first = body.iter().find(|byte| !byte.is_ascii_whitespace());
    if first == Some(&b'{') {
        return tidemark_carriers::dcsa3::parse_events(body);
    }
    let v2 = tidemark_carriers::dcsa::parse_events(body)?;
    if v2.events.is_empty()
        && !v2.skipped.is_empty()
        && let Ok(v3) = tidemark_carriers::dcsa3::parse_events(body)
        && !v3.events.is_empty()
    {
        return Ok(v3);
    }
    Ok(v2)
}

/// The SCACs one callback speaks for: the SCAC itself first, then the line whose API serves
/// it and every brand that line serves (one subscription of CMA CGM's API carries ANL's and
/// APL's events too, whichever of them the callback URL names).
fn push_lines(scac: &str) -> Vec<String> {
    let profiles = tidemark_carriers::profile::Profiles::embedded();
    let family = profiles.get(scac).map_or(scac, |p| p.family());
    let mut lines = vec![scac.to_owned()];
    for line in std::iter::once(family).chain(profiles.served_by(family)) {
        if !lines.iter().any(|l| l == line) {
            lines.push(line.to_owned());
        }
    }
    lines
}

/// Verifies and accepts one push (signed with the secret of its line's entry in
/// `carriers`; a replay of one `recent_pushes` holds is ignored); returns how many tracking
/// requests it queued a poll for.
pub async fn receive(
    core: &Core,
    carriers: &[CarrierConfig],
    recent_pushes: &RecentPushes,
    scac: &str,
    signature: Option<&str>,
    body: &[u8],
) -> Result<usize, PushError> {
    let scac = scac.trim().to_uppercase();
    let lines = push_lines(&scac);
    // A push to a brand's callback is signed with its family's secret: the line's API sends
    // it, and the operator configured the family only.
    let Some(secret) = lines.iter().find_map(|line| {
        carriers
            .iter()
            .find(|c| &c.scac == line)
            .and_then(|c| c.notification_secret.as_deref())
    }) else {
        return Err(PushError::UnknownCarrier);
    };
    if !signature.is_some_and(|s| signature_matches(secret, s, body)) {
        return Err(PushError::BadSignature);
    }
    let snapshot = parse_push(body).map_err(|error| PushError::Malformed(error.to_string()))?;
    if !recent_pushes.first_time(&scac, body, core.clock.now()) {
        tracing::info!(%scac, "a push already accepted was received again; ignored");
        return Ok(0);
    }
    let numbers = numbers_of(&snapshot.events);
    if numbers.is_empty() {
        return Ok(0);
    }
    let mut requests = Vec::new();
    for line in &lines {
        requests.extend(
            core.store
                .active_tracking_requests_for(line, &numbers)
                .await?,
        );
    }
    for request in &requests {
        super::queue_refresh(core, request.account_id, request.id).await?;
    }
    Ok(requests.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(secret: &str, body: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
        mac.update(body);
        format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
    }

    #[test]
    fn a_brand_callback_speaks_for_its_family_and_the_family_for_its_brands() {
        let for_brand = push_lines("ANNU");
        assert_eq!(for_brand.first().map(String::as_str), Some("ANNU"));
        assert!(for_brand.iter().any(|s| s == "CMDU"));
        assert!(push_lines("CMDU").iter().any(|s| s == "ANNU"));
        assert_eq!(push_lines("XXXX"), ["XXXX"]);
    }

    #[test]
    fn a_signature_of_the_body_with_the_secret_matches() {
        assert!(signature_matches("s3cret", &sign("s3cret", b"[]"), b"[]"));
    }

    #[test]
    fn a_push_is_read_as_2_2_or_3_0_by_its_shape() {
        let v2 = br#"[{"eventType": "EQUIPMENT", "eventClassifierCode": "ACT",
            "eventDateTime": "2026-03-01T10:00:00Z", "equipmentEventTypeCode": "LOAD",
            "equipmentReference": "APZU4812090"}]"#;
        let v3 = br#" {"events": [{"eventDateTime": "2026-03-01T10:00:00Z",
            "eventClassification": {"eventTypeCode": "EQUIPMENT", "eventClassifierCode": "ACT",
            "equipmentEventTypeCode": "LOAD"},
            "equipmentDetails": {"equipmentReference": "APZU4812090"}}]}"#;

        let from_v2 = parse_push(v2).expect("a 2.2 push");
        let from_v3 = parse_push(v3).expect("a 3.0 push");

        let beta = br#"[{"metadata": {"eventID": "1", "eventType": "EQUIPMENT"},
            "payload": {"eventClassifierCode": "ACT", "eventDateTime": "2026-03-01T10:00:00Z",
            "equipmentEventTypeCode": "LOAD", "equipmentReference": "APZU4812090"}}]"#;
        let from_beta = parse_push(beta).expect("a 3.0 Beta push");

        assert_eq!(numbers_of(&from_v2.events), ["APZU4812090"]);
        assert_eq!(numbers_of(&from_v3.events), ["APZU4812090"]);
        assert_eq!(numbers_of(&from_beta.events), ["APZU4812090"]);
        assert!(parse_push(br#"{"nope": 1}"#).is_err());
    }

    #[test]
    fn a_signature_of_another_body_or_secret_does_not() {
        assert!(!signature_matches(
            "s3cret",
            &sign("s3cret", b"[]"),
            b"[{}]"
        ));
        assert!(!signature_matches("s3cret", &sign("other", b"[]"), b"[]"));
        assert!(!signature_matches("s3cret", "sha256=not-hex", b"[]"));
    }
}
