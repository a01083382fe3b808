//! JSON:API conventions every endpoint shares: error documents, content types, bodies,
//! pagination parameters, includes, request ids.

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    an_unknown_route_answers_a_json_404,
    a_wrong_method_answers_a_json_405,
    malformed_json_is_a_400_pointing_at_the_body,
    a_body_of_another_resource_type_is_a_409,
    a_body_that_is_not_json_is_a_415,
    a_body_over_the_limit_is_a_413,
    a_json_api_content_type_is_accepted,
    an_invalid_attribute_is_a_422_pointing_at_it,
    a_body_without_data_is_a_422,
    a_zero_page_size_is_a_400_naming_the_parameter,
    a_non_integer_page_number_is_a_400_naming_the_parameter,
    an_unknown_include_is_a_400_naming_the_parameter,
    list_links_are_absolute_and_meta_counts_everything,
    a_request_id_is_returned_and_kept_when_given,
    an_undecodable_path_segment_is_a_json_404,
    a_head_request_is_answered_like_a_get_without_a_body,
    a_nul_character_in_a_filter_is_a_400,
    a_nul_character_in_a_body_is_a_422_pointing_at_it,
    a_date_outside_the_calendar_is_a_400,
    an_overlong_request_number_is_refused,
);

async fn an_unknown_route_answers_a_json_404(app: TestApp) {
    let response = app.get("/v2/containers/nope/route").await;

    assert_eq!(response.status, StatusCode::NOT_FOUND);
    assert_eq!(response.error_member("status"), json!("404"));
}

async fn a_wrong_method_answers_a_json_405(app: TestApp) {
    let response = app
        .request(Method::PUT, "/v2/ports/NLRTM", Some(&app.key), None)
        .await;

    assert_eq!(response.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.error_member("status"), json!("405"));
}

async fn malformed_json_is_a_400_pointing_at_the_body(app: TestApp) {
    let response = app
        .request(
            Method::POST,
            "/v2/api_keys",
            Some(&app.key),
            Some(("application/json", b"{\"data\": ".to_vec())),
        )
        .await;

    assert_eq!(response.status, StatusCode::BAD_REQUEST);
    assert_eq!(response.error_member("code"), json!("malformed_json"));
    assert_eq!(response.error_member("source"), json!({"pointer": ""}));
}

async fn a_body_of_another_resource_type_is_a_409(app: TestApp) {
    let response = app
        .post_json(
            "/v2/api_keys",
            &json!({"data": {"type": "shipment", "attributes": {}}}),
        )
        .await;

    assert_eq!(response.status, StatusCode::CONFLICT);
    assert_eq!(
        response.error_member("source"),
        json!({"pointer": "/data/type"})
    );
}

async fn a_body_that_is_not_json_is_a_415(app: TestApp) {
    let response = app
        .request(
            Method::POST,
            "/v2/api_keys",
            Some(&app.key),
            Some(("text/plain", b"hello".to_vec())),
        )
        .await;

    assert_eq!(response.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(response.error_member("status"), json!("415"));
}

async fn a_body_over_the_limit_is_a_413(app: TestApp) {
    let app = TestApp::with_config(app.backend, &[("max_body_bytes", "64")])
        .await
        .unwrap();
    let padding = "x".repeat(200);

    let response = app
        .post_json(
            "/v2/api_keys",
            &json!({"data": {"type": "api_key", "attributes": {"scope": padding}}}),
        )
        .await;

    assert_eq!(response.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(response.error_member("status"), json!("413"));
}

async fn a_json_api_content_type_is_accepted(app: TestApp) {
    let body = json!({"data": {"type": "api_key", "attributes": {"scope": "read_only"}}});

    let response = app
        .request(
            Method::POST,
            "/v2/api_keys",
            Some(&app.key),
            Some(("application/vnd.api+json", body.to_string().into_bytes())),
        )
        .await;

    assert_eq!(response.status, StatusCode::CREATED);
}

async fn an_invalid_attribute_is_a_422_pointing_at_it(app: TestApp) {
    let response = app
        .post_json(
            "/v2/api_keys",
            &json!({"data": {"type": "api_key", "attributes": {"scope": "admin"}}}),
        )
        .await;

    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(response.error_member("status"), json!("422"));
    assert_eq!(
        response.error_member("source"),
        json!({"pointer": "/data/attributes/scope"})
    );
}

async fn a_body_without_data_is_a_422(app: TestApp) {
    let response = app
        .post_json("/v2/api_keys", &json!({"scope": "read_only"}))
        .await;

    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(response.error_member("source"), json!({"pointer": "/data"}));
}

async fn a_zero_page_size_is_a_400_naming_the_parameter(app: TestApp) {
    let response = app.get("/v2/ports?page[size]=0").await;

    assert_eq!(response.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        response.error_member("source"),
        json!({"parameter": "page[size]"})
    );
}

async fn a_non_integer_page_number_is_a_400_naming_the_parameter(app: TestApp) {
    let response = app.get("/v2/ports?page%5Bnumber%5D=abc").await;

    assert_eq!(response.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        response.error_member("source"),
        json!({"parameter": "page[number]"})
    );
}

async fn an_unknown_include_is_a_400_naming_the_parameter(app: TestApp) {
    let response = app.get("/v2/ports/NLRTM?include=invalid_relation").await;

    assert_eq!(response.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        response.error_member("source"),
        json!({"parameter": "include"})
    );
}

async fn list_links_are_absolute_and_meta_counts_everything(app: TestApp) {
    let response = app
        .get("/v2/ports?filter[country_code]=NL&page[size]=2&page[number]=2")
        .await;

    let body = response.json();
    assert_eq!(response.status, StatusCode::OK);
    let total = body["meta"]["total"].as_u64().unwrap();
    assert!(total > 4, "the Netherlands has more than four ports");
    assert_eq!(body["meta"]["size"], json!(2));
    assert_eq!(body["data"].as_array().unwrap().len(), 2);
    for link in ["self", "first", "prev", "next", "last"] {
        let url = body["links"][link].as_str().unwrap();
        assert!(
            url.starts_with("http://tidemark.test/v2/ports?"),
            "{link}: {url}"
        );
    }
    assert!(
        body["links"]["next"]
            .as_str()
            .unwrap()
            .contains("page%5Bnumber%5D=3")
    );
    assert!(
        body["links"]["next"]
            .as_str()
            .unwrap()
            .contains("filter%5Bcountry_code%5D=NL")
    );
}

async fn a_request_id_is_returned_and_kept_when_given(app: TestApp) {
    let generated = app.get("/v2/ports/NLRTM").await;
    let given = app
        .send(
            axum::http::Request::get("/healthz")
                .header("x-request-id", "trace-me-42")
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;

    assert!(
        generated
            .header("x-request-id")
            .is_some_and(|id| !id.is_empty())
    );
    assert_eq!(given.header("x-request-id"), Some("trace-me-42"));
}

async fn an_undecodable_path_segment_is_a_json_404(app: TestApp) {
    let response = app.get("/v2/ports/%FF%FE").await;

    assert_eq!(response.status, StatusCode::NOT_FOUND);
    assert_eq!(response.error_member("status"), json!("404"));
}

async fn a_head_request_is_answered_like_a_get_without_a_body(app: TestApp) {
    let response = app
        .request(Method::HEAD, "/v2/ports/NLRTM", Some(&app.key), None)
        .await;

    assert_eq!(response.status, StatusCode::OK);
    assert!(response.body.is_empty());
}

async fn a_nul_character_in_a_filter_is_a_400(app: TestApp) {
    let response = app.get("/v2/tracking_requests?filter[scac]=%00").await;

    assert_eq!(
        response.status,
        StatusCode::BAD_REQUEST,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    assert_eq!(
        response.error_member("source"),
        json!({"parameter": "filter[scac]"})
    );
}

async fn a_nul_character_in_a_body_is_a_422_pointing_at_it(app: TestApp) {
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": "MAEU123456",
                "scac": "MAEU", "ref_numbers": ["a\u{0}b"]
            }}}),
        )
        .await;

    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        response.error_member("source"),
        json!({"pointer": "/data/attributes/ref_numbers/0"})
    );
}

async fn a_date_outside_the_calendar_is_a_400(app: TestApp) {
    let response = app
        .get("/v2/tracking_requests?filter[created_at][start]=-200000-01-01T00:00:00Z")
        .await;

    assert_eq!(response.status, StatusCode::BAD_REQUEST);
}

async fn an_overlong_request_number_is_refused(app: TestApp) {
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": "M".repeat(500), "scac": "MAEU"
            }}}),
        )
        .await;

    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(response.error_member("code"), json!("too_long"));
}
