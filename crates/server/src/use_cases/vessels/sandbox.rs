//! The sandbox carrier's vessels report their positions as AIS would: each tick, for each
//! tracked `TEST` voyage, the vessel's static data (type 5) and its positions (type 1,
//! time-stamped in a tag block) since the last tick are encoded as NMEA sentences and fed
//! through the same ingest path as a real feed. The first report of a voyage backfills from
//! its first departure; it is sent as soon as the voyage's tracking request becomes
//! `created` (`voyage_tracked`, called by the tracking engine), so a new voyage shows its
//! vessel and past track at once rather than at the next tick. Re-sent positions are
//! thinned away by the store.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use tidemark_carriers::sandbox::SCAC;
use tidemark_store::StoreError;
use tokio_util::sync::CancellationToken;

use crate::config::AisConfig;
use crate::parts::core::Core;
use crate::parts::sandbox_ais::{SandboxAis, VoyageKey};
use crate::use_cases::vessels::ais::{IngestReport, ingest_lines};

/// Voyages followed at most per tick.
const MAX_VOYAGES: u32 = 1_000;

/// Sends what every tracked sandbox voyage's vessel did since the last tick.
pub async fn tick(
    core: &Core,
    ais: &AisConfig,
    transmitter: &SandboxAis,
) -> Result<IngestReport, StoreError> {
    let voyages = core.store.tracked_numbers(SCAC, MAX_VOYAGES).await?;
    let report = send(core, ais, transmitter, voyages.clone()).await;
    transmitter.forget_all_but(&voyages);
    report
}

/// Sends one voyage's track so far at once (its past track and current position), as
/// its tracking request becomes `created`; later ticks go on from there.
pub async fn voyage_tracked(
    core: &Core,
    ais: &AisConfig,
    transmitter: &SandboxAis,
    number: &str,
    epoch: DateTime<Utc>,
) -> Result<IngestReport, StoreError> {
    send(core, ais, transmitter, vec![(number.to_owned(), epoch)]).await
}

/// Sends what these voyages' vessels did since they last reported.
async fn send(
    core: &Core,
    ais: &AisConfig,
    transmitter: &SandboxAis,
    voyages: Vec<VoyageKey>,
) -> Result<IngestReport, StoreError> {
    let (lines, sent_now) = transmitter.unsent(voyages, core.clock.now());
    let report = ingest_lines(core, ais, &lines).await?;
    transmitter.record(sent_now);
    Ok(report)
}

/// Runs the transmitter (`None` when the sandbox fleet is off) every `sandbox_ais_seconds`
/// of the process's clock until `shutdown`; a demo clock `demo_time_scale` times as fast
/// ticks as much more often.
pub async fn run(
    core: Core,
    ais: AisConfig,
    transmitter: Option<Arc<SandboxAis>>,
    demo_time_scale: u32,
    shutdown: CancellationToken,
) {
    let Some(interval) = ais.sandbox_interval else {
        return;
    };
    let Some(transmitter) = transmitter else {
        return;
    };
    // A demo clock runs fast: tick as often in real time as the voyage time asks, but not
    // more than once a second.
    let (_, real) = tidemark_domain::clock::scaled_interval(interval, demo_time_scale);
    loop {
        match tick(&core, &ais, &transmitter).await {
            Ok(report) => tracing::debug!(positions = report.positions, "sandbox vessels reported"),
            Err(error) => tracing::warn!(error = ?error, "sandbox vessels could not report"),
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(real) => {}
        }
    }
}
