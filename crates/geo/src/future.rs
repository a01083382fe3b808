//! Estimated future positions of a vessel along the sea route to its next port.
//!
//! The recipe is the one of `NOTES-geodata.md` §3.3: route from the vessel to the port
//! over the maritime network, pick one constant speed (the carrier's ETA when it lies in
//! the future, else the recent speed over ground, else a service speed, always clamped),
//! and walk the route at that speed. Every point lies on the route, so on the network;
//! all are estimates.
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use tidemark_geo::future::{FutureOptions, FutureRequest, estimate_future_positions};
//! use tidemark_geo::searoute::SeaRouter;
//!
//! let at = Utc.with_ymd_and_hms(2025, 12, 1, 0, 0, 0).unwrap();
//! let request = FutureRequest {
//!     from: (-140.0, 33.0),
//!     at,
//!     destination: (-118.26, 33.73),
//!     previous_port: None,
//!     eta: None,
//!     speed_knots: Some(18.0),
//! };
//! let path = estimate_future_positions(SeaRouter::embedded(), &request, &FutureOptions::default())?;
//! let last = path.positions.last().unwrap();
//! assert_eq!(last.timestamp, path.arrival);
//! # Ok::<(), tidemark_geo::future::FutureError>(())
//! ```

use std::fmt;

use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;

use crate::searoute::{
    EARTH_RADIUS_KM, KM_PER_NM, RouteError, RouteOptions, SeaRoute, SeaRouter, haversine_km,
};

/// One estimated position, shaped like a Terminal49 `positions` item.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FuturePosition {
    /// Degrees.
    pub latitude: f64,
    /// Degrees, within `[-180, 180]`.
    pub longitude: f64,
    /// Course along the route in degrees clockwise from north, in `[0, 360)`.
    pub heading: f64,
    /// When the vessel is expected there.
    pub timestamp: DateTime<Utc>,
    /// Always `true`: these are predictions.
    pub estimated: bool,
}

/// What to estimate from.
#[derive(Debug, Clone, PartialEq)]
pub struct FutureRequest {
    /// The vessel's last known position, `(lon, lat)` in degrees.
    pub from: (f64, f64),
    /// When it was there.
    pub at: DateTime<Utc>,
    /// The next port, `(lon, lat)`.
    pub destination: (f64, f64),
    /// The port the vessel left, `(lon, lat)`: when the vessel is near the route from it
    /// to the destination, the estimate follows that route (the planned leg).
    pub previous_port: Option<(f64, f64)>,
    /// The carrier's estimated arrival at the destination.
    pub eta: Option<DateTime<Utc>>,
    /// Recent speed over ground in knots.
    pub speed_knots: Option<f64>,
}

/// How far apart consecutive estimated positions are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spacing {
    /// One point per this much time.
    Time(TimeDelta),
    /// One point per this many kilometres along the route.
    DistanceKm(f64),
}

/// Tunables; the defaults suit container ships.
#[derive(Debug, Clone, PartialEq)]
pub struct FutureOptions {
    /// Speed when neither a future ETA nor a recent speed is known.
    pub service_speed_knots: f64,
    /// Lower bound of every speed used.
    pub min_speed_knots: f64,
    /// Upper bound of every speed used.
    pub max_speed_knots: f64,
    /// Distance between points; widened when it would give more than `max_points`.
    pub spacing: Spacing,
    /// Most points returned, the arrival included. At least 1.
    pub max_points: usize,
    /// How far the vessel may be from the planned leg (previous port → destination)
    /// for the estimate to follow it rather than a fresh route from the vessel.
    pub on_leg_tolerance_km: f64,
    /// Passages to avoid.
    pub route: RouteOptions,
}

impl Default for FutureOptions {
    fn default() -> Self {
        Self {
            service_speed_knots: 14.0,
            min_speed_knots: 3.0,
            max_speed_knots: 25.0,
            // Hourly points keep a transpacific crossing to a few hundred points.
            spacing: Spacing::Time(TimeDelta::hours(1)),
            max_points: 1_000,
            on_leg_tolerance_km: 50.0,
            route: RouteOptions::default(),
        }
    }
}

/// Where the speed came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pacing {
    /// Remaining distance over the time left until the carrier's ETA.
    Eta,
    /// The vessel's recent speed over ground.
    ReportedSpeed,
    /// The service speed of the options.
    ServiceSpeed,
}

/// The estimate: positions and how they were paced.
#[derive(Debug, Clone, PartialEq)]
pub struct FuturePath {
    /// From the first point after the vessel's position to the destination, in time
    /// order; the last one is the destination at `arrival`.
    pub positions: Vec<FuturePosition>,
    /// Estimated arrival at the destination.
    pub arrival: DateTime<Utc>,
    /// The constant speed used, after clamping.
    pub speed_knots: f64,
    /// What the speed came from.
    pub pacing: Pacing,
    /// Whether the speed was clamped into the bounds of the options.
    pub clamped: bool,
    /// Distance left to sail, in km: the hop from the vessel onto the route plus the
    /// route from there.
    pub remaining_km: f64,
    /// The route followed: the positions lie on it, from `start_km` on.
    pub route: SeaRoute,
    /// Where on `route` the vessel joins it, in km from its start.
    pub start_km: f64,
}

/// Which input point a coordinate error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputPoint {
    /// The vessel's position.
    Position,
    /// The destination port.
    Destination,
    /// The previous port.
    PreviousPort,
}

/// Why no estimate was made.
#[derive(Debug, Clone, PartialEq)]
pub enum FutureError {
    /// A coordinate is NaN, infinite or out of range.
    InvalidCoordinate {
        /// Which one.
        point: InputPoint,
        /// The longitude given.
        lon: f64,
        /// The latitude given.
        lat: f64,
    },
    /// The sea network has no way from the vessel to the port with these options.
    NoRoute,
    /// The options are unusable; the text says which.
    InvalidOptions(&'static str),
}

impl fmt::Display for FutureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidCoordinate { point, lon, lat } => {
                let which = match point {
                    InputPoint::Position => "vessel position",
                    InputPoint::Destination => "destination",
                    InputPoint::PreviousPort => "previous port",
                };
                write!(f, "invalid {which} coordinate (lon {lon}, lat {lat})")
            }
            Self::NoRoute => f.write_str("no sea route from the vessel to the port"),
            Self::InvalidOptions(why) => write!(f, "invalid options: {why}"),
        }
    }
}

impl std::error::Error for FutureError {}

/// Estimated positions from the vessel to its next port, paced as the module says.
///
/// # Errors
///
/// [`FutureError::InvalidCoordinate`] for a bad coordinate, [`FutureError::NoRoute`]
/// when the avoided passages cut every way, [`FutureError::InvalidOptions`] for
/// non-positive or inverted speeds, a non-positive spacing or `max_points` of 0.
pub fn estimate_future_positions(
    router: &SeaRouter,
    request: &FutureRequest,
    options: &FutureOptions,
) -> Result<FuturePath, FutureError> {
    check_options(options)?;
    let joined = join_route(
        router,
        request.from,
        request.destination,
        request.previous_port,
        options.on_leg_tolerance_km,
        &options.route,
    )?;
    let remaining_km = joined.offset_km + (joined.route.length_km() - joined.start_km);

    let (raw_knots, pacing) = match request.eta {
        Some(eta) if eta > request.at => {
            let hours = seconds(eta - request.at) / 3600.0;
            (remaining_km / KM_PER_NM / hours, Pacing::Eta)
        }
        _ => match request.speed_knots {
            // A stopped or garbled speed says nothing about the passage ahead.
            Some(sog) if sog.is_finite() && sog > 0.0 => (sog, Pacing::ReportedSpeed),
            _ => (options.service_speed_knots, Pacing::ServiceSpeed),
        },
    };
    let speed_knots = raw_knots.clamp(options.min_speed_knots, options.max_speed_knots);
    let clamped = speed_knots != raw_knots;
    let kmh = speed_knots * KM_PER_NM;
    let after = |km: f64| request.at + delta_from_seconds((km / kmh * 3600.0).round());
    let arrival = match (pacing, request.eta) {
        // Exactly the carrier's time, not as rounded by the arithmetic.
        (Pacing::Eta, Some(eta)) if !clamped => eta,
        _ => after(remaining_km),
    };

    let nominal_km = match options.spacing {
        Spacing::Time(dt) => kmh * seconds(dt) / 3600.0,
        Spacing::DistanceKm(km) => km,
    };
    // Points at step, 2·step, … short of the end, then the end: widen the step when
    // that would exceed the bound.
    let widened = remaining_km / nominal_km > options.max_points as f64;
    let step_km = if widened {
        remaining_km / options.max_points as f64
    } else {
        nominal_km
    };
    // Unwidened time spacing gives exact multiples of the interval: round timestamps.
    let interval = match options.spacing {
        Spacing::Time(dt) if !widened => Some(dt),
        _ => None,
    };

    // The hop onto the route is not on it: spread the points over the route alone, at
    // the times of the whole distance, rather than piling some up where the hop lands.
    let route_share = if remaining_km > 0.0 {
        (joined.route.length_km() - joined.start_km) / remaining_km
    } else {
        0.0
    };
    let mut positions = Vec::with_capacity(
        options
            .max_points
            .min(1 + (remaining_km / step_km) as usize),
    );
    for k in 1..options.max_points {
        let travelled = step_km * k as f64;
        // A hair short of the end would only repeat the arrival point.
        if travelled >= remaining_km - 1e-6 {
            break;
        }
        let p = joined
            .route
            .point_at_km(joined.start_km + travelled * route_share);
        let timestamp = match interval {
            Some(dt) => request.at + dt * k as i32,
            None => after(travelled),
        };
        positions.push(FuturePosition {
            latitude: p.lat,
            longitude: p.lon,
            heading: p.heading,
            timestamp: timestamp.min(arrival),
            estimated: true,
        });
    }
    let end = joined.route.point_at_km(joined.route.length_km());
    positions.push(FuturePosition {
        latitude: end.lat,
        longitude: end.lon,
        heading: end.heading,
        timestamp: arrival,
        estimated: true,
    });

    Ok(FuturePath {
        positions,
        arrival,
        speed_knots,
        pacing,
        clamped,
        remaining_km,
        route: joined.route,
        start_km: joined.start_km,
    })
}

fn check_options(o: &FutureOptions) -> Result<(), FutureError> {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !positive(o.min_speed_knots) || !positive(o.max_speed_knots) {
        return Err(FutureError::InvalidOptions("speed bounds must be positive"));
    }
    if o.min_speed_knots > o.max_speed_knots {
        return Err(FutureError::InvalidOptions("minimum speed above maximum"));
    }
    if !positive(o.service_speed_knots) {
        return Err(FutureError::InvalidOptions(
            "service speed must be positive",
        ));
    }
    let spacing_ok = match o.spacing {
        Spacing::Time(dt) => dt > TimeDelta::zero(),
        Spacing::DistanceKm(km) => positive(km),
    };
    if !spacing_ok {
        return Err(FutureError::InvalidOptions("spacing must be positive"));
    }
    if o.max_points == 0 {
        return Err(FutureError::InvalidOptions("max_points must be at least 1"));
    }
    Ok(())
}

fn seconds(dt: TimeDelta) -> f64 {
    dt.num_milliseconds() as f64 / 1000.0
}

fn delta_from_seconds(s: f64) -> TimeDelta {
    // Far beyond any voyage; keeps the conversion in range for absurd inputs.
    TimeDelta::seconds(s.clamp(0.0, 1e12) as i64)
}

/// A route to the destination and where the vessel joins it.
#[derive(Debug, Clone)]
pub(crate) struct JoinedRoute {
    pub route: SeaRoute,
    /// Km along `route` where the vessel joins it.
    pub start_km: f64,
    /// Index of the route segment holding `start_km`.
    pub segment: usize,
    /// Straight distance from the vessel to that point.
    pub offset_km: f64,
}

/// The route the vessel will follow to `destination`: the planned leg from
/// `previous_port` when the vessel is within `tolerance_km` of it, else a route from the
/// vessel itself. Either way the vessel joins the route at its nearest point, so a
/// network node snapped behind the vessel does not send it back.
pub(crate) fn join_route(
    router: &SeaRouter,
    from: (f64, f64),
    destination: (f64, f64),
    previous_port: Option<(f64, f64)>,
    tolerance_km: f64,
    options: &RouteOptions,
) -> Result<JoinedRoute, FutureError> {
    checked(from, InputPoint::Position)?;
    checked(destination, InputPoint::Destination)?;
    if let Some(prev) = previous_port {
        checked(prev, InputPoint::PreviousPort)?;
        // No planned leg is no reason to give up: the direct route may still exist.
        if let Ok(leg) = router.route(prev, destination, options) {
            let (segment, start_km, offset_km) = nearest_on_route(&leg, [from.0, from.1], 0);
            if offset_km <= tolerance_km {
                return Ok(JoinedRoute {
                    route: leg,
                    start_km,
                    segment,
                    offset_km,
                });
            }
        }
    }
    let route = router
        .route(from, destination, options)
        .map_err(|e| match e {
            RouteError::InvalidCoordinate { lon, lat, .. } => FutureError::InvalidCoordinate {
                point: InputPoint::Position,
                lon,
                lat,
            },
            RouteError::NoRoute => FutureError::NoRoute,
        })?;
    let from = [from.0, from.1];
    // The first segment is the hop from the vessel to its snapped node: look past it,
    // and keep the hop only when nothing later is nearer.
    let hop_km = route
        .points()
        .get(1)
        .map_or(0.0, |&n| haversine_km(n, from));
    let (segment, start_km, offset_km) = nearest_on_route(&route, from, 1);
    // Float noise makes the snapped node itself look a hair nearer than the hop.
    if offset_km + 1e-6 < hop_km {
        Ok(JoinedRoute {
            route,
            start_km,
            segment,
            offset_km,
        })
    } else {
        Ok(JoinedRoute {
            start_km: 0.0,
            segment: 0,
            offset_km: 0.0,
            route,
        })
    }
}

fn checked((lon, lat): (f64, f64), point: InputPoint) -> Result<(), FutureError> {
    if (-180.0..=180.0).contains(&lon) && (-90.0..=90.0).contains(&lat) {
        Ok(())
    } else {
        Err(FutureError::InvalidCoordinate { point, lon, lat })
    }
}

/// The point of `route` nearest to `p`, looking at segments from `first_segment` on:
/// `(segment index, km along the route, distance from p in km)`. A route of one point
/// (or fewer segments than skipped) gives its end.
pub(crate) fn nearest_on_route(
    route: &SeaRoute,
    p: [f64; 2],
    first_segment: usize,
) -> (usize, f64, f64) {
    let points = route.points();
    let mut best = (
        points.len().saturating_sub(1),
        route.length_km(),
        points.last().map_or(f64::INFINITY, |&q| haversine_km(q, p)),
    );
    let mut cumulative = 0.0;
    for (i, w) in points.windows(2).enumerate() {
        let segment_km = haversine_km(w[0], w[1]);
        if i >= first_segment {
            let (distance, along) = project_on_segment(w[0], w[1], p);
            if distance < best.2 {
                best = (i, cumulative + along.min(segment_km), distance);
            }
        }
        cumulative += segment_km;
    }
    // Keep the km within the route despite rounding in the sums.
    best.1 = best.1.min(route.length_km());
    best
}

/// Distance in km from `p` to the great-circle segment `a`→`b`, and how far along the
/// segment (km from `a`) its nearest point lies.
pub(crate) fn project_on_segment(a: [f64; 2], b: [f64; 2], p: [f64; 2]) -> (f64, f64) {
    let (ua, ub, up) = (unit(a), unit(b), unit(p));
    let n = cross(ua, ub);
    let sin_ab = norm(n);
    let ab = sin_ab.atan2(dot(ua, ub));
    let to_a = angle(ua, up);
    if sin_ab < 1e-12 {
        return (to_a * EARTH_RADIUS_KM, 0.0);
    }
    let n = scale(n, 1.0 / sin_ab);
    let off_plane = dot(up, n);
    // p's foot on the great circle through a and b (unnormalised: atan2 ignores scale).
    let foot = [
        up[0] - off_plane * n[0],
        up[1] - off_plane * n[1],
        up[2] - off_plane * n[2],
    ];
    let along = dot(cross(ua, foot), n).atan2(dot(ua, foot));
    if norm(foot) > 1e-12 && (0.0..=ab).contains(&along) {
        let distance = off_plane.clamp(-1.0, 1.0).asin().abs();
        return (distance * EARTH_RADIUS_KM, along * EARTH_RADIUS_KM);
    }
    let to_b = angle(ub, up);
    if to_a <= to_b {
        (to_a * EARTH_RADIUS_KM, 0.0)
    } else {
        (to_b * EARTH_RADIUS_KM, ab * EARTH_RADIUS_KM)
    }
}

fn unit(p: [f64; 2]) -> [f64; 3] {
    let (lon, lat) = (p[0].to_radians(), p[1].to_radians());
    [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

fn scale(a: [f64; 3], k: f64) -> [f64; 3] {
    [a[0] * k, a[1] * k, a[2] * k]
}

/// Angle between two unit vectors, accurate for small and large angles alike.
fn angle(a: [f64; 3], b: [f64; 3]) -> f64 {
    norm(cross(a, b)).atan2(dot(a, b))
}

#[cfg(test)]
mod tests;
