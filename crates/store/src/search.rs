//! `GET /v2/search` over an index of search terms that both backends keep in the
//! transactions that write what is searched: one row per term of each shipment, container
//! and tracking request (`search_terms`, keyed by account and term), so a search is one
//! range scan of the account's terms that start with the query.
//!
//! A number's terms are its words (runs of letters and digits, lower case) joined from each
//! word's start to its end: `PO 4471-ACME` has `po4471acme`, `4471acme` and `acme`. A query is
//! joined the same way, so it finds a number by its prefix (`po44`), by any of its words
//! (`acme`) and by a run of words (`4471 ac`), whatever separators either uses.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use tidemark_domain::{Container, Shipment, TrackingRequest};
use uuid::Uuid;

use crate::document_search::search_words;

/// The longest term kept, in characters; longer ones (and queries) are cut.
pub const MAX_TERM_CHARS: usize = 64;

/// Words of one number that start terms; a longer text adds no more.
const MAX_WORDS: usize = 16;

/// Index rows one search reads at most: a query that starts more terms than this ranks
/// those that sort first.
pub const SEARCH_SCAN_LIMIT: u32 = 2_000;

/// What a search result is, in the order results are ranked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SearchKind {
    Shipment,
    Container,
    TrackingRequest,
}

impl SearchKind {
    /// The number stored in `search_terms.kind`.
    pub fn code(self) -> i16 {
        match self {
            Self::Shipment => 0,
            Self::Container => 1,
            Self::TrackingRequest => 2,
        }
    }

    pub fn from_code(code: i64) -> Option<Self> {
        match code {
            0 => Some(Self::Shipment),
            1 => Some(Self::Container),
            2 => Some(Self::TrackingRequest),
            _ => None,
        }
    }
}

/// One searched entity's terms, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchEntry {
    pub kind: SearchKind,
    pub id: Uuid,
    /// Recency: when the entity was created.
    pub at: DateTime<Utc>,
    pub terms: BTreeSet<String>,
}

impl SearchEntry {
    /// A shipment by its bill of lading number, the number it was requested by and its ref
    /// numbers.
    pub fn shipment(shipment: &Shipment) -> Self {
        let numbers = [
            shipment.bill_of_lading_number.as_str(),
            shipment.normalized_number.as_str(),
        ];
        Self {
            kind: SearchKind::Shipment,
            id: shipment.id.0,
            at: shipment.created_at,
            terms: terms_of(
                numbers
                    .into_iter()
                    .chain(shipment.ref_numbers.iter().map(String::as_str)),
            ),
        }
    }

    /// A container by its number and ref numbers.
    pub fn container(container: &Container) -> Self {
        Self {
            kind: SearchKind::Container,
            id: container.id.0,
            at: container.created_at,
            terms: terms_of(
                std::iter::once(container.number.as_str())
                    .chain(container.ref_numbers.iter().map(String::as_str)),
            ),
        }
    }

    /// A tracking request by its request number and ref numbers.
    pub fn tracking_request(request: &TrackingRequest) -> Self {
        Self {
            kind: SearchKind::TrackingRequest,
            id: request.id.0,
            at: request.created_at,
            terms: terms_of(
                std::iter::once(request.request_number.as_str())
                    .chain(request.ref_numbers.iter().map(String::as_str)),
            ),
        }
    }
}

/// The terms of some numbers: each number's words joined from every word's start.
pub fn terms_of<'a>(numbers: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    let mut terms = BTreeSet::new();
    for number in numbers {
        let words: Vec<String> = search_words(number).take(MAX_WORDS).collect();
        for start in 0..words.len() {
            terms.insert(
                words[start..]
                    .concat()
                    .chars()
                    .take(MAX_TERM_CHARS)
                    .collect(),
            );
        }
    }
    terms
}

/// What a query searches for: its words joined, or `None` when it has no letter or digit.
pub fn search_key(query: &str) -> Option<String> {
    let key: String = search_words(query)
        .collect::<String>()
        .chars()
        .take(MAX_TERM_CHARS)
        .collect();
    (!key.is_empty()).then_some(key)
}

/// One entity a search found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchHit {
    pub kind: SearchKind,
    pub id: Uuid,
    pub at: DateTime<Utc>,
}

/// The entities of the rows a scan read, once each: shipments, then containers, then
/// tracking requests, each newest first.
pub fn rank_hits(mut hits: Vec<SearchHit>) -> Vec<SearchHit> {
    hits.sort_by(|a, b| (a.kind, b.at, b.id).cmp(&(b.kind, a.at, a.id)));
    hits.dedup_by_key(|hit| (hit.kind, hit.id));
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(numbers: &[&str]) -> Vec<String> {
        terms_of(numbers.iter().copied()).into_iter().collect()
    }

    #[test]
    fn a_numbers_terms_start_at_each_of_its_words() {
        assert_eq!(terms(&["PO 4471-ACME"]), ["4471acme", "acme", "po4471acme"]);
        assert_eq!(terms(&["MAEU123456789"]), ["maeu123456789"]);
    }

    #[test]
    fn a_query_is_its_words_joined_whatever_the_separators() {
        assert_eq!(search_key(" po-4471 ac").as_deref(), Some("po4471ac"));
        assert_eq!(search_key("--- "), None);
        assert_eq!(search_key(""), None);
    }

    #[test]
    fn long_terms_and_queries_are_cut_alike() {
        let long = "A".repeat(MAX_TERM_CHARS + 5);

        assert_eq!(terms(&[&long]), ["a".repeat(MAX_TERM_CHARS)]);
        assert_eq!(search_key(&long), Some("a".repeat(MAX_TERM_CHARS)));
    }

    #[test]
    fn hits_rank_by_kind_then_newest_first_once_each() {
        let at = |hour| {
            DateTime::parse_from_rfc3339(&format!("2026-01-01T{hour:02}:00:00Z"))
                .unwrap()
                .with_timezone(&Utc)
        };
        let hit = |kind, id: u128, hour| SearchHit {
            kind,
            id: Uuid::from_u128(id),
            at: at(hour),
        };
        let ranked = rank_hits(vec![
            hit(SearchKind::TrackingRequest, 1, 9),
            hit(SearchKind::Container, 2, 1),
            hit(SearchKind::Shipment, 3, 1),
            hit(SearchKind::Container, 4, 5),
            hit(SearchKind::Shipment, 3, 1),
            hit(SearchKind::Shipment, 5, 2),
        ]);

        let ids: Vec<u128> = ranked.iter().map(|h| h.id.as_u128()).collect();
        assert_eq!(ids, [5, 3, 4, 2, 1]);
    }
}
