//! `/v2/tracking_requests`: validation as Terminal49 does it, listing, filters, editing,
//! idempotent creation.

use std::collections::BTreeSet;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    a_tracking_request_is_accepted_as_pending,
    a_tracking_request_has_the_attributes_terminal49_clients_read,
    every_validation_error_is_reported_at_once,
    a_short_request_number_is_too_short,
    an_unknown_scac_is_not_recognized,
    a_container_number_must_pass_its_check_digit,
    a_line_that_cannot_track_a_request_type_refuses_it,
    a_second_active_request_for_the_same_number_is_a_duplicate,
    a_tracking_request_of_another_account_is_not_found,
    tracking_requests_are_listed_newest_first,
    tracking_requests_are_filtered_by_status_scac_and_search,
    tracking_requests_are_filtered_by_creation_time,
    an_unknown_status_filter_is_a_400,
    a_malformed_time_filter_is_a_400,
    ref_numbers_can_be_changed,
    other_attributes_cannot_be_changed,
    a_retry_with_the_same_idempotency_key_replays_the_first_response,
    an_idempotency_key_reused_for_another_body_is_refused,
    creating_tracking_requests_has_its_own_rate_limit_bucket,
);

fn body(request_type: &str, number: &str, scac: &str) -> Value {
    json!({"data": {"type": "tracking_request", "attributes": {
        "request_type": request_type, "request_number": number, "scac": scac,
        "ref_numbers": ["PO-1001"], "shipment_tags": ["urgent"]
    }}})
}

async fn create(app: &TestApp, request_type: &str, number: &str, scac: &str) -> Value {
    let response = app
        .post_json("/v2/tracking_requests", &body(request_type, number, scac))
        .await;
    assert_eq!(
        response.status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    response.json()
}

fn codes(response: &crate::helpers::TestResponse) -> BTreeSet<(String, String)> {
    response.json()["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|error| {
            (
                error["source"]["pointer"].as_str().unwrap_or("").to_owned(),
                error["code"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn pair(pointer: &str, code: &str) -> (String, String) {
    (format!("/data/attributes/{pointer}"), code.to_owned())
}

async fn a_tracking_request_is_accepted_as_pending(app: TestApp) {
    let created = create(&app, "bill_of_lading", "maeu123456789", "maeu").await;

    let data = &created["data"];
    assert_eq!(data["type"], json!("tracking_request"));
    assert_eq!(data["attributes"]["status"], json!("pending"));
    // A bill of lading is kept as written: some lines' references are case-sensitive.
    assert_eq!(data["attributes"]["request_number"], json!("maeu123456789"));
    assert_eq!(data["attributes"]["scac"], json!("MAEU"));
    assert_eq!(data["attributes"]["ref_numbers"], json!(["PO-1001"]));
    assert_eq!(data["attributes"]["shipment_tags"], json!(["urgent"]));
    assert_eq!(data["attributes"]["failed_reason"], Value::Null);
    assert_eq!(
        data["relationships"]["tracked_object"],
        json!({"data": null})
    );
    let id = data["id"].as_str().unwrap();
    assert_eq!(
        data["links"]["self"],
        json!(format!("http://tidemark.test/v2/tracking_requests/{id}"))
    );
    let fetched = app.get(&format!("/v2/tracking_requests/{id}")).await;
    assert_eq!(fetched.status, StatusCode::OK);
    assert_eq!(fetched.json()["data"], created["data"]);
}

async fn a_tracking_request_has_the_attributes_terminal49_clients_read(app: TestApp) {
    let example: Value = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{}/../../../shared/reference/terminal49/response-examples/sdk-fixtures/tracking-requests.get.base.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap(),
    )
    .unwrap();
    let theirs: BTreeSet<String> = example["data"]["attributes"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();

    let created = create(&app, "bill_of_lading", "MAEU123456789", "MAEU").await;

    let ours: BTreeSet<String> = created["data"]["attributes"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    // `tags` duplicates shipment_tags in Terminal49's live output and has no source here.
    let missing: Vec<&String> = theirs.difference(&ours).filter(|k| *k != "tags").collect();
    assert!(missing.is_empty(), "missing attributes: {missing:?}");
}

async fn every_validation_error_is_reported_at_once(app: TestApp) {
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "by_bill_of_lading", "request_number": ""
            }}}),
        )
        .await;

    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        codes(&response),
        BTreeSet::from([
            pair("request_type", "invalid_request_type"),
            pair("request_number", "blank"),
            pair("scac", "blank"),
        ])
    );
    assert_eq!(response.error_member("status"), json!("422"));
    assert_eq!(
        response.error_member("title"),
        json!("Unprocessable Entity")
    );
}

async fn a_short_request_number_is_too_short(app: TestApp) {
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &body("bill_of_lading", "ABC12", "MAEU"),
        )
        .await;

    assert_eq!(
        codes(&response),
        BTreeSet::from([pair("request_number", "too_short")])
    );
    assert_eq!(
        response.error_member("detail"),
        json!("Request number is too short (minimum is 6 characters)")
    );
}

async fn an_unknown_scac_is_not_recognized(app: TestApp) {
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &body("bill_of_lading", "XXXX123456", "XXXX"),
        )
        .await;

    assert_eq!(
        codes(&response),
        BTreeSet::from([pair("scac", "not_recognized")])
    );
    assert_eq!(
        response.error_member("detail"),
        json!("Scac 'XXXX' is not recognized")
    );
}

async fn a_container_number_must_pass_its_check_digit(app: TestApp) {
    let bad = app
        .post_json(
            "/v2/tracking_requests",
            &body("container", "CSQU3054384", "MAEU"),
        )
        .await;
    let good = app
        .post_json(
            "/v2/tracking_requests",
            &body("container", "CSQU3054383", "MAEU"),
        )
        .await;

    assert_eq!(
        codes(&bad),
        BTreeSet::from([pair("request_number", "invalid_container")])
    );
    assert_eq!(good.status, StatusCode::CREATED);
}

async fn a_line_that_cannot_track_a_request_type_refuses_it(app: TestApp) {
    let lines = app.get("/v2/shipping_lines?page[size]=100").await.json();
    let Some(line) = lines["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|line| line["attributes"]["container_number_tracking_support"] == json!(false))
    else {
        panic!("the reference data has a line without container tracking");
    };
    let scac = line["attributes"]["scac"].as_str().unwrap();

    let response = app
        .post_json(
            "/v2/tracking_requests",
            &body("container", "CSQU3054383", scac),
        )
        .await;

    assert_eq!(
        codes(&response),
        BTreeSet::from([pair("request_type", "invalid_request_type")])
    );
}

async fn a_second_active_request_for_the_same_number_is_a_duplicate(app: TestApp) {
    create(&app, "bill_of_lading", "MAEU123456789", "MAEU").await;

    let again = app
        .post_json(
            "/v2/tracking_requests",
            &body("bill_of_lading", "maeu123456789", "MAEU"),
        )
        .await;

    assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        codes(&again),
        BTreeSet::from([pair("request_number", "duplicate")])
    );
    assert_eq!(
        app.get("/v2/tracking_requests").await.json()["meta"]["total"],
        json!(1)
    );
}

async fn a_tracking_request_of_another_account_is_not_found(app: TestApp) {
    let created = create(&app, "bill_of_lading", "MAEU123456789", "MAEU").await;
    let id = created["data"]["id"].as_str().unwrap();
    let intruder = app.other_account_key().await;

    let read = app
        .request(
            Method::GET,
            &format!("/v2/tracking_requests/{id}"),
            Some(&intruder),
            None,
        )
        .await;
    let listed = app
        .request(Method::GET, "/v2/tracking_requests", Some(&intruder), None)
        .await;

    assert_eq!(read.status, StatusCode::NOT_FOUND);
    assert_eq!(listed.json()["meta"]["total"], json!(0));
}

async fn tracking_requests_are_listed_newest_first(app: TestApp) {
    let first = create(&app, "bill_of_lading", "MAEU000000001", "MAEU").await;
    app.clock.advance(chrono::Duration::minutes(1));
    let second = create(&app, "bill_of_lading", "MAEU000000002", "MAEU").await;

    let listed = app.get("/v2/tracking_requests").await.json();

    let ids: Vec<&Value> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["id"])
        .collect();
    assert_eq!(ids, vec![&second["data"]["id"], &first["data"]["id"]]);
    assert_eq!(
        listed["meta"],
        json!({"size": 30, "total": 2,
               "pagination": {"current": 1, "last": 1, "records": 2}})
    );
}

async fn tracking_requests_are_filtered_by_status_scac_and_search(app: TestApp) {
    create(&app, "bill_of_lading", "MAEU000000001", "MAEU").await;
    let msc = create(&app, "bill_of_lading", "MEDU000000002", "MSCU").await;

    let by_scac = app
        .get("/v2/tracking_requests?filter[scac]=MSCU")
        .await
        .json();
    let by_status = app
        .get("/v2/tracking_requests?filter[status]=failed")
        .await
        .json();
    let by_search = app.get("/v2/tracking_requests?q=medu0000").await.json();
    let by_number = app
        .get("/v2/tracking_requests?filter[request_number]=MEDU000000002")
        .await
        .json();

    assert_eq!(by_scac["data"][0]["id"], msc["data"]["id"]);
    assert_eq!(by_scac["meta"]["total"], json!(1));
    assert_eq!(by_status["meta"]["total"], json!(0));
    assert_eq!(by_search["data"][0]["id"], msc["data"]["id"]);
    assert_eq!(by_number["meta"]["total"], json!(1));
}

async fn tracking_requests_are_filtered_by_creation_time(app: TestApp) {
    create(&app, "bill_of_lading", "MAEU000000001", "MAEU").await;
    app.clock.advance(chrono::Duration::days(2));
    let later = create(&app, "bill_of_lading", "MAEU000000002", "MAEU").await;

    let since = app
        .get("/v2/tracking_requests?filter[created_at][start]=2026-03-02T00:00:00Z")
        .await
        .json();
    let until = app
        .get("/v2/tracking_requests?filter[created_at][end]=2026-03-02")
        .await
        .json();

    assert_eq!(since["meta"]["total"], json!(1));
    assert_eq!(since["data"][0]["id"], later["data"]["id"]);
    assert_eq!(until["meta"]["total"], json!(1));
}

async fn an_unknown_status_filter_is_a_400(app: TestApp) {
    let response = app.get("/v2/tracking_requests?filter[status]=lost").await;

    assert_eq!(response.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        response.error_member("source"),
        json!({"parameter": "filter[status]"})
    );
}

async fn a_malformed_time_filter_is_a_400(app: TestApp) {
    let response = app
        .get("/v2/tracking_requests?filter[updated_at][start]=yesterday")
        .await;

    assert_eq!(response.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        response.error_member("source"),
        json!({"parameter": "filter[updated_at][start]"})
    );
}

async fn ref_numbers_can_be_changed(app: TestApp) {
    let created = create(&app, "bill_of_lading", "MAEU123456789", "MAEU").await;
    let id = created["data"]["id"].as_str().unwrap();
    app.clock.advance(chrono::Duration::minutes(5));

    let response = app
        .request(
            Method::PATCH,
            &format!("/v2/tracking_requests/{id}"),
            Some(&app.key),
            Some((
                "application/json",
                json!({"data": {"type": "tracking_request", "attributes": {"ref_numbers": ["A", "B", "A"]}}})
                    .to_string()
                    .into_bytes(),
            )),
        )
        .await;

    let attributes = &response.json()["data"]["attributes"];
    assert_eq!(response.status, StatusCode::OK);
    assert_eq!(attributes["ref_numbers"], json!(["A", "B"]));
    assert_eq!(attributes["updated_at"], json!("2026-03-01T12:05:00Z"));
}

async fn other_attributes_cannot_be_changed(app: TestApp) {
    let created = create(&app, "bill_of_lading", "MAEU123456789", "MAEU").await;
    let id = created["data"]["id"].as_str().unwrap();

    let response = app
        .request(
            Method::PATCH,
            &format!("/v2/tracking_requests/{id}"),
            Some(&app.key),
            Some((
                "application/json",
                json!({"data": {"type": "tracking_request", "attributes": {"request_number": "X"}}})
                    .to_string()
                    .into_bytes(),
            )),
        )
        .await;

    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        codes(&response),
        BTreeSet::from([pair("request_number", "not_editable")])
    );
}

fn post_with_key(app: &TestApp, key: &str, payload: &Value) -> Request<Body> {
    Request::post("/v2/tracking_requests")
        .header(header::AUTHORIZATION, format!("Token {}", app.key))
        .header(header::CONTENT_TYPE, "application/json")
        .header("Idempotency-Key", key)
        .body(Body::from(payload.to_string()))
        .unwrap()
}

async fn a_retry_with_the_same_idempotency_key_replays_the_first_response(app: TestApp) {
    let payload = body("bill_of_lading", "MAEU123456789", "MAEU");

    let first = app.send(post_with_key(&app, "retry-1", &payload)).await;
    let retry = app.send(post_with_key(&app, "retry-1", &payload)).await;

    assert_eq!(first.status, StatusCode::CREATED);
    assert_eq!(retry.status, StatusCode::CREATED);
    assert_eq!(retry.json(), first.json());
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        app.get("/v2/tracking_requests").await.json()["meta"]["total"],
        json!(1)
    );
}

async fn an_idempotency_key_reused_for_another_body_is_refused(app: TestApp) {
    app.send(post_with_key(
        &app,
        "k",
        &body("bill_of_lading", "MAEU123456789", "MAEU"),
    ))
    .await;

    let other = app
        .send(post_with_key(
            &app,
            "k",
            &body("bill_of_lading", "MAEU999999999", "MAEU"),
        ))
        .await;

    assert_eq!(other.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(other.error_member("code"), json!("idempotency_key_reused"));
    assert_eq!(
        other.error_member("source"),
        json!({"header": "Idempotency-Key"})
    );
}

async fn creating_tracking_requests_has_its_own_rate_limit_bucket(app: TestApp) {
    let app = TestApp::with_config(app.backend, &[("rate_limit_per_minute", "2")])
        .await
        .unwrap();
    create(&app, "bill_of_lading", "MAEU000000001", "MAEU").await;
    create(&app, "bill_of_lading", "MAEU000000002", "MAEU").await;

    let third_create = app
        .post_json(
            "/v2/tracking_requests",
            &body("bill_of_lading", "MAEU000000003", "MAEU"),
        )
        .await;
    let read = app.get("/v2/tracking_requests").await;

    assert_eq!(third_create.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(read.status, StatusCode::OK);
}
