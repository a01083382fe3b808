//! Ports, shipping lines and terminals: the embedded reference data.

use std::collections::BTreeSet;

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    a_port_is_found_by_its_locode,
    a_port_is_found_by_its_id,
    a_port_has_the_attributes_terminal49_clients_read,
    an_unknown_port_is_not_found,
    ports_are_filtered_by_country_and_name_prefix,
    a_port_can_include_its_terminals,
    shipping_lines_list_the_sandbox_and_major_carriers,
    a_shipping_line_is_found_by_scac,
    a_terminal_includes_its_port,
    a_terminal_id_that_is_not_a_uuid_is_not_found,
);

fn terminal49_example(path: &str) -> Value {
    let full = format!(
        "{}/../../../shared/reference/terminal49/{path}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&full).expect("reference example"))
        .expect("example is JSON")
}

fn keys(value: &Value) -> BTreeSet<String> {
    value.as_object().unwrap().keys().cloned().collect()
}

async fn a_port_is_found_by_its_locode(app: TestApp) {
    let response = app.get("/v2/ports/NLRTM").await;

    assert_eq!(response.status, StatusCode::OK);
    insta::assert_json_snapshot!("port_nlrtm", response.json());
}

async fn a_port_is_found_by_its_id(app: TestApp) {
    let by_code = app.get("/v2/ports/KRPUS").await.json();
    let id = by_code["data"]["id"].as_str().unwrap();

    let by_id = app.get(&format!("/v2/ports/{id}")).await;

    assert_eq!(by_id.status, StatusCode::OK);
    assert_eq!(by_id.json()["data"], by_code["data"]);
    assert_eq!(
        by_code["data"]["attributes"]["time_zone"],
        json!("Asia/Seoul")
    );
}

async fn a_port_has_the_attributes_terminal49_clients_read(app: TestApp) {
    let example = terminal49_example("response-examples/sdk-fixtures/ports.get.json");

    let ours = app.get("/v2/ports/KRPUS").await.json();

    assert_eq!(
        keys(&ours["data"]["attributes"]),
        keys(&example["data"]["attributes"])
    );
    assert_eq!(
        keys(&ours["data"]),
        keys(&example["data"])
            .into_iter()
            .chain(["links".to_owned()])
            .collect()
    );
}

async fn an_unknown_port_is_not_found(app: TestApp) {
    let response = app.get("/v2/ports/ZZZZZ").await;

    assert_eq!(response.status, StatusCode::NOT_FOUND);
    assert_eq!(response.error_member("status"), json!("404"));
}

async fn ports_are_filtered_by_country_and_name_prefix(app: TestApp) {
    let response = app
        .get("/v2/ports?filter[country_code]=DE&filter[name]=ham")
        .await;

    let body = response.json();
    let codes: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|port| port["attributes"]["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"DEHAM"), "{codes:?}");
    assert!(body["data"].as_array().unwrap().iter().all(|port| {
        port["attributes"]["country_code"] == json!("DE")
            && port["attributes"]["name"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .starts_with("ham")
    }));
}

async fn a_port_can_include_its_terminals(app: TestApp) {
    let response = app.get("/v2/ports/USSAV?include=terminals").await;

    let body = response.json();
    let related: Vec<&Value> = body["data"]["relationships"]["terminals"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    let included = body["included"].as_array().unwrap();
    assert!(!related.is_empty());
    assert_eq!(included.len(), related.len());
    assert!(included.iter().all(|t| t["type"] == json!("terminal")));
}

async fn shipping_lines_list_the_sandbox_and_major_carriers(app: TestApp) {
    let response = app.get("/v2/shipping_lines?page[size]=100").await;

    let body = response.json();
    let scacs: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| line["attributes"]["scac"].as_str().unwrap())
        .collect();
    for scac in [
        "TEST", "MAEU", "MSCU", "CMDU", "HLCU", "ONEY", "COSU", "EGLV",
    ] {
        assert!(scacs.contains(&scac), "{scac} missing from {scacs:?}");
    }
}

async fn a_shipping_line_is_found_by_scac(app: TestApp) {
    let response = app.get("/v2/shipping_lines/TEST").await;

    assert_eq!(response.status, StatusCode::OK);
    let attributes = &response.json()["data"]["attributes"];
    assert_eq!(attributes["bill_of_lading_tracking_support"], json!(true));
    assert_eq!(attributes["booking_number_tracking_support"], json!(true));
    assert_eq!(attributes["container_number_tracking_support"], json!(true));
}

async fn a_terminal_includes_its_port(app: TestApp) {
    let port = app.get("/v2/ports/USSAV?include=terminals").await.json();
    let terminal_id = port["included"][0]["id"].as_str().unwrap().to_owned();

    let response = app
        .get(&format!("/v2/terminals/{terminal_id}?include=port"))
        .await;

    let body = response.json();
    assert_eq!(response.status, StatusCode::OK);
    assert_eq!(
        body["data"]["relationships"]["port"]["data"]["id"],
        port["data"]["id"]
    );
    assert_eq!(body["included"][0]["attributes"]["code"], json!("USSAV"));
}

async fn a_terminal_id_that_is_not_a_uuid_is_not_found(app: TestApp) {
    let response = app.get("/v2/terminals/42").await;

    assert_eq!(response.status, StatusCode::NOT_FOUND);
}
