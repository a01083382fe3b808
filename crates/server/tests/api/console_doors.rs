//! The console is a door like the API (issue 30): its sessions end on sign-out, its requests
//! count against the key's rate limits and the address's failed sign-ins, and it shares the
//! API's timeouts, logs and metrics. Also what read-only keys and the carriers' push
//! callback may learn.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::console::{csrf_of, encoded, form, page, sign_in, text};
use crate::helpers::{TestApp, TestResponse};
use crate::hostile::{sent_from, served, until_closed};
use crate::on_both_backends;

// ---- sessions ---------------------------------------------------------------------------

async fn a_cookie_copied_before_sign_out_opens_no_page_after_it(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let copy = cookie.clone();
    let csrf = csrf_of(&text(&page(&app, "/", &cookie).await));

    let signed_out = form(&app, "/sign-out", Some(&cookie), &format!("csrf={csrf}")).await;
    let board = page(&app, "/", &copy).await;
    let key_form = form(
        &app,
        "/api-keys",
        Some(&copy),
        &format!("csrf={csrf}&scope=read_write"),
    )
    .await;

    assert_eq!(signed_out.status, StatusCode::SEE_OTHER);
    assert_eq!(board.status, StatusCode::SEE_OTHER);
    assert_eq!(board.header("location"), Some("/sign-in"));
    assert_eq!(key_form.status, StatusCode::SEE_OTHER);
    assert_eq!(key_form.header("location"), Some("/sign-in"));
}

async fn signing_out_ends_only_that_session(app: TestApp) {
    let first = sign_in(&app, &app.key).await;
    app.clock.advance(chrono::Duration::seconds(5));
    let second = sign_in(&app, &app.key).await;
    let csrf = csrf_of(&text(&page(&app, "/", &first).await));

    form(&app, "/sign-out", Some(&first), &format!("csrf={csrf}")).await;

    assert_eq!(page(&app, "/", &second).await.status, StatusCode::OK);
}

on_both_backends!(
    a_cookie_copied_before_sign_out_opens_no_page_after_it,
    signing_out_ends_only_that_session,
);

// ---- rate limits ------------------------------------------------------------------------

mod key_limits {
    use super::*;

    on_both_backends!(
        settings = &[("rate_limit_per_minute", "3")];
        console_pages_count_against_the_keys_rate_limit,
        the_console_and_the_api_share_one_budget_per_key,
        numbers_submitted_on_the_track_form_count_as_tracking_requests,
    );
}

async fn console_pages_count_against_the_keys_rate_limit(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    for _ in 0..3 {
        assert_eq!(page(&app, "/", &cookie).await.status, StatusCode::OK);
    }

    let over = page(&app, "/", &cookie).await;

    assert_eq!(over.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(over.header("retry-after").is_some());
    assert!(text(&over).contains("Too many requests"), "{}", text(&over));
    app.clock.advance(chrono::Duration::minutes(2));
    assert_eq!(page(&app, "/", &cookie).await.status, StatusCode::OK);
}

async fn the_console_and_the_api_share_one_budget_per_key(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    for _ in 0..3 {
        page(&app, "/", &cookie).await;
    }

    let api = app.get("/v2/shipments").await;

    assert_eq!(api.status, StatusCode::TOO_MANY_REQUESTS);
}

async fn numbers_submitted_on_the_track_form_count_as_tracking_requests(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let csrf = csrf_of(&text(&page(&app, "/track", &cookie).await));
    let pasted: String = (0..5).map(|n| format!("TEST-TR-SUCCEEDED-{n}\n")).collect();

    let response = form(
        &app,
        "/track",
        Some(&cookie),
        &format!(
            "csrf={csrf}&numbers={}&scac=TEST&request_type=bill_of_lading",
            encoded(&pasted)
        ),
    )
    .await;

    let html = text(&response);
    assert_eq!(
        html.matches("Not submitted: at most 3 tracking requests")
            .count(),
        2,
        "{html}"
    );
    let stored = app.get("/v2/tracking_requests").await.json();
    assert_eq!(stored["data"].as_array().unwrap().len(), 3);
}

async fn sign_in_from(app: &TestApp, address: &str, key: &str) -> TestResponse {
    let request = Request::builder()
        .method(Method::POST)
        .uri("/sign-in")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(format!("api_key={}", encoded(key))))
        .unwrap();
    sent_from(app, address, request).await
}

mod failed_sign_ins {
    use super::*;

    on_both_backends!(
        settings = &[("unauthenticated_rate_limit_per_minute", "3")];
        an_address_that_keeps_failing_to_sign_in_gets_429_whatever_key_it_sends,
        failed_sign_ins_and_failed_api_keys_count_together,
    );
}

async fn an_address_that_keeps_failing_to_sign_in_gets_429_whatever_key_it_sends(app: TestApp) {
    let attacker = "198.51.100.7:40000";
    for guess in 0..3 {
        let refused = sign_in_from(&app, attacker, &format!("tmk_guess{guess}")).await;
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    }

    let fourth = sign_in_from(&app, attacker, "tmk_guess4").await;
    let with_the_right_key = sign_in_from(&app, attacker, &app.key).await;
    let someone_else = sign_in_from(&app, "203.0.113.9:40000", &app.key).await;

    assert_eq!(fourth.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(text(&fourth).contains("Too many refused sign-ins"));
    assert_eq!(with_the_right_key.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(someone_else.status, StatusCode::SEE_OTHER);
    app.clock.advance(chrono::Duration::minutes(2));
    assert_eq!(
        sign_in_from(&app, attacker, &app.key).await.status,
        StatusCode::SEE_OTHER
    );
}

async fn failed_sign_ins_and_failed_api_keys_count_together(app: TestApp) {
    let attacker = "198.51.100.8:40000";
    for guess in 0..3 {
        sign_in_from(&app, attacker, &format!("tmk_guess{guess}")).await;
    }
    let api = Request::builder()
        .uri("/v2/shipments")
        .header(header::AUTHORIZATION, format!("Token {}", app.key))
        .body(Body::empty())
        .unwrap();

    let response = sent_from(&app, attacker, api).await;

    assert_eq!(response.status, StatusCode::TOO_MANY_REQUESTS);
}

// ---- the shared layers ------------------------------------------------------------------

mod short_request_timeout {
    use super::*;

    on_both_backends!(
        settings = &[
            ("request_timeout_seconds", "1"),
            ("request_body_timeout_seconds", "1"),
        ];
        a_sign_in_whose_body_never_arrives_is_answered_and_closed,
    );
}

async fn a_sign_in_whose_body_never_arrives_is_answered_and_closed(app: TestApp) {
    let (address, _shutdown) = served(&app).await;
    let mut stalled = Vec::new();
    for _ in 0..20 {
        let mut client = TcpStream::connect(address).await.unwrap();
        client
            .write_all(
                b"POST /sign-in HTTP/1.1\r\nHost: tidemark\r\nAccept: text/html\r\n\
                  Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n",
            )
            .await
            .unwrap();
        stalled.push(client);
    }

    let mut answers = Vec::new();
    for client in &mut stalled {
        answers.push(String::from_utf8_lossy(&until_closed(client).await).into_owned());
    }

    for answer in &answers {
        let status = answer.split(' ').nth(1).unwrap_or("");
        assert!(
            status.starts_with('4') || status.starts_with('5'),
            "a stalled sign-in is refused, not served: {answer}"
        );
        assert!(
            !answer.contains("\"errors\""),
            "the console answers HTML: {answer}"
        );
    }
    let mut after = TcpStream::connect(address).await.unwrap();
    after
        .write_all(b"GET /sign-in HTTP/1.1\r\nHost: tidemark\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    assert!(until_closed(&mut after).await.starts_with(b"HTTP/1.1 200"));
}

async fn console_requests_are_counted_in_the_metrics(app: TestApp) {
    app.request(Method::GET, "/sign-in", None, None).await;

    let metrics = app.request(Method::GET, "/metrics", None, None).await;

    let text = String::from_utf8_lossy(&metrics.body);
    assert!(text.contains("route=\"/sign-in\""), "{text}");
}

async fn console_answers_carry_a_request_id(app: TestApp) {
    let response = app.request(Method::GET, "/sign-in", None, None).await;

    assert!(response.header("x-request-id").is_some());
}

async fn a_console_form_over_the_body_limit_is_refused(app: TestApp) {
    let huge = format!("api_key={}", "a".repeat(2 * 1024 * 1024));

    let response = form(&app, "/sign-in", None, &huge).await;

    assert_eq!(response.status, StatusCode::PAYLOAD_TOO_LARGE);
}

mod shared_layers {
    use super::*;

    on_both_backends!(
        console_requests_are_counted_in_the_metrics,
        console_answers_carry_a_request_id,
        a_console_form_over_the_body_limit_is_refused,
    );
}

// ---- what a read-only key and a stranger may learn --------------------------------------

async fn a_webhook(app: &TestApp) -> String {
    let created = app
        .post_json(
            "/v2/webhooks",
            &json!({"data": {"type": "webhook", "attributes": {
                "url": "https://hooks.example.com/tidemark", "events": ["container.created"],
            }}}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{:?}", created.json());
    created.json()["data"]["id"].as_str().unwrap().to_owned()
}

async fn a_read_only_key_never_reads_a_webhooks_signing_secret(app: TestApp) {
    let id = a_webhook(&app).await;
    let path = format!("/v2/webhooks/{id}");

    let writer = app.request(Method::GET, &path, Some(&app.key), None).await;
    let reader = app
        .request(Method::GET, &path, Some(&app.read_only_key), None)
        .await;
    let listed = app
        .request(Method::GET, "/v2/webhooks", Some(&app.read_only_key), None)
        .await;

    assert!(writer.json()["data"]["attributes"]["secret"].is_string());
    assert!(reader.json()["data"]["attributes"]["secret"].is_null());
    assert!(listed.json()["data"][0]["attributes"]["secret"].is_null());
}

async fn a_read_only_console_never_shows_a_webhooks_signing_secret(app: TestApp) {
    let id = a_webhook(&app).await;
    let secret =
        app.get(&format!("/v2/webhooks/{id}")).await.json()["data"]["attributes"]["secret"]
            .as_str()
            .unwrap()
            .to_owned();
    let reader = sign_in(&app, &app.read_only_key).await;
    let writer = sign_in(&app, &app.key).await;

    let read_only_page = text(&page(&app, &format!("/webhooks/{id}"), &reader).await);
    let writer_page = text(&page(&app, &format!("/webhooks/{id}"), &writer).await);

    assert!(!read_only_page.contains(&secret));
    assert!(writer_page.contains(&secret));
}

async fn the_push_callback_answers_alike_for_unconfigured_and_badly_signed(app: TestApp) {
    let push = |scac: &'static str| {
        Request::post(format!("/callbacks/dcsa/{scac}"))
            .header(header::CONTENT_TYPE, "application/json")
            .header("notification-signature", "sha256=00")
            .body(Body::from("[]"))
            .unwrap()
    };

    let unconfigured = app.send(push("ZZZZ")).await;

    assert_eq!(unconfigured.status, StatusCode::UNAUTHORIZED);
}

mod disclosure {
    use super::*;

    on_both_backends!(
        a_read_only_key_never_reads_a_webhooks_signing_secret,
        a_read_only_console_never_shows_a_webhooks_signing_secret,
        the_push_callback_answers_alike_for_unconfigured_and_badly_signed,
    );
}
