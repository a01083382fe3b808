//! `tidemark carriers list` and `tidemark carriers check SCAC [NUMBER]`: what an operator
//! needs to connect real lines and to see whether they work.

use std::fmt::Write as _;
use std::sync::Arc;

use anyhow::bail;
use chrono::{DateTime, Utc};
use tidemark_carriers::CarrierError;
use tidemark_carriers::profile::{ProfileKind, Profiles, RateBudget};
use tidemark_domain::Clock;
use tidemark_domain::RequestType;
use tidemark_domain::carriers::NumberType;

use crate::app::App;
use crate::config::{CarrierConfig, Config};
use crate::parts::carriers::{Carriers, add_configured};
use crate::use_cases::tracking::limits::{self, CarrierHealth};
use crate::use_cases::tracking::{engine, report};

/// One row of `carriers list`.
#[derive(Debug)]
struct Row {
    scac: String,
    name: String,
    configured: String,
    protocol: String,
    auth: String,
    budget: RateBudget,
}

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

fn time_text(at: Option<DateTime<Utc>>) -> String {
    at.map_or_else(
        || "-".to_owned(),
        |at| at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    )
}

fn rows(config: &Config) -> Vec<Row> {
    let profiles = Profiles::embedded();
    let configured = |scac: &str| -> Option<&CarrierConfig> {
        config
            .carriers
            .iter()
            .find(|c| c.scac == scac || c.serves.iter().any(|s| s == scac))
    };
    let mut rows = Vec::new();
    for profile in profiles.all() {
        let Some((_, api)) = profiles.line_api(&profile.scac) else {
            continue;
        };
        let config = configured(&profile.scac);
        let protocol = config.map_or(api.protocol(), |c| c.protocol);
        let no_api = !protocol.has_api() && config.is_none();
        let configured = match (&profile.kind, config, no_api) {
            (_, _, true) => "no API".to_owned(),
            (ProfileKind::Brand { family, .. }, Some(_), _) => format!("via {family}"),
            (ProfileKind::Brand { family, .. }, None, _) => format!("no (via {family})"),
            (ProfileKind::Line(_), Some(_), _) => "yes".to_owned(),
            (ProfileKind::Line(_), None, _) => "no".to_owned(),
        };
        let auth = match config {
            Some(config) => config.auth.kind().to_owned(),
            None if no_api => "-".to_owned(),
            None => api
                .auth
                .iter()
                .map(|option| option.scheme.kind())
                .collect::<Vec<_>>()
                .join("|"),
        };
        rows.push(Row {
            scac: profile.scac.clone(),
            name: profile.name.clone(),
            configured,
            protocol: protocol.as_str().to_owned(),
            auth,
            budget: config.map_or_else(|| api.budget(), |c| c.budget),
        });
    }
    // Lines connected with the generic form.
    for config in &config.carriers {
        if !rows.iter().any(|row| row.scac == config.scac) {
            rows.push(Row {
                scac: config.scac.clone(),
                name: tidemark_geo::reference::ReferenceData::embedded()
                    .shipping_line(&config.scac)
                    .map_or_else(|| config.scac.clone(), |line| line.name.clone()),
                configured: "yes".to_owned(),
                protocol: config.protocol.as_str().to_owned(),
                auth: config.auth.kind().to_owned(),
                budget: config.budget,
            });
        }
    }
    rows
}

/// The table `carriers list` prints: every profile and every configured line, with its
/// health from the database (shared by every process).
fn table(rows: &[Row], health: &[CarrierHealth], now: DateTime<Utc>) -> String {
    let mut out = String::from(
        "SCAC\tNAME\tCONFIGURED\tPROTOCOL\tAUTH\tBUDGET\tLAST_SUCCESS\tLAST_ERROR\tCREDENTIALS\tCIRCUIT\n",
    );
    let profiles = Profiles::embedded();
    for row in rows {
        // A brand's calls are its family's.
        let family = profiles
            .get(&row.scac)
            .map_or(row.scac.as_str(), |p| p.family());
        let state = health.iter().find(|h| h.scac == family);
        let last_error = state
            .and_then(|h| {
                h.last_error
                    .as_ref()
                    .map(|e| format!("{} {e}", time_text(h.last_error_at)))
            })
            .unwrap_or_else(|| "-".to_owned())
            .replace(['\t', '\n'], " ");
        let credentials = match state.and_then(|h| h.credentials_refused_since) {
            Some(since) => format!("refused since {}", time_text(Some(since))),
            None => "-".to_owned(),
        };
        let circuit = match state.and_then(|h| h.circuit_open_until) {
            Some(until) if until > now => format!("open until {}", time_text(Some(until))),
            _ => "closed".to_owned(),
        };
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            row.scac,
            row.name,
            row.configured,
            row.protocol,
            row.auth,
            budget_text(row.budget),
            time_text(state.and_then(|h| h.last_success_at)),
            last_error,
            credentials,
            circuit
        );
    }
    out
}

/// What `tidemark carriers list` prints for this app's configuration and database.
pub async fn list_text(app: &App) -> anyhow::Result<String> {
    let rows = rows(&app.config);
    let health = limits::health(&app.engine()).await?;
    Ok(table(&rows, &health, app.clock.now()))
}

/// `tidemark carriers list`.
pub async fn list(config: Config) -> anyhow::Result<()> {
    let store = crate::serve::open_store(&config).await?;
    let app = App::new(
        config,
        store,
        Arc::new(tidemark_domain::SystemClock),
        Arc::new(tidemark_domain::UuidV7Ids),
    );
    print!("{}", list_text(&app).await?);
    Ok(())
}

/// The request types to ask a number as, in order: `given` alone when the operator names
/// one; else the kind the number looks like first, then the others the line's profile (or
/// the reference data) says it can track, so a booking is asked as a booking.
fn request_types_to_try(scac: &str, number: &str, given: Option<RequestType>) -> Vec<RequestType> {
    if let Some(given) = given {
        return vec![given];
    }
    let inferred = match tidemark_domain::carriers::infer(number).map(|i| i.number_type) {
        Ok(NumberType::Container) => RequestType::Container,
        Ok(NumberType::Booking) => RequestType::BookingNumber,
        _ => RequestType::BillOfLading,
    };
    let supported: Vec<RequestType> = match Profiles::embedded().line_api(scac) {
        Some((_, api)) => api
            .request_types
            .value
            .iter()
            .flatten()
            .filter_map(|kind| RequestType::parse(kind))
            .collect(),
        None => RequestType::ALL.to_vec(),
    };
    let mut order = vec![inferred];
    order.extend(supported.iter().copied().filter(|t| *t != inferred));
    // A type the line does not support is still asked first when the number is plainly of
    // that kind: the check says what the line answers, not what the profile believes.
    order
}

/// What a poll would make of an answer, in lines an operator reads: the route, each
/// milestone with its UTC time, place, vessel and voyage, and what could not be read.
fn dry_run(snapshot: &tidemark_carriers::CarrierSnapshot) -> String {
    let report =
        report::from_snapshot(snapshot, tidemark_geo::reference::ReferenceData::embedded());
    let mut out = String::new();
    let place = |p: &Option<String>| p.clone().unwrap_or_else(|| "-".to_owned());
    let _ = writeln!(
        out,
        "  route: port of lading {}, port of discharge {}{}",
        place(&report.port_of_lading),
        place(&report.port_of_discharge),
        report
            .destination
            .as_ref()
            .map_or_else(String::new, |d| format!(", destination {d}"))
    );
    if let Some(document) = &report.transport_document {
        let _ = writeln!(out, "  bill of lading: {document}");
    }
    let containers: Vec<&str> = report
        .containers
        .iter()
        .map(|c| c.number.as_str())
        .collect();
    let _ = writeln!(
        out,
        "  containers: {}",
        if containers.is_empty() {
            "-".to_owned()
        } else {
            containers.join(", ")
        }
    );
    let mut milestones: Vec<_> = report.milestones.iter().collect();
    milestones.sort_by_key(|m| m.at);
    let _ = writeln!(out, "  milestones: {}", milestones.len());
    for m in milestones {
        let _ = writeln!(
            out,
            "    {}\t{}\t{}\t{}\t{}\t{}",
            m.at.format("%Y-%m-%dT%H:%M:%SZ"),
            m.event.as_str(),
            place(&m.location_locode),
            place(&m.container_number),
            place(&m.vessel_name),
            place(&m.voyage_number)
        );
    }
    let unnamed = report
        .raw_events
        .iter()
        .filter(|e| e.reported.event.is_none())
        .count();
    let _ = writeln!(
        out,
        "  raw events: {} ({unnamed} without a milestone)",
        report.raw_events.len()
    );
    for skipped in &snapshot.skipped {
        let _ = writeln!(out, "  left out: {}", skipped.replace(['\t', '\n'], " "));
    }
    out
}

/// An error in words an operator can act on.
pub fn explain(scac: &str, error: &CarrierError) -> String {
    match error {
        CarrierError::CredentialsRefused(detail) => format!(
            "{scac} refused the credentials ({detail}): check the keys set under \
             [carriers.{scac}] and that the application is approved for tracking"
        ),
        CarrierError::RateLimited { retry_after } => format!(
            "{scac} is rate limiting us{}: the budget is spent for now",
            retry_after.map_or_else(String::new, |wait| format!(
                " (retry after {} s)",
                wait.as_secs()
            ))
        ),
        CarrierError::NotFound => {
            format!("{scac} accepted the credentials but does not know this number")
        }
        CarrierError::UnexpectedPayload(detail) => {
            format!("{scac} answered with something Tidemark cannot read: {detail}")
        }
        CarrierError::Unavailable(detail) => {
            let lower = detail.to_lowercase();
            let cause = if lower.contains("dns")
                || lower.contains("lookup")
                || lower.contains("name or service not known")
                || lower.contains("no address")
            {
                "DNS: the host name of base_url does not resolve"
            } else if lower.contains("certificate")
                || lower.contains("tls")
                || lower.contains("handshake")
            {
                "TLS: the secure connection failed (certificate or protocol)"
            } else if lower.contains("timed out") {
                "timeout: no answer in time"
            } else if lower.contains("connection refused") || lower.contains("connect") {
                "connection: nothing answers at base_url"
            } else if lower.contains("answered 5") {
                "the carrier's server failed"
            } else {
                "the carrier could not be reached"
            };
            format!("{scac}: {cause} ({detail})")
        }
    }
}

/// `tidemark carriers check SCAC [NUMBER] [--type TYPE]`: real calls with the configured
/// credentials, asked exactly as a poll asks ([`engine::query_of`]). With a number, it is
/// asked as each request type the line supports until one is known, and what a poll would
/// make of the answer is printed (a dry run: nothing is stored).
pub async fn check(
    config: Config,
    scac: &str,
    number: Option<&str>,
    request_type: Option<RequestType>,
) -> anyhow::Result<()> {
    let scac = scac.trim().to_uppercase();
    let clock: Arc<dyn Clock> = Arc::new(tidemark_domain::SystemClock);
    let mut carriers = Carriers::default();
    add_configured(&mut carriers, &config.carriers, &clock)?;
    let Some(carrier) = carriers.get(&scac) else {
        let hint = match Profiles::embedded().line_api(&scac) {
            Some((line, api)) => format!(
                "; give its credentials under [carriers.{}]: {}",
                line.scac,
                api.auth
                    .iter()
                    .map(|option| option.scheme.credential_keys().join(" and "))
                    .collect::<Vec<_>>()
                    .join(", or ")
            ),
            None => String::new(),
        };
        bail!("{scac} is not configured{hint}");
    };
    if let Some(reason) = carrier.unavailable_reason() {
        bail!("{reason}");
    }
    if carrier.fed_by_edi() {
        bail!(
            "{scac} has no public tracking API: it is followed through the EDI (X12 315 or \
             IFTSTA) it sends you. Ask the line (or its EDI provider) for a 315 feed and hand \
             it to Tidemark: POST /v2/edi_messages, a watched folder or email (see \
             docs/src/edi.md). Its tracking requests wait as pending until then."
        );
    }
    let Some(number) = number else {
        // Without a number, a made-up one: any answer but refused credentials, a rate limit
        // or a network failure shows that the connection works.
        let query = engine::query_of(
            request_type.unwrap_or(RequestType::BillOfLading),
            "TDMK0000000",
        );
        return match carrier.fetch(&query).await {
            Ok(_) | Err(CarrierError::NotFound) => {
                println!(
                    "{scac}: OK, the credentials are accepted (test number unknown, as expected)"
                );
                Ok(())
            }
            Err(error) => bail!("{}", explain(&scac, &error)),
        };
    };
    let mut asked = Vec::new();
    let mut answered_empty = false;
    for kind in request_types_to_try(&scac, number, request_type) {
        let query = engine::query_of(kind, number);
        let as_what = kind.as_str().replace('_', " ");
        asked.push(as_what.clone());
        match carrier.fetch(&query).await {
            Ok(mut snapshot) => {
                snapshot.keep_about(&query);
                if snapshot.events.is_empty() && snapshot.skipped.is_empty() {
                    println!("{scac}: no events for {number} as a {as_what}");
                    answered_empty = true;
                    continue;
                }
                println!(
                    "{scac}: OK, {} event(s) for {number} as a {}{}",
                    snapshot.events.len(),
                    kind.as_str().replace('_', " "),
                    if snapshot.skipped.is_empty() {
                        String::new()
                    } else {
                        format!(", {} left out", snapshot.skipped.len())
                    }
                );
                print!("{}", dry_run(&snapshot));
                return Ok(());
            }
            Err(CarrierError::NotFound) => {
                println!("{scac}: {number} is not known as a {as_what}");
            }
            Err(error) => bail!("{}", explain(&scac, &error)),
        }
    }
    if answered_empty {
        // The line took the query and has nothing for the number yet.
        println!("{scac}: OK, 0 event(s) for {number}");
        return Ok(());
    }
    bail!(
        "{} (asked as {})",
        explain(&scac, &CarrierError::NotFound),
        asked.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_explained_in_words() {
        let dns = CarrierError::Unavailable(
            "error sending request: client error (Connect): dns error: failed to lookup address"
                .to_owned(),
        );
        let tls = CarrierError::Unavailable("invalid peer certificate: UnknownIssuer".to_owned());

        assert!(explain("HLCU", &dns).contains("DNS"));
        assert!(explain("HLCU", &tls).contains("TLS"));
        assert!(
            explain("HLCU", &CarrierError::CredentialsRefused("401".to_owned()))
                .contains("refused the credentials")
        );
        assert!(explain("HLCU", &CarrierError::NotFound).contains("does not know this number"));
        assert!(
            explain(
                "HLCU",
                &CarrierError::RateLimited {
                    retry_after: Some(std::time::Duration::from_secs(60))
                }
            )
            .contains("rate limiting")
        );
    }

    #[test]
    fn budgets_read_per_minute_and_per_day() {
        assert_eq!(
            budget_text(RateBudget {
                per_minute: Some(10),
                per_day: Some(6000)
            }),
            "10/min 6000/day"
        );
        assert_eq!(budget_text(RateBudget::default()), "unlimited");
    }
}
