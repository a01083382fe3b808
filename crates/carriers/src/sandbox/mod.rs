//! The sandbox carrier (SCAC `TEST`): made-up voyages for numbers starting with `TEST`, served
//! over DCSA Track & Trace 2.2 and 3.0 like a real carrier (DESIGN.md §5).
//!
//! A voyage is a pure function of the number and an *epoch* (when tracking started): the
//! number picks, through SHA-256, the ports, vessels, containers, delays and the voyage's
//! phase; the epoch places the timeline in time. What the carrier reveals is a function of
//! `now`: events up to now, estimates after. So a voyage survives restarts and unfolds as the
//! clock moves, with no state anywhere.
//!
//! - `TEST-TR-FAILED` is not found; `TEST-TR-SUCCEEDED` and every other number of 6 or more
//!   characters starting with `TEST` (any case) has a voyage. Other numbers are not found.
//!   `TEST-TR-SUCCEEDED` always shows a transshipment, a vessel at sea and a slipping
//!   estimate; other numbers show what their hash gives.
//! - Ports come from a curated list of major container ports, restricted to those in the port
//!   list the caller injects (this crate does not depend on the geo crate).
//! - The sandbox serves bill of lading and booking numbers (the same voyage for both). Its
//!   container numbers are minted from a hash and cannot be traced back to a voyage, so an
//!   `equipmentReference` query only narrows a bill of lading or booking query down to one
//!   container; alone it finds nothing.

mod geometry;
mod server;
mod voyage;

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::carrier::ReferenceKind;

pub use server::router;
pub use voyage::{
    DcsaDocumentReference, DcsaEvent, DcsaTransportCall, DcsaVessel, SandboxContainer, SeaLeg,
    Vessel, VesselPosition, Voyage,
};

/// The number whose tracking fails with `not_found`, as Terminal49's test number does.
pub const FAILING_NUMBER: &str = "TEST-TR-FAILED";

/// The number people try first, as on Terminal49. Its voyage shows everything: it changes
/// vessel at a hub, its vessel is at sea shortly after tracking starts, and its arrival
/// estimate slips.
pub const SHOWCASE_NUMBER: &str = "TEST-TR-SUCCEEDED";

/// The sandbox carrier's SCAC.
pub const SCAC: &str = "TEST";

/// A port the sandbox may route through, with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct SandboxPort {
    /// UN/LOCODE, such as `NLRTM`.
    pub locode: String,
    /// Latitude in decimal degrees (WGS 84).
    pub latitude: f64,
    /// Longitude in decimal degrees (WGS 84).
    pub longitude: f64,
    /// The port's container terminals, when known: voyages call at one of them and name it
    /// in their events.
    pub terminals: Vec<SandboxTerminal>,
}

/// A container terminal of a [`SandboxPort`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxTerminal {
    pub name: String,
    /// Its SMDG terminal code, when known: events then name the terminal by code (DCSA
    /// `facilityCode` from the SMDG list), as carriers do, and by name (`otherFacility`)
    /// only when it has none.
    pub smdg_code: Option<String>,
}

/// The voyage generator. Cheap to share: it holds only the usable ports.
#[derive(Clone, Debug)]
pub struct Sandbox {
    ports: Vec<SandboxPort>,
}

/// A trade lane: where voyages start, where they end, and where they change vessel.
struct Lane {
    /// The first letters of the lane's voyages' service codes.
    service: &'static str,
    one_end: &'static [&'static str],
    other_end: &'static [&'static str],
    hubs: &'static [&'static str],
}

const ASIA: &[&str] = &[
    "CNSHA", "CNNGB", "CNYTN", "CNTAO", "HKHKG", "KRPUS", "TWKHH", "VNSGN", "THLCH",
];
const NORTH_EUROPE: &[&str] = &["NLRTM", "BEANR", "DEHAM", "GBFXT", "FRLEH"];
const MEDITERRANEAN: &[&str] = &["ESVLC", "ITGOA", "GRPIR"];
const US_WEST: &[&str] = &["USLAX", "USLGB", "USOAK", "USSEA"];
const US_EAST: &[&str] = &["USNYC", "USSAV", "USHOU", "USCHS"];
const MIDDLE_EAST_INDIA: &[&str] = &["AEJEA", "INNSA"];

/// The lanes, each with hubs that lie roughly on the way, so that a transshipment looks
/// plausible on a map.
const LANES: &[Lane] = &[
    Lane {
        service: "AE",
        one_end: ASIA,
        other_end: NORTH_EUROPE,
        hubs: &["SGSIN", "MYPKG", "MYTPP", "LKCMB", "EGPSD", "ESALG"],
    },
    Lane {
        service: "MD",
        one_end: ASIA,
        other_end: MEDITERRANEAN,
        hubs: &["SGSIN", "MYTPP", "LKCMB", "AEJEA", "EGPSD"],
    },
    Lane {
        service: "TP",
        one_end: ASIA,
        other_end: US_WEST,
        hubs: &["KRPUS", "JPTYO", "TWKHH"],
    },
    Lane {
        service: "AC",
        one_end: ASIA,
        other_end: US_EAST,
        hubs: &["PABLB", "PAMIT", "PAONX"],
    },
    Lane {
        service: "TA",
        one_end: NORTH_EUROPE,
        other_end: US_EAST,
        hubs: &["ESALG", "ESVLC"],
    },
    Lane {
        service: "ME",
        one_end: ASIA,
        other_end: MIDDLE_EAST_INDIA,
        hubs: &["SGSIN", "MYPKG", "LKCMB"],
    },
];

/// Every port the sandbox may use: the lanes' ends and hubs.
fn curated_locodes() -> impl Iterator<Item = &'static str> {
    LANES
        .iter()
        .flat_map(|lane| [lane.one_end, lane.other_end, lane.hubs])
        .flatten()
        .copied()
}

/// Approximate positions of the curated ports, for tests and for running the sandbox without
/// the port table. The server injects the real table instead, so that every port a voyage
/// names is one Tidemark knows.
pub fn builtin_ports() -> Vec<SandboxPort> {
    const TABLE: &[(&str, f64, f64)] = &[
        ("AEJEA", 25.02, 55.05),
        ("BEANR", 51.20, 4.38),
        ("CNNGB", 29.87, 121.56),
        ("CNSHA", 31.40, 121.50),
        ("CNTAO", 36.06, 120.39),
        ("CNYTN", 22.58, 114.29),
        ("DEHAM", 53.55, 9.97),
        ("EGPSD", 31.27, 32.29),
        ("ESALG", 36.14, -5.44),
        ("ESVLC", 39.45, -0.33),
        ("FRLEH", 49.49, 0.11),
        ("GBFXT", 51.96, 1.34),
        ("GRPIR", 37.95, 23.64),
        ("HKHKG", 22.29, 114.17),
        ("INNSA", 18.97, 72.93),
        ("ITGOA", 44.41, 8.92),
        ("JPTYO", 35.65, 139.79),
        ("KRPUS", 35.10, 129.04),
        ("LKCMB", 6.93, 79.85),
        ("MYPKG", 3.00, 101.38),
        ("MYTPP", 1.36, 103.55),
        ("NLRTM", 51.90, 4.44),
        ("PABLB", 8.94, -79.55),
        ("PAMIT", 9.61, -79.60),
        ("PAONX", 9.37, -79.89),
        ("SGSIN", 1.24, 103.83),
        ("THLCH", 13.08, 100.88),
        ("TWKHH", 22.64, 120.27),
        ("USCHS", 32.78, -79.93),
        ("USHOU", 29.75, -95.29),
        ("USLAX", 33.72, -118.28),
        ("USLGB", 33.74, -118.19),
        ("USNYC", 40.71, -74.02),
        ("USOAK", 37.83, -122.29),
        ("USSAV", 32.09, -81.10),
        ("USSEA", 47.60, -122.33),
        ("VNSGN", 10.83, 106.75),
    ];
    TABLE
        .iter()
        .map(|&(locode, latitude, longitude)| SandboxPort {
            locode: locode.to_owned(),
            latitude,
            longitude,
            terminals: Vec::new(),
        })
        .collect()
}

/// A port of lading, an optional hub and a port of discharge.
struct Route {
    ports: Vec<SandboxPort>,
    service_code: String,
}

impl Sandbox {
    /// A sandbox that routes voyages through the curated ports found in `ports` (matched by
    /// UN/LOCODE); the others are ignored, and curated ports missing from `ports` are skipped.
    pub fn new(ports: Vec<SandboxPort>) -> Self {
        let mut usable: Vec<SandboxPort> = Vec::new();
        for mut port in ports {
            port.locode = port.locode.trim().to_ascii_uppercase();
            let curated = curated_locodes().any(|locode| locode == port.locode);
            let valid = port.latitude.is_finite() && port.longitude.is_finite();
            if curated && valid && usable.iter().all(|known| known.locode != port.locode) {
                usable.push(port);
            }
        }
        usable.sort_by(|a, b| a.locode.cmp(&b.locode));
        Self { ports: usable }
    }

    /// The ports voyages may use. With fewer than two, no voyage can be built and every
    /// number is not found, which the caller may want to check at startup.
    pub fn ports(&self) -> &[SandboxPort] {
        &self.ports
    }

    /// The voyage of a bill of lading or booking number, for tracking that started at
    /// `epoch`; `None` when the sandbox does not know the number.
    pub fn voyage(&self, number: &str, epoch: DateTime<Utc>) -> Option<Voyage> {
        let number = normalize_number(number)?;
        let draws = Draws::new(&number);
        let route = self.route(&draws)?;
        Some(voyage::build(
            number,
            route.ports,
            route.service_code,
            &draws,
            epoch,
        ))
    }

    /// The voyage a DCSA reference points at. Bill of lading and booking numbers are the
    /// same number in the sandbox; container numbers cannot be traced back to a voyage (see
    /// the module documentation), so they find nothing.
    pub fn voyage_for_reference(
        &self,
        kind: ReferenceKind,
        reference: &str,
        epoch: DateTime<Utc>,
    ) -> Option<Voyage> {
        match kind {
            ReferenceKind::BillOfLading | ReferenceKind::Booking => self.voyage(reference, epoch),
            ReferenceKind::Equipment => None,
        }
    }

    fn port(&self, locode: &str) -> Option<&SandboxPort> {
        self.ports.iter().find(|port| port.locode == locode)
    }

    /// Picks a lane, its direction, the two ends and maybe a hub. Lanes whose ends are all
    /// missing from the port list are passed over.
    fn route(&self, draws: &Draws) -> Option<Route> {
        let first_lane = draws.below("lane", LANES.len() as u64) as usize;
        // Seven in ten voyages run from the lane's first end, as exports from Asia dominate.
        let forward = draws.below("direction", 10) < 7;
        for offset in 0..LANES.len() {
            let lane = &LANES[(first_lane + offset) % LANES.len()];
            let (from, to) = if forward {
                (lane.one_end, lane.other_end)
            } else {
                (lane.other_end, lane.one_end)
            };
            let origins = self.available(from, &[]);
            let destinations = self.available(to, &[]);
            let (Some(pol), Some(pod)) = (
                draws.pick("port of lading", &origins),
                draws.pick("port of discharge", &destinations),
            ) else {
                continue;
            };
            let mut ports = vec![(*pol).clone()];
            if draws.showcase || draws.below("transshipment", 2) == 0 {
                let hubs = self.available(lane.hubs, &[&pol.locode, &pod.locode]);
                if let Some(hub) = draws.pick("hub", &hubs) {
                    ports.push((*hub).clone());
                }
            }
            ports.push((*pod).clone());
            let service_code = format!("{}{}", lane.service, 1 + draws.below("service", 9));
            return Some(Route {
                ports,
                service_code,
            });
        }
        self.fallback_route(draws)
    }

    /// When no lane can be served, sails between the two available ports farthest apart
    /// from a hashed start, so that a thin port list still yields voyages.
    fn fallback_route(&self, draws: &Draws) -> Option<Route> {
        let pol = draws.pick("port of lading", &self.ports)?;
        let pod = self
            .ports
            .iter()
            .filter(|port| port.locode != pol.locode)
            .max_by(|a, b| {
                let da = geometry::sea_path(pol, a).length_nm();
                let db = geometry::sea_path(pol, b).length_nm();
                da.total_cmp(&db)
            })?;
        Some(Route {
            ports: vec![pol.clone(), pod.clone()],
            service_code: "TM1".to_owned(),
        })
    }

    fn available<'a>(&'a self, locodes: &[&str], except: &[&str]) -> Vec<&'a SandboxPort> {
        locodes
            .iter()
            .filter(|locode| !except.contains(locode))
            .filter_map(|locode| self.port(locode))
            .collect()
    }
}

/// The canonical form of a sandbox number, or `None` when the sandbox does not know it.
fn normalize_number(number: &str) -> Option<String> {
    let number = number.trim().to_ascii_uppercase();
    // DCSA references are at most 35 characters; a longer one is no sandbox number.
    let length = number.chars().count();
    let known = number.starts_with("TEST") && (6..=35).contains(&length);
    (known && number != FAILING_NUMBER).then_some(number)
}

/// Deterministic choices derived from a number. Each choice hashes the number with its own
/// label, so adding a choice never changes the others (and thus existing voyages).
pub(crate) struct Draws {
    number: String,
    /// Whether this is [`SHOWCASE_NUMBER`], whose voyage overrides some choices.
    pub(crate) showcase: bool,
}

impl Draws {
    pub(crate) fn new(number: &str) -> Self {
        Self {
            number: number.to_owned(),
            showcase: number == SHOWCASE_NUMBER,
        }
    }

    /// 64 hashed bits for the label.
    pub(crate) fn bits(&self, label: &str) -> u64 {
        let digest = Sha256::new()
            .chain_update(self.number.as_bytes())
            .chain_update([0])
            .chain_update(label.as_bytes())
            .finalize();
        let mut bytes = [0; 8];
        bytes.copy_from_slice(&digest[..8]);
        u64::from_be_bytes(bytes)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&self, label: &str, n: u64) -> u64 {
        self.bits(label).checked_rem(n).unwrap_or(0)
    }

    /// A number in `[0, 1)`.
    pub(crate) fn unit(&self, label: &str) -> f64 {
        // The top 53 bits fill an f64's mantissa exactly.
        (self.bits(label) >> 11) as f64 / (1_u64 << 53) as f64
    }

    /// One of the items, or `None` when there are none.
    pub(crate) fn pick<'a, T>(&self, label: &str, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(label, items.len() as u64) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_known_only_when_they_start_with_test_and_are_long_enough() {
        let cases = [
            ("TEST-TR-SUCCEEDED", true),
            ("test12", true),
            ("  TestABC  ", true),
            ("TEST-TR-FAILED", false),
            ("test-tr-failed", false),
            ("TEST1", false),
            ("MAEU123456789", false),
            ("", false),
        ];

        for (number, known) in cases {
            assert_eq!(normalize_number(number).is_some(), known, "{number}");
        }
    }

    #[test]
    fn ports_outside_the_curated_list_or_without_a_position_are_ignored() {
        let mut ports = builtin_ports();
        ports.push(SandboxPort {
            locode: "FRPAR".to_owned(),
            latitude: 48.85,
            longitude: 2.35,
            terminals: Vec::new(),
        });
        ports.push(SandboxPort {
            locode: "nlrtm".to_owned(),
            latitude: f64::NAN,
            longitude: 4.4,
            terminals: Vec::new(),
        });

        let sandbox = Sandbox::new(ports);

        assert_eq!(sandbox.ports().len(), builtin_ports().len());
        assert!(sandbox.ports().iter().all(|port| port.locode != "FRPAR"));
    }

    #[test]
    fn every_curated_port_has_a_builtin_position() {
        let builtin = builtin_ports();

        for locode in curated_locodes() {
            assert!(builtin.iter().any(|port| port.locode == locode), "{locode}");
        }
    }

    #[test]
    fn a_sandbox_with_one_port_knows_no_number() {
        let sandbox = Sandbox::new(vec![SandboxPort {
            locode: "NLRTM".to_owned(),
            latitude: 51.9,
            longitude: 4.44,
            terminals: Vec::new(),
        }]);

        assert!(
            sandbox
                .voyage("TEST-TR-SUCCEEDED", DateTime::UNIX_EPOCH)
                .is_none()
        );
    }

    #[test]
    fn a_thin_port_list_still_yields_voyages_between_its_ports() {
        let sandbox = Sandbox::new(
            builtin_ports()
                .into_iter()
                .filter(|port| ["SGSIN", "LKCMB", "MYPKG"].contains(&port.locode.as_str()))
                .collect(),
        );

        let voyage = sandbox
            .voyage("TEST-TR-SUCCEEDED", DateTime::UNIX_EPOCH)
            .expect("two ports are enough");

        assert_ne!(
            voyage.port_of_lading().locode,
            voyage.port_of_discharge().locode
        );
    }
}
