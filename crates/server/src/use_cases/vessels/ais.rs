//! AIS ingest: NMEA 0183 `!AIVDM`/`!AIVDO` lines from a TCP feed, a UDP socket or a file,
//! decoded with `tidemark_geo::ais`, batched into the store.
//!
//! One [`AisSink`] per source: it owns the source's decoder (fragments are reassembled
//! within a source only) and the pending batch. Positions reach the store in batches of at
//! most `ais_batch_size`, one transaction each, at least once a second while a feed
//! trickles. Lines that yield nothing (bad checksum, truncated, unknown type, not AIS) are
//! counted in `tidemark_ais_sentences_total{outcome}` and skipped.

use std::collections::HashMap;
use std::time::Duration as StdDuration;

use chrono::{DateTime, Utc};
use tidemark_geo::ais::{AisMessage, DecodeStats, Decoder, PositionReport, StaticData};
use tidemark_store::{AisPosition, Fix, PositionsRecorded, StoreError, VesselIdentity};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, BufReader};
use tokio_util::sync::CancellationToken;

use crate::config::AisConfig;
use crate::config::AisSource;
use crate::parts::core::Core;

/// How long a partial batch waits for more positions.
const FLUSH_EVERY: StdDuration = StdDuration::from_secs(1);
/// Longest line kept; AIS sentences are at most 82 characters, tag blocks add a few dozen.
const MAX_LINE: usize = 1_024;
/// Vessels whose recorded identity a sink remembers at most (about 100 bytes each; a
/// worldwide feed has a few hundred thousand). Past it the memory starts again empty: it
/// only saves rewriting an unchanged identity, and a UDP source takes datagrams from anyone,
/// who could otherwise invent MMSIs without end.
const MAX_RECORDED: usize = 250_000;

/// A vessel's identity as last recorded: IMO and name.
type Identity = (Option<String>, Option<String>);

/// What a sink has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IngestReport {
    /// The decoder's counters.
    pub decode: DecodeStats,
    /// Positions handed to the store.
    pub positions: u64,
    /// Positions stored in tracks.
    pub stored: u64,
    /// Static reports (identities) recorded.
    pub statics: u64,
}

/// One source's decoder and pending batch.
pub struct AisSink {
    decoder: Decoder,
    positions: Vec<AisPosition>,
    /// Newest static data per MMSI since the last flush.
    statics: HashMap<u32, StaticData>,
    /// What this sink already recorded per MMSI (IMO, name): vessels repeat their static
    /// report every few minutes, and an unchanged one needs no write.
    recorded: HashMap<u32, Identity>,
    batch_size: usize,
    /// At most one stored track point per vessel per this interval.
    position_interval: chrono::Duration,
    counted: DecodeStats,
    report: IngestReport,
}

impl AisSink {
    /// A sink of `ais.batch_size` positions a batch, storing at most one per vessel per
    /// `ais.position_interval`.
    pub fn new(ais: &AisConfig) -> Self {
        let batch_size = ais.batch_size;
        Self {
            position_interval: ais.position_interval,
            decoder: Decoder::new(),
            positions: Vec::with_capacity(batch_size),
            statics: HashMap::new(),
            recorded: HashMap::new(),
            batch_size: batch_size.max(1),
            counted: DecodeStats::default(),
            report: IngestReport::default(),
        }
    }

    /// Decodes one line; flushes when the batch is full.
    pub async fn push_line(&mut self, core: &Core, line: &[u8]) -> Result<(), StoreError> {
        match self.decoder.decode(line) {
            Some(AisMessage::Position(report)) => {
                let fix = fix_of(&report, core.clock.now());
                self.positions.push(AisPosition {
                    mmsi: mmsi_text(report.mmsi),
                    fix,
                    new_vessel_id: core.ids.next_id(),
                });
            }
            Some(AisMessage::Static(data)) => {
                self.statics
                    .entry(data.mmsi)
                    .and_modify(|known| known.merge(&data))
                    .or_insert(data);
            }
            None => {}
        }
        if self.positions.len() >= self.batch_size || self.statics.len() >= self.batch_size {
            self.flush(core).await?;
        }
        Ok(())
    }

    /// Writes what is pending: identities first (so an MMSI learns its IMO before its
    /// positions land), then positions, one transaction each.
    pub async fn flush(&mut self, core: &Core) -> Result<(), StoreError> {
        self.count_decodes();
        let now = core.clock.now();
        if !self.statics.is_empty() {
            let mut identities: Vec<VesselIdentity> = Vec::with_capacity(self.statics.len());
            let mut learned = Vec::with_capacity(self.statics.len());
            for (mmsi, data) in self.statics.drain() {
                let imo = data.imo.map(|imo| format!("{imo:07}"));
                let name = data.name.filter(|n| !n.is_empty());
                let known = (imo.clone(), name.clone());
                if self.recorded.get(&mmsi) == Some(&known) {
                    continue;
                }
                identities.push(VesselIdentity {
                    imo,
                    mmsi: Some(mmsi_text(mmsi)),
                    name,
                    new_vessel_id: core.ids.next_id(),
                });
                learned.push((mmsi, known));
            }
            if !identities.is_empty() {
                core.store
                    .record_vessel_identities(&identities, now)
                    .await?;
            }
            self.remember(learned);
            self.report.statics += identities.len() as u64;
            metrics::counter!("tidemark_ais_static_reports_total")
                .increment(identities.len() as u64);
        }
        if !self.positions.is_empty() {
            let recorded: PositionsRecorded = core
                .store
                .record_positions(&self.positions, self.position_interval, now)
                .await?;
            self.report.positions += self.positions.len() as u64;
            self.report.stored += recorded.stored;
            metrics::counter!("tidemark_ais_positions_total")
                .increment(self.positions.len() as u64);
            metrics::counter!("tidemark_ais_positions_stored_total").increment(recorded.stored);
            self.positions.clear();
        }
        Ok(())
    }

    /// Notes identities as recorded, within [`MAX_RECORDED`].
    fn remember(&mut self, learned: Vec<(u32, Identity)>) {
        if self.recorded.len() + learned.len() > MAX_RECORDED {
            self.recorded = HashMap::new();
        }
        self.recorded.extend(learned);
    }

    /// Counters so far (decoder counters as of the last flush).
    pub fn report(&self) -> IngestReport {
        IngestReport {
            decode: *self.decoder.stats(),
            ..self.report
        }
    }

    /// Adds the decoder's counters since the last call to the metrics.
    fn count_decodes(&mut self) {
        let now = *self.decoder.stats();
        let before = self.counted;
        for (outcome, delta) in [
            ("decoded", now.decoded - before.decoded),
            ("bad_checksum", now.bad_checksum - before.bad_checksum),
            ("malformed", now.malformed - before.malformed),
            (
                "unsupported_type",
                now.unsupported_type - before.unsupported_type,
            ),
            ("no_position", now.no_position - before.no_position),
            ("not_ais", now.not_ais - before.not_ais),
            (
                "fragments_dropped",
                now.fragments_dropped - before.fragments_dropped,
            ),
        ] {
            if delta > 0 {
                metrics::counter!("tidemark_ais_sentences_total", "outcome" => outcome)
                    .increment(delta);
            }
        }
        self.counted = now;
    }
}

fn mmsi_text(mmsi: u32) -> String {
    format!("{mmsi:09}")
}

/// The report as a fix, timed by the receiver's time stamp when it has one, else by when
/// it arrived here.
fn fix_of(report: &PositionReport, received: DateTime<Utc>) -> Fix {
    let timestamp = report
        .received_at
        .and_then(|seconds| DateTime::from_timestamp(seconds, 0))
        .unwrap_or(received);
    Fix {
        timestamp,
        latitude: report.latitude,
        longitude: report.longitude,
        speed_knots: report.speed_over_ground_knots,
        course: report.course_over_ground,
        heading: report.true_heading.map(f64::from),
    }
}

/// Feeds every line of `lines` through a fresh sink and flushes: the path tests, the
/// sandbox and the replay command share.
pub async fn ingest_lines<L: AsRef<[u8]>>(
    core: &Core,
    ais: &AisConfig,
    lines: impl IntoIterator<Item = L>,
) -> Result<IngestReport, StoreError> {
    let mut sink = AisSink::new(ais);
    for line in lines {
        sink.push_line(core, line.as_ref()).await?;
    }
    sink.flush(core).await?;
    Ok(sink.report())
}

/// Reads lines from `reader` until it ends or `shutdown`, flushing full batches and, while
/// lines trickle in, at least every second.
pub async fn ingest_reader(
    core: &Core,
    sink: &mut AisSink,
    reader: impl AsyncRead + Unpin,
    shutdown: &CancellationToken,
) -> Result<(), anyhow::Error> {
    let mut lines = BufReader::new(reader);
    let mut line = Vec::with_capacity(128);
    let mut ticker = tokio::time::interval(FLUSH_EVERY);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            _ = ticker.tick() => sink.flush(core).await?,
            // When the ticker wins, the bytes read so far stay in `line` and the next call
            // appends the rest, so `line` is cleared only once a whole line was handled
            // (clearing it each turn lost sentences).
            read = read_bounded_line(&mut lines, &mut line) => {
                if !read? {
                    break;
                }
                if line.len() <= MAX_LINE {
                    sink.push_line(core, &line).await?;
                }
                line.clear();
            }
        }
    }
    sink.flush(core).await?;
    Ok(())
}

/// Reads up to and including the next newline into `line`, keeping no more than
/// `MAX_LINE + 1` bytes of it: a feed that never sends a newline cannot grow it without
/// bound, and a line cut short is still too long to be handled. False at the end of the
/// input with nothing read. Cancellation safe: what was consumed is already in `line`.
async fn read_bounded_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
) -> std::io::Result<bool> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(!line.is_empty());
        }
        let (take, complete) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (end + 1, true),
            None => (available.len(), false),
        };
        let room = (MAX_LINE + 1).saturating_sub(line.len());
        line.extend_from_slice(&available[..take.min(room)]);
        reader.consume(take);
        if complete {
            return Ok(true);
        }
    }
}

/// Replays a file of sentences (`tidemark ais-replay`, `file://` sources).
pub async fn replay_file(
    core: &Core,
    ais: &AisConfig,
    path: &std::path::Path,
) -> anyhow::Result<IngestReport> {
    let file = tokio::fs::File::open(path).await?;
    let mut sink = AisSink::new(ais);
    ingest_reader(core, &mut sink, file, &CancellationToken::new()).await?;
    Ok(sink.report())
}

/// Runs one configured source until `shutdown`. Errors are logged; a TCP feed reconnects
/// with backoff, a UDP socket is re-bound, a file is read once.
pub async fn run_source(
    core: Core,
    ais: AisConfig,
    source: AisSource,
    shutdown: CancellationToken,
) {
    let mut backoff = StdDuration::from_secs(1);
    loop {
        let mut sink = AisSink::new(&ais);
        let outcome = match &source {
            AisSource::File(path) => match tokio::fs::File::open(path).await {
                Ok(file) => ingest_reader(&core, &mut sink, file, &shutdown).await,
                Err(error) => Err(error.into()),
            },
            AisSource::Tcp(address) => match tokio::net::TcpStream::connect(address).await {
                Ok(stream) => {
                    tracing::info!(%source, "AIS feed connected");
                    backoff = StdDuration::from_secs(1);
                    ingest_reader(&core, &mut sink, stream, &shutdown).await
                }
                Err(error) => Err(error.into()),
            },
            AisSource::Udp(address) => match tokio::net::UdpSocket::bind(address).await {
                Ok(socket) => {
                    tracing::info!(%source, "AIS listening");
                    ingest_datagrams(&core, &mut sink, &socket, &shutdown).await
                }
                Err(error) => Err(error.into()),
            },
        };
        let report = sink.report();
        match outcome {
            Ok(()) => {
                tracing::info!(
                    %source,
                    lines = report.decode.lines,
                    positions = report.positions,
                    "AIS source ended"
                );
            }
            Err(error) => tracing::warn!(%source, error = %error, "AIS source failed"),
        }
        if shutdown.is_cancelled() || matches!(source, AisSource::File(_)) {
            return;
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(StdDuration::from_secs(30));
    }
}

async fn ingest_datagrams(
    core: &Core,
    sink: &mut AisSink,
    socket: &tokio::net::UdpSocket,
    shutdown: &CancellationToken,
) -> Result<(), anyhow::Error> {
    let mut buffer = vec![0_u8; 65_536];
    let mut ticker = tokio::time::interval(FLUSH_EVERY);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            _ = ticker.tick() => sink.flush(core).await?,
            received = socket.recv_from(&mut buffer) => {
                let (length, _) = received?;
                // A datagram may carry several sentences (a multi-part message, or a burst).
                for line in buffer[..length].split(|b| *b == b'\n') {
                    if !line.is_empty() && line.len() <= MAX_LINE {
                        sink.push_line(core, line).await?;
                    }
                }
            }
        }
    }
    sink.flush(core).await?;
    Ok(())
}

/// Starts every configured source.
pub fn start_sources(core: &Core, ais: &AisConfig, shutdown: &CancellationToken) {
    for source in ais.sources.clone() {
        tokio::spawn(run_source(
            core.clone(),
            ais.clone(),
            source,
            shutdown.clone(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(input: &[u8]) -> Vec<Vec<u8>> {
        let mut reader = BufReader::with_capacity(64, input);
        let mut line = Vec::new();
        let mut lines = Vec::new();
        while read_bounded_line(&mut reader, &mut line).await.unwrap() {
            assert!(line.len() <= MAX_LINE + 1);
            lines.push(std::mem::take(&mut line));
        }
        lines
    }

    #[tokio::test]
    async fn lines_are_read_up_to_and_including_their_newline() {
        let lines = lines_of(b"!AIVDM,a\n!AIVDM,b\nlast without newline").await;

        assert_eq!(
            lines,
            vec![
                b"!AIVDM,a\n".to_vec(),
                b"!AIVDM,b\n".to_vec(),
                b"last without newline".to_vec()
            ]
        );
    }

    #[test]
    fn the_identities_a_sink_remembers_are_bounded() {
        let mut sink = AisSink::new(&AisConfig {
            sources: Vec::new(),
            position_interval: chrono::Duration::minutes(1),
            retention_days: 1,
            batch_size: 1_000,
            sandbox_interval: None,
            service_speed_knots: 14.0,
        });
        for batch in 0..1_000u32 {
            let learned = (0..1_000u32)
                .map(|n| (batch * 1_000 + n, (None, Some(format!("VESSEL {n}")))))
                .collect();
            sink.remember(learned);
            assert!(sink.recorded.len() <= MAX_RECORDED);
        }
        assert!(!sink.recorded.is_empty());
    }

    #[tokio::test]
    async fn a_line_with_no_end_in_sight_is_kept_to_one_byte_over_the_limit() {
        let mut input = vec![b'x'; 10 * MAX_LINE];
        input.extend_from_slice(b"\n!AIVDM,next\n");

        let lines = lines_of(&input).await;

        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), MAX_LINE + 1);
        assert_eq!(lines[1], b"!AIVDM,next\n".to_vec());
    }
}
