//! Great-circle arithmetic on a spherical Earth.

/// Mean Earth radius in km (IUGG), the one searoute-py uses, so lengths compare.
pub const EARTH_RADIUS_KM: f64 = 6371.0088;

/// Kilometres per international nautical mile.
pub const KM_PER_NM: f64 = 1.852;

/// Great-circle distance in km between two `[lon, lat]` points in degrees (haversine).
/// Longitudes may differ by any multiple of 360°.
#[must_use]
pub fn haversine_km(a: [f64; 2], b: [f64; 2]) -> f64 {
    let (lat1, lat2) = (a[1].to_radians(), b[1].to_radians());
    let dlat = lat2 - lat1;
    let dlon = (b[0] - a[0]).to_radians();
    let h = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_KM * h.sqrt().atan2((1.0 - h).max(0.0).sqrt())
}

/// Unit vector of a `[lon, lat]` point in degrees.
#[must_use]
pub fn unit_vector(p: [f64; 2]) -> [f64; 3] {
    let (lon, lat) = (p[0].to_radians(), p[1].to_radians());
    [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
}

/// Great-circle distance in km between two unit vectors, via the chord length
/// (cheaper than haversine: one square root and one arcsine).
#[must_use]
pub fn chord_km(a: [f64; 3], b: [f64; 3]) -> f64 {
    let (dx, dy, dz) = (a[0] - b[0], a[1] - b[1], a[2] - b[2]);
    let half_chord = (dx * dx + dy * dy + dz * dz).sqrt() / 2.0;
    2.0 * EARTH_RADIUS_KM * half_chord.min(1.0).asin()
}

/// Initial bearing in degrees clockwise from north, in `[0, 360)`, of the great circle
/// from `a` to `b`.
#[must_use]
pub fn initial_bearing(a: [f64; 2], b: [f64; 2]) -> f64 {
    let (lat1, lat2) = (a[1].to_radians(), b[1].to_radians());
    let dlon = (b[0] - a[0]).to_radians();
    let y = dlon.sin() * lat2.cos();
    let x = lat1.cos() * lat2.sin() - lat1.sin() * lat2.cos() * dlon.cos();
    normalize_bearing(y.atan2(x).to_degrees())
}

/// Bearing in degrees at which the great circle from `a` arrives at `b`.
#[must_use]
pub fn final_bearing(a: [f64; 2], b: [f64; 2]) -> f64 {
    normalize_bearing(initial_bearing(b, a) + 180.0)
}

/// The point at fraction `t` (0 → `a`, 1 → `b`) of the great circle from `a` to `b`,
/// whose length is `distance_km`. The longitude is kept within 180° of `a`'s.
#[must_use]
pub fn intermediate_point(a: [f64; 2], b: [f64; 2], distance_km: f64, t: f64) -> [f64; 2] {
    let delta = distance_km / EARTH_RADIUS_KM;
    // The ends exactly, not as rounded by the interpolation.
    if delta < 1e-12 || t <= 0.0 {
        return a;
    }
    if t >= 1.0 {
        return [unwrap_longitude(a[0], b[0]), b[1]];
    }
    // Spherical linear interpolation of the two unit vectors.
    let (ua, ub) = (unit_vector(a), unit_vector(b));
    let sin_delta = delta.sin();
    let wa = ((1.0 - t) * delta).sin() / sin_delta;
    let wb = (t * delta).sin() / sin_delta;
    let v = [
        wa * ua[0] + wb * ub[0],
        wa * ua[1] + wb * ub[1],
        wa * ua[2] + wb * ub[2],
    ];
    let lat = v[2].atan2(v[0].hypot(v[1])).to_degrees();
    let lon = v[1].atan2(v[0]).to_degrees();
    [unwrap_longitude(a[0], lon), lat]
}

/// `lon` shifted by a multiple of 360° to lie within 180° of `reference`.
#[must_use]
pub fn unwrap_longitude(reference: f64, lon: f64) -> f64 {
    let mut lon = lon;
    while lon - reference > 180.0 {
        lon -= 360.0;
    }
    while lon - reference < -180.0 {
        lon += 360.0;
    }
    lon
}

/// `lon` brought into `[-180, 180]`.
#[must_use]
pub fn normalize_longitude(lon: f64) -> f64 {
    if (-180.0..=180.0).contains(&lon) {
        lon
    } else {
        (lon + 180.0).rem_euclid(360.0) - 180.0
    }
}

fn normalize_bearing(deg: f64) -> f64 {
    let b = deg.rem_euclid(360.0);
    // rem_euclid can round up to exactly 360 for tiny negative inputs.
    if b >= 360.0 { 0.0 } else { b }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn one_degree_of_latitude_is_about_111_km() {
        assert!(close(haversine_km([0.0, 0.0], [0.0, 1.0]), 111.195, 0.01));
    }

    #[test]
    fn haversine_ignores_whole_turns_of_longitude() {
        let d1 = haversine_km([179.0, 10.0], [-179.0, 10.0]);
        let d2 = haversine_km([179.0, 10.0], [181.0, 10.0]);
        assert!(close(d1, d2, 1e-9));
        assert!(d1 < 250.0);
    }

    #[test]
    fn chord_distance_equals_haversine_distance() {
        let (a, b) = ([4.0, 51.9], [121.5, 31.2]);
        let chord = chord_km(unit_vector(a), unit_vector(b));
        assert!(close(chord, haversine_km(a, b), 1e-6));
    }

    #[test]
    fn bearing_due_east_on_the_equator_is_90() {
        assert!(close(initial_bearing([0.0, 0.0], [10.0, 0.0]), 90.0, 1e-9));
        assert!(close(final_bearing([0.0, 0.0], [10.0, 0.0]), 90.0, 1e-9));
        assert!(close(initial_bearing([0.0, 0.0], [0.0, -5.0]), 180.0, 1e-9));
    }

    #[test]
    fn the_midpoint_across_the_antimeridian_stays_near_the_start() {
        let (a, b) = ([179.0, 0.0], [-179.0, 0.0]);
        let mid = intermediate_point(a, b, haversine_km(a, b), 0.5);
        assert!(close(mid[0], 180.0, 1e-9), "{mid:?}");
        assert!(close(mid[1], 0.0, 1e-9));
    }

    #[test]
    fn longitudes_normalize_into_the_usual_range() {
        assert!(close(normalize_longitude(190.0), -170.0, 1e-12));
        assert!(close(normalize_longitude(-190.0), 170.0, 1e-12));
        assert!(close(normalize_longitude(180.0), 180.0, 1e-12));
        assert!(close(unwrap_longitude(170.0, -170.0), 190.0, 1e-12));
    }
}
