//! Files of numbers on the Track page (issue 30, finding 2): a spreadsheet is read by the
//! real extraction child, its declared sizes checked before anything is allocated from
//! them, and a hostile one answers a 422 naming the limit while the server keeps answering.

use std::io::Write as _;

use axum::http::StatusCode;
use tidemark_server::limits::ExtractionLimits;
use tidemark_server::parts::documents::isolate::Extractor;
use tidemark_server::use_cases::documents::spreadsheet::SheetError;
use tidemark_server::use_cases::documents::text::ExtractError;

use crate::console::document_pages::{multipart, send_multipart};
use crate::console::{csrf_of, page, sign_in, text};
use crate::helpers::{TestApp, TestResponse};
use crate::on_both_backends;

const MIB: u64 = 1024 * 1024;

on_both_backends!(
    a_spreadsheet_declaring_a_quadrillion_shared_strings_is_refused_naming_the_limit,
    a_spreadsheet_declaring_rows_to_xfd1048576_is_refused_naming_the_row_limit,
    a_spreadsheet_with_cells_at_a1_and_cv100000_is_refused_naming_the_row_limit,
    a_spreadsheet_declaring_too_many_columns_is_refused_naming_the_column_limit,
    a_small_spreadsheet_with_shared_strings_tracks_each_number_from_its_first_column,
);

const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";

/// A one-sheet workbook (deflated, as spreadsheet programs write it) of this sheet XML and,
/// when given, this shared-strings XML.
fn workbook(sheet: &str, shared_strings: Option<&str>) -> Vec<u8> {
    let mut parts = vec![
        ("[Content_Types].xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/><Default Extension=\"xml\" ContentType=\"application/xml\"/><Override PartName=\"/xl/workbook.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/><Override PartName=\"/xl/worksheets/sheet1.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/></Types>".to_owned()),
        ("_rels/.rels", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"xl/workbook.xml\"/></Relationships>".to_owned()),
        ("xl/workbook.xml", format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><workbook xmlns=\"{MAIN}\" xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"><sheets><sheet name=\"Numbers\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>")),
        ("xl/_rels/workbook.xml.rels", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet\" Target=\"worksheets/sheet1.xml\"/></Relationships>".to_owned()),
        ("xl/worksheets/sheet1.xml", format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><worksheet xmlns=\"{MAIN}\">{sheet}</worksheet>")),
    ];
    if let Some(strings) = shared_strings {
        parts.push((
            "xl/sharedStrings.xml",
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>{strings}"),
        ));
    }
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, content) in parts {
        zip.start_file(name, options).unwrap();
        zip.write_all(content.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// An inline-string cell.
fn cell(name: &str, value: &str) -> String {
    format!("<c r=\"{name}\" t=\"inlineStr\"><is><t>{value}</t></is></c>")
}

/// The finding's first file: a shared-strings table declaring 10^15 strings (calamine
/// reserved room for them all: 24 PB).
fn quadrillion_strings() -> Vec<u8> {
    workbook(
        "<dimension ref=\"A1\"/><sheetData><row r=\"1\"><c r=\"A1\" t=\"s\"><v>0</v></c></row></sheetData>",
        Some(&format!(
            "<sst xmlns=\"{MAIN}\" count=\"1000000000000000\" uniqueCount=\"1000000000000000\"><si><t>TEST-TR-SUCCEEDED</t></si></sst>"
        )),
    )
}

/// The finding's second file: cells at A1 and XFD1048576, the whole grid declared (a dense
/// range of them is 550 GB).
fn whole_grid() -> Vec<u8> {
    workbook(
        &format!(
            "<dimension ref=\"A1:XFD1048576\"/><sheetData><row r=\"1\">{}</row><row r=\"1048576\"><c r=\"XFD1048576\"><v>1</v></c></row></sheetData>",
            cell("A1", "TEST-TR-SUCCEEDED")
        ),
        None,
    )
}

/// The finding's third file: cells at A1 and CV100000 and no dimension declared, so only
/// the cells themselves say how far the sheet reaches.
fn hundred_thousand_rows() -> Vec<u8> {
    workbook(
        &format!(
            "<sheetData><row r=\"1\">{}</row><row r=\"100000\"><c r=\"CV100000\"><v>1</v></c></row></sheetData>",
            cell("A1", "TEST-TR-SUCCEEDED")
        ),
        None,
    )
}

async fn upload(app: &TestApp, cookie: &str, bytes: &[u8]) -> TestResponse {
    let csrf = csrf_of(&text(&page(app, "/track", cookie).await));
    let body = multipart(&csrf, "numbers.xlsx", "application/octet-stream", bytes);
    send_multipart(app, "/track/upload", cookie, body).await
}

/// This test process's peak resident memory (the server's, here).
fn own_peak_memory() -> u64 {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .expect("getrusage");
    // Linux reports kilobytes.
    u64::try_from(usage.max_rss()).unwrap() * 1024
}

/// Uploads a hostile file: refused with a 422 page whose alert says `message`, nothing
/// tracked, the server's memory unmoved, and the Track page still answering.
async fn refused_naming(app: &TestApp, bytes: &[u8], message: &str) {
    assert!(bytes.len() < 4096, "a small file: {} bytes", bytes.len());
    let cookie = sign_in(app, &app.key).await;
    let before = own_peak_memory();

    let response = upload(app, &cookie, bytes).await;

    let html = text(&response);
    assert_eq!(response.status, StatusCode::UNPROCESSABLE_ENTITY, "{html}");
    assert!(html.contains("role=\"alert\""), "{html}");
    assert!(html.contains(message), "{html}");
    // Other tests share this process: a margin, far below what the file asked for.
    assert!(own_peak_memory() < before + 256 * MIB);
    assert_eq!(page(app, "/track", &cookie).await.status, StatusCode::OK);
    let list = app.get("/v2/tracking_requests").await.json();
    assert_eq!(list["data"].as_array().unwrap().len(), 0);
}

async fn a_spreadsheet_declaring_a_quadrillion_shared_strings_is_refused_naming_the_limit(
    app: TestApp,
) {
    refused_naming(
        &app,
        &quadrillion_strings(),
        "the spreadsheet declares 1,000,000,000,000,000 shared strings; at most 1,000,000 are read.",
    )
    .await;
}

async fn a_spreadsheet_declaring_rows_to_xfd1048576_is_refused_naming_the_row_limit(app: TestApp) {
    refused_naming(
        &app,
        &whole_grid(),
        "the spreadsheet declares 1,048,576 rows (A1:XFD1048576); at most 10,000 are read.",
    )
    .await;
}

async fn a_spreadsheet_with_cells_at_a1_and_cv100000_is_refused_naming_the_row_limit(app: TestApp) {
    refused_naming(
        &app,
        &hundred_thousand_rows(),
        "the spreadsheet has cells in 100,000 rows (A1 to CV100000); at most 10,000 are read.",
    )
    .await;
}

async fn a_spreadsheet_declaring_too_many_columns_is_refused_naming_the_column_limit(app: TestApp) {
    let wide = workbook(
        &format!(
            "<dimension ref=\"A1:XFD1\"/><sheetData><row r=\"1\">{}<c r=\"XFD1\"><v>1</v></c></row></sheetData>",
            cell("A1", "TEST-TR-SUCCEEDED")
        ),
        None,
    );
    refused_naming(
        &app,
        &wide,
        "the spreadsheet declares 16,384 columns (A1:XFD1); at most 256 are read.",
    )
    .await;
}

async fn a_small_spreadsheet_with_shared_strings_tracks_each_number_from_its_first_column(
    app: TestApp,
) {
    // The data starts at B2, as a sheet with a margin: its first column is B.
    let sheet = "<dimension ref=\"B2:C4\"/><sheetData>\
        <row r=\"2\"><c r=\"B2\" t=\"s\"><v>0</v></c><c r=\"C2\" t=\"s\"><v>1</v></c></row>\
        <row r=\"3\"><c r=\"B3\" t=\"s\"><v>2</v></c><c r=\"C3\" t=\"s\"><v>3</v></c></row>\
        <row r=\"4\"><c r=\"B4\" t=\"s\"><v>4</v></c></row></sheetData>";
    let strings = format!(
        "<sst xmlns=\"{MAIN}\" count=\"5\" uniqueCount=\"5\"><si><t>Number</t></si><si><t>Carrier</t></si><si><t>TEST-TR-SUCCEEDED</t></si><si><t>TEST</t></si><si><t>TEST-TR-SUCCEEDED-2</t></si></sst>"
    );
    let cookie = sign_in(&app, &app.key).await;

    let response = upload(&app, &cookie, &workbook(sheet, Some(&strings))).await;

    let html = text(&response);
    assert_eq!(response.status, StatusCode::OK, "{html}");
    assert_eq!(html.matches("accepted (TEST)").count(), 2, "{html}");
    app.run_pending_jobs().await;
    let list = app.get("/v2/tracking_requests").await.json();
    assert_eq!(list["data"].as_array().unwrap().len(), 2);
}

/// The child at a memory limit that a small workbook fits in but one whose single shared
/// string is 31 MiB (inside every cap) does not: the parent answers that the limit stopped
/// it, naming the limit.
#[tokio::test]
async fn a_spreadsheet_reading_stopped_at_the_memory_limit_says_so_naming_the_limit() {
    let extractor = Extractor::new(
        ExtractionLimits {
            concurrency: 1,
            // The smallest the settings allow.
            memory_bytes: 128 * MIB,
            cpu_seconds: 600,
            timeout: std::time::Duration::from_secs(600),
            max_inflated_bytes: 4 << 20,
            max_pages: 10,
            program: Some(env!("CARGO_BIN_EXE_tidemark").into()),
        },
        2 << 20,
    );
    let small = workbook(
        &format!(
            "<sheetData><row r=\"1\">{}</row></sheetData>",
            cell("A1", "TEST-TR-SUCCEEDED")
        ),
        None,
    );
    let big = "A".repeat(31 << 20);
    let hungry = workbook(
        "<sheetData><row r=\"1\"><c r=\"A1\" t=\"s\"><v>0</v></c></row></sheetData>",
        Some(&format!(
            "<sst xmlns=\"{MAIN}\" count=\"1\" uniqueCount=\"1\"><si><t>{big}</t></si></sst>"
        )),
    );
    assert_eq!(
        extractor.read_rows(&small, 501).await,
        Ok(vec![vec!["TEST-TR-SUCCEEDED".to_owned()]])
    );

    let refused = extractor.read_rows(&hungry, 501).await.unwrap_err();

    assert_eq!(
        refused,
        SheetError::Stopped(ExtractError::OutOfMemory { limit_mib: 128 })
    );
    assert_eq!(
        refused.to_string(),
        "reading it needed more than 128 MiB of memory and was stopped."
    );
}
