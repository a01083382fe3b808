//! Shipment documents: the pure building blocks of uploads and of the background job that
//! classifies and links them.
//!
//! - [`sniff`]: the real content type, from the bytes; refuses markup, executables, scripts.
//! - [`filename`]: client file names made safe for display and `Content-Disposition`, and the
//!   storage keys (which never contain a client-supplied name).
//! - [`text`]: plain text out of PDFs and text files, bounded in input, pages and inflated
//!   content; [`isolate`](crate::parts::documents::isolate): runs it (and [`classify`]) in a child process under OS limits on
//!   memory, CPU and time.
//! - [`spreadsheet`]: the rows of the Track page's files of numbers (CSV, XLSX), checked
//!   against their caps before calamine allocates; run only through
//!   [`isolate`](crate::parts::documents::isolate).
//! - [`classify`]: the document type, with notes that say why.
//! - [`references`]: container numbers (ISO 6346, check digit verified) and bill of lading
//!   candidates found in the text, for linking to shipments and containers.
//!
//! - The bytes in object storage, signed links and the child process are parts of `App`
//!   ([`crate::parts::documents`]).
//! - [`links`]: a shipment's documents, and linking a document to a shipment.
//! - [`upload`] and [`process`]: the use cases of storing an upload and of classifying and
//!   linking it in the background.
//!
//! The pure parts do no IO and live in the `tidemark-documents` crate (re-exported here);
//! the server runs [`text`] only through the child process.

use crate::parts::documents::isolate::Extractor;
use crate::parts::documents::storage::Storage;

/// What reading a stored document needs beside the [`Core`](crate::parts::core::Core):
/// where its bytes are kept and the child process that reads them. `App::files` builds one.
#[derive(Clone, Copy)]
pub struct Files<'a> {
    pub storage: &'a Storage,
    pub extractor: &'a Extractor,
}

pub mod links;
pub mod process;
pub mod rotate;
pub mod upload;

// The pure readers live in their own crate, `tidemark-documents`; their paths here stay.
pub use tidemark_documents::{classify, fields, filename, references, sniff, spreadsheet, text};
