//! `port`: a port of the reference data, with its terminals.

use serde::Serialize;
use tidemark_geo::reference::{Port, ReferenceData, Terminal};
use utoipa::ToSchema;

use crate::resources::jsonapi::{
    Included, Relationships, Resource, ResourceIdentifier, included_object,
};

/// Attributes of a `port`, as Terminal49 serves them.
#[derive(Debug, Serialize, ToSchema)]
pub struct PortAttributes {
    pub id: String,
    pub name: String,
    /// UN/LOCODE.
    pub code: String,
    pub state_abbr: Option<String>,
    pub city: Option<String>,
    /// ISO 3166-1 alpha-2.
    pub country_code: String,
    /// IANA time zone.
    pub time_zone: String,
    pub latitude: f64,
    pub longitude: f64,
}

/// A port with the terminals it has (for its `terminals` relationship).
pub struct PortResource<'a> {
    pub port: &'a Port,
    pub terminals: Vec<&'a Terminal>,
}

impl Resource for PortResource<'_> {
    const TYPE: &'static str = "port";
    const PATH: &'static str = "ports";
    type Attributes = PortAttributes;

    fn id(&self) -> String {
        self.port.id.to_string()
    }

    fn attributes(&self) -> PortAttributes {
        let port = self.port;
        PortAttributes {
            id: port.id.to_string(),
            name: port.name.clone(),
            code: port.locode.clone(),
            state_abbr: port.state_abbr.clone(),
            city: Some(port.city.clone()),
            country_code: port.country_code.clone(),
            time_zone: port.time_zone.clone(),
            latitude: port.latitude,
            longitude: port.longitude,
        }
    }

    fn relationships(&self) -> Relationships {
        Relationships::default().many(
            "terminals",
            self.terminals
                .iter()
                .map(|terminal| ResourceIdentifier::new("terminal", terminal.id))
                .collect(),
        )
    }
}

/// The ports at these UN/LOCODEs as included resources, once each, in first-seen order;
/// codes the reference data does not know are left out.
pub fn port_objects<'a>(
    reference: &ReferenceData,
    locodes: impl IntoIterator<Item = &'a str>,
    base: &str,
) -> Vec<Included> {
    let mut seen = std::collections::BTreeSet::new();
    locodes
        .into_iter()
        .filter(|locode| seen.insert(*locode))
        .filter_map(|locode| reference.port_by_locode(locode))
        .map(|port| {
            included_object(
                &PortResource {
                    port,
                    terminals: reference.terminals_at_port(&port.locode),
                },
                base,
            )
        })
        .collect()
}
