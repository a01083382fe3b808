//! Port Houston's GetContainerAvailability, OAuth2 at the Navis cloud realm, against a
//! strict mock built from the page's wording (fixtures/port_houston/), and the legacy
//! service's HTTP 200 `LoginError`.

use std::sync::Arc;

use chrono::NaiveDate;
use serde_json::json;
use tidemark_terminals::{HoldKind, Settings, TerminalConnector, TerminalError, connect};
use wiremock::matchers::{any, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::helpers::{OnlyQuery, clock, fixture, json_fixture, many_queries, query};

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

/// A strict Port Houston: a token for any client, `answer` to GetContainerAvailability for
/// APZU4321013 and TCNU2468172 with the token and only `unitId` in the query; 400 else.
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
        .and(path("/api/GetContainerAvailability"))
        .and(query_param("unitId", "APZU4321013,TCNU2468172"))
        .and(OnlyQuery(&["unitId"]))
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
