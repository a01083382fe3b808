//! `vessel`: a vessel with its latest AIS position, and the positions served with it.

use chrono::{DateTime, Utc};
use serde::Serialize;
use tidemark_geo::future::FuturePosition;
use tidemark_store::{Fix, StoreError, Vessel};
use utoipa::ToSchema;

use crate::parts::core::Core;
use crate::resources::jsonapi::{Included, Resource, included_object, timestamp};

/// One position of a vessel: stored (`estimated: false`) or predicted.
#[derive(Debug, Serialize, ToSchema)]
pub struct PositionObject {
    pub latitude: f64,
    pub longitude: f64,
    pub heading: Option<f64>,
    #[serde(with = "timestamp")]
    pub timestamp: DateTime<Utc>,
    pub estimated: bool,
}

impl From<&Fix> for PositionObject {
    fn from(fix: &Fix) -> Self {
        Self {
            latitude: fix.latitude,
            longitude: fix.longitude,
            heading: fix.heading.or(fix.course),
            timestamp: fix.timestamp,
            estimated: false,
        }
    }
}

impl From<&FuturePosition> for PositionObject {
    fn from(p: &FuturePosition) -> Self {
        Self {
            latitude: p.latitude,
            longitude: p.longitude,
            heading: Some((p.heading * 10.0).round() / 10.0),
            timestamp: p.timestamp,
            estimated: p.estimated,
        }
    }
}

/// Attributes of a vessel (spec §2.5).
#[derive(Debug, Serialize, ToSchema)]
pub struct VesselAttributes {
    pub name: Option<String>,
    pub imo: Option<String>,
    pub mmsi: Option<String>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub nautical_speed_knots: Option<f64>,
    pub navigational_heading_degrees: Option<f64>,
    #[serde(with = "timestamp::option")]
    #[schema(value_type = Option<String>)]
    pub position_timestamp: Option<DateTime<Utc>>,
    /// Present only when asked for (a positions window, or future positions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub positions: Option<Vec<PositionObject>>,
}

pub struct VesselResource<'a> {
    pub vessel: &'a Vessel,
    pub positions: Option<Vec<PositionObject>>,
}

impl Resource for VesselResource<'_> {
    const TYPE: &'static str = "vessel";
    const PATH: &'static str = "vessels";
    type Attributes = VesselAttributes;

    fn id(&self) -> String {
        self.vessel.id.to_string()
    }

    fn attributes(&self) -> VesselAttributes {
        let latest = self.vessel.latest;
        VesselAttributes {
            name: self.vessel.name.clone(),
            imo: self.vessel.imo.clone(),
            mmsi: self.vessel.mmsi.clone(),
            latitude: latest.map(|f| f.latitude),
            longitude: latest.map(|f| f.longitude),
            nautical_speed_knots: latest.and_then(|f| f.speed_knots),
            navigational_heading_degrees: latest.and_then(|f| f.heading.or(f.course)),
            position_timestamp: latest.map(|f| f.timestamp),
            positions: self.positions.as_ref().map(|p| {
                p.iter()
                    .map(|p| PositionObject {
                        latitude: p.latitude,
                        longitude: p.longitude,
                        heading: p.heading,
                        timestamp: p.timestamp,
                        estimated: p.estimated,
                    })
                    .collect()
            }),
        }
    }
}

/// The vessels these IMO numbers name, as included resources (without positions); numbers
/// of vessels never recorded are left out.
pub async fn vessel_objects(
    core: &Core,
    imos: impl IntoIterator<Item = &str>,
) -> Result<Vec<Included>, StoreError> {
    let mut imos: Vec<String> = imos.into_iter().map(str::to_owned).collect();
    imos.sort_unstable();
    imos.dedup();
    if imos.is_empty() {
        return Ok(Vec::new());
    }
    let vessels = core.store.vessels_by_imos(&imos).await?;
    Ok(vessels
        .iter()
        .map(|vessel| {
            included_object(
                &VesselResource {
                    vessel,
                    positions: None,
                },
                &core.public_url,
            )
        })
        .collect())
}
