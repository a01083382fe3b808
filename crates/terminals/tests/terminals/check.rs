//! `check`: one lookup told for a person, and building connectors by profile id.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{Duration, TimeZone, Utc};
use tidemark_terminals::{CheckOutcome, ConfigError, SandboxTerminal, Settings, check, connect};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::helpers::{clock, container};

#[tokio::test]
async fn a_report_says_what_was_asked_what_came_back_and_how_it_was_read() {
    let now = Utc.with_ymd_and_hms(2024, 6, 21, 15, 0, 0).unwrap();
    let terminal = SandboxTerminal::with_discharges(
        clock(),
        HashMap::from([(container("MSCU1234566"), now - Duration::days(8))]),
    );

    let report = check(&terminal, container("MSCU1234566"), None).await;

    assert!(matches!(report.outcome, CheckOutcome::Found(_)));
    let text = report.to_string();
    for line in [
        "terminal: Tidemark sandbox terminal (sandbox)",
        "asked: MSCU1234566",
        "answer: found",
        "available for pickup: yes",
        "last free day: 2024-06-17",
        "fee: demurrage 600.00 USD",
        "\"phase\": \"released\"",
    ] {
        assert!(text.contains(line), "{line:?} in:\n{text}");
    }
}

#[tokio::test]
async fn a_failed_check_says_what_went_wrong_and_what_to_do() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(403))
        .mount(&server)
        .await;
    let settings = Settings {
        api_key: Some("wrong".to_owned()),
        base_url: Some(server.uri()),
        ..Settings::default()
    };
    let connector = connect("port_of_virginia", &settings, clock()).unwrap();

    let report = check(
        connector.as_ref(),
        container("MSCU1234566"),
        Some("MEDUVA1".to_owned()),
    )
    .await;

    let text = report.to_string();
    assert!(text.contains("failed (credentials_refused)"), "{text}");
    assert!(text.contains("check the credentials"), "{text}");
    assert!(text.contains("base URL: http://127.0.0.1"), "{text}");
    assert!(text.contains("your setting"), "{text}");
    assert!(!text.contains("wrong"), "the key stays out: {text}");
}

#[test]
fn connect_refuses_unknown_profiles_and_the_sandbox() {
    let unknown = connect("nowhere", &Settings::default(), clock()).err();
    let sandbox = connect(
        "sandbox",
        &Settings::default(),
        Arc::new(tidemark_domain::SystemClock),
    )
    .err();

    assert_eq!(
        unknown,
        Some(ConfigError::UnknownProfile("nowhere".to_owned()))
    );
    assert!(
        sandbox.is_some_and(|e| e.to_string().contains("SandboxTerminal")),
        "the sandbox needs its discharge times"
    );
}
