//! What the terminal tests share: a clock, fixtures, queries, and a matcher that lets a mock
//! refuse query parameters it does not know.

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use tidemark_domain::{ContainerNumber, MockClock};
use tidemark_terminals::ContainerQuery;
use wiremock::{Match, Request};

pub fn clock() -> Arc<MockClock> {
    Arc::new(MockClock::new(
        Utc.with_ymd_and_hms(2024, 6, 21, 15, 0, 0).unwrap(),
    ))
}

/// When the tests' lookups happen: the clock's time, for the adapters' pure `parse`.
pub fn checked_at() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 6, 21, 15, 0, 0).unwrap()
}

/// A fixture under tests/fixtures/.
pub fn fixture(path: &str) -> String {
    let path = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A fixture as JSON.
pub fn json_fixture(path: &str) -> serde_json::Value {
    serde_json::from_str(&fixture(path)).expect("fixtures are JSON")
}

pub fn container(number: &str) -> ContainerNumber {
    ContainerNumber::parse(number).expect("test numbers are valid ISO 6346")
}

pub fn query(number: &str, bill_of_lading: Option<&str>) -> ContainerQuery {
    ContainerQuery::new(container(number), bill_of_lading.map(str::to_owned))
}

/// Matches a request whose query parameters are all among `allowed`: a strict mock mounts
/// its answers with it and answers anything else 400, as a gateway refusing an unknown
/// parameter would.
pub struct OnlyQuery(pub &'static [&'static str]);

impl Match for OnlyQuery {
    fn matches(&self, request: &Request) -> bool {
        request
            .url
            .query_pairs()
            .all(|(name, _)| self.0.contains(&name.as_ref()))
    }
}

/// `count` distinct valid container numbers.
pub fn many_queries(count: u32) -> Vec<ContainerQuery> {
    (0..count)
        .map(|serial| {
            ContainerQuery::new(
                ContainerNumber::from_owner_and_serial("TSTU", 100_000 + serial),
                Some(format!("BL{serial}")),
            )
        })
        .collect()
}
