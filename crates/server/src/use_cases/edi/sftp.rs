//! Polled SFTP mailboxes (`[[edi.sftp]]`): each poll logs in, lists the remote folder, and
//! files each complete file through the same path as a watched folder
//! ([`folder::file_bytes`], then [`receive`](super::receive)); only once its bytes are
//! stored is the remote file moved to `processed/` or, beside a `<name>.reason.txt`, to
//! `rejected/` (made if missing), or removed (`after = "delete"`).
//!
//! - Only regular files directly in the folder are taken: not subfolders or links, not
//!   names starting with a dot, nor `*.part` and `*.tmp`, as in a watched folder.
//! - A file is taken once it is complete: its size and time the same as the previous poll
//!   saw. A file seen for the first time is listed again after [`SETTLE_RECHECK`] rather
//!   than a whole interval. The server's clock is never compared with ours.
//! - A file larger than [`MAX_BYTES`] is not downloaded: it goes to `rejected/`; one that
//!   grew past it while read is cut at one byte more and refused as well.
//! - A crash (or a lost connection) between the store and the move leaves the file to be
//!   read again: that copy is a `duplicate` of the stored interchange and changes nothing.
//!   A file that could not be stored (the database is down) stays to be retried.
//! - With `after = "delete"`, files whose bytes are stored (as an EDI message, whatever its
//!   status) are removed; a file refused unread (empty, not EDI, too large) is stored
//!   nowhere and still goes to `rejected/`.
//! - Nothing is overwritten: a name already in `processed/` or `rejected/` gets a suffix.
//! - The server's key must match `host_key`, or nothing is sent (not even the password).
//!   Failures (refused connection, refused login, a wrong key, a timeout) are logged with
//!   the entry's number and host, and retried after a backoff that doubles up to
//!   [`MAX_BACKOFF`]; they never stop the server.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use russh::client;
use russh::keys::{HashAlg, PrivateKeyWithHashAlg, PublicKey};
use russh_sftp::client::SftpSession;
use russh_sftp::protocol::OpenFlags;
use tidemark_domain::AccountId;
use tidemark_edi::Reader;
use tidemark_store::StoreError;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use super::folder::{
    self, Outcome, PROCESSED, REJECTED, is_candidate, reason_text, suffixed, with_reason_suffix,
};
use super::{Channel, Edi, Inbound, MAX_BYTES};
use crate::config::{AfterTaken, SftpMailbox};
use crate::parts::core::Core;

/// How long one step (connecting, logging in, one SFTP request) may take.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest wait between polls after failures (or the interval, if longer).
pub const MAX_BACKOFF: Duration = Duration::from_secs(30 * 60);
/// How soon a folder with files not yet complete is listed again.
pub const SETTLE_RECHECK: Duration = Duration::from_secs(5);
/// Suffixes tried for a name already taken, before giving up on the move.
const MAX_SUFFIX: u32 = 1_000;

/// What the previous poll saw of the files not taken yet: size and time by name.
#[derive(Debug, Default)]
pub struct Sightings(HashMap<String, (u64, Option<u32>)>);

/// What one poll did.
#[derive(Debug, Default)]
pub struct PollReport {
    /// Files read and moved or removed, in the order taken.
    pub taken: Vec<Taken>,
    /// Files seen that may still be written: looked at again on the next poll.
    pub waiting: usize,
    /// Files that could not be handled this time, with why: they stay, to be retried.
    pub left: Vec<(String, String)>,
}

/// A remote file read and moved or removed.
#[derive(Debug)]
pub struct Taken {
    pub file_name: String,
    /// Where it is now on the server; `None` when removed.
    pub moved_to: Option<String>,
    /// The interchange's status (`processed`, `partially_processed`, `duplicate`,
    /// `rejected`), or `None` when the file was refused unread (not EDI, too large).
    pub status: Option<String>,
    pub edi_message: Option<Uuid>,
}

#[derive(Debug, thiserror::Error)]
pub enum PollError {
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error(
        "the server's host key {presented} is not the one configured (host_key): nothing was \
         sent"
    )]
    HostKey { presented: String },
    #[error("the login as {user:?} was refused")]
    LoginRefused { user: String },
    #[error("{step} took longer than {STEP_TIMEOUT:?}")]
    Timeout { step: &'static str },
    #[error("SFTP {step}: {message}")]
    Sftp { step: String, message: String },
    #[error("cannot find or make the account {0:?}")]
    Account(String, #[source] StoreError),
}

/// Polls one mailbox until `shutdown`: every interval, sooner while files settle, and
/// after failures the interval doubled for each one in a row, up to [`MAX_BACKOFF`].
pub async fn watch(
    core: Core,
    reader: Reader,
    index: usize,
    mailbox: SftpMailbox,
    shutdown: CancellationToken,
) {
    let edi = Edi {
        core: &core,
        reader,
    };
    let mut seen = Sightings::default();
    let mut failures: u32 = 0;
    let url = mailbox.url();
    loop {
        let result = tokio::select! {
            () = shutdown.cancelled() => return,
            result = poll(&edi, &mailbox, &mut seen) => result,
        };
        let wait = match &result {
            Ok(report) => {
                if failures > 0 {
                    tracing::info!(
                        entry = index,
                        host = mailbox.host,
                        mailbox = url,
                        after_failures = failures,
                        "the SFTP mailbox can be polled again"
                    );
                }
                failures = 0;
                for taken in &report.taken {
                    tracing::info!(
                        entry = index,
                        host = mailbox.host,
                        mailbox = url,
                        file = taken.file_name,
                        status = taken.status.as_deref().unwrap_or("refused"),
                        edi_message = ?taken.edi_message,
                        moved_to = taken.moved_to.as_deref().unwrap_or("(removed)"),
                        "EDI file taken by SFTP"
                    );
                }
                for (file, reason) in &report.left {
                    tracing::warn!(
                        entry = index,
                        host = mailbox.host,
                        mailbox = url,
                        file,
                        reason,
                        "EDI file left on the SFTP server to retry"
                    );
                }
                if report.waiting > 0 || !report.left.is_empty() {
                    SETTLE_RECHECK.min(mailbox.interval)
                } else {
                    mailbox.interval
                }
            }
            Err(error) => {
                failures = failures.saturating_add(1);
                let retry_in = backoff(mailbox.interval, failures);
                let error = with_sources(error);
                tracing::warn!(
                    entry = index,
                    host = mailbox.host,
                    mailbox = url,
                    error,
                    failures,
                    ?retry_in,
                    "SFTP poll failed"
                );
                retry_in
            }
        };
        let outcome = if result.is_ok() { "ok" } else { "failed" };
        metrics::counter!("tidemark_edi_sftp_polls_total", "outcome" => outcome).increment(1);
        if let Ok(report) = &result {
            metrics::counter!("tidemark_edi_sftp_files_total").increment(report.taken.len() as u64);
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// An error's text followed by its sources'.
fn with_sources(error: &PollError) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The wait after `failures` failed polls in a row: the interval doubled for each after
/// the first, up to [`MAX_BACKOFF`] (or the interval, if longer).
pub fn backoff(interval: Duration, failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    interval
        .saturating_mul(1 << doublings)
        .min(MAX_BACKOFF.max(interval))
}

/// The client's side of the SSH handshake: the server's key is checked against
/// `host_key`; a key that does not match is recorded, and the connection refused.
struct Client {
    expected: crate::config::HostKey,
    mismatch: Arc<Mutex<Option<String>>>,
}

impl client::Handler for Client {
    type Error = russh::Error;

    async fn check_server_key(&mut self, key: &PublicKey) -> Result<bool, Self::Error> {
        if self.expected.matches(key) {
            return Ok(true);
        }
        if let Ok(mut mismatch) = self.mismatch.lock() {
            *mismatch = Some(format!(
                "{} {}",
                key.algorithm(),
                key.fingerprint(HashAlg::Sha256)
            ));
        }
        Ok(false)
    }
}

async fn step<T, E: std::fmt::Display>(
    step: &'static str,
    future: impl Future<Output = Result<T, E>>,
) -> Result<T, PollError> {
    match tokio::time::timeout(STEP_TIMEOUT, future).await {
        Err(_) => Err(PollError::Timeout { step }),
        Ok(Err(error)) => Err(PollError::Sftp {
            step: step.to_owned(),
            message: error.to_string(),
        }),
        Ok(Ok(value)) => Ok(value),
    }
}

/// Logs in and opens the SFTP subsystem.
async fn open(mailbox: &SftpMailbox) -> Result<(client::Handle<Client>, SftpSession), PollError> {
    let config = Arc::new(client::Config {
        inactivity_timeout: Some(STEP_TIMEOUT),
        ..client::Config::default()
    });
    let mismatch = Arc::new(Mutex::new(None));
    let handler = Client {
        expected: mailbox.host_key.clone(),
        mismatch: Arc::clone(&mismatch),
    };
    let connected = tokio::time::timeout(
        STEP_TIMEOUT,
        client::connect(config, (mailbox.host.as_str(), mailbox.port), handler),
    )
    .await
    .map_err(|_| PollError::Timeout { step: "connecting" })?;
    let mut session = match connected {
        Ok(session) => session,
        Err(error) => {
            if let Ok(mut mismatch) = mismatch.lock()
                && let Some(presented) = mismatch.take()
            {
                return Err(PollError::HostKey { presented });
            }
            return Err(PollError::Connect(error.to_string()));
        }
    };
    let mut logged_in = false;
    if let Some(key) = &mailbox.private_key {
        let hash = if key.algorithm().is_rsa() {
            tokio::time::timeout(STEP_TIMEOUT, session.best_supported_rsa_hash())
                .await
                .ok()
                .and_then(Result::ok)
                .flatten()
                .flatten()
        } else {
            None
        };
        let key = PrivateKeyWithHashAlg::new(Arc::clone(key), hash);
        logged_in = step(
            "logging in",
            session.authenticate_publickey(&mailbox.user, key),
        )
        .await?
        .success();
    }
    if !logged_in && let Some(password) = &mailbox.password {
        logged_in = step(
            "logging in",
            session.authenticate_password(&mailbox.user, password),
        )
        .await?
        .success();
    }
    if !logged_in {
        return Err(PollError::LoginRefused {
            user: mailbox.user.clone(),
        });
    }
    let channel = step("opening a channel", session.channel_open_session()).await?;
    step(
        "starting the sftp subsystem",
        channel.request_subsystem(true, "sftp"),
    )
    .await?;
    let sftp = step(
        "starting the session",
        SftpSession::new(channel.into_stream()),
    )
    .await?;
    sftp.set_timeout(STEP_TIMEOUT.as_secs());
    Ok((session, sftp))
}

/// One poll of `mailbox` (see the module's documentation); `seen` carries what this poll
/// saw to the next.
pub async fn poll(
    edi: &Edi<'_>,
    mailbox: &SftpMailbox,
    seen: &mut Sightings,
) -> Result<PollReport, PollError> {
    let (session, sftp) = open(mailbox).await?;
    let result = take_complete(edi, mailbox, &sftp, seen).await;
    // Polite, but the connection is dropped either way.
    let _ = tokio::time::timeout(STEP_TIMEOUT, sftp.close()).await;
    let _ = tokio::time::timeout(
        STEP_TIMEOUT,
        session.disconnect(russh::Disconnect::ByApplication, "", "en"),
    )
    .await;
    result
}

fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// Makes `dir` unless it exists.
async fn ensure_dir(sftp: &SftpSession, dir: &str) -> Result<(), PollError> {
    if step("looking for a folder", sftp.try_exists(dir)).await? {
        return Ok(());
    }
    match step("making a folder", sftp.create_dir(dir)).await {
        Ok(()) => Ok(()),
        // Made meanwhile by someone else.
        Err(_) if step("looking for a folder", sftp.try_exists(dir)).await? => Ok(()),
        Err(error) => Err(error),
    }
}

async fn take_complete(
    edi: &Edi<'_>,
    mailbox: &SftpMailbox,
    sftp: &SftpSession,
    seen: &mut Sightings,
) -> Result<PollReport, PollError> {
    let dir = mailbox.remote_dir.as_str();
    let listing = step("listing the folder", sftp.read_dir(dir)).await?;
    let mut candidates: Vec<(String, (u64, Option<u32>))> = listing
        .filter(|entry| {
            let name = entry.file_name();
            entry.file_type().is_file()
                && !name.contains('/')
                && !name.is_empty()
                && is_candidate(OsStr::new(&name))
        })
        .map(|entry| {
            let metadata = entry.metadata();
            (entry.file_name(), (metadata.len(), metadata.mtime))
        })
        .collect();
    candidates.sort();
    let mut report = PollReport::default();
    let mut sightings = HashMap::new();
    let mut account_id: Option<AccountId> = None;
    let mut made = false;
    for (name, sighting) in candidates {
        if seen.0.get(&name) != Some(&sighting) {
            sightings.insert(name, sighting);
            report.waiting += 1;
            continue;
        }
        if !made {
            ensure_dir(sftp, &join(dir, REJECTED)).await?;
            if mailbox.after == AfterTaken::Move {
                ensure_dir(sftp, &join(dir, PROCESSED)).await?;
            }
            made = true;
        }
        let account = if let Some(id) = account_id {
            id
        } else {
            let found = crate::use_cases::accounts::find_or_create_account(edi, &mailbox.account)
                .await
                .map_err(|error| PollError::Account(mailbox.account.clone(), error))?;
            *account_id.insert(found.id)
        };
        match take(edi, mailbox, sftp, account, &name, sighting.0).await {
            Ok(taken) => report.taken.push(taken),
            Err(reason) => {
                report.left.push((name.clone(), reason));
                sightings.insert(name, sighting);
            }
        }
    }
    // Forgets the files gone or taken.
    seen.0 = sightings;
    Ok(report)
}

/// Reads one remote file, files it, then moves or removes it; `Err` says why it stays.
async fn take(
    edi: &Edi<'_>,
    mailbox: &SftpMailbox,
    sftp: &SftpSession,
    account: AccountId,
    name: &str,
    size: u64,
) -> Result<Taken, String> {
    let dir = mailbox.remote_dir.as_str();
    let path = join(dir, name);
    let outcome = if !usize::try_from(size).is_ok_and(|size| size <= MAX_BYTES) {
        folder::too_large(size)
    } else {
        let bytes = read_bounded(sftp, &path)
            .await
            .map_err(|error| format!("cannot read it: {error}"))?;
        let inbound = Inbound {
            channel: Channel::Sftp,
            source_name: Some(name.to_owned()),
            create_shipments: mailbox.create_shipments,
        };
        folder::file_bytes(edi, account, &inbound, &bytes).await?
    };
    // The bytes are stored (or refused unread): only now does the file leave.
    let stored = matches!(
        outcome,
        Outcome::Filed { .. }
            | Outcome::Refused {
                edi_message: Some(_),
                ..
            }
    );
    let moved_to = if mailbox.after == AfterTaken::Delete && stored {
        step("removing the file", sftp.remove_file(path.clone()))
            .await
            .map_err(|error| format!("cannot remove it: {error}"))?;
        None
    } else {
        let moved = match &outcome {
            Outcome::Filed { .. } => {
                move_into(sftp, &path, &join(dir, PROCESSED), name, None).await
            }
            Outcome::Refused { reason, .. } => {
                let text = reason_text(name, reason, edi.clock.now());
                move_into(sftp, &path, &join(dir, REJECTED), name, Some(&text)).await
            }
        };
        Some(moved.map_err(|error| format!("cannot move it: {error}"))?)
    };
    Ok(match outcome {
        Outcome::Filed {
            status,
            edi_message,
        } => Taken {
            file_name: name.to_owned(),
            moved_to,
            status: Some(status),
            edi_message: Some(edi_message),
        },
        Outcome::Refused { edi_message, .. } => Taken {
            file_name: name.to_owned(),
            moved_to,
            status: edi_message.map(|_| "rejected".to_owned()),
            edi_message,
        },
    })
}

/// The remote file's bytes, one more than [`MAX_BYTES`] at most (so a file that grew is
/// seen to).
async fn read_bounded(sftp: &SftpSession, path: &str) -> Result<Vec<u8>, PollError> {
    let file = step("opening the file", sftp.open(path)).await?;
    let mut bytes = Vec::new();
    let mut bounded = file.take(MAX_BYTES as u64 + 1);
    step("reading the file", bounded.read_to_end(&mut bytes)).await?;
    let _ = tokio::time::timeout(STEP_TIMEOUT, bounded.into_inner().shutdown()).await;
    Ok(bytes)
}

/// Moves `from` into `dir` under `name`, or the first suffixed name free (with its reason
/// file's name free too, when `reason` is given), never overwriting; then writes the
/// reason. Returns where it went.
async fn move_into(
    sftp: &SftpSession,
    from: &str,
    dir: &str,
    name: &str,
    reason: Option<&str>,
) -> Result<String, PollError> {
    for n in 0..=MAX_SUFFIX {
        let candidate = suffixed(OsStr::new(name), n).to_string_lossy().into_owned();
        let to = join(dir, &candidate);
        let reason_path = join(
            dir,
            &with_reason_suffix(OsStr::new(&candidate)).to_string_lossy(),
        );
        if step("looking for a name", sftp.try_exists(to.clone())).await? {
            continue;
        }
        if reason.is_some()
            && step("looking for a name", sftp.try_exists(reason_path.clone())).await?
        {
            continue;
        }
        // SFTP's rename (version 3) refuses an existing target; one made since it was
        // looked for is a failure here, and the next poll tries again.
        step("moving the file", sftp.rename(from, to.clone())).await?;
        if let Some(reason) = reason {
            write_new(sftp, &reason_path, reason).await?;
        }
        return Ok(to);
    }
    Err(PollError::Sftp {
        step: "moving the file".to_owned(),
        message: format!("{MAX_SUFFIX} names like it are taken"),
    })
}

async fn write_new(sftp: &SftpSession, path: &str, text: &str) -> Result<(), PollError> {
    let mut file = step(
        "writing the reason",
        sftp.open_with_flags(
            path,
            OpenFlags::CREATE | OpenFlags::EXCLUDE | OpenFlags::WRITE,
        ),
    )
    .await?;
    step("writing the reason", file.write_all(text.as_bytes())).await?;
    step("writing the reason", file.shutdown()).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_back_off_doubling_up_to_half_an_hour() {
        let minute = Duration::from_secs(60);
        assert_eq!(backoff(minute, 1), minute);
        assert_eq!(backoff(minute, 2), minute * 2);
        assert_eq!(backoff(minute, 4), minute * 8);
        assert_eq!(backoff(minute, 100), MAX_BACKOFF);
        let day = Duration::from_secs(86_400);
        assert_eq!(backoff(day, 5), day);
    }

    #[test]
    fn remote_paths_are_joined_with_one_slash() {
        assert_eq!(join("/in", "a.edi"), "/in/a.edi");
        assert_eq!(join("/", "a.edi"), "/a.edi");
        assert_eq!(join("in", "processed"), "in/processed");
    }
}
