//! Number → carrier: which line a bill of lading, booking or container number belongs to,
//! with Terminal49's vocabulary (`POST /v2/tracking_requests/infer_number`).
//!
//! Evidence, strongest first (CARRIERS.md §2): a SCAC or brand prefix on a bill of lading or
//! booking number, then a container's ISO 6346 owner code. A leasing company's box may be
//! operated by any line, so its owner code never selects one. The prefixes are data
//! ([`prefixes.txt`](self), one reviewed file with its provenance), read once.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::container_number::check_digit;

/// The reviewed prefix table.
const PREFIXES: &str = include_str!("prefixes.txt");

/// The longest number considered; longer input is a mistake, not a number.
pub const MAX_NUMBER_LENGTH: usize = 64;

/// The SCAC of the sandbox carrier, whose numbers start with it.
const SANDBOX_SCAC: &str = "TEST";

/// Only candidates at least this confident are selected without asking.
const AUTO_SELECT_CONFIDENCE: f64 = 0.8;

/// What kind of number it looks like (Terminal49's `number_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberType {
    Container,
    BillOfLading,
    Booking,
}

impl NumberType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Container => "container",
            Self::BillOfLading => "bill_of_lading",
            Self::Booking => "booking",
        }
    }
}

/// Whether a line was chosen (Terminal49's `shipping_line.decision`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// One line, confidently: a tracking request without a SCAC uses it.
    AutoSelect,
    /// A guess the user should confirm (weak evidence or a failed check digit).
    NeedsConfirmation,
    /// Nothing to go on (unknown prefix, or a leasing company's container).
    NoPrediction,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AutoSelect => "auto_select",
            Self::NeedsConfirmation => "needs_confirmation",
            Self::NoPrediction => "no_prediction",
        }
    }
}

/// The source's confidence in a prefix row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confidence {
    High,
    Medium,
    Low,
}

impl Confidence {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "high" => Some(Self::High),
            "medium" => Some(Self::Medium),
            "low" => Some(Self::Low),
            _ => None,
        }
    }

    /// Higher for more confident rows.
    fn rank(self) -> u8 {
        match self {
            Self::High => 2,
            Self::Medium => 1,
            Self::Low => 0,
        }
    }

    /// As a candidate's confidence, 0 to 1.
    pub fn score(self) -> f64 {
        match self {
            Self::High => 0.95,
            Self::Medium => 0.85,
            Self::Low => 0.6,
        }
    }
}

/// A possible line for the number.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub scac: String,
    /// From 0 to 1.
    pub confidence: f64,
}

/// What was checked about the number itself (Terminal49's `validation`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validation {
    /// `false` for a container number whose check digit fails.
    pub is_valid: Option<bool>,
    /// `container` or `shipment` (bills of lading and bookings).
    pub kind: &'static str,
    /// For container numbers: whether the ISO 6346 check digit matches.
    pub check_digit_passed: Option<bool>,
    /// The number as it would be sent to the carrier, when that differs from the input
    /// (upper case, without spaces and dashes).
    pub parsed_number: Option<String>,
    /// Why the number is doubtful or no line could be predicted.
    pub reason: Option<String>,
}

/// The answer for one number.
#[derive(Clone, Debug, PartialEq)]
pub struct Inference {
    pub number_type: NumberType,
    pub validation: Validation,
    pub decision: Decision,
    /// Most likely first; the selected line is the first when the decision is
    /// [`Decision::AutoSelect`].
    pub candidates: Vec<Candidate>,
}

impl Inference {
    /// The line to use without asking, if any.
    pub fn selected(&self) -> Option<&Candidate> {
        match self.decision {
            Decision::AutoSelect => self.candidates.first(),
            _ => None,
        }
    }
}

/// Why a string is not a number at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InferError {
    #[error("the number is blank")]
    Blank,
    #[error("the number is longer than {MAX_NUMBER_LENGTH} characters")]
    TooLong,
    #[error("the number may contain only letters and digits (spaces and dashes are ignored)")]
    BadCharacters,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    BillOfLading,
    Owner,
    Lessor,
}

/// One row of the prefix table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixRow {
    kind: Kind,
    /// `None` for a leasing company.
    scac: Option<String>,
    confidence: Confidence,
    note: String,
}

/// Rows by prefix, one table per kind of evidence.
struct Prefixes {
    bills: HashMap<String, PrefixRow>,
    owners: HashMap<String, PrefixRow>,
    /// Each line's own bill-of-lading prefix, by SCAC: its most confident `bl` row, the
    /// first listed of equals (MSC's `MEDU` before `MSCU`).
    bill_prefixes: HashMap<String, (String, Confidence)>,
}

static TABLE: LazyLock<Prefixes> =
    LazyLock::new(|| parse_prefixes(PREFIXES).expect("the embedded prefix table is well formed"));

/// Reads the prefix table: `kind code scac confidence note…` per line, `#` comments.
fn parse_prefixes(text: &str) -> Result<Prefixes, String> {
    let mut table = Prefixes {
        bills: HashMap::new(),
        owners: HashMap::new(),
        bill_prefixes: HashMap::new(),
    };
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(kind), Some(code), Some(scac), Some(confidence)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(format!("line {}: fewer than four fields", index + 1));
        };
        let kind = match kind {
            "bl" => Kind::BillOfLading,
            "owner" => Kind::Owner,
            "lessor" => Kind::Lessor,
            other => return Err(format!("line {}: unknown kind {other:?}", index + 1)),
        };
        let four_letters = |s: &str| s.len() == 4 && s.bytes().all(|b| b.is_ascii_uppercase());
        if !four_letters(code) {
            return Err(format!("line {}: {code:?} is not four letters", index + 1));
        }
        let scac = match (kind, scac) {
            (Kind::Lessor, "-") => None,
            (Kind::Lessor, _) => return Err(format!("line {}: a lessor has no SCAC", index + 1)),
            (_, scac) if four_letters(scac) => Some(scac.to_owned()),
            (_, scac) => return Err(format!("line {}: {scac:?} is not a SCAC", index + 1)),
        };
        let confidence = Confidence::parse(confidence)
            .ok_or_else(|| format!("line {}: unknown confidence {confidence:?}", index + 1))?;
        if let (Kind::BillOfLading, Some(scac)) = (kind, &scac) {
            let best = table
                .bill_prefixes
                .entry(scac.clone())
                .or_insert_with(|| (code.to_owned(), confidence));
            if confidence.rank() > best.1.rank() {
                *best = (code.to_owned(), confidence);
            }
        }
        let row = PrefixRow {
            kind,
            scac,
            confidence,
            note: fields.collect::<Vec<_>>().join(" "),
        };
        let into = match kind {
            Kind::BillOfLading => &mut table.bills,
            Kind::Owner | Kind::Lessor => &mut table.owners,
        };
        if into.insert(code.to_owned(), row).is_some() {
            return Err(format!("line {}: {code} is listed twice", index + 1));
        }
    }
    Ok(table)
}

/// Every SCAC the table can infer, for checking it against the shipping-line reference.
pub fn inferable_scacs() -> Vec<&'static str> {
    let mut scacs: Vec<&str> = TABLE
        .bills
        .values()
        .chain(TABLE.owners.values())
        .filter_map(|row| row.scac.as_deref())
        .chain([SANDBOX_SCAC])
        .collect();
    scacs.sort_unstable();
    scacs.dedup();
    scacs
}

/// The prefix the line's bills of lading start with (Terminal49's `bol_prefix`), when the
/// table knows one: the line's most confident `bl` row, so MSC's is `MEDU`. The sandbox's
/// numbers start with its SCAC.
pub fn bill_of_lading_prefix(scac: &str) -> Option<&'static str> {
    if scac == SANDBOX_SCAC {
        return Some(SANDBOX_SCAC);
    }
    TABLE
        .bill_prefixes
        .get(scac)
        .map(|(prefix, _)| prefix.as_str())
}

/// Upper case, without surrounding whitespace, inner spaces and dashes.
fn normalize(number: &str) -> String {
    number
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .flat_map(char::to_uppercase)
        .collect()
}

fn is_container_shape(number: &str) -> bool {
    let bytes = number.as_bytes();
    bytes.len() == 11
        && bytes[..3].iter().all(u8::is_ascii_uppercase)
        && matches!(bytes[3], b'U' | b'J' | b'Z')
        && bytes[4..].iter().all(u8::is_ascii_digit)
}

/// Predicts the number's type and line.
pub fn infer(input: &str) -> Result<Inference, InferError> {
    let number = normalize(input);
    if number.is_empty() {
        return Err(InferError::Blank);
    }
    if number.chars().count() > MAX_NUMBER_LENGTH {
        return Err(InferError::TooLong);
    }
    if !number.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(InferError::BadCharacters);
    }
    let parsed_number = (number != input).then(|| number.clone());
    if number.starts_with(SANDBOX_SCAC) {
        return Ok(shipment(
            NumberType::BillOfLading,
            parsed_number,
            vec![Candidate {
                scac: SANDBOX_SCAC.to_owned(),
                confidence: 1.0,
            }],
            None,
        ));
    }
    if is_container_shape(&number) {
        return Ok(container(&number, parsed_number));
    }
    if let Some(row) = number.get(..4).and_then(|prefix| TABLE.bills.get(prefix))
        && number.len() > 4
    {
        let candidate = Candidate {
            scac: row.scac.clone().unwrap_or_default(),
            confidence: row.confidence.score(),
        };
        return Ok(shipment(
            NumberType::BillOfLading,
            parsed_number,
            vec![candidate],
            None,
        ));
    }
    let bytes = number.as_bytes();
    if bytes.len() == 9 && bytes.iter().all(u8::is_ascii_digit) {
        return Ok(shipment(
            NumberType::Booking,
            parsed_number,
            vec![Candidate {
                scac: "MAEU".to_owned(),
                confidence: Confidence::Low.score(),
            }],
            Some("a bare 9-digit number is usually Maersk's, but other lines issue them too"),
        ));
    }
    if bytes.len() == 10
        && bytes[..3].iter().all(u8::is_ascii_uppercase)
        && bytes[3..].iter().all(u8::is_ascii_digit)
    {
        return Ok(shipment(
            NumberType::Booking,
            parsed_number,
            vec![Candidate {
                scac: "CMDU".to_owned(),
                confidence: Confidence::Low.score(),
            }],
            Some("three letters and seven digits is the shape of a CMA CGM group booking"),
        ));
    }
    Ok(shipment(
        NumberType::BillOfLading,
        parsed_number,
        Vec::new(),
        Some("no known carrier prefix; give the scac"),
    ))
}

/// A bill of lading or booking: auto-selected when the one candidate is confident enough.
fn shipment(
    number_type: NumberType,
    parsed_number: Option<String>,
    candidates: Vec<Candidate>,
    reason: Option<&str>,
) -> Inference {
    let decision = match candidates.as_slice() {
        [] => Decision::NoPrediction,
        [only] if only.confidence >= AUTO_SELECT_CONFIDENCE => Decision::AutoSelect,
        _ => Decision::NeedsConfirmation,
    };
    Inference {
        number_type,
        validation: Validation {
            is_valid: Some(true),
            kind: "shipment",
            check_digit_passed: None,
            parsed_number,
            reason: reason.map(str::to_owned),
        },
        decision,
        candidates,
    }
}

/// A container number: its owner code names the line unless a lessor owns the box; a
/// failed check digit is reported and turns a selection into a question.
fn container(number: &str, parsed_number: Option<String>) -> Inference {
    let expected = check_digit(&number[..10]);
    let found = number.as_bytes()[10] - b'0';
    let passed = expected == Some(found);
    let owner = &number[..4];
    let mut reasons = Vec::new();
    if let (false, Some(expected)) = (passed, expected) {
        reasons.push(format!("the check digit should be {expected}, not {found}"));
    }
    let (decision, candidates) = match TABLE.owners.get(owner) {
        Some(row) if row.kind == Kind::Lessor => {
            reasons.push(format!(
                "{owner} is a leasing company's code ({}): any line may operate the box; give \
                 the scac",
                row.note
            ));
            (Decision::NoPrediction, Vec::new())
        }
        Some(row) => {
            let candidate = Candidate {
                scac: row.scac.clone().unwrap_or_default(),
                confidence: if passed {
                    row.confidence.score()
                } else {
                    row.confidence.score() / 2.0
                },
            };
            let decision = if passed && candidate.confidence >= AUTO_SELECT_CONFIDENCE {
                Decision::AutoSelect
            } else {
                Decision::NeedsConfirmation
            };
            (decision, vec![candidate])
        }
        None => {
            reasons.push(format!(
                "{owner} is not an owner code we know; give the scac"
            ));
            (Decision::NoPrediction, Vec::new())
        }
    };
    Inference {
        number_type: NumberType::Container,
        validation: Validation {
            is_valid: Some(passed),
            kind: "container",
            check_digit_passed: Some(passed),
            parsed_number,
            reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        },
        decision,
        candidates,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scacs(inference: &Inference) -> Vec<&str> {
        inference
            .candidates
            .iter()
            .map(|c| c.scac.as_str())
            .collect()
    }

    #[test]
    fn the_embedded_table_parses_and_names_only_four_letter_scacs() {
        assert!(TABLE.owners.len() > 150);
        assert!(TABLE.bills.len() > 20);
        assert!(inferable_scacs().iter().all(|scac| scac.len() == 4));
    }

    #[test]
    fn a_lines_bill_of_lading_prefix_is_its_most_confident_bl_row() {
        assert_eq!(bill_of_lading_prefix("MSCU"), Some("MEDU"));
        assert_eq!(bill_of_lading_prefix("MAEU"), Some("MAEU"));
        assert_eq!(bill_of_lading_prefix("HLCU"), Some("HLCU"));
        assert_eq!(bill_of_lading_prefix("YMLU"), Some("YMLU"));
        assert_eq!(bill_of_lading_prefix("TEST"), Some("TEST"));
        assert_eq!(bill_of_lading_prefix("ACLU"), None);
    }

    #[test]
    fn a_malformed_table_line_is_refused_with_its_number() {
        assert_eq!(
            parse_prefixes("owner MAEU").err().as_deref(),
            Some("line 1: fewer than four fields")
        );
        assert_eq!(
            parse_prefixes("# c\nlessor TEMU MAEU medium")
                .err()
                .as_deref(),
            Some("line 2: a lessor has no SCAC")
        );
        assert_eq!(
            parse_prefixes("owner MAEU MAEU high\nowner MAEU MSCU low")
                .err()
                .as_deref(),
            Some("line 2: MAEU is listed twice")
        );
    }

    #[test]
    fn a_carriers_container_is_auto_selected_by_its_owner_code() {
        let inference = infer("MSKU1234565").unwrap();

        assert_eq!(inference.number_type, NumberType::Container);
        assert_eq!(inference.decision, Decision::AutoSelect);
        assert_eq!(inference.selected().unwrap().scac, "MAEU");
        assert_eq!(inference.validation.check_digit_passed, Some(true));
        assert_eq!(inference.validation.reason, None);
    }

    #[test]
    fn a_wrong_check_digit_is_reported_and_needs_confirmation() {
        let inference = infer("MSKU1234566").unwrap();

        assert_eq!(inference.decision, Decision::NeedsConfirmation);
        assert_eq!(scacs(&inference), ["MAEU"]);
        assert_eq!(inference.validation.is_valid, Some(false));
        assert_eq!(inference.validation.check_digit_passed, Some(false));
        assert_eq!(
            inference.validation.reason.as_deref(),
            Some("the check digit should be 5, not 6")
        );
    }

    #[test]
    fn a_leasing_companys_container_is_never_auto_selected() {
        let inference = infer("TGHU1234567").unwrap();

        assert_eq!(inference.decision, Decision::NoPrediction);
        assert!(inference.candidates.is_empty());
        assert!(
            inference
                .validation
                .reason
                .as_deref()
                .unwrap()
                .contains("leasing company")
        );
    }

    #[test]
    fn an_unknown_owner_code_predicts_nothing() {
        let inference = infer("QQQU1234560").unwrap();

        assert_eq!(inference.number_type, NumberType::Container);
        assert_eq!(inference.decision, Decision::NoPrediction);
    }

    #[test]
    fn a_bill_of_lading_prefix_names_its_line() {
        let inference = infer("EGLV084900042045").unwrap();

        assert_eq!(inference.number_type, NumberType::BillOfLading);
        assert_eq!(inference.decision, Decision::AutoSelect);
        assert_eq!(scacs(&inference), ["EGLV"]);
        assert_eq!(
            infer("MEDU1234567890").unwrap().selected().unwrap().scac,
            "MSCU"
        );
    }

    #[test]
    fn a_weakly_known_prefix_needs_confirmation() {
        let inference = infer("HDMUSELA12345678").unwrap();

        assert_eq!(inference.decision, Decision::NeedsConfirmation);
        assert_eq!(scacs(&inference), ["HDMU"]);
    }

    #[test]
    fn a_bare_nine_digit_number_may_be_maersks() {
        let inference = infer("221234567").unwrap();

        assert_eq!(inference.number_type, NumberType::Booking);
        assert_eq!(inference.decision, Decision::NeedsConfirmation);
        assert_eq!(scacs(&inference), ["MAEU"]);
    }

    #[test]
    fn sandbox_numbers_infer_the_sandbox_carrier() {
        let inference = infer("TEST-TR-SUCCEEDED").unwrap();

        assert_eq!(inference.decision, Decision::AutoSelect);
        assert_eq!(inference.selected().unwrap().scac, "TEST");
        assert_eq!(
            inference.validation.parsed_number.as_deref(),
            Some("TESTTRSUCCEEDED")
        );
    }

    #[test]
    fn spaces_dashes_and_case_are_ignored() {
        let inference = infer(" msku 123456-5 ").unwrap();

        assert_eq!(inference.selected().unwrap().scac, "MAEU");
        assert_eq!(
            inference.validation.parsed_number.as_deref(),
            Some("MSKU1234565")
        );
    }

    #[test]
    fn an_unknown_shape_predicts_nothing() {
        let inference = infer("XYZ12345678AB").unwrap();

        assert_eq!(inference.decision, Decision::NoPrediction);
        assert!(inference.candidates.is_empty());
    }

    #[test]
    fn text_that_is_not_a_number_is_refused() {
        assert_eq!(infer("  "), Err(InferError::Blank));
        assert_eq!(infer("ABC/123"), Err(InferError::BadCharacters));
        assert_eq!(infer(&"9".repeat(65)), Err(InferError::TooLong));
    }
}
