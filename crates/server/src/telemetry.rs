//! Logging and metrics setup.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
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

/// The process-wide Prometheus recorder; installed on first use.
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
