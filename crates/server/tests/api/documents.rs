//! Documents: uploads (multipart and Terminal49's direct uploads), classification and
//! linking in the background, search, downloads and signed links, edits and deletes.

use axum::http::{Method, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::Duration;
use md5::{Digest, Md5};
use serde_json::{Value, json};

use crate::helpers::{TestApp, TestResponse};
use crate::on_both_backends;

mod durability;

on_both_backends!(
    settings = &[("storage_url", "memory://")];
    a_pdf_bill_of_lading_sent_as_a_form_is_classified_linked_and_downloaded_exactly,
    a_bill_of_lading_uploaded_directly_becomes_a_document,
    documents_are_found_by_file_name_reference_and_type,
    the_same_file_twice_is_a_conflict_naming_the_first,
    bad_uploads_get_clear_errors_and_leave_nothing_behind,
    bad_list_parameters_are_rejected_naming_the_parameter,
    a_direct_upload_must_match_its_size_and_checksum,
    a_signed_download_link_needs_no_key_and_expires,
    a_document_is_renamed_retyped_and_relinked,
    a_deleted_document_is_gone,
    the_document_types_are_listed,
    another_accounts_document_is_not_found,
    a_read_only_key_cannot_upload,
    a_file_without_readable_text_is_announced_as_failed_extraction,
    included_resources_carry_the_account_shipments_cargos_and_extraction,
    lists_are_paged_with_links_and_totals,
);

mod small_limit {
    use super::*;

    on_both_backends!(
        settings = &[("storage_url", "memory://"), ("max_document_bytes", "2000")];
        a_file_over_the_size_limit_is_refused_with_413,
    );

    pub async fn a_file_over_the_size_limit_is_refused_with_413(app: TestApp) {
        let response = upload(&app, "big.txt", "text/plain", &vec![b'a'; 2001], &[]).await;
        assert_eq!(response.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(response.error_member("code"), "payload_too_large");

        let direct = app
            .post_json(
                "/v2/direct_uploads",
                &json!({"blob": {"filename": "big.pdf", "byte_size": 2001,
                    "checksum": checksum(b"x"), "content_type": "application/pdf"}}),
            )
            .await;
        assert_eq!(direct.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(list(&app, "").await["meta"]["total"], 0);
    }
}

/// Documents on the local file system: the bytes are in the directory, named by ids.
#[tokio::test]
async fn documents_are_kept_in_a_local_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("file://{}", dir.path().join("documents").display());
    let app = TestApp::with_config(
        crate::helpers::Backend::Sqlite,
        &[("storage_url", url.as_str())],
    )
    .await
    .expect("SQLite is always available");
    let pdf = pdf(&["BILL OF LADING", "B/L No: TESTLOCAL01"]);

    let created = upload(&app, "../../etc/passwd.pdf", "application/pdf", &pdf, &[]).await;

    assert_eq!(created.status, StatusCode::CREATED, "{}", text(&created));
    let document = created.json()["data"].clone();
    assert_eq!(document["attributes"]["file_name"], "passwd.pdf");
    let id = document["id"].as_str().unwrap();
    let files: Vec<_> = walk(dir.path());
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].ends_with(format!("{id}.pdf")), "{files:?}");
    assert_eq!(std::fs::read(&files[0]).unwrap(), pdf);
    let downloaded = app.get(&format!("/v2/documents/{id}/download")).await;
    assert_eq!(downloaded.body, pdf);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

// ---- helpers ----------------------------------------------------------------------------

fn text(response: &TestResponse) -> String {
    String::from_utf8_lossy(&response.body).into_owned()
}

/// A one-page PDF with these lines of text (uncompressed, Helvetica).
pub(crate) fn pdf(lines: &[&str]) -> Vec<u8> {
    let mut content = String::new();
    let mut y = 800;
    for line in lines {
        let escaped = line
            .replace('\\', "\\\\")
            .replace('(', "\\(")
            .replace(')', "\\)");
        content.push_str(&format!("BT /F1 10 Tf 50 {y} Td ({escaped}) Tj ET\n"));
        y -= 18;
    }
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] \
         /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>"
            .to_owned(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_owned(),
        format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len() + 1
        ),
    ];
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

const BOUNDARY: &str = "tidemark-test-boundary-7MA4YWxk";

/// A multipart body with a `file` part and text parts.
fn form(file_name: &str, content_type: &str, bytes: &[u8], fields: &[(&str, &str)]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: {content_type}\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

async fn upload_with_key(
    app: &TestApp,
    key: &str,
    file_name: &str,
    content_type: &str,
    bytes: &[u8],
    fields: &[(&str, &str)],
) -> TestResponse {
    app.request(
        Method::POST,
        "/v2/documents",
        Some(key),
        Some((
            &format!("multipart/form-data; boundary={BOUNDARY}"),
            form(file_name, content_type, bytes, fields),
        )),
    )
    .await
}

pub(crate) async fn upload(
    app: &TestApp,
    file_name: &str,
    content_type: &str,
    bytes: &[u8],
    fields: &[(&str, &str)],
) -> TestResponse {
    upload_with_key(app, &app.key, file_name, content_type, bytes, fields).await
}

pub(crate) async fn uploaded(
    app: &TestApp,
    file_name: &str,
    bytes: &[u8],
    fields: &[(&str, &str)],
) -> String {
    let response = upload(app, file_name, "application/pdf", bytes, fields).await;
    assert_eq!(response.status, StatusCode::CREATED, "{}", text(&response));
    response.json()["data"]["id"].as_str().unwrap().to_owned()
}

async fn list(app: &TestApp, query: &str) -> Value {
    let response = app.get(&format!("/v2/documents{query}")).await;
    assert_eq!(response.status, StatusCode::OK, "{}", text(&response));
    response.json()
}

fn names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["attributes"]["file_name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

fn checksum(bytes: &[u8]) -> String {
    STANDARD.encode(Md5::digest(bytes))
}

/// A tracked `TEST` shipment: its id and its containers' ids and numbers.
pub(crate) async fn tracked(app: &TestApp, number: &str) -> (String, Vec<(String, String)>) {
    let response = app
        .post_json(
            "/v2/tracking_requests",
            &json!({"data": {"type": "tracking_request", "attributes": {
                "request_type": "bill_of_lading", "request_number": number, "scac": "TEST"
            }}}),
        )
        .await;
    assert_eq!(response.status, StatusCode::CREATED, "{}", text(&response));
    let request_id = response.json()["data"]["id"].as_str().unwrap().to_owned();
    app.tick().await;
    let request = app
        .get(&format!("/v2/tracking_requests/{request_id}"))
        .await
        .json();
    let shipment_id = request["data"]["relationships"]["tracked_object"]["data"]["id"]
        .as_str()
        .expect("the request has a shipment")
        .to_owned();
    let shipment = app
        .get(&format!("/v2/shipments/{shipment_id}?include=containers"))
        .await
        .json();
    let containers = shipment["included"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["type"] == "container")
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["attributes"]["number"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (shipment_id, containers)
}

fn related_ids(document: &Value, relationship: &str) -> Vec<String> {
    document["relationships"][relationship]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Starts a direct upload, returning its response.
async fn start_direct_upload(app: &TestApp, file_name: &str, bytes: &[u8]) -> Value {
    let response = app
        .post_json(
            "/v2/direct_uploads",
            &json!({"blob": {"filename": file_name, "byte_size": bytes.len(),
                "checksum": checksum(bytes), "content_type": "application/pdf"}}),
        )
        .await;
    assert_eq!(response.status, StatusCode::OK, "{}", text(&response));
    response.json()
}

/// PUTs bytes to a signed URL with no API key.
async fn put_bytes(app: &TestApp, url: &str, bytes: &[u8]) -> TestResponse {
    let path = url.strip_prefix("http://tidemark.test").unwrap();
    app.request(
        Method::PUT,
        path,
        None,
        Some(("application/pdf", bytes.to_vec())),
    )
    .await
}

// ---- cases ------------------------------------------------------------------------------

async fn a_pdf_bill_of_lading_sent_as_a_form_is_classified_linked_and_downloaded_exactly(
    app: TestApp,
) {
    let (shipment_id, containers) = tracked(&app, "TESTDOCS0001").await;
    let (container_id, container_number) = containers[0].clone();
    let other = tracked(&app, "TESTDOCS0002").await;
    let bl = pdf(&[
        "BILL OF LADING",
        "B/L No: TESTDOCS0001",
        "Shipper: Acme Manufacturing Ltd, Shanghai",
        "Consignee: Harbor Imports Inc, Los Angeles",
        &format!("Container: {container_number}   Seal: 998877"),
        "Port of Loading: Shanghai   Port of Discharge: Los Angeles",
    ]);

    let created = upload(
        &app,
        "BL TESTDOCS0001.pdf",
        "application/pdf",
        &bl,
        &[("name", "Master BL")],
    )
    .await;

    assert_eq!(created.status, StatusCode::CREATED, "{}", text(&created));
    let document = created.json()["data"].clone();
    let id = document["id"].as_str().unwrap().to_owned();
    assert_eq!(
        created.header("location"),
        Some(format!("http://tidemark.test/v2/documents/{id}").as_str())
    );
    assert_eq!(document["type"], "document");
    assert_eq!(document["attributes"]["name"], "Master BL");
    assert_eq!(document["attributes"]["file_name"], "BL TESTDOCS0001.pdf");
    assert_eq!(
        document["attributes"]["file_content_type"],
        "application/pdf"
    );
    assert_eq!(document["attributes"]["file_size_bytes"], bl.len());
    assert_eq!(document["attributes"]["source"], "upload");
    assert_eq!(document["attributes"]["document_type"], Value::Null);
    assert_eq!(
        document["links"]["download"],
        format!("http://tidemark.test/v2/documents/{id}/download")
    );

    app.run_pending_jobs().await;

    let shown = app.get(&format!("/v2/documents/{id}")).await.json()["data"].clone();
    assert_eq!(shown["attributes"]["document_type"], "bill_of_lading");
    assert!(
        shown["attributes"]["classification_notes"]
            .as_str()
            .is_some_and(|n| !n.is_empty())
    );
    assert_eq!(
        related_ids(&shown, "shipments"),
        std::slice::from_ref(&shipment_id)
    );
    assert!(!related_ids(&shown, "shipments").contains(&other.0));
    assert_eq!(related_ids(&shown, "cargos"), [container_id]);
    assert_eq!(
        shown["relationships"]["last_document_representation"]["data"]["type"],
        "document_representation"
    );

    let downloaded = app.get(&format!("/v2/documents/{id}/download")).await;
    assert_eq!(downloaded.status, StatusCode::OK);
    assert_eq!(downloaded.body, bl);
    assert_eq!(downloaded.header("content-type"), Some("application/pdf"));
    assert_eq!(downloaded.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(
        downloaded.header("content-disposition"),
        Some(
            "attachment; filename=\"BL TESTDOCS0001.pdf\"; filename*=UTF-8''BL%20TESTDOCS0001.pdf"
        )
    );

    let events = app
        .app
        .store
        .domain_events(
            app.app
                .store
                .account_by_name("acme")
                .await
                .unwrap()
                .unwrap()
                .id,
            None,
            1000,
        )
        .await
        .unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.event == "document.extracted" && e.reference_id.to_string() == id)
    );
}

async fn a_bill_of_lading_uploaded_directly_becomes_a_document(app: TestApp) {
    let (shipment_id, _) = tracked(&app, "TESTDOCS0003").await;
    let bl = pdf(&["BILL OF LADING", "B/L No: TESTDOCS0003"]);

    let started = start_direct_upload(&app, "direct-bl.pdf", &bl).await;
    let url = started["direct_upload"]["url"].as_str().unwrap();
    assert_eq!(
        started["direct_upload"]["headers"]["Content-MD5"],
        checksum(&bl)
    );
    let put = put_bytes(&app, url, &bl).await;
    assert_eq!(put.status, StatusCode::NO_CONTENT, "{}", text(&put));
    let created = app
        .post_json(
            "/v2/documents",
            &json!({"data": {"type": "document", "attributes": {
                "name": "Direct BL", "attached_document": started["signed_id"]
            }}}),
        )
        .await;

    assert_eq!(created.status, StatusCode::CREATED, "{}", text(&created));
    let document = created.json()["data"].clone();
    assert_eq!(document["attributes"]["source"], "api");
    assert_eq!(document["attributes"]["name"], "Direct BL");
    assert_eq!(document["attributes"]["file_name"], "direct-bl.pdf");
    assert_eq!(document["attributes"]["file_size_bytes"], bl.len());
    let id = document["id"].as_str().unwrap();
    assert_eq!(
        app.get(&format!("/v2/documents/{id}/download")).await.body,
        bl
    );
    app.run_pending_jobs().await;
    let shown = app.get(&format!("/v2/documents/{id}")).await.json()["data"].clone();
    assert_eq!(shown["attributes"]["document_type"], "bill_of_lading");
    assert_eq!(related_ids(&shown, "shipments"), [shipment_id]);

    // One upload makes one document.
    let again = app
        .post_json(
            "/v2/documents",
            &json!({"data": {"type": "document", "attributes": {
                "attached_document": started["signed_id"]
            }}}),
        )
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    // A forged signed id names nothing.
    let forged = started["signed_id"].as_str().unwrap().replace("--", "--00");
    let forged = app
        .post_json(
            "/v2/documents",
            &json!({"data": {"type": "document", "attributes": {"attached_document": forged}}}),
        )
        .await;
    assert_eq!(forged.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        forged.error_member("source")["pointer"],
        "/data/attributes/attached_document"
    );
}

async fn documents_are_found_by_file_name_reference_and_type(app: TestApp) {
    let (shipment_id, containers) = tracked(&app, "TESTDOCS0004").await;
    let bl = uploaded(
        &app,
        "Bill of Lading TESTDOCS0004.pdf",
        &pdf(&["BILL OF LADING", "B/L No: TESTDOCS0004"]),
        &[],
    )
    .await;
    let notice = uploaded(
        &app,
        "arrival-notice.pdf",
        &pdf(&[
            "ARRIVAL NOTICE",
            "Last free day: 2026-04-07",
            "Freight charges due",
        ]),
        &[],
    )
    .await;
    uploaded(&app, "misc.pdf", &pdf(&["Hello"]), &[]).await;
    app.run_pending_jobs().await;
    // The notice mentions no number; link it by hand to the container.
    let linked = app
        .request(
            Method::PATCH,
            &format!("/v2/documents/{notice}"),
            Some(&app.key),
            Some((
                "application/json",
                json!({"data": {"type": "document", "relationships": {
                    "cargos": {"data": [{"type": "container", "id": containers[0].0}]}
                }}})
                .to_string()
                .into_bytes(),
            )),
        )
        .await;
    assert_eq!(linked.status, StatusCode::OK, "{}", text(&linked));

    assert_eq!(
        names(&list(&app, "?filter[filename]=lading").await),
        ["Bill of Lading TESTDOCS0004.pdf"]
    );
    assert_eq!(
        names(&list(&app, "?filter[filename]=ARRIVAL%20not").await),
        ["arrival-notice.pdf"]
    );
    assert_eq!(
        list(&app, "?filter[filename]=nothing").await["meta"]["total"],
        0
    );
    assert_eq!(
        names(&list(&app, "?filter[reference]=testdocs0004").await),
        ["Bill of Lading TESTDOCS0004.pdf", "arrival-notice.pdf"]
    );
    assert_eq!(
        names(&list(&app, &format!("?filter[reference]={}", containers[0].1)).await),
        ["Bill of Lading TESTDOCS0004.pdf", "arrival-notice.pdf"]
    );
    let by_type = list(
        &app,
        "?filter[document_types]=bill_of_lading,arrival_notice",
    )
    .await;
    assert_eq!(
        names(&by_type),
        ["Bill of Lading TESTDOCS0004.pdf", "arrival-notice.pdf"]
    );
    assert_eq!(by_type["meta"]["total"], 2);
    let sorted = list(&app, "?sort=document_type").await;
    let types: Vec<&str> = sorted["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["attributes"]["document_type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["arrival_notice", "bill_of_lading", "unknown"]);
    let shown = app.get(&format!("/v2/documents/{bl}")).await.json()["data"].clone();
    assert_eq!(related_ids(&shown, "shipments"), [shipment_id]);
}

async fn the_same_file_twice_is_a_conflict_naming_the_first(app: TestApp) {
    let bytes = pdf(&["BILL OF LADING", "B/L No: TESTDUP0001"]);
    let first = uploaded(&app, "first.pdf", &bytes, &[]).await;

    let again = upload(&app, "second.pdf", "application/pdf", &bytes, &[]).await;

    assert_eq!(again.status, StatusCode::CONFLICT);
    assert_eq!(again.error_member("code"), "duplicate_document");
    assert_eq!(again.json()["meta"]["existing_document_id"], first);
    assert_eq!(again.error_member("meta")["existing_document_id"], first);
    // Directly uploaded, the same content is a duplicate too.
    let started = start_direct_upload(&app, "third.pdf", &bytes).await;
    put_bytes(
        &app,
        started["direct_upload"]["url"].as_str().unwrap(),
        &bytes,
    )
    .await;
    let direct = app
        .post_json(
            "/v2/documents",
            &json!({"data": {"type": "document", "attributes": {
                "attached_document": started["signed_id"]
            }}}),
        )
        .await;
    assert_eq!(direct.status, StatusCode::CONFLICT);
    assert_eq!(direct.json()["meta"]["existing_document_id"], first);
    // Another account may hold the same file.
    let other = app.other_account_key().await;
    let theirs = upload_with_key(&app, &other, "first.pdf", "application/pdf", &bytes, &[]).await;
    assert_eq!(theirs.status, StatusCode::CREATED);
    assert_eq!(list(&app, "").await["meta"]["total"], 1);
}

async fn bad_uploads_get_clear_errors_and_leave_nothing_behind(app: TestApp) {
    let cases: Vec<(TestResponse, StatusCode, &str, &str)> = vec![
        (
            upload(
                &app,
                "page.pdf",
                "application/pdf",
                b"<html><script>alert(1)</script></html>",
                &[],
            )
            .await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "unsupported_file_type",
            "/file",
        ),
        (
            upload(
                &app,
                "tool.exe",
                "application/octet-stream",
                b"MZ\x90\x00\x03\x00\x00\x00",
                &[],
            )
            .await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "unsupported_file_type",
            "/file",
        ),
        (
            upload(&app, "empty.pdf", "application/pdf", b"", &[]).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "unsupported_file_type",
            "/file",
        ),
        (
            upload(
                &app,
                "a.pdf",
                "application/pdf",
                &pdf(&["x"]),
                &[("shipment_ids", "not-an-id")],
            )
            .await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_found",
            "/shipment_ids",
        ),
        (
            upload(
                &app,
                "a.pdf",
                "application/pdf",
                &pdf(&["x"]),
                &[("container_ids", "01890000-0000-7000-8000-000000000001")],
            )
            .await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_found",
            "/container_ids",
        ),
    ];
    for (response, status, code, pointer) in cases {
        assert_eq!(response.status, status, "{}", text(&response));
        assert_eq!(response.error_member("code"), code, "{}", text(&response));
        assert_eq!(response.error_member("source")["pointer"], pointer);
    }
    let no_file = app
        .request(
            Method::POST,
            "/v2/documents",
            Some(&app.key),
            Some((
                &format!("multipart/form-data; boundary={BOUNDARY}"),
                format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx\r\n--{BOUNDARY}--\r\n")
                    .into_bytes(),
            )),
        )
        .await;
    assert_eq!(no_file.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(no_file.error_member("source")["pointer"], "/file");
    let broken = app
        .request(
            Method::POST,
            "/v2/documents",
            Some(&app.key),
            Some((
                &format!("multipart/form-data; boundary={BOUNDARY}"),
                b"--nonsense".to_vec(),
            )),
        )
        .await;
    assert_eq!(broken.status, StatusCode::BAD_REQUEST, "{}", text(&broken));
    let plain = app
        .request(
            Method::POST,
            "/v2/documents",
            Some(&app.key),
            Some(("text/plain", b"hello".to_vec())),
        )
        .await;
    assert_eq!(plain.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let no_attachment = app
        .post_json(
            "/v2/documents",
            &json!({"data": {"type": "document", "attributes": {"name": "x"}}}),
        )
        .await;
    assert_eq!(no_attachment.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        no_attachment.error_member("source")["pointer"],
        "/data/attributes/attached_document"
    );
    assert_eq!(list(&app, "").await["meta"]["total"], 0);
}

async fn bad_list_parameters_are_rejected_naming_the_parameter(app: TestApp) {
    for (query, parameter) in [
        ("page[size]=0", "page[size]"),
        ("page[number]=-1", "page[number]"),
        ("page[number]=two", "page[number]"),
        ("page[size]=1.5", "page[size]"),
        ("include=invalid_relation", "include"),
        ("sort=name", "sort"),
        (
            "filter[document_types]=bill_of_lading,poem",
            "filter[document_types]",
        ),
        ("filter[filename]=...", "filter[filename]"),
    ] {
        let response = app.get(&format!("/v2/documents?{query}")).await;
        assert_eq!(response.status, StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(
            response.error_member("source")["parameter"],
            parameter,
            "{query}"
        );
    }
}

async fn a_direct_upload_must_match_its_size_and_checksum(app: TestApp) {
    let bytes = pdf(&["PACKING LIST"]);
    let started = start_direct_upload(&app, "list.pdf", &bytes).await;
    let url = started["direct_upload"]["url"].as_str().unwrap().to_owned();

    let mut tampered = bytes.clone();
    tampered[20] ^= 1;
    let wrong_checksum = put_bytes(&app, &url, &tampered).await;
    assert_eq!(wrong_checksum.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(wrong_checksum.error_member("code"), "checksum_mismatch");
    let short = put_bytes(&app, &url, &bytes[..10]).await;
    assert_eq!(short.error_member("code"), "byte_size_mismatch");
    let unsigned = put_bytes(&app, &url.replace("signature=", "signature=00"), &bytes).await;
    assert_eq!(unsigned.status, StatusCode::FORBIDDEN);

    let too_early = app
        .post_json(
            "/v2/documents",
            &json!({"data": {"type": "document", "attributes": {
                "attached_document": started["signed_id"]
            }}}),
        )
        .await;
    assert_eq!(too_early.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(too_early.error_member("code"), "upload_incomplete");

    assert_eq!(
        put_bytes(&app, &url, &bytes).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        put_bytes(&app, &url, &bytes).await.status,
        StatusCode::CONFLICT
    );

    let invalid = app
        .post_json(
            "/v2/direct_uploads",
            &json!({"blob": {"filename": "", "byte_size": 0, "checksum": "nope"}}),
        )
        .await;
    assert_eq!(invalid.status, StatusCode::UNPROCESSABLE_ENTITY);
    let pointers: Vec<&str> = invalid.json()["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["source"]["pointer"].as_str().unwrap())
        .collect::<Vec<_>>()
        .into_iter()
        .map(|p| match p {
            "/blob/filename" => "filename",
            "/blob/byte_size" => "byte_size",
            "/blob/checksum" => "checksum",
            other => panic!("unexpected pointer {other}"),
        })
        .collect();
    assert_eq!(pointers, ["filename", "byte_size", "checksum"]);

    // An upload URL expires.
    let later = start_direct_upload(&app, "later.pdf", &pdf(&["LATER"])).await;
    app.clock.advance(Duration::hours(2));
    let expired = put_bytes(
        &app,
        later["direct_upload"]["url"].as_str().unwrap(),
        &pdf(&["LATER"]),
    )
    .await;
    assert_eq!(expired.status, StatusCode::FORBIDDEN);
}

async fn a_signed_download_link_needs_no_key_and_expires(app: TestApp) {
    let bytes = pdf(&["DELIVERY ORDER"]);
    let id = uploaded(&app, "do.pdf", &bytes, &[]).await;

    let response = app.get(&format!("/v2/documents/{id}/download_url")).await;
    assert_eq!(response.status, StatusCode::OK);
    let url = response.json()["download_url"].as_str().unwrap().to_owned();
    let path = url.strip_prefix("http://tidemark.test").unwrap().to_owned();

    let fetched = app.request(Method::GET, &path, None, None).await;
    assert_eq!(fetched.status, StatusCode::OK);
    assert_eq!(fetched.body, bytes);
    let tampered = app
        .request(
            Method::GET,
            &path.replace("signature=", "signature=1"),
            None,
            None,
        )
        .await;
    assert_eq!(tampered.status, StatusCode::FORBIDDEN);
    let unsigned = app
        .request(
            Method::GET,
            &format!("/v2/documents/{id}/content"),
            None,
            None,
        )
        .await;
    assert_eq!(unsigned.status, StatusCode::FORBIDDEN);
    let without_key = app
        .request(
            Method::GET,
            &format!("/v2/documents/{id}/download"),
            None,
            None,
        )
        .await;
    assert_eq!(without_key.status, StatusCode::UNAUTHORIZED);

    app.clock.advance(Duration::minutes(16));
    let expired = app.request(Method::GET, &path, None, None).await;
    assert_eq!(expired.status, StatusCode::FORBIDDEN);
}

async fn a_document_is_renamed_retyped_and_relinked(app: TestApp) {
    let (shipment_id, _) = tracked(&app, "TESTDOCS0005").await;
    let id = uploaded(&app, "scan.pdf", &pdf(&["Hello"]), &[]).await;
    let patch = |body: Value| {
        let app = &app;
        let id = id.clone();
        async move {
            app.request(
                Method::PATCH,
                &format!("/v2/documents/{id}"),
                Some(&app.key),
                Some(("application/json", body.to_string().into_bytes())),
            )
            .await
        }
    };

    let updated = patch(json!({"data": {"type": "document",
        "attributes": {"name": "Customs entry", "document_type_manual": "customs_entry"},
        "relationships": {"shipments": {"data": [{"type": "shipment", "id": shipment_id}]}}}}))
    .await;

    assert_eq!(updated.status, StatusCode::OK, "{}", text(&updated));
    let document = updated.json()["data"].clone();
    assert_eq!(document["attributes"]["name"], "Customs entry");
    assert_eq!(
        document["attributes"]["document_type_manual"],
        "customs_entry"
    );
    assert_eq!(
        related_ids(&document, "shipments"),
        std::slice::from_ref(&shipment_id)
    );
    assert_eq!(
        names(&list(&app, "?filter[document_types]=customs_entry").await),
        ["scan.pdf"]
    );

    let bad_type = patch(json!({"data": {"type": "document",
        "attributes": {"document_type_manual": "poem"}}}))
    .await;
    assert_eq!(bad_type.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        bad_type.error_member("source")["pointer"],
        "/data/attributes/document_type_manual"
    );
    let bad_link = patch(json!({"data": {"type": "document", "relationships": {
        "shipments": {"data": [{"type": "shipment", "id": "01890000-0000-7000-8000-000000000009"}]}}}}))
    .await;
    assert_eq!(bad_link.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        bad_link.error_member("source")["pointer"],
        "/data/relationships/shipments/data/0/id"
    );
    let unlinked = patch(json!({"data": {"type": "document",
        "attributes": {"document_type_manual": null},
        "relationships": {"shipments": {"data": []}}}}))
    .await;
    let document = unlinked.json()["data"].clone();
    assert_eq!(document["attributes"]["document_type_manual"], Value::Null);
    assert!(related_ids(&document, "shipments").is_empty());
    assert_eq!(document["attributes"]["name"], "Customs entry");
    let wrong_type = patch(json!({"data": {"type": "shipment"}})).await;
    assert_eq!(wrong_type.status, StatusCode::CONFLICT);
}

async fn a_deleted_document_is_gone(app: TestApp) {
    let id = uploaded(&app, "gone.pdf", &pdf(&["GONE"]), &[]).await;

    let deleted = app
        .request(
            Method::DELETE,
            &format!("/v2/documents/{id}"),
            Some(&app.key),
            None,
        )
        .await;

    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(
        app.get(&format!("/v2/documents/{id}")).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.get(&format!("/v2/documents/{id}/download"))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(list(&app, "").await["meta"]["total"], 0);
    let again = app
        .request(
            Method::DELETE,
            &format!("/v2/documents/{id}"),
            Some(&app.key),
            None,
        )
        .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    assert_eq!(
        app.get("/v2/documents/not-a-uuid").await.status,
        StatusCode::NOT_FOUND
    );
}

async fn the_document_types_are_listed(app: TestApp) {
    let response = app.get("/v2/documents/types").await;

    assert_eq!(response.status, StatusCode::OK);
    let types = response.json()["document_types"].clone();
    let codes: Vec<&str> = types
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["code"].as_str().unwrap())
        .collect();
    for code in [
        "bill_of_lading",
        "arrival_notice",
        "commercial_invoice",
        "packing_list",
        "delivery_order",
        "unknown",
    ] {
        assert!(codes.contains(&code), "{code}");
    }
    assert_eq!(types[0]["label"], "Bill of Lading");
}

async fn another_accounts_document_is_not_found(app: TestApp) {
    let id = uploaded(&app, "mine.pdf", &pdf(&["MINE"]), &[]).await;
    let other = app.other_account_key().await;

    for path in [
        format!("/v2/documents/{id}"),
        format!("/v2/documents/{id}/download"),
        format!("/v2/documents/{id}/download_url"),
    ] {
        let response = app.request(Method::GET, &path, Some(&other), None).await;
        assert_eq!(response.status, StatusCode::NOT_FOUND, "{path}");
    }
    let deleted = app
        .request(
            Method::DELETE,
            &format!("/v2/documents/{id}"),
            Some(&other),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NOT_FOUND);
    let listed = app
        .request(Method::GET, "/v2/documents", Some(&other), None)
        .await
        .json();
    assert_eq!(listed["meta"]["total"], 0);
}

async fn a_read_only_key_cannot_upload(app: TestApp) {
    let key = app.read_only_key.clone();
    let response = upload_with_key(&app, &key, "a.pdf", "application/pdf", &pdf(&["x"]), &[]).await;

    assert_eq!(response.status, StatusCode::FORBIDDEN);
    assert_eq!(
        app.request(Method::GET, "/v2/documents", Some(&key), None)
            .await
            .status,
        StatusCode::OK
    );
}

async fn a_file_without_readable_text_is_announced_as_failed_extraction(app: TestApp) {
    // A PNG: accepted, but no text can be read from it (no OCR).
    let mut png =
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
            .to_vec();
    png.extend_from_slice(&[0; 64]);
    let response = upload(&app, "BL_scan.png", "image/png", &png, &[]).await;
    assert_eq!(response.status, StatusCode::CREATED, "{}", text(&response));
    let id = response.json()["data"]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        response.json()["data"]["attributes"]["file_content_type"],
        "image/png"
    );

    app.run_pending_jobs().await;

    let shown = app.get(&format!("/v2/documents/{id}")).await.json()["data"].clone();
    assert_eq!(shown["attributes"]["document_type"], "unknown");
    assert!(
        shown["attributes"]["classification_notes"]
            .as_str()
            .unwrap()
            .contains("No text could be read")
    );
    assert_eq!(
        shown["relationships"]["last_document_representation"]["data"],
        Value::Null
    );
    let account = app
        .app
        .store
        .account_by_name("acme")
        .await
        .unwrap()
        .unwrap()
        .id;
    let events = app
        .app
        .store
        .domain_events(account, None, 1000)
        .await
        .unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.event == "document.extraction_failed" && e.reference_id.to_string() == id)
    );
}

async fn included_resources_carry_the_account_shipments_cargos_and_extraction(app: TestApp) {
    let (shipment_id, containers) = tracked(&app, "TESTDOCS0006").await;
    let id = uploaded(
        &app,
        "bl.pdf",
        &pdf(&[
            "BILL OF LADING",
            "B/L No: TESTDOCS0006",
            &format!("Container {}", containers[0].1),
        ]),
        &[],
    )
    .await;
    app.run_pending_jobs().await;

    let shown = app
        .get(&format!(
            "/v2/documents/{id}?include=account,user,shipments,cargos,current_extraction,email_submission"
        ))
        .await;

    assert_eq!(shown.status, StatusCode::OK, "{}", text(&shown));
    let included = shown.json()["included"].as_array().unwrap().clone();
    let of_type = |kind: &str| -> Vec<Value> {
        included
            .iter()
            .filter(|r| r["type"] == kind)
            .cloned()
            .collect()
    };
    assert_eq!(of_type("account")[0]["attributes"]["company_name"], "acme");
    assert_eq!(of_type("user").len(), 1);
    assert_eq!(of_type("shipment")[0]["id"], shipment_id);
    assert_eq!(of_type("container")[0]["id"], containers[0].0);
    let extraction = &of_type("document_representation")[0];
    assert_eq!(
        extraction["attributes"]["payload"]["container_numbers"][0],
        containers[0].1
    );
    assert_eq!(
        extraction["attributes"]["payload"]["document_type"],
        "bill_of_lading"
    );
    let listed = list(&app, "?include=last_document_representation").await;
    assert_eq!(listed["included"].as_array().unwrap().len(), 1);
}

async fn lists_are_paged_with_links_and_totals(app: TestApp) {
    for n in 0..5 {
        uploaded(
            &app,
            &format!("doc{n}.pdf"),
            &pdf(&[&format!("DOC {n}")]),
            &[],
        )
        .await;
        app.clock.advance(Duration::seconds(1));
    }

    let page = list(&app, "?page[size]=2&page[number]=2").await;

    let listed: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["attributes"]["file_name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["doc2.pdf", "doc1.pdf"]);
    assert_eq!(page["meta"]["total"], 5);
    assert_eq!(page["meta"]["size"], 2);
    for link in ["first", "last", "next", "prev", "self"] {
        assert!(page["links"][link].is_string(), "{link}");
    }
    assert!(
        page["links"]["last"]
            .as_str()
            .unwrap()
            .contains("page%5Bnumber%5D=3")
    );
    let oldest = list(&app, "?sort=created_at&page[size]=1").await;
    assert_eq!(oldest["data"][0]["attributes"]["file_name"], "doc0.pdf");
}

mod notifications {
    use super::*;

    on_both_backends!(
        settings = &[("storage_url", "memory://"), ("webhooks_allow_private", "true")];
        a_classified_document_notifies_webhooks_subscribed_to_document_events,
    );

    pub async fn a_classified_document_notifies_webhooks_subscribed_to_document_events(
        app: TestApp,
    ) {
        let webhook = app
            .post_json(
                "/v2/webhooks",
                &json!({"data": {"type": "webhook", "attributes": {
                    "url": "http://127.0.0.1:9/hook",
                    "events": ["document.extracted", "document.extraction_failed"],
                }}}),
            )
            .await;
        assert_eq!(webhook.status, StatusCode::CREATED, "{}", text(&webhook));
        let id = uploaded(
            &app,
            "bl.pdf",
            &pdf(&["BILL OF LADING", "B/L No: TESTHOOK01"]),
            &[],
        )
        .await;

        app.run_pending_jobs().await;

        let notifications = app
            .get("/v2/webhook_notifications?filter[event]=document.extracted")
            .await
            .json();
        let data = notifications["data"].as_array().unwrap();
        assert_eq!(data.len(), 1, "{notifications}");
        assert_eq!(data[0]["relationships"]["document"]["data"]["id"], id);
        assert_eq!(
            data[0]["relationships"]["document"]["data"]["type"],
            "document"
        );
        let failed = app
            .get("/v2/webhook_notifications?filter[event]=document.extraction_failed")
            .await
            .json();
        assert_eq!(failed["data"].as_array().unwrap().len(), 0);
    }
}
