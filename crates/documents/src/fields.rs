//! The fields of a document, read from its text by rules and patterns, and the schemas
//! that say which fields each document type yields (`GET /v2/document_schemas/{id}`).
//!
//! A field is found after one of its labels ("Port of Loading:", "POL", "Vessel / Voyage"):
//! its value is the rest of the label's line, up to the next label on that line, or the
//! next line when the label stands alone (forms print values under their labels). Dates are
//! written `YYYY-MM-DD`, amounts as numbers; bill of lading and container numbers come from
//! [`find_references`] (labels, carrier prefixes, ISO 6346 check digits). Nothing is
//! guessed: a field without a label in the text is `null`.

use serde_json::{Map, Value, json};

use crate::classify::DocumentType;
use crate::references::find_references;

/// The version of every schema below (their `schema_version`); a change to a schema's
/// fields makes a new version.
pub const SCHEMA_VERSION: &str = "2026-03-01";
/// Only the first part of a text is read for fields; they are near the top.
const MAX_TEXT_BYTES: usize = 256 * 1024;
/// The longest value kept.
const MAX_VALUE_CHARS: usize = 200;

/// What a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// `YYYY-MM-DD`.
    Date,
    Number,
    /// A list of strings.
    List,
}

/// A field a schema yields.
#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    pub kind: Kind,
    pub description: &'static str,
    /// Labels, uppercase, words separated by one space; punctuation in the text is ignored.
    labels: &'static [&'static str],
}

const fn field(
    name: &'static str,
    kind: Kind,
    description: &'static str,
    labels: &'static [&'static str],
) -> Field {
    Field {
        name,
        kind,
        description,
        labels,
    }
}

const BL_NUMBER: Field = field(
    "bill_of_lading_number",
    Kind::Text,
    "The bill of lading (or sea waybill) number.",
    &[],
);
const CONTAINERS: Field = field(
    "container_numbers",
    Kind::List,
    "Container numbers (ISO 6346, check digit verified).",
    &[],
);
const BOOKING: Field = field(
    "booking_number",
    Kind::Text,
    "The carrier's booking number.",
    &["BOOKING NO", "BOOKING NUMBER", "BOOKING REF", "BOOKING"],
);
const VESSEL: Field = field(
    "vessel_name",
    Kind::Text,
    "The ocean vessel.",
    &[
        "OCEAN VESSEL",
        "VESSEL NAME",
        "VESSEL VOYAGE",
        "VESSEL VOY",
        "VESSEL",
        "MOTHER VESSEL",
    ],
);
const VOYAGE: Field = field(
    "voyage_number",
    Kind::Text,
    "The voyage of the ocean vessel.",
    &["VOYAGE NO", "VOYAGE NUMBER", "VOYAGE", "VOY NO", "VOY"],
);
const POL: Field = field(
    "port_of_loading",
    Kind::Text,
    "The port where the cargo was loaded on the ocean vessel.",
    &["PORT OF LOADING", "LOADING PORT", "POL", "PORT OF LOAD"],
);
const POD: Field = field(
    "port_of_discharge",
    Kind::Text,
    "The port where the cargo is discharged from the ocean vessel.",
    &[
        "PORT OF DISCHARGE",
        "DISCHARGE PORT",
        "POD",
        "PORT OF DISCH",
    ],
);
const RECEIPT: Field = field(
    "place_of_receipt",
    Kind::Text,
    "Where the carrier received the cargo.",
    &["PLACE OF RECEIPT", "RECEIPT"],
);
const DELIVERY: Field = field(
    "place_of_delivery",
    Kind::Text,
    "Where the carrier delivers the cargo.",
    &["PLACE OF DELIVERY", "FINAL DESTINATION", "DELIVERY"],
);
const SHIPPER: Field = field(
    "shipper",
    Kind::Text,
    "The shipper (exporter).",
    &["SHIPPER EXPORTER", "SHIPPER", "EXPORTER"],
);
const CONSIGNEE: Field = field("consignee", Kind::Text, "The consignee.", &["CONSIGNEE"]);
const NOTIFY: Field = field(
    "notify_party",
    Kind::Text,
    "The party to notify of the arrival.",
    &["NOTIFY PARTY", "NOTIFY"],
);

/// The fields of a document type, in the order of its schema.
pub fn fields_of(document_type: DocumentType) -> &'static [Field] {
    const BILL_OF_LADING: &[Field] = &[
        BL_NUMBER,
        BOOKING,
        SHIPPER,
        CONSIGNEE,
        NOTIFY,
        VESSEL,
        VOYAGE,
        RECEIPT,
        POL,
        POD,
        DELIVERY,
        CONTAINERS,
        field(
            "issue_date",
            Kind::Date,
            "When the bill of lading was issued.",
            &[
                "DATE OF ISSUE",
                "PLACE AND DATE OF ISSUE",
                "ISSUE DATE",
                "ISSUED ON",
            ],
        ),
        field(
            "shipped_on_board_date",
            Kind::Date,
            "When the cargo was loaded on board.",
            &[
                "SHIPPED ON BOARD DATE",
                "SHIPPED ON BOARD",
                "ON BOARD DATE",
                "LADEN ON BOARD",
            ],
        ),
    ];
    const ARRIVAL_NOTICE: &[Field] = &[
        BL_NUMBER,
        CONSIGNEE,
        NOTIFY,
        VESSEL,
        VOYAGE,
        POL,
        POD,
        DELIVERY,
        CONTAINERS,
        field(
            "eta",
            Kind::Date,
            "The estimated arrival at the port of discharge.",
            &[
                "ESTIMATED TIME OF ARRIVAL",
                "ESTIMATED ARRIVAL",
                "ETA",
                "ARRIVAL DATE",
            ],
        ),
        field(
            "last_free_day",
            Kind::Date,
            "The last day the cargo may stay at the terminal free of charge.",
            &["LAST FREE DAY", "LFD", "FREE TIME EXPIRES"],
        ),
        field(
            "terminal",
            Kind::Text,
            "Where the cargo is available for pickup.",
            &["PICKUP LOCATION", "TERMINAL", "CARGO LOCATION"],
        ),
        field(
            "amount_due",
            Kind::Number,
            "The charges due before release.",
            &["TOTAL AMOUNT DUE", "AMOUNT DUE", "TOTAL DUE", "CHARGES DUE"],
        ),
    ];
    const COMMERCIAL_INVOICE: &[Field] = &[
        field(
            "invoice_number",
            Kind::Text,
            "The seller's invoice number.",
            &["INVOICE NO", "INVOICE NUMBER", "INVOICE #", "INV NO"],
        ),
        field(
            "invoice_date",
            Kind::Date,
            "When the invoice was issued.",
            &["INVOICE DATE", "DATE OF INVOICE", "DATE"],
        ),
        field(
            "seller",
            Kind::Text,
            "The seller (shipper).",
            &[
                "SELLER",
                "SHIPPER EXPORTER",
                "SHIPPER",
                "EXPORTER",
                "SOLD BY",
            ],
        ),
        field(
            "buyer",
            Kind::Text,
            "The buyer (consignee).",
            &["BUYER", "SOLD TO", "CONSIGNEE", "BILL TO"],
        ),
        BL_NUMBER,
        VESSEL,
        VOYAGE,
        POL,
        POD,
        CONTAINERS,
        field(
            "incoterms",
            Kind::Text,
            "The Incoterms rule (FOB, CIF, …), with its place.",
            &[
                "INCOTERMS",
                "TERMS OF DELIVERY",
                "DELIVERY TERMS",
                "TRADE TERMS",
            ],
        ),
        field(
            "currency",
            Kind::Text,
            "The invoice's currency (ISO 4217).",
            &["CURRENCY"],
        ),
        field(
            "total_amount",
            Kind::Number,
            "The invoice total.",
            TOTAL_LABELS,
        ),
    ];
    match document_type {
        DocumentType::BillOfLading | DocumentType::DraftHouseBillOfLading => BILL_OF_LADING,
        DocumentType::ArrivalNotice => ARRIVAL_NOTICE,
        DocumentType::CommercialInvoice => COMMERCIAL_INVOICE,
        _ => &[],
    }
}

/// The types that have a schema.
pub fn types_with_schema() -> impl Iterator<Item = DocumentType> {
    DocumentType::ALL
        .into_iter()
        .filter(|t| !fields_of(*t).is_empty())
}

/// A schema's id (`full_version`): `bill_of_lading@2026-03-01`.
pub fn schema_id(document_type: DocumentType) -> Option<String> {
    (!fields_of(document_type).is_empty())
        .then(|| format!("{}@{SCHEMA_VERSION}", document_type.as_str()))
}

/// The type a schema id names: its full version, or the bare type for the current one.
pub fn schema_named(id: &str) -> Option<DocumentType> {
    let (code, version) = id.split_once('@').unwrap_or((id, SCHEMA_VERSION));
    let document_type: DocumentType = code.parse().ok()?;
    (version == SCHEMA_VERSION && !fields_of(document_type).is_empty()).then_some(document_type)
}

/// The JSON Schema of a type's fields (`schema_payload`).
pub fn json_schema(document_type: DocumentType) -> Value {
    let mut properties = Map::new();
    for field in fields_of(document_type) {
        let schema = match field.kind {
            Kind::Text => json!({"type": ["string", "null"]}),
            Kind::Date => json!({"type": ["string", "null"], "format": "date"}),
            Kind::Number => json!({"type": ["number", "null"]}),
            Kind::List => json!({"type": "array", "items": {"type": "string"}}),
        };
        let mut schema = schema;
        schema["description"] = json!(field.description);
        properties.insert(field.name.to_owned(), schema);
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": document_type.label(),
        "type": "object",
        "properties": properties,
        "required": fields_of(document_type).iter().map(|f| f.name).collect::<Vec<_>>(),
        "additionalProperties": false,
    })
}

/// The fields of `document_type` found in `text`: every field of its schema, `null` (or
/// an empty list) when not found. Types without a schema yield an empty object.
pub fn extract(document_type: DocumentType, text: &str) -> Map<String, Value> {
    let mut end = text.len().min(MAX_TEXT_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let text = &text[..end];
    let fields = fields_of(document_type);
    let mut out = Map::new();
    if fields.is_empty() {
        return out;
    }
    let lines: Vec<Line> = text.lines().map(Line::new).collect();
    let all_labels: Vec<&str> = fields
        .iter()
        .flat_map(|f| f.labels.iter().copied())
        .chain(OTHER_LABELS.iter().copied())
        .collect();
    let references = find_references(text);
    for field in fields {
        let value = match field.name {
            "bill_of_lading_number" => references
                .bl_candidates
                .first()
                .map_or(Value::Null, |n| json!(n)),
            "container_numbers" => json!(references.container_numbers),
            _ => labelled(&lines, field.labels, &all_labels)
                .and_then(|raw| typed(field.kind, &raw))
                .unwrap_or(Value::Null),
        };
        out.insert(field.name.to_owned(), value);
    }
    // "Vessel / Voyage: EVER GIVEN / 012E" gives both in one value; so does "Vessel and
    // voyage: ONE HARMONY 078E", whose last word (with a digit) is the voyage.
    let voyage_label = matches!(out.get("voyage_number"), Some(Value::Null))
        || out.get("voyage_number") == out.get("vessel_name");
    if let Some(Value::String(vessel)) = out.get("vessel_name").cloned()
        && voyage_label
        && let Some((name, voyage)) = vessel.rsplit_once(['/', ',']).or_else(|| {
            (out.get("voyage_number") == out.get("vessel_name"))
                .then(|| vessel.rsplit_once(' '))
                .flatten()
                .filter(|(_, last)| last.chars().any(|c| c.is_ascii_digit()))
        })
        && !name.trim().is_empty()
        && !voyage.trim().is_empty()
    {
        out.insert("vessel_name".to_owned(), json!(name.trim()));
        out.insert("voyage_number".to_owned(), json!(voyage.trim()));
    }
    // "TOTAL USD 5,000.00": the total's currency, when no label gave one.
    if matches!(out.get("currency"), Some(Value::Null))
        && let Some(raw) = labelled(&lines, TOTAL_LABELS, &all_labels)
        && let Some(code) = raw
            .split(|c: char| !c.is_ascii_alphabetic())
            .find(|word| CURRENCIES.contains(&word.to_ascii_uppercase().as_str()))
    {
        out.insert("currency".to_owned(), json!(code.to_ascii_uppercase()));
    }
    out
}

/// The labels of `total_amount`.
const TOTAL_LABELS: &[&str] = &[
    "TOTAL AMOUNT",
    "TOTAL VALUE",
    "INVOICE TOTAL",
    "GRAND TOTAL",
    "TOTAL",
];

/// Currencies read beside a total (ISO 4217, the common ones of ocean trade).
const CURRENCIES: &[&str] = &[
    "USD", "EUR", "CNY", "RMB", "GBP", "JPY", "KRW", "HKD", "SGD", "INR", "CAD", "AUD", "MXN",
    "BRL", "VND", "THB", "TWD", "CHF", "AED",
];

/// Labels of other fields that end a value on the same line.
const OTHER_LABELS: &[&str] = &[
    "CONTAINER NO",
    "CONTAINER",
    "SEAL",
    "B L NO",
    "BILL OF LADING NO",
    "GROSS WEIGHT",
    "PAGE",
];

/// A line of text as the labels are matched: uppercase, every run of anything but letters,
/// digits and `#` one space; with, per normalized byte, where it came from in the line.
struct Line<'a> {
    original: &'a str,
    normalized: String,
    origin: Vec<usize>,
}

impl<'a> Line<'a> {
    fn new(original: &'a str) -> Self {
        let mut normalized = String::new();
        let mut origin = Vec::new();
        let mut gap = false;
        for (at, c) in original.char_indices() {
            if c.is_alphanumeric() || c == '#' {
                if gap && !normalized.is_empty() {
                    normalized.push(' ');
                    origin.push(at);
                }
                gap = false;
                for upper in c.to_uppercase() {
                    let before = normalized.len();
                    normalized.push(upper);
                    origin.extend(std::iter::repeat_n(at, normalized.len() - before));
                }
            } else {
                gap = true;
            }
        }
        Self {
            original,
            normalized,
            origin,
        }
    }

    /// Where `label` starts and ends as whole words in the normalized line.
    fn find(&self, label: &str) -> Option<(usize, usize)> {
        let mut from = 0;
        while let Some(found) = self.normalized[from..].find(label) {
            let start = from + found;
            let end = start + label.len();
            let before = start == 0 || self.normalized.as_bytes()[start - 1] == b' ';
            let after = end == self.normalized.len() || self.normalized.as_bytes()[end] == b' ';
            if before && after {
                return Some((start, end));
            }
            from = start + 1;
            while !self.normalized.is_char_boundary(from) {
                from += 1;
            }
        }
        None
    }

    /// The original text after the character at normalized position `end - 1` (the end of
    /// a match).
    fn original_after(&self, end: usize) -> &'a str {
        let Some(last) = end.checked_sub(1).and_then(|i| self.origin.get(i).copied()) else {
            return self.original;
        };
        let width = self.original[last..]
            .chars()
            .next()
            .map_or(0, char::len_utf8);
        &self.original[last + width..]
    }
}

/// The value after the first of `labels` found, cut at the next label on its line, or the
/// next non-empty line when nothing follows the label.
fn labelled(lines: &[Line<'_>], labels: &[&str], all_labels: &[&str]) -> Option<String> {
    for label in labels {
        for (index, line) in lines.iter().enumerate() {
            let Some((start, end)) = line.find(label) else {
                continue;
            };
            let after = line.original_after(end);
            // A label starts its line or a column, or is followed by a colon: not a word
            // inside a sentence ("the vessel arrives").
            let before = &line.original[..line.origin.get(start).copied().unwrap_or(0)];
            let column =
                before.trim().is_empty() || before.ends_with("  ") || before.ends_with(['\t', '|']);
            if !column && !value_follows_colon(after) {
                continue;
            }
            let value = value_after(after, all_labels);
            if !value.is_empty() {
                return Some(value);
            }
            if let Some(next) = lines[index + 1..]
                .iter()
                .take(2)
                .find(|l| !l.original.trim().is_empty())
            {
                let column = line.origin.get(start).copied().unwrap_or(0);
                let value = value_after(column_at(next.original, column), all_labels);
                if !value.is_empty() && !starts_with_label(next, all_labels) {
                    return Some(value);
                }
            }
        }
    }
    None
}

/// The column of `line` (columns are separated by three or more spaces) that starts
/// nearest to byte `at`: a value printed under its label in a table.
fn column_at(line: &str, at: usize) -> &str {
    let mut columns = Vec::new();
    let mut start = None;
    let mut spaces = 0;
    for (index, c) in line.char_indices() {
        if c == ' ' {
            spaces += 1;
            continue;
        }
        if start.is_none() || spaces >= 3 {
            if let Some(from) = start {
                columns.push((from, line[from..index].trim_end()));
            }
            start = Some(index);
        }
        spaces = 0;
    }
    if let Some(from) = start {
        columns.push((from, line[from..].trim_end()));
    }
    columns
        .into_iter()
        .min_by_key(|(from, _)| from.abs_diff(at))
        .map_or(line, |(_, column)| column)
}

/// Whether `rest` (after a label) starts with a colon, past a "No." or "#".
fn value_follows_colon(rest: &str) -> bool {
    let rest = rest.trim_start();
    let rest = ["NO.", "NO", "NUMBER", "#", "."]
        .iter()
        .find(|f| {
            rest.len() >= f.len()
                && rest.is_char_boundary(f.len())
                && rest[..f.len()].eq_ignore_ascii_case(f)
        })
        .map_or(rest, |f| &rest[f.len()..]);
    rest.trim_start().starts_with(':')
}

fn starts_with_label(line: &Line<'_>, labels: &[&str]) -> bool {
    labels
        .iter()
        .any(|label| line.find(label).is_some_and(|(start, _)| start == 0))
}

/// The value at the start of `rest`: past the label's filler ("No.", ":", "#"), up to the
/// next label or a wide gap.
fn value_after(rest: &str, all_labels: &[&str]) -> String {
    // A label followed by a column gap is a table's header: its value is below it.
    let gap = rest.trim_start_matches([':', '.', '#']);
    if gap.starts_with("   ") || gap.starts_with('\t') {
        return String::new();
    }
    let mut rest = rest.trim_start_matches(|c: char| {
        c.is_whitespace() || matches!(c, ':' | '.' | '#' | '-' | '/')
    });
    for filler in ["NO.", "NO:", "NO ", "NUMBER", "NR.", "#"] {
        if rest.len() >= filler.len()
            && rest.is_char_boundary(filler.len())
            && rest[..filler.len()].eq_ignore_ascii_case(filler)
        {
            rest = &rest[filler.len()..];
            break;
        }
    }
    let mut rest =
        rest.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, ':' | '.' | '#'));
    // Another label first ("Vessel / Voyage: …", "Vessel and voyage: …"): the value
    // follows it.
    for _ in 0..3 {
        let joined = ["and ", "& "]
            .iter()
            .find(|j| {
                rest.len() > j.len()
                    && rest.is_char_boundary(j.len())
                    && rest[..j.len()].eq_ignore_ascii_case(j)
            })
            .map_or(rest, |j| &rest[j.len()..]);
        let line = Line::new(joined);
        let Some(end) = all_labels
            .iter()
            .filter_map(|label| line.find(label))
            .filter(|(start, _)| *start == 0)
            .map(|(_, end)| end)
            .max()
        else {
            break;
        };
        rest = line
            .original_after(end)
            .trim_start_matches(|c: char| c.is_whitespace() || matches!(c, ':' | '.' | '#' | '/'));
    }
    // A gap of three spaces or a tab separates columns.
    let mut value = rest.split("   ").next().unwrap_or_default();
    value = value.split('\t').next().unwrap_or_default();
    let line = Line::new(value);
    let cut = all_labels
        .iter()
        .filter_map(|label| line.find(label))
        .filter(|(start, end)| *start > 0 && value_follows_colon(line.original_after(*end)))
        .map(|(start, _)| line.origin.get(start).copied().unwrap_or(value.len()))
        .min()
        .unwrap_or(value.len());
    value[..cut]
        .trim()
        .trim_end_matches([',', ';', ':', '/'])
        .trim()
        .chars()
        .take(MAX_VALUE_CHARS)
        .collect()
}

/// `raw` as a value of `kind`; `None` when it does not parse.
fn typed(kind: Kind, raw: &str) -> Option<Value> {
    match kind {
        Kind::Text => Some(json!(raw)),
        Kind::Date => date(raw).map(|d| json!(d)),
        Kind::Number => number(raw).map(|n| json!(n)),
        Kind::List => Some(json!([raw])),
    }
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];

/// The first date in `raw`, as `YYYY-MM-DD`: `2026-03-14`, `14 Mar 2026`, `Mar 14, 2026`,
/// `14.03.2026`, `03/14/2026` or `14/03/2026` (day first when the first number cannot be a
/// month; month first otherwise, as US documents write it).
pub fn date(raw: &str) -> Option<String> {
    let upper = raw.to_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let month_of = |w: &str| {
        MONTHS
            .iter()
            .position(|m| w.starts_with(m))
            .and_then(|i| u32::try_from(i + 1).ok())
    };
    let num = |w: &str| w.parse::<u32>().ok();
    for window in 0..words.len() {
        let rest = &words[window..];
        let candidate = match rest {
            [y, m, d, ..] if y.len() == 4 && num(m).is_some() => Some((num(y)?, num(m)?, num(d)?)),
            [d, m, y, ..] if y.len() == 4 && month_of(m).is_some() && num(d).is_some() => {
                Some((num(y)?, month_of(m)?, num(d)?))
            }
            [m, d, y, ..] if y.len() == 4 && month_of(m).is_some() && num(d).is_some() => {
                Some((num(y)?, month_of(m)?, num(d)?))
            }
            [a, b, y, ..] if y.len() == 4 && num(a).is_some() && num(b).is_some() => {
                let (a, b) = (num(a)?, num(b)?);
                if a > 12 {
                    Some((num(y)?, b, a))
                } else {
                    Some((num(y)?, a, b))
                }
            }
            _ => None,
        };
        if let Some((y, m, d)) = candidate
            && chrono::NaiveDate::from_ymd_opt(i32::try_from(y).ok()?, m, d).is_some()
        {
            return Some(format!("{y:04}-{m:02}-{d:02}"));
        }
    }
    None
}

/// The first amount in `raw`: `USD 12,345.67`, `12.345,67 EUR`, `$1,200`.
fn number(raw: &str) -> Option<f64> {
    let start = raw.find(|c: char| c.is_ascii_digit())?;
    let digits: String = raw[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, ',' | '.' | ' '))
        .filter(|c| *c != ' ')
        .collect();
    let digits = digits.trim_end_matches([',', '.']);
    // The last separator followed by exactly two digits is the decimal one.
    let decimal = digits
        .rfind([',', '.'])
        .filter(|at| digits.len() - at - 1 == 2);
    let normalized: String = digits
        .char_indices()
        .filter_map(|(at, c)| match c {
            ',' | '.' if Some(at) == decimal => Some('.'),
            ',' | '.' => None,
            c => Some(c),
        })
        .collect();
    normalized.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_read_in_the_spellings_documents_use() {
        assert_eq!(date("2026-03-14").as_deref(), Some("2026-03-14"));
        assert_eq!(date("14 MAR 2026").as_deref(), Some("2026-03-14"));
        assert_eq!(date("March 14, 2026").as_deref(), Some("2026-03-14"));
        assert_eq!(date("14/03/2026").as_deref(), Some("2026-03-14"));
        assert_eq!(date("03/14/2026").as_deref(), Some("2026-03-14"));
        assert_eq!(date("14.03.2026").as_deref(), Some("2026-03-14"));
        assert_eq!(date("Shanghai, 2026-02-30"), None);
    }

    #[test]
    fn amounts_are_read_with_either_decimal_separator() {
        assert_eq!(number("USD 12,345.67"), Some(12_345.67));
        assert_eq!(number("12.345,67 EUR"), Some(12_345.67));
        assert_eq!(number("$1,200"), Some(1_200.0));
        assert_eq!(number("none"), None);
    }

    #[test]
    fn a_value_ends_at_the_next_label_of_its_line() {
        let text = "Port of Loading: Shanghai, China   Port of Discharge: Los Angeles\n\
                    Vessel / Voyage: EVER GIVEN / 012E\nShipper:\nAcme Ltd, Ningbo\n";
        let fields = extract(DocumentType::BillOfLading, text);
        assert_eq!(fields["port_of_loading"], "Shanghai, China");
        assert_eq!(fields["port_of_discharge"], "Los Angeles");
        assert_eq!(fields["vessel_name"], "EVER GIVEN");
        assert_eq!(fields["voyage_number"], "012E");
        assert_eq!(fields["shipper"], "Acme Ltd, Ningbo");
        assert_eq!(fields["consignee"], Value::Null);
    }

    #[test]
    fn every_schema_names_the_fields_extraction_yields() {
        for document_type in types_with_schema() {
            let fields = extract(document_type, "");
            let schema = json_schema(document_type);
            let names: Vec<&String> = schema["properties"]
                .as_object()
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            assert_eq!(fields.keys().collect::<Vec<_>>().len(), names.len());
            assert!(names.iter().all(|n| fields.contains_key(n.as_str())));
        }
    }

    #[test]
    fn schema_ids_name_a_type_and_version() {
        assert_eq!(
            schema_named("commercial_invoice@2026-03-01"),
            Some(DocumentType::CommercialInvoice)
        );
        assert_eq!(
            schema_named("arrival_notice"),
            Some(DocumentType::ArrivalNotice)
        );
        assert_eq!(schema_named("commercial_invoice@2026-03-23"), None);
        assert_eq!(schema_named("packing_list"), None);
        assert_eq!(schema_named("nonsense@x"), None);
    }
}
