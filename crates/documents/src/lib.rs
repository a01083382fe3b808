//! Shipment documents, read without IO (the server stores them, runs [`text`] and
//! [`spreadsheet`] in a child process under OS limits, and links what was found):
//!
//! - [`sniff`]: the real content type, from the bytes; refuses markup, executables, scripts.
//! - [`filename`]: client file names made safe for display and `Content-Disposition`, and the
//!   storage keys (which never contain a client-supplied name).
//! - [`text`]: plain text out of PDFs and text files, bounded in input, pages and inflated
//!   content.
//! - [`spreadsheet`]: the rows of files of numbers (CSV, XLSX), checked against their caps
//!   before calamine allocates.
//! - [`classify`]: the document type, with notes that say why.
//! - [`fields`]: the fields a document of its type carries.
//! - [`references`]: container numbers (ISO 6346, check digit verified) and bill of lading
//!   candidates found in the text.
//! - [`rotate`]: a PDF with its pages turned.

pub mod classify;
pub mod fields;
pub mod filename;
pub mod references;
pub mod rotate;
pub mod sniff;
pub mod spreadsheet;
pub mod text;
