//! The built-in SMTP receiver (`email.smtp_listen`): the `email` crate's
//! [`smtp`](tidemark_email::smtp) (the protocol, its bounds and replies), handing each
//! message to [`ingest`](super::ingest) through a [`Mailroom`].

use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::ingest::Mailroom;

/// Serves SMTP on `listener` until `shutdown`, with the `[email]` settings' bounds.
pub async fn serve(mailroom: Mailroom, listener: TcpListener, shutdown: CancellationToken) {
    let email = &mailroom.email;
    let limits = tidemark_email::smtp::Limits {
        max_message_bytes: email.max_message_bytes,
        max_sessions: email.smtp_max_sessions,
        allowed_senders: email.allowed_senders.clone(),
    };
    tidemark_email::smtp::serve(Arc::new(mailroom), limits, listener, shutdown).await;
}
