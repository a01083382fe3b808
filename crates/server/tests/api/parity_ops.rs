//! Terminal49 operations of issue 18 over HTTP: container updates, tracking-request custom
//! fields, metro areas and search.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestResponse};
use crate::on_both_backends;

on_both_backends!(
    a_containers_ref_numbers_are_replaced_and_shown,
    the_id_less_container_patch_changes_the_container_named_in_data_id,
    the_id_less_container_patch_without_data_id_is_invalid,
    a_container_patch_whose_data_id_differs_from_the_url_is_a_conflict,
    another_accounts_container_cannot_be_patched,
    a_container_patch_with_bad_values_is_refused_and_changes_nothing,
    a_container_patch_needs_a_json_content_type,
    a_read_only_key_cannot_patch_a_container,
    a_poll_keeps_the_ref_numbers_users_gave_a_container,
    the_openapi_document_describes_these_operations,
);

fn body(value: &Value) -> Option<(&'static str, Vec<u8>)> {
    Some(("application/json", value.to_string().into_bytes()))
}

async fn patch(app: &TestApp, path: &str, value: &Value) -> TestResponse {
    app.request(Method::PATCH, path, Some(&app.key), body(value))
        .await
}

/// Tracks a sandbox number to its shipment; returns the shipment's id and its containers'.
async fn tracked_shipment(app: &TestApp, number: &str) -> (String, Vec<String>) {
    let created = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": number, "scac": "TEST"
            }}}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.json());
    app.run_pending_jobs().await;
    let shipments = app
        .get(&format!("/v2/shipments?filter[number]={number}"))
        .await
        .json();
    let shipment = shipments["data"][0]["id"].as_str().unwrap().to_owned();
    let containers = shipments["data"][0]["relationships"]["containers"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    (shipment, containers)
}

fn ref_numbers_body(ref_numbers: Value) -> Value {
    json!({"data": {"type": "container", "attributes": {"ref_numbers": ref_numbers}}})
}

async fn ref_numbers_of(app: &TestApp, container: &str) -> Value {
    app.get(&format!("/v2/containers/{container}"))
        .await
        .json()["data"]["attributes"]["ref_numbers"]
        .clone()
}

async fn a_containers_ref_numbers_are_replaced_and_shown(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-1").await;
    let container = &containers[0];
    patch(
        &app,
        &format!("/v2/containers/{container}"),
        &ref_numbers_body(json!(["OLD-1"])),
    )
    .await;

    let response = patch(
        &app,
        &format!("/v2/containers/{container}"),
        &ref_numbers_body(json!([" PO-9 ", "LOT-4", "PO-9", ""])),
    )
    .await;

    assert_eq!(response.status, StatusCode::OK, "{}", response.json());
    let data = &response.json()["data"];
    assert_eq!(data["type"], json!("container"));
    assert_eq!(data["id"], json!(container));
    assert_eq!(data["attributes"]["ref_numbers"], json!(["PO-9", "LOT-4"]));
    assert_eq!(
        ref_numbers_of(&app, container).await,
        json!(["PO-9", "LOT-4"])
    );
    let second = &containers[1];
    assert_eq!(ref_numbers_of(&app, second).await, json!([]));
}

async fn the_id_less_container_patch_changes_the_container_named_in_data_id(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-2").await;
    let container = &containers[0];

    let response = patch(
        &app,
        "/v2/containers",
        &json!({"data": {"id": container, "type": "container",
                         "attributes": {"ref_numbers": ["REF-12345"]}}}),
    )
    .await;

    assert_eq!(response.status, StatusCode::OK, "{}", response.json());
    assert_eq!(
        response.json()["data"]["attributes"]["ref_numbers"],
        json!(["REF-12345"])
    );
    assert_eq!(ref_numbers_of(&app, container).await, json!(["REF-12345"]));
}

async fn the_id_less_container_patch_without_data_id_is_invalid(app: TestApp) {
    let response = patch(&app, "/v2/containers", &ref_numbers_body(json!(["X"]))).await;

    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        response.json()["errors"][0]["source"]["pointer"],
        json!("/data/id")
    );
}

async fn a_container_patch_whose_data_id_differs_from_the_url_is_a_conflict(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-1").await;

    let response = patch(
        &app,
        &format!("/v2/containers/{}", containers[0]),
        &json!({"data": {"id": containers[1], "type": "container",
                         "attributes": {"ref_numbers": ["X"]}}}),
    )
    .await;

    assert_eq!(response.status, StatusCode::CONFLICT);
    assert_eq!(ref_numbers_of(&app, &containers[0]).await, json!([]));
    assert_eq!(ref_numbers_of(&app, &containers[1]).await, json!([]));
}

async fn another_accounts_container_cannot_be_patched(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-4").await;
    let other = app.other_account_key().await;
    let path = format!("/v2/containers/{}", containers[0]);

    let response = app
        .request(
            Method::PATCH,
            &path,
            Some(&other),
            body(&ref_numbers_body(json!(["MINE"]))),
        )
        .await;
    let id_less = app
        .request(
            Method::PATCH,
            "/v2/containers",
            Some(&other),
            body(&json!({"data": {"id": containers[0], "type": "container",
                                  "attributes": {"ref_numbers": ["MINE"]}}})),
        )
        .await;

    assert_eq!(response.status, StatusCode::NOT_FOUND);
    assert_eq!(id_less.status, StatusCode::NOT_FOUND);
    assert_eq!(ref_numbers_of(&app, &containers[0]).await, json!([]));
}

async fn a_container_patch_with_bad_values_is_refused_and_changes_nothing(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-5").await;
    let path = format!("/v2/containers/{}", containers[0]);
    patch(&app, &path, &ref_numbers_body(json!(["KEEP"]))).await;

    let not_a_list = patch(&app, &path, &ref_numbers_body(json!("PO-1"))).await;
    let not_strings = patch(&app, &path, &ref_numbers_body(json!(["PO-1", 7]))).await;
    let not_editable = patch(
        &app,
        &path,
        &json!({"data": {"type": "container", "attributes": {"number": "ABCU1234560"}}}),
    )
    .await;
    let wrong_type = patch(
        &app,
        &path,
        &json!({"data": {"type": "shipment", "attributes": {"ref_numbers": []}}}),
    )
    .await;

    for response in [&not_a_list, &not_strings, &not_editable] {
        assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    }
    assert_eq!(
        not_a_list.json()["errors"][0]["source"]["pointer"],
        json!("/data/attributes/ref_numbers")
    );
    assert_eq!(
        not_editable.json()["errors"][0]["source"]["pointer"],
        json!("/data/attributes/number")
    );
    assert_eq!(wrong_type.status, StatusCode::CONFLICT);
    assert_eq!(ref_numbers_of(&app, &containers[0]).await, json!(["KEEP"]));
}

async fn a_container_patch_needs_a_json_content_type(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-6").await;

    let response = app
        .request(
            Method::PATCH,
            &format!("/v2/containers/{}", containers[0]),
            Some(&app.key),
            Some((
                "text/plain",
                ref_numbers_body(json!(["X"])).to_string().into_bytes(),
            )),
        )
        .await;

    assert_eq!(response.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(ref_numbers_of(&app, &containers[0]).await, json!([]));
}

async fn a_read_only_key_cannot_patch_a_container(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-7").await;

    let response = app
        .request(
            Method::PATCH,
            &format!("/v2/containers/{}", containers[0]),
            Some(&app.read_only_key),
            body(&ref_numbers_body(json!(["X"]))),
        )
        .await;

    assert_eq!(response.status, StatusCode::FORBIDDEN);
}

async fn a_poll_keeps_the_ref_numbers_users_gave_a_container(app: TestApp) {
    let (_, containers) = tracked_shipment(&app, "TEST-CPATCH-8").await;
    let path = format!("/v2/containers/{}", containers[0]);
    patch(&app, &path, &ref_numbers_body(json!(["PO-1"]))).await;

    app.clock.advance(chrono::Duration::hours(2));
    app.tick().await;

    assert_eq!(ref_numbers_of(&app, &containers[0]).await, json!(["PO-1"]));
}

/// The operations this file covers, each with its method and the statuses it can answer.
const DOCUMENTED: &[(&str, &str, &[&str])] = &[
    (
        "/v2/containers/{id}",
        "patch",
        &["200", "400", "401", "403", "404", "409", "415", "422"],
    ),
    (
        "/v2/containers",
        "patch",
        &["200", "400", "401", "403", "404", "415", "422"],
    ),
];

async fn the_openapi_document_describes_these_operations(app: TestApp) {
    let spec = app
        .request(Method::GET, "/v2/openapi.json", None, None)
        .await
        .json();

    for (path, method, statuses) in DOCUMENTED {
        let operation = &spec["paths"][path][method];
        assert!(operation.is_object(), "{method} {path} is not documented");
        for status in *statuses {
            let response = &operation["responses"][status];
            assert!(
                response["content"]["application/vnd.api+json"].is_object(),
                "{method} {path} does not list {status} as application/vnd.api+json: {response}"
            );
        }
    }
}
