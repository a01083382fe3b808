//! The real content type of an upload, from its bytes.
//!
//! The bytes decide: the declared `Content-Type` and the file name only refine a text file
//! into CSV, and can only make an upload be refused, never make bytes be trusted as
//! something they are not.
//!
//! Accepted (what shipment paperwork arrives as):
//!
//! | type | content type | extension |
//! | --- | --- | --- |
//! | PDF | `application/pdf` | `pdf` |
//! | scans and photos | `image/png`, `image/jpeg`, `image/gif`, `image/tiff` | `png`, `jpg`, `gif`, `tif` |
//! | text | `text/plain`, `text/csv` | `txt`, `csv` |
//! | Word, Excel | OOXML `docx`, `xlsx`; OLE2 `doc`, `xls` | same |
//!
//! Refused: markup (HTML, XML, SVG: a browser may run scripts in them), executables (PE,
//! ELF, Mach-O, Java classes, WebAssembly), scripts (`#!`, or a script or markup
//! extension), archives (they hide their content from every check here), and anything
//! else not listed. E-mail (`.eml`) is read as plain text; splitting its attachments into
//! documents belongs to e-mail ingestion, not here.
//!
//! Magic numbers come from the `infer` crate (widely used, no dependencies beyond `cfb` for
//! telling Word from Excel in OLE2 files); text and markup detection are ours, because
//! `infer` only looks at the first bytes and does not recognise text at all.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// The detected type of an accepted upload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sniffed {
    /// The MIME type to store and to serve the file with.
    pub content_type: &'static str,
    /// The extension, without a dot, for the storage key and a download name.
    pub extension: &'static str,
}

impl Sniffed {
    const fn new(content_type: &'static str, extension: &'static str) -> Self {
        Self {
            content_type,
            extension,
        }
    }

    /// Whether the content is text (plain or CSV).
    pub fn is_text(&self) -> bool {
        self.content_type.starts_with("text/")
    }
}

/// Every type an upload may have, in the order of the table above.
pub const ACCEPTED: &[Sniffed] = &[
    PDF, PNG, JPEG, GIF, TIFF, PLAIN_TEXT, CSV, DOCX, XLSX, DOC, XLS,
];

const PDF: Sniffed = Sniffed::new("application/pdf", "pdf");
const PNG: Sniffed = Sniffed::new("image/png", "png");
const JPEG: Sniffed = Sniffed::new("image/jpeg", "jpg");
const GIF: Sniffed = Sniffed::new("image/gif", "gif");
const TIFF: Sniffed = Sniffed::new("image/tiff", "tif");
const PLAIN_TEXT: Sniffed = Sniffed::new("text/plain", "txt");
const CSV: Sniffed = Sniffed::new("text/csv", "csv");
const DOCX: Sniffed = Sniffed::new(
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "docx",
);
const XLSX: Sniffed = Sniffed::new(
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "xlsx",
);
const DOC: Sniffed = Sniffed::new("application/msword", "doc");
const XLS: Sniffed = Sniffed::new("application/vnd.ms-excel", "xls");

/// Why an upload is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SniffError {
    /// There are no bytes.
    #[error("the file is empty")]
    Empty,
    /// The bytes are of a kind that is never accepted (markup, executable, script).
    #[error("{0} files are not accepted")]
    Forbidden(&'static str),
    /// The client declared a type that is never accepted, whatever the bytes look like.
    #[error("the content type {0} is not accepted")]
    DeclaredForbidden(String),
    /// The file name ends in an extension that a computer would run or render as markup.
    #[error("files ending in .{0} are not accepted")]
    ExtensionForbidden(String),
    /// The bytes are of a known type that is not accepted (for example a ZIP archive), or of
    /// no type recognised at all (`None`).
    #[error("unsupported file type{}", .0.map(|t| format!(" ({t})")).unwrap_or_default())]
    Unsupported(Option<&'static str>),
}

/// Detects the content type of `bytes`.
///
/// `declared` is the client's `Content-Type` (parameters allowed); `filename` is the
/// client's file name, used only for its extension. The result never depends on them except
/// to refuse, or to call a text file CSV.
pub fn sniff(
    bytes: &[u8],
    declared: Option<&str>,
    filename: Option<&str>,
) -> Result<Sniffed, SniffError> {
    if bytes.is_empty() {
        return Err(SniffError::Empty);
    }
    let declared = declared.map(normalize_mime).filter(|d| !d.is_empty());
    if let Some(declared) = &declared
        && is_forbidden_mime(declared)
    {
        return Err(SniffError::DeclaredForbidden(declared.clone()));
    }
    let extension = filename.and_then(extension_of);
    if let Some(extension) = &extension
        && FORBIDDEN_EXTENSIONS.contains(&extension.as_str())
    {
        return Err(SniffError::ExtensionForbidden(extension.clone()));
    }
    // Before `infer`: it accepts a PDF header anywhere in the first KiB, so an HTML page
    // with "%PDF" inside would pass as a PDF (a polyglot).
    if starts_with_markup(bytes) {
        return Err(SniffError::Forbidden("markup (HTML, XML or SVG)"));
    }
    // `infer` parses OLE2 containers with `cfb`; a panic there must not take the request.
    let detected = catch_unwind(AssertUnwindSafe(|| infer::get(bytes)))
        .map_err(|_| SniffError::Unsupported(None))?;
    if let Some(kind) = detected {
        // infer calls anything starting with "MZ" a Windows executable; a real one has NUL
        // bytes in its header, so text such as "MZ Logistics ..." is still text.
        let text_not_program = kind.matcher_type() == infer::MatcherType::App
            && kind.mime_type() == "application/vnd.microsoft.portable-executable"
            && looks_like_text(bytes);
        if !text_not_program {
            return from_infer(kind);
        }
    }
    if looks_like_text(bytes) {
        if bytes.starts_with(b"#!") {
            return Err(SniffError::Forbidden("script"));
        }
        if contains_markup(bytes) {
            return Err(SniffError::Forbidden("markup (HTML, XML or SVG)"));
        }
        let csv_declared = declared.as_deref().is_some_and(|d| CSV_MIMES.contains(&d));
        let csv_named = extension.as_deref() == Some("csv");
        return Ok(if csv_declared || csv_named {
            CSV
        } else {
            PLAIN_TEXT
        });
    }
    Err(SniffError::Unsupported(None))
}

fn from_infer(kind: infer::Type) -> Result<Sniffed, SniffError> {
    use infer::MatcherType;
    let accepted = match kind.mime_type() {
        "application/pdf" => Some(PDF),
        "image/png" => Some(PNG),
        "image/jpeg" => Some(JPEG),
        "image/gif" => Some(GIF),
        "image/tiff" => Some(TIFF),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => Some(DOCX),
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => Some(XLSX),
        "application/msword" => Some(DOC),
        "application/vnd.ms-excel" => Some(XLS),
        _ => None,
    };
    if let Some(accepted) = accepted {
        return Ok(accepted);
    }
    Err(match (kind.matcher_type(), kind.mime_type()) {
        (MatcherType::App, _) => SniffError::Forbidden("executable"),
        (_, "text/x-shellscript") => SniffError::Forbidden("script"),
        (MatcherType::Text, _) => SniffError::Forbidden("markup (HTML, XML or SVG)"),
        (_, mime) => SniffError::Unsupported(Some(mime)),
    })
}

/// Declared types that a browser would render or a system would run. Parameters and case
/// are removed before comparing.
fn is_forbidden_mime(mime: &str) -> bool {
    const EXACT: &[&str] = &[
        "text/html",
        "application/xhtml+xml",
        "image/svg+xml",
        "text/xml",
        "application/xml",
        "text/javascript",
        "application/javascript",
        "application/ecmascript",
        "text/ecmascript",
        "application/x-javascript",
        "text/vbscript",
        "application/hta",
        "application/x-msdownload",
        "application/x-msdos-program",
        "application/x-dosexec",
        "application/x-executable",
        "application/x-elf",
        "application/x-mach-binary",
        "application/vnd.microsoft.portable-executable",
        "application/x-sh",
        "application/x-shellscript",
        "text/x-shellscript",
        "application/x-csh",
        "application/x-php",
        "text/x-php",
        "application/x-python-code",
        "text/x-python",
        "application/java-archive",
        "application/x-java-applet",
        "application/wasm",
    ];
    EXACT.contains(&mime) || mime.ends_with("+xml")
}

/// Extensions a desktop would run, or a browser render as active content, when a user
/// opens the downloaded file.
const FORBIDDEN_EXTENSIONS: &[&str] = &[
    "htm", "html", "xhtml", "shtml", "mht", "mhtml", "svg", "svgz", "xml", "xsl", "js", "mjs",
    "jse", "vbs", "vbe", "wsf", "wsh", "hta", "ps1", "psm1", "bat", "cmd", "com", "exe", "dll",
    "scr", "msi", "msp", "cpl", "jar", "sh", "bash", "zsh", "php", "py", "pl", "rb", "lnk", "reg",
    "app", "dmg", "pkg", "deb", "rpm", "apk", "elf", "so", "dylib", "wasm",
];

/// What clients send for CSV; Windows browsers send the Excel type for `.csv` files.
const CSV_MIMES: &[&str] = &[
    "text/csv",
    "application/csv",
    "text/comma-separated-values",
    "text/x-csv",
    "application/vnd.ms-excel",
];

/// The lowercase MIME type without parameters or surrounding space.
fn normalize_mime(mime: &str) -> String {
    mime.split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The lowercase extension of the name the file will be shown and downloaded under (the
/// sanitized one: that is what a user's computer sees).
fn extension_of(filename: &str) -> Option<String> {
    let name = super::filename::sanitize(filename);
    let (_, extension) = name.rsplit_once('.')?;
    let extension = extension.trim().to_ascii_lowercase();
    (!extension.is_empty()).then_some(extension)
}

/// Bytes without a UTF-8 or UTF-16 byte order mark and leading whitespace.
fn skip_bom_and_space(bytes: &[u8]) -> &[u8] {
    let bytes = bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .or_else(|| bytes.strip_prefix(b"\xFE\xFF"))
        .or_else(|| bytes.strip_prefix(b"\xFF\xFE"))
        .unwrap_or(bytes);
    let start = bytes
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0C | 0))
        .unwrap_or(bytes.len());
    &bytes[start..]
}

/// Whether the first meaningful byte opens a tag: HTML, XML, SVG, PHP and friends.
fn starts_with_markup(bytes: &[u8]) -> bool {
    skip_bom_and_space(bytes).first() == Some(&b'<')
}

/// How much of a file the text checks read: enough to judge, bounded for huge uploads.
const TEXT_SAMPLE: usize = 64 * 1024;

/// Whether markup that a browser would act on appears early in a text file.
fn contains_markup(bytes: &[u8]) -> bool {
    const NEEDLES: &[&[u8]] = &[
        b"<script",
        b"<html",
        b"<svg",
        b"<iframe",
        b"<!doctype",
        b"<body",
        b"<?xml",
        b"<object",
        b"<embed",
    ];
    let sample = &bytes[..bytes.len().min(TEXT_SAMPLE)];
    let lower = sample.to_ascii_lowercase();
    NEEDLES
        .iter()
        .any(|needle| lower.windows(needle.len()).any(|w| w == *needle))
}

/// Whether the bytes read as text: no NUL, valid UTF-8 or a single-byte encoding (Excel
/// still writes Windows-1252 CSV), and almost no control characters.
pub(crate) fn looks_like_text(bytes: &[u8]) -> bool {
    let sample = &bytes[..bytes.len().min(TEXT_SAMPLE)];
    let sample = sample.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(sample);
    if sample.contains(&0) {
        return false;
    }
    if let Err(error) = std::str::from_utf8(sample) {
        // A character cut by the sample boundary is fine; anything else means the text is
        // not UTF-8, and is read as Windows-1252, which only lacks five byte values.
        let cut_at_end = error.error_len().is_none() && sample.len() == TEXT_SAMPLE;
        if !cut_at_end
            && sample
                .iter()
                .any(|b| matches!(b, 0x81 | 0x8D | 0x8F | 0x90 | 0x9D))
        {
            return false;
        }
    }
    let controls = sample
        .iter()
        .filter(|&&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0C)) || b == 0x7F)
        .count();
    // Up to one control character in a hundred: form feeds, stray escapes in reports.
    controls * 100 <= sample.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG_BYTES: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";
    const JPEG_BYTES: &[u8] = b"\xFF\xD8\xFF\xE0\0\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0";

    /// The first 64 bytes of an x86-64 ELF executable.
    fn elf_bytes() -> Vec<u8> {
        let mut bytes = b"\x7FELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x3E\0\x01\0\0\0".to_vec();
        bytes.resize(64, 0);
        bytes
    }

    /// A DOS header whose `e_lfanew` points at a PE signature, as every Windows executable.
    fn pe_bytes() -> Vec<u8> {
        let mut bytes = b"MZ\x90\0\x03\0\0\0\x04\0\0\0\xFF\xFF\0\0\xB8".to_vec();
        bytes.resize(0x3C, 0);
        bytes.extend(0x40u32.to_le_bytes());
        bytes.extend(b"PE\0\0\x64\x86");
        bytes.resize(256, 0);
        bytes
    }

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/tests/fixtures/documents/{name}",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../server")
        );
        std::fs::read(path).unwrap()
    }

    #[test]
    fn a_pdf_is_recognised_from_its_bytes() {
        let sniffed = sniff(&fixture("bill_of_lading.pdf"), None, None).unwrap();
        assert_eq!(sniffed, PDF);
    }

    #[test]
    fn an_octet_stream_declaration_gives_way_to_the_bytes() {
        let sniffed = sniff(PNG_BYTES, Some("application/octet-stream"), Some("scan")).unwrap();
        assert_eq!(sniffed.content_type, "image/png");
        assert_eq!(sniffed.extension, "png");
    }

    #[test]
    fn a_wrong_but_harmless_declaration_gives_way_to_the_bytes() {
        let sniffed = sniff(JPEG_BYTES, Some("application/pdf"), Some("scan.pdf")).unwrap();
        assert_eq!(sniffed, JPEG);
    }

    #[test]
    fn html_declared_as_pdf_is_refused() {
        let html = b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>";
        let error = sniff(html, Some("application/pdf"), Some("bl.pdf")).unwrap_err();
        assert_eq!(error, SniffError::Forbidden("markup (HTML, XML or SVG)"));
    }

    #[test]
    fn an_html_page_hiding_a_pdf_header_is_refused() {
        let polyglot = b"<html><script>alert(1)</script>%PDF-1.4\n";
        assert!(matches!(
            sniff(polyglot, None, None),
            Err(SniffError::Forbidden(_))
        ));
    }

    #[test]
    fn svg_is_refused() {
        let svg = b"<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"/>";
        assert!(matches!(
            sniff(svg, Some("image/png"), None),
            Err(SniffError::Forbidden(_))
        ));
    }

    #[test]
    fn markup_after_some_text_is_refused() {
        let text = b"Dear customer,\nsee below\n<script src=//evil.example></script>";
        assert!(matches!(
            sniff(text, None, None),
            Err(SniffError::Forbidden(_))
        ));
    }

    #[test]
    fn an_elf_executable_declared_as_pdf_is_refused() {
        let error = sniff(&elf_bytes(), Some("application/pdf"), None).unwrap_err();
        assert_eq!(error, SniffError::Forbidden("executable"));
    }

    #[test]
    fn a_windows_executable_is_refused() {
        let error = sniff(&pe_bytes(), None, Some("invoice.pdf")).unwrap_err();
        assert_eq!(error, SniffError::Forbidden("executable"));
    }

    #[test]
    fn text_that_starts_like_a_dos_header_is_still_text() {
        let sniffed = sniff(b"MZ Logistics\nARRIVAL NOTICE\n", None, None).unwrap();
        assert_eq!(sniffed, PLAIN_TEXT);
    }

    #[test]
    fn a_shell_script_is_refused() {
        let error = sniff(b"#!/bin/sh\nrm -rf /\n", Some("text/plain"), None).unwrap_err();
        assert_eq!(error, SniffError::Forbidden("script"));
    }

    #[test]
    fn a_declared_html_type_is_refused_even_for_plain_bytes() {
        let error = sniff(
            b"hello <b>world</b>",
            Some("Text/HTML; charset=utf-8"),
            None,
        )
        .unwrap_err();
        assert_eq!(error, SniffError::DeclaredForbidden("text/html".into()));
    }

    #[test]
    fn a_script_extension_is_refused_even_for_plain_text() {
        let error = sniff(b"Write-Host hi", None, Some("C:\\Users\\me\\run.PS1")).unwrap_err();
        assert_eq!(error, SniffError::ExtensionForbidden("ps1".into()));
    }

    #[test]
    fn a_double_extension_ending_in_exe_is_refused() {
        let error = sniff(&fixture("bill_of_lading.pdf"), None, Some("bl.pdf.exe")).unwrap_err();
        assert_eq!(error, SniffError::ExtensionForbidden("exe".into()));
    }

    #[test]
    fn trailing_dots_do_not_hide_an_extension() {
        let error = sniff(b"text", None, Some("page.html. .")).unwrap_err();
        assert_eq!(error, SniffError::ExtensionForbidden("html".into()));
    }

    #[test]
    fn plain_utf8_text_is_text_plain() {
        let sniffed = sniff("ARRIVAL NOTICE\nPort: Göteborg\n".as_bytes(), None, None).unwrap();
        assert_eq!(sniffed, PLAIN_TEXT);
        assert!(sniffed.is_text());
    }

    #[test]
    fn text_named_csv_is_text_csv() {
        let sniffed = sniff(
            b"container,bl\nMSCU1234566,MEDUQ1234567\n",
            None,
            Some("a.csv"),
        );
        assert_eq!(sniffed.unwrap(), CSV);
    }

    #[test]
    fn text_declared_as_excel_by_a_windows_browser_is_text_csv() {
        let sniffed = sniff(b"a;b\n1;2\n", Some("application/vnd.ms-excel"), None);
        assert_eq!(sniffed.unwrap(), CSV);
    }

    #[test]
    fn windows_1252_text_is_text() {
        let sniffed = sniff(b"Caf\xE9;Cr\xE8me\nPrice \x80 12\n", None, None).unwrap();
        assert_eq!(sniffed, PLAIN_TEXT);
    }

    #[test]
    fn bytes_with_nul_that_match_no_signature_are_unsupported() {
        let error = sniff(b"\x00\x01\x02garbage\x00", None, None).unwrap_err();
        assert_eq!(error, SniffError::Unsupported(None));
    }

    #[test]
    fn a_plain_zip_archive_is_unsupported() {
        let zip = b"PK\x03\x04\x14\0\0\0\x08\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x05\0\0\0a.txt";
        let error = sniff(zip, None, Some("docs.zip")).unwrap_err();
        assert_eq!(error, SniffError::Unsupported(Some("application/zip")));
    }

    #[test]
    fn an_empty_file_is_refused() {
        assert_eq!(
            sniff(b"", Some("application/pdf"), None),
            Err(SniffError::Empty)
        );
    }

    #[test]
    fn a_docx_is_recognised_from_its_first_entry() {
        // A ZIP local file header (30 bytes) whose entry is "word/document.xml", as Word
        // writes near the start; infer reads the first entry name at offset 30.
        let name = b"word/document.xml";
        let mut zip = b"PK\x03\x04".to_vec();
        zip.extend([0u8; 22]);
        zip.extend(u16::try_from(name.len()).unwrap().to_le_bytes());
        zip.extend(0u16.to_le_bytes());
        zip.extend(name);
        assert_eq!(sniff(&zip, None, None).unwrap(), DOCX);
    }

    #[test]
    fn every_accepted_type_has_a_distinct_extension() {
        let mut extensions: Vec<_> = ACCEPTED.iter().map(|s| s.extension).collect();
        extensions.sort_unstable();
        extensions.dedup();
        assert_eq!(extensions.len(), ACCEPTED.len());
    }
}
