//! The IMAP mailbox poller (`email.imap_url`): every `imap_poll_seconds` it logs in to the
//! mailbox, hands each new message to the [`Intake`] exactly as the SMTP receiver does,
//! then flags it `\Seen` and/or moves it (`imap_mark_seen`, `imap_move_to`); it never
//! deletes a message other than by moving it.
//!
//! Which messages are new: the intake keeps, per mailbox, its `UIDVALIDITY` and the highest
//! UID seen under it ([`Cursor`], through [`Cursors`]); a poll asks for the UIDs above it
//! (`UID SEARCH UID n:* UNDELETED`), read or not. Without a cursor (the first poll, or the
//! first after the server renumbered the mailbox) it takes every unseen message, then sets
//! the cursor past the messages that were there. The cursor moves past a message only after
//! it was filed and flagged or moved, and each message is handed over with its source
//! ([`Arrival::source_key`]: the mailbox URL with `UIDVALIDITY` and UID, RFC 5092), which
//! the intake records once: a message taken again after a crash or a lost connection
//! between the two is found recorded and only flagged, never filed twice.
//!
//! A poll that fails (refused login, unreachable server, a timeout, an answer other than
//! `OK`, the intake or its database) is logged and counted, and the next one comes after a
//! growing delay; the server keeps running.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_imap::error::Error as ImapError;
use async_imap::imap_proto::{
    AttributeValue, MailboxDatum, MessageSection, Response, SectionPath, Status,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use crate::message;
use crate::{Arrival, Ingested, Intake};

/// Messages one poll takes at most; when more wait, the next poll follows at once.
pub const MAX_MESSAGES_PER_POLL: usize = 50;
/// The longest any one exchange with the server may take (a 25 MiB message included).
const STEP_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest wait between two polls after failures (unless the interval is longer).
const MAX_BACKOFF: Duration = Duration::from_secs(30 * 60);

/// The IMAP mailbox polled for documents (`email.imap_*`, read and checked by the server's
/// settings).
#[derive(Clone, PartialEq, Eq)]
pub struct ImapConfig {
    pub host: String,
    pub port: u16,
    /// Implicit TLS (`imaps://`, RFC 8314); plain `imap://` only to a loopback host.
    pub tls: bool,
    pub username: String,
    pub password: String,
    /// The mailbox read (`INBOX`).
    pub mailbox: String,
    /// How long between two polls that went well.
    pub poll_interval: Duration,
    /// Flag each message taken `\Seen`.
    pub mark_seen: bool,
    /// Move each message taken to this mailbox.
    pub move_to: Option<String>,
}

impl ImapConfig {
    /// The mailbox as an IMAP URL (RFC 5092) without the password: what the poller's
    /// progress and its submissions' `source_key` are recorded under.
    pub fn mailbox_url(&self) -> String {
        let mut url = format!(
            "imap://{}@{}:{}/",
            encode(&self.username),
            self.host,
            self.port
        );
        url.push_str(&encode(&self.mailbox));
        url
    }
}

/// Percent-encodes what an IMAP URL's user or mailbox may not hold as such.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,=".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

impl fmt::Debug for ImapConfig {
    // The password is never shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImapConfig")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("username", &self.username)
            .field("mailbox", &self.mailbox)
            .field("poll_interval", &self.poll_interval)
            .field("mark_seen", &self.mark_seen)
            .field("move_to", &self.move_to)
            .finish_non_exhaustive()
    }
}

/// How far a polled mailbox has been read: the mailbox's `UIDVALIDITY` (RFC 3501
/// §2.3.1.1) and the highest UID taken under it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cursor {
    pub uid_validity: u32,
    pub last_uid: u32,
}

/// Where the poller keeps its [`Cursor`] per mailbox (named by its URL,
/// [`ImapConfig::mailbox_url`]), beside the intake that files its messages.
pub trait Cursors: Intake {
    /// The mailbox's cursor, `None` before its first poll.
    fn cursor(
        &self,
        mailbox_url: &str,
    ) -> impl Future<Output = Result<Option<Cursor>, Self::Error>> + Send;

    /// Keeps the mailbox's cursor.
    fn save_cursor(
        &self,
        mailbox_url: &str,
        cursor: Cursor,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;
}

/// What one poll did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PollReport {
    /// Filed, with at least one document.
    pub processed: usize,
    /// Filed as rejected (no attachment, too large, not MIME, nothing kept).
    pub rejected: usize,
    /// Not filed: a sender not allowed.
    pub refused: usize,
    /// Filed before (a poll cut short after filing it); only flagged or moved now.
    pub already_recorded: usize,
    /// More messages wait than one poll takes.
    pub more: bool,
}

impl PollReport {
    /// Messages taken from the mailbox.
    pub fn taken(&self) -> usize {
        self.processed + self.rejected + self.refused + self.already_recorded
    }

    fn count(&mut self, outcome: &Ingested) {
        let (count, name) = match outcome {
            Ingested::Processed { .. } => (&mut self.processed, "processed"),
            Ingested::Rejected { .. } => (&mut self.rejected, "rejected"),
            Ingested::Refused(_) => (&mut self.refused, "refused"),
            Ingested::AlreadyRecorded => (&mut self.already_recorded, "already_recorded"),
        };
        *count += 1;
        metrics::counter!("tidemark_imap_messages_total", "outcome" => name).increment(1);
    }
}

/// Why a poll failed; the next one retries. `E`: the intake's error.
#[derive(Debug, thiserror::Error)]
pub enum PollError<E: std::error::Error + 'static> {
    #[error("cannot reach {address}: {source}")]
    Connect {
        address: String,
        source: std::io::Error,
    },
    #[error("TLS with {host} failed: {reason}")]
    Tls { host: String, reason: String },
    #[error("the server refused the login of {user}: {reason}")]
    LoginRefused { user: String, reason: String },
    #[error("{step} took longer than {STEP_TIMEOUT:?}")]
    TimedOut { step: &'static str },
    #[error("{step}: {source}")]
    Imap {
        step: &'static str,
        source: async_imap::error::Error,
    },
    #[error("the server gave no UIDVALIDITY for {0}")]
    NoUidValidity(String),
    #[error(
        "email.imap_move_to: the server can neither MOVE (RFC 6851) nor UID EXPUNGE \
         (UIDPLUS, RFC 4315), so a message cannot be moved without deleting others"
    )]
    CannotMove,
    /// The intake could not file a message or keep the cursor.
    #[error(transparent)]
    Intake(E),
}

/// A connection to the server, plain (loopback only) or TLS.
trait Transport: AsyncRead + AsyncWrite + Unpin + Send + std::fmt::Debug {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + std::fmt::Debug> Transport for T {}

type Session = async_imap::Session<Box<dyn Transport>>;

/// How a message taken leaves the mailbox, when `imap_move_to` is set.
#[derive(Clone, Copy)]
enum Move {
    /// `UID MOVE` (RFC 6851).
    Move,
    /// `UID COPY`, `\Deleted`, `UID EXPUNGE` of that UID only (UIDPLUS, RFC 4315).
    CopyAndExpunge,
}

/// Polls one mailbox; keeps the count of failures that sets the backoff.
pub struct Poller<I> {
    intake: Arc<I>,
    settings: ImapConfig,
    /// The largest message read whole (`email.max_message_bytes`).
    max_message_bytes: usize,
    /// The mailbox as an IMAP URL: the name of its cursor, the prefix of `source_key`.
    mailbox_url: String,
    failures: u32,
}

/// Polls `poller`'s mailbox until `shutdown`.
pub async fn run<I: Cursors>(mut poller: Poller<I>, shutdown: CancellationToken) {
    loop {
        let result = tokio::select! {
            () = shutdown.cancelled() => return,
            result = poller.poll() => result,
        };
        let wait = poller.next_poll_in(&result);
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(wait) => {}
        }
    }
}

impl<I: Cursors> Poller<I> {
    /// A poller of `settings`' mailbox that reads messages of up to `max_message_bytes`
    /// whole and hands them to `intake`.
    pub fn new(intake: Arc<I>, settings: ImapConfig, max_message_bytes: usize) -> Self {
        Self {
            mailbox_url: settings.mailbox_url(),
            intake,
            settings,
            max_message_bytes,
            failures: 0,
        }
    }

    /// Failed polls since the last good one.
    pub fn consecutive_failures(&self) -> u32 {
        self.failures
    }

    /// One poll: logs in, files what is new, flags or moves it, logs out. Logged and
    /// counted (`tidemark_imap_polls_total`, `tidemark_imap_messages_total`).
    pub async fn poll(&mut self) -> Result<PollReport, PollError<I::Error>> {
        let result = self.poll_once().await;
        let mailbox = self.mailbox_url.as_str();
        match &result {
            Ok(report) => {
                if self.failures > 0 {
                    tracing::info!(
                        mailbox,
                        after_failures = self.failures,
                        "IMAP mailbox polled again"
                    );
                }
                self.failures = 0;
                if report.taken() > 0 {
                    tracing::info!(
                        mailbox,
                        processed = report.processed,
                        rejected = report.rejected,
                        refused = report.refused,
                        already_recorded = report.already_recorded,
                        more = report.more,
                        "IMAP messages taken"
                    );
                }
            }
            Err(error) => {
                self.failures = self.failures.saturating_add(1);
                let retry_in = self.backoff();
                if matches!(error, PollError::Intake(error) if I::unconfigured(error)) {
                    tracing::error!(mailbox, %error, ?retry_in, "IMAP poll failed");
                } else {
                    tracing::warn!(mailbox, %error, failures = self.failures, ?retry_in, "IMAP poll failed");
                }
            }
        }
        let outcome = if result.is_ok() { "ok" } else { "failed" };
        metrics::counter!("tidemark_imap_polls_total", "outcome" => outcome).increment(1);
        metrics::gauge!("tidemark_imap_consecutive_failures").set(f64::from(self.failures));
        result
    }

    /// How long to wait after `last` (the result of [`Poller::poll`]): nothing when more
    /// messages wait, the poll interval after a good poll, and after failures the interval
    /// doubled for each one in a row, up to 30 minutes (or the interval, if longer).
    pub fn next_poll_in(&self, last: &Result<PollReport, PollError<I::Error>>) -> Duration {
        match last {
            Ok(report) if report.more => Duration::ZERO,
            Ok(_) => self.settings.poll_interval,
            Err(_) => self.backoff(),
        }
    }

    fn backoff(&self) -> Duration {
        let interval = self.settings.poll_interval;
        let doublings = self.failures.saturating_sub(1).min(16);
        interval
            .saturating_mul(1 << doublings)
            .min(MAX_BACKOFF.max(interval))
    }

    async fn poll_once(&self) -> Result<PollReport, PollError<I::Error>> {
        let mut session = self.log_in().await?;
        let result = self.take_new(&mut session).await;
        // Polite, but the connection is dropped either way.
        let _ = tokio::time::timeout(STEP_TIMEOUT, session.logout()).await;
        result
    }

    async fn log_in(&self) -> Result<Session, PollError<I::Error>> {
        let settings = &self.settings;
        let address = format!("{}:{}", settings.host, settings.port);
        let tcp = tokio::time::timeout(
            STEP_TIMEOUT,
            TcpStream::connect((settings.host.as_str(), settings.port)),
        )
        .await
        .map_err(|_| PollError::TimedOut { step: "connect" })?
        .map_err(|source| PollError::Connect { address, source })?;
        let stream: Box<dyn Transport> = if settings.tls {
            Box::new(Self::tls(&settings.host, tcp).await?)
        } else {
            Box::new(tcp)
        };
        let mut client = async_imap::Client::new(stream);
        let greeting = Self::step("greeting", async {
            client
                .read_response()
                .await
                .map_err(async_imap::error::Error::Io)
        })
        .await?;
        if greeting.is_none() {
            return Err(PollError::Imap {
                step: "greeting",
                source: async_imap::error::Error::ConnectionLost,
            });
        }
        let login = tokio::time::timeout(
            STEP_TIMEOUT,
            client.login(&settings.username, &settings.password),
        )
        .await
        .map_err(|_| PollError::TimedOut { step: "LOGIN" })?;
        login.map_err(|(error, _)| match error {
            async_imap::error::Error::No(reason) | async_imap::error::Error::Bad(reason) => {
                PollError::LoginRefused {
                    user: settings.username.clone(),
                    reason,
                }
            }
            source => PollError::Imap {
                step: "LOGIN",
                source,
            },
        })
    }

    async fn take_new(&self, session: &mut Session) -> Result<PollReport, PollError<I::Error>> {
        let settings = &self.settings;
        let moving = match &settings.move_to {
            None => None,
            Some(_) => {
                let capabilities = Self::step("CAPABILITY", session.capabilities()).await?;
                if capabilities.has_str("MOVE") {
                    Some(Move::Move)
                } else if capabilities.has_str("UIDPLUS") {
                    Some(Move::CopyAndExpunge)
                } else {
                    return Err(PollError::CannotMove);
                }
            }
        };
        let mailbox = Self::step("SELECT", session.select(&settings.mailbox)).await?;
        let uid_validity = mailbox
            .uid_validity
            .ok_or_else(|| PollError::NoUidValidity(settings.mailbox.clone()))?;
        let cursor = self
            .intake
            .cursor(&self.mailbox_url)
            .await
            .map_err(PollError::Intake)?;
        let after = cursor
            .filter(|cursor| cursor.uid_validity == uid_validity)
            .map(|cursor| cursor.last_uid);
        // Messages flagged \Deleted are on their way out, whoever flagged them.
        let query = match after {
            Some(u32::MAX) => return Ok(PollReport::default()),
            Some(last) => format!("UID {}:* UNDELETED", last + 1),
            None => "UNSEEN UNDELETED".to_owned(),
        };
        // `n:*` names the highest UID even when it is below n (RFC 3501 §6.4.8).
        let mut uids: Vec<u32> = Self::search(session, &query)
            .await?
            .into_iter()
            .filter(|uid| after.is_none_or(|last| *uid > last))
            .collect();
        uids.sort_unstable();
        // Without a cursor, every unseen message is taken in this poll, and the cursor is
        // set only after them all, past the messages that were there (read ones included):
        // set earlier, the next poll would take the read ones above it.
        let limit = if after.is_some() {
            MAX_MESSAGES_PER_POLL
        } else {
            usize::MAX
        };
        let mut report = PollReport {
            more: uids.len() > limit,
            ..PollReport::default()
        };
        let mut last_taken = None;
        for uid in uids.into_iter().take(limit) {
            if let Some(outcome) = self.take(session, uid_validity, uid).await? {
                report.count(&outcome);
                self.settle(session, uid, moving).await?;
            }
            last_taken = Some(uid);
            if after.is_some() {
                self.save_cursor(uid_validity, uid).await?;
            }
            // Untagged EXISTS/EXPUNGE answers queue up here; nothing needs them.
            while session.unsolicited_responses.try_recv().is_ok() {}
        }
        if after.is_none() {
            // Messages arriving meanwhile have UIDs from UIDNEXT on: taken next time.
            let there = mailbox.uid_next.map(|next| next.saturating_sub(1));
            if let Some(last) = there.max(last_taken).filter(|last| *last > 0) {
                self.save_cursor(uid_validity, last).await?;
            }
        }
        Ok(report)
    }

    async fn save_cursor(
        &self,
        uid_validity: u32,
        last_uid: u32,
    ) -> Result<(), PollError<I::Error>> {
        let cursor = Cursor {
            uid_validity,
            last_uid,
        };
        self.intake
            .save_cursor(&self.mailbox_url, cursor)
            .await
            .map_err(PollError::Intake)
    }

    /// Reads message `uid` (its size first, so one larger than `max_message_bytes` is not
    /// read beyond its header) and files it; `None` when it is gone.
    async fn take(
        &self,
        session: &mut Session,
        uid_validity: u32,
        uid: u32,
    ) -> Result<Option<Ingested>, PollError<I::Error>> {
        let source_key = format!("{};UIDVALIDITY={uid_validity}/;UID={uid}", self.mailbox_url);
        let max = self.max_message_bytes;
        let Some(sized) = Self::fetch(session, uid, "(UID RFC822.SIZE)").await? else {
            return Ok(None);
        };
        let declared = sized.size.map_or(0, u64::from);
        let outcome = if declared > max as u64 {
            let Some(fetched) = Self::fetch(session, uid, "BODY.PEEK[HEADER]").await? else {
                return Ok(None);
            };
            let header = fetched.header.unwrap_or_default();
            self.too_large(&source_key, &header, declared).await?
        } else {
            let Some(fetched) = Self::fetch(session, uid, "BODY.PEEK[]").await? else {
                return Ok(None);
            };
            let raw = fetched.whole.unwrap_or_default();
            let raw = raw.as_slice();
            if raw.len() > max {
                let header = raw
                    .windows(4)
                    .position(|w| w == b"\r\n\r\n")
                    .map_or(raw, |end| &raw[..end + 4]);
                self.too_large(&source_key, header, raw.len() as u64)
                    .await?
            } else {
                let sender = message::return_path(raw);
                let arrival = Arrival {
                    sender: &sender,
                    source_key: Some(&source_key),
                };
                self.intake
                    .receive(arrival, raw)
                    .await
                    .map_err(PollError::Intake)?
            }
        };
        match &outcome {
            Ingested::Processed {
                submission,
                documents,
            } => tracing::info!(uid, %submission, documents, "IMAP message filed"),
            Ingested::Rejected { submission, reason } => {
                tracing::info!(uid, %submission, reason, "IMAP message filed as rejected");
            }
            Ingested::Refused(reason) => tracing::info!(uid, reason, "IMAP message refused"),
            Ingested::AlreadyRecorded => {
                tracing::info!(uid, "IMAP message filed before; not filed again");
            }
        }
        Ok(Some(outcome))
    }

    async fn too_large(
        &self,
        source_key: &str,
        header: &[u8],
        size: u64,
    ) -> Result<Ingested, PollError<I::Error>> {
        let sender = message::return_path(header);
        let arrival = Arrival {
            sender: &sender,
            source_key: Some(source_key),
        };
        self.intake
            .receive_too_large(arrival, header, size)
            .await
            .map_err(PollError::Intake)
    }

    /// Flags message `uid` `\Seen` and/or moves it, as configured.
    async fn settle(
        &self,
        session: &mut Session,
        uid: u32,
        moving: Option<Move>,
    ) -> Result<(), PollError<I::Error>> {
        if self.settings.mark_seen {
            Self::command(
                session,
                "UID STORE",
                &format!("UID STORE {uid} +FLAGS.SILENT (\\Seen)"),
            )
            .await?;
        }
        let (Some(folder), Some(moving)) = (&self.settings.move_to, moving) else {
            return Ok(());
        };
        let folder = quoted(folder);
        match moving {
            Move::Move => {
                Self::command(session, "UID MOVE", &format!("UID MOVE {uid} {folder}")).await
            }
            Move::CopyAndExpunge => {
                Self::command(session, "UID COPY", &format!("UID COPY {uid} {folder}")).await?;
                Self::command(
                    session,
                    "UID STORE",
                    &format!("UID STORE {uid} +FLAGS.SILENT (\\Deleted)"),
                )
                .await?;
                Self::command(session, "UID EXPUNGE", &format!("UID EXPUNGE {uid}")).await
            }
        }
    }
}

/// A message's parts, as one `UID FETCH` gave them.
#[derive(Default)]
struct Fetched {
    size: Option<u32>,
    whole: Option<Vec<u8>>,
    header: Option<Vec<u8>>,
}

/// A mailbox name as an IMAP quoted string (RFC 3501 §4.3); the settings refuse line breaks.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Exchanges with the server, failing with the intake's kind of [`PollError`].
impl<I: Cursors> Poller<I> {
    /// One exchange with the server, bounded by [`STEP_TIMEOUT`].
    async fn step<T>(
        name: &'static str,
        exchange: impl Future<Output = async_imap::error::Result<T>>,
    ) -> Result<T, PollError<I::Error>> {
        tokio::time::timeout(STEP_TIMEOUT, exchange)
            .await
            .map_err(|_| PollError::TimedOut { step: name })?
            .map_err(|source| PollError::Imap { step: name, source })
    }

    /// Sends `line` and hands each untagged answer to `each` until the server completes it,
    /// failing unless it completes it with `OK`. (async-imap's own `FETCH` and `SEARCH` answers
    /// end quietly on a `NO` or a closed connection, which would read as "nothing there".)
    async fn exchange(
        session: &mut Session,
        name: &'static str,
        line: &str,
        mut each: impl FnMut(&Response<'_>) + Send,
    ) -> Result<(), PollError<I::Error>> {
        Self::step(name, async {
            let tag = session.run_command(line).await?;
            loop {
                let Some(answer) = session.read_response().await? else {
                    return Err(ImapError::ConnectionLost);
                };
                match answer.parsed() {
                    Response::Done {
                        tag: done,
                        status,
                        outcome,
                    } if *done == tag => {
                        let said = || format!("{:?} {:?}", outcome.code, outcome.information);
                        return match status {
                            Status::Ok => Ok(()),
                            Status::No => Err(ImapError::No(said())),
                            _ => Err(ImapError::Bad(said())),
                        };
                    }
                    untagged => each(untagged),
                }
            }
        })
        .await
    }

    /// A command answered with `OK` or an error, its untagged answers dropped.
    async fn command(
        session: &mut Session,
        name: &'static str,
        line: &str,
    ) -> Result<(), PollError<I::Error>> {
        Self::exchange(session, name, line, |_| {}).await
    }

    /// `UID SEARCH query`: the UIDs found.
    async fn search(session: &mut Session, query: &str) -> Result<Vec<u32>, PollError<I::Error>> {
        let mut uids = Vec::new();
        Self::exchange(
            session,
            "UID SEARCH",
            &format!("UID SEARCH {query}"),
            |answer| {
                if let Response::MailboxData(MailboxDatum::Search(found)) = answer {
                    uids.extend_from_slice(found);
                }
            },
        )
        .await?;
        Ok(uids)
    }

    /// `UID FETCH uid items`: the parts of that message, or `None` when it is gone.
    async fn fetch(
        session: &mut Session,
        uid: u32,
        items: &str,
    ) -> Result<Option<Fetched>, PollError<I::Error>> {
        let mut found = None;
        Self::exchange(
            session,
            "UID FETCH",
            &format!("UID FETCH {uid} {items}"),
            |answer| {
                let Response::Fetch(_, attributes) = answer else {
                    return;
                };
                if !attributes
                    .iter()
                    .any(|a| matches!(a, AttributeValue::Uid(this) if *this == uid))
                {
                    return;
                }
                let mut fetched = Fetched::default();
                for attribute in attributes {
                    match attribute {
                        AttributeValue::Rfc822Size(size) => fetched.size = Some(*size),
                        AttributeValue::BodySection {
                            section: None,
                            data: Some(data),
                            ..
                        }
                        | AttributeValue::Rfc822(Some(data)) => fetched.whole = Some(data.to_vec()),
                        AttributeValue::BodySection {
                            section: Some(SectionPath::Full(MessageSection::Header)),
                            data: Some(data),
                            ..
                        }
                        | AttributeValue::Rfc822Header(Some(data)) => {
                            fetched.header = Some(data.to_vec());
                        }
                        _ => {}
                    }
                }
                found = Some(fetched);
            },
        )
        .await?;
        Ok(found)
    }

    /// Implicit TLS (RFC 8314) with the platform's roots, as every HTTPS client of ours.
    async fn tls(
        host: &str,
        tcp: TcpStream,
    ) -> Result<tokio_rustls::client::TlsStream<TcpStream>, PollError<I::Error>> {
        use rustls_platform_verifier::ConfigVerifierExt;

        let failed = |reason: String| PollError::Tls {
            host: host.to_owned(),
            reason,
        };
        tidemark_carriers::tls::install_provider();
        let config = rustls::ClientConfig::with_platform_verifier()
            .map_err(|error| failed(error.to_string()))?;
        let name = rustls::pki_types::ServerName::try_from(host.to_owned())
            .map_err(|error| failed(error.to_string()))?;
        tokio::time::timeout(
            STEP_TIMEOUT,
            tokio_rustls::TlsConnector::from(Arc::new(config)).connect(name, tcp),
        )
        .await
        .map_err(|_| PollError::TimedOut {
            step: "TLS handshake",
        })?
        .map_err(|error| failed(error.to_string()))
    }
}
