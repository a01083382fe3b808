//! A running process: the configured store, clock and carriers assembled into an [`App`],
//! the HTTP listener and the workers. The wiring between the rooms: the API router and the
//! workers are plugged in here, so the use cases never see them.

use std::sync::Arc;

use anyhow::Context;
use tidemark_domain::{Clock, ScaledClock, SystemClock, UuidV7Ids};
use tidemark_geo::reference::ReferenceData;
use tidemark_store::Store;
use tidemark_store_postgres::PgStore;
use tidemark_store_sqlite::SqliteStore;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::api;
use crate::app::{App, AppState};
use crate::config::{Config, DatabaseUrl};
use crate::console;
use crate::jobs;
use crate::parts::carriers::{Carriers, add_configured, remote_sandbox, start_in_process_sandbox};

impl App {
    /// Opens (and migrates) the configured database, with the real clock and ids.
    pub async fn from_config(config: Config) -> anyhow::Result<Self> {
        let store = open_store(&config).await?;
        let clock: Arc<dyn Clock> = if config.demo_time_scale > 1 {
            tracing::warn!(
                scale = config.demo_time_scale,
                "demo mode: the clock runs fast"
            );
            Arc::new(ScaledClock::new(config.demo_time_scale))
        } else {
            Arc::new(SystemClock)
        };
        let mut carriers = Carriers::default();
        carriers.insert(match &config.sandbox_carrier_url {
            Some(url) => remote_sandbox(url)?,
            None => {
                start_in_process_sandbox(
                    ReferenceData::embedded(),
                    Arc::clone(&clock),
                    CancellationToken::new(),
                )
                .await?
            }
        });
        add_configured(&mut carriers, &config.carriers, &clock)?;
        let app = Self::new(config, store, clock, Arc::new(UuidV7Ids)).with_carriers(carriers);
        // Read (or made) now, so a database that cannot give it stops the start.
        app.signing_key()
            .await
            .context("reading the signing key from the database")?;
        Ok(app)
    }

    /// The HTTP API and the web console at `/`, inside the layers they share.
    pub fn router(self: &Arc<Self>) -> axum::Router {
        crate::edge::layers(self.routes(), &AppState(Arc::clone(self)))
    }

    /// The HTTP API's and the console's routes without the shared layers (the middleware
    /// benchmark tells the layers' cost from the routing table's with it).
    pub fn routes(self: &Arc<Self>) -> axum::Router {
        let state = AppState(Arc::clone(self));
        console::router(state.clone()).merge(api::router(state))
    }

    /// Serves the API on `listener` until `shutdown` is cancelled, then finishes the
    /// requests in flight; connections are bounded by the configured limits
    /// ([`connections`](crate::connections)). The metrics recorder's upkeep runs for as
    /// long as this does ([`telemetry::run_upkeep`](crate::telemetry::run_upkeep)), and
    /// stops with it, also when this future is dropped.
    pub async fn serve(
        self: Arc<Self>,
        listener: TcpListener,
        shutdown: CancellationToken,
    ) -> std::io::Result<()> {
        let router = self.router();
        // Its own token: upkeep goes on while the requests in flight finish.
        let upkeep = CancellationToken::new();
        tokio::spawn(crate::telemetry::run_upkeep(
            self.metrics.clone(),
            crate::telemetry::UPKEEP_INTERVAL,
            upkeep.clone(),
        ));
        let _stop_upkeep = upkeep.drop_guard();
        crate::connections::serve(listener, router, &self.config.limits.connections, shutdown).await
    }

    /// Runs the background workers and the scheduler until `shutdown` is cancelled; jobs
    /// already started are finished first. The watched EDI folders (`[[edi.inbound]]`) are
    /// scanned, and the SFTP mailboxes (`[[edi.sftp]]`) polled, alongside, in the processes
    /// that run the workers.
    pub async fn run_workers(self: Arc<Self>, shutdown: CancellationToken) {
        let folders = self.config.edi.inbound.clone();
        let watcher = (!folders.is_empty()).then(|| {
            for folder in &folders {
                tracing::info!(
                    dir = %folder.dir.display(),
                    account = folder.account,
                    create_shipments = folder.create_shipments,
                    "receiving EDI from a watched folder"
                );
            }
            tokio::spawn(crate::use_cases::edi::folder::watch(
                self.core.clone(),
                self.config.edi.reader(),
                folders,
                shutdown.clone(),
            ))
        });
        let pollers: Vec<_> = self
            .config
            .edi
            .sftp
            .iter()
            .enumerate()
            .map(|(index, mailbox)| {
                tracing::info!(
                    entry = index,
                    mailbox = mailbox.url(),
                    account = mailbox.account,
                    interval = ?mailbox.interval,
                    after = ?mailbox.after,
                    create_shipments = mailbox.create_shipments,
                    "receiving EDI from a polled SFTP mailbox"
                );
                tokio::spawn(crate::use_cases::edi::sftp::watch(
                    self.core.clone(),
                    self.config.edi.reader(),
                    index,
                    mailbox.clone(),
                    shutdown.clone(),
                ))
            })
            .collect();
        jobs::run(self, shutdown).await;
        for poller in pollers {
            if let Err(error) = poller.await {
                tracing::error!(%error, "an SFTP mailbox poller stopped");
            }
        }
        if let Some(watcher) = watcher
            && let Err(error) = watcher.await
        {
            tracing::error!(%error, "the EDI folder watcher stopped");
        }
    }
}

/// Opens the backend named by the database URL and applies its migrations.
pub async fn open_store(config: &Config) -> anyhow::Result<Arc<dyn Store>> {
    Ok(match &config.database_url {
        DatabaseUrl::Sqlite(path) => Arc::new(
            SqliteStore::open_with(path, config.database_shipment_cache_entries)
                .with_context(|| format!("opening SQLite database {}", path.display()))?,
        ),
        DatabaseUrl::Postgres(url) => Arc::new(
            PgStore::connect_with(
                url,
                tidemark_store_postgres::ConnectOptions {
                    max_connections: config.database_max_connections,
                    shipment_cache_entries: config.database_shipment_cache_entries,
                    schema: None,
                    ..Default::default()
                },
            )
            .await
            .context("connecting to PostgreSQL")?,
        ),
    })
}
