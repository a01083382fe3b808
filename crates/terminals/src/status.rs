//! What a terminal says about one container, in Terminal49's vocabulary
//! (`holds_at_pod_terminal`, `fees_at_pod_terminal`, `available_for_pickup`, `pickup_lfd`,
//! `pickup_appointment_at`; Terminal49 `docs/api-docs/in-depth-guides/holds-and-fees.mdx`),
//! with the terminal's own JSON kept beside it.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use tidemark_domain::ContainerNumber;

/// One container as a terminal reported it at `checked_at`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TerminalStatus {
    pub container_number: ContainerNumber,
    /// When Tidemark asked (the injected clock), not when the terminal last changed it.
    pub checked_at: DateTime<Utc>,
    /// Whether it can be picked up now; `None` when the terminal did not say.
    pub availability: Option<bool>,
    /// The terminal's last free day (a local calendar day; the line's LFD is another).
    pub last_free_day: Option<NaiveDate>,
    /// Holds in force. A cleared or released hold is left out, never listed as released.
    pub holds: Vec<Hold>,
    pub fees: Vec<Fee>,
    pub appointment_at: Option<DateTime<Utc>>,
    pub full_out_at: Option<DateTime<Utc>>,
    pub empty_returned_at: Option<DateTime<Utc>>,
    /// Where it is in the yard, in the terminal's words (a yard block or position).
    pub location: Option<String>,
    /// The terminal's own JSON for this container, verbatim.
    pub raw: serde_json::Value,
}

impl TerminalStatus {
    /// A status that says nothing yet, checked at `checked_at`.
    pub fn new(container_number: ContainerNumber, checked_at: DateTime<Utc>) -> Self {
        Self {
            container_number,
            checked_at,
            availability: None,
            last_free_day: None,
            holds: Vec::new(),
            fees: Vec::new(),
            appointment_at: None,
            full_out_at: None,
            empty_returned_at: None,
            location: None,
            raw: serde_json::Value::Null,
        }
    }
}

/// A hold in force.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    pub kind: HoldKind,
    pub status: HoldStatus,
    /// The terminal's own text for it (code and description), kept as given.
    pub description: String,
}

/// Terminal49's six hold names (case-sensitive in their API, so serialized as they spell
/// them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HoldKind {
    /// The line's hold: freight or charges unpaid, no carrier release.
    #[serde(rename = "freight")]
    Freight,
    #[serde(rename = "customs")]
    Customs,
    #[serde(rename = "USDA")]
    Usda,
    /// Customs' X-ray exam (Vehicle and Cargo Inspection System).
    #[serde(rename = "VACIS")]
    Vacis,
    /// Traffic mitigation fee unpaid (LA/LB PierPass).
    #[serde(rename = "TMF")]
    Tmf,
    #[serde(rename = "other")]
    Other,
}

impl HoldKind {
    /// The kind a terminal's free text names, by its words: VACIS, USDA (or agriculture),
    /// TMF (or traffic mitigation), customs (or CBP), freight (or line, carrier); anything
    /// else is `Other`. The most specific word wins: "CUSTOMS VACIS EXAM" is VACIS.
    pub fn from_text(text: &str) -> Self {
        let text = text.to_ascii_uppercase();
        let has = |word: &str| {
            text.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|token| token == word)
        };
        if has("VACIS") {
            Self::Vacis
        } else if has("USDA") || has("AGRICULTURE") || has("APHIS") || has("AG") {
            Self::Usda
        } else if has("TMF") || text.contains("TRAFFIC MITIGATION") || has("PIERPASS") {
            Self::Tmf
        } else if has("CUSTOMS") || has("CBP") || has("CUS") {
            Self::Customs
        } else if has("FREIGHT") || has("LINE") || has("CARRIER") || has("SSL") {
            Self::Freight
        } else {
            Self::Other
        }
    }

    /// Terminal49's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Freight => "freight",
            Self::Customs => "customs",
            Self::Usda => "USDA",
            Self::Vacis => "VACIS",
            Self::Tmf => "TMF",
            Self::Other => "other",
        }
    }
}

/// Whether a hold is in force or announced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HoldStatus {
    Hold,
    Pending,
}

impl HoldStatus {
    /// A terminal's status word read as Terminal49's: released, cleared, removed, inactive
    /// and the like are `None` (the hold is gone); pending or requested is `Pending`;
    /// anything else, an empty word included, is a hold in force.
    pub fn from_text(text: &str) -> Option<Self> {
        let word = text.trim().to_ascii_uppercase();
        let gone = [
            "RELEASED",
            "RELEASE",
            "CLEARED",
            "CLEAR",
            "REMOVED",
            "INACTIVE",
            "RESOLVED",
            "PAID",
            "SATISFIED",
            "N",
            "NO",
            "NONE",
            "FALSE",
        ];
        if gone.contains(&word.as_str()) {
            None
        } else if word.starts_with("PEND") || word == "REQUESTED" {
            Some(Self::Pending)
        } else {
            Some(Self::Hold)
        }
    }
}

/// A fee the terminal reports for the container.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fee {
    pub kind: FeeKind,
    /// The amount in hundredths of the currency unit (cents for USD): exact, comparable
    /// and summable, where a float is not and a decimal string would make every consumer
    /// parse it and tell "285" from "285.00". Terminals quote at most two decimals;
    /// Terminal49's JSON number is `amount_cents / 100`.
    pub amount_cents: i64,
    /// ISO 4217, e.g. `USD`.
    pub currency_code: String,
    /// The terminal's own text for it (code and description), kept as given.
    pub description: String,
}

impl Fee {
    /// The amount as a decimal string, such as `285.00`.
    pub fn amount_decimal(&self) -> String {
        let sign = if self.amount_cents < 0 { "-" } else { "" };
        let cents = self.amount_cents.unsigned_abs();
        format!("{sign}{}.{:02}", cents / 100, cents % 100)
    }
}

/// Terminal49's fee types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeeKind {
    Demurrage,
    ExtendedDwellTime,
    Exam,
    Total,
    Other,
}

impl FeeKind {
    /// The kind a terminal's free text names: demurrage (or storage), extended dwell,
    /// exam (or inspection), total; anything else is `Other`.
    pub fn from_text(text: &str) -> Self {
        let text = text.to_ascii_uppercase();
        if text.contains("DEMURRAGE") || text.contains("STORAGE") {
            Self::Demurrage
        } else if text.contains("DWELL") {
            Self::ExtendedDwellTime
        } else if text.contains("EXAM") || text.contains("INSPECTION") {
            Self::Exam
        } else if text.contains("TOTAL") {
            Self::Total
        } else {
            Self::Other
        }
    }

    /// Terminal49's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Demurrage => "demurrage",
            Self::ExtendedDwellTime => "extended_dwell_time",
            Self::Exam => "exam",
            Self::Total => "total",
            Self::Other => "other",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_words_map_to_terminal49_s_names_and_unknown_words_to_other() {
        let cases = [
            ("CUSTOMS HOLD", HoldKind::Customs),
            ("CBP exam - VACIS", HoldKind::Vacis),
            ("USDA", HoldKind::Usda),
            ("TMF HOLD", HoldKind::Tmf),
            ("Line hold", HoldKind::Freight),
            ("FREIGHT", HoldKind::Freight),
            ("NO GENSET", HoldKind::Other),
            ("LANDING$", HoldKind::Other),
        ];

        for (text, kind) in cases {
            assert_eq!(HoldKind::from_text(text), kind, "{text}");
        }
    }

    #[test]
    fn released_holds_are_gone_and_pending_ones_are_pending() {
        assert_eq!(HoldStatus::from_text("RELEASED"), None);
        assert_eq!(HoldStatus::from_text(" cleared "), None);
        assert_eq!(HoldStatus::from_text("None"), None);
        assert_eq!(HoldStatus::from_text("PENDING"), Some(HoldStatus::Pending));
        assert_eq!(HoldStatus::from_text("HOLD"), Some(HoldStatus::Hold));
        assert_eq!(HoldStatus::from_text(""), Some(HoldStatus::Hold));
    }

    #[test]
    fn kinds_serialize_as_terminal49_spells_them() {
        let hold = serde_json::to_value(HoldKind::Usda).unwrap();
        let fee = serde_json::to_value(FeeKind::ExtendedDwellTime).unwrap();

        assert_eq!(hold, "USDA");
        assert_eq!(fee, "extended_dwell_time");
    }

    #[test]
    fn an_amount_prints_with_two_decimals() {
        let fee = Fee {
            kind: FeeKind::Demurrage,
            amount_cents: 28_505,
            currency_code: "USD".to_owned(),
            description: String::new(),
        };

        assert_eq!(fee.amount_decimal(), "285.05");
    }
}
