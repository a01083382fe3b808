//! The addresses webhook deliveries leave from. Tidemark cannot see its own egress (a NAT
//! gateway or proxy decides it), so the operator declares it in `webhook_egress_ips`; the
//! list is shown to every account so receivers can allow it through their firewalls.

use chrono::{DateTime, Utc};

/// The declared egress addresses and when they were last loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EgressIps {
    /// Canonical text forms, in the order configured, without duplicates.
    pub ips: Vec<String>,
    /// When this process loaded the setting (it changes only with a restart).
    pub last_updated: DateTime<Utc>,
}

/// The configured egress addresses (`webhook_egress_ips`), loaded at `started_at`.
pub fn egress_ips(configured: &[std::net::IpAddr], started_at: DateTime<Utc>) -> EgressIps {
    EgressIps {
        ips: configured.iter().map(ToString::to_string).collect(),
        last_updated: started_at,
    }
}
