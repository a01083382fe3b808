//! The application: the dependencies every request and job shares, assembled from
//! [`parts`](crate::parts). It is the composition root: `api`, `console`, `jobs` and the
//! process import it and hand each use case the parts it takes; nothing in `use_cases`,
//! `resources` or `parts` imports it. How a process builds one from its settings and runs
//! it is `serve.rs`.

use std::ops::Deref;
use std::sync::Arc;

use metrics_exporter_prometheus::PrometheusHandle;
use tidemark_domain::{Clock, IdGenerator};
use tidemark_geo::reference::ReferenceData;
use tidemark_store::Store;

use crate::config::Config;
use crate::parts::auth_cache::AuthCache;
use crate::parts::carriers::Carriers;
use crate::parts::core::Core;
use crate::parts::documents::isolate::Extractor;
use crate::parts::documents::signing::{Signer, SigningKey};
use crate::parts::documents::storage::Storage;
use crate::parts::rate_limit::RateLimiter;
use crate::parts::recent_pushes::RecentPushes;
use crate::parts::sandbox_ais::SandboxAis;
use crate::parts::terminals::{Terminals, no_discharges};
use crate::use_cases::documents::Files;
use crate::use_cases::edi::Edi;
use crate::use_cases::email::ingest::Mailroom;
use crate::use_cases::terminals;
use crate::use_cases::tracking::Engine;

/// Client addresses whose failed authentications are counted at once (about 100 bytes
/// each); past it, old windows are dropped, then new failing addresses are refused.
const MAX_TRACKED_CLIENTS: usize = 100_000;

/// Everything a request or a job needs. Built once per process.
pub struct App {
    pub config: Config,
    /// The store, clock, ids, reference data and public address, which most use cases take
    /// alone (`&app.core`, or `&app` through [`Deref`]).
    pub core: Core,
    pub auth: AuthCache,
    pub rate_limits: RateLimiter,
    /// Failed authentications per client address (`unauthenticated_rate_limit_per_minute`).
    pub client_limits: RateLimiter<std::net::IpAddr>,
    pub metrics: PrometheusHandle,
    pub carriers: Carriers,
    /// Carrier pushes accepted recently, so a replayed one is ignored.
    pub recent_pushes: RecentPushes,
    /// Delivers webhooks: refuses non-public addresses unless allowed, never redirects.
    pub webhook_client: reqwest::Client,
    /// Document bytes (`storage_url`).
    pub documents: Storage,
    /// Signs download links and direct uploads; use [`App::signing_key`].
    pub signer: Signer,
    /// Reads documents in child processes under limits, a bounded number at once.
    pub extractor: Extractor,
    /// The sandbox fleet's AIS transmitter (`sandbox_ais_seconds`; `None` when off): shared
    /// by the periodic loop and the tracking engine, which has it report a voyage's vessel
    /// as soon as its tracking request is `created`.
    pub sandbox_ais: Option<Arc<SandboxAis>>,
    /// When this process loaded its settings (by the injected clock): the settings'
    /// "last updated" time, as in `GET /v2/webhooks/ips`.
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// The terminals asked about discharged containers (`[terminals.<id>]` and the sandbox).
    pub terminals: Terminals,
}

/// `app.store`, `app.clock`, … read the [`Core`]'s, and `&app` is accepted where a use case
/// asks for `&Core`: the core is what an app is first of all, and a hundred callers read
/// better without `.core` in every line. The other parts stay `App`'s own fields.
impl Deref for App {
    type Target = Core;

    fn deref(&self) -> &Core {
        &self.core
    }
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
            tidemark_webhooks::address::guarded_client_builder(config.webhooks_allow_private)
                .build()
                .expect("the TLS backend initialises");
        let documents = Storage::from_url(&config.storage_url)
            .expect("storage_url is checked when the config is loaded");
        let sandbox_ais = config.ais.sandbox_interval.map(|interval| {
            Arc::new(SandboxAis::new(
                crate::parts::carriers::sandbox(ReferenceData::embedded()),
                chrono::Duration::from_std(interval)
                    .unwrap_or_else(|_| chrono::Duration::minutes(5)),
            ))
        });
        let terminals = Terminals::from_config(
            &config.terminals,
            Arc::clone(&clock),
            no_discharges(),
        )
        .unwrap_or_else(|error| {
            tracing::error!(%error, "the configured terminals cannot be built; only the sandbox's is asked");
            Terminals::from_config(
                &[],
                Arc::clone(&clock),
                no_discharges(),
            )
            .expect("the sandbox terminal needs no client")
        });
        Self {
            terminals,
            started_at: clock.now(),
            sandbox_ais,
            documents,
            extractor: Extractor::new(config.limits.extraction.clone(), config.max_document_bytes),
            signer: Signer::new(config.signing_key.clone()),
            auth: AuthCache::new(config.auth_cache_ttl),
            rate_limits: RateLimiter::new(config.rate_limit_per_minute),
            client_limits: RateLimiter::bounded(
                config.limits.unauthenticated_per_minute,
                MAX_TRACKED_CLIENTS,
            ),
            core: Core {
                public_url: config.public_url.clone(),
                store,
                clock,
                ids,
                reference: ReferenceData::embedded(),
            },
            config,
            metrics: crate::telemetry::prometheus(),
            carriers: Carriers::default(),
            recent_pushes: Default::default(),
            webhook_client,
        }
    }

    /// The key that signs download links and direct uploads: the configured one, or the
    /// installation's, kept in the database (read once, then kept).
    pub async fn signing_key(&self) -> Result<&SigningKey, tidemark_store::StoreError> {
        self.signer.key(self.store.as_ref()).await
    }

    /// What tracking needs beside the core.
    pub fn engine(&self) -> Engine<'_> {
        Engine {
            core: &self.core,
            carriers: &self.carriers,
            intervals: self.config.poll_intervals(),
            sandbox_ais: self.sandbox_ais.as_deref(),
            ais: &self.config.ais,
        }
    }

    /// What asking terminals needs.
    pub fn terminals_context(&self) -> terminals::Context<'_> {
        terminals::Context {
            engine: self.engine(),
            terminals: &self.terminals,
            scheduler_tick: self.config.scheduler_tick,
        }
    }

    /// What receiving and reading EDI needs beside the core.
    pub fn edi(&self) -> Edi<'_> {
        Edi {
            core: &self.core,
            reader: self.config.edi.reader(),
        }
    }

    /// What reading stored documents needs beside the core.
    pub fn files(&self) -> Files<'_> {
        Files {
            storage: &self.documents,
            extractor: &self.extractor,
        }
    }

    /// What the SMTP receiver and the IMAP poller file messages with.
    pub fn mailroom(&self) -> Mailroom {
        Mailroom {
            core: self.core.clone(),
            email: self.config.email.clone(),
            storage: self.documents.clone(),
            max_document_bytes: self.config.max_document_bytes,
            edi_reader: self.config.edi.reader(),
        }
    }

    /// The same app with these carrier connectors.
    #[must_use]
    pub fn with_carriers(mut self, carriers: Carriers) -> Self {
        self.carriers = carriers;
        self
    }
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
