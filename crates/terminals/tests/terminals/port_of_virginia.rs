//! The Port of Virginia's Import Availability API, against a strict mock built from the
//! docs' field list (fixtures/port_of_virginia/).

use std::sync::Arc;
use std::time::Duration;

use chrono::NaiveDate;
use chrono_tz::America::New_York;
use serde_json::json;
use tidemark_terminals::{
    HoldKind, HoldStatus, Settings, TerminalConnector, TerminalError, connect, port_of_virginia,
};
use wiremock::matchers::{body_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::helpers::{OnlyQuery, checked_at, clock, json_fixture, many_queries, query};

fn connector(server: &MockServer, base_path: &str) -> Arc<dyn TerminalConnector> {
    let settings = Settings {
        api_key: Some("k3y".to_owned()),
        base_url: Some(format!("{}{base_path}", server.uri())),
        ..Settings::default()
    };
    connect("port_of_virginia", &settings, clock()).expect("a complete configuration")
}

/// A strict Port of Virginia: the bulk call with key `k3y` and nothing else in the query
/// answers `answer`; another key is 401; any other request is 400.
async fn strict_port(answer: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/import-availability"))
        .and(query_param("key", "k3y"))
        .and(OnlyQuery(&["key"]))
        .and(header("content-type", "application/json"))
        .respond_with(answer)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/import-availability"))
        .and(OnlyQuery(&["key"]))
        .respond_with(ResponseTemplate::new(401).set_body_string("Invalid API key"))
        .with_priority(2)
        .mount(&server)
        .await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(400).set_body_string("Unknown request"))
        .with_priority(10)
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn one_bulk_call_sends_each_container_with_its_bill_of_lading_and_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/import-availability"))
        .and(query_param("key", "k3y"))
        .and(OnlyQuery(&["key"]))
        .and(body_json(json!([
            {"equipmentId": "MSCU1234566", "referenceId": "MEDUVA123456"},
            {"equipmentId": "TGHU8888810", "referenceId": "MEDUVA654321"},
        ])))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!([])))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(400))
        .with_priority(10)
        .mount(&server)
        .await;
    let batch = [
        query("MSCU1234566", Some("MEDUVA123456")),
        query("TGHU8888810", Some("MEDUVA654321")),
    ];

    let statuses = connector(&server, "").lookup(&batch).await;

    assert_eq!(statuses, Ok(vec![]));
}

#[tokio::test]
async fn the_answer_is_read_into_availability_holds_lfd_and_times() {
    let server = strict_port(
        ResponseTemplate::new(200)
            .set_body_json(json_fixture("port_of_virginia/import_availability.json")),
    )
    .await;
    let batch = [
        query("MSCU1234566", Some("MEDUVA123456")),
        query("TGHU8888810", Some("MEDUVA654321")),
        query("CMAU1112226", Some("CMDUVA000111")),
        query("HLXU5555507", Some("HLCUVA999999")),
    ];

    let statuses = connector(&server, "").lookup(&batch).await.unwrap();

    assert_eq!(statuses.len(), 3, "the unknown container is absent");
    let available = &statuses[0];
    assert_eq!(available.container_number.as_str(), "MSCU1234566");
    assert_eq!(available.availability, Some(true));
    assert_eq!(available.last_free_day, NaiveDate::from_ymd_opt(2024, 5, 3));
    assert_eq!(available.location.as_deref(), Some("VIG 2C"));
    assert!(available.holds.is_empty());
    assert_eq!(available.raw["shipmentAction"], "AV");
    let held = &statuses[1];
    assert_eq!(held.availability, Some(false));
    let holds: Vec<(HoldKind, HoldStatus)> =
        held.holds.iter().map(|h| (h.kind, h.status)).collect();
    assert_eq!(
        holds,
        [
            (HoldKind::Customs, HoldStatus::Hold),
            (HoldKind::Freight, HoldStatus::Hold)
        ],
        "the released USDA hold is left out"
    );
    assert_eq!(held.holds[0].description, "CUSTOMS - CBP HOLD");
    let gone = &statuses[2];
    assert_eq!(
        gone.full_out_at.unwrap().to_rfc3339(),
        "2024-04-27T18:05:00+00:00",
        "Norfolk's local time, EDT"
    );
    assert_eq!(
        gone.empty_returned_at.unwrap().to_rfc3339(),
        "2024-05-01T13:30:00+00:00"
    );
}

#[tokio::test]
async fn a_wrong_key_is_refused_credentials() {
    let server = strict_port(ResponseTemplate::new(200).set_body_json(json!([]))).await;
    let settings = Settings {
        api_key: Some("wrong".to_owned()),
        base_url: Some(server.uri()),
        ..Settings::default()
    };
    let connector = connect("port_of_virginia", &settings, clock()).unwrap();

    let error = connector
        .lookup(&[query("MSCU1234566", Some("MEDUVA123456"))])
        .await
        .unwrap_err();

    assert!(
        matches!(&error, TerminalError::CredentialsRefused(why) if why.contains("401")),
        "{error:?}"
    );
}

#[tokio::test]
async fn the_base_url_s_own_query_is_not_sent_on() {
    let server = strict_port(ResponseTemplate::new(200).set_body_json(json!([]))).await;

    let answer = connector(&server, "/?debug=1")
        .lookup(&[query("MSCU1234566", Some("MEDUVA123456"))])
        .await;

    assert_eq!(answer, Ok(vec![]));
}

#[tokio::test]
async fn more_than_a_hundred_containers_are_refused_without_a_call() {
    let server = strict_port(ResponseTemplate::new(200).set_body_json(json!([]))).await;

    let error = connector(&server, "")
        .lookup(&many_queries(101))
        .await
        .unwrap_err();

    assert_eq!(
        error,
        TerminalError::BatchTooLarge {
            size: 101,
            limit: 100
        }
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_container_without_its_bill_of_lading_is_refused_without_a_call() {
    let server = strict_port(ResponseTemplate::new(200).set_body_json(json!([]))).await;

    let error = connector(&server, "")
        .lookup(&[query("MSCU1234566", None)])
        .await
        .unwrap_err();

    assert!(
        matches!(&error, TerminalError::MissingBillOfLading(c) if c.as_str() == "MSCU1234566"),
        "{error:?}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_answer_of_another_shape_is_drift_and_keeps_the_answer() {
    let server = strict_port(
        ResponseTemplate::new(200).set_body_json(json!({"message": "Service moved to v2"})),
    )
    .await;

    let error = connector(&server, "")
        .lookup(&[query("MSCU1234566", Some("MEDUVA123456"))])
        .await
        .unwrap_err();

    assert!(
        matches!(&error, TerminalError::Drift(why) if why.contains("Service moved to v2")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_free_time_that_is_not_a_date_is_drift() {
    let server = strict_port(ResponseTemplate::new(200).set_body_json(json!([
        {"equipmentId": "MSCU1234566", "shipmentStatus": "Available", "freeTimeExpiration": "soon"}
    ])))
    .await;

    let error = connector(&server, "")
        .lookup(&[query("MSCU1234566", Some("MEDUVA123456"))])
        .await
        .unwrap_err();

    assert!(
        matches!(&error, TerminalError::Drift(why) if why.contains("soon")),
        "{error:?}"
    );
}

#[tokio::test]
async fn too_many_requests_is_rate_limited_with_retry_after() {
    let server = strict_port(ResponseTemplate::new(429).insert_header("Retry-After", "120")).await;

    let error = connector(&server, "")
        .lookup(&[query("MSCU1234566", Some("MEDUVA123456"))])
        .await
        .unwrap_err();

    assert_eq!(
        error,
        TerminalError::RateLimited {
            retry_after: Some(Duration::from_secs(120))
        }
    );
}

#[tokio::test]
async fn a_transport_failure_never_shows_the_key() {
    let settings = Settings {
        api_key: Some("s3cret-key".to_owned()),
        base_url: Some("http://127.0.0.1:9".to_owned()),
        ..Settings::default()
    };
    let connector = connect("port_of_virginia", &settings, clock()).unwrap();

    let error = connector
        .lookup(&[query("MSCU1234566", Some("MEDUVA123456"))])
        .await
        .unwrap_err();

    assert!(matches!(error, TerminalError::Unavailable(_)), "{error:?}");
    assert!(!error.to_string().contains("s3cret-key"), "{error}");
}

// The docs' own examples (fixtures/port_of_virginia/import_availability_get.json, copied;
// import_availability_bulk.json, the docs' bulk shape around it). What a trucker reads from
// the example object: available (shipmentStatus "Available"; the UV action does not
// overrule it), no holds, no fees (the API has none), no last free day (null), no
// appointment, no yard block (null); out of the gate 2022-02-15 18:16:13.973 and the empty
// back 2022-02-17 17:46:38.769, Norfolk time (EST, UTC-5).

#[test]
fn the_docs_single_lookup_answer_reads_as_available_gone_out_and_empty_returned() {
    let answer = json_fixture("port_of_virginia/import_availability_get.json");
    let batch = [query("GLDU1234560", Some("AAA123999"))];

    let statuses = port_of_virginia::parse(&answer, &batch, checked_at(), New_York).unwrap();

    let [status] = statuses.as_slice() else {
        panic!("{statuses:?}")
    };
    assert_eq!(status.container_number.as_str(), "GLDU1234560");
    assert_eq!(status.availability, Some(true));
    assert!(status.holds.is_empty());
    assert!(status.fees.is_empty());
    assert_eq!(status.last_free_day, None);
    assert_eq!(status.appointment_at, None);
    assert_eq!(status.location, None);
    assert_eq!(
        status.full_out_at.map(|at| at.to_rfc3339()).as_deref(),
        Some("2022-02-15T23:16:13.973+00:00")
    );
    assert_eq!(
        status
            .empty_returned_at
            .map(|at| at.to_rfc3339())
            .as_deref(),
        Some("2022-02-17T22:46:38.769+00:00")
    );
    assert_eq!(status.raw["terminal"], "NIT");
}

#[tokio::test]
async fn the_bulk_answer_is_read_from_each_item_s_data_and_an_unpopulated_item_is_absent() {
    let server = strict_port(ResponseTemplate::new(200).set_body_json(json_fixture(
        "port_of_virginia/import_availability_bulk.json",
    )))
    .await;
    let batch = [
        query("GLDU1234560", Some("AAA123999")),
        query("TGHU8888810", Some("MEDUVA654321")),
    ];

    let statuses = connector(&server, "").lookup(&batch).await.unwrap();

    let [status] = statuses.as_slice() else {
        panic!("{statuses:?}")
    };
    assert_eq!(status.container_number.as_str(), "GLDU1234560");
    assert_eq!(status.availability, Some(true));
    assert!(status.holds.is_empty());
    assert_eq!(status.last_free_day, None);
    assert_eq!(
        status.full_out_at.map(|at| at.to_rfc3339()).as_deref(),
        Some("2022-02-15T23:16:13.973+00:00")
    );
    assert_eq!(
        status.raw["referenceId"], "AAA123999",
        "the whole item is kept"
    );
}

#[test]
fn a_bulk_item_s_holds_and_free_time_are_read_inside_its_data() {
    let answer = json!([{
        "equipmentId": "TGHU8888810",
        "referenceId": "MEDUVA654321",
        "data": {
            "container": "TGHU8888810",
            "shipmentStatus": "Not Available",
            "holds": [{"type": "CUSTOMS", "description": "CBP HOLD", "status": "HOLD"}],
            "freeTimeExpiration": "2024-05-06T00:00:00"
        },
        "message": null
    }]);
    let batch = [query("TGHU8888810", Some("MEDUVA654321"))];

    let statuses = port_of_virginia::parse(&answer, &batch, checked_at(), New_York).unwrap();

    assert_eq!(statuses[0].availability, Some(false));
    assert_eq!(statuses[0].holds[0].kind, HoldKind::Customs);
    assert_eq!(
        statuses[0].last_free_day,
        NaiveDate::from_ymd_opt(2024, 5, 6)
    );
}

#[test]
fn an_item_whose_equipment_id_is_no_container_number_is_drift() {
    let answer = json!([{"equipmentId": "N/A", "data": {"shipmentStatus": "Available"}}]);
    let batch = [query("TGHU8888810", Some("MEDUVA654321"))];

    let error = port_of_virginia::parse(&answer, &batch, checked_at(), New_York).unwrap_err();

    assert!(matches!(error, TerminalError::Drift(_)), "{error:?}");
}
