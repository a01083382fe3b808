//! The console's browser-side defences: the headers every console page and `/docs` is sent
//! with (a Content-Security-Policy without inline script, no framing, no referrer to other
//! sites, no type sniffing), pages with nothing inline for the policy to refuse, and
//! documents that are never opened by the browser in Tidemark's origin.

use axum::http::{Method, StatusCode};

use crate::console::document_pages::{multipart, send_multipart};
use crate::console::{csrf_of, page, sign_in, text, tracked_shipment_page};
use crate::helpers::{TestApp, TestResponse};
use crate::on_both_backends;

on_both_backends!(
    every_console_page_and_the_docs_have_a_policy_without_inline_script,
    no_console_page_or_the_docs_may_be_framed,
    console_pages_and_the_docs_send_referrers_only_to_their_own_origin,
    console_pages_and_the_docs_forbid_type_sniffing,
    console_pages_and_the_docs_carry_no_inline_script_or_style,
    the_layout_tells_htmx_to_add_no_style_and_evaluate_no_code,
    a_pdf_is_sent_as_an_attachment_even_when_asked_inline,
    a_pdf_documents_page_previews_its_text_and_frames_no_file,
    an_image_previews_inline_as_an_image,
    the_api_sends_a_pdf_only_as_an_attachment,
);

/// Every kind of page the console answers, and `/docs`, with the responses to check.
async fn every_page(app: &TestApp) -> Vec<(String, TestResponse)> {
    let cookie = sign_in(app, &app.key).await;
    let shipment = tracked_shipment_page(app, &cookie).await;
    let document = uploaded_pdf(app, &cookie, &["BILL OF LADING"]).await;
    let mut paths: Vec<String> = [
        "/",
        "/board/rows",
        "/track",
        "/documents",
        "/webhooks",
        "/custom-fields",
        "/api-keys",
        "/carriers",
        "/documents/00000000-0000-0000-0000-000000000000",
    ]
    .iter()
    .map(|p| (*p).to_owned())
    .collect();
    paths.push(shipment);
    paths.push(document);
    let mut responses = Vec::new();
    for path in paths {
        let response = page(app, &path, &cookie).await;
        responses.push((path, response));
    }
    for path in ["/sign-in", "/docs"] {
        let response = app.request(Method::GET, path, None, None).await;
        assert_eq!(response.status, StatusCode::OK, "{path}");
        responses.push((path.to_owned(), response));
    }
    responses
}

/// The value of `directive` in a policy (`script-src 'self'` → `'self'`).
fn directive<'a>(policy: &'a str, directive: &str) -> Option<&'a str> {
    policy.split(';').map(str::trim).find_map(|d| {
        d.strip_prefix(directive)
            .filter(|rest| rest.is_empty() || rest.starts_with(' '))
            .map(str::trim)
    })
}

async fn every_console_page_and_the_docs_have_a_policy_without_inline_script(app: TestApp) {
    for (path, response) in every_page(&app).await {
        let policy = response
            .header("content-security-policy")
            .unwrap_or_else(|| panic!("{path}: no Content-Security-Policy"));
        assert_eq!(directive(policy, "default-src"), Some("'none'"), "{path}");
        assert_eq!(directive(policy, "script-src"), Some("'self'"), "{path}");
        assert_eq!(directive(policy, "base-uri"), Some("'none'"), "{path}");
        assert_eq!(directive(policy, "form-action"), Some("'self'"), "{path}");
        assert!(!policy.contains("unsafe-inline"), "{path}: {policy}");
        assert!(!policy.contains("unsafe-eval"), "{path}: {policy}");
    }
}

async fn no_console_page_or_the_docs_may_be_framed(app: TestApp) {
    for (path, response) in every_page(&app).await {
        let policy = response.header("content-security-policy").unwrap();
        assert_eq!(
            directive(policy, "frame-ancestors"),
            Some("'none'"),
            "{path}"
        );
        assert_eq!(response.header("x-frame-options"), Some("DENY"), "{path}");
    }
}

async fn console_pages_and_the_docs_send_referrers_only_to_their_own_origin(app: TestApp) {
    for (path, response) in every_page(&app).await {
        assert_eq!(
            response.header("referrer-policy"),
            Some("same-origin"),
            "{path}"
        );
    }
}

async fn console_pages_and_the_docs_forbid_type_sniffing(app: TestApp) {
    for (path, response) in every_page(&app).await {
        assert_eq!(
            response.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
    }
}

async fn console_pages_and_the_docs_carry_no_inline_script_or_style(app: TestApp) {
    for (path, response) in every_page(&app).await {
        let html = text(&response);
        // Every <script> loads a file; no <style> element, no style attribute, no handler.
        for (at, _) in html.match_indices("<script") {
            let tag = &html[at..][..html[at..].find('>').unwrap()];
            assert!(tag.contains(" src=\"/assets/"), "{path}: {tag}");
        }
        for inline in [
            "<style",
            " style=",
            " onload=",
            " onerror=",
            " onclick=",
            "javascript:",
        ] {
            assert!(!html.contains(inline), "{path}: {inline} in {html}");
        }
    }
}

async fn the_layout_tells_htmx_to_add_no_style_and_evaluate_no_code(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let html = text(&page(&app, "/", &cookie).await);
    let start = html.find("<meta name=\"htmx-config\" content=\"").unwrap();
    let tag = &html[start..][..html[start..].find('>').unwrap()];
    for setting in [
        "&quot;includeIndicatorStyles&quot;:false",
        "&quot;allowEval&quot;:false",
        "&quot;allowScriptTags&quot;:false",
    ] {
        assert!(tag.contains(setting), "{setting} missing in {tag}");
    }
    // The config comes before htmx reads it.
    assert!(start < html.find("/assets/htmx-").unwrap());
}

/// Uploads a PDF with these lines through the console and reads it; its page's path.
async fn uploaded_pdf(app: &TestApp, cookie: &str, lines: &[&str]) -> String {
    uploaded_file(app, cookie, "bl.pdf", &crate::documents::pdf(lines)).await
}

async fn uploaded_file(app: &TestApp, cookie: &str, name: &str, bytes: &[u8]) -> String {
    let csrf = csrf_of(&text(&page(app, "/documents", cookie).await));
    let body = multipart(&csrf, name, "application/octet-stream", bytes);
    let response = send_multipart(app, "/documents", cookie, body).await;
    assert_eq!(
        response.status,
        StatusCode::SEE_OTHER,
        "{}",
        text(&response)
    );
    app.run_pending_jobs().await;
    response.header("location").unwrap().to_owned()
}

async fn a_pdf_is_sent_as_an_attachment_even_when_asked_inline(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let path = uploaded_pdf(&app, &cookie, &["ARRIVAL NOTICE"]).await;
    for file in [format!("{path}/file"), format!("{path}/file?inline=1")] {
        let response = page(&app, &file, &cookie).await;
        assert_eq!(response.status, StatusCode::OK, "{file}");
        assert_eq!(response.header("content-type"), Some("application/pdf"));
        let disposition = response.header("content-disposition").unwrap();
        assert!(
            disposition.starts_with("attachment"),
            "{file}: {disposition}"
        );
        let policy = response.header("content-security-policy").unwrap();
        assert!(policy.split(';').any(|d| d.trim() == "sandbox"), "{policy}");
        assert_eq!(response.header("x-content-type-options"), Some("nosniff"));
    }
}

async fn a_pdf_documents_page_previews_its_text_and_frames_no_file(app: TestApp) {
    let cookie = sign_in(&app, &app.key).await;
    let path = uploaded_pdf(&app, &cookie, &["ARRIVAL NOTICE", "Vessel <b>EVER</b>"]).await;
    let html = text(&page(&app, &path, &cookie).await);
    for framing in ["<iframe", "<object", "<embed", "?inline=1"] {
        assert!(!html.contains(framing), "{framing} in {html}");
    }
    let start = html.find("<pre class=\"preview-text\"").unwrap();
    let preview = &html[start..][..html[start..].find("</pre>").unwrap()];
    assert!(preview.contains("ARRIVAL NOTICE"), "{preview}");
    assert!(
        preview.contains("Vessel &lt;b&gt;EVER&lt;/b&gt;"),
        "the text is escaped: {preview}"
    );
}

async fn an_image_previews_inline_as_an_image(app: TestApp) {
    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";
    let cookie = sign_in(&app, &app.key).await;
    let path = uploaded_file(&app, &cookie, "scan.png", PNG).await;
    let html = text(&page(&app, &path, &cookie).await);
    assert!(
        html.contains(&format!(
            "<img class=\"preview\" src=\"{path}/file?inline=1\""
        )),
        "{html}"
    );
    let image = page(&app, &format!("{path}/file?inline=1"), &cookie).await;
    assert_eq!(image.header("content-type"), Some("image/png"));
    assert!(
        image
            .header("content-disposition")
            .unwrap()
            .starts_with("inline")
    );
    assert_eq!(image.header("x-content-type-options"), Some("nosniff"));
}

async fn the_api_sends_a_pdf_only_as_an_attachment(app: TestApp) {
    let id = crate::documents::uploaded(&app, "bl.pdf", &crate::documents::pdf(&["X"]), &[]).await;
    let signed = app
        .get_ok(&format!("/v2/documents/{id}/download_url"))
        .await;
    let link = signed["download_url"].as_str().unwrap();
    let signed_path = &link[link.find("/v2/").unwrap()..];
    let downloads = [
        app.get(&format!("/v2/documents/{id}/download")).await,
        app.request(Method::GET, signed_path, None, None).await,
    ];
    for response in downloads {
        assert_eq!(response.status, StatusCode::OK);
        assert_eq!(response.header("content-type"), Some("application/pdf"));
        let disposition = response.header("content-disposition").unwrap();
        assert!(disposition.starts_with("attachment"), "{disposition}");
        let policy = response.header("content-security-policy").unwrap();
        assert!(policy.split(';').any(|d| d.trim() == "sandbox"), "{policy}");
        assert_eq!(response.header("x-content-type-options"), Some("nosniff"));
    }
}
