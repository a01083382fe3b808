//! APM Terminals' Import Availability, OAuth2 client credentials, against a strict mock
//! built from the portal's display names (fixtures/apm_terminals/).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::NaiveDate;
use chrono_tz::America::Los_Angeles;
use serde_json::json;
use tidemark_terminals::{
    FeeKind, HoldKind, Settings, TerminalConnector, TerminalError, apm_terminals, connect,
};
use wiremock::matchers::{any, body_string_contains, header, method, path, query_param};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::helpers::{OnlyQuery, checked_at, clock, json_fixture, many_queries, query};

/// `Basic base64("me:s3cret")`.
const BASIC: &str = "Basic bWU6czNjcmV0";

/// A token endpoint that hands out `tok-1`, `tok-2`, … valid for an hour.
struct Tokens(AtomicUsize);

impl Respond for Tokens {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
        ResponseTemplate::new(200).set_body_json(json!({
            "access_token": format!("tok-{n}"), "token_type": "Bearer", "expires_in": 3600
        }))
    }
}

fn settings(server: &MockServer) -> Settings {
    Settings {
        client_id: Some("me".to_owned()),
        client_secret: Some("s3cret".to_owned()),
        base_url: Some(server.uri()),
        token_url: Some(format!("{}/oauth/token", server.uri())),
        facility_code: Some("uslax".to_owned()),
        ..Settings::default()
    }
}

fn connector(server: &MockServer) -> Arc<dyn TerminalConnector> {
    connect("apm_terminals", &settings(server), clock()).expect("a complete configuration")
}

/// A strict APM gateway: tokens for the client `me`/`s3cret` (expected `tokens` times), the
/// availability of WFHU5080179 and EGHU9044403 at USLAX for a bearer token `tok-1` with only
/// `assetId` and `facilityCode` in the query; 401 for other tokens, 400 for anything else.
async fn strict_gateway(tokens: u64, answer: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/oauth/token"))
        .and(header("authorization", BASIC))
        .and(body_string_contains("grant_type=client_credentials"))
        .respond_with(Tokens(AtomicUsize::new(0)))
        .expect(tokens)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/oauth/token"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({"error": "invalid_client"})))
        .with_priority(5)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/import-availability"))
        .and(query_param("assetId", "WFHU5080179,EGHU9044403"))
        .and(query_param("facilityCode", "USLAX"))
        .and(OnlyQuery(&["assetId", "facilityCode"]))
        .and(header("authorization", "Bearer tok-1"))
        .respond_with(answer)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/import-availability"))
        .respond_with(ResponseTemplate::new(401))
        .with_priority(5)
        .mount(&server)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(400))
        .with_priority(10)
        .mount(&server)
        .await;
    server
}

fn batch() -> [tidemark_terminals::ContainerQuery; 2] {
    [query("WFHU5080179", None), query("EGHU9044403", None)]
}

fn fixture_answer() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json_fixture("apm_terminals/import_availability.json"))
}

#[tokio::test]
async fn the_answer_is_read_into_holds_the_paid_through_day_demurrage_and_the_appointment() {
    let server = strict_gateway(1, fixture_answer()).await;

    let statuses = connector(&server).lookup(&batch()).await.unwrap();

    let [held, ready] = statuses.as_slice() else {
        panic!("{statuses:?}")
    };
    assert_eq!(held.availability, Some(false));
    assert_eq!(
        held.holds.iter().map(|h| h.kind).collect::<Vec<_>>(),
        [HoldKind::Freight],
        "the released customs hold is left out"
    );
    assert_eq!(held.last_free_day, NaiveDate::from_ymd_opt(2024, 6, 25));
    assert!(held.fees.is_empty(), "nothing owed is no fee");
    assert_eq!(held.location.as_deref(), Some("Y0709A"));
    assert_eq!(ready.availability, Some(true));
    assert!(ready.holds.is_empty());
    assert_eq!(ready.fees.len(), 1);
    assert_eq!(ready.fees[0].kind, FeeKind::Demurrage);
    assert_eq!(ready.fees[0].amount_cents, 114_000);
    assert_eq!(ready.fees[0].currency_code, "USD");
    assert_eq!(
        ready.appointment_at.unwrap().to_rfc3339(),
        "2024-06-22T15:00:00+00:00",
        "Los Angeles time, PDT"
    );
}

#[tokio::test]
async fn one_token_serves_two_lookups() {
    let server = strict_gateway(1, fixture_answer()).await;
    let connector = connector(&server);

    let first = connector.lookup(&batch()).await;
    let second = connector.lookup(&batch()).await;

    assert!(first.is_ok() && second.is_ok(), "{first:?} {second:?}");
    // `strict_gateway` expects one token request; the server checks it when dropped.
}

#[tokio::test]
async fn a_token_is_fetched_again_once_it_expires() {
    let server = strict_gateway(2, fixture_answer()).await;
    let clock = clock();
    let connector = connect("apm_terminals", &settings(&server), clock.clone()).unwrap();

    let first = connector.lookup(&batch()).await;
    clock.advance(chrono::Duration::seconds(3600));
    let second = connector.lookup(&batch()).await;

    assert!(first.is_ok(), "{first:?}");
    // `tok-2` is not the token the strict gateway serves data for.
    assert!(
        matches!(second, Err(TerminalError::CredentialsRefused(_))),
        "{second:?}"
    );
}

#[tokio::test]
async fn a_client_the_token_endpoint_refuses_is_refused_credentials() {
    let server = strict_gateway(0, fixture_answer()).await;
    let settings = Settings {
        client_secret: Some("wrong".to_owned()),
        ..settings(&server)
    };
    let connector = connect("apm_terminals", &settings, clock()).unwrap();

    let error = connector.lookup(&batch()).await.unwrap_err();

    assert!(
        matches!(error, TerminalError::CredentialsRefused(_)),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_refused_token_is_dropped_and_the_next_lookup_asks_for_a_new_one() {
    // Only `tok-1` is accepted, so the second token's lookup is refused too; what matters
    // is that a second token was asked for.
    let server = strict_gateway(2, ResponseTemplate::new(403)).await;
    let connector = connector(&server);

    let first = connector.lookup(&batch()).await.unwrap_err();
    let second = connector.lookup(&batch()).await.unwrap_err();

    assert!(
        matches!(first, TerminalError::CredentialsRefused(_)),
        "{first:?}"
    );
    assert!(
        matches!(second, TerminalError::CredentialsRefused(_)),
        "{second:?}"
    );
}

#[tokio::test]
async fn a_batch_above_the_configured_size_is_refused_without_a_call() {
    let server = strict_gateway(0, fixture_answer()).await;
    let settings = Settings {
        batch_size: Some(2),
        ..settings(&server)
    };
    let connector = connect("apm_terminals", &settings, clock()).unwrap();

    let error = connector.lookup(&many_queries(3)).await.unwrap_err();

    assert_eq!(error, TerminalError::BatchTooLarge { size: 3, limit: 2 });
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_item_without_a_container_number_is_drift() {
    let server = strict_gateway(
        1,
        ResponseTemplate::new(200).set_body_json(json!({"containers": [{"status": "Yard"}]})),
    )
    .await;

    let error = connector(&server).lookup(&batch()).await.unwrap_err();

    assert!(
        matches!(&error, TerminalError::Drift(why) if why.contains("Yard")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_connector_without_a_facility_is_a_configuration_error() {
    let server = MockServer::start().await;
    let settings = Settings {
        facility_code: None,
        ..settings(&server)
    };

    let error = connect("apm_terminals", &settings, clock()).err().unwrap();

    assert!(error.to_string().contains("facility_code"), "{error}");
}

// The documented keys (fixtures/apm_terminals/import_availability_documented.json, values
// made up). What a trucker reads: WFHU5080179 not ready for delivery, held for freight and
// customs, storage paid through 2024-06-25, nothing owed, no appointment, not out, at
// Y0709A; EGHU9044403 ready, no holds ("NONE"), paid through 2024-06-19, 1,140.00 USD
// demurrage owed, appointment 2024-06-22 08:00 and out of the gate 09:41 the same day, Los
// Angeles time (PDT, UTC-7), no yard location any more.

#[test]
fn the_documented_keys_are_read_into_availability_holds_lfd_fees_appointment_and_gate_out() {
    let answer = json_fixture("apm_terminals/import_availability_documented.json");
    let batch = [query("WFHU5080179", None), query("EGHU9044403", None)];

    let statuses = apm_terminals::parse(&answer, &batch, checked_at(), Los_Angeles, "USD").unwrap();

    let [held, gone] = statuses.as_slice() else {
        panic!("{statuses:?}")
    };
    assert_eq!(held.availability, Some(false));
    assert_eq!(
        held.holds.iter().map(|h| h.kind).collect::<Vec<_>>(),
        [HoldKind::Freight, HoldKind::Customs]
    );
    assert_eq!(held.last_free_day, NaiveDate::from_ymd_opt(2024, 6, 25));
    assert!(held.fees.is_empty(), "nothing owed is no fee");
    assert_eq!(held.appointment_at, None);
    assert_eq!(held.full_out_at, None);
    assert_eq!(held.location.as_deref(), Some("Y0709A"));
    assert_eq!(gone.availability, Some(true));
    assert!(gone.holds.is_empty(), "NONE is no hold: {:?}", gone.holds);
    assert_eq!(gone.last_free_day, NaiveDate::from_ymd_opt(2024, 6, 19));
    let [fee] = gone.fees.as_slice() else {
        panic!("{:?}", gone.fees)
    };
    assert_eq!(
        (fee.kind, fee.amount_cents, fee.currency_code.as_str()),
        (FeeKind::Demurrage, 114_000, "USD")
    );
    assert_eq!(
        gone.appointment_at.map(|at| at.to_rfc3339()).as_deref(),
        Some("2024-06-22T15:00:00+00:00")
    );
    assert_eq!(
        gone.full_out_at.map(|at| at.to_rfc3339()).as_deref(),
        Some("2024-06-22T16:41:00+00:00")
    );
    assert_eq!(gone.location, None);
}

#[test]
fn one_container_answered_alone_is_read_as_a_list_of_one() {
    let answer = json!({"containerId": "WFHU5080179", "readyForDelivery": "Y"});
    let batch = [query("WFHU5080179", None)];

    let statuses = apm_terminals::parse(&answer, &batch, checked_at(), Los_Angeles, "USD").unwrap();

    assert_eq!(statuses.len(), 1);
    assert_eq!(statuses[0].availability, Some(true));
}
