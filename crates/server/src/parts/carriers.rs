//! The carrier connectors by SCAC, and the in-process sandbox carrier.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Context;
use tidemark_carriers::Carrier;
use tidemark_carriers::dcsa::DcsaClient;
use tidemark_carriers::profile::RateBudget;
use tidemark_carriers::sandbox::{self, Sandbox, SandboxPort, SandboxTerminal};
use tidemark_domain::Clock;
use tidemark_geo::reference::ReferenceData;
use tokio_util::sync::CancellationToken;
use url::Url;

/// Connectors by SCAC, with each carrier's rate budget. A SCAC with none configured cannot
/// be polled yet: its tracking requests retry as `shipping_line_unreachable` and then fail.
#[derive(Clone, Default)]
pub struct Carriers {
    by_scac: HashMap<String, Arc<dyn Carrier>>,
    budgets: HashMap<String, RateBudget>,
}

impl Carriers {
    pub fn insert(&mut self, carrier: Arc<dyn Carrier>) {
        self.by_scac.insert(carrier.scac().to_uppercase(), carrier);
    }

    /// Serves `scac` with another line's connector: a brand with its family's (ANL with
    /// CMA CGM's), whose calls count against the family's budget and health.
    pub fn insert_as(&mut self, scac: &str, carrier: Arc<dyn Carrier>) {
        self.by_scac.insert(scac.to_uppercase(), carrier);
    }

    /// Sets a carrier's budget (from its `requests_per_minute` / `requests_per_day`).
    pub fn set_budget(&mut self, scac: &str, budget: RateBudget) {
        self.budgets.insert(scac.to_uppercase(), budget);
    }

    pub fn get(&self, scac: &str) -> Option<&Arc<dyn Carrier>> {
        self.by_scac.get(&scac.to_uppercase())
    }

    /// The carrier's limits on our calls; unlimited when none are configured.
    pub fn budget(&self, scac: &str) -> RateBudget {
        self.budgets
            .get(&scac.to_uppercase())
            .copied()
            .unwrap_or_default()
    }

    /// The SCACs whose connector calls a carrier (not the lines without a tracking API),
    /// sorted.
    pub fn connected_scacs(&self) -> Vec<&str> {
        let mut scacs: Vec<&str> = self
            .by_scac
            .iter()
            .filter(|(_, carrier)| carrier.unavailable_reason().is_none() && !carrier.fed_by_edi())
            .map(|(scac, _)| scac.as_str())
            .collect();
        scacs.sort_unstable();
        scacs
    }

    /// The SCACs with a connector, sorted: the only SCACs that label metrics.
    pub fn scacs(&self) -> Vec<&str> {
        let mut scacs: Vec<&str> = self.by_scac.keys().map(String::as_str).collect();
        scacs.sort_unstable();
        scacs
    }
}

/// The sandbox's voyage generator over the embedded port list.
pub fn sandbox(reference: &ReferenceData) -> Arc<Sandbox> {
    let ports = reference
        .ports(&tidemark_geo::reference::PortFilter::default())
        .into_iter()
        .map(|port| SandboxPort {
            locode: port.locode.clone(),
            latitude: port.latitude,
            longitude: port.longitude,
            terminals: reference
                .curated_terminals_at_port(&port.locode)
                .into_iter()
                .map(|terminal| SandboxTerminal {
                    name: terminal.name.clone(),
                    smdg_code: terminal.smdg_code.clone(),
                })
                .collect(),
        })
        .collect();
    Arc::new(Sandbox::new(ports))
}

/// Serves the sandbox carrier's DCSA API on `listener` until `shutdown`.
pub async fn serve_sandbox(
    listener: tokio::net::TcpListener,
    sandbox: Arc<Sandbox>,
    clock: Arc<dyn Clock>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    axum::serve(listener, sandbox::router(sandbox, clock))
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
}

/// Starts the sandbox carrier on a free loopback port of this process and returns the
/// `TEST` connector, which reaches it over HTTP like any real carrier.
pub async fn start_in_process_sandbox(
    reference: &ReferenceData,
    clock: Arc<dyn Clock>,
    shutdown: CancellationToken,
) -> anyhow::Result<Arc<dyn Carrier>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding the in-process sandbox carrier")?;
    let address = listener.local_addr()?;
    tokio::spawn(serve_sandbox(listener, sandbox(reference), clock, shutdown));
    let base = Url::parse(&format!("http://{address}/"))?;
    Ok(Arc::new(
        DcsaClient::for_sandbox(base).context("sandbox connector")?,
    ))
}

/// The `TEST` connector for a sandbox carrier running elsewhere.
pub fn remote_sandbox(base: &Url) -> anyhow::Result<Arc<dyn Carrier>> {
    Ok(Arc::new(
        DcsaClient::for_sandbox(base.clone()).context("sandbox connector")?,
    ))
}

/// The connector of a configured carrier, by its protocol (`tidemark_carriers::connector`).
/// One connector serves the line and its brands, so one OAuth2 token is shared by every
/// worker of the process.
pub fn connector_for(
    config: &crate::config::CarrierConfig,
    clock: Arc<dyn Clock>,
) -> anyhow::Result<Arc<dyn Carrier>> {
    use crate::config::CarrierAuth;
    use tidemark_carriers::auth::{Authenticator, OAuth2Settings};
    use tidemark_carriers::connector::{Credentials, Endpoint, connector};
    let credentials = match &config.auth {
        CarrierAuth::None => Credentials::Auth(Authenticator::none()),
        CarrierAuth::Header { name, value } => {
            Credentials::Auth(Authenticator::headers(vec![(name.clone(), value.clone())])?)
        }
        CarrierAuth::Headers(headers) => {
            Credentials::Auth(Authenticator::headers(headers.clone())?)
        }
        CarrierAuth::OAuth2 {
            token_url,
            client_id,
            client_secret,
            scope,
            audience,
            client_auth,
            token_header,
            headers,
        } => Credentials::Auth(Authenticator::oauth2(
            OAuth2Settings {
                token_url: token_url.clone(),
                client_id: client_id.clone(),
                client_secret: client_secret.clone(),
                scope: scope.clone(),
                audience: audience.clone(),
                client_auth: *client_auth,
            },
            token_header.clone(),
            headers.clone(),
            clock.clone(),
        )?),
        CarrierAuth::CoscoHmac {
            api_key,
            secret_key,
        } => Credentials::Cosco(tidemark_carriers::cosco::CoscoKeys {
            api_key: api_key.clone(),
            secret_key: secret_key.clone(),
        }),
    };
    connector(
        &config.scac,
        config.protocol,
        Endpoint {
            base_url: config.base_url.clone(),
            events_path: config.events_path.clone(),
        },
        credentials,
        clock,
    )
    .with_context(|| format!("TIDEMARK_CARRIERS__{}", config.scac))
}

/// Adds the configured carriers (each under its SCAC and its brands', with its budget) and,
/// for every line whose profile says it has no public tracking API, a connector that fails
/// its requests at once as `data_unavailable`.
pub fn add_configured(
    carriers: &mut Carriers,
    configs: &[crate::config::CarrierConfig],
    clock: &Arc<dyn Clock>,
) -> anyhow::Result<()> {
    use tidemark_carriers::profile::{ProfileKind, Profiles, Protocol};
    for profile in Profiles::embedded().all() {
        let ProfileKind::Line(api) = &profile.kind else {
            continue;
        };
        let no_api: Arc<dyn Carrier> = match api.protocol() {
            Protocol::None => Arc::new(tidemark_carriers::connector::NoApi::new(
                &profile.scac,
                &profile.name,
            )),
            // Followed through the EDI the operator receives from the line.
            Protocol::Edi => Arc::new(tidemark_carriers::connector::EdiFeed::new(&profile.scac)),
            _ => continue,
        };
        carriers.insert(Arc::clone(&no_api));
        for scac in Profiles::embedded().served_by(&profile.scac) {
            carriers.insert_as(scac, Arc::clone(&no_api));
        }
    }
    for config in configs {
        let connector = connector_for(config, Arc::clone(clock))?;
        carriers.insert(Arc::clone(&connector));
        carriers.set_budget(&config.scac, config.budget);
        for brand in &config.serves {
            carriers.insert_as(brand, Arc::clone(&connector));
            carriers.set_budget(brand, config.budget);
        }
    }
    Ok(())
}
