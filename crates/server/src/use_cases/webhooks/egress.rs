//! The addresses webhook deliveries leave from. Tidemark cannot see its own egress (a NAT
//! gateway or proxy decides it), so the operator declares it in `webhook_egress_ips`; the
//! list is shown to every account so receivers can allow it through their firewalls.

use chrono::{DateTime, Utc};

use crate::app::App;

/// The declared egress addresses and when they were last loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EgressIps {
    /// Canonical text forms, in the order configured, without duplicates.
    pub ips: Vec<String>,
    /// When this process loaded the setting (it changes only with a restart).
    pub last_updated: DateTime<Utc>,
}

/// The configured egress addresses.
pub fn egress_ips(app: &App) -> EgressIps {
    EgressIps {
        ips: app
            .config
            .webhook_egress_ips
            .iter()
            .map(ToString::to_string)
            .collect(),
        last_updated: app.started_at,
    }
}
