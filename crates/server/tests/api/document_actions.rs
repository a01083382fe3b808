//! Re-running a document's background steps over HTTP: reclassify (optionally to a type
//! the user gives), reextract, relink, and rotating a PDF's pages while keeping the
//! uploaded file.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::documents::{pdf, tracked, upload, uploaded};
use crate::helpers::{TestApp, TestResponse};
use crate::on_both_backends;

on_both_backends!(
    settings = &[("storage_url", "memory://")];
    a_document_reclassified_to_a_given_type_takes_it_and_its_fields,
    a_document_reclassified_without_a_type_is_classified_from_its_text_again,
    reextracting_makes_a_new_representation_and_keeps_type_and_links,
    relinking_links_a_document_to_a_shipment_tracked_after_its_upload,
    rotating_turns_every_page_and_keeps_the_uploaded_file,
    a_pdf_that_cannot_be_rewritten_is_left_as_it_was,
    bad_rotations_are_refused_with_the_reason,
    re_runs_are_refused_for_unknown_documents_types_and_read_only_keys,
);

async fn post(app: &TestApp, path: &str, body: Option<Value>) -> TestResponse {
    app.request(
        Method::POST,
        path,
        Some(&app.key),
        body.map(|b| ("application/json", b.to_string().into_bytes())),
    )
    .await
}

fn assert_accepted(response: &TestResponse) {
    assert_eq!(
        response.status,
        StatusCode::ACCEPTED,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    assert_eq!(response.json(), json!({"status": "accepted"}));
}

/// The document, and its representation when it has one.
async fn shown(app: &TestApp, id: &str) -> (Value, Value) {
    let body = app
        .get(&format!(
            "/v2/documents/{id}?include=last_document_representation"
        ))
        .await
        .json();
    let representation = body["included"]
        .as_array()
        .and_then(|i| i.iter().find(|r| r["type"] == "document_representation"))
        .cloned()
        .unwrap_or(Value::Null);
    (body["data"].clone(), representation)
}

fn arrival_notice() -> Vec<u8> {
    pdf(&[
        "ARRIVAL NOTICE",
        "B/L No: TESTACTS0001",
        "Vessel: EVER GIVEN   Voyage: 012E",
        "ETA: 2026-03-20",
        "Last Free Day: 2026-03-25",
    ])
}

async fn a_document_reclassified_to_a_given_type_takes_it_and_its_fields(app: TestApp) {
    let id = uploaded(&app, "notice.pdf", &arrival_notice(), &[]).await;
    app.run_pending_jobs().await;
    assert_eq!(
        shown(&app, &id).await.0["attributes"]["document_type"],
        "arrival_notice"
    );

    let response = post(
        &app,
        &format!("/v2/documents/{id}/reclassify"),
        Some(json!({"document_type": "commercial_invoice"})),
    )
    .await;
    assert_accepted(&response);
    app.run_pending_jobs().await;

    let (document, representation) = shown(&app, &id).await;
    assert_eq!(
        document["attributes"]["document_type"],
        "commercial_invoice"
    );
    assert!(
        document["attributes"]["classification_notes"]
            .as_str()
            .unwrap()
            .contains("by the user")
    );
    let payload = &representation["attributes"]["payload"];
    assert_eq!(payload["document_schema"], "commercial_invoice@2026-03-01");
    assert!(payload["fields"].get("invoice_number").is_some());
    assert_eq!(payload["fields"]["vessel_name"], "EVER GIVEN");
}

async fn a_document_reclassified_without_a_type_is_classified_from_its_text_again(app: TestApp) {
    let id = uploaded(&app, "notice.pdf", &arrival_notice(), &[]).await;
    app.run_pending_jobs().await;
    let given = post(
        &app,
        &format!("/v2/documents/{id}/reclassify"),
        Some(json!({"data": {"attributes": {"document_type": "packing_list"}}})),
    )
    .await;
    assert_accepted(&given);
    app.run_pending_jobs().await;
    assert_eq!(
        shown(&app, &id).await.0["attributes"]["document_type"],
        "packing_list"
    );

    let again = post(&app, &format!("/v2/documents/{id}/reclassify"), None).await;
    assert_accepted(&again);
    app.run_pending_jobs().await;

    let (document, representation) = shown(&app, &id).await;
    assert_eq!(document["attributes"]["document_type"], "arrival_notice");
    assert_eq!(
        representation["attributes"]["payload"]["fields"]["last_free_day"],
        "2026-03-25"
    );
}

async fn reextracting_makes_a_new_representation_and_keeps_type_and_links(app: TestApp) {
    let (shipment_id, _) = tracked(&app, "TESTACTS0001").await;
    let id = uploaded(&app, "notice.pdf", &arrival_notice(), &[]).await;
    app.run_pending_jobs().await;
    let (before, first) = shown(&app, &id).await;
    assert_eq!(
        before["relationships"]["shipments"]["data"][0]["id"],
        shipment_id.as_str()
    );

    let response = post(&app, &format!("/v2/documents/{id}/reextract"), None).await;
    assert_accepted(&response);
    app.run_pending_jobs().await;

    let (after, second) = shown(&app, &id).await;
    assert_ne!(first["id"], second["id"]);
    assert_eq!(after["attributes"]["document_type"], "arrival_notice");
    assert_eq!(
        after["relationships"]["shipments"],
        before["relationships"]["shipments"]
    );
    assert_eq!(
        second["attributes"]["payload"]["fields"]["eta"],
        "2026-03-20"
    );
}

async fn relinking_links_a_document_to_a_shipment_tracked_after_its_upload(app: TestApp) {
    let id = uploaded(&app, "notice.pdf", &arrival_notice(), &[]).await;
    app.run_pending_jobs().await;
    let (before, representation) = shown(&app, &id).await;
    assert_eq!(before["relationships"]["shipments"]["data"], json!([]));
    let (shipment_id, _) = tracked(&app, "TESTACTS0001").await;

    let response = post(&app, &format!("/v2/documents/{id}/relink"), None).await;
    assert_accepted(&response);
    app.run_pending_jobs().await;

    let (after, kept) = shown(&app, &id).await;
    assert_eq!(
        after["relationships"]["shipments"]["data"][0]["id"],
        shipment_id.as_str()
    );
    assert_eq!(kept["id"], representation["id"]);
}

fn page_rotations(bytes: &[u8]) -> Vec<i64> {
    let document = lopdf::Document::load_mem(bytes).expect("a PDF");
    document
        .get_pages()
        .into_values()
        .map(|page| tidemark_documents::rotate::inherited_rotation(&document, page))
        .collect()
}

async fn rotating_turns_every_page_and_keeps_the_uploaded_file(app: TestApp) {
    let original = pdf(&["BILL OF LADING", "B/L No: TESTACTS0002"]);
    let id = uploaded(&app, "sideways.pdf", &original, &[]).await;
    app.run_pending_jobs().await;

    let response = post(
        &app,
        &format!("/v2/documents/{id}/rotate"),
        Some(json!({"degrees": 90})),
    )
    .await;
    assert_accepted(&response);
    app.run_pending_jobs().await;

    let rotated = app.get(&format!("/v2/documents/{id}/download")).await;
    assert_eq!(rotated.status, StatusCode::OK);
    assert_eq!(page_rotations(&rotated.body), [90]);
    let document = app.get(&format!("/v2/documents/{id}")).await.json()["data"].clone();
    assert_eq!(
        document["attributes"]["file_size_bytes"],
        rotated.body.len()
    );
    let account = app
        .app
        .store
        .account_by_name("acme")
        .await
        .unwrap()
        .unwrap()
        .id;
    let kept_key = tidemark_server::use_cases::documents::filename::storage_key(
        account.0,
        id.parse().unwrap(),
        "pdf",
    );
    assert_eq!(app.app.documents.get(&kept_key).await.unwrap(), original);

    let again = post(
        &app,
        &format!("/v2/documents/{id}/rotate"),
        Some(json!({"degrees": 270})),
    )
    .await;
    assert_accepted(&again);
    app.run_pending_jobs().await;

    let turned_back = app.get(&format!("/v2/documents/{id}/download")).await;
    assert_eq!(page_rotations(&turned_back.body), [0]);
    assert_eq!(app.app.documents.get(&kept_key).await.unwrap(), original);
}

async fn bad_rotations_are_refused_with_the_reason(app: TestApp) {
    let id = uploaded(&app, "bl.pdf", &pdf(&["BILL OF LADING"]), &[]).await;
    let path = format!("/v2/documents/{id}/rotate");

    let odd = post(&app, &path, Some(json!({"degrees": 45}))).await;
    assert_eq!(odd.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(odd.error_member("source")["pointer"], "/degrees");
    let missing = post(&app, &path, None).await;
    assert_eq!(missing.status, StatusCode::UNPROCESSABLE_ENTITY);
    let text_degrees = post(&app, &path, Some(json!({"degrees": "90"}))).await;
    assert_eq!(text_degrees.status, StatusCode::UNPROCESSABLE_ENTITY);
    let malformed = app
        .request(
            Method::POST,
            &path,
            Some(&app.key),
            Some(("application/json", b"{degrees".to_vec())),
        )
        .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    let form = app
        .request(
            Method::POST,
            &path,
            Some(&app.key),
            Some(("text/plain", b"degrees=90".to_vec())),
        )
        .await;
    assert_eq!(form.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let note = upload(&app, "note.txt", "text/plain", b"BILL OF LADING", &[]).await;
    let note_id = note.json()["data"]["id"].as_str().unwrap().to_owned();
    let not_pdf = post(
        &app,
        &format!("/v2/documents/{note_id}/rotate"),
        Some(json!({"degrees": 90})),
    )
    .await;
    assert_eq!(not_pdf.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(not_pdf.error_member("code"), "not_rotatable");
}

async fn re_runs_are_refused_for_unknown_documents_types_and_read_only_keys(app: TestApp) {
    let id = uploaded(&app, "bl.pdf", &pdf(&["BILL OF LADING"]), &[]).await;
    let unknown = "01890000-0000-7000-8000-000000000009";
    for action in ["reclassify", "reextract", "relink", "rotate"] {
        let missing = post(
            &app,
            &format!("/v2/documents/{unknown}/{action}"),
            Some(json!({"degrees": 90})),
        )
        .await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND, "{action}");
        let read_only = app
            .request(
                Method::POST,
                &format!("/v2/documents/{id}/{action}"),
                Some(&app.read_only_key),
                Some(("application/json", br#"{"degrees": 90}"#.to_vec())),
            )
            .await;
        assert_eq!(read_only.status, StatusCode::FORBIDDEN, "{action}");
        let other = app.other_account_key().await;
        let foreign = app
            .request(
                Method::POST,
                &format!("/v2/documents/{id}/{action}"),
                Some(&other),
                Some(("application/json", br#"{"degrees": 90}"#.to_vec())),
            )
            .await;
        assert_eq!(foreign.status, StatusCode::NOT_FOUND, "{action}");
    }
    let poem = post(
        &app,
        &format!("/v2/documents/{id}/reclassify"),
        Some(json!({"document_type": "poem"})),
    )
    .await;
    assert_eq!(poem.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(poem.error_member("source")["pointer"], "/document_type");
}

async fn a_pdf_that_cannot_be_rewritten_is_left_as_it_was(app: TestApp) {
    let broken = b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 9 0 R >> endobj\n%%EOF\n".to_vec();
    let id = uploaded(&app, "broken.pdf", &broken, &[]).await;
    app.run_pending_jobs().await;

    let response = post(
        &app,
        &format!("/v2/documents/{id}/rotate"),
        Some(json!({"degrees": 180})),
    )
    .await;
    assert_accepted(&response);
    app.run_pending_jobs().await;

    let downloaded = app.get(&format!("/v2/documents/{id}/download")).await;
    assert_eq!(downloaded.status, StatusCode::OK);
    assert_eq!(downloaded.body, broken);
    // The worker is still there: the next job runs.
    let again = post(&app, &format!("/v2/documents/{id}/reextract"), None).await;
    assert_accepted(&again);
    assert_eq!(app.run_pending_jobs().await, 1);
}
