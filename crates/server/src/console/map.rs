//! The shipment page's route map: the route of the shipment's first container as GeoJSON,
//! from the same use case as `GET /v2/containers/{id}/map_geojson`, with longitudes made
//! continuous along the whole route so a Pacific voyage draws across ±180° as one line
//! (the page draws the land three times, a world apart, beneath it).
//!
//! The page's script (`assets/route-map.js`) fetches it with the session cookie on opening
//! and every [`REFRESH_SECONDS`], so new vessel positions show without a reload.

use axum::extract::Path;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use tidemark_domain::{Container, ShipmentId};
use tidemark_geo::map::{Feature, Geometry, Longitudes, MapOptions, build_map};
use tidemark_geo::searoute::SeaRouter;
use uuid::Uuid;

use super::assets;
use super::pages::PageError;
use super::session::Session;
use crate::app::AppState;
use crate::use_cases::vessels::map::container_map_input;

/// How often the page asks for the route again.
pub const REFRESH_SECONDS: u32 = 15;

/// The container whose route the shipment page draws: the first by number (a bill of
/// lading's containers travel together).
fn drawn(containers: &[Container]) -> Option<&Container> {
    containers.iter().min_by(|a, b| a.number.cmp(&b.number))
}

/// `GET /shipments/{id}/route-map`: the GeoJSON the page's map draws. An empty
/// FeatureCollection while the route is not known.
pub async fn route(
    state: AppState,
    session: Session,
    Path(id): Path<String>,
) -> Result<Response, PageError> {
    let id = Uuid::parse_str(&id).map_err(|_| PageError::NotFound)?;
    let shipment = state
        .store
        .shipment(session.account_id, ShipmentId(id))
        .await?;
    let containers = state.store.containers_of_shipment(shipment.id).await?;
    let input = match drawn(&containers) {
        Some(container) => container_map_input(&state, session.account_id, container.id).await?,
        None => Default::default(),
    };
    let options = MapOptions {
        longitudes: Longitudes::Continuous,
        ..MapOptions::default()
    };
    let mut map = build_map(&input, SeaRouter::embedded(), &options);
    continuous_along_route(&mut map.features);
    let body = serde_json::to_vec(&map)
        .map_err(|e| PageError::Store(tidemark_store::StoreError::backend(e)))?;
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body,
    )
        .into_response())
}

/// `lon` moved by whole turns to within 180° of `reference`.
fn near(reference: f64, lon: f64) -> f64 {
    lon - 360.0 * ((lon - reference) / 360.0).round()
}

/// Moves each feature by whole turns of longitude so that it starts within 180° of where
/// the feature before it (in route order) ended, then the whole route by whole turns so
/// its middle lies within ±180°. Lines stay as drawn (each is already continuous), so no
/// line or hop between features runs the long way round the world.
pub fn continuous_along_route(features: &mut [Feature<'_>]) {
    let mut reference: Option<f64> = None;
    for feature in features.iter_mut() {
        match &mut feature.geometry {
            Geometry::Point(point) => {
                if let Some(r) = reference {
                    point[0] = near(r, point[0]);
                }
                reference = Some(point[0]);
            }
            Geometry::LineString(points) => {
                let Some(first) = points.first().map(|p| p[0]) else {
                    continue;
                };
                let shift = reference.map_or(0.0, |r| near(r, first) - first);
                for p in points.iter_mut() {
                    p[0] += shift;
                }
                reference = points.last().map(|p| p[0]);
            }
        }
    }
    let lons = features.iter().flat_map(|f| match &f.geometry {
        Geometry::Point(p) => vec![p[0]],
        Geometry::LineString(points) => points.iter().map(|p| p[0]).collect(),
    });
    let (min, max) = lons.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), lon| {
        (lo.min(lon), hi.max(lon))
    });
    if !min.is_finite() {
        return;
    }
    let shift = near(0.0, (min + max) / 2.0) - (min + max) / 2.0;
    if shift != 0.0 {
        for feature in features.iter_mut() {
            match &mut feature.geometry {
                Geometry::Point(p) => p[0] += shift,
                Geometry::LineString(points) => points.iter_mut().for_each(|p| p[0] += shift),
            }
        }
    }
}

/// The map section of the shipment page: a heading, the map region the script draws into
/// (its accessible name "Route map"), a live status line and a legend.
pub fn section(shipment: ShipmentId) -> Markup {
    html! {
        h2 #route-map-heading { "Route map" }
        link rel="stylesheet" href=(assets::leaflet_css());
        div #route-map .route-map role="region" aria-label="Route map"
            data-src={"/shipments/" (shipment.0) "/route-map"}
            data-land=(assets::land())
            data-refresh-seconds=(REFRESH_SECONDS) {
            noscript { p { "The route map needs JavaScript." } }
        }
        p #route-map-status .muted aria-live="polite" { "Loading the route…" }
        ul.map-legend aria-label="Map legend" {
            li { span.key.key-port aria-hidden="true" {} "Port (POL, transshipments, POD)" }
            li { span.key.key-track aria-hidden="true" {} "Vessel track so far" }
            li { span.key.key-vessel aria-hidden="true" {} "Vessel now" }
            li { span.key.key-ahead aria-hidden="true" {} "Estimated path ahead" }
        }
        script src=(assets::leaflet_js()) defer {}
        script src=(assets::topojson_client()) defer {}
        script src=(assets::route_map()) defer {}
    }
}

#[cfg(test)]
mod tests {
    use tidemark_geo::map::{
        MapInput, MapLeg, MapPort, MapVessel, Properties, TrackPoint, VesselFix, build_map,
    };

    use super::*;

    fn port(locode: &str, lon: f64, lat: f64) -> MapPort {
        MapPort {
            id: tidemark_geo::reference::port_id(locode),
            name: locode.to_owned(),
            state_abbr: None,
            state: None,
            country_code: locode[..2].to_owned(),
            country: String::new(),
            time_zone: "UTC".to_owned(),
            coordinates: Some((lon, lat)),
            inbound_eta_at: None,
            inbound_ata_at: None,
            outbound_etd_at: None,
            outbound_atd_at: None,
        }
    }

    fn lons(features: &[Feature<'_>]) -> Vec<f64> {
        features
            .iter()
            .flat_map(|f| match &f.geometry {
                Geometry::Point(p) => vec![p[0]],
                Geometry::LineString(points) => points.iter().map(|p| p[0]).collect(),
            })
            .collect()
    }

    /// Shanghai to Los Angeles, the vessel east of the date line.
    fn pacific() -> MapInput {
        let at = |h| chrono::DateTime::from_timestamp(1_760_000_000 + h * 3600, 0).unwrap();
        let mut shanghai = port("CNSHA", 121.5, 31.2);
        shanghai.outbound_atd_at = Some(at(0));
        let mut los_angeles = port("USLAX", -118.3, 33.7);
        los_angeles.inbound_eta_at = Some(at(400));
        MapInput {
            ports: vec![shanghai, los_angeles],
            legs: vec![MapLeg {
                vessel: Some(MapVessel {
                    id: Uuid::from_u128(1),
                    name: "EVER GIVEN".to_owned(),
                    imo: Some("9811000".to_owned()),
                }),
                voyage_number: None,
                track: [(121.5, 31.2), (140.0, 35.0), (170.0, 40.0), (-175.0, 42.0)]
                    .iter()
                    .enumerate()
                    .map(|(i, &(lon, lat))| TrackPoint {
                        lon,
                        lat,
                        timestamp: at(i as i64 * 50),
                    })
                    .collect(),
                current: Some(VesselFix {
                    lon: -175.0,
                    lat: 42.0,
                    heading: Some(80.0),
                    speed_knots: Some(18.0),
                    timestamp: at(150),
                }),
            }],
            updated_at: None,
        }
    }

    #[test]
    fn a_pacific_voyage_has_no_hop_of_half_the_world_between_consecutive_points() {
        let input = pacific();
        let options = MapOptions {
            longitudes: Longitudes::Continuous,
            ..MapOptions::default()
        };
        let mut map = build_map(&input, SeaRouter::embedded(), &options);
        continuous_along_route(&mut map.features);
        let lons = lons(&map.features);
        assert!(lons.len() > 4, "{lons:?}");
        for pair in lons.windows(2) {
            assert!(
                (pair[1] - pair[0]).abs() < 90.0,
                "a jump from {} to {}",
                pair[0],
                pair[1]
            );
        }
        // Los Angeles drawn east of Shanghai, across the Pacific.
        let ports: Vec<f64> = map
            .features
            .iter()
            .filter_map(|f| match (&f.geometry, &f.properties) {
                (Geometry::Point(p), Properties::Port(_)) => Some(p[0]),
                _ => None,
            })
            .collect();
        assert_eq!(ports.len(), 2);
        assert!((ports[1] - ports[0] - 120.2).abs() < 1e-6, "{ports:?}");
    }

    #[test]
    fn the_route_is_moved_by_whole_turns_so_its_middle_is_within_the_world() {
        let input = pacific();
        let options = MapOptions {
            longitudes: Longitudes::Continuous,
            ..MapOptions::default()
        };
        let mut map = build_map(&input, SeaRouter::embedded(), &options);
        continuous_along_route(&mut map.features);
        let lons = lons(&map.features);
        let (min, max) = lons
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &l| {
                (lo.min(l), hi.max(l))
            });
        assert!(
            (-180.0..=180.0).contains(&((min + max) / 2.0)),
            "{min}..{max}"
        );
    }

    #[test]
    fn a_route_within_the_world_is_left_as_it_is() {
        let input = MapInput {
            ports: vec![port("NLRTM", 4.4, 51.9), port("SGSIN", 103.8, 1.3)],
            legs: vec![MapLeg::default()],
            updated_at: None,
        };
        let options = MapOptions {
            longitudes: Longitudes::Continuous,
            ..MapOptions::default()
        };
        let mut map = build_map(&input, SeaRouter::embedded(), &options);
        let before = lons(&map.features);
        continuous_along_route(&mut map.features);
        assert_eq!(lons(&map.features), before);
    }

    #[test]
    fn no_features_is_no_change() {
        let mut features: Vec<Feature<'_>> = Vec::new();
        continuous_along_route(&mut features);
        assert!(features.is_empty());
    }
}
