//! eModal / CargoSprint SprintPass Pro, trace-only orchestrations with `X-API-Key`, against
//! a strict mock built from the docs' examples (fixtures/emodal/).

use std::sync::Arc;

use chrono::NaiveDate;
use serde_json::json;
use tidemark_terminals::{
    FeeKind, HoldKind, HoldStatus, Settings, TerminalConnector, TerminalError, connect,
};
use wiremock::matchers::{any, body_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::helpers::{OnlyQuery, clock, json_fixture, query};

const STATUS_PATH: &str = "/v1/orchestrations/trade-type/I/unit-nbr/MAEU9000014";

fn settings(server: &MockServer, api_key: &str, port: Option<&str>) -> Settings {
    Settings {
        api_key: Some(api_key.to_owned()),
        base_url: Some(server.uri()),
        facility_code: port.map(str::to_owned),
        time_zone: Some("America/Los_Angeles".to_owned()),
        ..Settings::default()
    }
}

fn connector(server: &MockServer) -> Arc<dyn TerminalConnector> {
    connect("emodal", &settings(server, "k3y", Some("PORTA")), clock())
        .expect("a complete configuration")
}

/// A strict SprintPass Pro: `status` for MAEU9000014's unit status with the key `k3y` and no
/// query; 401 with another key; 400 for anything else not mounted by the test.
async fn strict_sprintpass(status: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(STATUS_PATH))
        .and(header("x-api-key", "k3y"))
        .and(OnlyQuery(&[]))
        .respond_with(status)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(STATUS_PATH))
        .respond_with(
            ResponseTemplate::new(401).set_body_json(json!({"message": "Invalid API key"})),
        )
        .with_priority(2)
        .mount(&server)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(400))
        .with_priority(10)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn the_unit_status_is_read_into_holds_fees_and_the_last_free_day() {
    let server = strict_sprintpass(
        ResponseTemplate::new(200).set_body_json(json_fixture("emodal/unit_status.json")),
    )
    .await;

    let statuses = connector(&server)
        .lookup(&[query("MAEU9000014", None)])
        .await
        .unwrap();

    let [status] = statuses.as_slice() else {
        panic!("{statuses:?}")
    };
    assert_eq!(status.availability, Some(false), "DN: not ready for pickup");
    let holds: Vec<(HoldKind, HoldStatus, &str)> = status
        .holds
        .iter()
        .map(|h| (h.kind, h.status, h.description.as_str()))
        .collect();
    assert_eq!(
        holds,
        [
            (
                HoldKind::Customs,
                HoldStatus::Hold,
                "PQ - Has a Customs Hold"
            ),
            (HoldKind::Tmf, HoldStatus::Hold, "TM - TMF Hold"),
        ],
        "the released FEE/DWELL hold is left out"
    );
    let fees: Vec<(FeeKind, i64)> = status
        .fees
        .iter()
        .map(|f| (f.kind, f.amount_cents))
        .collect();
    assert_eq!(
        fees,
        [
            (FeeKind::ExtendedDwellTime, 7_000),
            (FeeKind::Demurrage, 28_500)
        ]
    );
    assert_eq!(status.last_free_day, NaiveDate::from_ymd_opt(2022, 10, 17));
    assert_eq!(
        status.raw["unit_status"]["lfdinfo"]["good_through_date"],
        "2022-10-20"
    );
}

#[tokio::test]
async fn a_container_without_an_orchestration_gets_a_trace_only_one_and_is_absent() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(STATUS_PATH))
        .and(header("x-api-key", "k3y"))
        .respond_with(ResponseTemplate::new(404))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/orchestrations"))
        .and(header("x-api-key", "k3y"))
        .and(OnlyQuery(&[]))
        .and(body_json(json!({"order": [{
            "trade_type": "I",
            "billoflading": "MAEU123456789",
            "unit": {"unit_nbr": "MAEU9000014"},
            "locations": [{"port_cd": "PORTA"}],
        }]})))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json_fixture("emodal/orchestration_created.json")),
        )
        .expect(1)
        .mount(&server)
        .await;

    let statuses = connector(&server)
        .lookup(&[query("MAEU9000014", Some("MAEU123456789"))])
        .await;

    assert_eq!(statuses, Ok(vec![]));
}

#[tokio::test]
async fn an_orchestration_that_has_not_found_the_container_yet_is_absent() {
    let server = strict_sprintpass(ResponseTemplate::new(200).set_body_json(json!({
        "orchestration_status": {"status": "ACTIVE", "messages": []},
        "unit_status": {}
    })))
    .await;

    let statuses = connector(&server)
        .lookup(&[query("MAEU9000014", None)])
        .await;

    assert_eq!(statuses, Ok(vec![]));
}

#[tokio::test]
async fn a_wrong_api_key_is_refused_credentials() {
    let server = strict_sprintpass(ResponseTemplate::new(200)).await;
    let connector = connect("emodal", &settings(&server, "wrong", None), clock()).unwrap();

    let error = connector
        .lookup(&[query("MAEU9000014", None)])
        .await
        .unwrap_err();

    assert!(
        matches!(error, TerminalError::CredentialsRefused(_)),
        "{error:?}"
    );
}

#[tokio::test]
async fn two_containers_in_one_lookup_are_refused_without_a_call() {
    let server = strict_sprintpass(ResponseTemplate::new(200)).await;

    let error = connector(&server)
        .lookup(&[query("MAEU9000014", None), query("MSCU1234566", None)])
        .await
        .unwrap_err();

    assert_eq!(error, TerminalError::BatchTooLarge { size: 2, limit: 1 });
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_status_of_another_shape_is_drift() {
    let server = strict_sprintpass(ResponseTemplate::new(200).set_body_json(json!([
        {"unit_nbr": "MAEU9000014", "state": "YARD"}
    ])))
    .await;

    let error = connector(&server)
        .lookup(&[query("MAEU9000014", None)])
        .await
        .unwrap_err();

    assert!(
        matches!(&error, TerminalError::Drift(why) if why.contains("YARD")),
        "{error:?}"
    );
}

/// A SprintPass Pro without an orchestration for MAEU9000014, whose `POST /v1/orchestrations`
/// answers `created`.
async fn without_an_orchestration(created: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(STATUS_PATH))
        .respond_with(ResponseTemplate::new(404))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/orchestrations"))
        .and(header("x-api-key", "k3y"))
        .respond_with(created)
        .expect(1)
        .mount(&server)
        .await;
    server
}

// The docs (https://developer.cargosprint.com/sprintpasspro/basic_examples): "HTTP 202 will
// be returned if at least one orchestration is accepted … HTTP 412 will be returned if all
// orchestrations in the request fail."

#[tokio::test]
async fn an_orchestration_accepted_with_202_is_started_and_the_container_is_absent_for_now() {
    let server = without_an_orchestration(
        ResponseTemplate::new(202).set_body_json(json_fixture("emodal/orchestration_created.json")),
    )
    .await;

    let statuses = connector(&server)
        .lookup(&[query("MAEU9000014", None)])
        .await;

    assert_eq!(statuses, Ok(vec![]));
}

#[tokio::test]
async fn an_orchestration_refused_with_412_is_drift_that_keeps_the_terminal_s_messages() {
    let server = without_an_orchestration(ResponseTemplate::new(412).set_body_json(json!({
        "data": [{"success": false, "unit_nbr": "MAEU9000014", "messages": [
            {"message_cd": "20001", "message_txt": "Invalid port code", "message_severity_cd": "E"}
        ]}]
    })))
    .await;

    let error = connector(&server)
        .lookup(&[query("MAEU9000014", None)])
        .await
        .unwrap_err();

    assert!(
        matches!(&error, TerminalError::Drift(why) if why.contains("Invalid port code")),
        "{error:?}"
    );
}
