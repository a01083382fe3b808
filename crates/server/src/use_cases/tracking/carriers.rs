//! The carrier connectors by SCAC, and the in-process sandbox carrier.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Context;
use tidemark_carriers::dcsa::{DcsaAuth, DcsaClient};
use tidemark_carriers::profile::RateBudget;
use tidemark_carriers::sandbox::{self, Sandbox, SandboxPort};
use tidemark_carriers::{Carrier, dcsa_client};
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
                .terminals_at_port(&port.locode)
                .into_iter()
                .map(|terminal| terminal.name.clone())
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
        DcsaClient::new(sandbox::SCAC, base, DcsaAuth::None).context("sandbox connector")?,
    ))
}

/// The `TEST` connector for a sandbox carrier running elsewhere.
pub fn remote_sandbox(base: &Url) -> anyhow::Result<Arc<dyn Carrier>> {
    Ok(Arc::new(
        DcsaClient::new(sandbox::SCAC, base.clone(), DcsaAuth::None)
            .context("sandbox connector")?,
    ))
}

/// The DCSA connector of a configured carrier, speaking its `dcsa_version`.
pub fn dcsa_connector(config: &crate::config::CarrierConfig) -> anyhow::Result<Arc<dyn Carrier>> {
    use crate::config::CarrierAuth;
    let auth = match &config.auth {
        CarrierAuth::None => DcsaAuth::None,
        CarrierAuth::Header { name, value } => DcsaAuth::Header {
            name: name.clone(),
            value: value.clone(),
        },
        CarrierAuth::OAuth2 {
            token_url,
            client_id,
            client_secret,
            scope,
        } => DcsaAuth::OAuth2ClientCredentials {
            token_url: token_url.clone(),
            client_id: client_id.clone(),
            client_secret: client_secret.clone(),
            scope: scope.clone(),
        },
    };
    dcsa_client(
        config.dcsa_version,
        config.scac.clone(),
        config.base_url.clone(),
        auth,
    )
    .with_context(|| format!("the {} connector", config.scac))
}
