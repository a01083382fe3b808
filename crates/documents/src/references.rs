//! Container numbers and bill of lading numbers mentioned in a document's text, to link it
//! to the account's shipments and containers.
//!
//! Container numbers are found in the spellings documents use ("MSCU1234566",
//! "MSCU 123456-6", "MSCU 123456 (6)") and kept only when the ISO 6346 check digit is right,
//! which rules out nearly every false match. Bill of lading numbers have no check digit and
//! no common shape, so they are candidates: a number after a "B/L No." style label, or a
//! token that starts with a carrier's bill of lading prefix ("MAEU123456789"). The server
//! links only candidates equal to a number it already tracks ([`matching_bl_numbers`]).

use tidemark_domain::ContainerNumber;

/// What [`find_references`] found, each list in order of first appearance, without
/// duplicates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct References {
    /// Valid ISO 6346 numbers, normalized ("MSCU1234566").
    pub container_numbers: Vec<String>,
    /// Possible bill of lading numbers, uppercase letters and digits only; never a valid
    /// container number.
    pub bl_candidates: Vec<String>,
}

/// Only this much of a text is searched; references are near the top of documents.
const MAX_TEXT_BYTES: usize = 1024 * 1024;

/// Bill of lading numbers are 8 to 20 letters and digits, with at least one digit.
const BL_MIN: usize = 8;
const BL_MAX: usize = 20;

/// Carrier prefixes (SCACs) that start ocean bill of lading numbers, as the carriers print
/// them. Container owner codes (MSCU, MSKU, …) are not here: those start container numbers.
pub const BL_PREFIXES: &[&str] = &[
    "ANNU", "APLU", "CHNL", "CMDU", "COSU", "EGLV", "HDMU", "HLCU", "KMTU", "MAEU", "MATS", "MEDU",
    "ONEY", "OOLU", "PABV", "SAFM", "SEAU", "SMLM", "SUDU", "WHLC", "YMJA", "YMLU", "ZIMU",
];

/// Words that stand between a label and its number: "B/L No.: …", "Bill of Lading Number".
const FILLER_WORDS: &[&str] = &[
    "NO",
    "NUMBER",
    "NR",
    "NBR",
    "NUM",
    "REF",
    "REFERENCE",
    "NOS",
];

/// Labels that introduce a bill of lading number, as sequences of words.
const BL_LABELS: &[&[&str]] = &[
    &["BILL", "OF", "LADING"],
    &["B", "L"],
    &["MB", "L"],
    &["HB", "L"],
    &["BL"],
    &["BOL"],
    &["MBL"],
    &["HBL"],
    &["MBOL"],
    &["HBOL"],
    &["OBL"],
    &["SWB"],
    &["WAYBILL"],
];

/// How far after its label a number may start: the label's line, or the next.
const LABEL_REACH_BYTES: usize = 48;

/// Finds container numbers and bill of lading candidates in `text`.
pub fn find_references(text: &str) -> References {
    let mut end = text.len().min(MAX_TEXT_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let upper = text[..end].to_ascii_uppercase();
    let tokens = tokens(&upper);
    let container_numbers = unique(container_numbers(upper.as_bytes()));
    let mut bl = label_candidates(&upper, &tokens);
    bl.extend(prefixed_candidates(&tokens));
    bl.sort_by_key(|(at, _)| *at);
    let bl_candidates = unique(
        bl.into_iter()
            .map(|(_, number)| number)
            .filter(|number| ContainerNumber::parse(number).is_err())
            .collect(),
    );
    References {
        container_numbers,
        bl_candidates,
    }
}

/// The known bill of lading numbers that some candidate equals, in the order of `known`.
///
/// Comparison ignores case and anything but letters and digits, and allows the carrier
/// prefix to be missing on one side: Maersk prints "MAEU123456789" on some documents and
/// "123456789" on others.
pub fn matching_bl_numbers<'a>(candidates: &[String], known: &[&'a str]) -> Vec<&'a str> {
    let candidates: Vec<String> = candidates.iter().map(|c| normalize(c)).collect();
    known
        .iter()
        .copied()
        .filter(|number| {
            let number = normalize(number);
            candidates
                .iter()
                .any(|candidate| same_bl(candidate, &number))
        })
        .collect()
}

/// Whether `text` mentions `number` (a container or bill of lading number) as a whole word,
/// ignoring case, spaces and dashes inside it: a check for numbers the server already knows,
/// which needs no guessing about labels.
pub fn text_mentions(text: &str, number: &str) -> bool {
    let number = normalize(number);
    if number.len() < BL_MIN {
        return false;
    }
    let upper = text.to_ascii_uppercase();
    let tokens = tokens(&upper);
    // Also try tokens joined across one space or dash, as in "MSCU 123456-6".
    (0..tokens.len()).any(|start| {
        let mut joined = String::new();
        for (index, token) in tokens[start..].iter().take(3).enumerate() {
            if index > 0 {
                let previous = &tokens[start + index - 1];
                let gap = &upper[previous.end..token.start];
                if gap.len() > 2 || !gap.chars().all(|c| matches!(c, ' ' | '-')) {
                    break;
                }
            }
            joined.push_str(token.text);
            if same_bl(&joined, &number) {
                return true;
            }
        }
        false
    })
}

/// Uppercase letters and digits only.
fn normalize(number: &str) -> String {
    number
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// Equal, or equal once a four-letter carrier prefix is removed from one side.
fn same_bl(a: &str, b: &str) -> bool {
    fn without_prefix(number: &str) -> Option<&str> {
        let (prefix, rest) = (number.get(..4)?, number.get(4..)?);
        (prefix.bytes().all(|b| b.is_ascii_uppercase()) && rest.len() >= BL_MIN).then_some(rest)
    }
    a == b || without_prefix(a) == Some(b) || without_prefix(b) == Some(a)
}

/// A run of ASCII letters and digits in the uppercased text.
struct Token<'a> {
    start: usize,
    end: usize,
    text: &'a str,
}

fn tokens(upper: &str) -> Vec<Token<'_>> {
    let bytes = upper.as_bytes();
    let mut tokens = Vec::new();
    let mut start = None;
    for (index, byte) in bytes.iter().enumerate() {
        match (byte.is_ascii_alphanumeric(), start) {
            (true, None) => start = Some(index),
            (false, Some(from)) => {
                tokens.push(Token {
                    start: from,
                    end: index,
                    text: &upper[from..index],
                });
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        tokens.push(Token {
            start: from,
            end: bytes.len(),
            text: &upper[from..],
        });
    }
    tokens
}

/// Valid container numbers, in order, possibly repeated.
fn container_numbers(bytes: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut index = 0;
    while index + 11 <= bytes.len() {
        let word_start = index == 0 || !bytes[index - 1].is_ascii_alphanumeric();
        if word_start
            && bytes[index..index + 4].iter().all(u8::is_ascii_uppercase)
            && let Some((candidate, end)) = container_at(bytes, index)
            && let Ok(number) = ContainerNumber::parse(&candidate)
        {
            found.push(number.as_str().to_owned());
            index = end;
            continue;
        }
        index += 1;
    }
    found
}

/// Reads "ABCU1234566", "ABCU 123456-6", "ABCU-123456 (6)" and the like at `start`;
/// returns the eleven characters and where the number ends.
fn container_at(bytes: &[u8], start: usize) -> Option<(String, usize)> {
    let mut at = start + 4;
    at = skip(bytes, at, b" -", 2);
    let serial = bytes.get(at..at + 6)?;
    if !serial.iter().all(u8::is_ascii_digit) {
        return None;
    }
    at += 6;
    at = skip(bytes, at, b" -/", 2);
    let boxed = matches!(bytes.get(at), Some(b'(' | b'['));
    if boxed {
        at += 1;
    }
    let check = *bytes.get(at).filter(|b| b.is_ascii_digit())?;
    at += 1;
    if boxed {
        if !matches!(bytes.get(at), Some(b')' | b']')) {
            return None;
        }
        at += 1;
    } else if bytes.get(at).is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    let mut number = String::with_capacity(11);
    number.extend(bytes[start..start + 4].iter().map(|&b| char::from(b)));
    number.extend(serial.iter().map(|&b| char::from(b)));
    number.push(char::from(check));
    Some((number, at))
}

/// Skips at most `max` bytes from `set`.
fn skip(bytes: &[u8], mut at: usize, set: &[u8], max: usize) -> usize {
    let limit = at + max;
    while at < limit && bytes.get(at).is_some_and(|b| set.contains(b)) {
        at += 1;
    }
    at
}

fn looks_like_bl(token: &str) -> bool {
    (BL_MIN..=BL_MAX).contains(&token.len()) && token.bytes().any(|b| b.is_ascii_digit())
}

/// Numbers that follow a bill of lading label closely.
fn label_candidates(upper: &str, tokens: &[Token<'_>]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for start in 0..tokens.len() {
        for label in BL_LABELS {
            let Some(words) = tokens.get(start..start + label.len()) else {
                continue;
            };
            if !words.iter().zip(label.iter()).all(|(t, w)| t.text == *w) {
                continue;
            }
            // "B/L" is one label, not "B" then "/L": the words must be close together.
            let tight = words
                .windows(2)
                .all(|pair| pair[1].start - pair[0].end <= 2);
            if !tight {
                continue;
            }
            let label_end = words.last().map_or(0, |t| t.end);
            let mut next = start + label.len();
            while tokens
                .get(next)
                .is_some_and(|t| FILLER_WORDS.contains(&t.text))
            {
                next += 1;
            }
            if let Some(token) = tokens.get(next)
                && token.start - label_end <= LABEL_REACH_BYTES
                && looks_like_bl(token.text)
                && !upper[label_end..token.start].contains("\n\n")
            {
                found.push((token.start, token.text.to_owned()));
            }
        }
    }
    found
}

/// Tokens that start with a carrier's bill of lading prefix and carry at least six digits.
fn prefixed_candidates(tokens: &[Token<'_>]) -> Vec<(usize, String)> {
    tokens
        .iter()
        .filter(|token| {
            looks_like_bl(token.text)
                && token.text.len() >= 10
                && BL_PREFIXES.iter().any(|p| token.text.starts_with(p))
                && token.text[4..].bytes().filter(u8::is_ascii_digit).count() >= 6
        })
        .map(|token| (token.start, token.text.to_owned()))
        .collect()
}

/// Removes later repeats, keeping the order of first appearance.
fn unique(items: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    items
        .into_iter()
        .filter(|item| seen.insert(item.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{DocumentType, classify};
    use crate::sniff::sniff;
    use crate::text::extract_text;

    #[test]
    fn a_generated_bill_of_lading_pdf_is_classified_and_yields_its_numbers() {
        let path = format!(
            "{}/tests/fixtures/documents/bill_of_lading.pdf",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../server")
        );
        let bytes = std::fs::read(path).unwrap();
        let sniffed = sniff(&bytes, Some("application/octet-stream"), Some("scan.pdf")).unwrap();
        let text = extract_text(sniffed.content_type, &bytes).unwrap();
        let classification = classify(&text, Some("scan.pdf"));
        assert_eq!(classification.document_type, DocumentType::BillOfLading);
        let found = find_references(&text);
        assert_eq!(found.container_numbers, ["MSCU1234566", "TGHU9876542"]);
        assert_eq!(found.bl_candidates, ["MEDUQ1234567"]);
    }

    #[test]
    fn a_plain_container_number_is_found() {
        let found = find_references("Container: MSCU1234566 Seal 12345");
        assert_eq!(found.container_numbers, ["MSCU1234566"]);
    }

    #[test]
    fn spaced_and_dashed_container_numbers_are_normalized() {
        let found = find_references("cntr mscu 123456-6, TGHU-987654 2 and CSQU 305438 (3)");
        assert_eq!(
            found.container_numbers,
            ["MSCU1234566", "TGHU9876542", "CSQU3054383"]
        );
    }

    #[test]
    fn a_container_number_with_a_wrong_check_digit_is_ignored() {
        // 6 is the right check digit for MSCU123456.
        let found = find_references("MSCU1234565 MSCU 123456-5");
        assert!(found.container_numbers.is_empty());
    }

    #[test]
    fn container_numbers_are_unique_in_order_of_appearance() {
        let found = find_references("TGHU9876542\nMSCU1234566\nTGHU 987654 2\n");
        assert_eq!(found.container_numbers, ["TGHU9876542", "MSCU1234566"]);
    }

    #[test]
    fn a_container_number_inside_a_longer_word_is_ignored() {
        let found = find_references("XMSCU1234566 MSCU12345667");
        assert!(found.container_numbers.is_empty());
    }

    #[test]
    fn a_serial_followed_by_other_digits_is_not_a_container_number() {
        let found = find_references("MSCU 123456 789 KGS");
        assert!(found.container_numbers.is_empty());
    }

    #[test]
    fn a_number_after_a_bl_label_is_a_candidate() {
        let found = find_references("B/L No.: SA00846884\nBill of Lading Number 2706772870");
        assert_eq!(found.bl_candidates, ["SA00846884", "2706772870"]);
    }

    #[test]
    fn a_number_on_the_line_after_its_label_is_a_candidate() {
        let found = find_references("MBL\n  ZIMULEH9024455\n");
        assert_eq!(found.bl_candidates, ["ZIMULEH9024455"]);
    }

    #[test]
    fn a_carrier_prefixed_number_is_a_candidate_without_a_label() {
        let found = find_references("Ref MAEU123456789 and HDMUNBOZ32457200 please");
        assert_eq!(found.bl_candidates, ["MAEU123456789", "HDMUNBOZ32457200"]);
    }

    #[test]
    fn words_and_short_numbers_after_a_label_are_not_candidates() {
        let found = find_references("BILL OF LADING\nShipper: Acme\nB/L No: 12345");
        assert!(found.bl_candidates.is_empty(), "{:?}", found.bl_candidates);
    }

    #[test]
    fn a_container_number_is_never_a_bl_candidate() {
        let found = find_references("B/L: MSCU1234566");
        assert!(found.bl_candidates.is_empty());
        assert_eq!(found.container_numbers, ["MSCU1234566"]);
    }

    #[test]
    fn bl_candidates_are_unique() {
        let found = find_references("B/L MEDUQ1234567 ... MEDUQ1234567");
        assert_eq!(found.bl_candidates, ["MEDUQ1234567"]);
    }

    #[test]
    fn known_numbers_match_with_or_without_the_carrier_prefix() {
        let candidates = vec!["123456789".to_owned(), "sa00846884".to_owned()];
        let known = ["MAEU123456789", "SA00846884", "ONEYXXX0000001"];
        assert_eq!(
            matching_bl_numbers(&candidates, &known),
            ["MAEU123456789", "SA00846884"]
        );
    }

    #[test]
    fn a_short_shared_tail_is_not_a_match() {
        let candidates = vec!["AB1234".to_owned()];
        assert!(matching_bl_numbers(&candidates, &["MAEUAB1234"]).is_empty());
    }

    #[test]
    fn text_mentions_a_spaced_container_number() {
        assert!(text_mentions("cntr MSCU 123456-6 sealed", "MSCU1234566"));
        assert!(!text_mentions("cntr MSCU 123456-66 sealed", "MSCU1234566"));
    }

    #[test]
    fn text_mentions_a_bl_number_printed_without_its_prefix() {
        assert!(text_mentions("Bill of lading 123456789", "MAEU123456789"));
        assert!(!text_mentions("Bill of lading 1234567890", "MAEU123456789"));
    }

    #[test]
    fn non_ascii_text_does_not_disturb_the_search() {
        let found = find_references("Conteneur n° MSCU1234566 — connaissement n° MEDUQ1234567");
        assert_eq!(found.container_numbers, ["MSCU1234566"]);
        assert_eq!(found.bl_candidates, ["MEDUQ1234567"]);
    }
}
