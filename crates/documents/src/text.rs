//! Plain text out of an uploaded document: PDF text layers and text files.
//!
//! PDFs are read with `lopdf`: it returns errors rather than panicking by design, bounds
//! nesting depth and stream decompression (decompression bombs), and is actively hardened
//! against hostile files. `pdf-extract` lays text out better but panics on purpose on what it
//! does not support. Parsers still have bugs and cost what the file makes them cost, so the
//! server never calls this in its own process: [`super::isolate`] runs it in a child process
//! under OS limits on memory and CPU, and kills it past a deadline. Here, the budgets a
//! parser can keep itself: the input size, the page count, and the bytes all page content
//! may inflate to, checked before the content is parsed. The PDF work runs on a thread with
//! a large stack (parsers recurse, and a stack overflow aborts) inside `catch_unwind`.
//!
//! Images and Office files have no text here (no OCR, no Office parser): they get
//! [`ExtractError::Unsupported`], and classification falls back to the file name.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use lopdf::content::Content;
use lopdf::{Document, Encoding, LoadOptions, Object};
use serde::{Deserialize, Serialize};

/// Bounds on one extraction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Larger inputs are refused before any parsing.
    pub max_input_bytes: usize,
    /// The text is cut at this many characters (a shipping document has a few thousand).
    pub max_text_chars: usize,
    /// Only the first pages are read; the title and references are on them.
    pub max_pages_read: usize,
    /// A PDF with more pages than this is refused before any page is read.
    pub max_pages: usize,
    /// All page content read, decompressed, may be at most this (so may any one stream):
    /// a small file of pages sharing one deflated stream cannot multiply it.
    pub max_inflated_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_input_bytes: 50 * 1024 * 1024,
            max_text_chars: 500_000,
            max_pages_read: 100,
            max_pages: 2000,
            max_inflated_bytes: 4 * 1024 * 1024,
        }
    }
}

/// Why no text came out. Its message ends up in the document's `classification_notes`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtractError {
    /// The input exceeds [`Limits::max_input_bytes`].
    #[error("the file has {size} bytes, more than the {limit} that are read")]
    TooLarge { size: usize, limit: usize },
    /// Text extraction is not available for this content type (images, Office files).
    #[error("no text extraction for {0}")]
    Unsupported(String),
    /// The PDF is encrypted with a password.
    #[error("the PDF is encrypted")]
    Encrypted,
    /// The PDF could not be parsed.
    #[error("the PDF could not be read: {0}")]
    Malformed(String),
    /// The PDF has more pages than [`Limits::max_pages`].
    #[error("the PDF has {pages} pages, more than the {limit} that are read")]
    TooManyPages { pages: usize, limit: usize },
    /// The page content inflates past [`Limits::max_inflated_bytes`] (a decompression bomb).
    #[error("the PDF's page content decompresses to more than {limit} bytes")]
    InflatesTooMuch { limit: usize },
    /// The parser panicked on this input.
    #[error("the PDF parser failed on this file")]
    Crashed,
    /// The extraction process used more memory than it may, and was stopped.
    #[error("reading it needed more than {limit_mib} MiB of memory and was stopped")]
    OutOfMemory { limit_mib: u64 },
    /// The extraction process used more CPU time than it may, and was stopped.
    #[error("reading it used more than {seconds} s of CPU time and was stopped")]
    OutOfCpu { seconds: u64 },
    /// Extraction took longer than its deadline, and was stopped.
    #[error("reading it took longer than {seconds} s and was stopped")]
    TimedOut { seconds: u64 },
    /// The extraction process could not be run, or answered nonsense.
    #[error("the text extraction process failed: {0}")]
    Process(String),
}

/// Extracts text with the default [`Limits`].
///
/// `content_type` is the sniffed one (see [`super::sniff`]). The result has `\n` line ends
/// and no control characters besides `\n` and `\t`; it may be empty (a scanned PDF).
/// Blocking and CPU-bound: call it from `spawn_blocking` or a worker thread.
pub fn extract_text(content_type: &str, bytes: &[u8]) -> Result<String, ExtractError> {
    extract_text_with(content_type, bytes, &Limits::default())
}

/// The lower-case essence of a content type (`text/plain; charset=utf-8` → `text/plain`).
fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Whether there is any text extraction for this content type; when not, extracting it
/// answers [`ExtractError::Unsupported`] without looking at the bytes.
pub fn supported(content_type: &str) -> Result<(), ExtractError> {
    match essence(content_type).as_str() {
        "application/pdf" | "text/plain" | "text/csv" => Ok(()),
        other => Err(ExtractError::Unsupported(other.to_owned())),
    }
}

/// Extracts text within the given limits.
pub fn extract_text_with(
    content_type: &str,
    bytes: &[u8],
    limits: &Limits,
) -> Result<String, ExtractError> {
    if bytes.len() > limits.max_input_bytes {
        return Err(ExtractError::TooLarge {
            size: bytes.len(),
            limit: limits.max_input_bytes,
        });
    }
    let essence = essence(content_type);
    let raw = match essence.as_str() {
        "application/pdf" => pdf_text_guarded(bytes, limits)?,
        "text/plain" | "text/csv" => decode_text(bytes),
        _ => return Err(ExtractError::Unsupported(essence)),
    };
    Ok(clean(&raw, limits.max_text_chars))
}

/// Decodes a text file: UTF-8 (with or without a byte order mark), else Windows-1252, which
/// is what spreadsheets on Windows still export.
fn decode_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => encoding_rs::WINDOWS_1252
            .decode_without_bom_handling(bytes)
            .0
            .into_owned(),
    }
}

/// Normalizes line ends, drops control characters and cuts to `max_chars`.
fn clean(raw: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(raw.len().min(max_chars));
    let mut chars = raw.chars().peekable();
    let mut count = 0;
    while let Some(c) = chars.next() {
        if count >= max_chars {
            break;
        }
        let c = match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                '\n'
            }
            '\u{0C}' | '\u{0B}' | '\u{2028}' | '\u{2029}' | '\u{85}' => '\n',
            '\n' | '\t' => c,
            c if c.is_control() => continue,
            c => c,
        };
        out.push(c);
        count += 1;
    }
    out
}

/// Stack for the extraction thread: parsers recurse, and a stack overflow cannot be
/// caught, it aborts the process.
const EXTRACTION_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Runs [`pdf_text`] on its own thread (for its stack), catching panics.
fn pdf_text_guarded(bytes: &[u8], limits: &Limits) -> Result<String, ExtractError> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("pdf-text".into())
            .stack_size(EXTRACTION_STACK_BYTES)
            .spawn_scoped(scope, || {
                catch_unwind(AssertUnwindSafe(|| pdf_text(bytes, limits)))
                    .unwrap_or(Err(ExtractError::Crashed))
            })
            .map_err(|error| ExtractError::Process(format!("no extraction thread: {error}")))?
            .join()
            .unwrap_or(Err(ExtractError::Crashed))
    })
}

/// The text of the first pages of a PDF, one line per text line where the PDF says so.
fn pdf_text(bytes: &[u8], limits: &Limits) -> Result<String, ExtractError> {
    let options = LoadOptions {
        max_decompressed_size: Some(limits.max_inflated_bytes),
        ..LoadOptions::default()
    };
    let document =
        Document::load_mem_with_options(bytes, options).map_err(|error| match error {
            lopdf::Error::Decryption(_) | lopdf::Error::InvalidPassword => ExtractError::Encrypted,
            other => ExtractError::Malformed(other.to_string()),
        })?;
    // Loading decrypts files that open without a password; what is still encrypted needs one.
    if document.is_encrypted() {
        return Err(ExtractError::Encrypted);
    }
    let pages = document.get_pages();
    if pages.len() > limits.max_pages {
        return Err(ExtractError::TooManyPages {
            pages: pages.len(),
            limit: limits.max_pages,
        });
    }
    let mut text = String::new();
    let mut first_error = None;
    let mut pages_read = 0;
    // What the pages read so far inflated to: the budget is for the whole document.
    let mut inflated = 0;
    for page_id in pages.values().take(limits.max_pages_read) {
        let budget = limits.max_inflated_bytes.saturating_sub(inflated);
        match page_text(&document, *page_id, budget, &mut text) {
            Ok(size) => {
                pages_read += 1;
                inflated += size;
            }
            Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded {
                ..
            })) => {
                return Err(ExtractError::InflatesTooMuch {
                    limit: limits.max_inflated_bytes,
                });
            }
            Err(error) => {
                first_error.get_or_insert(error);
            }
        }
        if !text.ends_with('\n') {
            text.push('\n');
        }
        if text.len() >= limits.max_text_chars.saturating_mul(4) {
            break;
        }
    }
    match first_error {
        // One unreadable page should not lose the others.
        Some(error) if pages_read == 0 => Err(ExtractError::Malformed(error.to_string())),
        _ => Ok(text),
    }
}

/// Appends the text of one page to `out`, breaking lines where the text position moves to
/// another line, and putting spaces where a `TJ` array leaves a wide gap. Answers the size
/// of the page's decompressed content, which may be at most `limit`.
fn page_text(
    document: &Document,
    page_id: lopdf::ObjectId,
    limit: usize,
    out: &mut String,
) -> lopdf::Result<usize> {
    let fonts = document.get_page_fonts(page_id)?;
    let encodings: BTreeMap<Vec<u8>, Encoding> = fonts
        .into_iter()
        .filter_map(|(name, font)| {
            font.get_font_encoding_with_limit(document, limit)
                .ok()
                .map(|encoding| (name, encoding))
        })
        .collect();
    let content = document.get_page_content_with_limit(page_id, limit)?;
    let size = content.len();
    let content = Content::decode(&content)?;
    let mut encoding = None;
    for operation in &content.operations {
        match operation.operator.as_str() {
            "Tf" => {
                encoding = operation
                    .operands
                    .first()
                    .and_then(|name| name.as_name().ok())
                    .and_then(|name| encodings.get(name));
            }
            "Tj" | "TJ" => show(encoding, &operation.operands, out),
            "'" => {
                new_line(out);
                show(encoding, &operation.operands, out);
            }
            "\"" => {
                new_line(out);
                show(
                    encoding,
                    operation.operands.get(2..).unwrap_or_default(),
                    out,
                );
            }
            "Td" | "TD" => {
                // A purely horizontal move stays on the line: a gap between words.
                let dy = operation
                    .operands
                    .get(1)
                    .and_then(|dy| dy.as_float().ok())
                    .unwrap_or(1.0);
                if dy.abs() < 0.01 {
                    space(out);
                } else {
                    new_line(out);
                }
            }
            "T*" | "Tm" | "ET" => new_line(out),
            _ => {}
        }
    }
    Ok(size)
}

/// Appends the strings of a `Tj`/`TJ` operand list; undecodable strings are skipped.
fn show(encoding: Option<&Encoding>, operands: &[Object], out: &mut String) {
    let Some(encoding) = encoding else {
        return;
    };
    for operand in operands {
        match operand {
            Object::String(bytes, _) => {
                if let Ok(text) = Document::decode_text(encoding, bytes) {
                    out.push_str(&text);
                }
            }
            Object::Array(items) => show(Some(encoding), items, out),
            // A kerning adjustment wider than a fifth of an em separates words.
            Object::Integer(adjust) if *adjust < -200 => space(out),
            Object::Real(adjust) if *adjust < -200.0 => space(out),
            _ => {}
        }
    }
}

fn new_line(out: &mut String) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
}

fn space(out: &mut String) {
    if !out.is_empty() && !out.ends_with([' ', '\n']) {
        out.push(' ');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/tests/fixtures/documents/{name}",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../server")
        );
        std::fs::read(path).unwrap()
    }

    #[test]
    fn a_compressed_pdf_yields_its_lines() {
        let text = extract_text("application/pdf", &fixture("bill_of_lading.pdf")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "BILL OF LADING");
        assert!(
            lines.contains(&"Container: MSCU 123456-6   Seal: 998877"),
            "{text}"
        );
    }

    #[test]
    fn an_uncompressed_pdf_yields_its_text() {
        let bytes = fixture("arrival_notice_uncompressed.pdf");
        let text = extract_text("application/pdf", &bytes).unwrap();
        assert!(text.starts_with("ARRIVAL NOTICE\n"), "{text}");
        assert!(text.contains("MAEU123456789"));
    }

    #[test]
    fn a_truncated_pdf_is_an_error_not_a_panic() {
        let result = extract_text("application/pdf", &fixture("truncated.pdf"));
        // lopdf may rebuild the cross references of a cut file; either way, no panic.
        if let Ok(text) = result {
            assert!(!text.contains("TGHU9876542"));
        }
    }

    #[test]
    fn garbage_after_a_pdf_header_is_malformed() {
        let mut bytes = b"%PDF-1.7\n".to_vec();
        bytes.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
        assert!(matches!(
            extract_text("application/pdf", &bytes),
            Err(ExtractError::Malformed(_))
        ));
    }

    #[test]
    fn every_prefix_of_a_pdf_is_handled_without_panicking() {
        let bytes = fixture("bill_of_lading.pdf");
        for end in (0..bytes.len()).step_by(37) {
            let _ = extract_text("application/pdf", &bytes[..end]);
        }
    }

    #[test]
    fn deeply_nested_arrays_do_not_overflow_the_stack() {
        let mut bytes = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /X ".to_vec();
        bytes.extend(std::iter::repeat_n(b'[', 100_000));
        bytes.extend(b"\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n");
        // Reaching the assertion at all means the process did not abort.
        let result = extract_text("application/pdf", &bytes);
        assert_ne!(result, Err(ExtractError::Crashed));
    }

    #[test]
    fn an_input_over_the_size_limit_is_refused_before_parsing() {
        let limits = Limits {
            max_input_bytes: 10,
            ..Limits::default()
        };
        let error = extract_text_with("application/pdf", b"%PDF-1.4 and more", &limits);
        assert_eq!(
            error,
            Err(ExtractError::TooLarge {
                size: 17,
                limit: 10
            })
        );
    }

    #[test]
    fn extracted_text_is_cut_at_the_character_limit() {
        let limits = Limits {
            max_text_chars: 5,
            ..Limits::default()
        };
        let text = extract_text_with("text/plain", "ÄÖÜäöüß".as_bytes(), &limits).unwrap();
        assert_eq!(text, "ÄÖÜäö");
    }

    #[test]
    fn utf8_text_with_a_byte_order_mark_is_decoded() {
        let text = extract_text(
            "text/plain; charset=utf-8",
            b"\xEF\xBB\xBFPort: G\xC3\xB6teborg",
        );
        assert_eq!(text.unwrap(), "Port: Göteborg");
    }

    #[test]
    fn windows_1252_text_is_decoded() {
        let text = extract_text("text/csv", b"Caf\xE9;\x80 12").unwrap();
        assert_eq!(text, "Café;€ 12");
    }

    #[test]
    fn line_ends_are_normalized_and_controls_dropped() {
        let text = extract_text("text/plain", b"a\r\nb\rc\x0Cd\x1B[0m\x00e").unwrap();
        assert_eq!(text, "a\nb\nc\nd[0me");
    }

    #[test]
    fn images_have_no_text_extraction() {
        let error = extract_text("image/png", b"\x89PNG").unwrap_err();
        assert_eq!(error, ExtractError::Unsupported("image/png".into()));
    }
}
