//! `tidemark terminals list` and `tidemark terminals check PROFILE [CONTAINER [BL]]`: what
//! an operator needs to connect container terminals and to see whether they answer.

use std::fmt::Write as _;
use std::sync::Arc;

use anyhow::{anyhow, bail};
use chrono::{DateTime, Duration, Utc};
use tidemark_domain::{Clock, ContainerNumber};
use tidemark_terminals::profile::{Confidence, Profiles, Protocol, RateBudget, TerminalProfile};
use tidemark_terminals::sandbox::DischargeTimes;
use tidemark_terminals::{CheckOutcome, TerminalError};

use crate::app::App;
use crate::config::terminals::{normalize_id, required_keys, variable, where_to_get};
use crate::config::{Config, TerminalConfig};
use crate::use_cases::terminals::health::{self, TerminalHealth};
use crate::use_cases::terminals::{Terminals, no_discharges};

/// How long before now the sandbox takes a container to have been discharged when
/// `--discharged-at` is not given: long enough for its customs hold to be released.
const SANDBOX_DISCHARGED_AGO: Duration = Duration::days(2);

fn budget_text(budget: RateBudget) -> String {
    match (budget.per_minute, budget.per_day) {
        (None, None) => "unlimited".to_owned(),
        (minute, day) => [
            minute.map(|n| format!("{n}/min")),
            day.map(|n| format!("{n}/day")),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" "),
    }
}

fn confidence_text(confidence: Confidence) -> &'static str {
    match confidence {
        Confidence::High => "high",
        Confidence::Medium => "medium",
        Confidence::Low => "low",
        Confidence::Assumed => "assumed",
        Confidence::Configured => "configured",
    }
}

/// The UN/LOCODEs of the ports a profile reaches, each once, in the profile's order;
/// `any` for a source without facilities (the sandbox).
fn ports(profile: &TerminalProfile) -> String {
    let mut locodes: Vec<&str> = Vec::new();
    for facility in profile.facilities.value.iter().flatten() {
        if !locodes.contains(&facility.locode.as_str()) {
            locodes.push(&facility.locode);
        }
    }
    if locodes.is_empty() {
        "any".to_owned()
    } else {
        locodes.join(",")
    }
}

/// `query api_key`, `oauth2 client_id+client_secret`, `none`.
fn auth_text(profile: &TerminalProfile) -> String {
    let keys = profile.auth.scheme.credential_keys();
    if keys.is_empty() {
        profile.auth.scheme.kind().to_owned()
    } else {
        format!("{} {}", profile.auth.scheme.kind(), keys.join("+"))
    }
}

fn time_text(at: Option<DateTime<Utc>>) -> String {
    at.map_or_else(
        || "-".to_owned(),
        |at| at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    )
}

/// A configured terminal's state columns: credentials (`refused since …`: paused, only
/// probed), circuit (`open until …`), last success, last error (with its time), calls
/// (this sliding minute and the last 24 hours). `-` where nothing is known.
fn state_columns(health: Option<&TerminalHealth>, now: DateTime<Utc>) -> [String; 5] {
    let Some(health) = health else {
        return ["-", "-", "-", "-", "-"].map(str::to_owned);
    };
    let credentials = health.credentials_refused_since.map_or_else(
        || "ok".to_owned(),
        |since| format!("refused since {}", time_text(Some(since))),
    );
    let circuit = match health.circuit_open_until {
        Some(until) if until > now => format!("open until {}", time_text(Some(until))),
        _ => "closed".to_owned(),
    };
    let last_error = health
        .last_error
        .as_ref()
        .map_or_else(
            || "-".to_owned(),
            |error| format!("{} {error}", time_text(health.last_error_at)),
        )
        .replace(['\t', '\n'], " ");
    [
        credentials,
        circuit,
        time_text(health.last_success_at),
        last_error,
        format!(
            "{}/min {}/day",
            health.calls_last_minute, health.calls_today
        ),
    ]
}

/// What `tidemark terminals list` prints without the shared store: one row per profile,
/// tab-separated, with the facts in force (the operator's overrides where configured).
pub fn list_text(config: &Config) -> String {
    table(config, &[], tidemark_domain::SystemClock.now())
}

/// One row per profile, tab-separated, with the facts in force (the operator's overrides
/// where configured) and, for a terminal with a connector, its state in the shared store
/// (`health`, the same every process sees).
pub fn table(config: &Config, health: &[TerminalHealth], now: DateTime<Utc>) -> String {
    let mut out = String::from(
        "ID\tNAME\tPORTS\tCONFIGURED\tPROTOCOL\tAUTH\tBUDGET\tBATCH\tBASE_URL\tCONFIDENCE\tTO_SET\t\
         CREDENTIALS\tCIRCUIT\tLAST_SUCCESS\tLAST_ERROR\tCALLS\n",
    );
    // Each profile once where it is not configured, else once per table configuring it
    // (`[terminals.apm_pier400]` and `[terminals.apm_elizabeth]`, both `apm_terminals`).
    let rows = Profiles::embedded().all().iter().flat_map(|embedded| {
        let configured: Vec<Option<&TerminalConfig>> = config
            .terminals
            .iter()
            .filter(|terminal| terminal.profile_id == embedded.id)
            .map(Some)
            .collect();
        let configured = if configured.is_empty() {
            vec![None]
        } else {
            configured
        };
        configured
            .into_iter()
            .map(move |terminal| (embedded, terminal))
    });
    for (embedded, configured) in rows {
        let sandbox = embedded.protocol() == Some(Protocol::Sandbox);
        let profile = configured.map_or(embedded, |terminal| &terminal.profile);
        let id = configured.map_or(embedded.id.as_str(), |terminal| terminal.name.as_str());
        let (base_url, confidence) = match &profile.base_url {
            Some(fact) => (
                fact.value.clone().unwrap_or_else(|| "unknown".to_owned()),
                confidence_text(fact.confidence),
            ),
            None => ("-".to_owned(), "-"),
        };
        let to_set = if configured.is_some() || sandbox {
            "-".to_owned()
        } else {
            required_keys(embedded).join(",")
        };
        let state = state_columns(health.iter().find(|health| health.id == id), now);
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            id,
            profile.name,
            ports(profile),
            if configured.is_some() || sandbox {
                "yes"
            } else {
                "no"
            },
            profile.protocol().map_or("-", Protocol::as_str),
            auth_text(profile),
            budget_text(profile.budget()),
            profile.batch_size(),
            base_url,
            confidence,
            to_set,
            state.join("\t"),
        );
    }
    out
}

/// Each terminal's state from the store `config` names, opened as `tidemark carriers list`
/// opens it.
pub async fn states(config: &Config) -> anyhow::Result<Vec<TerminalHealth>> {
    let store = crate::serve::open_store(config).await?;
    let app = App::new(
        config.clone(),
        store,
        Arc::new(tidemark_domain::SystemClock),
        Arc::new(tidemark_domain::UuidV7Ids),
    );
    Ok(health::health(&app.terminals_context()).await?)
}

/// What `tidemark terminals list` prints: every profile, and each configured terminal's
/// state from the shared store.
pub async fn list_with_states(config: &Config) -> anyhow::Result<String> {
    let health = states(config).await?;
    Ok(table(config, &health, tidemark_domain::SystemClock.now()))
}

/// `tidemark terminals list`. When the store cannot be read, the profiles are still
/// listed, their state columns `-`, and why is said on stderr.
pub async fn list(config: &Config) {
    let text = list_with_states(config).await;
    match text {
        Ok(text) => print!("{text}"),
        Err(error) => {
            eprintln!("the terminals' states cannot be read: {error:#}");
            print!("{}", list_text(config));
        }
    }
}

/// Why `check` cannot ask `profile`: it is not configured; which settings to give, and
/// where to get them.
fn not_configured(profile: &TerminalProfile) -> String {
    let id = &profile.id;
    let keys = required_keys(profile);
    let variables: Vec<String> = keys.iter().map(|key| variable(id, key)).collect();
    format!(
        "{id} ({}) is not configured: set {} (or {} under [terminals.{id}] in the config \
         file). Where to get them: {}",
        profile.name,
        variables.join(", "),
        keys.join(", "),
        where_to_get(profile)
    )
}

/// `tidemark terminals check PROFILE [CONTAINER [BL]] [--discharged-at TIME]`: one real
/// lookup with the configured settings, printed as the terminals crate's check report
/// (what was asked and of whom, what came back, how it was read). Without a container, a
/// made-up one checks that the terminal answers and accepts the credentials. The sandbox
/// takes the container as discharged at `discharged_at` (default: two days ago). Exits
/// non-zero when the lookup fails or a given container is not found.
pub async fn check(
    config: Config,
    profile_id: &str,
    container: Option<&str>,
    bill_of_lading: Option<&str>,
    discharged_at: Option<DateTime<Utc>>,
) -> anyhow::Result<()> {
    let id = normalize_id(profile_id);
    let profiles = Profiles::embedded();
    // A configured terminal by its table's name (`apm_pier400`), else a profile by its id.
    let profile_id = config
        .terminals
        .iter()
        .find(|terminal| terminal.name == id)
        .map_or(id.as_str(), |terminal| terminal.profile_id.as_str());
    let Some(profile) = profiles.get(profile_id) else {
        let known: Vec<&str> = profiles
            .all()
            .iter()
            .map(|p| p.id.as_str())
            .chain(config.terminals.iter().map(|t| t.name.as_str()))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        bail!(
            "no terminal profile is called {id:?}; the terminals are {}",
            known.join(", ")
        );
    };
    let sandbox = profile.protocol() == Some(Protocol::Sandbox);
    if discharged_at.is_some() && !sandbox {
        bail!("--discharged-at is for the sandbox terminal only: a real terminal knows its own");
    }
    let clock: Arc<dyn Clock> = Arc::new(tidemark_domain::SystemClock);
    let made_up = container.is_none();
    let container = match container {
        Some(text) => ContainerNumber::parse(text)
            .map_err(|error| anyhow!("{text:?} is not a container number: {error}"))?,
        // A number no terminal holds: any answer but a failure shows the connection works.
        None => ContainerNumber::from_owner_and_serial("TDMU", 0),
    };
    let discharged = discharged_at.unwrap_or_else(|| clock.now() - SANDBOX_DISCHARGED_AGO);
    let discharges: DischargeTimes = if sandbox {
        Arc::new(move |_| Some(discharged))
    } else {
        no_discharges()
    };
    let terminals = Terminals::from_config(&config.terminals, Arc::clone(&clock), discharges)?;
    let Some(connector) = terminals.get(&id) else {
        bail!("{}", not_configured(profile));
    };
    let bill_of_lading = bill_of_lading.map(str::to_owned).or_else(|| {
        (made_up && profile.needs_bill_of_lading()).then(|| "TIDEMARKCHECK".to_owned())
    });
    if profile.needs_bill_of_lading() && bill_of_lading.is_none() {
        bail!(
            "{} looks a container up with its bill of lading: tidemark terminals check {id} \
             {container} BILL_OF_LADING",
            profile.name
        );
    }
    if sandbox {
        eprintln!(
            "sandbox: {container} taken as discharged at {} (--discharged-at to change)",
            discharged.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        );
    }
    let report =
        tidemark_terminals::check(connector.as_ref(), container.clone(), bill_of_lading).await;
    print!("{report}");
    match &report.outcome {
        CheckOutcome::Found(_) => Ok(()),
        CheckOutcome::NotFound if made_up => {
            println!(
                "{id}: OK, the terminal answered and accepts the credentials (the made-up \
                 container {container} is unknown, as expected)"
            );
            Ok(())
        }
        CheckOutcome::NotFound => bail!("{id}: the terminal does not know {container} (yet)"),
        CheckOutcome::Failed(TerminalError::CredentialsRefused(detail)) => {
            let mut keys = profile.auth.scheme.credential_keys();
            if profile.token_url.is_some() {
                keys.push("token_url");
            }
            let variables: Vec<String> = keys.iter().map(|key| variable(&id, key)).collect();
            bail!(
                "{id}: the terminal refused the credentials ({detail}); check {}",
                variables.join(", ")
            )
        }
        CheckOutcome::Failed(error) => bail!("{id}: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_has_a_row_and_the_unconfigured_say_what_to_set() {
        let config = Config::from_pairs(&[("terminals.port_of_virginia.api_key", "k")]).unwrap();

        let text = list_text(&config);

        let rows: Vec<Vec<&str>> = text
            .lines()
            .skip(1)
            .map(|l| l.split('\t').collect())
            .collect();
        let ids: Vec<&str> = rows.iter().map(|row| row[0]).collect();
        assert_eq!(
            ids,
            [
                "apm_terminals",
                "emodal",
                "port_houston",
                "port_of_virginia",
                "sandbox"
            ]
        );
        let houston = &rows[2];
        assert_eq!(houston[3], "no");
        assert_eq!(
            houston[8..11],
            ["unknown", "assumed", "client_id,client_secret,base_url"]
        );
        let pov = &rows[3];
        assert_eq!(
            pov[2..8],
            [
                "USORF",
                "yes",
                "port-of-virginia",
                "query api_key",
                "unlimited",
                "100"
            ]
        );
        assert_eq!(pov[10], "-");
        assert!(!text.contains("\tk\t"));
    }

    #[test]
    fn each_table_of_one_profile_has_its_own_row() {
        let config = Config::from_pairs(&[
            ("terminals.port_of_virginia.api_key", "k"),
            ("terminals.pov_north.profile", "port_of_virginia"),
            ("terminals.pov_north.api_key", "k2"),
            ("terminals.pov_north.batch_size", "10"),
        ])
        .unwrap();

        let text = list_text(&config);

        let rows: Vec<Vec<&str>> = text
            .lines()
            .skip(1)
            .map(|l| l.split('\t').collect())
            .collect();
        let virginia: Vec<(&str, &str, &str)> = rows
            .iter()
            .filter(|row| row[1] == "The Port of Virginia")
            .map(|row| (row[0], row[3], row[7]))
            .collect();
        assert_eq!(
            virginia,
            [
                ("port_of_virginia", "yes", "100"),
                ("pov_north", "yes", "10")
            ]
        );
    }

    #[test]
    fn an_apm_app_per_facility_lists_each_with_its_own_port() {
        let mut pairs = Vec::new();
        for (name, client, facility) in [
            ("apm_pier400", "a", "USLAX"),
            ("apm_elizabeth", "b", "USNWK"),
        ] {
            pairs.extend([
                (
                    format!("terminals.{name}.profile"),
                    "apm_terminals".to_owned(),
                ),
                (format!("terminals.{name}.client_id"), client.to_owned()),
                (format!("terminals.{name}.client_secret"), "s".to_owned()),
                (
                    format!("terminals.{name}.token_url"),
                    "https://auth.apm.example/token".to_owned(),
                ),
                (
                    format!("terminals.{name}.facility_code"),
                    facility.to_owned(),
                ),
            ]);
        }
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(key, value)| (key.as_str(), value.as_str()))
            .collect();
        let config = Config::from_pairs(&pairs).unwrap();

        let text = list_text(&config);

        let apm: Vec<(&str, &str)> = text
            .lines()
            .skip(1)
            .map(|l| l.split('\t').collect::<Vec<_>>())
            .filter(|row| row[1] == "APM Terminals")
            .map(|row| (row[0], row[2]))
            .collect();
        assert_eq!(apm, [("apm_elizabeth", "USNYC"), ("apm_pier400", "USLAX")]);
    }

    #[test]
    fn an_unconfigured_terminal_names_the_variables_to_set() {
        let houston = Profiles::embedded().get("port_houston").unwrap();

        let text = not_configured(houston);

        assert!(
            text.contains(
                "TIDEMARK_TERMINALS__PORT_HOUSTON__CLIENT_ID, \
                 TIDEMARK_TERMINALS__PORT_HOUSTON__CLIENT_SECRET, \
                 TIDEMARK_TERMINALS__PORT_HOUSTON__BASE_URL"
            ),
            "{text}"
        );
        assert!(text.contains("issued on registration"), "{text}");
    }
}
