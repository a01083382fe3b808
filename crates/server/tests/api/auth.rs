//! API keys: `Token` and `Bearer` schemes, scopes, revocation, rate limits.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use chrono::Duration;
use serde_json::json;

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    a_request_without_a_key_is_refused,
    a_request_with_an_unknown_key_is_refused,
    a_key_is_accepted_with_the_bearer_scheme_too,
    a_read_only_key_can_read,
    a_read_only_key_cannot_write,
    a_revoked_key_stops_working_at_once,
    a_key_over_its_rate_limit_is_told_when_to_retry,
    every_authenticated_response_carries_rate_limit_headers,
    the_rate_limit_recovers_as_the_minute_rolls_on,
);

async fn a_request_without_a_key_is_refused(app: TestApp) {
    let response = app
        .request(Method::GET, "/v2/ports/NLRTM", None, None)
        .await;

    assert_eq!(response.status, StatusCode::UNAUTHORIZED);
    assert_eq!(response.error_member("status"), json!("401"));
    assert_eq!(response.error_member("title"), json!("Unauthorized"));
}

async fn a_request_with_an_unknown_key_is_refused(app: TestApp) {
    let response = app
        .request(
            Method::GET,
            "/v2/ports/NLRTM",
            Some("tmk_not_a_real_key"),
            None,
        )
        .await;

    assert_eq!(response.status, StatusCode::UNAUTHORIZED);
}

async fn a_key_is_accepted_with_the_bearer_scheme_too(app: TestApp) {
    let request = Request::get("/v2/ports/NLRTM")
        .header(header::AUTHORIZATION, format!("Bearer {}", app.key))
        .body(Body::empty())
        .unwrap();

    let response = app.send(request).await;

    assert_eq!(response.status, StatusCode::OK);
}

async fn a_read_only_key_can_read(app: TestApp) {
    let response = app
        .request(
            Method::GET,
            "/v2/shipping_lines",
            Some(&app.read_only_key),
            None,
        )
        .await;

    assert_eq!(response.status, StatusCode::OK);
}

async fn a_read_only_key_cannot_write(app: TestApp) {
    let body = json!({"data": {"type": "api_key", "attributes": {}}});

    let response = app
        .request(
            Method::POST,
            "/v2/api_keys",
            Some(&app.read_only_key),
            Some(("application/json", body.to_string().into_bytes())),
        )
        .await;

    assert_eq!(response.status, StatusCode::FORBIDDEN);
    assert_eq!(response.error_member("status"), json!("403"));
}

async fn a_revoked_key_stops_working_at_once(app: TestApp) {
    let created = app
        .post_json("/v2/api_keys", &json!({"data": {"type": "api_key"}}))
        .await
        .json();
    let new_key = created["data"]["attributes"]["key"]
        .as_str()
        .unwrap()
        .to_owned();
    let id = created["data"]["id"].as_str().unwrap();
    assert_eq!(
        app.request(Method::GET, "/v2/ports/NLRTM", Some(&new_key), None)
            .await
            .status,
        StatusCode::OK
    );

    let revoked = app
        .request(
            Method::DELETE,
            &format!("/v2/api_keys/{id}"),
            Some(&app.key),
            None,
        )
        .await;

    assert_eq!(revoked.status, StatusCode::NO_CONTENT);
    let after = app
        .request(Method::GET, "/v2/ports/NLRTM", Some(&new_key), None)
        .await;
    assert_eq!(after.status, StatusCode::UNAUTHORIZED);
}

async fn a_key_over_its_rate_limit_is_told_when_to_retry(app: TestApp) {
    let app = TestApp::with_config(backend_of(&app), &[("rate_limit_per_minute", "2")])
        .await
        .unwrap();
    app.get("/v2/ports/NLRTM").await;
    app.get("/v2/ports/NLRTM").await;

    let third = app.get("/v2/ports/NLRTM").await;

    assert_eq!(third.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(third.error_member("status"), json!("429"));
    let retry_after: u64 = third.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after));
    assert_eq!(third.header("ratelimit-remaining"), Some("0"));
}

async fn every_authenticated_response_carries_rate_limit_headers(app: TestApp) {
    let response = app.get("/v2/ports/NLRTM").await;

    assert_eq!(response.header("ratelimit-limit"), Some("100"));
    assert_eq!(response.header("ratelimit-remaining"), Some("99"));
    assert!(response.header("ratelimit-reset").is_some());
}

async fn the_rate_limit_recovers_as_the_minute_rolls_on(app: TestApp) {
    let app = TestApp::with_config(backend_of(&app), &[("rate_limit_per_minute", "1")])
        .await
        .unwrap();
    app.get("/v2/ports/NLRTM").await;
    assert_eq!(
        app.get("/v2/ports/NLRTM").await.status,
        StatusCode::TOO_MANY_REQUESTS
    );

    app.clock.advance(Duration::seconds(121));

    assert_eq!(app.get("/v2/ports/NLRTM").await.status, StatusCode::OK);
}

/// Rebuilding an app with other settings on the same kind of backend.
fn backend_of(app: &TestApp) -> crate::helpers::Backend {
    app.backend
}
