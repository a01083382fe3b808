//! `tidemark terminals list` and `tidemark terminals check`, through the real binary, with
//! settings from `TIDEMARK_TERMINALS__<PROFILE_ID>__<KEY>` variables, against a strict mock
//! Port of Virginia that answers the docs' shape (the terminals crate's fixture) only for
//! the right key.

#![expect(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is a failed test"
)]

use std::process::{Command, Output};

use wiremock::matchers::{body_json, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The Port of Virginia's Import Availability answer the terminals crate's tests read.
const POV_ANSWER: &str =
    include_str!("../../terminals/tests/fixtures/port_of_virginia/import_availability.json");

/// Runs `tidemark` with only these variables (and a fresh SQLite database).
async fn tidemark(args: &[&str], variables: &[(&str, &str)]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let output = tidemark_on(&dir.path().join("t.db"), args, variables).await;
    drop(dir);
    output
}

/// Runs `tidemark` with only these variables on the SQLite database at `path`.
async fn tidemark_on(path: &std::path::Path, args: &[&str], variables: &[(&str, &str)]) -> Output {
    let database = format!("sqlite://{}", path.display());
    let mut command = Command::new(env!("CARGO_BIN_EXE_tidemark"));
    command
        .args(args)
        .env_clear()
        .env("TIDEMARK_DATABASE_URL", &database)
        .env("TIDEMARK_LOG_LEVEL", "error")
        .envs(variables.iter().copied());
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A strict Port of Virginia: the bulk call with key `k3y` asking for TGHU8888810 with its
/// bill of lading answers the fixture; another key is 401; anything else is 400.
async fn strict_port_of_virginia() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/pov/import-availability"))
        .and(query_param("key", "k3y"))
        .and(body_json(serde_json::json!([
            {"equipmentId": "TGHU8888810", "referenceId": "MEDUVA654321"}
        ])))
        .respond_with(ResponseTemplate::new(200).set_body_raw(POV_ANSWER, "application/json"))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/pov/import-availability"))
        .and(query_param("key", "k3y"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("[]", "application/json"))
        .with_priority(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/pov/import-availability"))
        .respond_with(ResponseTemplate::new(401).set_body_string("Invalid API key"))
        .with_priority(3)
        .mount(&server)
        .await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(400).set_body_string("Unknown request"))
        .with_priority(10)
        .mount(&server)
        .await;
    server
}

fn port_of_virginia<'a>(base: &'a str, key: &'a str) -> [(&'a str, &'a str); 2] {
    [
        ("TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__BASE_URL", base),
        ("TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__API_KEY", key),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn terminals_list_shows_the_five_profiles_with_their_configuration() {
    let output = tidemark(
        &["terminals", "list"],
        &[
            (
                "TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__API_KEY",
                "s3cret-key",
            ),
            (
                "TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__REQUESTS_PER_MINUTE",
                "30",
            ),
        ],
    )
    .await;

    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .skip(1)
        .map(|line| line.split('\t').collect())
        .collect();
    let configured: Vec<(&str, &str)> = rows.iter().map(|row| (row[0], row[3])).collect();
    assert_eq!(
        configured,
        [
            ("apm_terminals", "no"),
            ("emodal", "no"),
            ("port_houston", "no"),
            ("port_of_virginia", "yes"),
            ("sandbox", "yes"),
        ]
    );
    assert_eq!(
        rows[3],
        [
            "port_of_virginia",
            "The Port of Virginia",
            "USORF",
            "yes",
            "port-of-virginia",
            "query api_key",
            "30/min",
            "100",
            "https://subscriptions.portofvirginia.com",
            "low",
            "-",
            "ok",
            "closed",
            "-",
            "-",
            "0/min 0/day"
        ]
    );
    assert_eq!(
        rows[2][11..],
        ["-", "-", "-", "-", "-"],
        "not configured: no state"
    );
    assert_eq!(
        rows[2][6..11],
        [
            "20000/day",
            "50",
            "unknown",
            "assumed",
            "client_id,client_secret,base_url"
        ]
    );
    assert!(!stdout.contains("s3cret-key"));
}

#[tokio::test(flavor = "multi_thread")]
async fn terminals_list_shows_a_terminal_paused_for_refused_credentials_from_the_shared_store() {
    use tidemark_domain::carriers::{CallOutcome, Limits, PollPriority};
    use tidemark_store::CarrierStore as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let refused_at =
        tidemark_domain::Clock::now(&tidemark_domain::SystemClock) - chrono::Duration::minutes(5);
    {
        let store = tidemark_store_sqlite::SqliteStore::open(&path).unwrap();
        store
            .change_carrier_state("terminal:port_of_virginia", &|state| {
                let limits = Limits {
                    per_minute: None,
                    per_day: None,
                };
                state.acquire(refused_at, limits, PollPriority::NearMilestone);
                state.record(
                    refused_at,
                    &CallOutcome::CredentialsRefused("401 Invalid API key".to_owned()),
                );
            })
            .await
            .unwrap();
    }

    let output = tidemark_on(
        &path,
        &["terminals", "list"],
        &[("TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__API_KEY", "k")],
    )
    .await;

    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let header: Vec<&str> = stdout.lines().next().unwrap().split('\t').collect();
    assert_eq!(
        header[11..],
        [
            "CREDENTIALS",
            "CIRCUIT",
            "LAST_SUCCESS",
            "LAST_ERROR",
            "CALLS"
        ]
    );
    let pov: Vec<&str> = stdout
        .lines()
        .find(|line| line.starts_with("port_of_virginia\t"))
        .unwrap()
        .split('\t')
        .collect();
    let since = refused_at.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    assert_eq!(pov[11], format!("refused since {since}"));
    assert_eq!(pov[12], "closed");
    assert_eq!(pov[13], "-", "never answered");
    assert!(pov[14].starts_with(&since), "{}", pov[14]);
    assert!(pov[14].contains("401 Invalid API key"), "{}", pov[14]);
    assert_eq!(pov[15], "0/min 1/day", "the refused call counts today");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_misspelt_terminal_variable_stops_start_up_with_its_name() {
    let output = tidemark(
        &["terminals", "list"],
        &[("TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__API_KY", "k")],
    )
    .await;

    assert!(!output.status.success());
    assert!(
        text(&output).contains("TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__API_KY"),
        "{}",
        text(&output)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn terminals_check_prints_how_the_port_of_virginia_s_answer_was_read() {
    let server = strict_port_of_virginia().await;
    let base = format!("{}/pov", server.uri());

    let output = tidemark(
        &[
            "terminals",
            "check",
            "port_of_virginia",
            "TGHU8888810",
            "MEDUVA654321",
        ],
        &port_of_virginia(&base, "k3y"),
    )
    .await;

    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in [
        "terminal: The Port of Virginia (port_of_virginia)",
        "base URL: http://127.0.0.1",
        "(your setting)",
        "asked: TGHU8888810, bill of lading MEDUVA654321",
        "answer: found",
        "available for pickup: no",
        "last free day: 2024-05-06",
        "hold: customs (hold)",
        "hold: freight (hold)",
        "location: NIT 7A",
        "\"yardBlock\": \"NIT 7A\"",
    ] {
        assert!(stdout.contains(line), "{line:?} in:\n{stdout}");
    }
    assert!(!stdout.contains("k3y"), "the key stays out: {stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn terminals_check_without_a_container_checks_the_credentials() {
    let server = strict_port_of_virginia().await;
    let base = format!("{}/pov", server.uri());

    let output = tidemark(
        &["terminals", "check", "port_of_virginia"],
        &port_of_virginia(&base, "k3y"),
    )
    .await;

    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output)
            .contains("port_of_virginia: OK, the terminal answered and accepts the credentials"),
        "{}",
        text(&output)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn terminals_check_of_a_container_the_terminal_does_not_know_fails() {
    let server = strict_port_of_virginia().await;
    let base = format!("{}/pov", server.uri());

    let output = tidemark(
        &[
            "terminals",
            "check",
            "port_of_virginia",
            "MSCU1234566",
            "OTHERBL",
        ],
        &port_of_virginia(&base, "k3y"),
    )
    .await;

    assert!(!output.status.success());
    assert!(
        text(&output).contains("port_of_virginia: the terminal does not know MSCU1234566 (yet)"),
        "{}",
        text(&output)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn terminals_check_says_the_credentials_are_refused_and_fails() {
    let server = strict_port_of_virginia().await;
    let base = format!("{}/pov", server.uri());

    let output = tidemark(
        &[
            "terminals",
            "check",
            "port_of_virginia",
            "TGHU8888810",
            "MEDUVA654321",
        ],
        &port_of_virginia(&base, "wrong"),
    )
    .await;

    assert!(!output.status.success());
    let text = text(&output);
    assert!(text.contains("failed (credentials_refused)"), "{text}");
    assert!(
        text.contains(
            "port_of_virginia: the terminal refused the credentials (the terminal answered 401"
        ),
        "{text}"
    );
    assert!(
        text.contains("check TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__API_KEY"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn terminals_check_of_an_unconfigured_terminal_says_which_keys_to_set() {
    let pov = tidemark(
        &[
            "terminals",
            "check",
            "port_of_virginia",
            "TGHU8888810",
            "MEDUVA654321",
        ],
        &[],
    )
    .await;
    let houston = tidemark(&["terminals", "check", "port_houston"], &[]).await;

    assert!(!pov.status.success());
    assert!(
        text(&pov).contains(
            "port_of_virginia (The Port of Virginia) is not configured: set \
             TIDEMARK_TERMINALS__PORT_OF_VIRGINIA__API_KEY"
        ),
        "{}",
        text(&pov)
    );
    assert!(!houston.status.success());
    assert!(
        text(&houston).contains(
            "TIDEMARK_TERMINALS__PORT_HOUSTON__CLIENT_ID, \
             TIDEMARK_TERMINALS__PORT_HOUSTON__CLIENT_SECRET, \
             TIDEMARK_TERMINALS__PORT_HOUSTON__BASE_URL"
        ),
        "{}",
        text(&houston)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sandbox_terminal_is_checked_with_no_settings() {
    let released = tidemark(
        &[
            "terminals",
            "check",
            "sandbox",
            "MSCU1234566",
            "--discharged-at",
            "2024-06-13T08:00:00Z",
        ],
        &[],
    )
    .await;
    let default_discharge = tidemark(&["terminals", "check", "sandbox", "MSCU1234566"], &[]).await;

    assert!(released.status.success(), "{}", text(&released));
    let stdout = String::from_utf8_lossy(&released.stdout);
    for line in [
        "terminal: Tidemark sandbox terminal (sandbox)",
        "asked: MSCU1234566",
        "answer: found",
        "available for pickup: yes",
        "last free day: 2024-06-17",
        "fee: demurrage",
    ] {
        assert!(stdout.contains(line), "{line:?} in:\n{stdout}");
    }
    assert!(
        default_discharge.status.success(),
        "{}",
        text(&default_discharge)
    );
    assert!(text(&default_discharge).contains("taken as discharged at"));
}
