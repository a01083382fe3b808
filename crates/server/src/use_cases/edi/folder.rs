//! Watched folders (`[[edi.inbound]]`): each complete file dropped in a folder is read as an
//! interchange, filed under the folder's account through [`receive`](super::receive), then
//! moved to `processed/` or, beside a `<name>.reason.txt` saying why, to `rejected/`.
//!
//! - Only regular files directly in the folder are taken: not subfolders, links, names
//!   starting with a dot, nor `*.part` and `*.tmp` (an uploader writes under such a name and
//!   renames when done).
//! - A file is taken once it is complete: its size and time unchanged since the previous
//!   scan, or last written more than [`SETTLED`] ago by the injected clock.
//! - A file is moved only after `receive` returned, when its bytes are stored: a crash in
//!   between leaves it to be read again, and the second copy is a `duplicate` that changes
//!   nothing. A file that could not be stored (the database is down) stays to be retried.
//! - Nothing is overwritten: a name already in `processed/` or `rejected/` gets a suffix
//!   (`name-1.edi`).
//! - A reason is plain text made of data (the file's name, the reader's faults), written
//!   as such, with control characters replaced, and never interpreted.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Utc};
use tidemark_domain::AccountId;
use tidemark_edi::Reader;
use tidemark_store::StoreError;
use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use super::{Channel, Edi, Inbound, MAX_BYTES, ReceiveError, looks_like_edi, receive};
use crate::config::InboundFolder;
use crate::parts::core::Core;

/// How often [`watch`] scans each folder.
pub const SCAN_INTERVAL: Duration = Duration::from_secs(1);
/// A file last written longer ago than this is complete, whatever the previous scan saw.
pub const SETTLED: chrono::TimeDelta = chrono::TimeDelta::seconds(2);
/// Where files read go, in the watched folder.
pub const PROCESSED: &str = "processed";
/// Where files refused go, each beside its `<name>.reason.txt`.
pub const REJECTED: &str = "rejected";
/// A reason file's suffix.
const REASON_SUFFIX: &str = ".reason.txt";
/// Suffixes tried for a name already taken, before giving up on the move.
const MAX_SUFFIX: u32 = 10_000;
/// A reason's bytes at most (the faults of one interchange may be many).
const MAX_REASON_BYTES: usize = 16 * 1024;

/// What the previous scan saw of the files not taken yet: size and time by name.
#[derive(Debug, Default)]
pub struct Sightings(HashMap<OsString, (u64, Option<SystemTime>)>);

/// What one scan did.
#[derive(Debug, Default)]
pub struct ScanReport {
    /// Files read and moved, in the order taken.
    pub taken: Vec<Taken>,
    /// Files seen that may still be written: looked at again on the next scan.
    pub waiting: usize,
    /// Files that could not be handled this time, with why: they stay, to be retried.
    pub left: Vec<(String, String)>,
}

/// A file read and moved.
#[derive(Debug)]
pub struct Taken {
    pub file_name: String,
    /// Where it is now.
    pub moved_to: PathBuf,
    /// The interchange's status (`processed`, `partially_processed`, `duplicate`,
    /// `rejected`), or `None` when the file was refused unread (not EDI, too large).
    pub status: Option<String>,
    pub edi_message: Option<Uuid>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("cannot read the folder {}", dir.display())]
    Unreadable {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot make the folder {}", dir.display())]
    Subfolder {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot find or make the account {0:?}")]
    Account(String, #[source] StoreError),
}
/// Scans every folder each [`SCAN_INTERVAL`] until `shutdown`, reading with `reader`. A folder that cannot be read
/// Scans every folder each [`SCAN_INTERVAL`] until `shutdown`. A folder that cannot be read
/// is logged (once, until that changes) and scanned again; the others go on.
pub async fn watch(
    core: Core,
    reader: Reader,
    folders: Vec<InboundFolder>,
    shutdown: CancellationToken,
) {
    let edi = Edi {
        core: &core,
        reader,
    };
    let mut watched: Vec<(InboundFolder, Sightings, Option<String>)> = folders
        .into_iter()
        .map(|folder| (folder, Sightings::default(), None))
        .collect();
    let mut tick = tokio::time::interval(SCAN_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        for (folder, seen, failing) in &mut watched {
            if shutdown.is_cancelled() {
                return;
            }
            let dir = folder.dir.display().to_string();
            match scan(&edi, folder, seen).await {
                Ok(report) => {
                    if failing.take().is_some() {
                        tracing::info!(dir, "the EDI folder can be read again");
                    }
                    for taken in &report.taken {
                        tracing::info!(
                            dir,
                            file = taken.file_name,
                            status = taken.status.as_deref().unwrap_or("refused"),
                            edi_message = ?taken.edi_message,
                            moved_to = %taken.moved_to.display(),
                            "EDI file taken"
                        );
                    }
                    for (file, reason) in &report.left {
                        tracing::warn!(dir, file, reason, "EDI file left to retry");
                    }
                }
                Err(error) => {
                    let text = format!("{:#}", anyhow::Error::new(error));
                    if failing.as_deref() != Some(text.as_str()) {
                        tracing::warn!(dir, error = text, "cannot scan the EDI folder");
                        *failing = Some(text);
                    }
                }
            }
        }
    }
}

/// Takes each complete file of `folder` (see the module's documentation); `seen` carries
/// what this scan saw to the next.
pub async fn scan(
    edi: &Edi<'_>,
    folder: &InboundFolder,
    seen: &mut Sightings,
) -> Result<ScanReport, ScanError> {
    let unreadable = |source| ScanError::Unreadable {
        dir: folder.dir.clone(),
        source,
    };
    let mut entries = tokio::fs::read_dir(&folder.dir).await.map_err(unreadable)?;
    for dir in [PROCESSED, REJECTED] {
        let dir = folder.dir.join(dir);
        tokio::fs::create_dir_all(&dir)
            .await
            .map_err(|source| ScanError::Subfolder { dir, source })?;
    }
    let mut candidates = Vec::new();
    while let Some(entry) = entries.next_entry().await.map_err(unreadable)? {
        let name = entry.file_name();
        if !is_candidate(&name) {
            continue;
        }
        // Not followed: a link is not a regular file of this folder.
        match entry.file_type().await {
            Ok(kind) if kind.is_file() => candidates.push(name),
            _ => {}
        }
    }
    candidates.sort();
    let mut report = ScanReport::default();
    let mut sightings = HashMap::new();
    let mut account_id: Option<AccountId> = None;
    let now = edi.clock.now();
    for name in candidates {
        let path = folder.dir.join(&name);
        let Ok(metadata) = tokio::fs::symlink_metadata(&path).await else {
            continue; // Gone since it was listed.
        };
        let sighting = (metadata.len(), metadata.modified().ok());
        let settled = sighting
            .1
            .is_some_and(|modified| now - DateTime::<Utc>::from(modified) > SETTLED);
        if !settled && seen.0.get(&name) != Some(&sighting) {
            sightings.insert(name, sighting);
            report.waiting += 1;
            continue;
        }
        let account = if let Some(id) = account_id {
            id
        } else {
            let found = crate::use_cases::accounts::find_or_create_account(edi, &folder.account)
                .await
                .map_err(|error| ScanError::Account(folder.account.clone(), error))?;
            *account_id.insert(found.id)
        };
        match take(edi, folder, account, &name, metadata.len()).await {
            Ok(taken) => report.taken.push(taken),
            Err(reason) => {
                report
                    .left
                    .push((name.to_string_lossy().into_owned(), reason));
                sightings.insert(name, sighting);
            }
        }
    }
    // Forgets the files gone or taken.
    seen.0 = sightings;
    Ok(report)
}

/// Whether a name may be taken: not hidden, not being uploaded.
pub(super) fn is_candidate(name: &OsStr) -> bool {
    let text = name.to_string_lossy().to_ascii_lowercase();
    !(text.starts_with('.') || text.ends_with(".part") || text.ends_with(".tmp"))
}

/// What became of a file's bytes.
pub(super) enum Outcome {
    Filed {
        status: String,
        edi_message: Uuid,
    },
    Refused {
        reason: String,
        edi_message: Option<Uuid>,
    },
}

/// Reads one file, files it and moves it; `Err` says why it stays.
async fn take(
    edi: &Edi<'_>,
    folder: &InboundFolder,
    account: AccountId,
    name: &OsStr,
    size: u64,
) -> Result<Taken, String> {
    let path = folder.dir.join(name);
    let file_name = name.to_string_lossy().into_owned();
    let outcome = if !usize::try_from(size).is_ok_and(|size| size <= MAX_BYTES) {
        too_large(size)
    } else {
        let bytes = read_bounded(&path)
            .await
            .map_err(|error| format!("cannot read it: {error}"))?;
        let inbound = Inbound {
            channel: Channel::Folder,
            source_name: Some(file_name.clone()),
            create_shipments: folder.create_shipments,
        };
        file_bytes(edi, account, &inbound, &bytes).await?
    };
    let moved = match &outcome {
        Outcome::Filed { .. } => move_into(&path, &folder.dir.join(PROCESSED), name, None).await,
        Outcome::Refused { reason, .. } => {
            let text = reason_text(&file_name, reason, edi.clock.now());
            move_into(&path, &folder.dir.join(REJECTED), name, Some(&text)).await
        }
    };
    let moved_to = moved.map_err(|error| format!("cannot move it: {error}"))?;
    Ok(match outcome {
        Outcome::Filed {
            status,
            edi_message,
        } => Taken {
            file_name,
            moved_to,
            status: Some(status),
            edi_message: Some(edi_message),
        },
        Outcome::Refused { edi_message, .. } => Taken {
            file_name,
            moved_to,
            status: edi_message.map(|_| "rejected".to_owned()),
            edi_message,
        },
    })
}

/// Files one file's bytes through [`receive`]: what became of them, or `Err` (why) when
/// they could not be stored and the file must stay to be retried.
pub(super) async fn file_bytes(
    edi: &Edi<'_>,
    account: AccountId,
    inbound: &Inbound,
    bytes: &[u8],
) -> Result<Outcome, String> {
    Ok(if bytes.len() > MAX_BYTES {
        too_large(bytes.len() as u64)
    } else if !looks_like_edi(bytes) {
        Outcome::Refused {
            reason: if bytes.is_empty() {
                "the file is empty".to_owned()
            } else {
                "not an EDI interchange: it starts with none of ISA, GS or ST (X12), nor \
                 UNA, UNB, UNG or UNH (EDIFACT)"
                    .to_owned()
            },
            edi_message: None,
        }
    } else {
        match receive(edi, account, inbound, bytes).await {
            Ok(message) if message.status == "rejected" => Outcome::Refused {
                reason: format!(
                    "rejected as EDI message {}: {}",
                    message.id,
                    faults(&message.errors)
                ),
                edi_message: Some(message.id),
            },
            Ok(message) => Outcome::Filed {
                status: message.status,
                edi_message: message.id,
            },
            Err(error @ (ReceiveError::Empty | ReceiveError::TooLarge { .. })) => {
                Outcome::Refused {
                    reason: error.to_string(),
                    edi_message: None,
                }
            }
            Err(ReceiveError::Store(error)) => {
                tracing::warn!(
                    error = ?error,
                    file = inbound.source_name.as_deref().unwrap_or_default(),
                    channel = inbound.channel.as_str(),
                    "cannot store an EDI file"
                );
                return Err(format!("not stored ({error})"));
            }
        }
    })
}

pub(super) fn too_large(size: u64) -> Outcome {
    Outcome::Refused {
        reason: format!(
            "the file is {size} bytes, over the limit of {MAX_BYTES} bytes for an interchange"
        ),
        edi_message: None,
    }
}

/// The file's bytes, one more than [`MAX_BYTES`] at most (so a file that grew is seen to).
async fn read_bounded(path: &Path) -> io::Result<Vec<u8>> {
    let file = tokio::fs::File::open(path).await?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .await?;
    Ok(bytes)
}

/// A rejected interchange's faults as one line each, from its `errors` member.
pub(super) fn faults(errors: &serde_json::Value) -> String {
    let lines: Vec<String> = errors
        .as_array()
        .into_iter()
        .flatten()
        .map(|error| {
            let reason = error["reason"].as_str().unwrap_or("no reason given");
            match (error["transaction"].as_u64(), error["segment"].as_str()) {
                (Some(n), Some(segment)) => {
                    format!("transaction {n}, segment {segment}: {reason}")
                }
                (Some(n), None) => format!("transaction {n}: {reason}"),
                _ => reason.to_owned(),
            }
        })
        .collect();
    if lines.is_empty() {
        "no reason given".to_owned()
    } else {
        lines.join("\n")
    }
}

/// The reason file's text: what was refused, when, and why, as plain text.
pub(super) fn reason_text(file_name: &str, reason: &str, at: DateTime<Utc>) -> String {
    let text = format!(
        "file: {file_name}\nrejected at: {}\nreason: {reason}\n",
        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    plain(&tidemark_email::message::clip(&text, MAX_REASON_BYTES))
}

/// `text` with control characters other than line feeds and tabs replaced, so showing it
/// in a terminal cannot be made to do anything.
fn plain(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

/// `name` with `-n` before its extension: `a.edi`, `a-1.edi`, `a-2.edi`, …
pub(super) fn suffixed(name: &OsStr, n: u32) -> OsString {
    if n == 0 {
        return name.to_os_string();
    }
    let path = Path::new(name);
    let mut suffixed = path.file_stem().unwrap_or(name).to_os_string();
    suffixed.push(format!("-{n}"));
    if let Some(extension) = path.extension() {
        suffixed.push(".");
        suffixed.push(extension);
    }
    suffixed
}

pub(super) fn with_reason_suffix(name: &OsStr) -> OsString {
    let mut reason = name.to_os_string();
    reason.push(REASON_SUFFIX);
    reason
}

/// Moves `from` into `dir` under `name`, or the first suffixed name free (with its reason
/// file's name free too, when `reason` is given), never overwriting; then writes the reason.
async fn move_into(
    from: &Path,
    dir: &Path,
    name: &OsStr,
    reason: Option<&str>,
) -> io::Result<PathBuf> {
    for n in 0..=MAX_SUFFIX {
        let candidate = suffixed(name, n);
        let to = dir.join(&candidate);
        let reason_path = dir.join(with_reason_suffix(&candidate));
        if reason.is_some() && tokio::fs::symlink_metadata(&reason_path).await.is_ok() {
            continue;
        }
        if !place(from, &to).await? {
            continue;
        }
        if let Some(reason) = reason {
            write_new(&reason_path, reason).await?;
        }
        return Ok(to);
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{MAX_SUFFIX} names like it are taken"),
    ))
}

/// Moves `from` to `to` unless `to` exists: `false` then. A hard link refuses an existing
/// target atomically; where links are not supported, the name is checked, then renamed.
async fn place(from: &Path, to: &Path) -> io::Result<bool> {
    match tokio::fs::hard_link(from, to).await {
        Ok(()) => {
            tokio::fs::remove_file(from).await?;
            Ok(true)
        }
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(_) => {
            if tokio::fs::symlink_metadata(to).await.is_ok() {
                return Ok(false);
            }
            tokio::fs::rename(from, to).await?;
            Ok(true)
        }
    }
}

async fn write_new(path: &Path, text: &str) -> io::Result<()> {
    use tokio::io::AsyncWriteExt;
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .await?;
    file.write_all(text.as_bytes()).await?;
    file.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_and_partial_uploads_are_not_candidates() {
        for name in [".hidden.edi", "a.edi.part", "A.EDI.TMP", "x.tmp"] {
            assert!(!is_candidate(OsStr::new(name)), "{name}");
        }
        for name in ["a.edi", "a.part.edi", "315.x12", "noextension"] {
            assert!(is_candidate(OsStr::new(name)), "{name}");
        }
    }

    #[test]
    fn a_clashing_name_gets_a_numbered_suffix_before_its_extension() {
        assert_eq!(suffixed(OsStr::new("a.edi"), 0), "a.edi");
        assert_eq!(suffixed(OsStr::new("a.edi"), 1), "a-1.edi");
        assert_eq!(suffixed(OsStr::new("a.b.x12"), 2), "a.b-2.x12");
        assert_eq!(suffixed(OsStr::new("noextension"), 3), "noextension-3");
    }

    #[test]
    fn a_reason_is_plain_text_whatever_the_data_holds() {
        let at = DateTime::<Utc>::from_timestamp(1_772_366_400, 0).unwrap();

        let text = reason_text("evil\u{1b}[2J.edi", "bad\r\nthing\u{7}", at);

        assert!(text.starts_with("file: evil\u{FFFD}[2J.edi\n"), "{text}");
        assert!(
            text.contains("reason: bad\u{FFFD}\nthing\u{FFFD}"),
            "{text}"
        );
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'));
    }

    #[test]
    fn faults_are_listed_one_a_line_with_their_transaction() {
        let errors = serde_json::json!([
            {"transaction": 2, "segment": "B4", "reason": "no date"},
            {"reason": "the interchange holds no transaction"},
        ]);

        assert_eq!(
            faults(&errors),
            "transaction 2, segment B4: no date\nthe interchange holds no transaction"
        );
        assert_eq!(faults(&serde_json::json!([])), "no reason given");
    }

    #[tokio::test]
    async fn a_move_never_overwrites_and_skips_names_whose_reason_exists() {
        let dir = tempfile::tempdir().unwrap();
        let to = dir.path().join("rejected");
        std::fs::create_dir(&to).unwrap();
        std::fs::write(to.join("a.edi"), "first").unwrap();
        std::fs::write(to.join("a-1.edi.reason.txt"), "someone's").unwrap();
        let from = dir.path().join("a.edi");
        std::fs::write(&from, "second").unwrap();

        let moved = move_into(&from, &to, OsStr::new("a.edi"), Some("why"))
            .await
            .unwrap();

        assert_eq!(moved, to.join("a-2.edi"));
        assert!(!from.exists());
        assert_eq!(std::fs::read_to_string(to.join("a.edi")).unwrap(), "first");
        assert_eq!(std::fs::read_to_string(&moved).unwrap(), "second");
        assert_eq!(
            std::fs::read_to_string(to.join("a-2.edi.reason.txt")).unwrap(),
            "why"
        );
    }
}
