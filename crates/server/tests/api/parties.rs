//! Parties: the customers an account tracks shipments for, named on tracking requests and
//! shown on their shipments.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestResponse};
use crate::on_both_backends;

on_both_backends!(
    a_party_is_created_read_listed_and_renamed,
    a_party_needs_a_company_name_unique_in_the_account,
    another_accounts_party_is_not_found,
    a_read_only_key_cannot_create_a_party,
    a_tracking_request_for_a_customer_shows_it_on_its_shipment,
    a_tracking_request_naming_an_unknown_customer_is_refused,
    shipments_and_containers_are_filtered_by_customer,
);

async fn create_party(app: &TestApp, name: &str) -> TestResponse {
    app.post_json(
        "/v2/parties",
        &json!({"data": {"type": "party", "attributes": {"company_name": name}}}),
    )
    .await
}

async fn party_id(app: &TestApp, name: &str) -> String {
    let response = create_party(app, name).await;
    assert_eq!(response.status, StatusCode::CREATED);
    response.json()["data"]["id"].as_str().unwrap().to_owned()
}

async fn track_for(app: &TestApp, number: &str, customer: Option<&str>) -> TestResponse {
    let mut body = json!({"data": {"type": "tracking_request", "attributes": {
        "request_type": "bill_of_lading", "request_number": number, "scac": "TEST"
    }}});
    if let Some(customer) = customer {
        body["data"]["relationships"] =
            json!({"customer": {"data": {"type": "party", "id": customer}}});
    }
    app.post_json("/v2/tracking_requests", &body).await
}

async fn a_party_is_created_read_listed_and_renamed(app: TestApp) {
    let created = create_party(&app, "  Globex Imports ").await;
    assert_eq!(created.status, StatusCode::CREATED);
    let id = created.json()["data"]["id"].as_str().unwrap().to_owned();

    let renamed = app
        .request(
            Method::PATCH,
            &format!("/v2/parties/{id}"),
            Some(&app.key),
            Some((
                "application/json",
                serde_json::to_vec(&json!({"data": {"type": "party", "attributes": {
                    "company_name": "Globex Corporation"
                }}}))
                .unwrap(),
            )),
        )
        .await;
    let shown = app.get(&format!("/v2/parties/{id}")).await.json();
    let listed = app.get("/v2/parties").await.json();

    assert_eq!(
        created.json()["data"]["attributes"]["company_name"],
        json!("Globex Imports")
    );
    assert_eq!(renamed.status, StatusCode::OK);
    assert_eq!(
        shown["data"]["attributes"]["company_name"],
        json!("Globex Corporation")
    );
    assert_eq!(shown["data"]["type"], json!("party"));
    assert!(
        shown["links"]["self"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/v2/parties/{id}"))
    );
    assert_eq!(listed["meta"]["total"], json!(1));
    assert_eq!(listed["meta"]["size"], json!(25));
}

async fn a_party_needs_a_company_name_unique_in_the_account(app: TestApp) {
    party_id(&app, "Globex").await;

    let blank = create_party(&app, "   ").await;
    let taken = create_party(&app, "GLOBEX").await;

    assert_eq!(blank.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        blank.error_member("source"),
        json!({"pointer": "/data/attributes/company_name"})
    );
    assert_eq!(blank.error_member("code"), json!("blank"));
    assert_eq!(taken.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(taken.error_member("code"), json!("taken"));
}

async fn another_accounts_party_is_not_found(app: TestApp) {
    let id = party_id(&app, "Globex").await;
    let other = app.other_account_key().await;

    let response = app
        .request(
            Method::GET,
            &format!("/v2/parties/{id}"),
            Some(&other),
            None,
        )
        .await;

    assert_eq!(response.status, StatusCode::NOT_FOUND);
}

async fn a_read_only_key_cannot_create_a_party(app: TestApp) {
    let body = serde_json::to_vec(&json!({"data": {"type": "party", "attributes": {
        "company_name": "Globex"
    }}}))
    .unwrap();

    let response = app
        .request(
            Method::POST,
            "/v2/parties",
            Some(&app.read_only_key),
            Some(("application/json", body)),
        )
        .await;

    assert_eq!(response.status, StatusCode::FORBIDDEN);
}

async fn shipment_of_request(app: &TestApp, request_id: &str) -> Value {
    let request = app
        .get(&format!("/v2/tracking_requests/{request_id}"))
        .await
        .json();
    request["included"][0].clone()
}

async fn a_tracking_request_for_a_customer_shows_it_on_its_shipment(app: TestApp) {
    let customer = party_id(&app, "Globex").await;

    let created = track_for(&app, "TEST-FOR-GLOBEX", Some(&customer)).await;
    app.run_pending_jobs().await;
    let request_id = created.json()["data"]["id"].as_str().unwrap().to_owned();
    let shipment = shipment_of_request(&app, &request_id).await;

    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(
        created.json()["data"]["relationships"]["customer"]["data"],
        json!({"type": "party", "id": customer})
    );
    assert_eq!(shipment["type"], json!("shipment"));
    assert_eq!(shipment["attributes"]["customer_name"], json!("Globex"));
}

async fn a_tracking_request_naming_an_unknown_customer_is_refused(app: TestApp) {
    let unknown = "0190f0c4-0000-7000-8000-000000000000";

    let response = track_for(&app, "TEST-NOBODY", Some(unknown)).await;
    let wrong_type = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request",
                "attributes": {"request_type": "bill_of_lading",
                    "request_number": "TEST-NOBODY", "scac": "TEST"},
                "relationships": {"customer": {"data": {"type": "shipment", "id": unknown}}}}}),
        )
        .await;
    let listed = app.get("/v2/tracking_requests").await.json();

    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        response.error_member("source"),
        json!({"pointer": "/data/relationships/customer/data/id"})
    );
    assert_eq!(wrong_type.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        wrong_type.error_member("source"),
        json!({"pointer": "/data/relationships/customer/data/type"})
    );
    assert_eq!(listed["meta"]["total"], json!(0), "nothing was stored");
}

async fn shipments_and_containers_are_filtered_by_customer(app: TestApp) {
    let customer = party_id(&app, "Globex").await;
    track_for(&app, "TEST-FOR-GLOBEX", Some(&customer)).await;
    track_for(&app, "TEST-FOR-NOBODY", None).await;
    app.run_pending_jobs().await;

    let shipments = app
        .get(&format!("/v2/shipments?filter[customer_id]={customer}"))
        .await
        .json();
    let containers = app
        .get(&format!("/v2/containers?filter[customer_id]={customer}"))
        .await
        .json();
    let all = app.get("/v2/shipments").await.json();
    let malformed = app.get("/v2/shipments?filter[customer_id]=globex").await;

    assert_eq!(all["meta"]["total"], json!(2));
    assert_eq!(shipments["meta"]["total"], json!(1));
    assert_eq!(
        shipments["data"][0]["attributes"]["bill_of_lading_number"],
        json!("TEST-FOR-GLOBEX")
    );
    assert!(
        containers["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["relationships"]["shipment"]["data"]["id"] == shipments["data"][0]["id"])
    );
    assert!(containers["meta"]["total"].as_u64().unwrap() >= 1);
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        malformed.error_member("source"),
        json!({"parameter": "filter[customer_id]"})
    );
}
