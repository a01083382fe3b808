//! Documents that arrive by email, the way forwarders receive them. What needs nothing of the
//! server is the `email` crate: a message's shape counted before it is parsed ([`shape`]), a raw
//! message read into plain data ([`message`]), the SMTP receiver and the IMAP poller; here
//! the server files what they take.
//!
//! - [`ingest`]: one message (raw MIME) becomes an `email_submission` whose attachments
//!   become documents, linked by the numbers found in the subject, the body and (through
//!   the documents' own reading) the attachments; bad mail is refused or recorded with a
//!   reason. A [`Mailroom`](ingest::Mailroom) (the core, the `[email]` settings, the
//!   document storage, the EDI reader) is the crate's [`Intake`](tidemark_email::Intake).
//! - [`smtp`]: the optional built-in SMTP receiver (`email.smtp_listen`) that hands each
//!   message to [`ingest`].
//! - [`imap`]: the optional poller of an IMAP mailbox (`email.imap_url`) that hands each new
//!   message to [`ingest`], then flags or moves it; its cursor is kept in the store.

pub mod imap;
pub mod ingest;
pub mod smtp;

pub use tidemark_email::{message, shape};
