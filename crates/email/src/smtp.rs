//! A minimal SMTP receiver (RFC 5321) for documents sent by email: `EHLO`/`HELO`, `MAIL`,
//! `RCPT`, `DATA`, `RSET`, `NOOP`, `QUIT`, with `SIZE` and `8BITMIME`; no relaying, no
//! `AUTH` and no `STARTTLS` (put it behind a mail server or a TLS proxy on a public
//! network, or keep it on a private one, and name the senders in `email.allowed_senders`).
//!
//! Every session is bounded: line length, recipients, message size (a larger message is
//! read to its end and refused with `552`), idle time per command, bad commands, and the
//! number of sessions at once (`email.smtp_max_sessions`: each may hold a message of up to
//! `email.max_message_bytes`). A message is handed to the [`Intake`], which bounds its parts
//! before parsing it ([`message`](crate::message)), and answered with what became of it.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::message::sender_allowed;
use crate::{Arrival, Ingested, Intake};

/// Longest command line (RFC 5321 §4.5.3.1.4: 512 octets; some clients send more).
const MAX_LINE_BYTES: usize = 4096;
/// Recipients per message.
const MAX_RECIPIENTS: usize = 100;
/// Commands that failed before the session is closed.
const MAX_ERRORS: usize = 10;
/// A client silent this long is disconnected (RFC 5321 §4.5.3.2 asks for minutes).
const IDLE: Duration = Duration::from_secs(300);

/// What the receiver accepts.
#[derive(Clone, Debug)]
pub struct Limits {
    /// The largest message accepted (`552` beyond; `email.max_message_bytes`).
    pub max_message_bytes: usize,
    /// Sessions served at once; more wait for a free one (`email.smtp_max_sessions`).
    pub max_sessions: usize,
    /// Senders allowed in `MAIL FROM` ([`sender_allowed`]); empty allows any.
    pub allowed_senders: Vec<String>,
}

/// Serves SMTP on `listener` until `shutdown`, handing each message to `intake`.
pub async fn serve<I: Intake>(
    intake: Arc<I>,
    limits: Limits,
    listener: TcpListener,
    shutdown: CancellationToken,
) {
    // More wait for a free one, in the listener's backlog.
    let sessions = Arc::new(Semaphore::new(limits.max_sessions));
    let limits = Arc::new(limits);
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(%error, "SMTP accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&sessions).acquire_owned().await else {
            return;
        };
        let intake = Arc::clone(&intake);
        let limits = Arc::clone(&limits);
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = shutdown.cancelled() => {}
                result = session(&*intake, &limits, stream) => {
                    if let Err(error) = result {
                        tracing::debug!(%error, %peer, "SMTP session ended");
                    }
                }
            }
            drop(permit);
        });
    }
}

/// What one line read gave.
enum Read {
    Line(Vec<u8>),
    TooLong,
    Closed,
}

struct Connection {
    reader: BufReader<tokio::net::tcp::OwnedReadHalf>,
    writer: tokio::net::tcp::OwnedWriteHalf,
}

impl Connection {
    async fn reply(&mut self, text: &str) -> std::io::Result<()> {
        self.writer.write_all(text.as_bytes()).await?;
        self.writer.write_all(b"\r\n").await?;
        self.writer.flush().await
    }

    /// One line, without its ending; at most `max` bytes are kept (the rest of a longer
    /// line is read and dropped).
    async fn line(&mut self, max: usize) -> std::io::Result<Read> {
        let mut line = Vec::new();
        let mut too_long = false;
        loop {
            let chunk = tokio::time::timeout(IDLE, self.reader.fill_buf())
                .await
                .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "idle"))??;
            if chunk.is_empty() {
                return Ok(Read::Closed);
            }
            let (take, done) = match chunk.iter().position(|b| *b == b'\n') {
                Some(at) => (at + 1, true),
                None => (chunk.len(), false),
            };
            if line.len() + take <= max + 2 {
                line.extend_from_slice(&chunk[..take]);
            } else {
                too_long = true;
            }
            self.reader.consume(take);
            if done {
                break;
            }
        }
        if too_long {
            return Ok(Read::TooLong);
        }
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        Ok(Read::Line(line))
    }
}

/// The address in `FROM:<a@b>` / `TO:<a@b>` and the parameters after it.
fn path_argument<'a>(rest: &'a str, keyword: &str) -> Option<(&'a str, &'a str)> {
    let rest = rest.trim_start();
    if rest.len() < keyword.len() || !rest[..keyword.len()].eq_ignore_ascii_case(keyword) {
        return None;
    }
    let rest = rest[keyword.len()..].trim_start();
    let rest = rest.strip_prefix('<')?;
    let (address, parameters) = rest.split_once('>')?;
    Some((address.trim(), parameters.trim()))
}

/// The `SIZE=` parameter of `MAIL FROM`.
fn declared_size(parameters: &str) -> Option<u64> {
    parameters
        .split_ascii_whitespace()
        .find_map(|p| {
            p.get(..5)
                .filter(|k| k.eq_ignore_ascii_case("SIZE="))
                .and(p.get(5..))
        })
        .and_then(|n| n.parse().ok())
}

async fn session<I: Intake>(intake: &I, limits: &Limits, stream: TcpStream) -> std::io::Result<()> {
    let (read, write) = stream.into_split();
    let mut conn = Connection {
        reader: BufReader::new(read),
        writer: write,
    };
    let max = limits.max_message_bytes;
    let allowed = &limits.allowed_senders;
    conn.reply("220 tidemark ESMTP ready").await?;
    let mut greeted = false;
    let mut sender: Option<String> = None;
    let mut recipients = 0usize;
    let mut errors = 0usize;
    loop {
        if errors >= MAX_ERRORS {
            conn.reply("421 4.7.0 too many errors, closing").await?;
            return Ok(());
        }
        let line = match conn.line(MAX_LINE_BYTES).await? {
            Read::Closed => return Ok(()),
            Read::TooLong => {
                errors += 1;
                conn.reply("500 5.5.2 line too long").await?;
                continue;
            }
            Read::Line(line) => String::from_utf8_lossy(&line).into_owned(),
        };
        let (verb, rest) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        match verb.to_ascii_uppercase().as_str() {
            "EHLO" => {
                greeted = true;
                sender = None;
                recipients = 0;
                conn.reply(&format!(
                    "250-tidemark\r\n250-SIZE {max}\r\n250-8BITMIME\r\n250 ENHANCEDSTATUSCODES"
                ))
                .await?;
            }
            "HELO" => {
                greeted = true;
                sender = None;
                recipients = 0;
                conn.reply("250 tidemark").await?;
            }
            "MAIL" => {
                let Some((address, parameters)) = path_argument(rest, "FROM:") else {
                    errors += 1;
                    conn.reply("501 5.5.4 syntax: MAIL FROM:<address>").await?;
                    continue;
                };
                if !greeted {
                    errors += 1;
                    conn.reply("503 5.5.1 say EHLO first").await?;
                } else if sender.is_some() {
                    errors += 1;
                    conn.reply("503 5.5.1 sender already given").await?;
                } else if !sender_allowed(allowed, address) {
                    errors += 1;
                    conn.reply("550 5.7.1 sender not allowed to send documents")
                        .await?;
                } else if declared_size(parameters).is_some_and(|n| n > max as u64) {
                    conn.reply(&format!("552 5.3.4 message larger than {max} bytes"))
                        .await?;
                } else {
                    sender = Some(address.to_owned());
                    recipients = 0;
                    conn.reply("250 2.1.0 OK").await?;
                }
            }
            "RCPT" => {
                if sender.is_none() {
                    errors += 1;
                    conn.reply("503 5.5.1 need MAIL first").await?;
                } else if path_argument(rest, "TO:").is_none() {
                    errors += 1;
                    conn.reply("501 5.5.4 syntax: RCPT TO:<address>").await?;
                } else if recipients >= MAX_RECIPIENTS {
                    conn.reply("452 4.5.3 too many recipients").await?;
                } else {
                    recipients += 1;
                    conn.reply("250 2.1.5 OK").await?;
                }
            }
            "DATA" => {
                let Some(from) = sender.take().filter(|_| recipients > 0) else {
                    errors += 1;
                    conn.reply("503 5.5.1 need MAIL and RCPT first").await?;
                    continue;
                };
                recipients = 0;
                conn.reply("354 end data with <CR><LF>.<CR><LF>").await?;
                let Some(message) = data(&mut conn, max).await? else {
                    conn.reply(&format!("552 5.3.4 message larger than {max} bytes"))
                        .await?;
                    continue;
                };
                let arrival = Arrival {
                    sender: &from,
                    source_key: None,
                };
                let answer = match intake.receive(arrival, &message).await {
                    Ok(Ingested::Processed {
                        submission,
                        documents,
                    }) => {
                        format!(
                            "250 2.0.0 accepted as email submission {submission}: {documents} document(s)"
                        )
                    }
                    Ok(Ingested::Rejected { submission, reason }) => {
                        format!("554 5.6.0 {reason} (recorded as email submission {submission})")
                    }
                    Ok(Ingested::Refused(reason)) => format!("550 5.7.1 {reason}"),
                    // Only a polled message has a source that could have been recorded.
                    Ok(Ingested::AlreadyRecorded) => "250 2.0.0 already recorded".to_owned(),
                    Err(error) if I::unconfigured(&error) => {
                        tracing::error!(%error, "an emailed document has no account to go to");
                        "451 4.3.0 not configured to receive documents".to_owned()
                    }
                    Err(error) => {
                        tracing::warn!(error = ?error, "cannot file an email");
                        "451 4.3.0 try again later".to_owned()
                    }
                };
                conn.reply(&one_line(&answer)).await?;
            }
            "RSET" => {
                sender = None;
                recipients = 0;
                conn.reply("250 2.0.0 OK").await?;
            }
            "NOOP" => conn.reply("250 2.0.0 OK").await?,
            "VRFY" => conn.reply("252 2.1.5 cannot verify").await?,
            "QUIT" => {
                conn.reply("221 2.0.0 bye").await?;
                return Ok(());
            }
            _ => {
                errors += 1;
                conn.reply("502 5.5.1 command not implemented").await?;
            }
        }
    }
}

/// A reply's text on one line, without anything a client could read as a new reply.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(900)
        .collect()
}

/// The message after `DATA`, dot-unstuffed, up to the line with a single dot; `None` when
/// it has more than `max` bytes (it is still read to its end).
async fn data(conn: &mut Connection, max: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut message = Vec::new();
    let mut too_large = false;
    loop {
        // Text lines may be up to 998 octets; longer ones are kept whole up to the limit.
        let line = match conn.line(max.max(1024)).await? {
            Read::Closed => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "closed during DATA",
                ));
            }
            Read::TooLong => {
                too_large = true;
                continue;
            }
            Read::Line(line) => line,
        };
        if line == b"." {
            break;
        }
        if too_large {
            continue;
        }
        let line = line.strip_prefix(b".").unwrap_or(&line);
        if message.len() + line.len() + 2 > max {
            too_large = true;
            message = Vec::new();
            continue;
        }
        message.extend_from_slice(line);
        message.extend_from_slice(b"\r\n");
    }
    Ok((!too_large).then_some(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_sizes_are_read_from_mail_and_rcpt() {
        assert_eq!(
            path_argument("FROM:<a@b.example> SIZE=120", "FROM:"),
            Some(("a@b.example", "SIZE=120"))
        );
        assert_eq!(path_argument("from: <>", "FROM:"), Some(("", "")));
        assert_eq!(path_argument("TO:a@b", "TO:"), None);
        assert_eq!(declared_size("BODY=8BITMIME size=4096"), Some(4096));
        assert_eq!(declared_size("BODY=8BITMIME"), None);
    }

    #[test]
    fn a_reply_stays_on_one_line() {
        assert_eq!(one_line("550 a\r\n250 b"), "550 a  250 b");
    }
}
