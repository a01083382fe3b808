//! A computed sea route and positions along it.

use super::geodesy::{
    KM_PER_NM, final_bearing, haversine_km, initial_bearing, intermediate_point,
    normalize_longitude,
};
use super::passage::Passage;

/// A route from one point to another over the maritime network.
#[derive(Debug, Clone, PartialEq)]
pub struct SeaRoute {
    points: Vec<[f64; 2]>,
    /// `cumulative_km[i]` is the distance from the start to `points[i]`.
    cumulative_km: Vec<f64>,
    passages: Vec<Passage>,
}

/// A position along a route with the course steered there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoutePosition {
    /// Longitude in degrees, within `[-180, 180]`.
    pub lon: f64,
    /// Latitude in degrees.
    pub lat: f64,
    /// Course over ground in degrees clockwise from true north, in `[0, 360)`.
    pub heading: f64,
}

impl SeaRoute {
    /// Builds a route from its polyline (consecutive longitudes already unwrapped) and
    /// the passages it goes through.
    pub(crate) fn new(points: Vec<[f64; 2]>, passages: Vec<Passage>) -> Self {
        let mut cumulative_km = Vec::with_capacity(points.len());
        let mut total = 0.0;
        let mut prev: Option<[f64; 2]> = None;
        for &p in &points {
            if let Some(q) = prev {
                total += haversine_km(q, p);
            }
            cumulative_km.push(total);
            prev = Some(p);
        }
        Self {
            points,
            cumulative_km,
            passages,
        }
    }

    /// The polyline as `[lon, lat]` pairs in degrees, from start to end.
    ///
    /// Longitudes are continuous: each lies within 180° of the one before, so a route
    /// across the Pacific goes beyond ±180° instead of jumping across the map (web maps
    /// draw such lines correctly). The first point is within `[-180, 180]`. Use
    /// [`SeaRoute::split_at_antimeridian`] for consumers that need wrapped longitudes.
    #[must_use]
    pub fn points(&self) -> &[[f64; 2]] {
        &self.points
    }

    /// The polyline, as [`SeaRoute::points`] describes it.
    #[must_use]
    pub fn into_points(self) -> Vec<[f64; 2]> {
        self.points
    }

    /// Length in kilometres (great-circle segments on a sphere of radius 6371.0088 km).
    #[must_use]
    pub fn length_km(&self) -> f64 {
        self.cumulative_km.last().copied().unwrap_or(0.0)
    }

    /// Length in nautical miles.
    #[must_use]
    pub fn length_nm(&self) -> f64 {
        self.length_km() / KM_PER_NM
    }

    /// The named passages the route goes through, in order of travel, each once.
    #[must_use]
    pub fn passages(&self) -> &[Passage] {
        &self.passages
    }

    /// The position `km` kilometres from the start along the route, with the heading
    /// there. `km` is clamped to the route; NaN counts as 0. On a route of zero length
    /// the heading is 0.
    #[must_use]
    pub fn point_at_km(&self, km: f64) -> RoutePosition {
        let total = self.length_km();
        let km = if km.is_nan() {
            0.0
        } else {
            km.clamp(0.0, total)
        };
        // The last point at or before km; the segment after it then ends beyond km, so
        // it has a length, unless km is the end of the route.
        let seg = self
            .cumulative_km
            .partition_point(|&c| c <= km)
            .saturating_sub(1);
        if seg + 1 >= self.points.len() {
            // km is at the very end: report the arrival course of the last real segment.
            return self.end_position();
        }
        let (a, b) = (self.points[seg], self.points[seg + 1]);
        let seg_km = self.segment_km(seg);
        if seg_km <= 0.0 {
            return self.end_position();
        }
        let t = ((km - self.cumulative_km[seg]) / seg_km).clamp(0.0, 1.0);
        let p = intermediate_point(a, b, seg_km, t);
        let heading = if t >= 1.0 {
            final_bearing(a, b)
        } else {
            initial_bearing(p, b)
        };
        RoutePosition {
            lon: normalize_longitude(p[0]),
            lat: p[1],
            heading,
        }
    }

    /// The position at `fraction` (0 = start, 1 = end) of the route's length, clamped.
    #[must_use]
    pub fn point_at_fraction(&self, fraction: f64) -> RoutePosition {
        self.point_at_km(fraction * self.length_km())
    }

    /// The polyline cut where it crosses ±180°, each part with longitudes in
    /// `[-180, 180]`, for GeoJSON `MultiLineString`s (RFC 7946 §3.1.9). Where the
    /// polyline has only one point, so has the one part.
    #[must_use]
    pub fn split_at_antimeridian(&self) -> Vec<Vec<[f64; 2]>> {
        // Band k holds longitudes [360k − 180, 360k + 180); consecutive points are less
        // than 180° apart, so they lie in the same band or in neighbouring ones.
        let band = |lon: f64| ((lon + 180.0) / 360.0).floor();
        let wrap = |p: [f64; 2]| [p[0] - 360.0 * band(p[0]), p[1]];
        let mut parts: Vec<Vec<[f64; 2]>> = Vec::new();
        let mut current: Vec<[f64; 2]> = Vec::new();
        let push = |part: &mut Vec<[f64; 2]>, p: [f64; 2]| {
            if part.last() != Some(&p) {
                part.push(p);
            }
        };
        for (i, &p) in self.points.iter().enumerate() {
            if let Some(&q) = i.checked_sub(1).and_then(|i| self.points.get(i)) {
                let (bq, bp) = (band(q[0]), band(p[0]));
                if bq != bp {
                    // Cut where the segment meets the boundary, latitude linear in
                    // longitude: segments are short that far from land in this network.
                    let east = bp > bq;
                    let boundary = bq * 360.0 + if east { 180.0 } else { -180.0 };
                    let t = (boundary - q[0]) / (p[0] - q[0]);
                    let lat = q[1] + t * (p[1] - q[1]);
                    let side = if east { 180.0 } else { -180.0 };
                    push(&mut current, [side, lat]);
                    parts.push(std::mem::take(&mut current));
                    push(&mut current, [-side, lat]);
                }
            }
            push(&mut current, wrap(p));
        }
        parts.push(current);
        // A part can shrink to one point when the route ends on the boundary.
        if parts.len() > 1 {
            parts.retain(|part| part.len() > 1);
        }
        parts
    }

    fn segment_km(&self, i: usize) -> f64 {
        self.cumulative_km[i + 1] - self.cumulative_km[i]
    }

    fn end_position(&self) -> RoutePosition {
        let last = self.points.len().saturating_sub(1);
        let end = self.points.get(last).copied().unwrap_or([0.0, 0.0]);
        let heading = (0..last)
            .rev()
            .find(|&i| self.segment_km(i) > 0.0)
            .map_or(0.0, |i| final_bearing(self.points[i], self.points[i + 1]));
        RoutePosition {
            lon: normalize_longitude(end[0]),
            lat: end[1],
            heading,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    fn equator_route() -> SeaRoute {
        SeaRoute::new(vec![[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]], vec![])
    }

    #[test]
    fn the_length_is_the_sum_of_the_great_circle_segments() {
        let route = equator_route();
        let expected =
            haversine_km([0.0, 0.0], [10.0, 0.0]) + haversine_km([10.0, 0.0], [10.0, 10.0]);
        assert!(close(route.length_km(), expected, 1e-9));
        assert!(close(route.length_nm(), expected / 1.852, 1e-9));
    }

    #[test]
    fn the_point_halfway_along_the_first_leg_heads_east() {
        let route = equator_route();
        let leg = haversine_km([0.0, 0.0], [10.0, 0.0]);
        let p = route.point_at_km(leg / 2.0);
        assert!(close(p.lon, 5.0, 1e-9) && close(p.lat, 0.0, 1e-9), "{p:?}");
        assert!(close(p.heading, 90.0, 1e-9));
    }

    #[test]
    fn a_point_on_the_second_leg_heads_north() {
        let route = equator_route();
        let p = route.point_at_fraction(0.75);
        assert!(close(p.lon, 10.0, 1e-9), "{p:?}");
        assert!(close(p.heading, 0.0, 1e-9) || close(p.heading, 360.0, 1e-9));
    }

    #[test]
    fn positions_beyond_the_ends_clamp_to_the_ends() {
        let route = equator_route();
        let start = route.point_at_km(-5.0);
        assert_eq!((start.lon, start.lat), (0.0, 0.0));
        assert!(close(start.heading, 90.0, 1e-9));
        let end = route.point_at_km(1e9);
        assert_eq!((end.lon, end.lat), (10.0, 10.0));
        assert!(close(end.heading, 0.0, 1e-9));
        let nan = route.point_at_km(f64::NAN);
        assert_eq!((nan.lon, nan.lat), (0.0, 0.0));
    }

    #[test]
    fn repeated_points_do_not_break_interpolation() {
        let route = SeaRoute::new(vec![[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [1.0, 0.0]], vec![]);
        let p = route.point_at_fraction(0.0);
        assert!(close(p.heading, 90.0, 1e-9), "{p:?}");
        let end = route.point_at_fraction(1.0);
        assert!(close(end.lon, 1.0, 1e-12) && close(end.heading, 90.0, 1e-9));
    }

    #[test]
    fn a_single_point_route_has_zero_length_and_heading() {
        let route = SeaRoute::new(vec![[3.0, 4.0]], vec![]);
        assert_eq!(route.length_km(), 0.0);
        assert_eq!(
            route.point_at_fraction(0.5),
            RoutePosition {
                lon: 3.0,
                lat: 4.0,
                heading: 0.0
            }
        );
    }

    #[test]
    fn positions_past_the_antimeridian_are_reported_with_wrapped_longitudes() {
        let route = SeaRoute::new(vec![[170.0, 0.0], [190.0, 0.0]], vec![]);
        let p = route.point_at_fraction(0.75);
        assert!(close(p.lon, -175.0, 1e-9), "{p:?}");
    }

    #[test]
    fn splitting_at_the_antimeridian_cuts_where_the_line_crosses_180() {
        let route = SeaRoute::new(vec![[170.0, 0.0], [190.0, 10.0], [200.0, 10.0]], vec![]);
        let parts = route.split_at_antimeridian();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], vec![[170.0, 0.0], [180.0, 5.0]]);
        assert_eq!(
            parts[1],
            vec![[-180.0, 5.0], [-170.0, 10.0], [-160.0, 10.0]]
        );
    }

    #[test]
    fn splitting_a_westward_crossing_starts_the_next_part_at_180() {
        let route = SeaRoute::new(vec![[-170.0, 0.0], [-190.0, 10.0]], vec![]);
        let parts = route.split_at_antimeridian();
        assert_eq!(
            parts,
            vec![
                vec![[-170.0, 0.0], [-180.0, 5.0]],
                vec![[180.0, 5.0], [170.0, 10.0]]
            ]
        );
    }

    #[test]
    fn points_exactly_on_the_antimeridian_do_not_draw_across_the_map() {
        let route = SeaRoute::new(
            vec![
                [179.0, 0.0],
                [180.0, 1.0],
                [181.0, 2.0],
                [180.0, 3.0],
                [179.0, 4.0],
            ],
            vec![],
        );
        let parts = route.split_at_antimeridian();
        assert_eq!(
            parts,
            vec![
                vec![[179.0, 0.0], [180.0, 1.0]],
                vec![[-180.0, 1.0], [-179.0, 2.0], [-180.0, 3.0]],
                vec![[180.0, 3.0], [179.0, 4.0]],
            ]
        );
        for part in &parts {
            for w in part.windows(2) {
                assert!((w[1][0] - w[0][0]).abs() < 180.0, "{parts:?}");
            }
        }
    }

    #[test]
    fn a_route_ending_on_the_antimeridian_leaves_no_one_point_part() {
        let route = SeaRoute::new(vec![[170.0, 0.0], [180.0, 0.0]], vec![]);
        assert_eq!(
            route.split_at_antimeridian(),
            vec![vec![[170.0, 0.0], [180.0, 0.0]]]
        );
    }

    #[test]
    fn a_route_that_stays_on_one_side_is_one_part() {
        assert_eq!(equator_route().split_at_antimeridian().len(), 1);
    }
}
