//! Client-supplied file names, made safe to show and to send back in `Content-Disposition`;
//! and the storage keys, which never contain a client-supplied name.

use std::fmt::Write as _;

use uuid::Uuid;

/// The name used when nothing usable is left of the client's.
pub const FALLBACK_NAME: &str = "document";

/// The longest sanitized name, in bytes: below every common file system's 255.
pub const MAX_NAME_BYTES: usize = 180;

/// The longest extension kept when a long name is shortened.
const MAX_EXTENSION_CHARS: usize = 16;

/// Makes a client-supplied file name safe for display and download.
///
/// Keeps the last path component (either separator), removes control and invisible
/// direction-changing characters (which can disguise `exe` as `pdf`), replaces characters
/// Windows forbids, collapses white space, removes leading and trailing dots, defuses
/// reserved Windows device names, and shortens the name to [`MAX_NAME_BYTES`] keeping its
/// extension. Returns [`FALLBACK_NAME`] when nothing is left; a name that was only an
/// extension (".pdf") becomes `document.pdf`.
pub fn sanitize(name: &str) -> String {
    let base = name
        .split(['/', '\\'])
        .rev()
        .find(|part| !part.trim().is_empty())
        .unwrap_or_default();
    let mut cleaned = String::with_capacity(base.len());
    let mut last_was_space = true;
    for c in base.chars() {
        if c.is_control() || is_invisible_format(c) {
            continue;
        }
        let c = if c.is_whitespace() { ' ' } else { c };
        if c == ' ' {
            if !last_was_space {
                cleaned.push(' ');
            }
            last_was_space = true;
            continue;
        }
        last_was_space = false;
        cleaned.push(if matches!(c, '<' | '>' | ':' | '"' | '|' | '?' | '*') {
            '_'
        } else {
            c
        });
    }
    let trimmed = cleaned.trim_end_matches([' ', '.']);
    let without_leading = trimmed.trim_start_matches([' ', '.']);
    let mut result = if without_leading.is_empty() {
        FALLBACK_NAME.to_owned()
    } else if without_leading.len() < trimmed.len() && !without_leading.contains('.') {
        // ".pdf" named only an extension; ".bashrc" becomes "document.bashrc", harmless.
        format!("{FALLBACK_NAME}.{without_leading}")
    } else {
        without_leading.to_owned()
    };
    if is_reserved_windows_name(&result) {
        result.insert(0, '_');
    }
    shorten(&result, MAX_NAME_BYTES)
}

/// Bidirectional overrides, zero-width characters and the byte order mark: invisible, and
/// used to make "invoice\u{202E}fdp.exe" display as "invoiceexe.pdf".
fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

/// CON, PRN, AUX, NUL, COM1–9 and LPT1–9 open devices on Windows, with any extension.
fn is_reserved_windows_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    let upper = stem.to_ascii_uppercase();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" => true,
        _ => {
            let (Some(prefix), Some(rest)) = (upper.get(..3), upper.get(3..)) else {
                return false;
            };
            matches!(prefix, "COM" | "LPT")
                && matches!(
                    rest,
                    "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "¹" | "²" | "³"
                )
        }
    }
}

/// Cuts `name` to at most `max` bytes on a character boundary, keeping a short extension.
fn shorten(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_owned();
    }
    let (stem, extension) = match name.rsplit_once('.') {
        Some((stem, extension))
            if !stem.is_empty() && extension.chars().count() <= MAX_EXTENSION_CHARS =>
        {
            (stem, Some(extension))
        }
        _ => (name, None),
    };
    let room = max - extension.map_or(0, |e| e.len() + 1);
    let mut cut = room.min(stem.len());
    while !stem.is_char_boundary(cut) {
        cut -= 1;
    }
    let stem = stem[..cut].trim_end_matches([' ', '.']);
    let stem = if stem.is_empty() { FALLBACK_NAME } else { stem };
    match extension {
        Some(extension) => format!("{stem}.{extension}"),
        None => stem.to_owned(),
    }
}

/// How a browser should treat a served file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// Save it (the default for documents).
    Attachment,
    /// Show it in the browser when it can (PDF and images only).
    Inline,
}

/// A `Content-Disposition` value for `name` (sanitized here again, so any string may be
/// passed): an ASCII `filename` for old clients and an RFC 5987 / RFC 6266 `filename*`
/// with the exact UTF-8 name.
pub fn content_disposition(name: &str, disposition: Disposition) -> String {
    let name = sanitize(name);
    let kind = match disposition {
        Disposition::Attachment => "attachment",
        Disposition::Inline => "inline",
    };
    let fallback: String = name
        .chars()
        .map(|c| match c {
            // Quotes and backslashes would end or escape the quoted string; some clients
            // percent-decode `filename`, so `%` goes too.
            '"' | '\\' | '%' => '_',
            c if c.is_ascii_graphic() || c == ' ' => c,
            _ => '_',
        })
        .collect();
    let mut encoded = String::with_capacity(name.len() * 3);
    for byte in name.bytes() {
        if is_attr_char(byte) {
            encoded.push(char::from(byte));
        } else {
            // Writing to a String cannot fail.
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    format!("{kind}; filename=\"{fallback}\"; filename*=UTF-8''{encoded}")
}

/// RFC 5987 `attr-char`: the bytes that need no percent-encoding in `filename*`.
fn is_attr_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
        || matches!(
            byte,
            b'!' | b'#' | b'$' | b'&' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
        )
}

/// Where a document's bytes are stored: built from ids only, so no client-supplied text
/// ever reaches a file system path or an object key.
///
/// `extension` is the sniffed one; anything but lowercase ASCII letters and digits is
/// dropped from it, and an empty result leaves the key without an extension.
pub fn storage_key(account_id: Uuid, document_id: Uuid, extension: &str) -> String {
    let extension: String = extension
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .take(MAX_EXTENSION_CHARS)
        .collect();
    if extension.is_empty() {
        format!("accounts/{account_id}/documents/{document_id}")
    } else {
        format!("accounts/{account_id}/documents/{document_id}.{extension}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ordinary_name_is_kept() {
        assert_eq!(
            sanitize("Bill of Lading MAEU123.pdf"),
            "Bill of Lading MAEU123.pdf"
        );
    }

    #[test]
    fn unicode_letters_are_kept() {
        assert_eq!(
            sanitize("Rechnung Müller – März.pdf"),
            "Rechnung Müller – März.pdf"
        );
    }

    #[test]
    fn unix_path_traversal_keeps_only_the_last_component() {
        assert_eq!(sanitize("../../../etc/passwd"), "passwd");
    }

    #[test]
    fn windows_paths_keep_only_the_last_component() {
        assert_eq!(sanitize("C:\\Users\\me\\..\\bl.pdf"), "bl.pdf");
    }

    #[test]
    fn a_name_of_only_dots_falls_back() {
        assert_eq!(sanitize(".."), FALLBACK_NAME);
        assert_eq!(sanitize("../.."), FALLBACK_NAME);
    }

    #[test]
    fn an_empty_name_falls_back() {
        assert_eq!(sanitize(""), FALLBACK_NAME);
        assert_eq!(sanitize("   "), FALLBACK_NAME);
        assert_eq!(sanitize("dir/"), "dir");
    }

    #[test]
    fn a_name_that_is_only_an_extension_gets_a_stem() {
        assert_eq!(sanitize(".pdf"), "document.pdf");
    }

    #[test]
    fn leading_dots_are_removed() {
        assert_eq!(sanitize("...hidden.pdf"), "hidden.pdf");
    }

    #[test]
    fn trailing_dots_and_spaces_are_removed() {
        assert_eq!(sanitize("invoice.pdf. . "), "invoice.pdf");
    }

    #[test]
    fn nul_and_control_characters_are_removed() {
        assert_eq!(sanitize("bl\0.html\r\n\u{1b}[31m.pdf"), "bl.html[31m.pdf");
    }

    #[test]
    fn a_right_to_left_override_cannot_disguise_the_extension() {
        assert_eq!(sanitize("invoice\u{202E}fdp.exe"), "invoicefdp.exe");
    }

    #[test]
    fn characters_windows_forbids_are_replaced() {
        assert_eq!(sanitize("a<b>c:d\"e|f?g*h.pdf"), "a_b_c_d_e_f_g_h.pdf");
    }

    #[test]
    fn white_space_runs_collapse_to_one_space() {
        assert_eq!(
            sanitize("  bill \t of\u{00A0}\u{00A0}lading.pdf "),
            "bill of lading.pdf"
        );
    }

    #[test]
    fn reserved_windows_device_names_are_defused() {
        assert_eq!(sanitize("CON.pdf"), "_CON.pdf");
        assert_eq!(sanitize("lpt1"), "_lpt1");
        assert_eq!(sanitize("com9.txt"), "_com9.txt");
        assert_eq!(sanitize("CONTAINER.pdf"), "CONTAINER.pdf");
        assert_eq!(sanitize("COM10.pdf"), "COM10.pdf");
        assert_eq!(sanitize("Ñé.pdf"), "Ñé.pdf");
    }

    #[test]
    fn a_huge_name_is_shortened_keeping_its_extension() {
        let name = format!("{}.pdf", "é".repeat(10_000));
        let safe = sanitize(&name);
        assert!(safe.len() <= MAX_NAME_BYTES);
        assert!(safe.ends_with("é.pdf"));
    }

    #[test]
    fn a_huge_name_with_a_huge_extension_is_cut_whole() {
        let name = format!("a.{}", "x".repeat(1_000));
        let safe = sanitize(&name);
        assert_eq!(safe.len(), MAX_NAME_BYTES);
    }

    #[test]
    fn content_disposition_has_an_ascii_fallback_and_an_encoded_name() {
        assert_eq!(
            content_disposition("Müller \"final\" 100%.pdf", Disposition::Attachment),
            "attachment; filename=\"M_ller _final_ 100_.pdf\"; \
             filename*=UTF-8''M%C3%BCller%20_final_%20100%25.pdf"
        );
    }

    #[test]
    fn content_disposition_sanitizes_what_it_is_given() {
        let value = content_disposition("../x\r\nSet-Cookie: a=b;.pdf", Disposition::Inline);
        assert!(value.starts_with("inline; filename=\"x"));
        assert!(!value.contains(['\r', '\n']));
    }

    #[test]
    fn storage_keys_are_built_from_ids_only() {
        let account = Uuid::from_u128(1);
        let document = Uuid::from_u128(2);
        assert_eq!(
            storage_key(account, document, "pdf"),
            "accounts/00000000-0000-0000-0000-000000000001/documents/\
             00000000-0000-0000-0000-000000000002.pdf"
        );
    }

    #[test]
    fn storage_keys_drop_anything_odd_in_the_extension() {
        let key = storage_key(Uuid::nil(), Uuid::nil(), "../../P D F");
        assert!(key.ends_with(".pdf"));
        assert!(!storage_key(Uuid::nil(), Uuid::nil(), "/").contains("./"));
    }
}
