//! Hostile input (issue 19): each attack meets the bound that a setting puts on it, and the
//! tests assert the bound itself (the extraction child's peak memory, the connection being
//! closed, the size of `/metrics`), never how long anything took. The limits are set small
//! where that makes an attack cheap to run.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request, StatusCode, header};
use tidemark_server::limits::ExtractionLimits;
use tidemark_server::parts::documents::isolate::Extractor;
use tidemark_server::use_cases::documents::text::ExtractError;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use crate::documents::{pdf, upload, uploaded};
use crate::helpers::TestApp;
use crate::on_both_backends;

const MIB: u64 = 1024 * 1024;

// ---- documents ------------------------------------------------------------------------

/// The bomb of the issue: `pages` pages whose `/Contents` all point at one deflated stream
/// of `q Q ` repeated to `mib` MiB (a few tens of kilobytes on disk).
fn bomb_pdf(pages: usize, mib: usize) -> Vec<u8> {
    let mut content = lopdf::Stream::new(
        lopdf::Dictionary::new(),
        b"q Q ".repeat(mib * 1024 * 1024 / 4),
    );
    content.compress().unwrap();
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".as_bytes().to_vec(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {pages} >>",
            (0..pages)
                .map(|i| format!("{} 0 R", 4 + i))
                .collect::<Vec<_>>()
                .join(" ")
        )
        .into_bytes(),
    ];
    let mut stream = format!(
        "<< /Length {} /Filter /FlateDecode >>\nstream\n",
        content.content.len()
    )
    .into_bytes();
    stream.extend_from_slice(&content.content);
    stream.extend_from_slice(b"\nendstream");
    objects.push(stream);
    for _ in 0..pages {
        objects.push(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R >>".to_vec(),
        );
    }
    assemble(&objects)
}

/// A PDF file of these objects (numbered from 1, the first the catalog).
fn assemble(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
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

/// The largest peak resident memory of any child process this test binary has waited for
/// (the extraction children: nothing else here starts processes).
fn children_peak_memory() -> u64 {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage");
    // Linux reports kilobytes.
    u64::try_from(usage.max_rss()).unwrap() * 1024
}

/// Uploads `bytes`, runs the jobs, and answers the document's type and notes.
async fn read_back(app: &TestApp, name: &str, bytes: &[u8]) -> (String, String) {
    let id = uploaded(app, name, bytes, &[]).await;
    app.run_pending_jobs().await;
    let document = app.get(&format!("/v2/documents/{id}")).await.json();
    let attributes = &document["data"]["attributes"];
    (
        attributes["document_type"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
        attributes["classification_notes"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
    )
}

mod bomb_at_the_defaults {
    use super::*;

    on_both_backends!(
        a_decompression_bomb_pdf_is_kept_and_marked_without_parsing_its_content,
        a_deeply_nested_pdf_is_kept_and_marked_without_crashing,
        a_zip_bomb_spreadsheet_is_never_inflated,
    );
}

/// The tests of the memory bound give the child time to spare: at the default CPU and wall
/// limits a debug build on a loaded machine could be stopped by one of those first. The
/// time bounds have tests of their own.
const TIME_TO_SPARE: [(&str, &str); 2] = [
    ("document_extraction_cpu_seconds", "600"),
    ("document_extraction_timeout_seconds", "600"),
];

mod huge_object_at_the_default_memory_limit {
    use super::*;

    on_both_backends!(
        settings = &crate::hostile::TIME_TO_SPARE;
        a_pdf_with_a_huge_object_is_stopped_at_the_memory_limit,
    );
}

async fn a_decompression_bomb_pdf_is_kept_and_marked_without_parsing_its_content(app: TestApp) {
    let bomb = bomb_pdf(100, 31);
    assert!(bomb.len() < 100 * 1024, "the bomb is small: {}", bomb.len());

    let (document_type, notes) = read_back(&app, "bomb.pdf", &bomb).await;

    assert_eq!(document_type, "unknown");
    assert!(
        notes.contains("page content decompresses to more than 4194304 bytes"),
        "{notes}"
    );
    assert!(children_peak_memory() <= 512 * MIB);
}

async fn a_deeply_nested_pdf_is_kept_and_marked_without_crashing(app: TestApp) {
    let mut nested = b"<< /Type /Catalog /Pages 2 0 R /X ".to_vec();
    nested.extend(std::iter::repeat_n(b'[', 200_000));
    nested.extend(std::iter::repeat_n(b']', 200_000));
    nested.extend_from_slice(b" >>");
    let bytes = assemble(&[nested, b"<< /Type /Pages /Kids [] /Count 0 >>".to_vec()]);

    let (document_type, notes) = read_back(&app, "nested.pdf", &bytes).await;

    // Read (there is no text in it) or refused as malformed; never a crash.
    assert_eq!(document_type, "unknown");
    assert!(!notes.is_empty());
    assert!(
        !notes.contains("parser failed") && !notes.contains("process failed"),
        "no crash: {notes}"
    );
    assert!(children_peak_memory() <= 512 * MIB);
}

async fn a_pdf_with_a_huge_object_is_stopped_at_the_memory_limit(app: TestApp) {
    // Three million numbers in one array (6 MB): the parser's objects for them take
    // hundreds of bytes each, far more than the file.
    let mut huge = b"<< /Type /Catalog /Pages 2 0 R /Huge [".to_vec();
    for i in 0..3_000_000u32 {
        huge.extend_from_slice(format!("{} ", i % 10).as_bytes());
    }
    huge.extend_from_slice(b"] >>");
    let bytes = assemble(&[huge, b"<< /Type /Pages /Kids [] /Count 0 >>".to_vec()]);
    assert!(bytes.len() > 3_000_000);

    let (document_type, notes) = read_back(&app, "huge.pdf", &bytes).await;

    assert_eq!(document_type, "unknown");
    assert!(
        notes.contains("needed more than 512 MiB of memory and was stopped"),
        "{notes}"
    );
    assert!(children_peak_memory() <= 512 * MIB);
}

/// A ZIP of one deflated entry that claims 4 GiB (an `.xlsx` by its name and type).
fn zip_bomb() -> Vec<u8> {
    let zeros = vec![0u8; 16 * 1024 * 1024];
    let mut zlib = lopdf::Stream::new(lopdf::Dictionary::new(), zeros.clone());
    zlib.compress().unwrap();
    // A zlib stream is a 2-byte header, raw deflate, and a 4-byte checksum.
    let deflated = &zlib.content[2..zlib.content.len() - 4];
    let crc = crc32(&zeros);
    let name = b"xl/worksheets/sheet1.xml";
    let claimed: u32 = u32::MAX;
    let mut local = Vec::new();
    local.extend_from_slice(b"PK\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00\x00\x00");
    local.extend_from_slice(&crc.to_le_bytes());
    local.extend_from_slice(&u32::try_from(deflated.len()).unwrap().to_le_bytes());
    local.extend_from_slice(&claimed.to_le_bytes());
    local.extend_from_slice(&u16::try_from(name.len()).unwrap().to_le_bytes());
    local.extend_from_slice(&0u16.to_le_bytes());
    local.extend_from_slice(name);
    local.extend_from_slice(deflated);
    let central_at = local.len();
    let mut central = Vec::new();
    central.extend_from_slice(b"PK\x01\x02\x14\x00\x14\x00\x00\x00\x08\x00\x00\x00\x00\x00");
    central.extend_from_slice(&crc.to_le_bytes());
    central.extend_from_slice(&u32::try_from(deflated.len()).unwrap().to_le_bytes());
    central.extend_from_slice(&claimed.to_le_bytes());
    central.extend_from_slice(&u16::try_from(name.len()).unwrap().to_le_bytes());
    central.extend_from_slice(&[0u8; 12]);
    central.extend_from_slice(&0u32.to_le_bytes());
    central.extend_from_slice(name);
    let mut end = b"PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00".to_vec();
    end.extend_from_slice(&u32::try_from(central.len()).unwrap().to_le_bytes());
    end.extend_from_slice(&u32::try_from(central_at).unwrap().to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    [local, central, end].concat()
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in bytes {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

async fn a_zip_bomb_spreadsheet_is_never_inflated(app: TestApp) {
    let bomb = zip_bomb();
    assert!(bomb.len() < 100 * 1024);
    let own_before = own_peak_memory();

    let response = upload(
        &app,
        "rates.xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        &bomb,
        &[],
    )
    .await;
    app.run_pending_jobs().await;

    // Refused as an archive, or kept unread: either way nothing inflated it.
    assert!(
        matches!(
            response.status,
            StatusCode::CREATED | StatusCode::UNPROCESSABLE_ENTITY
        ),
        "{:?}",
        response.status
    );
    assert!(own_peak_memory() < own_before + 256 * MIB);
    assert!(children_peak_memory() <= 512 * MIB);
}

fn own_peak_memory() -> u64 {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .expect("getrusage");
    u64::try_from(usage.max_rss()).unwrap() * 1024
}

mod bomb_past_the_content_cap {
    use super::*;

    on_both_backends!(
        settings = &[
            ("document_max_inflated_bytes", "67108864"),
            ("document_extraction_memory_mib", "256"),
            crate::hostile::TIME_TO_SPARE[0],
            crate::hostile::TIME_TO_SPARE[1],
        ];
        a_bomb_let_past_the_content_cap_is_stopped_at_the_memory_limit,
    );
}

async fn a_bomb_let_past_the_content_cap_is_stopped_at_the_memory_limit(app: TestApp) {
    let (document_type, notes) = read_back(&app, "bomb.pdf", &bomb_pdf(100, 31)).await;

    assert_eq!(document_type, "unknown");
    assert!(
        notes.contains("needed more than 256 MiB of memory and was stopped"),
        "{notes}"
    );
    assert!(children_peak_memory() <= 512 * MIB);
}

fn extractor(memory_mib: u64, cpu_seconds: u64, timeout: Duration) -> Extractor {
    Extractor::new(
        ExtractionLimits {
            concurrency: 1,
            memory_bytes: memory_mib * MIB,
            cpu_seconds,
            timeout,
            max_inflated_bytes: 64 * 1024 * 1024,
            max_pages: 2000,
            program: Some(env!("CARGO_BIN_EXE_tidemark").into()),
        },
        50 * 1024 * 1024,
    )
}

#[tokio::test]
async fn an_extraction_over_its_cpu_time_is_stopped_by_the_os() {
    let result = extractor(1024, 1, Duration::from_secs(600))
        .extract("application/pdf", "bomb.pdf", &bomb_pdf(100, 31))
        .await;

    assert_eq!(result, Err(ExtractError::OutOfCpu { seconds: 1 }));
    assert!(children_peak_memory() <= 1024 * MIB);
}

#[tokio::test]
async fn an_extraction_past_its_deadline_is_killed() {
    let result = extractor(1024, 600, Duration::from_secs(1))
        .extract("application/pdf", "bomb.pdf", &bomb_pdf(100, 31))
        .await;

    assert_eq!(result, Err(ExtractError::TimedOut { seconds: 1 }));
}

#[tokio::test]
async fn an_ordinary_pdf_is_read_in_the_child_with_its_usage() {
    let extracted = extractor(512, 20, Duration::from_secs(600))
        .extract(
            "application/pdf",
            "an.pdf",
            &pdf(&["ARRIVAL NOTICE", "Consignee: ACME"]),
        )
        .await
        .unwrap();

    assert!(
        extracted.text.starts_with("ARRIVAL NOTICE"),
        "{}",
        extracted.text
    );
    assert_eq!(extracted.document_type.as_str(), "arrival_notice");
    assert!(extracted.peak_memory_bytes > 0 && extracted.peak_memory_bytes <= 512 * MIB);
}

// ---- metrics --------------------------------------------------------------------------

mod metrics_labels {
    use super::*;

    on_both_backends!(made_up_methods_add_no_metric_series,);
}

async fn made_up_methods_add_no_metric_series(app: TestApp) {
    for i in 0..2_000 {
        let method = Method::from_bytes(format!("ZZFUZZ{i}").as_bytes()).unwrap();
        let request = Request::builder()
            .method(method)
            .uri(format!("/healthz/{i}"))
            .body(Body::empty())
            .unwrap();
        let response = app.send(request).await;
        assert!(response.status.is_client_error());
    }

    let metrics = app.request(Method::GET, "/metrics", None, None).await;
    let text = String::from_utf8_lossy(&metrics.body);

    assert!(!text.contains("ZZFUZZ"), "no invented method is a label");
    assert!(!text.contains("/healthz/1"), "no raw path is a label");
    let methods: std::collections::BTreeSet<&str> = text
        .lines()
        .filter(|line| line.starts_with("http_requests_total{"))
        .filter_map(|line| line.split("method=\"").nth(1)?.split('"').next())
        .collect();
    let allowed = [
        "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE", "other",
    ];
    assert!(methods.contains("other"), "{methods:?}");
    assert!(methods.iter().all(|m| allowed.contains(m)), "{methods:?}");
    // Every series is one route template, method and status: a few hundred lines at most
    // for the whole API, however many requests were invented.
    assert!(metrics.body.len() < 512 * 1024, "{}", metrics.body.len());
}

// ---- failed authentication -------------------------------------------------------------

mod unauthenticated {
    use super::*;

    on_both_backends!(
        settings = &[("unauthenticated_rate_limit_per_minute", "3")];
        an_address_that_keeps_failing_authentication_gets_429_whatever_key_it_sends,
    );
}

/// `request` as if it came through a socket from `address` (the rate limits of failed
/// authentication count by it).
pub(crate) async fn sent_from(
    app: &TestApp,
    address: &str,
    mut request: Request<Body>,
) -> crate::helpers::TestResponse {
    let address: SocketAddr = address.parse().unwrap();
    request.extensions_mut().insert(ConnectInfo(address));
    app.send(request).await
}

async fn from(app: &TestApp, address: &str, key: &str) -> crate::helpers::TestResponse {
    let request = Request::builder()
        .uri("/v2/shipments")
        .header(header::AUTHORIZATION, format!("Token {key}"))
        .body(Body::empty())
        .unwrap();
    sent_from(app, address, request).await
}

async fn an_address_that_keeps_failing_authentication_gets_429_whatever_key_it_sends(app: TestApp) {
    let attacker = "198.51.100.7:40000";
    for guess in 0..3 {
        let response = from(&app, attacker, &format!("tmk_guess{guess}")).await;
        assert_eq!(response.status, StatusCode::UNAUTHORIZED);
    }

    let fourth = from(&app, attacker, "tmk_guess4").await;
    let with_a_real_key = from(&app, attacker, &app.key).await;
    let someone_else = from(&app, "203.0.113.9:40000", &app.key).await;

    assert_eq!(fourth.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(fourth.error_member("status"), "429");
    assert_eq!(with_a_real_key.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(someone_else.status, StatusCode::OK);
    app.clock.advance(chrono::Duration::minutes(2));
    assert_eq!(from(&app, attacker, &app.key).await.status, StatusCode::OK);
}

// ---- connections ----------------------------------------------------------------------

/// The app served on a loopback socket with its configured connection limits.
pub(crate) async fn served(app: &TestApp) -> (SocketAddr, CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    tokio::spawn(Arc::clone(&app.app).serve(listener, shutdown.clone()));
    (address, shutdown)
}

/// Reads until the server closes the connection; answers what it sent first. The guard
/// only keeps a broken server from hanging the suite.
pub(crate) async fn until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(60), async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server never closed the connection");
    received
}

mod short_timeouts {
    use super::*;

    on_both_backends!(
        settings = &[
            ("header_read_timeout_seconds", "1"),
            ("idle_timeout_seconds", "1"),
        ];
        a_connection_that_sends_nothing_is_closed,
        a_half_sent_request_header_is_closed,
        an_idle_keep_alive_connection_is_closed_after_its_response,
        an_oversized_request_header_is_refused_with_431,
    );
}

async fn a_connection_that_sends_nothing_is_closed(app: TestApp) {
    let (address, _shutdown) = served(&app).await;
    let mut idle = TcpStream::connect(address).await.unwrap();

    let received = until_closed(&mut idle).await;

    assert!(received.is_empty());
}

async fn a_half_sent_request_header_is_closed(app: TestApp) {
    let (address, _shutdown) = served(&app).await;
    let mut slow = TcpStream::connect(address).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: tidemark\r\n")
        .await
        .unwrap();
    // A slowloris: a header byte now and then, never the end of the head. The server
    // closes it whatever the pace; then the writes fail.
    let drip = async {
        for _ in 0..600 {
            if slow.write_all(b"X").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    drip.await;

    let received = until_closed(&mut slow).await;

    assert!(!String::from_utf8_lossy(&received).contains(" 200 "));
}

async fn an_idle_keep_alive_connection_is_closed_after_its_response(app: TestApp) {
    let (address, _shutdown) = served(&app).await;
    let mut client = TcpStream::connect(address).await.unwrap();
    client
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: tidemark\r\n\r\n")
        .await
        .unwrap();

    let received = until_closed(&mut client).await;

    assert!(
        String::from_utf8_lossy(&received).starts_with("HTTP/1.1 200"),
        "answered, then closed when idle"
    );
}

async fn an_oversized_request_header_is_refused_with_431(app: TestApp) {
    let (address, _shutdown) = served(&app).await;
    let mut client = TcpStream::connect(address).await.unwrap();
    let mut request = b"GET /healthz HTTP/1.1\r\nHost: tidemark\r\nX-Big: ".to_vec();
    request.extend(std::iter::repeat_n(b'a', 64 * 1024));
    request.extend_from_slice(b"\r\n\r\n");
    // The server may answer and close before it has read everything.
    let _ = client.write_all(&request).await;

    let received = until_closed(&mut client).await;

    assert!(
        String::from_utf8_lossy(&received).starts_with("HTTP/1.1 431"),
        "{}",
        String::from_utf8_lossy(&received)
    );
}

mod few_connections {
    use super::*;

    on_both_backends!(
        settings = &[("max_connections", "3")];
        a_connection_over_the_limit_is_answered_503_and_closed,
    );
}

async fn a_connection_over_the_limit_is_answered_503_and_closed(app: TestApp) {
    let (address, _shutdown) = served(&app).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut client = TcpStream::connect(address).await.unwrap();
        // A served request proves the connection was taken by the server.
        client
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: tidemark\r\n\r\n")
            .await
            .unwrap();
        let mut buffer = [0u8; 12];
        client.read_exact(&mut buffer).await.unwrap();
        assert_eq!(&buffer, b"HTTP/1.1 200");
        held.push(client);
    }

    let mut one_more = TcpStream::connect(address).await.unwrap();
    let received = until_closed(&mut one_more).await;

    let text = String::from_utf8_lossy(&received);
    assert!(
        text.is_empty() || text.starts_with("HTTP/1.1 503"),
        "{text}"
    );
    drop(held);
    // Room again once they are gone.
    let mut later = None;
    for _ in 0..100 {
        let mut client = TcpStream::connect(address).await.unwrap();
        let _ = client
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: tidemark\r\nConnection: close\r\n\r\n")
            .await;
        let received = until_closed(&mut client).await;
        if received.starts_with(b"HTTP/1.1 200") {
            later = Some(());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(later.is_some(), "served again below the limit");
}
