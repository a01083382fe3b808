//! Documents that arrive by email, the way forwarders receive them.
//!
//! - [`ingest`]: one message (raw MIME) becomes an `email_submission` whose attachments
//!   become documents, linked by the numbers found in the subject, the body and (through
//!   the documents' own reading) the attachments; bad mail is refused or recorded with a
//!   reason.
//! - [`smtp`]: an optional built-in SMTP receiver (`email.smtp_listen`) that hands each
//!   message to [`ingest`].
//! - [`shape`]: the parts, nesting and header lines of a message, counted before it is
//!   parsed, so a message of too many is refused without building them.
//! - [`imap`]: an optional poller of an IMAP mailbox (`email.imap_url`) that hands each new
//!   message to [`ingest`], then flags or moves it.

pub mod imap;
pub mod ingest;
pub mod shape;
pub mod smtp;
