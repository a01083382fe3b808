//! The terminal connectors by the terminal's id: the configured terminals
//! (`[terminals.<name>]`, named after their profile or naming it with `profile`, see
//! [`crate::config::TerminalConfig`]) and the sandbox terminal, which is always there.
//!
//! The sandbox terminal answers from each container's discharge time, which only the
//! server knows: [`Terminals::from_config`] takes where to read it as a
//! [`DischargeTimes`]; [`no_discharges`] knows none (the sandbox then knows no container).

use std::collections::BTreeMap;
use std::sync::Arc;

use tidemark_domain::Clock;
use tidemark_terminals::sandbox::DischargeTimes;
use tidemark_terminals::{ConfigError, SandboxTerminal, TerminalConnector, connect};

use crate::config::TerminalConfig;

/// What a terminal's shared state (its budget and health, beside the carriers') is keyed by,
/// before its profile id.
const KEY_PREFIX: &str = "terminal:";

/// The shared state's key of a terminal.
pub fn state_key(terminal: &str) -> String {
    format!("{KEY_PREFIX}{terminal}")
}

/// Whether a shared state's key is a terminal's rather than a carrier's SCAC.
pub fn is_terminal_key(key: &str) -> bool {
    key.starts_with(KEY_PREFIX)
}

/// The sandbox terminal's profile id.
pub const SANDBOX: &str = "sandbox";

/// Connectors by the terminal's id (its table's name), sorted.
#[derive(Clone)]
pub struct Terminals {
    by_id: BTreeMap<String, Arc<dyn TerminalConnector>>,
}

impl std::fmt::Debug for Terminals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminals")
            .field("ids", &self.ids())
            .finish()
    }
}

/// A discharge lookup that knows no container.
pub fn no_discharges() -> DischargeTimes {
    Arc::new(|_| None)
}

impl Terminals {
    /// The configured terminals' connectors, on `clock`, and the sandbox terminal, which
    /// reads discharge times from `discharges`. The configuration was checked at start
    /// ([`crate::config::Config::load`]); what can still fail here is building an HTTP
    /// client.
    pub fn from_config(
        configs: &[TerminalConfig],
        clock: Arc<dyn Clock>,
        discharges: DischargeTimes,
    ) -> Result<Self, ConfigError> {
        let mut by_id: BTreeMap<String, Arc<dyn TerminalConnector>> = BTreeMap::new();
        by_id.insert(
            SANDBOX.to_owned(),
            Arc::new(SandboxTerminal::new(Arc::clone(&clock), discharges)),
        );
        for config in configs {
            if config.profile_id == SANDBOX {
                continue;
            }
            let connector = connect(&config.profile_id, &config.settings, Arc::clone(&clock))?;
            by_id.insert(config.name.clone(), connector);
        }
        Ok(Self { by_id })
    }

    /// The connector of the terminal `id` (`port_of_virginia`, `apm_pier400`, `sandbox`,
    /// …), when configured.
    pub fn get(&self, id: &str) -> Option<&Arc<dyn TerminalConnector>> {
        self.by_id.get(id.trim())
    }

    /// The profile ids with a connector, sorted; the sandbox's always among them.
    pub fn ids(&self) -> Vec<&str> {
        self.by_id.keys().map(String::as_str).collect()
    }

    /// Each connector with its profile id, sorted by id.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Arc<dyn TerminalConnector>)> {
        self.by_id
            .iter()
            .map(|(id, connector)| (id.as_str(), connector))
    }

    /// How many connectors there are (the sandbox's counted).
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Never: the sandbox terminal is always there.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use chrono::{Duration, TimeZone, Utc};
    use tidemark_domain::{ContainerNumber, MockClock};
    use tidemark_terminals::ContainerQuery;
    use tidemark_terminals::profile::{Confidence, Protocol};

    use super::*;
    use crate::config::Config;

    fn clock() -> Arc<dyn Clock> {
        Arc::new(MockClock::new(
            Utc.with_ymd_and_hms(2024, 6, 21, 15, 0, 0).unwrap(),
        ))
    }

    fn config(pairs: &[(&str, &str)]) -> Config {
        Config::from_pairs(pairs).unwrap()
    }

    #[test]
    fn without_settings_only_the_sandbox_is_there() {
        let terminals =
            Terminals::from_config(&config(&[]).terminals, clock(), no_discharges()).unwrap();

        assert_eq!(terminals.ids(), ["sandbox"]);
        assert_eq!(terminals.len(), 1);
        assert!(!terminals.is_empty());
        assert!(terminals.get("port_of_virginia").is_none());
    }

    #[test]
    fn configured_terminals_are_built_by_profile_id_with_their_overrides() {
        let config = config(&[
            ("terminals.port_of_virginia.api_key", "k3y"),
            ("terminals.port_of_virginia.batch_size", "25"),
            ("terminals.emodal.api_key", "x"),
            ("terminals.emodal.base_url", "https://emodal.example/api"),
        ]);

        let terminals =
            Terminals::from_config(&config.terminals, clock(), no_discharges()).unwrap();

        assert_eq!(terminals.ids(), ["emodal", "port_of_virginia", "sandbox"]);
        let pov = terminals.get("port_of_virginia").unwrap().profile();
        assert_eq!(pov.protocol(), Some(Protocol::PortOfVirginia));
        assert_eq!(pov.batch_size(), 25);
        assert_eq!(pov.batch_size.confidence, Confidence::Configured);
        assert_eq!(
            terminals
                .get("emodal")
                .unwrap()
                .profile()
                .base_url
                .as_ref()
                .and_then(|f| f.value.as_deref()),
            Some("https://emodal.example/api")
        );
        assert!(!format!("{terminals:?}").contains("k3y"));
    }

    #[test]
    fn two_tables_of_one_profile_are_two_terminals_under_their_names() {
        let config = config(&[
            ("terminals.port_of_virginia.api_key", "k1"),
            ("terminals.pov_north.profile", "port_of_virginia"),
            ("terminals.pov_north.api_key", "k2"),
            ("terminals.pov_north.batch_size", "10"),
        ]);

        let terminals =
            Terminals::from_config(&config.terminals, clock(), no_discharges()).unwrap();

        assert_eq!(
            terminals.ids(),
            ["port_of_virginia", "pov_north", "sandbox"]
        );
        let north = terminals.get("pov_north").unwrap().profile();
        assert_eq!(north.protocol(), Some(Protocol::PortOfVirginia));
        assert_eq!(north.batch_size(), 10);
        assert_eq!(
            terminals
                .get("port_of_virginia")
                .unwrap()
                .profile()
                .batch_size(),
            100
        );
    }

    #[tokio::test]
    async fn the_sandbox_reads_discharge_times_from_the_lookup_it_was_given() {
        let container = ContainerNumber::parse("MSCU1234566").unwrap();
        let discharged = Utc.with_ymd_and_hms(2024, 6, 13, 8, 0, 0).unwrap();
        let known = HashMap::from([(container.clone(), discharged)]);
        let discharges: DischargeTimes = Arc::new(move |c| known.get(c).copied());
        let terminals = Terminals::from_config(&[], clock(), discharges).unwrap();
        let unknown = Terminals::from_config(&[], clock(), no_discharges()).unwrap();
        let query = [ContainerQuery::new(container, None)];

        let statuses = terminals
            .get("sandbox")
            .unwrap()
            .lookup(&query)
            .await
            .unwrap();
        let none = unknown
            .get("sandbox")
            .unwrap()
            .lookup(&query)
            .await
            .unwrap();

        assert_eq!(statuses.len(), 1);
        assert_eq!(statuses[0].availability, Some(true));
        assert_eq!(
            statuses[0].last_free_day,
            Some(discharged.date_naive() + Duration::days(4))
        );
        assert!(none.is_empty(), "no discharge time, nothing to say");
    }
}
