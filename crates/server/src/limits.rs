//! The bounds on what a client, a connection or an uploaded document can claim: connection
//! counts and timeouts, header sizes, HTTP/2 streams, the document-extraction child's
//! memory, CPU and time, and the rate of failed authentication per client address.
//!
//! They are settings like any other (`TIDEMARK_MAX_CONNECTIONS`, …, listed with their
//! defaults in `defaults.toml` and docs/src/limits.md), read flat beside the
//! others and validated here, so a zero or a nonsense value stops the start with its name.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::config::error::ConfigError;

/// The limits as read (flattened into the config's top level).
#[derive(Debug, Deserialize)]
pub(crate) struct RawLimits {
    max_connections: usize,
    header_read_timeout_seconds: u64,
    idle_timeout_seconds: u64,
    request_body_timeout_seconds: u64,
    max_header_bytes: usize,
    http2_max_concurrent_streams: u32,
    unauthenticated_rate_limit_per_minute: u32,
    document_extraction_concurrency: usize,
    document_extraction_memory_mib: u64,
    document_extraction_cpu_seconds: u64,
    document_extraction_timeout_seconds: u64,
    document_max_inflated_bytes: usize,
    document_max_pages: usize,
    document_extraction_program: String,
}

/// Limits on connections and requests (the HTTP listener).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections served at once; more are answered `503` and closed at once.
    pub max_connections: usize,
    /// A request's header must arrive within this (HTTP/1), from its first byte or from
    /// the end of the previous response.
    pub header_read_timeout: Duration,
    /// A connection on which nothing is read or written for this long is closed.
    pub idle_timeout: Duration,
    /// The longest pause while a request body arrives.
    pub request_body_timeout: Duration,
    /// Largest request head (HTTP/1 line and headers; HTTP/2 header list); larger: `431`.
    pub max_header_bytes: usize,
    /// Concurrent streams per HTTP/2 connection.
    pub http2_max_concurrent_streams: u32,
}

/// Limits on reading one uploaded document (the extraction child process).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractionLimits {
    /// Extractions running at once in this process; more wait their turn.
    pub concurrency: usize,
    /// The child's address-space limit (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// The child's CPU-time limit (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Past this the child is killed, whatever it is doing.
    pub timeout: Duration,
    /// All page content of one PDF, decompressed, at most (and any one stream).
    pub max_inflated_bytes: usize,
    /// A PDF with more pages is not read.
    pub max_pages: usize,
    /// The executable run as the child; `None`: this process's own.
    pub program: Option<PathBuf>,
}

/// Every limit, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    pub connections: ConnectionLimits,
    pub extraction: ExtractionLimits,
    /// Failed authentications per rolling minute per client address; beyond, `429`.
    pub unauthenticated_per_minute: u32,
}

fn invalid(key: &str, reason: &str) -> ConfigError {
    ConfigError {
        setting: format!("TIDEMARK_{}", key.to_uppercase()),
        reason: reason.to_owned(),
    }
}

fn at_least<T: PartialOrd + Copy + std::fmt::Display>(
    key: &str,
    value: T,
    min: T,
) -> Result<T, ConfigError> {
    if value < min {
        return Err(invalid(key, &format!("must be at least {min}")));
    }
    Ok(value)
}

impl RawLimits {
    pub(crate) fn validate(self) -> Result<Limits, ConfigError> {
        let secs = |key: &str, value: u64| at_least(key, value, 1).map(Duration::from_secs);
        let connections = ConnectionLimits {
            max_connections: at_least("max_connections", self.max_connections, 1)?,
            header_read_timeout: secs(
                "header_read_timeout_seconds",
                self.header_read_timeout_seconds,
            )?,
            idle_timeout: secs("idle_timeout_seconds", self.idle_timeout_seconds)?,
            request_body_timeout: secs(
                "request_body_timeout_seconds",
                self.request_body_timeout_seconds,
            )?,
            // hyper's HTTP/1 read buffer cannot be smaller than 8 KiB.
            max_header_bytes: at_least("max_header_bytes", self.max_header_bytes, 8192)?,
            http2_max_concurrent_streams: at_least(
                "http2_max_concurrent_streams",
                self.http2_max_concurrent_streams,
                1,
            )?,
        };
        let program = match self.document_extraction_program.trim() {
            "" => None,
            path => {
                let path = PathBuf::from(path);
                if !path.is_file() {
                    return Err(invalid(
                        "document_extraction_program",
                        "not an existing file (empty runs this executable)",
                    ));
                }
                Some(path)
            }
        };
        let extraction = ExtractionLimits {
            concurrency: at_least(
                "document_extraction_concurrency",
                self.document_extraction_concurrency,
                1,
            )?,
            // Below this the child cannot even map its own executable and stacks.
            memory_bytes: at_least(
                "document_extraction_memory_mib",
                self.document_extraction_memory_mib,
                128,
            )?
            .saturating_mul(1024 * 1024),
            cpu_seconds: at_least(
                "document_extraction_cpu_seconds",
                self.document_extraction_cpu_seconds,
                1,
            )?,
            timeout: secs(
                "document_extraction_timeout_seconds",
                self.document_extraction_timeout_seconds,
            )?,
            max_inflated_bytes: at_least(
                "document_max_inflated_bytes",
                self.document_max_inflated_bytes,
                1024,
            )?,
            max_pages: at_least("document_max_pages", self.document_max_pages, 1)?,
            program,
        };
        Ok(Limits {
            connections,
            extraction,
            unauthenticated_per_minute: at_least(
                "unauthenticated_rate_limit_per_minute",
                self.unauthenticated_rate_limit_per_minute,
                1,
            )?,
        })
    }
}
