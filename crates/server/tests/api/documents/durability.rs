//! Documents across crashes, restarts, processes and time: classification queued with the
//! document, expired direct uploads removed, signed links that hold in every process, and
//! idempotent uploads as large as a document may be.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::Duration;
use serde_json::{Value, json};
use tidemark_domain::{Clock, SequentialIds};
use tidemark_server::parts::documents::storage::StorageError;
use tidemark_server::{App, Config};
use tidemark_store::StoreError;
use uuid::Uuid;

use super::{BOUNDARY, form, pdf, put_bytes, start_direct_upload, text, uploaded};
use crate::helpers::{TestApp, TestResponse, send_to};
use crate::on_both_backends;

on_both_backends!(
    settings = &[("storage_url", "memory://")];
    an_uploaded_document_has_its_classification_queued_before_anything_runs,
    a_direct_upload_left_unattached_is_removed_once_its_signed_id_expired,
    links_signed_by_one_process_hold_in_another_over_the_same_database,
    an_idempotent_upload_larger_than_a_json_body_is_stored_once,
);

/// `POST /v2/documents` naming a direct upload.
async fn attach(app: &TestApp, signed_id: &Value) -> TestResponse {
    app.post_json(
        "/v2/documents",
        &json!({"data": {"type": "document", "attributes": {"attached_document": signed_id}}}),
    )
    .await
}

/// Starts a direct upload and PUTs its bytes; returns the upload's id and signed id.
async fn direct_upload(app: &TestApp, file_name: &str, bytes: &[u8]) -> (Uuid, Value) {
    let started = start_direct_upload(app, file_name, bytes).await;
    let put = put_bytes(
        app,
        started["direct_upload"]["url"].as_str().unwrap(),
        bytes,
    )
    .await;
    assert_eq!(put.status, StatusCode::NO_CONTENT, "{}", text(&put));
    (
        started["id"].as_str().unwrap().parse().unwrap(),
        started["signed_id"].clone(),
    )
}

/// Whether the direct upload still has its row and its bytes.
async fn upload_kept(app: &TestApp, id: Uuid, storage_key: &str) -> (bool, bool) {
    let row = match app.app.store.direct_upload(id).await {
        Ok(_) => true,
        Err(StoreError::NotFound) => false,
        Err(error) => panic!("{error}"),
    };
    let bytes = match app.app.documents.get(storage_key).await {
        Ok(_) => true,
        Err(StorageError::NotFound) => false,
        Err(error) => panic!("{error}"),
    };
    (row, bytes)
}

async fn an_uploaded_document_has_its_classification_queued_before_anything_runs(app: TestApp) {
    let form_id = uploaded(&app, "bl.pdf", &pdf(&["BILL OF LADING"]), &[]).await;
    let (_, signed_id) = direct_upload(&app, "an.pdf", &pdf(&["ARRIVAL NOTICE"])).await;
    let attached = attach(&app, &signed_id).await;
    assert_eq!(attached.status, StatusCode::CREATED, "{}", text(&attached));
    let direct_id = attached.json()["data"]["id"].clone();

    let queued = app
        .app
        .store
        .claim_jobs(app.clock.now(), Duration::minutes(1), 10)
        .await
        .unwrap();

    let mut documents: Vec<(String, Value)> = queued
        .iter()
        .map(|job| (job.kind.clone(), job.payload["document_id"].clone()))
        .collect();
    documents.sort_by_key(|(_, id)| id.to_string());
    let mut expected = vec![
        ("process_document".to_owned(), json!(form_id)),
        ("process_document".to_owned(), direct_id),
    ];
    expected.sort_by_key(|(_, id)| id.to_string());
    assert_eq!(documents, expected);
}

async fn a_direct_upload_left_unattached_is_removed_once_its_signed_id_expired(app: TestApp) {
    let (abandoned, abandoned_signed_id) =
        direct_upload(&app, "abandoned.pdf", &pdf(&["ABANDONED"])).await;
    let (late, late_signed_id) = direct_upload(&app, "late.pdf", &pdf(&["LATE"])).await;
    let never_put = start_direct_upload(&app, "never.pdf", &pdf(&["NEVER SENT"])).await;
    let never_put: Uuid = never_put["id"].as_str().unwrap().parse().unwrap();
    let attached_bytes = pdf(&["ATTACHED"]);
    let (_, attached_signed_id) = direct_upload(&app, "attached.pdf", &attached_bytes).await;
    let document = attach(&app, &attached_signed_id).await;
    assert_eq!(document.status, StatusCode::CREATED, "{}", text(&document));
    let document_id = document.json()["data"]["id"].as_str().unwrap().to_owned();
    let key_of = |id: Uuid| {
        let store = Arc::clone(&app.app.store);
        async move { store.direct_upload(id).await.unwrap().storage_key }
    };
    let (abandoned_key, late_key) = (key_of(abandoned).await, key_of(late).await);

    // The upload URL holds 15 minutes, the signed id a day more: not expired yet.
    app.clock
        .advance(Duration::minutes(15) + Duration::hours(23));
    app.run_housekeeping().await;
    assert_eq!(
        upload_kept(&app, abandoned, &abandoned_key).await,
        (true, true)
    );

    app.clock.advance(Duration::hours(2));
    let too_late = attach(&app, &late_signed_id).await;
    app.run_housekeeping().await;

    assert_eq!(too_late.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(too_late.error_member("code"), "upload_expired");
    assert_eq!(
        upload_kept(&app, abandoned, &abandoned_key).await,
        (false, false)
    );
    assert_eq!(upload_kept(&app, late, &late_key).await, (false, false));
    assert!(matches!(
        app.app.store.direct_upload(never_put).await,
        Err(StoreError::NotFound)
    ));
    let after = attach(&app, &abandoned_signed_id).await;
    assert_eq!(after.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(after.error_member("code"), "not_found");
    let download = app
        .get(&format!("/v2/documents/{document_id}/download"))
        .await;
    assert_eq!(
        download.status,
        StatusCode::OK,
        "an attached upload keeps its bytes"
    );
    assert_eq!(download.body, attached_bytes);
}

async fn links_signed_by_one_process_hold_in_another_over_the_same_database(app: TestApp) {
    let bytes = pdf(&["DELIVERY ORDER"]);
    let id = uploaded(&app, "do.pdf", &bytes, &[]).await;
    let other = app.restarted().router();
    let configured = {
        let config = Config::from_pairs(&[
            ("public_url", "http://tidemark.test"),
            ("storage_url", "memory://"),
            ("signing_secret", "a-configured-secret"),
            (
                "document_extraction_program",
                env!("CARGO_BIN_EXE_tidemark"),
            ),
        ])
        .unwrap();
        let app = App::new(
            config,
            Arc::clone(&app.app.store),
            Arc::clone(&app.clock) as _,
            Arc::new(SequentialIds::starting_after(2_000_000)),
        );
        Arc::new(App {
            documents: app.documents.clone(),
            ..app
        })
        .router()
    };
    let link = app.get(&format!("/v2/documents/{id}/download_url")).await;
    let link = link.json()["download_url"].as_str().unwrap().to_owned();
    let path = link.strip_prefix("http://tidemark.test").unwrap();
    let get = |path: &str| Request::get(path).body(Body::empty()).unwrap();
    let direct = pdf(&["PACKING LIST"]);
    let started = start_direct_upload(&app, "pl.pdf", &direct).await;
    let upload_path = started["direct_upload"]["url"]
        .as_str()
        .unwrap()
        .strip_prefix("http://tidemark.test")
        .unwrap()
        .to_owned();

    let fetched = send_to(&other, get(path)).await;
    let put = send_to(
        &other,
        Request::put(upload_path)
            .header(header::CONTENT_TYPE, "application/pdf")
            .body(Body::from(direct.clone()))
            .unwrap(),
    )
    .await;
    let attached = send_to(
        &other,
        Request::post("/v2/documents")
            .header(header::AUTHORIZATION, format!("Token {}", app.key))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(
                json!({"data": {"type": "document", "attributes": {
                    "attached_document": started["signed_id"]
                }}})
                .to_string(),
            ))
            .unwrap(),
    )
    .await;
    let with_configured_secret = send_to(&configured, get(path)).await;

    assert_eq!(fetched.status, StatusCode::OK, "{}", text(&fetched));
    assert_eq!(fetched.body, bytes);
    assert_eq!(put.status, StatusCode::NO_CONTENT, "{}", text(&put));
    assert_eq!(attached.status, StatusCode::CREATED, "{}", text(&attached));
    assert_eq!(
        with_configured_secret.status,
        StatusCode::FORBIDDEN,
        "a configured secret is used instead of the stored one"
    );
}

async fn an_idempotent_upload_larger_than_a_json_body_is_stored_once(app: TestApp) {
    let big = |line: &str| line.repeat(1_600_000 / line.len()).into_bytes();
    let manifest = big("CARGO MANIFEST line of a long text file\n");
    let other = big("ANOTHER FILE with other text in it, long\n");
    assert!(manifest.len() > app.app.config.max_body_bytes);
    let post = |bytes: &[u8]| {
        Request::post("/v2/documents")
            .header(header::AUTHORIZATION, format!("Token {}", app.key))
            .header(
                header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={BOUNDARY}"),
            )
            .header("Idempotency-Key", "upload-1")
            .body(Body::from(form("manifest.txt", "text/plain", bytes, &[])))
            .unwrap()
    };

    let first = app.send(post(&manifest)).await;
    let retry = app.send(post(&manifest)).await;
    let reused = app.send(post(&other)).await;

    assert_eq!(first.status, StatusCode::CREATED, "{}", text(&first));
    assert_eq!(retry.status, StatusCode::CREATED, "{}", text(&retry));
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
    assert_eq!(retry.json()["data"]["id"], first.json()["data"]["id"]);
    assert_eq!(reused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reused.error_member("code"), "idempotency_key_reused");
    let listed = app.get("/v2/documents").await.json();
    assert_eq!(listed["meta"]["total"], 1);
    let id = first.json()["data"]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        app.get(&format!("/v2/documents/{id}/download")).await.body,
        manifest
    );
}
