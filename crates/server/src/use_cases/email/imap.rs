//! The IMAP mailbox poller (`email.imap_url`): the `email` crate's
//! [`imap`](tidemark_email::imap) (the session, which messages are new, flags and moves,
//! the backoff), handing each message to [`ingest`](super::ingest) through a [`Mailroom`] and
//! keeping its cursor in the store ([`MailboxCursor`]).

use std::sync::Arc;
use std::time::Duration;

use tidemark_email::imap::{self as poll, Cursor, Cursors};
use tidemark_store::MailboxCursor;
use tokio_util::sync::CancellationToken;

use super::ingest::{IngestError, Mailroom};
use crate::config::ImapConfig;

pub use tidemark_email::imap::{MAX_MESSAGES_PER_POLL, PollReport};

/// Why a poll failed; the next one retries.
pub type PollError = poll::PollError<IngestError>;

impl Cursors for Mailroom {
    async fn cursor(&self, mailbox_url: &str) -> Result<Option<Cursor>, IngestError> {
        let cursor = self.core.store.mailbox_cursor(mailbox_url).await?;
        Ok(cursor.map(|cursor| Cursor {
            uid_validity: cursor.uid_validity,
            last_uid: cursor.last_uid,
        }))
    }

    async fn save_cursor(&self, mailbox_url: &str, cursor: Cursor) -> Result<(), IngestError> {
        let cursor = MailboxCursor {
            uid_validity: cursor.uid_validity,
            last_uid: cursor.last_uid,
        };
        self.core
            .store
            .save_mailbox_cursor(mailbox_url, cursor, self.core.clock.now())
            .await?;
        Ok(())
    }
}

/// Polls one mailbox into a [`Mailroom`]; keeps the count of failures that sets the backoff.
pub struct Poller(poll::Poller<Mailroom>);

/// Polls the configured mailbox until `shutdown`.
pub async fn run(mailroom: Mailroom, settings: ImapConfig, shutdown: CancellationToken) {
    poll::run(Poller::new(mailroom, settings).0, shutdown).await;
}

impl Poller {
    /// A poller of `settings`' mailbox, with the `[email]` settings' largest message.
    pub fn new(mailroom: Mailroom, settings: ImapConfig) -> Self {
        let max_message_bytes = mailroom.email.max_message_bytes;
        Self(poll::Poller::new(
            Arc::new(mailroom),
            settings,
            max_message_bytes,
        ))
    }

    /// Failed polls since the last good one.
    pub fn consecutive_failures(&self) -> u32 {
        self.0.consecutive_failures()
    }

    /// One poll: logs in, files what is new, flags or moves it, logs out
    /// ([`poll::Poller::poll`]).
    pub async fn poll(&mut self) -> Result<PollReport, PollError> {
        self.0.poll().await
    }

    /// How long to wait after `last` ([`poll::Poller::next_poll_in`]).
    pub fn next_poll_in(&self, last: &Result<PollReport, PollError>) -> Duration {
        self.0.next_poll_in(last)
    }
}
