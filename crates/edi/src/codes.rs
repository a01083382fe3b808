//! The status-code table: one reviewed row per code (`status_codes.toml`), saying what the
//! code means, which DCSA event it stands for and which terminal fact it sets.
//!
//! X12 315/322 codes (element 157) and the IFTSTA STS codes of senders that reuse them go
//! through the embedded table. A sender with a private list (SOURCES.md B.3: `STS+1+P::HS`)
//! gets its own rows through [`CodeTable::with_sender`]; the sender's rows are looked up
//! first, so a private code that happens to spell a 315 code keeps its sender's meaning. A
//! code in neither is read from its own words when the message carries them
//! ([`crate::words`]), else kept raw and counted as drift.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use tidemark_carriers::{Classifier, DcsaCode, EmptyIndicator, ModeOfTransport};

/// The reviewed table, embedded at build time and parsed once (unit-tested below).
const STATUS_CODES: &str = include_str!("../status_codes.toml");

/// The terminal fact a code reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminalEffect {
    /// Ready for pick-up.
    Available,
    NotAvailable,
    /// The status date is the last free day.
    LastFreeDay,
    /// Free time is over: demurrage is running.
    FreeTimeExpired,
    /// The status time is the pick-up appointment.
    Appointment,
    /// A hold of the row's [`HoldKind`] is placed.
    Hold,
    /// A hold of the row's [`HoldKind`] is lifted.
    Release,
    /// An in-bond movement was authorized or changed (no Terminal49 field).
    InBond,
}

/// Terminal49's hold names (`holds_at_pod_terminal[].name`, case-sensitive).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HoldKind {
    #[serde(rename = "customs")]
    Customs,
    #[serde(rename = "USDA")]
    Usda,
    #[serde(rename = "freight")]
    Freight,
    #[serde(rename = "TMF")]
    Tmf,
    #[serde(rename = "VACIS")]
    Vacis,
    #[serde(rename = "other")]
    Other,
}

impl HoldKind {
    /// The name Terminal49 uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Customs => "customs",
            Self::Usda => "USDA",
            Self::Freight => "freight",
            Self::Tmf => "TMF",
            Self::Vacis => "VACIS",
            Self::Other => "other",
        }
    }
}

/// One status code: what it means, what it does, and where that comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeRow {
    pub code: String,
    pub meaning: String,
    /// The DCSA event the code stands for, if any.
    #[serde(default)]
    pub event: Option<DcsaCode>,
    /// Set when the code itself says empty or laden (`EE`, `OA`, `RD`).
    #[serde(default)]
    pub empty: Option<EmptyIndicator>,
    /// Set when the code itself says how the container travels (`AL`, `VD`…).
    #[serde(default)]
    pub mode: Option<ModeOfTransport>,
    /// Set when the code is an estimate whatever its date's qualifier says (`C`, `E`).
    #[serde(default)]
    pub classifier: Option<Classifier>,
    #[serde(default)]
    pub terminal: Option<TerminalEffect>,
    /// For holds and releases: which hold.
    #[serde(default)]
    pub hold: Option<HoldKind>,
    /// Where the meaning comes from (a URL from SOURCES.md, or the sender's guide).
    pub source: String,
    /// In a sender's table: the code list the row is for, as the sender names it in IFTSTA
    /// STS C555 (its agency, 3055, such as `ZZZ` or `HS`; else its list identifier, 1131).
    /// A row without one answers for the sender's codes of any list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<String>,
}

/// The list a status code comes from, as its message names it (SOURCES.md B.3: one code
/// table keyed by sender, code-list agency and code, defaulting to the 315 table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeList<'a> {
    /// X12 element 157 (the 315/322 codes): an X12 status, or an IFTSTA STS naming agency
    /// `22`, as CargoSmart names the 315 codes it sends (`STS+1+VD::22`).
    X12,
    /// An IFTSTA STS naming no list (`STS+1+VD`, `STS+1+21`). Element 157 has numbers too
    /// (`1` delivered short, `2` returned to the carrier's terminal), so a code's shape alone
    /// cannot tell its list: the sender's own rows for it come first — of no list, else of
    /// the list its shape suggests, else of the other (`6`, `22`); then, for a code of
    /// digits only, the shared Recommendation 24 rows (the list UN/EDIFACT C555 names for
    /// transport status); for any other code, element 157's.
    Unnamed {
        /// The code is digits only.
        digits: bool,
    },
    /// Any other list the STS names (UN/EDIFACT's own under agency `6`, `ZZZ` mutually
    /// defined, a carrier's private one such as `HS`): its codes are not element 157's,
    /// whatever they spell, and only tables for that list (or a sender's table for all its
    /// lists) can say what they mean.
    Named(&'a str),
}

impl<'a> CodeList<'a> {
    /// The list an IFTSTA STS C555 names: its agency (3055), else its list identifier (1131).
    pub fn of_edifact(list: Option<&'a str>, agency: Option<&'a str>) -> Self {
        let named = agency
            .map(str::trim)
            .filter(|agency| !agency.is_empty())
            .or_else(|| list.map(str::trim).filter(|list| !list.is_empty()));
        match named {
            None | Some(X12_AGENCY) => Self::X12,
            Some(name) => Self::Named(name),
        }
    }

    /// The list of an IFTSTA STS status code: the one C555 names — UN/ECE Recommendation 24
    /// when it names agency `6` or, with no other agency, list `24` —; else none
    /// ([`CodeList::Unnamed`]: the sender's rows, then the code's shape decide).
    pub fn of_sts(list: Option<&'a str>, agency: Option<&'a str>, code: &str) -> Self {
        let blank = |value: Option<&str>| value.is_none_or(|value| value.trim().is_empty());
        if blank(list) && blank(agency) {
            return Self::Unnamed {
                digits: !code.is_empty() && code.bytes().all(|byte| byte.is_ascii_digit()),
            };
        }
        if list.is_some_and(|list| list.trim() == UNECE_LIST)
            && (blank(agency) || agency.is_some_and(|agency| agency.trim() == UNECE_AGENCY))
        {
            return Self::Named(UNECE_AGENCY);
        }
        Self::of_edifact(list, agency)
    }

    fn name(self) -> Option<&'a str> {
        match self {
            Self::X12 | Self::Unnamed { .. } => None,
            Self::Named(name) => Some(name),
        }
    }
}

/// The C555 agency CargoSmart gives the X12 315 codes it puts in IFTSTA STS (SOURCES.md
/// B.3, `STS+1+VD::22`).
const X12_AGENCY: &str = "22";

/// The C555 agency of UN/ECE's own code lists (3055 `6`): for a status, Recommendation 24.
const UNECE_AGENCY: &str = "6";

/// The C555 list identifier (1131) of Recommendation 24, as an STS may name it (`21:24:6`).
const UNECE_LIST: &str = "24";

/// Why a code table was refused.
#[derive(Debug, thiserror::Error)]
pub enum CodeTableError {
    #[error("the code table is not valid TOML for its format: {0}")]
    Format(#[from] toml::de::Error),
    #[error("code {0:?} appears twice")]
    Duplicate(String),
    #[error("code {code:?}: {problem}")]
    Invalid { code: String, problem: &'static str },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    code: Vec<CodeRow>,
}

/// Rows by code list (`""` for rows that name none) and code.
type Rows = BTreeMap<String, BTreeMap<String, CodeRow>>;

/// Status codes to rows: the reviewed 315 table, plus per-sender tables that come first for
/// their sender.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodeTable {
    rows: Rows,
    senders: BTreeMap<String, Rows>,
}

/// The row for `code` of `list` (when one is named), else of no named list.
fn row_in<'r>(rows: &'r Rows, list: Option<&str>, code: &str) -> Option<&'r CodeRow> {
    list.and_then(|list| rows.get(list))
        .and_then(|rows| rows.get(code))
        .or_else(|| rows.get("").and_then(|rows| rows.get(code)))
}

impl CodeTable {
    /// The reviewed table compiled into the binary.
    ///
    /// # Panics
    ///
    /// Only if `status_codes.toml` is malformed, which the unit tests rule out.
    pub fn embedded() -> &'static CodeTable {
        static TABLE: OnceLock<CodeTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            CodeTable::parse(STATUS_CODES).expect("status_codes.toml parses and passes its checks")
        })
    }

    /// A table from TOML in the format of `status_codes.toml` (`[[code]]` rows), such as a
    /// sender's private list.
    pub fn parse(text: &str) -> Result<Self, CodeTableError> {
        let file: TableFile = toml::from_str(text)?;
        let mut rows = Rows::new();
        for row in file.code {
            check(&row)?;
            let code = row.code.clone();
            let list = row.list.as_deref().map(str::trim).unwrap_or_default();
            let duplicate = match &row.list {
                Some(list) => format!("{code} (list {list})"),
                None => code.clone(),
            };
            if rows
                .entry(list.to_owned())
                .or_default()
                .insert(code, row)
                .is_some()
            {
                return Err(CodeTableError::Duplicate(duplicate));
            }
        }
        Ok(Self {
            rows,
            senders: BTreeMap::new(),
        })
    }

    /// This table with `sender`'s own rows, looked up before this table's for statuses from
    /// that interchange sender (ISA06 / UNB sender id, trimmed).
    #[must_use]
    pub fn with_sender(mut self, sender: &str, table: CodeTable) -> Self {
        self.senders.insert(sender.trim().to_owned(), table.rows);
        self
    }

    /// The row for an element-157 code as sent by `sender`: the sender's own row, else this
    /// table's.
    pub fn lookup(&self, sender: &str, code: &str) -> Option<&CodeRow> {
        self.lookup_in(sender, CodeList::X12, code)
    }

    /// The row for `code` of `list` as sent by `sender`: the sender's own row for that list,
    /// else its row for any list; then this table's row for that list, and, for an
    /// element-157 code only, this table's 315 row. A code of another named list is never
    /// read through the 315 rows because it spells a 315 code. For a code of no named list,
    /// see [`CodeList::Unnamed`].
    pub fn lookup_in(&self, sender: &str, list: CodeList<'_>, code: &str) -> Option<&CodeRow> {
        if let CodeList::Unnamed { digits } = list {
            // The list the code's shape suggests, then the other.
            let lists = if digits {
                ["", UNECE_AGENCY, X12_AGENCY]
            } else {
                ["", X12_AGENCY, UNECE_AGENCY]
            };
            let own = self.senders.get(sender.trim()).and_then(|rows| {
                lists
                    .iter()
                    .find_map(|list| rows.get(*list).and_then(|rows| rows.get(code)))
            });
            let shared = if digits {
                CodeList::Named(UNECE_AGENCY)
            } else {
                CodeList::X12
            };
            return own.or_else(|| self.shared_row(shared, code));
        }
        // Rows written for the 315 list name it as CargoSmart does (`list = "22"`).
        let name = list.name().unwrap_or(X12_AGENCY);
        let own = self
            .senders
            .get(sender.trim())
            .and_then(|rows| row_in(rows, Some(name), code));
        own.or_else(|| self.shared_row(list, code))
    }

    /// This table's row (not a sender's) for `code` of `list`: its rows for that list, and,
    /// for an element-157 code, its 315 rows.
    fn shared_row(&self, list: CodeList<'_>, code: &str) -> Option<&CodeRow> {
        let name = list.name().unwrap_or(X12_AGENCY);
        self.rows
            .get(name)
            .and_then(|rows| rows.get(code))
            .or_else(|| match list {
                CodeList::X12 => self.rows.get("").and_then(|rows| rows.get(code)),
                CodeList::Named(_) | CodeList::Unnamed { .. } => None,
            })
    }

    /// The row of this table (not a sender's) for the element-157 `code`.
    pub fn get(&self, code: &str) -> Option<&CodeRow> {
        self.rows.get("").and_then(|rows| rows.get(code))
    }

    /// Every row of this table, by list and code.
    pub fn rows(&self) -> impl Iterator<Item = &CodeRow> {
        self.rows.values().flat_map(BTreeMap::values)
    }
}

pub(crate) fn check(row: &CodeRow) -> Result<(), CodeTableError> {
    let invalid = |problem| CodeTableError::Invalid {
        code: row.code.clone(),
        problem,
    };
    if row.code.trim().is_empty() || row.code.trim() != row.code {
        return Err(invalid("the code is empty or has spaces around it"));
    }
    if row.meaning.trim().is_empty() {
        return Err(invalid("the meaning is empty"));
    }
    if row.source.trim().is_empty() {
        return Err(invalid("the source is empty"));
    }
    if let Some(list) = &row.list
        && (list.trim().is_empty() || list.trim() != list)
    {
        return Err(invalid("the code list is empty or has spaces around it"));
    }
    if row.event.is_none() && row.terminal.is_none() {
        return Err(invalid(
            "the row has neither an event nor a terminal effect",
        ));
    }
    let needs_hold = matches!(
        row.terminal,
        Some(TerminalEffect::Hold | TerminalEffect::Release)
    );
    if needs_hold != row.hold.is_some() {
        return Err(invalid(
            "hold is required for hold/release rows and only there",
        ));
    }
    if row.event.is_none()
        && (row.empty.is_some() || row.mode.is_some() || row.classifier.is_some())
    {
        return Err(invalid("empty, mode and classifier only qualify an event"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `../shared/reference/terminals-edi/SOURCES.md`, found from the nearest ancestor of this
    /// crate that has `shared` beside it (the main checkout or a worktree of it).
    fn sources_md() -> String {
        let relative = "shared/reference/terminals-edi/SOURCES.md";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .map(|dir| dir.join(relative))
            .find(|path| path.exists())
            .unwrap_or_else(|| panic!("{relative} not found beside any parent directory"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn the_embedded_table_parses() {
        assert!(CodeTable::embedded().rows().count() > 40);
    }

    /// The EDI chapter of the user guide (`docs/src/edi.md`), which names the sources the
    /// table cites beyond SOURCES.md (the standard code lists it reads besides element 157).
    fn edi_guide() -> String {
        let relative = "docs/src/edi.md";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .map(|dir| dir.join(relative))
            .find(|path| path.exists())
            .unwrap_or_else(|| panic!("{relative} not found in any parent directory"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The whole URLs a Markdown text cites: from `https://` to the first space, quote,
    /// bracket or backtick, without the sentence's punctuation after it.
    fn urls(text: &str) -> std::collections::BTreeSet<&str> {
        text.match_indices("https://")
            .filter_map(|(start, _)| text.get(start..))
            .map(|rest| {
                let end = rest
                    .find(|c: char| {
                        c.is_whitespace() || matches!(c, ')' | ']' | '>' | '<' | '"' | '\'' | '`')
                    })
                    .unwrap_or(rest.len());
                rest.get(..end)
                    .unwrap_or(rest)
                    .trim_end_matches(['.', ',', ';', ':'])
            })
            .collect()
    }

    #[test]
    fn urls_are_taken_whole_from_markdown() {
        let text = "see https://a.example/x/y, (https://b.example/z) and `https://c.example/`: \
                    https://d.example/page.";
        let found: Vec<&str> = urls(text).into_iter().collect();
        assert_eq!(
            found,
            [
                "https://a.example/x/y",
                "https://b.example/z",
                "https://c.example/",
                "https://d.example/page"
            ]
        );
        // A prefix of a cited URL is not cited.
        assert!(!urls(text).contains("https://a.example/x"));
    }

    #[test]
    fn every_row_cites_a_url_from_sources_md_or_the_edi_guide() {
        let (sources, guide) = (sources_md(), edi_guide());
        let cited: std::collections::BTreeSet<&str> =
            urls(&sources).into_iter().chain(urls(&guide)).collect();
        for row in CodeTable::embedded().rows() {
            assert!(
                cited.contains(row.source.as_str()),
                "{} cites {}, which neither SOURCES.md nor docs/src/edi.md does (as a whole URL)",
                row.code,
                row.source
            );
        }
    }

    #[test]
    fn a_duplicate_code_is_refused() {
        let text = r#"
            [[code]]
            code = "VD"
            meaning = "Vessel departure"
            event = "DEPA"
            source = "x"
            [[code]]
            code = "VD"
            meaning = "Vessel departure"
            event = "DEPA"
            source = "x"
        "#;
        assert!(matches!(
            CodeTable::parse(text),
            Err(CodeTableError::Duplicate(code)) if code == "VD"
        ));
    }

    #[test]
    fn a_hold_without_its_kind_is_refused() {
        let text = r#"
            [[code]]
            code = "PA"
            meaning = "Customs hold"
            terminal = "hold"
            source = "x"
        "#;
        assert!(matches!(
            CodeTable::parse(text),
            Err(CodeTableError::Invalid { .. })
        ));
    }

    #[test]
    fn a_senders_row_comes_before_the_shared_one_for_that_sender_only() {
        let private = CodeTable::parse(
            r#"
            [[code]]
            code = "A"
            meaning = "Available (private list)"
            terminal = "available"
            source = "sender guide"
            "#,
        )
        .expect("valid table");
        let table = CodeTable::embedded().clone().with_sender("ACME", private);
        assert_eq!(
            table.lookup("ACME", "A").map(|row| row.terminal),
            Some(Some(TerminalEffect::Available))
        );
        assert_eq!(
            table.lookup("OTHER", "A").and_then(|row| row.event),
            Some(DcsaCode::Arri)
        );
    }
}
