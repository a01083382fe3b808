//! One lookup of one container, told for a person: what was asked and of whom (with the
//! profile's facts in force and how sure they are), what came back, and how it was read.
//! The CLI prints it to let an operator try their credentials.

use std::fmt;

use tidemark_domain::ContainerNumber;

use crate::connector::{ContainerQuery, TerminalConnector, TerminalError};
use crate::profile::{Confidence, Fact, TerminalProfile};
use crate::status::TerminalStatus;

/// The outcome of [`check`]; `Display` writes it as plain text.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckReport {
    /// The profile in force when asked.
    pub profile: TerminalProfile,
    pub asked: ContainerQuery,
    pub outcome: CheckOutcome,
}

/// What came back.
#[derive(Clone, Debug, PartialEq)]
pub enum CheckOutcome {
    Found(Box<TerminalStatus>),
    /// The terminal answered, and the container was not in the answer.
    NotFound,
    Failed(TerminalError),
}

/// Looks up `container` (with its bill of lading, when the terminal needs one) and reports.
pub async fn check(
    connector: &dyn TerminalConnector,
    container: ContainerNumber,
    bill_of_lading: Option<String>,
) -> CheckReport {
    let asked = ContainerQuery::new(container, bill_of_lading);
    let outcome = match connector.lookup(std::slice::from_ref(&asked)).await {
        Ok(statuses) => statuses
            .into_iter()
            .find(|status| status.container_number == asked.container)
            .map_or(CheckOutcome::NotFound, |status| {
                CheckOutcome::Found(Box::new(status))
            }),
        Err(error) => CheckOutcome::Failed(error),
    };
    CheckReport {
        profile: connector.profile().clone(),
        asked,
        outcome,
    }
}

impl CheckReport {
    /// How the answer was read, one line each.
    pub fn reading(&self) -> Vec<String> {
        let status = match &self.outcome {
            CheckOutcome::Found(status) => status,
            CheckOutcome::NotFound => {
                return vec![
                    "the terminal does not know this container (yet): nothing to read".to_owned(),
                ];
            }
            CheckOutcome::Failed(error) => return vec![advice(error)],
        };
        let or_unsaid = |value: Option<String>| value.unwrap_or_else(|| "not said".to_owned());
        let mut lines = vec![
            format!(
                "available for pickup: {}",
                match status.availability {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "not said",
                }
            ),
            format!(
                "last free day: {}",
                or_unsaid(status.last_free_day.map(|d| d.to_string()))
            ),
        ];
        if status.holds.is_empty() {
            lines.push("holds: none in force".to_owned());
        }
        for hold in &status.holds {
            lines.push(format!(
                "hold: {} ({}), the terminal's words {:?}",
                hold.kind.as_str(),
                match hold.status {
                    crate::status::HoldStatus::Hold => "hold",
                    crate::status::HoldStatus::Pending => "pending",
                },
                hold.description
            ));
        }
        if status.fees.is_empty() {
            lines.push("fees: none".to_owned());
        }
        for fee in &status.fees {
            lines.push(format!(
                "fee: {} {} {}, the terminal's words {:?}",
                fee.kind.as_str(),
                fee.amount_decimal(),
                fee.currency_code,
                fee.description
            ));
        }
        let at = |value: Option<chrono::DateTime<chrono::Utc>>| {
            or_unsaid(value.map(|at| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)))
        };
        lines.push(format!("appointment: {}", at(status.appointment_at)));
        lines.push(format!("full out: {}", at(status.full_out_at)));
        lines.push(format!("empty returned: {}", at(status.empty_returned_at)));
        lines.push(format!("location: {}", or_unsaid(status.location.clone())));
        lines
    }
}

/// What an operator can do about an error.
fn advice(error: &TerminalError) -> String {
    let hint = match error {
        TerminalError::CredentialsRefused(_) => {
            "check the credentials (and token_url) set for this terminal"
        }
        TerminalError::RateLimited { .. } => "wait, or lower requests_per_minute",
        TerminalError::Unavailable(_) => {
            "the terminal could not be reached: check base_url, or retry later"
        }
        TerminalError::Drift(_) => {
            "the answer is not the shape this profile expects: check base_url, then report the answer"
        }
        TerminalError::BatchTooLarge { .. } => "ask for fewer containers (batch_size)",
        TerminalError::MissingBillOfLading(_) => "give the bill of lading too",
    };
    format!("failed ({}): {error}; {hint}", error.kind())
}

fn fact<T: fmt::Display>(fact: &Fact<T>) -> String {
    let value = fact
        .value
        .as_ref()
        .map_or_else(|| "unknown".to_owned(), ToString::to_string);
    format!("{value} ({})", confidence(fact.confidence))
}

fn confidence(confidence: Confidence) -> &'static str {
    match confidence {
        Confidence::High => "high confidence",
        Confidence::Medium => "medium confidence",
        Confidence::Low => "low confidence",
        Confidence::Assumed => "assumed",
        Confidence::Configured => "your setting",
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let profile = &self.profile;
        writeln!(f, "terminal: {} ({})", profile.name, profile.id)?;
        if let Some(protocol) = profile.protocol() {
            writeln!(
                f,
                "  protocol: {} ({})",
                protocol.as_str(),
                confidence(profile.protocol.confidence)
            )?;
        }
        if let Some(base_url) = &profile.base_url {
            writeln!(f, "  base URL: {}", fact(base_url))?;
        }
        if let Some(token_url) = &profile.token_url {
            writeln!(f, "  token URL: {}", fact(token_url))?;
        }
        writeln!(
            f,
            "  auth: {} with {} ({})",
            profile.auth.scheme.kind(),
            match profile.auth.scheme.credential_keys().as_slice() {
                [] => "nothing".to_owned(),
                keys => keys.join(", "),
            },
            confidence(profile.auth.confidence)
        )?;
        writeln!(f, "  batch size: {}", fact(&profile.batch_size))?;
        writeln!(
            f,
            "  budget: {} a minute, {} a day",
            fact(&profile.requests_per_minute),
            fact(&profile.requests_per_day)
        )?;
        write!(f, "asked: {}", self.asked.container)?;
        match &self.asked.bill_of_lading {
            Some(bl) => writeln!(f, ", bill of lading {bl}")?,
            None => writeln!(f)?,
        }
        writeln!(
            f,
            "answer: {}",
            match &self.outcome {
                CheckOutcome::Found(_) => "found",
                CheckOutcome::NotFound => "not found",
                CheckOutcome::Failed(_) => "failed",
            }
        )?;
        for line in self.reading() {
            writeln!(f, "  {line}")?;
        }
        if let CheckOutcome::Found(status) = &self.outcome {
            writeln!(f, "the terminal's own answer:")?;
            let raw = serde_json::to_string_pretty(&status.raw).unwrap_or_default();
            for line in raw.lines() {
                writeln!(f, "  {line}")?;
            }
        }
        Ok(())
    }
}
