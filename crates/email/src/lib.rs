//! Documents that arrive by email, without a database: everything about a message up to the
//! point where it is filed.
//!
//! - [`shape`]: the parts, nesting and header lines of a message, counted before it is
//!   parsed, so a message of too many is refused without building them.
//! - [`message`]: one raw message read into plain data ([`message::Reading`]): refused (a
//!   sender not allowed), to be recorded as rejected with a reason, or read, with what its
//!   headers say and its attachments (names, declared types, bytes).
//! - [`smtp`]: the SMTP receiver, which hands each message to an [`Intake`].
//! - [`imap`]: the IMAP mailbox poller, which hands each new message to an [`Intake`], then
//!   flags or moves it, keeping its progress through [`imap::Cursors`].
//!
//! The [`Intake`] files messages (the server: email submissions, documents, EDI, webhooks);
//! this crate never touches a store.

use std::future::Future;

use uuid::Uuid;

pub mod imap;
pub mod message;
pub mod shape;
pub mod smtp;

/// What happened to a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ingested {
    /// Recorded; `documents` of its attachments became documents (its EDI interchanges are
    /// counted in its `status_reason`).
    Processed { submission: Uuid, documents: usize },
    /// Recorded as rejected, with the reason.
    Rejected { submission: Uuid, reason: String },
    /// Not recorded: the sender is not allowed.
    Refused(String),
    /// Not recorded again: a submission from the same source (the same message of a polled
    /// mailbox) was recorded before.
    AlreadyRecorded,
}

/// Where a message came from.
#[derive(Clone, Copy, Debug)]
pub struct Arrival<'a> {
    /// The envelope sender: SMTP's `MAIL FROM`, or the `Return-Path` a mail server wrote
    /// into a polled message; empty when unknown.
    pub sender: &'a str,
    /// Names the message when it could be taken twice (a polled mailbox's message: the
    /// mailbox URL with its `UIDVALIDITY` and the message's UID, RFC 5092); `None` for mail
    /// delivered over SMTP.
    pub source_key: Option<&'a str>,
}

/// What files the messages the receiver and the poller take.
pub trait Intake: Send + Sync + 'static {
    /// Why a message could not be filed now; the sender (or the next poll) tries again.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Files one raw message of at most the largest size allowed.
    fn receive(
        &self,
        arrival: Arrival<'_>,
        raw: &[u8],
    ) -> impl Future<Output = Result<Ingested, Self::Error>> + Send;

    /// Files a polled message of `size` bytes, more than the largest allowed, of which only
    /// `header` was read (a polled message has no sender to answer, as SMTP's `552` does).
    fn receive_too_large(
        &self,
        arrival: Arrival<'_>,
        header: &[u8],
        size: u64,
    ) -> impl Future<Output = Result<Ingested, Self::Error>> + Send;

    /// Whether `error` says mail has nowhere to go (a setting, not a passing failure): the
    /// receiver answers that it is not configured, and both log it as an error.
    fn unconfigured(error: &Self::Error) -> bool;
}
