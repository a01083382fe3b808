//! Logging and metrics setup.

use std::sync::OnceLock;
use std::time::Duration;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tokio_util::sync::CancellationToken;
use tracing_subscriber::EnvFilter;

use crate::config::{Config, LogFormat};

/// Installs the global tracing subscriber: JSON lines by default, one span per request.
pub fn init_logging(config: &Config) {
    let filter = EnvFilter::try_new(&config.log_level).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second call (tests) finds a subscriber already set; that is fine.
    let _ = match config.log_format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
}

static PROMETHEUS: OnceLock<PrometheusHandle> = OnceLock::new();

/// How often the recorder's upkeep runs while the server serves ([`run_upkeep`]).
///
/// Every request records its duration in a histogram, and the recorder keeps each sample
/// (about 8 bytes, more with its blocks) until upkeep or a scrape of `/metrics` folds them
/// into the buckets. Once a second bounds what waits at one second of traffic (a few MB at
/// 300 000 requests a second) whether or not anything scrapes; the fold itself costs a few
/// microseconds per series.
pub const UPKEEP_INTERVAL: Duration = Duration::from_secs(1);

/// The process-wide Prometheus recorder; installed on first use.
///
/// Built with `build_recorder` (the crate's own exporter, which would also run its upkeep,
/// needs its HTTP listener or push gateway features), so upkeep is the server's job:
/// [`App::serve`](crate::app::App::serve) runs [`run_upkeep`] for as long as it serves. Without
/// it, histogram samples pile up until something scrapes `/metrics`.
pub fn prometheus() -> PrometheusHandle {
    PROMETHEUS
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(
                    Matcher::Suffix("duration_seconds".to_owned()),
                    &[
                        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                        5.0, 10.0,
                    ],
                )
                .expect("bucket list is not empty")
                .build_recorder();
            let handle = recorder.handle();
            // Only fails if another recorder was installed first, which this OnceLock
            // prevents; metrics then go to that recorder instead.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

/// Runs the recorder's upkeep every `every` until `stop` is cancelled: histogram samples
/// recorded since the last run are folded into their buckets and their memory released.
/// Several servers in one process (tests) each run one on the same recorder, which is
/// harmless.
pub async fn run_upkeep(handle: PrometheusHandle, every: Duration, stop: CancellationToken) {
    every_until(every, &stop, || handle.run_upkeep()).await;
}

/// Calls `work` every `every` (the first time after one interval) until `stop`.
async fn every_until(every: Duration, stop: &CancellationToken, mut work: impl FnMut()) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    // After a stall (a suspended process) one run catches up; no burst.
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            _ = ticks.tick() => work(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn upkeep_runs_every_interval_until_stopped() {
        let runs = Arc::new(AtomicUsize::new(0));
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let runs = Arc::clone(&runs);
            let stop = stop.clone();
            async move {
                every_until(Duration::from_millis(10), &stop, || {
                    runs.fetch_add(1, Ordering::Relaxed);
                })
                .await;
            }
        });

        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(runs.load(Ordering::Relaxed) >= 2, "it runs repeatedly");

        stop.cancel();
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the upkeep task ends once stopped")
            .expect("the upkeep task does not panic");
        let after_stop = runs.load(Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            runs.load(Ordering::Relaxed),
            after_stop,
            "nothing runs after the stop"
        );
    }

    #[tokio::test]
    async fn upkeep_runs_on_the_process_recorder() {
        // The global recorder, which every app (and test) of the process shares.
        let handle = prometheus();
        let stop = CancellationToken::new();
        let task = tokio::spawn(run_upkeep(
            handle.clone(),
            Duration::from_millis(10),
            stop.clone(),
        ));
        metrics::histogram!("tidemark_test_upkeep_duration_seconds").record(0.001);
        tokio::time::sleep(Duration::from_millis(50)).await;
        stop.cancel();
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the upkeep task ends once stopped")
            .expect("the upkeep task does not panic");
        assert!(
            handle
                .render()
                .contains("tidemark_test_upkeep_duration_seconds_count 1")
        );
    }
}
