//! The type of a shipment document, from its text and file name, with notes that say why.
//!
//! Weighted keywords: a document's title ("BILL OF LADING", "ARRIVAL NOTICE") decides most,
//! its field labels ("SHIPPER", "LAST FREE DAY") confirm and break ties, and the file name
//! ("BL_123.pdf") helps, which is all there is for scans. Matching is case-insensitive,
//! ignores punctuation, and also compares with all spaces removed, so that OCR output such
//! as "B I L L  O F  L A D I N G" or "BILLOF LADING" still counts.
//!
//! Type codes: Terminal49 publishes no full list (`GET /documents/types` is per account);
//! the codes seen in its public material are `commercial_invoice`, `arrival_notice`,
//! `draft_house_bill_of_lading` and `unknown`, and we keep those spellings, adding the
//! other documents of an ocean import in the same style.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A document type code, as `document_type` in the API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocumentType {
    /// Ocean bill of lading or sea waybill, master or house.
    BillOfLading,
    /// A house bill of lading sent as a draft for approval.
    DraftHouseBillOfLading,
    /// The carrier's or forwarder's notice that cargo is arriving.
    ArrivalNotice,
    /// The seller's invoice for the goods.
    CommercialInvoice,
    /// What is packed where, with weights and measures.
    PackingList,
    /// The authorisation to release cargo to a trucker.
    DeliveryOrder,
    /// A customs entry: US CBP 7501 entry summary or 3461.
    CustomsEntry,
    /// US Importer Security Filing ("10+2").
    Isf,
    /// Certificate of origin.
    CertificateOfOrigin,
    /// The carrier's booking confirmation.
    BookingConfirmation,
    /// Nothing recognised.
    Unknown,
}

impl DocumentType {
    /// Every type, `Unknown` last.
    pub const ALL: [Self; 11] = [
        Self::BillOfLading,
        Self::DraftHouseBillOfLading,
        Self::ArrivalNotice,
        Self::CommercialInvoice,
        Self::PackingList,
        Self::DeliveryOrder,
        Self::CustomsEntry,
        Self::Isf,
        Self::CertificateOfOrigin,
        Self::BookingConfirmation,
        Self::Unknown,
    ];

    /// The API code, such as `bill_of_lading`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BillOfLading => "bill_of_lading",
            Self::DraftHouseBillOfLading => "draft_house_bill_of_lading",
            Self::ArrivalNotice => "arrival_notice",
            Self::CommercialInvoice => "commercial_invoice",
            Self::PackingList => "packing_list",
            Self::DeliveryOrder => "delivery_order",
            Self::CustomsEntry => "customs_entry",
            Self::Isf => "isf",
            Self::CertificateOfOrigin => "certificate_of_origin",
            Self::BookingConfirmation => "booking_confirmation",
            Self::Unknown => "unknown",
        }
    }

    /// A label for people, as in `GET /documents/types`.
    pub fn label(self) -> &'static str {
        match self {
            Self::BillOfLading => "Bill of Lading",
            Self::DraftHouseBillOfLading => "Draft House Bill of Lading",
            Self::ArrivalNotice => "Arrival Notice",
            Self::CommercialInvoice => "Commercial Invoice",
            Self::PackingList => "Packing List",
            Self::DeliveryOrder => "Delivery Order",
            Self::CustomsEntry => "Customs Entry (CBP 7501)",
            Self::Isf => "Importer Security Filing (ISF)",
            Self::CertificateOfOrigin => "Certificate of Origin",
            Self::BookingConfirmation => "Booking Confirmation",
            Self::Unknown => "Unknown",
        }
    }
}

impl fmt::Display for DocumentType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The string is not a document type code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown document type {0:?}")]
pub struct UnknownDocumentType(pub String);

impl FromStr for DocumentType {
    type Err = UnknownDocumentType;

    fn from_str(code: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == code)
            .ok_or_else(|| UnknownDocumentType(code.to_owned()))
    }
}

/// The outcome of [`classify`].
#[derive(Clone, Debug, PartialEq)]
pub struct Classification {
    /// The type; `Unknown` when nothing scored enough.
    pub document_type: DocumentType,
    /// Why, for `classification_notes`.
    pub notes: String,
    /// From 0 (no idea) to 1; `Unknown` has 0.
    pub confidence: f32,
}

/// The keywords of one document type, written in normalized form (uppercase words).
struct Rule {
    document_type: DocumentType,
    /// Phrases that name the document; worth most in a title line.
    titles: &'static [&'static str],
    /// Field labels typical of the document.
    fields: &'static [&'static str],
    /// Short forms people use in file names ("BL", "AN"); also matched followed by digits.
    abbreviations: &'static [&'static str],
}

const RULES: &[Rule] = &[
    Rule {
        document_type: DocumentType::BillOfLading,
        titles: &[
            "BILL OF LADING",
            "SEA WAYBILL",
            "SEAWAY BILL",
            "OCEAN WAYBILL",
            "EXPRESS RELEASE WAYBILL",
            "MASTER B L",
            "HOUSE B L",
            "WAYBILL",
        ],
        fields: &[
            "SHIPPER",
            "CONSIGNEE",
            "NOTIFY PARTY",
            "PLACE OF RECEIPT",
            "PORT OF LOADING",
            "PORT OF DISCHARGE",
            "PLACE OF DELIVERY",
            "OCEAN VESSEL",
            "PRE CARRIAGE BY",
            "FREIGHT PREPAID",
            "FREIGHT COLLECT",
            "SHIPPED ON BOARD",
            "NUMBER OF ORIGINAL",
            "MARKS AND NUMBERS",
            "DESCRIPTION OF GOODS",
            "SAID TO CONTAIN",
            "SHIPPER S LOAD",
            "NON NEGOTIABLE",
        ],
        abbreviations: &["BL", "BOL", "MBL", "HBL", "OBL", "SWB", "WAYBILL"],
    },
    Rule {
        document_type: DocumentType::ArrivalNotice,
        titles: &[
            "ARRIVAL NOTICE",
            "NOTICE OF ARRIVAL",
            "ARRIVAL NOTIFICATION",
            "CARGO ARRIVAL",
            "FREIGHT ARRIVAL",
        ],
        fields: &[
            "ETA",
            "ESTIMATED ARRIVAL",
            "LAST FREE DAY",
            "FREE TIME",
            "DEMURRAGE",
            "FIRMS CODE",
            "AVAILABLE FOR PICKUP",
            "PICKUP LOCATION",
            "CHARGES DUE",
            "AMOUNT DUE",
            "IT NUMBER",
            "CUSTOMS CLEARANCE",
            "TERMINAL",
            "PLACE OF DELIVERY",
        ],
        abbreviations: &["AN", "ARRIVAL"],
    },
    Rule {
        document_type: DocumentType::CommercialInvoice,
        titles: &[
            "COMMERCIAL INVOICE",
            "PROFORMA INVOICE",
            "PRO FORMA INVOICE",
            "CUSTOMS INVOICE",
            "EXPORT INVOICE",
        ],
        fields: &[
            "INVOICE",
            "INVOICE NO",
            "INVOICE DATE",
            "UNIT PRICE",
            "TOTAL AMOUNT",
            "TOTAL VALUE",
            "INCOTERMS",
            "TERMS OF PAYMENT",
            "PAYMENT TERMS",
            "SELLER",
            "BUYER",
            "SOLD TO",
            "HS CODE",
            "CURRENCY",
            "SUBTOTAL",
        ],
        abbreviations: &["CI", "INV", "INVOICE"],
    },
    Rule {
        document_type: DocumentType::PackingList,
        titles: &["PACKING LIST", "PACKING SLIP", "PACKING SPECIFICATION"],
        fields: &[
            "GROSS WEIGHT",
            "NET WEIGHT",
            "CARTONS",
            "CARTON NO",
            "PACKAGES",
            "NO OF PACKAGES",
            "TOTAL PACKAGES",
            "PALLETS",
            "MEASUREMENT",
            "DIMENSIONS",
            "CBM",
            "QTY PER CARTON",
        ],
        abbreviations: &["PL", "PACKING"],
    },
    Rule {
        document_type: DocumentType::DeliveryOrder,
        titles: &[
            "DELIVERY ORDER",
            "RELEASE ORDER",
            "CARGO RELEASE",
            "PICKUP ORDER",
            "PICK UP ORDER",
        ],
        fields: &[
            "DELIVER TO",
            "DELIVERY ADDRESS",
            "TRUCKER",
            "MOTOR CARRIER",
            "DRAYAGE",
            "PICKUP NUMBER",
            "PICK UP NUMBER",
            "APPOINTMENT",
            "PLEASE DELIVER",
            "RELEASE TO",
            "PICKUP FROM",
            "EMPTY RETURN",
        ],
        abbreviations: &["DO", "DELIVERY"],
    },
    Rule {
        document_type: DocumentType::CustomsEntry,
        titles: &[
            "ENTRY SUMMARY",
            "CBP FORM 7501",
            "ENTRY IMMEDIATE DELIVERY",
            "CBP FORM 3461",
            "CUSTOMS ENTRY",
            "CUSTOMS DECLARATION",
        ],
        fields: &[
            "ENTRY NO",
            "ENTRY NUMBER",
            "ENTRY TYPE",
            "ENTRY DATE",
            "SUMMARY DATE",
            "IMPORTER OF RECORD",
            "HTSUS",
            "DUTY",
            "BOND TYPE",
            "FILER CODE",
            "PORT CODE",
            "MANUFACTURER ID",
            "U S CUSTOMS AND BORDER PROTECTION",
            "DEPARTMENT OF HOMELAND SECURITY",
        ],
        abbreviations: &["7501", "3461", "ENTRY", "CUSTOMS"],
    },
    Rule {
        document_type: DocumentType::Isf,
        titles: &["IMPORTER SECURITY FILING", "ISF 10 2", "ISF"],
        fields: &[
            "ISF TRANSACTION",
            "MANUFACTURER",
            "SHIP TO PARTY",
            "CONTAINER STUFFING LOCATION",
            "CONSOLIDATOR",
            "IMPORTER OF RECORD NUMBER",
            "CONSIGNEE NUMBER",
            "COUNTRY OF ORIGIN",
            "HTS",
            "SELLER",
            "BUYER",
        ],
        abbreviations: &["ISF"],
    },
    Rule {
        document_type: DocumentType::CertificateOfOrigin,
        titles: &["CERTIFICATE OF ORIGIN", "ORIGIN CERTIFICATE"],
        fields: &[
            "ORIGIN CRITERION",
            "CHAMBER OF COMMERCE",
            "EXPORTER",
            "PRODUCER",
            "COUNTRY OF ORIGIN",
            "HEREBY CERTIFY",
            "CERTIFYING AUTHORITY",
            "PREFERENTIAL",
            "FORM A",
        ],
        abbreviations: &["COO", "ORIGIN"],
    },
    Rule {
        document_type: DocumentType::BookingConfirmation,
        titles: &[
            "BOOKING CONFIRMATION",
            "BOOKING ACKNOWLEDGEMENT",
            "BOOKING ACKNOWLEDGMENT",
            "BOOKING NOTE",
            "BOOKING AMENDMENT",
        ],
        fields: &[
            "BOOKING NO",
            "BOOKING NUMBER",
            "CUT OFF",
            "CUTOFF",
            "VGM",
            "EMPTY PICK UP",
            "EMPTY PICKUP",
            "EMPTY RELEASE",
            "EQUIPMENT",
            "ESTIMATED TIME OF DEPARTURE",
            "ETD",
            "CARGO RECEIVING",
        ],
        abbreviations: &["BKG", "BOOKING"],
    },
];

/// Score of a title phrase in a title line, in the body, of one field, of a file name hit.
const TITLE_LINE_SCORE: f32 = 10.0;
const BODY_TITLE_SCORE: f32 = 3.0;
const FIELD_SCORE: f32 = 1.0;
const FILENAME_SCORE: f32 = 4.0;
/// At most this many fields count, so that a long form cannot outweigh a title.
const MAX_FIELDS: usize = 8;
/// Below this, the document is `unknown`: a file name alone is enough, as are a few fields.
const MIN_SCORE: f32 = 4.0;
/// Only the start of a long document is examined: titles and labels are at the top.
const MAX_TEXT_BYTES: usize = 64 * 1024;
/// Lines this early in the text, or in capitals, may be titles.
const TITLE_ZONE_LINES: usize = 20;
/// Words that turn a title phrase into a field label: "Bill of Lading No.".
const LABEL_WORDS: &[&str] = &[
    "NO",
    "NUMBER",
    "NR",
    "NBR",
    "NUM",
    "DATE",
    "REF",
    "REFERENCE",
];

/// Classifies a document from its extracted text (possibly empty) and its file name.
pub fn classify(text: &str, filename: Option<&str>) -> Classification {
    let mut end = text.len().min(MAX_TEXT_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let prepared = Prepared::new(&text[..end], filename);
    let mut scored: Vec<Score> = RULES.iter().map(|rule| prepared.score(rule)).collect();
    // Highest score first; ties go to the rule listed first.
    scored.sort_by(|a, b| b.total.total_cmp(&a.total));
    let (best, runner_up) = match scored.as_slice() {
        [best, runner_up, ..] => (best, Some(runner_up)),
        [best] => (best, None),
        [] => {
            return unknown("no rules".to_owned());
        }
    };
    if best.total < MIN_SCORE {
        let reason = if prepared.is_empty() {
            "no text could be read and the file name says nothing".to_owned()
        } else if best.total > 0.0 {
            format!("no type scored {MIN_SCORE}; best was {}", best.describe())
        } else {
            "no title, field or file name of a known type".to_owned()
        };
        return unknown(format!("not recognised: {reason}"));
    }
    let second = runner_up.map_or(0.0, |s| s.total);
    let mut document_type = best.rule.document_type;
    let mut notes = format!("matched {}", best.describe());
    if document_type == DocumentType::BillOfLading && prepared.is_draft_house() {
        document_type = DocumentType::DraftHouseBillOfLading;
        notes.push_str("; marked draft and house bill of lading");
    }
    if let Some(runner_up) = runner_up.filter(|s| s.total > 0.0) {
        notes.push_str(&format!("; runner-up {}", runner_up.describe()));
    }
    let strength = best.total / (best.total + 6.0);
    let margin = (best.total - second) / best.total;
    let confidence = (strength * (0.5 + 0.5 * margin) * 100.0).round() / 100.0;
    Classification {
        document_type,
        notes,
        confidence,
    }
}

fn unknown(notes: String) -> Classification {
    Classification {
        document_type: DocumentType::Unknown,
        notes,
        confidence: 0.0,
    }
}

/// One rule's result.
struct Score {
    rule: &'static Rule,
    total: f32,
    title_line: Option<&'static str>,
    body_title: Option<&'static str>,
    fields: Vec<&'static str>,
    filename: Option<&'static str>,
}

impl Score {
    /// "bill_of_lading (score 17): 'BILL OF LADING' (title); 'SHIPPER', … (fields)".
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(title) = self.title_line {
            parts.push(format!("'{title}' (title)"));
        } else if let Some(title) = self.body_title {
            parts.push(format!("'{title}' (in the text)"));
        }
        if !self.fields.is_empty() {
            let fields: Vec<String> = self.fields.iter().map(|f| format!("'{f}'")).collect();
            parts.push(format!("{} (fields)", fields.join(", ")));
        }
        if let Some(word) = self.filename {
            parts.push(format!("'{word}' (file name)"));
        }
        format!(
            "{} (score {}): {}",
            self.rule.document_type,
            self.total,
            parts.join("; ")
        )
    }
}

/// Text in two comparable forms: words separated by single spaces, padded with a space at
/// both ends so that " WORD " matches whole words; and every letter and digit with nothing
/// between them, for text whose spacing OCR has mangled.
struct Normalized {
    words: String,
    squeezed: String,
}

impl Normalized {
    fn new(text: &str) -> Self {
        let mut words = String::with_capacity(text.len() + 2);
        let mut squeezed = String::with_capacity(text.len());
        words.push(' ');
        for c in text.chars().flat_map(char::to_uppercase) {
            if c.is_alphanumeric() {
                words.push(c);
                squeezed.push(c);
            } else if !words.ends_with(' ') {
                words.push(' ');
            }
        }
        if !words.ends_with(' ') {
            words.push(' ');
        }
        Self { words, squeezed }
    }

    fn is_empty(&self) -> bool {
        self.squeezed.is_empty()
    }

    /// Where `phrase` occurs: `Some(true)` if used as a label ("… NO"), `Some(false)` if as a
    /// name, `None` if not at all.
    fn find(&self, phrase: &str) -> Option<bool> {
        let padded = format!(" {phrase} ");
        let mut found = None;
        for (at, _) in self.words.match_indices(&padded) {
            let rest = &self.words[at + padded.len()..];
            let next = rest.split(' ').next().unwrap_or_default();
            let label = LABEL_WORDS.contains(&next);
            if !label {
                return Some(false);
            }
            found = Some(true);
        }
        if found.is_some() {
            return found;
        }
        let squeezed: String = phrase.chars().filter(|c| *c != ' ').collect();
        // Short phrases squeezed would match inside unrelated words.
        if squeezed.len() < 8 {
            return None;
        }
        for (at, _) in self.squeezed.match_indices(&squeezed) {
            let rest = &self.squeezed[at + squeezed.len()..];
            let label = ["NUMBER", "NBR", "NR", "NUM", "DATE"]
                .iter()
                .any(|w| rest.starts_with(w))
                || (rest.starts_with("NO") && !rest.starts_with("NON") && !rest.starts_with("NOT"));
            if !label {
                return Some(false);
            }
            found = Some(true);
        }
        found
    }

    fn contains(&self, phrase: &str) -> bool {
        self.find(phrase).is_some()
    }

    /// Whether a word of the text is `abbreviation`, alone or followed by digits ("BL123").
    fn has_abbreviation(&self, abbreviation: &str) -> bool {
        self.words.split(' ').any(|word| {
            word.strip_prefix(abbreviation)
                .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()))
        })
    }
}

struct Prepared {
    /// Lines that may be titles.
    titles: Vec<Normalized>,
    body: Normalized,
    filename: Option<Normalized>,
}

impl Prepared {
    fn new(text: &str, filename: Option<&str>) -> Self {
        let titles = text
            .lines()
            .filter(|line| line.chars().any(char::is_alphanumeric))
            .enumerate()
            .filter(|(index, line)| {
                let capitals =
                    line.chars().any(char::is_alphabetic) && !line.chars().any(char::is_lowercase);
                (*index < TITLE_ZONE_LINES || capitals) && title_sized(line)
            })
            .map(|(_, line)| Normalized::new(line))
            .collect();
        let filename = filename.map(|name| {
            let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
            let stem = base.rsplit_once('.').map_or(base, |(stem, _)| stem);
            Normalized::new(stem)
        });
        Self {
            titles,
            body: Normalized::new(text),
            filename,
        }
    }

    fn is_empty(&self) -> bool {
        self.body.is_empty() && self.filename.as_ref().is_none_or(Normalized::is_empty)
    }

    fn score(&self, rule: &'static Rule) -> Score {
        let title_line = rule.titles.iter().copied().find(|title| {
            self.titles
                .iter()
                .any(|line| line.find(title) == Some(false))
        });
        let body_title = rule
            .titles
            .iter()
            .copied()
            .find(|title| self.body.find(title) == Some(false));
        let fields: Vec<&'static str> = rule
            .fields
            .iter()
            .copied()
            .filter(|field| self.body.contains(field))
            .take(MAX_FIELDS)
            .collect();
        let filename = self.filename.as_ref().and_then(|name| {
            rule.titles
                .iter()
                .copied()
                .find(|title| name.contains(title))
                .or_else(|| {
                    rule.abbreviations
                        .iter()
                        .copied()
                        .find(|abbreviation| name.has_abbreviation(abbreviation))
                })
        });
        let title_score = if title_line.is_some() {
            TITLE_LINE_SCORE
        } else if body_title.is_some() {
            BODY_TITLE_SCORE
        } else {
            0.0
        };
        let field_score = f32::from(u8::try_from(fields.len()).unwrap_or(u8::MAX)) * FIELD_SCORE;
        let filename_score = if filename.is_some() {
            FILENAME_SCORE
        } else {
            0.0
        };
        Score {
            rule,
            total: title_score + field_score + filename_score,
            title_line,
            body_title,
            fields,
            filename,
        }
    }

    /// A house bill of lading marked as a draft, in the text or the file name.
    fn is_draft_house(&self) -> bool {
        let sources = std::iter::once(&self.body).chain(self.filename.as_ref());
        let mut draft = false;
        let mut house = false;
        for source in sources {
            draft |= source.contains("DRAFT");
            house |= ["HOUSE BILL OF LADING", "HOUSE B L", "HOUSE WAYBILL", "HBL"]
                .iter()
                .any(|marker| source.contains(marker) || source.has_abbreviation(marker));
        }
        draft && house
    }
}

/// Whether a line is short enough to be a title: at most ten words of two or more
/// characters (letter-spaced OCR titles are all one-character words).
fn title_sized(line: &str) -> bool {
    line.split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= 2)
        .count()
        <= 10
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> DocumentType {
        classify(text, None).document_type
    }

    #[test]
    fn a_bill_of_lading_is_recognised_with_notes_that_say_why() {
        let text = "BILL OF LADING\nShipper: Acme Ltd\nConsignee: Harbor Imports\n\
                    Notify Party: same as consignee\nPort of Loading: Shanghai";
        let result = classify(text, None);
        assert_eq!(result.document_type, DocumentType::BillOfLading);
        assert!(
            result.notes.contains("'BILL OF LADING' (title)"),
            "{}",
            result.notes
        );
        assert!(
            result
                .notes
                .contains("'SHIPPER', 'CONSIGNEE', 'NOTIFY PARTY'"),
            "{}",
            result.notes
        );
        assert!(result.confidence > 0.5, "{}", result.confidence);
    }

    #[test]
    fn a_sea_waybill_is_a_bill_of_lading() {
        let text = "MAERSK\nNON-NEGOTIABLE SEA WAYBILL\nShipper\nConsignee\nVessel";
        assert_eq!(kind(text), DocumentType::BillOfLading);
    }

    #[test]
    fn letter_spaced_ocr_titles_are_recognised() {
        let text = "B I L L   O F   L A D I N G\nSHIPPER ACME\nCONSIGNEE HARBOR";
        assert_eq!(kind(text), DocumentType::BillOfLading);
    }

    #[test]
    fn a_draft_house_bill_of_lading_is_told_apart() {
        let text = "DRAFT - FOR APPROVAL\nHOUSE BILL OF LADING\nShipper\nConsignee";
        assert_eq!(kind(text), DocumentType::DraftHouseBillOfLading);
    }

    #[test]
    fn an_arrival_notice_mentioning_the_bill_of_lading_number_is_an_arrival_notice() {
        let text = "Ocean Freight Forwarders Inc.\nARRIVAL NOTICE\nBill of Lading No.: MAEU123456789\n\
                    Shipper: Acme\nConsignee: Harbor\nETA: 2026-04-02\nLast free day: 2026-04-07\n\
                    Demurrage charges apply after free time.";
        let result = classify(text, None);
        assert_eq!(
            result.document_type,
            DocumentType::ArrivalNotice,
            "{}",
            result.notes
        );
    }

    #[test]
    fn a_commercial_invoice_is_recognised() {
        let text = "COMMERCIAL INVOICE\nInvoice No: INV-10027\nSeller: Acme\nBuyer: Harbor\n\
                    Qty  Unit price  Total amount\nIncoterms: FOB Shanghai";
        assert_eq!(kind(text), DocumentType::CommercialInvoice);
    }

    #[test]
    fn a_packing_list_is_recognised() {
        let text = "Packing List\nCarton No. 1-120\nGross weight 2,400 kg\nNet weight 2,100 kg\n\
                    Measurement 28 CBM";
        assert_eq!(kind(text), DocumentType::PackingList);
    }

    #[test]
    fn a_delivery_order_is_recognised() {
        let text = "DELIVERY ORDER\nTo: ABC Trucking (motor carrier)\nPlease deliver to: \
                    Harbor Imports warehouse\nPickup number 4471";
        assert_eq!(kind(text), DocumentType::DeliveryOrder);
    }

    #[test]
    fn a_cbp_7501_entry_summary_is_a_customs_entry() {
        let text = "DEPARTMENT OF HOMELAND SECURITY\nU.S. Customs and Border Protection\n\
                    ENTRY SUMMARY\n1. Filer Code/Entry No.\n2. Entry Type 01\n3. Summary Date";
        assert_eq!(kind(text), DocumentType::CustomsEntry);
    }

    #[test]
    fn an_importer_security_filing_is_recognised() {
        let text = "Importer Security Filing (ISF 10+2)\nManufacturer: Acme\n\
                    Container stuffing location: Ningbo\nConsolidator: XYZ";
        assert_eq!(kind(text), DocumentType::Isf);
    }

    #[test]
    fn a_certificate_of_origin_is_recognised() {
        let text = "CERTIFICATE OF ORIGIN\nExporter: Acme\nCountry of origin: China\n\
                    The undersigned hereby certify that the goods originate in China.\n\
                    Chamber of Commerce";
        assert_eq!(kind(text), DocumentType::CertificateOfOrigin);
    }

    #[test]
    fn a_booking_confirmation_is_recognised() {
        let text = "BOOKING CONFIRMATION\nBooking No: 123456789\nVGM cut-off: 2026-03-01\n\
                    Empty pick up: Yantian depot\nETD: 2026-03-04";
        assert_eq!(kind(text), DocumentType::BookingConfirmation);
    }

    #[test]
    fn a_letter_is_unknown_and_says_so() {
        let result = classify("Dear Sir,\nthank you for your order of last week.\n", None);
        assert_eq!(result.document_type, DocumentType::Unknown);
        assert_eq!(result.confidence, 0.0);
        assert!(
            result.notes.starts_with("not recognised"),
            "{}",
            result.notes
        );
    }

    #[test]
    fn an_empty_text_without_a_file_name_is_unknown() {
        let result = classify("", None);
        assert_eq!(result.document_type, DocumentType::Unknown);
        assert!(result.notes.contains("no text"), "{}", result.notes);
    }

    #[test]
    fn a_scan_is_classified_by_its_file_name() {
        let result = classify("", Some("uploads/BL_MEDU1234567.pdf"));
        assert_eq!(result.document_type, DocumentType::BillOfLading);
        assert!(
            result.notes.contains("'BL' (file name)"),
            "{}",
            result.notes
        );
    }

    #[test]
    fn a_spelled_out_file_name_counts() {
        let result = classify("", Some("PackingList-4471.pdf"));
        assert_eq!(result.document_type, DocumentType::PackingList);
    }

    #[test]
    fn a_title_outweighs_a_misleading_file_name() {
        let result = classify("ARRIVAL NOTICE\nETA 2026-04-02", Some("invoice.pdf"));
        assert_eq!(result.document_type, DocumentType::ArrivalNotice);
        assert!(
            result.notes.contains("runner-up commercial_invoice"),
            "{}",
            result.notes
        );
    }

    #[test]
    fn a_title_phrase_used_as_a_label_is_not_a_title() {
        let text = "Bill of Lading No: X\nInvoice No: 1\nUnit price\nTotal amount\nSeller\nBuyer";
        assert_eq!(kind(text), DocumentType::CommercialInvoice);
    }

    #[test]
    fn type_codes_round_trip() {
        for document_type in DocumentType::ALL {
            assert_eq!(
                document_type.as_str().parse::<DocumentType>().unwrap(),
                document_type
            );
            let json = serde_json::to_string(&document_type).unwrap();
            assert_eq!(json, format!("\"{}\"", document_type.as_str()));
        }
        assert!("bol".parse::<DocumentType>().is_err());
    }
}
