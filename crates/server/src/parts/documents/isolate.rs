//! Reading an uploaded document in a child process under OS limits.
//!
//! A hostile file makes a parser cost what the file says: a 46 KB PDF whose pages share one
//! deflated stream asked 9 GB of memory of an in-process extraction, and a thread that has
//! been given up on keeps its core. So the server never parses a document itself: it runs
//! its own executable again (`tidemark extract-document`, hidden), which
//!
//! 1. sets its own address-space (`RLIMIT_AS`) and CPU-time (`RLIMIT_CPU`) limits before it
//!    reads a byte of the document,
//! 2. reads one JSON header line (content type, file name) and then the bytes on stdin,
//! 3. extracts the text ([`tidemark_documents::text`], itself bounded in input, pages and
//!    inflated content) and classifies it ([`tidemark_documents::classify`]),
//! 4. writes one JSON answer on stdout, with its own peak memory and CPU time.
//!
//! The parent feeds it, reads at most [`max_output_bytes`] of its answer, and kills it when
//! the deadline passes or the answer grows past that; a child that ran out of memory
//! (allocation failure aborts it) or CPU time (`SIGXCPU`/`SIGKILL`) is reported as such. In
//! every case the child is reaped, and the document gets the reason in its notes. At most
//! [`ExtractionLimits::concurrency`] children run at once per process.
//!
//! The Track page's files of numbers (CSV, XLSX) are read the same way
//! ([`Extractor::read_rows`]): the child answers their rows
//! ([`tidemark_documents::spreadsheet`]), under the same limits.

use std::io::{Read, Write};
use std::process::{ExitCode, Stdio};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

use crate::limits::ExtractionLimits;
use tidemark_documents::classify::{DocumentType, classify};
use tidemark_documents::rotate::rotate_pdf;
use tidemark_documents::spreadsheet::{self, Row, SheetError};
use tidemark_documents::text::{ExtractError, Limits, extract_text_with, supported};

/// The hidden subcommand that runs the child.
pub const SUBCOMMAND: &str = "extract-document";
/// Upper bound of the header line (content type and file name).
const MAX_HEADER_BYTES: u64 = 64 * 1024;
/// What the parent keeps of the child's stderr (a panic or allocation-failure message).
const MAX_STDERR_BYTES: u64 = 4 * 1024;

/// The limits a child applies to itself, given on its command line.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct ChildArgs {
    #[arg(long)]
    pub memory_bytes: u64,
    #[arg(long)]
    pub cpu_seconds: u64,
    #[arg(long)]
    pub max_input_bytes: usize,
    #[arg(long)]
    pub max_inflated_bytes: usize,
    #[arg(long)]
    pub max_pages: usize,
}

/// What the parent tells the child about the bytes that follow.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    content_type: String,
    file_name: String,
    /// Rotate the PDF's pages by this many degrees instead of reading it.
    #[serde(default)]
    rotate: Option<u16>,
    /// Answer the rows of a file of numbers (at most this many) instead of its text.
    #[serde(default)]
    rows: Option<usize>,
}

/// A successful reading.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Extracted {
    pub text: String,
    pub document_type: DocumentType,
    pub confidence: f32,
    pub notes: String,
    /// The child's peak resident memory, in bytes.
    pub peak_memory_bytes: u64,
    /// The child's CPU time (user and system), in milliseconds.
    pub cpu_milliseconds: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Answer {
    Ok(Extracted),
    /// A rotated PDF (Base64) and its number of pages.
    Rotated {
        pdf: String,
        pages: usize,
    },
    /// The rows of a file of numbers.
    Rows {
        rows: Vec<Row>,
        peak_memory_bytes: u64,
        cpu_milliseconds: u64,
    },
    Error(ExtractError),
    /// A file of numbers refused at one of its limits.
    SheetError(SheetError),
}

/// The largest answer the parent reads: the text at its character limit, escaped, and the
/// rest. A child that writes more is killed.
pub fn max_output_bytes() -> usize {
    Limits::default().max_text_chars * 6 + 64 * 1024
}

/// Runs extractions in child processes, at most `concurrency` at once.
#[derive(Debug)]
pub struct Extractor {
    limits: ExtractionLimits,
    max_input_bytes: usize,
    slots: Semaphore,
}

impl Extractor {
    pub fn new(limits: ExtractionLimits, max_input_bytes: usize) -> Self {
        Self {
            slots: Semaphore::new(limits.concurrency),
            limits,
            max_input_bytes,
        }
    }

    /// Extracts and classifies `bytes` in a child process; waits for a free slot first.
    pub async fn extract(
        &self,
        content_type: &str,
        file_name: &str,
        bytes: &[u8],
    ) -> Result<Extracted, ExtractError> {
        // Images and Office files have no extraction: no process for them.
        supported(content_type)?;
        let _slot = self.slot().await?;
        let header = Header {
            content_type: content_type.to_owned(),
            file_name: file_name.to_owned(),
            rotate: None,
            rows: None,
        };
        let result = match self.run_child(&header, bytes, max_output_bytes()).await {
            Ok(Answer::Ok(extracted)) => Ok(extracted),
            Ok(Answer::Error(error)) => Err(error),
            Ok(Answer::Rotated { .. } | Answer::Rows { .. } | Answer::SheetError(_)) => {
                Err(ExtractError::Process("an unasked answer".to_owned()))
            }
            Err(error) => Err(error),
        };
        match &result {
            Ok(extracted) => {
                tracing::debug!(
                    peak_memory_bytes = extracted.peak_memory_bytes,
                    cpu_milliseconds = extracted.cpu_milliseconds,
                    "document extracted"
                );
            }
            Err(
                error @ (ExtractError::OutOfMemory { .. }
                | ExtractError::OutOfCpu { .. }
                | ExtractError::TimedOut { .. }
                | ExtractError::InflatesTooMuch { .. }
                | ExtractError::TooManyPages { .. }),
            ) => tracing::warn!(%error, "a document exceeded its extraction limits"),
            Err(error @ (ExtractError::Crashed | ExtractError::Process(_))) => {
                tracing::warn!(%error, "document extraction failed");
            }
            Err(error) => tracing::debug!(%error, "no text in a document"),
        }
        metrics::counter!("tidemark_document_extractions_total", "outcome" => outcome_label(&result))
            .increment(1);
        result
    }

    /// Turns every page of a PDF `degrees` further clockwise in a child process (under
    /// the same limits as a reading: a hostile PDF costs the child, not the worker), and
    /// returns the new PDF with its number of pages.
    pub async fn rotate(
        &self,
        bytes: &[u8],
        degrees: u16,
    ) -> Result<(Vec<u8>, usize), ExtractError> {
        use base64::Engine;
        let _slot = self.slot().await?;
        let header = Header {
            content_type: "application/pdf".to_owned(),
            file_name: String::new(),
            rotate: Some(degrees),
            rows: None,
        };
        // Base64 of a rewritten PDF, which may be larger than the upload.
        let cap = self
            .max_input_bytes
            .saturating_mul(3)
            .saturating_add(64 * 1024);
        match self.run_child(&header, bytes, cap).await? {
            Answer::Rotated { pdf, pages } => base64::engine::general_purpose::STANDARD
                .decode(pdf)
                .map(|pdf| (pdf, pages))
                .map_err(|error| ExtractError::Process(format!("unreadable answer: {error}"))),
            Answer::Error(error) => Err(error),
            Answer::Ok(_) | Answer::Rows { .. } | Answer::SheetError(_) => {
                Err(ExtractError::Process("an unasked answer".to_owned()))
            }
        }
    }

    /// The rows of a file of tracking numbers (CSV or XLSX), at most `max_rows` whose first
    /// cell is not blank, read in a child process under the same limits as a document (a
    /// hostile spreadsheet costs the child, never the server); waits for a free slot first.
    pub async fn read_rows(&self, bytes: &[u8], max_rows: usize) -> Result<Vec<Row>, SheetError> {
        let max_rows = max_rows.min(spreadsheet::MAX_SHEET_ROWS as usize);
        let _slot = self.slot().await.map_err(|_| SheetError::Failed)?;
        let header = Header {
            content_type: String::new(),
            file_name: String::new(),
            rotate: None,
            rows: Some(max_rows),
        };
        // Every answered cell escaped at worst (6 bytes a character), with its punctuation.
        let cap = max_rows
            .saturating_mul(spreadsheet::COLUMNS_ANSWERED)
            .saturating_mul(spreadsheet::MAX_CELL_CHARS * 6 + 8)
            .saturating_add(64 * 1024);
        let result = match self.run_child(&header, bytes, cap).await {
            Ok(Answer::Rows {
                rows,
                peak_memory_bytes,
                cpu_milliseconds,
            }) => {
                tracing::debug!(peak_memory_bytes, cpu_milliseconds, "file of numbers read");
                Ok(rows)
            }
            Ok(Answer::SheetError(error)) => Err(error),
            Ok(Answer::Error(error)) | Err(error) => Err(match error {
                ExtractError::OutOfMemory { .. }
                | ExtractError::OutOfCpu { .. }
                | ExtractError::TimedOut { .. } => SheetError::Stopped(error),
                ExtractError::Crashed => SheetError::Crashed,
                other => {
                    tracing::warn!(error = %other, "reading a file of numbers failed");
                    SheetError::Failed
                }
            }),
            Ok(Answer::Ok(_) | Answer::Rotated { .. }) => {
                tracing::warn!("reading a file of numbers got an unasked answer");
                Err(SheetError::Failed)
            }
        };
        match &result {
            Err(
                error @ (SheetError::TooLarge { .. }
                | SheetError::TooManyParts { .. }
                | SheetError::UnpacksTooMuch { .. }
                | SheetError::TooManySharedStrings { .. }
                | SheetError::TooManyRows { .. }
                | SheetError::TooManyColumns { .. }
                | SheetError::Stopped(_)
                | SheetError::Crashed),
            ) => tracing::warn!(%error, "a file of numbers exceeded its reading limits"),
            Err(error) => tracing::debug!(%error, "a file of numbers was not read"),
            Ok(_) => {}
        }
        result
    }

    /// One of the `concurrency` places for a child, once free.
    async fn slot(&self) -> Result<tokio::sync::SemaphorePermit<'_>, ExtractError> {
        self.slots
            .acquire()
            .await
            .map_err(|_| ExtractError::Process("the extractor is closed".to_owned()))
    }

    async fn run_child(
        &self,
        header: &Header,
        bytes: &[u8],
        cap: usize,
    ) -> Result<Answer, ExtractError> {
        let limits = &self.limits;
        let program = match &limits.program {
            Some(program) => program.clone(),
            None => std::env::current_exe()
                .map_err(|error| ExtractError::Process(format!("own executable: {error}")))?,
        };
        let mut child = tokio::process::Command::new(program)
            .arg(SUBCOMMAND)
            .arg(format!("--memory-bytes={}", limits.memory_bytes))
            .arg(format!("--cpu-seconds={}", limits.cpu_seconds))
            .arg(format!("--max-input-bytes={}", self.max_input_bytes))
            .arg(format!("--max-inflated-bytes={}", limits.max_inflated_bytes))
            .arg(format!("--max-pages={}", limits.max_pages))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // mimalloc reserves a 1 GiB arena up front, which an address-space limit below
            // that refuses; without the reservation it maps memory as it needs it.
            .env("MIMALLOC_ARENA_RESERVE", "0")
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| ExtractError::Process(format!("cannot start: {error}")))?;
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ExtractError::Process("no pipes".to_owned()));
        };
        let mut header =
            serde_json::to_vec(header).map_err(|error| ExtractError::Process(error.to_string()))?;
        header.push(b'\n');
        let feed = async move {
            // A child that stops reading (it failed, or was killed) closes the pipe: its
            // exit status says why, so a write error here is not the story.
            let _ = stdin.write_all(&header).await;
            let _ = stdin.write_all(bytes).await;
            drop(stdin);
        };
        let read_answer = async move {
            let mut answer = Vec::new();
            stdout
                .take(cap as u64 + 1)
                .read_to_end(&mut answer)
                .await
                .map(|_| answer)
        };
        let read_errors = async move {
            let mut errors = Vec::new();
            let mut stderr = stderr;
            let _ = (&mut stderr)
                .take(MAX_STDERR_BYTES)
                .read_to_end(&mut errors)
                .await;
            // Drain the rest, so the child never blocks on a full stderr pipe.
            let _ = tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await;
            errors
        };
        let talk = async { tokio::join!(feed, read_answer, read_errors) };
        let Ok(((), answer, errors)) = tokio::time::timeout(limits.timeout, talk).await else {
            let _ = child.kill().await;
            return Err(ExtractError::TimedOut {
                seconds: limits.timeout.as_secs(),
            });
        };
        let answer = answer.map_err(|error| ExtractError::Process(error.to_string()))?;
        if answer.len() > cap {
            let _ = child.kill().await;
            return Err(ExtractError::Process(format!(
                "its answer was larger than {cap} bytes"
            )));
        }
        let status = match tokio::time::timeout(limits.timeout, child.wait()).await {
            Ok(status) => status.map_err(|error| ExtractError::Process(error.to_string()))?,
            Err(_) => {
                let _ = child.kill().await;
                return Err(ExtractError::TimedOut {
                    seconds: limits.timeout.as_secs(),
                });
            }
        };
        if status.success() {
            return serde_json::from_slice::<Answer>(&answer)
                .map_err(|error| ExtractError::Process(format!("unreadable answer: {error}")));
        }
        Err(self.why_it_died(status, &errors))
    }

    fn why_it_died(&self, status: std::process::ExitStatus, errors: &[u8]) -> ExtractError {
        use nix::sys::signal::Signal;
        use std::os::unix::process::ExitStatusExt;
        let errors = String::from_utf8_lossy(errors);
        let signal = status
            .signal()
            .and_then(|number| Signal::try_from(number).ok());
        let out_of_memory = ExtractError::OutOfMemory {
            limit_mib: self.limits.memory_bytes / (1024 * 1024),
        };
        match signal {
            // The soft limit sends SIGXCPU, whose default action ends the process.
            Some(Signal::SIGXCPU) => ExtractError::OutOfCpu {
                seconds: self.limits.cpu_seconds,
            },
            // Rust aborts on a failed allocation ("memory allocation of N bytes failed").
            Some(Signal::SIGABRT) if errors.contains("memory allocation") => out_of_memory,
            // A thread that cannot get its stack under the limit.
            _ if errors.contains("Cannot allocate memory") || errors.contains("out of memory") => {
                out_of_memory
            }
            Some(signal) => ExtractError::Process(format!("killed by {signal}")),
            None => ExtractError::Process(format!(
                "exited with {status}: {}",
                errors.lines().last().unwrap_or_default()
            )),
        }
    }
}

/// A fixed label for the extraction counter (never a message, which could carry input).
fn outcome_label(result: &Result<Extracted, ExtractError>) -> &'static str {
    match result {
        Ok(_) => "extracted",
        Err(ExtractError::TooLarge { .. }) => "too_large",
        Err(ExtractError::Unsupported(_)) => "unsupported",
        Err(ExtractError::Encrypted) => "encrypted",
        Err(ExtractError::Malformed(_)) => "malformed",
        Err(ExtractError::TooManyPages { .. }) => "too_many_pages",
        Err(ExtractError::InflatesTooMuch { .. }) => "inflates_too_much",
        Err(ExtractError::Crashed) => "crashed",
        Err(ExtractError::OutOfMemory { .. }) => "out_of_memory",
        Err(ExtractError::OutOfCpu { .. }) => "out_of_cpu",
        Err(ExtractError::TimedOut { .. }) => "timed_out",
        Err(ExtractError::Process(_)) => "process_failed",
    }
}

/// The child: limits itself, reads the header and the document on stdin, answers on
/// stdout. Runs before any async runtime is started (see `main.rs`).
pub fn child_main(args: &ChildArgs) -> ExitCode {
    use nix::sys::resource::{Resource, setrlimit};
    // First of all: nothing of the document is read before the limits hold.
    let limited =
        setrlimit(Resource::RLIMIT_AS, args.memory_bytes, args.memory_bytes).and_then(|()| {
            setrlimit(
                Resource::RLIMIT_CPU,
                args.cpu_seconds,
                args.cpu_seconds.saturating_add(1),
            )
        });
    if let Err(error) = limited {
        eprintln!("tidemark extract-document: cannot set limits: {error}");
        return ExitCode::FAILURE;
    }
    let answer = match read_request(args) {
        Ok((header, bytes)) => match (header.rotate, header.rows) {
            (Some(degrees), _) => rotate_guarded(args, &bytes, degrees),
            (None, Some(max_rows)) => rows_guarded(&bytes, max_rows),
            (None, None) => extract_and_classify(args, &header, &bytes),
        },
        Err(error) => Answer::Error(ExtractError::Process(error)),
    };
    let mut stdout = std::io::stdout().lock();
    let written = serde_json::to_writer(&mut stdout, &answer)
        .map_err(std::io::Error::from)
        .and_then(|()| stdout.flush());
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tidemark extract-document: cannot answer: {error}");
            ExitCode::FAILURE
        }
    }
}

fn read_request(args: &ChildArgs) -> Result<(Header, Vec<u8>), String> {
    let mut stdin = std::io::stdin().lock();
    let mut line = Vec::new();
    let mut limited = (&mut stdin).take(MAX_HEADER_BYTES);
    let mut byte = [0u8; 1];
    loop {
        match limited.read(&mut byte) {
            Ok(0) => return Err("no header line".to_owned()),
            Ok(_) if byte[0] == b'\n' => break,
            Ok(_) => line.push(byte[0]),
            Err(error) => return Err(error.to_string()),
        }
    }
    let header: Header =
        serde_json::from_slice(&line).map_err(|error| format!("bad header: {error}"))?;
    let mut bytes = Vec::new();
    // One byte more than allowed is enough to know it is too large.
    stdin
        .take(args.max_input_bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| error.to_string())?;
    Ok((header, bytes))
}

fn extract_and_classify(args: &ChildArgs, header: &Header, bytes: &[u8]) -> Answer {
    let limits = Limits {
        max_input_bytes: args.max_input_bytes,
        max_inflated_bytes: args.max_inflated_bytes,
        max_pages: args.max_pages,
        ..Limits::default()
    };
    match extract_text_with(&header.content_type, bytes, &limits) {
        Ok(text) => {
            let classification = classify(&text, Some(&header.file_name));
            let usage = own_usage();
            Answer::Ok(Extracted {
                text,
                document_type: classification.document_type,
                confidence: classification.confidence,
                notes: classification.notes,
                peak_memory_bytes: usage.0,
                cpu_milliseconds: usage.1,
            })
        }
        Err(error) => Answer::Error(error),
    }
}

/// Rotates on its own thread (for its stack: parsers recurse), catching panics.
fn rotate_guarded(args: &ChildArgs, bytes: &[u8], degrees: u16) -> Answer {
    use base64::Engine;
    if bytes.len() > args.max_input_bytes {
        return Answer::Error(ExtractError::TooLarge {
            size: bytes.len(),
            limit: args.max_input_bytes,
        });
    }
    let rotated = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("pdf-rotate".into())
            .stack_size(ROTATION_STACK_BYTES)
            .spawn_scoped(scope, || {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    rotate_pdf(bytes, degrees).map_err(ExtractError::Malformed)
                }))
                .unwrap_or(Err(ExtractError::Crashed))
            })
            .map_err(|error| ExtractError::Process(format!("no rotation thread: {error}")))?
            .join()
            .unwrap_or(Err(ExtractError::Crashed))
    });
    match rotated {
        Ok((pdf, pages)) => Answer::Rotated {
            pdf: base64::engine::general_purpose::STANDARD.encode(pdf),
            pages,
        },
        Err(error) => Answer::Error(error),
    }
}

/// Stack for the rotation thread, as for reading.
const ROTATION_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Reads the rows of a file of numbers, catching a parser's panic.
fn rows_guarded(bytes: &[u8], max_rows: usize) -> Answer {
    let read = std::panic::catch_unwind(|| spreadsheet::read_rows(bytes, max_rows))
        .unwrap_or(Err(SheetError::Crashed));
    match read {
        Ok(rows) => {
            let (peak_memory_bytes, cpu_milliseconds) = own_usage();
            Answer::Rows {
                rows,
                peak_memory_bytes,
                cpu_milliseconds,
            }
        }
        Err(error) => Answer::SheetError(error),
    }
}

/// This process's peak resident memory (bytes) and CPU time (milliseconds).
fn own_usage() -> (u64, u64) {
    use nix::sys::resource::{UsageWho, getrusage};
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(usage) => {
            let cpu = usage.user_time() + usage.system_time();
            let millis = cpu.tv_sec() * 1000 + cpu.tv_usec() / 1000;
            (
                // Linux reports kilobytes.
                u64::try_from(usage.max_rss()).unwrap_or(0) * 1024,
                u64::try_from(millis).unwrap_or(0),
            )
        }
        Err(_) => (0, 0),
    }
}
