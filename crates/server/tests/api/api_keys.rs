//! `/v2/api_keys`: an account manages its own keys, and only its own.

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    a_created_key_is_shown_once_and_works,
    a_created_key_can_be_read_only,
    listing_keys_shows_prefixes_never_secrets,
    another_accounts_key_is_not_found,
    revoking_an_unknown_key_is_not_found,
);

async fn a_created_key_is_shown_once_and_works(app: TestApp) {
    let response = app
        .post_json(
            "/v2/api_keys",
            &json!({"data": {"type": "api_key", "attributes": {}}}),
        )
        .await;

    assert_eq!(response.status, StatusCode::CREATED);
    let body = response.json();
    let key = body["data"]["attributes"]["key"].as_str().unwrap();
    assert_eq!(body["data"]["type"], json!("api_key"));
    assert_eq!(body["data"]["attributes"]["scope"], json!("read_write"));
    assert!(key.starts_with(body["data"]["attributes"]["prefix"].as_str().unwrap()));
    let with_new_key = app
        .request(Method::GET, "/v2/api_keys", Some(key), None)
        .await;
    assert_eq!(with_new_key.status, StatusCode::OK);
}

async fn a_created_key_can_be_read_only(app: TestApp) {
    let created = app
        .post_json(
            "/v2/api_keys",
            &json!({"data": {"type": "api_key", "attributes": {"scope": "read_only"}}}),
        )
        .await
        .json();
    let key = created["data"]["attributes"]["key"].as_str().unwrap();

    let write = app
        .request(
            Method::POST,
            "/v2/api_keys",
            Some(key),
            Some((
                "application/json",
                b"{\"data\":{\"type\":\"api_key\"}}".to_vec(),
            )),
        )
        .await;

    assert_eq!(write.status, StatusCode::FORBIDDEN);
}

async fn listing_keys_shows_prefixes_never_secrets(app: TestApp) {
    let response = app.get("/v2/api_keys").await;

    let body = response.json();
    assert_eq!(response.status, StatusCode::OK);
    assert_eq!(body["meta"]["total"], json!(2));
    assert!(!String::from_utf8_lossy(&response.body).contains(&app.key));
    for key in body["data"].as_array().unwrap() {
        assert!(key["attributes"].get("key").is_none());
        assert!(
            app.key
                .starts_with(key["attributes"]["prefix"].as_str().unwrap())
                || app
                    .read_only_key
                    .starts_with(key["attributes"]["prefix"].as_str().unwrap())
        );
    }
}

async fn another_accounts_key_is_not_found(app: TestApp) {
    let mine = app.get("/v2/api_keys").await.json();
    let my_key_id = mine["data"][0]["id"].as_str().unwrap().to_owned();
    let intruder = app.other_account_key().await;

    let response = app
        .request(
            Method::DELETE,
            &format!("/v2/api_keys/{my_key_id}"),
            Some(&intruder),
            None,
        )
        .await;

    assert_eq!(response.status, StatusCode::NOT_FOUND);
    assert_eq!(app.get("/v2/api_keys").await.status, StatusCode::OK);
}

async fn revoking_an_unknown_key_is_not_found(app: TestApp) {
    let response = app
        .request(
            Method::DELETE,
            "/v2/api_keys/not-a-uuid",
            Some(&app.key),
            None,
        )
        .await;

    assert_eq!(response.status, StatusCode::NOT_FOUND);
}
