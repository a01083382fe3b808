//! The rows of a file of tracking numbers (CSV or XLSX), read in the extraction child
//! ([`super::isolate`]), never in the server.
//!
//! A spreadsheet makes its parser allocate what it declares: a shared-strings count of
//! 10^15 had calamine reserve 24 PB, and two cells at A1 and XFD1048576 had it build a
//! dense range of 17 billion cells. So before calamine opens the workbook, the archive is
//! checked from its own bytes: at most [`MAX_PARTS`] parts that really inflate to at most
//! [`MAX_UNPACKED_BYTES`] together, and a shared-strings table declaring at most
//! [`MAX_SHARED_STRINGS`]. The first sheet's declared `<dimension>` is then checked before
//! a cell is read, and its cells are streamed (never a dense range), each checked against
//! [`MAX_SHEET_ROWS`] and [`MAX_SHEET_COLUMNS`]. Whatever slips past these meets the
//! child's memory, CPU and time limits.
//!
//! Only what the Track page uses comes back: the first [`COLUMNS_ANSWERED`] columns (number,
//! carrier, type) of the first rows whose first cell is not blank, each cell at most
//! [`MAX_CELL_CHARS`] characters.

use std::fmt;
use std::io::{Cursor, Read};

use serde::{Deserialize, Serialize};

use super::text::ExtractError;

/// Largest file read (the Track page's upload limit is smaller).
pub const MAX_INPUT_BYTES: usize = 4 << 20;
/// What an XLSX file's parts may inflate to, together.
pub const MAX_UNPACKED_BYTES: u64 = 32 << 20;
/// Parts (files) in an XLSX archive.
pub const MAX_PARTS: usize = 1_000;
/// Shared strings a workbook may declare (calamine reserves room for each).
pub const MAX_SHARED_STRINGS: u64 = 1_000_000;
/// Rows a sheet may declare or span.
pub const MAX_SHEET_ROWS: u64 = 10_000;
/// Columns a sheet may declare or span (IV, the old Excel width).
pub const MAX_SHEET_COLUMNS: u64 = 256;
/// Columns answered: number, carrier, request type.
pub const COLUMNS_ANSWERED: usize = 3;
/// Characters kept of a cell (a number is a few dozen at most).
pub const MAX_CELL_CHARS: usize = 256;
/// How far into the shared-strings part its `<sst>` tag is looked for.
const SST_TAG_WINDOW: u64 = 64 * 1024;

/// One row's cells, as text.
pub type Row = Vec<String>;

/// Why a file of numbers was not read; each message names the limit it met.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SheetError {
    NeitherCsvNorXlsx,
    /// Not a readable XLSX archive or workbook.
    Unreadable,
    NoSheet,
    TooLarge {
        size: usize,
        limit: usize,
    },
    TooManyParts {
        parts: usize,
        limit: usize,
    },
    UnpacksTooMuch {
        limit: u64,
    },
    TooManySharedStrings {
        declared: u64,
        limit: u64,
    },
    /// `declared`: by the sheet's `<dimension>`; otherwise spanned by its cells.
    TooManyRows {
        rows: u64,
        range: String,
        declared: bool,
        limit: u64,
    },
    TooManyColumns {
        columns: u64,
        range: String,
        declared: bool,
        limit: u64,
    },
    /// The parser panicked.
    Crashed,
    /// The reading process met its memory, CPU or time limit and was stopped.
    Stopped(ExtractError),
    /// The reading process could not run or answered nonsense (the detail is logged).
    Failed,
}

impl fmt::Display for SheetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = |declared: bool| if declared { "declares" } else { "has cells in" };
        match self {
            Self::NeitherCsvNorXlsx => write!(f, "the file is neither CSV nor XLSX."),
            Self::Unreadable => write!(f, "the XLSX file could not be read."),
            Self::NoSheet => write!(f, "the XLSX file has no sheet."),
            Self::TooLarge { size, limit } => write!(
                f,
                "the file has {} bytes; at most {} are read.",
                grouped(*size as u64),
                grouped(*limit as u64)
            ),
            Self::TooManyParts { parts, limit } => write!(
                f,
                "the XLSX file has {} parts; at most {} are read.",
                grouped(*parts as u64),
                grouped(*limit as u64)
            ),
            Self::UnpacksTooMuch { limit } => {
                write!(f, "the XLSX file unpacks to more than {} MB.", limit >> 20)
            }
            Self::TooManySharedStrings { declared, limit } => write!(
                f,
                "the spreadsheet declares {} shared strings; at most {} are read.",
                grouped(*declared),
                grouped(*limit)
            ),
            Self::TooManyRows {
                rows,
                range,
                declared,
                limit,
            } => write!(
                f,
                "the spreadsheet {} {} rows ({range}); at most {} are read.",
                how(*declared),
                grouped(*rows),
                grouped(*limit)
            ),
            Self::TooManyColumns {
                columns,
                range,
                declared,
                limit,
            } => write!(
                f,
                "the spreadsheet {} {} columns ({range}); at most {} are read.",
                how(*declared),
                grouped(*columns),
                grouped(*limit)
            ),
            Self::Crashed => write!(f, "the spreadsheet parser failed on this file."),
            Self::Stopped(error) => write!(f, "{error}."),
            Self::Failed => write!(
                f,
                "the file could not be read (the reading process failed)."
            ),
        }
    }
}

impl std::error::Error for SheetError {}

/// `1048576` → `1,048,576`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A cell's name from its zero-based position: `(1048575, 16383)` → `XFD1048576`.
fn cell_name(row: u32, column: u32) -> String {
    let mut letters = Vec::new();
    let mut n = u64::from(column) + 1;
    while n > 0 {
        let rem = (n - 1) % 26;
        // `rem` < 26: always a letter.
        letters.push(char::from(b'A' + rem as u8));
        n = (n - 1) / 26;
    }
    letters.reverse();
    format!(
        "{}{}",
        letters.into_iter().collect::<String>(),
        u64::from(row) + 1
    )
}

/// The rows of a file of numbers: an XLSX file (a zip) or CSV/plain text, at most
/// `max_rows` of them whose first cell is not blank.
pub fn read_rows(bytes: &[u8], max_rows: usize) -> Result<Vec<Row>, SheetError> {
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(SheetError::TooLarge {
            size: bytes.len(),
            limit: MAX_INPUT_BYTES,
        });
    }
    if bytes.starts_with(b"PK\x03\x04") {
        xlsx_rows(bytes, max_rows)
    } else if bytes.contains(&0) {
        Err(SheetError::NeitherCsvNorXlsx)
    } else {
        Ok(csv_rows(&String::from_utf8_lossy(bytes), max_rows))
    }
}

/// A cell as answered: trimmed and cut to [`MAX_CELL_CHARS`].
fn cell_text(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(MAX_CELL_CHARS) {
        Some((end, _)) => text[..end].to_owned(),
        None => text.to_owned(),
    }
}

/// Lines split at `,`, `;` or tab, as the Track page splits a paste.
fn csv_rows(text: &str, max_rows: usize) -> Vec<Row> {
    text.lines()
        .map(|line| {
            line.split([',', ';', '\t'])
                .take(COLUMNS_ANSWERED)
                .map(cell_text)
                .collect::<Row>()
        })
        .filter(|cells| cells.first().is_some_and(|first| !first.is_empty()))
        .take(max_rows)
        .collect()
}

fn xlsx_rows(bytes: &[u8], max_rows: usize) -> Result<Vec<Row>, SheetError> {
    check_archive(bytes)?;
    let mut workbook: calamine::Xlsx<_> =
        calamine::open_workbook_from_rs(Cursor::new(bytes)).map_err(|_| SheetError::Unreadable)?;
    let Some(name) = calamine::Reader::sheet_names(&workbook).into_iter().next() else {
        return Err(SheetError::NoSheet);
    };
    // First pass: the limits, and where the data starts (as calamine's ranges do: at the
    // first row and the first column holding a value).
    let Some(start) = data_start(&mut workbook, &name)? else {
        return Ok(Vec::new());
    };
    // Second pass: the answered columns of each row from there.
    let mut cells = workbook
        .worksheet_cells_reader(&name)
        .map_err(|_| SheetError::Unreadable)?;
    let mut rows = std::collections::BTreeMap::<u32, Row>::new();
    while let Some(cell) = cells.next_cell().map_err(|_| SheetError::Unreadable)? {
        let (row, column) = cell.get_position();
        let Some(index) = column
            .checked_sub(start.1)
            .map(|i| i as usize)
            .filter(|i| *i < COLUMNS_ANSWERED)
        else {
            continue;
        };
        let value = calamine::Data::from(cell.get_value().clone()).to_string();
        let answered = rows
            .entry(row.saturating_sub(start.0))
            .or_insert_with(|| vec![String::new(); COLUMNS_ANSWERED]);
        if let Some(slot) = answered.get_mut(index) {
            *slot = cell_text(&value);
        }
    }
    Ok(rows
        .into_values()
        .map(|mut cells| {
            // Trailing empty cells say nothing.
            while cells.last().is_some_and(String::is_empty) {
                cells.pop();
            }
            cells
        })
        .filter(|cells| cells.first().is_some_and(|first| !first.is_empty()))
        .take(max_rows)
        .collect())
}

/// Checks the first sheet's declared dimension and every cell's place against the caps;
/// answers the first row and column holding a value (`None`: no value at all).
fn data_start(
    workbook: &mut calamine::Xlsx<Cursor<&[u8]>>,
    name: &str,
) -> Result<Option<(u32, u32)>, SheetError> {
    let mut cells = match workbook.worksheet_cells_reader(name) {
        Ok(cells) => cells,
        // A chart sheet first: nothing to read, as calamine's own range would say.
        Err(calamine::XlsxError::NotAWorksheet(_)) => return Ok(None),
        Err(_) => return Err(SheetError::Unreadable),
    };
    let declared = cells.dimensions();
    check_span(declared.start, declared.end, true)?;
    // (first row, first column, last row, last column) of the values.
    let mut span: Option<(u32, u32, u32, u32)> = None;
    while let Some(cell) = cells.next_cell().map_err(|_| SheetError::Unreadable)? {
        if matches!(cell.get_value(), calamine::DataRef::Empty) {
            continue;
        }
        let (row, column) = cell.get_position();
        let next = match span {
            None => (row, column, row, column),
            Some((r0, c0, r1, c1)) => (r0.min(row), c0.min(column), r1.max(row), c1.max(column)),
        };
        check_span((next.0, next.1), (next.2, next.3), false)?;
        span = Some(next);
    }
    Ok(span.map(|(row, column, _, _)| (row, column)))
}

/// Refuses a range of more than [`MAX_SHEET_ROWS`] rows or [`MAX_SHEET_COLUMNS`] columns.
fn check_span(start: (u32, u32), end: (u32, u32), declared: bool) -> Result<(), SheetError> {
    let rows = u64::from(end.0.saturating_sub(start.0)) + 1;
    let columns = u64::from(end.1.saturating_sub(start.1)) + 1;
    let range = || {
        format!(
            "{}{}{}",
            cell_name(start.0, start.1),
            if declared { ":" } else { " to " },
            cell_name(end.0, end.1)
        )
    };
    if rows > MAX_SHEET_ROWS {
        return Err(SheetError::TooManyRows {
            rows,
            range: range(),
            declared,
            limit: MAX_SHEET_ROWS,
        });
    }
    if columns > MAX_SHEET_COLUMNS {
        return Err(SheetError::TooManyColumns {
            columns,
            range: range(),
            declared,
            limit: MAX_SHEET_COLUMNS,
        });
    }
    Ok(())
}

/// The archive's own limits, checked before calamine reads it: the number of parts, what
/// they really inflate to (a directory's sizes can lie), and the shared strings declared.
fn check_archive(bytes: &[u8]) -> Result<(), SheetError> {
    let mut archive =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|_| SheetError::Unreadable)?;
    if archive.len() > MAX_PARTS {
        return Err(SheetError::TooManyParts {
            parts: archive.len(),
            limit: MAX_PARTS,
        });
    }
    let too_much = SheetError::UnpacksTooMuch {
        limit: MAX_UNPACKED_BYTES,
    };
    // The directory first: nothing inflated when it already says too much.
    let mut declared = 0u64;
    for index in 0..archive.len() {
        let part = archive
            .by_index_raw(index)
            .map_err(|_| SheetError::Unreadable)?;
        declared = declared.saturating_add(part.size());
    }
    if declared > MAX_UNPACKED_BYTES {
        return Err(too_much);
    }
    let mut left = MAX_UNPACKED_BYTES;
    for index in 0..archive.len() {
        let mut part = archive
            .by_index(index)
            .map_err(|_| SheetError::Unreadable)?;
        let shared_strings = part
            .name()
            .map_err(|_| SheetError::Unreadable)?
            .replace('\\', "/")
            .to_ascii_lowercase()
            .ends_with("sharedstrings.xml");
        let head = if shared_strings {
            check_shared_strings(&mut part)?
        } else {
            0
        };
        // One byte past what is left is enough to know.
        let rest = std::io::copy(&mut (&mut part).take(left + 1), &mut std::io::sink())
            .map_err(|_| SheetError::Unreadable)?;
        left = left
            .checked_sub(head.saturating_add(rest))
            .ok_or_else(|| too_much.clone())?;
    }
    Ok(())
}

/// Refuses a shared-strings table whose `<sst>` declares more than [`MAX_SHARED_STRINGS`]
/// (in `count` or `uniqueCount`): calamine reserves room for them all. Reads the part's
/// first [`SST_TAG_WINDOW`] bytes, where the tag is, and answers how many it read.
fn check_shared_strings(part: &mut impl Read) -> Result<u64, SheetError> {
    let mut head = Vec::new();
    part.take(SST_TAG_WINDOW)
        .read_to_end(&mut head)
        .map_err(|_| SheetError::Unreadable)?;
    let text = String::from_utf8_lossy(&head);
    let Some(tag) = sst_tag(&text) else {
        return Err(SheetError::Unreadable);
    };
    for name in ["count", "uniqueCount"] {
        if let Some(declared) = attribute(tag, name).and_then(count)
            && declared > MAX_SHARED_STRINGS
        {
            return Err(SheetError::TooManySharedStrings {
                declared,
                limit: MAX_SHARED_STRINGS,
            });
        }
    }
    Ok(head.len() as u64)
}

/// The inside of the first `<sst …>` (or `<x:sst …>`) start tag.
fn sst_tag(xml: &str) -> Option<&str> {
    let mut rest = xml;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let end = rest.find('>')?;
        let tag = &rest[..end];
        let name = tag
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap_or_default();
        if name.rsplit(':').next() == Some("sst") {
            return Some(tag);
        }
        rest = &rest[end..];
    }
    None
}

/// An attribute's value in a start tag (`name="v"` or `name='v'`).
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = tag;
    loop {
        let at = rest.find(name)?;
        let before = rest[..at].chars().next_back();
        let after = rest[at + name.len()..].trim_start();
        rest = &rest[at + name.len()..];
        if !before.is_some_and(char::is_whitespace) {
            continue;
        }
        let Some(value) = after.strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start();
        let quote = value.chars().next()?;
        if quote != '"' && quote != '\'' {
            return None;
        }
        let value = &value[1..];
        return value.find(quote).map(|end| &value[..end]);
    }
}

/// A declared count, as calamine reads it (digits, perhaps signed); absurdly long ones
/// saturate.
fn count(value: &str) -> Option<u64> {
    let digits = value.trim().trim_start_matches('+');
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u64>().unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_048_576), "1,048,576");
        assert_eq!(grouped(1_000_000_000_000_000), "1,000,000,000,000,000");
    }

    #[test]
    fn cells_are_named_as_spreadsheets_name_them() {
        assert_eq!(cell_name(0, 0), "A1");
        assert_eq!(cell_name(99_999, 99), "CV100000");
        assert_eq!(cell_name(1_048_575, 16_383), "XFD1048576");
    }

    #[test]
    fn the_shared_strings_counts_are_read_from_the_sst_tag() {
        let xml = "<?xml version=\"1.0\"?><x:sst xmlns:x=\"urn\" count='12' uniqueCount=\"1000000000000000\"><si/>";
        let tag = sst_tag(xml).unwrap_or_default();
        assert_eq!(attribute(tag, "count").and_then(count), Some(12));
        assert_eq!(
            attribute(tag, "uniqueCount").and_then(count),
            Some(1_000_000_000_000_000)
        );
        assert_eq!(count("99999999999999999999999"), Some(u64::MAX));
        assert_eq!(count("-3"), None);
    }

    #[test]
    fn a_csv_gives_its_first_three_cells_of_each_non_blank_line() {
        let rows = csv_rows("a, b ;c\td\n\n ,x\nz", 10);
        assert_eq!(
            rows,
            vec![
                vec!["a".to_owned(), "b".to_owned(), "c".to_owned()],
                vec!["z".to_owned()]
            ]
        );
    }

    #[test]
    fn a_long_cell_is_cut() {
        assert_eq!(cell_text(&"é".repeat(1000)).chars().count(), MAX_CELL_CHARS);
    }
}
