//! Port Houston's GetContainerAvailability (Navis EVP's unit inventory), OAuth2 at the Navis
//! cloud realm, against a strict mock built from public clients' requests
//! (fixtures/port_houston/), and the legacy service's HTTP 200 `LoginError`.

use std::sync::Arc;

use chrono::NaiveDate;
use chrono_tz::America::Chicago;
use serde_json::json;
use tidemark_terminals::{
    HoldKind, Settings, TerminalConnector, TerminalError, connect, port_houston,
};
use wiremock::matchers::{any, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::helpers::{OnlyQuery, checked_at, clock, fixture, json_fixture, many_queries, query};

fn connector(server: &MockServer) -> Arc<dyn TerminalConnector> {
    let settings = Settings {
        client_id: Some("me".to_owned()),
        client_secret: Some("s3cret".to_owned()),
        base_url: Some(format!("{}/api", server.uri())),
        token_url: Some(format!("{}/realms/phaprod/token", server.uri())),
        ..Settings::default()
    };
    connect("port_houston", &settings, clock()).expect("a complete configuration")
}

/// A strict Port Houston: a token for any client, `answer` to the unit inventory asked for
/// APZU4321013 and TCNU2468172 with the token, operator POHA and fields; 400 else.
async fn strict_port(answer: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/realms/phaprod/token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"access_token": "nav-1", "token_type": "Bearer", "expires_in": 300}),
        ))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/inventory/units"))
        .and(query_param("operator", "POHA"))
        .and(query_param(
            "predicate",
            "unitId in (APZU4321013,TCNU2468172)",
        ))
        .and(OnlyQuery(&["operator", "predicate", "fields"]))
        .and(header("authorization", "Bearer nav-1"))
        .respond_with(answer)
        .with_priority(1)
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
    [query("APZU4321013", None), query("TCNU2468172", None)]
}

#[tokio::test]
async fn a_login_error_at_http_200_is_refused_credentials_not_data() {
    let server = strict_port(
        ResponseTemplate::new(200)
            .insert_header("content-type", "text/xml; charset=utf-8")
            .set_body_string(fixture("port_houston/login_error.xml")),
    )
    .await;

    let error = connector(&server).lookup(&batch()).await.unwrap_err();

    assert!(
        matches!(&error, TerminalError::CredentialsRefused(why) if why.contains("LoginError")),
        "{error:?}"
    );
}

#[tokio::test]
async fn other_xml_is_drift() {
    let server = strict_port(
        ResponseTemplate::new(200)
            .set_body_string("<DataSet><Table><Unit>x</Unit></Table></DataSet>"),
    )
    .await;

    let error = connector(&server).lookup(&batch()).await.unwrap_err();

    assert!(matches!(error, TerminalError::Drift(_)), "{error:?}");
}

#[tokio::test]
async fn road_impediments_are_read_as_holds_beside_availability_and_the_lfd() {
    let server = strict_port(
        ResponseTemplate::new(200)
            .set_body_json(json_fixture("port_houston/container_availability.json")),
    )
    .await;

    let statuses = connector(&server).lookup(&batch()).await.unwrap();

    let [free, held] = statuses.as_slice() else {
        panic!("{statuses:?}")
    };
    assert_eq!(free.availability, Some(true));
    assert!(free.holds.is_empty());
    assert_eq!(free.last_free_day, NaiveDate::from_ymd_opt(2024, 3, 8));
    assert_eq!(free.location.as_deref(), Some("BCT Y-A12-03"));
    assert_eq!(held.availability, Some(false));
    assert_eq!(
        held.holds.iter().map(|h| h.kind).collect::<Vec<_>>(),
        [HoldKind::Vacis, HoldKind::Tmf, HoldKind::Freight]
    );
    assert_eq!(held.holds[0].description, "CUSTOMS - EXAM VACIS");
    assert_eq!(held.last_free_day, None);
}

#[tokio::test]
async fn a_server_error_is_unavailable() {
    let server = strict_port(ResponseTemplate::new(503)).await;

    let error = connector(&server).lookup(&batch()).await.unwrap_err();

    assert!(matches!(error, TerminalError::Unavailable(_)), "{error:?}");
}

#[tokio::test]
async fn more_than_fifty_containers_are_refused_without_a_call() {
    let server = strict_port(ResponseTemplate::new(200)).await;

    let error = connector(&server)
        .lookup(&many_queries(51))
        .await
        .unwrap_err();

    assert_eq!(
        error,
        TerminalError::BatchTooLarge {
            size: 51,
            limit: 50
        }
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

// Navis EVP's unit inventory as public clients ask it (fixtures/port_houston/units.json,
// values made up). What a trucker reads: APZU4321013 in the yard and not stopped for road,
// so available, no holds, last free day 2024-03-08 (the line's 2024-03-11 is another date),
// at Y-BCT-A12-03; TCNU2468172 in the yard but stopped for road: not available, a customs
// exam (VACIS) and a line (freight) hold, no last free day yet, at Y-BPT-C04-11;
// CMAU1112226 retired (gone): not available, out of the gate 2024-03-05 14:32 Houston time
// (CST, UTC-6), last free day 2024-03-06. No fees and no appointments are in these fields.

#[test]
fn units_are_read_from_transit_state_road_stops_impediments_and_the_last_free_day() {
    let answer = json_fixture("port_houston/units.json");
    let batch = [
        query("APZU4321013", None),
        query("TCNU2468172", None),
        query("CMAU1112226", None),
    ];

    let statuses = port_houston::parse(&answer, &batch, checked_at(), Chicago).unwrap();

    let [free, held, gone] = statuses.as_slice() else {
        panic!("{statuses:?}")
    };
    assert_eq!(free.availability, Some(true));
    assert!(free.holds.is_empty());
    assert_eq!(free.last_free_day, NaiveDate::from_ymd_opt(2024, 3, 8));
    assert_eq!(free.location.as_deref(), Some("Y-BCT-A12-03"));
    assert_eq!(free.full_out_at, None);
    assert_eq!(held.availability, Some(false));
    assert_eq!(
        held.holds.iter().map(|h| h.kind).collect::<Vec<_>>(),
        [HoldKind::Vacis, HoldKind::Freight]
    );
    assert_eq!(held.holds[0].description, "CUSTOMS - EXAM VACIS");
    assert_eq!(held.last_free_day, None);
    assert_eq!(held.location.as_deref(), Some("Y-BPT-C04-11"));
    assert_eq!(gone.availability, Some(false));
    assert_eq!(
        gone.full_out_at.map(|at| at.to_rfc3339()).as_deref(),
        Some("2024-03-05T20:32:00+00:00")
    );
    assert_eq!(gone.last_free_day, NaiveDate::from_ymd_opt(2024, 3, 6));
    assert!(
        statuses
            .iter()
            .all(|s| s.fees.is_empty() && s.appointment_at.is_none())
    );
}

#[tokio::test]
async fn one_container_is_asked_of_the_unit_inventory_by_predicate_with_operator_and_facility() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/realms/phaprod/token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"access_token": "nav-1", "token_type": "Bearer", "expires_in": 300}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/inventory/units"))
        .and(query_param("operator", "POHA"))
        .and(query_param("facility", "BCT"))
        .and(query_param("predicate", "unitId = APZU4321013"))
        .and(OnlyQuery(&["operator", "facility", "predicate", "fields"]))
        .and(header("authorization", "Bearer nav-1"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json_fixture("port_houston/units.json")),
        )
        .expect(1)
        .mount(&server)
        .await;
    let settings = Settings {
        client_id: Some("me".to_owned()),
        client_secret: Some("s3cret".to_owned()),
        base_url: Some(format!("{}/api", server.uri())),
        token_url: Some(format!("{}/realms/phaprod/token", server.uri())),
        facility_code: Some("bct".to_owned()),
        ..Settings::default()
    };
    let connector = connect("port_houston", &settings, clock()).unwrap();

    let statuses = connector
        .lookup(&[query("APZU4321013", None)])
        .await
        .unwrap();

    assert_eq!(statuses.len(), 1, "units not asked about are left out");
    assert_eq!(statuses[0].availability, Some(true));
    let asked = &server.received_requests().await.unwrap()[1];
    let fields = asked
        .url
        .query_pairs()
        .find(|(name, _)| name == "fields")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    for field in [
        "unitId",
        "transitState",
        "stoppedRoad",
        "impediments",
        "lastFreeDay",
    ] {
        assert!(fields.split(',').any(|f| f == field), "{field} in {fields}");
    }
}

#[test]
fn a_unit_stopped_for_road_without_a_transit_state_is_not_available() {
    let answer =
        json!({"content": [{"unitId": "APZU4321013", "stopFlags": {"stoppedRoad": "true"}}]});

    let statuses = port_houston::parse(
        &answer,
        &[query("APZU4321013", None)],
        checked_at(),
        Chicago,
    )
    .unwrap();

    assert_eq!(statuses[0].availability, Some(false));
}

#[test]
fn a_unit_not_yet_discharged_is_not_available_and_an_unknown_state_is_unsaid() {
    let answer = json!([
        {"unitId": "APZU4321013", "transitState": "S20_INBOUND"},
        {"unitId": "TCNU2468172", "transitState": "S70_SOMETHING_NEW"}
    ]);
    let batch = [query("APZU4321013", None), query("TCNU2468172", None)];

    let statuses = port_houston::parse(&answer, &batch, checked_at(), Chicago).unwrap();

    assert_eq!(statuses[0].availability, Some(false));
    assert_eq!(statuses[1].availability, None);
}

#[test]
fn a_time_sent_as_milliseconds_since_1970_is_read_as_that_instant() {
    let answer = json!([{"unitId": "CMAU1112226", "timeOut": 1_709_670_720_000_i64}]);

    let statuses = port_houston::parse(
        &answer,
        &[query("CMAU1112226", None)],
        checked_at(),
        Chicago,
    )
    .unwrap();

    assert_eq!(
        statuses[0].full_out_at.map(|at| at.to_rfc3339()).as_deref(),
        Some("2024-03-05T20:32:00+00:00")
    );
}
