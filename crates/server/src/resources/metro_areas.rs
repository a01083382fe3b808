//! `metro_area`: the city of a port of the reference data, in Terminal49's shape.

use serde::Serialize;
use tidemark_geo::reference::{Port, metro_area_id};
use utoipa::ToSchema;

use crate::resources::jsonapi::{Relationships, Resource};

/// Attributes of a `metro_area`, as Terminal49's OpenAPI file describes them.
#[derive(Debug, Serialize, ToSchema)]
pub struct MetroAreaAttributes {
    pub name: String,
    /// UN/LOCODE.
    pub code: String,
    pub state_abbr: Option<String>,
    /// ISO 3166-1 alpha-2.
    pub country_code: String,
    /// IANA time zone.
    pub time_zone: String,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
}

/// The metro area of one port: its city, under the port's code.
pub struct MetroAreaResource<'a> {
    pub port: &'a Port,
}

impl Resource for MetroAreaResource<'_> {
    const TYPE: &'static str = "metro_area";
    const PATH: &'static str = "metro_areas";
    type Attributes = MetroAreaAttributes;

    fn id(&self) -> String {
        metro_area_id(&self.port.locode).to_string()
    }

    fn attributes(&self) -> MetroAreaAttributes {
        let port = self.port;
        MetroAreaAttributes {
            name: port.city.clone(),
            code: port.locode.clone(),
            state_abbr: port.state_abbr.clone(),
            country_code: port.country_code.clone(),
            time_zone: port.time_zone.clone(),
            latitude: Some(port.latitude),
            longitude: Some(port.longitude),
        }
    }

    fn relationships(&self) -> Relationships {
        Relationships::default()
    }
}
