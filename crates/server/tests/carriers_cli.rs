//! `tidemark carriers list` and `tidemark carriers check`, through the real binary, against
//! a strict mock Hapag-Lloyd that answers only when both of its headers are right.

#![expect(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is a failed test"
)]

use std::process::{Command, Output};

use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Runs `tidemark` with only these variables (and a fresh SQLite database).
async fn tidemark(args: &[&str], variables: &[(&str, &str)]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("t.db").display());
    let mut command = Command::new(env!("CARGO_BIN_EXE_tidemark"));
    command
        .args(args)
        .env_clear()
        .env("TIDEMARK_DATABASE_URL", &database)
        .env("TIDEMARK_LOG_LEVEL", "error")
        .envs(variables.iter().copied());
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    drop(dir);
    output
}

/// Hapag-Lloyd's T&T, strictly: 200 with an empty page only when both headers are right,
/// 404 for the number it does not know, 401 otherwise.
async fn strict_hapag_lloyd() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/hl/v2/events"))
        .and(header("X-IBM-Client-Id", "my-id"))
        .and(header("X-IBM-Client-Secret", "my-secret"))
        .and(query_param("equipmentReference", "CSQU3054383"))
        .respond_with(ResponseTemplate::new(200).set_body_string("[]"))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/hl/v2/events"))
        .and(header("X-IBM-Client-Id", "my-id"))
        .and(header("X-IBM-Client-Secret", "my-secret"))
        .respond_with(ResponseTemplate::new(404))
        .with_priority(2)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(401))
        .with_priority(10)
        .mount(&server)
        .await;
    server
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn carriers_list_shows_every_profile_with_its_configuration_and_budget() {
    let output = tidemark(
        &["carriers", "list"],
        &[
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_ID", "my-id"),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_SECRET", "my-secret"),
        ],
    )
    .await;

    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let row = |scac: &str| {
        stdout
            .lines()
            .find(|line| line.starts_with(&format!("{scac}\t")))
            .unwrap_or_else(|| panic!("no {scac} row in {stdout}"))
            .split('\t')
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        row("HLCU")[..6],
        [
            "HLCU",
            "Hapag-Lloyd",
            "yes",
            "dcsa-2.2",
            "headers",
            "10/min 6000/day"
        ]
    );
    assert_eq!(row("HLCU")[8..], ["-", "closed"]);
    assert_eq!(row("MAEU")[2], "no");
    assert_eq!(row("ANNU")[2], "no (via CMDU)");
    assert_eq!(row("WHLC")[2..4], ["no API", "edi"]);
    assert_eq!(row("COSU")[5], "1000/day");
    assert!(!stdout.contains("my-secret"));
}

#[tokio::test(flavor = "multi_thread")]
async fn carriers_check_succeeds_with_the_right_credentials() {
    let server = strict_hapag_lloyd().await;
    let base = format!("{}/hl", server.uri());

    let known = tidemark(
        &["carriers", "check", "HLCU", "CSQU3054383"],
        &[
            ("TIDEMARK_CARRIERS__HLCU__BASE_URL", &base),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_ID", "my-id"),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_SECRET", "my-secret"),
        ],
    )
    .await;
    let no_number = tidemark(
        &["carriers", "check", "hlcu"],
        &[
            ("TIDEMARK_CARRIERS__HLCU__BASE_URL", &base),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_ID", "my-id"),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_SECRET", "my-secret"),
        ],
    )
    .await;

    assert!(known.status.success(), "{}", text(&known));
    assert!(
        text(&known).contains("HLCU: OK, 0 event(s)"),
        "{}",
        text(&known)
    );
    assert!(no_number.status.success(), "{}", text(&no_number));
    assert!(text(&no_number).contains("credentials are accepted"));
}

#[tokio::test(flavor = "multi_thread")]
async fn carriers_check_says_the_credentials_are_refused_and_fails() {
    let server = strict_hapag_lloyd().await;
    let base = format!("{}/hl", server.uri());

    let output = tidemark(
        &["carriers", "check", "HLCU", "CSQU3054383"],
        &[
            ("TIDEMARK_CARRIERS__HLCU__BASE_URL", &base),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_ID", "my-id"),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_SECRET", "wrong"),
        ],
    )
    .await;

    assert!(!output.status.success());
    assert!(
        text(&output).contains("HLCU refused the credentials"),
        "{}",
        text(&output)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn carriers_check_says_an_unknown_number_is_unknown_and_fails() {
    let server = strict_hapag_lloyd().await;
    let base = format!("{}/hl", server.uri());

    let output = tidemark(
        &["carriers", "check", "HLCU", "HLCUHAM123456789"],
        &[
            ("TIDEMARK_CARRIERS__HLCU__BASE_URL", &base),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_ID", "my-id"),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_SECRET", "my-secret"),
        ],
    )
    .await;

    assert!(!output.status.success());
    assert!(
        text(&output).contains("does not know this number"),
        "{}",
        text(&output)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn carriers_check_names_a_host_that_does_not_resolve() {
    let output = tidemark(
        &["carriers", "check", "HLCU"],
        &[
            (
                "TIDEMARK_CARRIERS__HLCU__BASE_URL",
                "http://no-such-host.invalid/hl",
            ),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_ID", "my-id"),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_SECRET", "my-secret"),
        ],
    )
    .await;

    assert!(!output.status.success());
    assert!(text(&output).contains("DNS"), "{}", text(&output));
}

#[tokio::test(flavor = "multi_thread")]
async fn carriers_check_of_an_unconfigured_or_api_less_line_fails_saying_why() {
    let unconfigured = tidemark(&["carriers", "check", "HLCU"], &[]).await;
    let no_api = tidemark(&["carriers", "check", "MATS"], &[]).await;

    assert!(!unconfigured.status.success());
    assert!(
        text(&unconfigured).contains("client_id and client_secret"),
        "{}",
        text(&unconfigured)
    );
    assert!(!no_api.status.success());
    assert!(
        text(&no_api).contains("no public tracking API")
            && text(&no_api).contains("/v2/edi_messages"),
        "{}",
        text(&no_api)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn carriers_check_asks_a_booking_as_a_booking_and_prints_what_a_poll_would_make_of_it() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/hl/v2/events"))
        .and(header("X-IBM-Client-Id", "my-id"))
        .and(header("X-IBM-Client-Secret", "my-secret"))
        .and(query_param("carrierBookingReference", "HLbk-ab12"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(serde_json::json!([{
                "eventID": "load-1",
                "eventType": "EQUIPMENT",
                "eventClassifierCode": "ACT",
                "eventDateTime": "2026-02-20T08:30:00Z",
                "equipmentEventTypeCode": "LOAD",
                "equipmentReference": "HLXU1234565",
                "emptyIndicatorCode": "LADEN",
                "transportCall": {
                    "UNLocationCode": "DEHAM",
                    "vessel": {"vesselIMONumber": "9321483", "vesselName": "BERLIN EXPRESS"},
                    "exportVoyageNumber": "012W"
                }
            }])),
        )
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(404))
        .with_priority(10)
        .mount(&server)
        .await;
    let base = format!("{}/hl", server.uri());

    let output = tidemark(
        &["carriers", "check", "HLCU", "HLbk-ab12"],
        &[
            ("TIDEMARK_CARRIERS__HLCU__BASE_URL", &base),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_ID", "my-id"),
            ("TIDEMARK_CARRIERS__HLCU__CLIENT_SECRET", "my-secret"),
        ],
    )
    .await;

    let text = text(&output);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("not known as a bill of lading"), "{text}");
    assert!(
        text.contains("OK, 1 event(s) for HLbk-ab12 as a booking number"),
        "{text}"
    );
    assert!(text.contains("port of lading DEHAM"), "{text}");
    assert!(
        text.contains(
            "2026-02-20T08:30:00Z\tcontainer.transport.vessel_loaded\tDEHAM\tHLXU1234565\tBERLIN EXPRESS\t012W"
        ),
        "{text}"
    );
}
