//! Operations: health, readiness, metrics, the OpenAPI document, the docs page, and the
//! service on a real socket.

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    health_answers_without_a_key,
    readiness_checks_the_database,
    metrics_count_requests_by_route_and_status,
    metrics_report_the_job_queue,
    the_openapi_document_describes_every_v2_route,
    the_docs_page_is_served_without_external_assets,
    the_service_answers_on_a_real_socket_and_stops_gracefully,
);

async fn health_answers_without_a_key(app: TestApp) {
    let response = app
        .request(axum::http::Method::GET, "/healthz", None, None)
        .await;

    assert_eq!(response.status, StatusCode::OK);
    assert_eq!(response.json(), json!({"status": "ok"}));
}

async fn readiness_checks_the_database(app: TestApp) {
    let response = app
        .request(axum::http::Method::GET, "/readyz", None, None)
        .await;

    assert_eq!(response.status, StatusCode::OK);
    assert_eq!(response.json(), json!({"status": "ready"}));
}

async fn metrics_count_requests_by_route_and_status(app: TestApp) {
    app.get("/v2/ports/NLRTM").await;

    let response = app
        .request(axum::http::Method::GET, "/metrics", None, None)
        .await;

    let text = String::from_utf8(response.body).unwrap();
    assert_eq!(response.status, StatusCode::OK);
    assert!(text.contains("http_requests_total{"), "{text}");
    assert!(text.contains("route=\"/v2/ports/{id}\""), "{text}");
    assert!(
        text.contains("http_request_duration_seconds_bucket"),
        "{text}"
    );
}

async fn metrics_report_the_job_queue(app: TestApp) {
    let response = app
        .request(axum::http::Method::GET, "/metrics", None, None)
        .await;

    let text = String::from_utf8(response.body).unwrap();
    assert!(text.contains("tidemark_jobs_queued"), "{text}");
    assert!(
        text.contains("tidemark_jobs_oldest_due_age_seconds"),
        "{text}"
    );
}

async fn the_openapi_document_describes_every_v2_route(app: TestApp) {
    let response = app
        .request(axum::http::Method::GET, "/v2/openapi.json", None, None)
        .await;

    let spec = response.json();
    assert_eq!(response.status, StatusCode::OK);
    assert!(spec["openapi"].as_str().unwrap().starts_with("3.1"));
    for path in [
        "/v2/ports",
        "/v2/ports/{id}",
        "/v2/shipping_lines",
        "/v2/shipping_lines/{id}",
        "/v2/terminals/{id}",
        "/v2/api_keys",
        "/v2/api_keys/{id}",
        "/v2/tracking_requests",
        "/v2/tracking_requests/{id}",
        "/v2/shipments",
        "/v2/shipments/{id}",
        "/v2/shipments/{id}/stop_tracking",
        "/v2/shipments/{id}/resume_tracking",
        "/v2/containers",
        "/v2/containers/{id}",
        "/v2/containers/{id}/transport_events",
        "/v2/containers/{id}/refresh",
        "/healthz",
        "/readyz",
        "/metrics",
    ] {
        assert!(
            spec["paths"].get(path).is_some(),
            "{path} is not documented"
        );
    }
    assert!(spec["components"]["schemas"].get("ErrorDocument").is_some());
    assert!(spec["components"]["securitySchemes"].get("token").is_some());
}

async fn the_docs_page_is_served_without_external_assets(app: TestApp) {
    let response = app
        .request(axum::http::Method::GET, "/docs", None, None)
        .await;

    let html = String::from_utf8(response.body).unwrap();
    assert_eq!(response.status, StatusCode::OK);
    assert!(html.contains("/v2/openapi.json"));
    assert!(
        !html.contains("https://"),
        "the docs page must work offline"
    );
}

async fn the_service_answers_on_a_real_socket_and_stops_gracefully(app: TestApp) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let server = tokio::spawn(Arc::clone(&app.app).serve(listener, shutdown.clone()));

    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!(
        "GET /v2/ports/NLRTM HTTP/1.1\r\nHost: {address}\r\nAuthorization: Token {}\r\nConnection: close\r\n\r\n",
        app.key
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.unwrap();
    shutdown.cancel();

    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains("\"code\":\"NLRTM\""));
    server.await.unwrap().unwrap();
}
