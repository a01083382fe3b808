//! The OpenAPI document is a contract: what the server answers (content type, status) is
//! what the document lists. `scripts/schemathesis.sh` checks it with generated requests;
//! these tests pin the rules the document gets in one place (`api::docs::conform`) and
//! try a few answers the shared layers give against it.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    json_api_answers_are_documented_as_application_vnd_api_json,
    every_operation_that_takes_a_body_accepts_both_json_types_and_lists_413_and_415,
    every_v2_operation_lists_the_statuses_of_the_shared_layers,
    every_write_lists_read_only_conflict_and_invalid_values,
    pages_are_documented_to_start_at_one_as_the_server_requires,
    a_body_of_another_type_gets_the_documented_415_as_json_api,
    an_unknown_key_gets_the_documented_401_as_json_api,
    the_container_event_feeds_document_the_includes_they_take,
);

async fn document(app: &TestApp) -> Value {
    app.request(Method::GET, "/v2/openapi.json", None, None)
        .await
        .json()
}

/// Every (path, method, operation) of the document.
fn operations(document: &Value) -> Vec<(String, String, Value)> {
    let mut all = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            all.push((path.clone(), method.clone(), operation.clone()));
        }
    }
    all
}

fn statuses(operation: &Value) -> Vec<&str> {
    operation["responses"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

async fn json_api_answers_are_documented_as_application_vnd_api_json(app: TestApp) {
    let document = document(&app).await;
    let plain = [
        ("/v2/containers/{id}/map_geojson", "200"),
        ("/v2/documents/types", "200"),
    ];

    for (path, method, operation) in operations(&document) {
        for (status, response) in operation["responses"].as_object().unwrap() {
            let Some(content) = response["content"].as_object() else {
                continue;
            };
            if plain.contains(&(path.as_str(), status.as_str())) {
                assert!(content.contains_key("application/json"), "{method} {path}");
                continue;
            }
            assert!(
                !content.contains_key("application/json"),
                "{method} {path} {status} says application/json"
            );
        }
    }
}

async fn every_operation_that_takes_a_body_accepts_both_json_types_and_lists_413_and_415(
    app: TestApp,
) {
    let document = document(&app).await;
    let mut with_json_bodies = 0;

    for (path, method, operation) in operations(&document) {
        let Some(content) = operation["requestBody"]["content"].as_object() else {
            continue;
        };
        if content.contains_key("application/json") {
            with_json_bodies += 1;
            assert!(
                content.contains_key("application/vnd.api+json"),
                "{method} {path}"
            );
        }
        let statuses = statuses(&operation);
        assert!(
            statuses.contains(&"413") && statuses.contains(&"415"),
            "{method} {path}: {statuses:?}"
        );
    }
    assert!(with_json_bodies > 20, "{with_json_bodies}");
}

async fn every_v2_operation_lists_the_statuses_of_the_shared_layers(app: TestApp) {
    let document = document(&app).await;

    for (path, method, operation) in operations(&document) {
        if !path.starts_with("/v2/") {
            continue;
        }
        let statuses = statuses(&operation);
        for status in ["400", "401", "404", "429", "503"] {
            assert!(statuses.contains(&status), "{method} {path}: {statuses:?}");
        }
    }
}

async fn every_write_lists_read_only_conflict_and_invalid_values(app: TestApp) {
    let document = document(&app).await;

    for (path, method, operation) in operations(&document) {
        if !path.starts_with("/v2/") || method == "get" {
            continue;
        }
        let statuses = statuses(&operation);
        for status in ["403", "409", "422"] {
            assert!(statuses.contains(&status), "{method} {path}: {statuses:?}");
        }
    }
}

async fn pages_are_documented_to_start_at_one_as_the_server_requires(app: TestApp) {
    let document = document(&app).await;
    let shipments = &document["paths"]["/v2/shipments"]["get"];
    let page_number = shipments["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|parameter| parameter["name"] == "page[number]")
        .unwrap();

    let zeroth = app
        .request(
            Method::GET,
            "/v2/shipments?page[number]=0",
            Some(&app.key),
            None,
        )
        .await;

    assert_eq!(page_number["schema"]["minimum"], json!(1));
    assert_eq!(zeroth.status, StatusCode::BAD_REQUEST);
}

async fn the_container_event_feeds_document_the_includes_they_take(app: TestApp) {
    let document = document(&app).await;
    for path in [
        "/v2/containers/{id}/transport_events",
        "/v2/containers/{id}/raw_events",
    ] {
        let include = document["paths"][path]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|parameter| parameter["name"] == "include")
            .unwrap_or_else(|| panic!("{path} does not document include"));
        assert_eq!(include["in"], json!("query"));
        assert!(
            include["description"]
                .as_str()
                .is_some_and(|description| description.contains("terminal")),
            "{path}: {include}"
        );
    }
}

async fn a_body_of_another_type_gets_the_documented_415_as_json_api(app: TestApp) {
    let document = document(&app).await;
    let response = app
        .send(
            Request::post("/v2/webhooks")
                .header(header::AUTHORIZATION, format!("Token {}", app.key))
                .header(header::CONTENT_TYPE, "text/plain")
                .body(Body::from("url=https://example.com"))
                .unwrap(),
        )
        .await;

    assert_eq!(response.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(
        response.headers[header::CONTENT_TYPE],
        "application/vnd.api+json"
    );
    assert!(
        document["paths"]["/v2/webhooks"]["post"]["responses"]["415"]["content"]
            ["application/vnd.api+json"]
            .is_object()
    );
}

async fn an_unknown_key_gets_the_documented_401_as_json_api(app: TestApp) {
    let document = document(&app).await;
    let response = app
        .request(Method::GET, "/v2/terminals/x", Some("tmk_unknown"), None)
        .await;

    assert_eq!(response.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        response.headers[header::CONTENT_TYPE],
        "application/vnd.api+json"
    );
    assert!(
        document["paths"]["/v2/terminals/{id}"]["get"]["responses"]["401"]["content"]
            ["application/vnd.api+json"]
            .is_object()
    );
}
