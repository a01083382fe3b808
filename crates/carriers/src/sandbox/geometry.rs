//! The shape of a sea leg: how far it is and where along it a vessel is.
//!
//! Legs are great circles for now. Everything the generator needs from a leg's geometry goes
//! through [`sea_path`], so following the maritime network instead is a change to this file
//! alone.

use super::SandboxPort;

/// Mean Earth radius in nautical miles.
const EARTH_RADIUS_NM: f64 = 3_440.065;

/// The path a vessel follows between two ports.
#[derive(Clone, Debug)]
pub(crate) struct SeaPath {
    from: (f64, f64),
    to: (f64, f64),
    /// Central angle between the two ends, in radians.
    angle: f64,
}

/// A point on a path and the course there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PathPoint {
    pub latitude: f64,
    pub longitude: f64,
    /// True course over ground, 0 to 360 degrees clockwise from north.
    pub heading_degrees: f64,
}

/// The path from one port to another.
pub(crate) fn sea_path(from: &SandboxPort, to: &SandboxPort) -> SeaPath {
    let a = (from.latitude.to_radians(), from.longitude.to_radians());
    let b = (to.latitude.to_radians(), to.longitude.to_radians());
    // Haversine, which stays accurate for short distances.
    let h = ((b.0 - a.0) / 2.0).sin().powi(2)
        + a.0.cos() * b.0.cos() * ((b.1 - a.1) / 2.0).sin().powi(2);
    let angle = 2.0 * h.sqrt().min(1.0).asin();
    SeaPath {
        from: a,
        to: b,
        angle,
    }
}

impl SeaPath {
    /// The length of the path in nautical miles.
    pub(crate) fn length_nm(&self) -> f64 {
        self.angle * EARTH_RADIUS_NM
    }

    /// The point at `fraction` (0 at the start, 1 at the end) of the path.
    pub(crate) fn point_at(&self, fraction: f64) -> PathPoint {
        let f = fraction.clamp(0.0, 1.0);
        let (lat, lon) = if self.angle < 1e-9 {
            self.from
        } else {
            // Spherical linear interpolation between the two ends.
            let sin_angle = self.angle.sin();
            let wa = ((1.0 - f) * self.angle).sin() / sin_angle;
            let wb = (f * self.angle).sin() / sin_angle;
            let x =
                wa * self.from.0.cos() * self.from.1.cos() + wb * self.to.0.cos() * self.to.1.cos();
            let y =
                wa * self.from.0.cos() * self.from.1.sin() + wb * self.to.0.cos() * self.to.1.sin();
            let z = wa * self.from.0.sin() + wb * self.to.0.sin();
            (z.atan2(x.hypot(y)), y.atan2(x))
        };
        // The course is the initial bearing from here towards the end of the leg.
        let (to_lat, to_lon) = self.to;
        let d_lon = to_lon - lon;
        let bearing = (d_lon.sin() * to_lat.cos())
            .atan2(lat.cos() * to_lat.sin() - lat.sin() * to_lat.cos() * d_lon.cos());
        PathPoint {
            latitude: lat.to_degrees(),
            longitude: lon.to_degrees(),
            heading_degrees: bearing.to_degrees().rem_euclid(360.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(locode: &str, latitude: f64, longitude: f64) -> SandboxPort {
        SandboxPort {
            locode: locode.to_owned(),
            latitude,
            longitude,
            terminals: Vec::new(),
        }
    }

    #[test]
    fn shanghai_to_los_angeles_is_about_5_700_nautical_miles() {
        let path = sea_path(&port("CNSHA", 31.4, 121.5), &port("USLAX", 33.72, -118.28));

        let length = path.length_nm();

        assert!((5_500.0..5_900.0).contains(&length), "{length}");
    }

    #[test]
    fn the_ends_of_a_path_are_its_ports_and_the_middle_lies_between() {
        let path = sea_path(&port("SGSIN", 1.24, 103.83), &port("LKCMB", 6.93, 79.85));

        let start = path.point_at(0.0);
        let end = path.point_at(1.0);
        let middle = path.point_at(0.5);

        assert!((start.latitude - 1.24).abs() < 1e-6 && (start.longitude - 103.83).abs() < 1e-6);
        assert!((end.latitude - 6.93).abs() < 1e-6 && (end.longitude - 79.85).abs() < 1e-6);
        assert!(middle.longitude < 103.83 && middle.longitude > 79.85);
        // Westbound, slightly north.
        assert!(
            (270.0..300.0).contains(&middle.heading_degrees),
            "{middle:?}"
        );
    }
}
