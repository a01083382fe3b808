//! The application: shared dependencies, and how the API and the workers are run.

use std::ops::Deref;
use std::sync::Arc;

use anyhow::Context;
use metrics_exporter_prometheus::PrometheusHandle;
use tidemark_domain::{Clock, IdGenerator, ScaledClock, SystemClock, UuidV7Ids};
use tidemark_geo::reference::ReferenceData;
use tidemark_store::Store;
use tidemark_store_postgres::PgStore;
use tidemark_store_sqlite::SqliteStore;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::api;
use crate::api::auth::AuthCache;
use crate::api::rate_limit::RateLimiter;
use crate::config::{Config, DatabaseUrl};
use crate::jobs;
use crate::tracking::carriers::{
    Carriers, dcsa_connector, remote_sandbox, start_in_process_sandbox,
};

/// Everything a request or a job needs. Built once per process.
pub struct App {
    pub config: Config,
    pub store: Arc<dyn Store>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
    pub reference: &'static ReferenceData,
    pub auth: AuthCache,
    pub rate_limits: RateLimiter,
    pub metrics: PrometheusHandle,
    pub carriers: Carriers,
    /// Delivers webhooks: refuses non-public addresses unless allowed, never redirects.
    pub webhook_client: reqwest::Client,
    /// Document bytes (`storage_url`).
    pub documents: crate::documents::storage::Storage,
    /// Signs download links and direct uploads; use [`App::signing_key`].
    pub signer: crate::documents::signing::Signer,
}

/// The axum state: a cheap handle on the one [`App`].
#[derive(Clone)]
pub struct AppState(pub Arc<App>);

impl Deref for AppState {
    type Target = App;

    fn deref(&self) -> &App {
        &self.0
    }
}

impl App {
    /// Assembles an app from its parts; tests pass a mock clock and sequential ids.
    pub fn new(
        config: Config,
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        let webhook_client =
            crate::webhooks::address::guarded_client_builder(config.webhooks_allow_private)
                .build()
                .expect("the TLS backend initialises");
        let documents = crate::documents::storage::Storage::from_url(&config.storage_url)
            .expect("storage_url is checked when the config is loaded");
        Self {
            documents,
            signer: crate::documents::signing::Signer::new(config.signing_key.clone()),
            auth: AuthCache::new(config.auth_cache_ttl),
            rate_limits: RateLimiter::new(config.rate_limit_per_minute),
            config,
            store,
            clock,
            ids,
            reference: ReferenceData::embedded(),
            metrics: crate::telemetry::prometheus(),
            carriers: Carriers::default(),
            webhook_client,
        }
    }

    /// The key that signs download links and direct uploads: the configured one, or the
    /// installation's, kept in the database (read once, then kept).
    pub async fn signing_key(
        &self,
    ) -> Result<&crate::documents::signing::SigningKey, tidemark_store::StoreError> {
        self.signer.key(self.store.as_ref()).await
    }

    /// The same app with these carrier connectors.
    #[must_use]
    pub fn with_carriers(mut self, carriers: Carriers) -> Self {
        self.carriers = carriers;
        self
    }

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
        for carrier in &config.carriers {
            carriers.insert(dcsa_connector(carrier)?);
        }
        let app = Self::new(config, store, clock, Arc::new(UuidV7Ids)).with_carriers(carriers);
        // Read (or made) now, so a database that cannot give it stops the start.
        app.signing_key()
            .await
            .context("reading the signing key from the database")?;
        Ok(app)
    }

    /// The HTTP API with all its layers.
    pub fn router(self: &Arc<Self>) -> axum::Router {
        api::router(AppState(Arc::clone(self)))
    }

    /// Serves the API on `listener` until `shutdown` is cancelled, then finishes the
    /// requests in flight.
    pub async fn serve(
        self: Arc<Self>,
        listener: TcpListener,
        shutdown: CancellationToken,
    ) -> std::io::Result<()> {
        let router = self.router();
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await
    }

    /// Runs the background workers and the scheduler until `shutdown` is cancelled; jobs
    /// already started are finished first.
    pub async fn run_workers(self: Arc<Self>, shutdown: CancellationToken) {
        jobs::run(self, shutdown).await;
    }
}

/// Opens the backend named by the database URL and applies its migrations.
pub async fn open_store(config: &Config) -> anyhow::Result<Arc<dyn Store>> {
    Ok(match &config.database_url {
        DatabaseUrl::Sqlite(path) => Arc::new(
            SqliteStore::open(path)
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

impl axum::extract::FromRequestParts<AppState> for AppState {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        _: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(state.clone())
    }
}
