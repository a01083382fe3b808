//! Shipment documents: the pure building blocks of uploads and of the background job that
//! classifies and links them.
//!
//! - [`sniff`]: the real content type, from the bytes; refuses markup, executables, scripts.
//! - [`filename`]: client file names made safe for display and `Content-Disposition`, and the
//!   storage keys (which never contain a client-supplied name).
//! - [`text`]: plain text out of PDFs and text files, bounded in size and time.
//! - [`classify`]: the document type, with notes that say why.
//! - [`references`]: container numbers (ISO 6346, check digit verified) and bill of lading
//!   candidates found in the text, for linking to shipments and containers.
//!
//! Nothing here does IO besides the extraction thread in [`text`].

pub mod classify;
pub mod filename;
pub mod references;
pub mod sniff;
pub mod text;
