//! DCSA Track & Trace 3.0 beside 2.2: the HTTP connector for `GET /v3/events`, and reading
//! its `{"events": [...]}` responses (and 3.0 notifications) into the same carrier events as
//! 2.2, so everything downstream is unchanged. [`dcsa_client`] picks the connector by version.
//!
//! Specs: `reference/dcsa/TNT_v3.0.0-draft.yaml` (the event envelope) and
//! `reference/dcsa/tnt_v3.0.0-Beta-1.yaml` (the `/v3/events` query and `Next-Page` paging).

pub mod client;
mod parse;

use std::fmt;
use std::sync::Arc;

use url::Url;

pub use client::{Dcsa3Client, Dialect};
pub use parse::parse_events;

use crate::carrier::Carrier;
use crate::dcsa::{DcsaAuth, DcsaClient, DcsaClientError};

/// The DCSA Track & Trace version a carrier speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DcsaVersion {
    /// T&T 2.2: `GET /v2/events`, a JSON array of events.
    #[default]
    V2_2,
    /// T&T 3.0.0: `GET /v3/events`, `{"events": [...]}`, asked by
    /// `transportDocumentReference`, `carrierBookingReference` or `equipmentReference`.
    V3_0,
    /// The 2023 Beta-1 of 3.0 (Maersk's `/v3/events`): asked by `documentReference` with
    /// `documentTypeCodes`. Its answers are read like 3.0.0's.
    V3_0Beta1,
}

impl DcsaVersion {
    /// As written in settings: `2.2`, `3.0` or `3.0-beta-1`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2_2 => "2.2",
            Self::V3_0 => "3.0",
            Self::V3_0Beta1 => "3.0-beta-1",
        }
    }

    /// Reads `2.2` (or `2.2.0`), `3.0` (or `3`, `3.0.0`) and `3.0-beta-1` (or
    /// `3.0.0-beta-1`, any case); anything else is `None`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "2.2" | "2.2.0" => Some(Self::V2_2),
            "3" | "3.0" | "3.0.0" => Some(Self::V3_0),
            "3.0-beta-1" | "3.0.0-beta-1" | "3.0.0-beta1" | "3.0-beta1" => Some(Self::V3_0Beta1),
            _ => None,
        }
    }
}

impl fmt::Display for DcsaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The connector for a carrier that speaks DCSA T&T `version` under `base_url`.
pub fn dcsa_client(
    version: DcsaVersion,
    scac: impl Into<String>,
    base_url: Url,
    auth: DcsaAuth,
) -> Result<Arc<dyn Carrier>, DcsaClientError> {
    Ok(match version {
        DcsaVersion::V2_2 => Arc::new(DcsaClient::new(scac, base_url, auth)?),
        DcsaVersion::V3_0 => Arc::new(Dcsa3Client::new(scac, base_url, auth)?),
        DcsaVersion::V3_0Beta1 => {
            Arc::new(Dcsa3Client::new(scac, base_url, auth)?.speaking(Dialect::Beta1))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_in_the_forms_people_write_them() {
        for (text, expected) in [
            ("2.2", Some(DcsaVersion::V2_2)),
            (" 2.2.0 ", Some(DcsaVersion::V2_2)),
            ("3", Some(DcsaVersion::V3_0)),
            ("3.0", Some(DcsaVersion::V3_0)),
            ("3.0.0", Some(DcsaVersion::V3_0)),
            ("3.0-beta-1", Some(DcsaVersion::V3_0Beta1)),
            ("3.0.0-Beta-1", Some(DcsaVersion::V3_0Beta1)),
            ("2.1", None),
            ("3.1", None),
            ("", None),
        ] {
            assert_eq!(DcsaVersion::parse(text), expected, "{text:?}");
        }
    }
}
