//! One sandbox voyage: its timeline, the DCSA events it reveals at a given time, and where
//! its vessels are.
//!
//! The timeline is built once, with actual times. A leg may arrive late; the delay becomes
//! known halfway through the leg, so estimates published before then leave it out and the
//! estimate of every later call moves once it is known.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde::{Serialize, Serializer};
use tidemark_domain::ContainerNumber;
use uuid::Uuid;

use super::geometry::{SeaPath, sea_path};
use super::{Draws, SandboxPort, SandboxTerminal};
use crate::event::{
    Classifier, DcsaCode, DocumentType, EmptyIndicator, EventKind, ModeOfTransport,
};

/// A vessel of the sandbox fleet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vessel {
    pub name: String,
    /// Seven digits with a valid IMO check digit.
    pub imo: String,
    /// Nine digits, starting with a real maritime identification digit group.
    pub mmsi: String,
}

/// A container of a voyage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxContainer {
    pub number: ContainerNumber,
    /// ISO 6346 size and type, such as `45G1`.
    pub iso_equipment_code: String,
}

/// One vessel's passage from a port to the next.
#[derive(Clone, Debug)]
pub struct SeaLeg {
    pub vessel: Vessel,
    /// The carrier's voyage number, such as `412W`.
    pub voyage_number: String,
    pub from: SandboxPort,
    pub to: SandboxPort,
    /// When the vessel actually leaves `from`.
    pub departure: DateTime<Utc>,
    /// When the vessel actually reaches `to`, `delay` included.
    pub arrival: DateTime<Utc>,
    /// How much later than scheduled the vessel arrives; zero for most legs.
    pub delay: Duration,
    /// When the delay shows in the carrier's estimates (halfway through the leg).
    pub delay_known_at: DateTime<Utc>,
    /// The length of the leg.
    pub distance_nm: f64,
    path: SeaPath,
}

/// Where a vessel is at a given time, as AIS would say.
#[derive(Clone, Debug, PartialEq)]
pub struct VesselPosition {
    pub imo: String,
    pub mmsi: String,
    pub name: String,
    pub latitude: f64,
    pub longitude: f64,
    pub speed_knots: f64,
    /// Course over ground, 0 to 360 degrees clockwise from north.
    pub heading_degrees: f64,
}

/// A voyage of the sandbox carrier: containers carried from a port of lading to a port of
/// discharge, maybe through a hub.
#[derive(Clone, Debug)]
pub struct Voyage {
    number: String,
    containers: Vec<SandboxContainer>,
    /// Port of lading, the hub if any, port of discharge; leg `k` sails from `ports[k]` to
    /// `ports[k + 1]`.
    ports: Vec<SandboxPort>,
    legs: Vec<SeaLeg>,
    service_code: String,
    /// When the booking was made: nothing is known before.
    booked_at: DateTime<Utc>,
    /// Every event the voyage will have, in time order.
    milestones: Vec<Milestone>,
}

/// A DCSA Track & Trace 2.2 event (transport or equipment), serialized as the spec names
/// its fields.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DcsaEvent {
    /// Stable per milestone and classifier: an estimate keeps its id as it moves.
    #[serde(rename = "eventID")]
    pub event_id: Uuid,
    #[serde(serialize_with = "utc_seconds")]
    pub event_created_date_time: DateTime<Utc>,
    pub event_type: EventKind,
    pub event_classifier_code: Classifier,
    #[serde(serialize_with = "utc_seconds")]
    pub event_date_time: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport_event_type_code: Option<DcsaCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equipment_event_type_code: Option<DcsaCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equipment_reference: Option<String>,
    #[serde(rename = "ISOEquipmentCode", skip_serializing_if = "Option::is_none")]
    pub iso_equipment_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty_indicator_code: Option<EmptyIndicator>,
    pub transport_call: DcsaTransportCall,
    pub document_references: Vec<DcsaDocumentReference>,
}

/// The transport call of a [`DcsaEvent`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DcsaTransportCall {
    #[serde(rename = "transportCallID")]
    pub transport_call_id: Uuid,
    pub transport_call_sequence_number: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub carrier_service_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub export_voyage_number: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub import_voyage_number: Option<String>,
    #[serde(rename = "UNLocationCode")]
    pub un_location_code: String,
    /// The terminal's SMDG code, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facility_code: Option<String>,
    /// `SMDG` beside a `facility_code`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facility_code_list_provider: Option<&'static str>,
    /// `POTE` for the terminal, `DEPO` for the empty depot.
    pub facility_type_code: &'static str,
    /// The terminal's name, for a terminal without an SMDG code (DCSA's field for a
    /// facility without a standard code).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_facility: Option<String>,
    pub mode_of_transport: ModeOfTransport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vessel: Option<DcsaVessel>,
}

/// The vessel of a [`DcsaTransportCall`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DcsaVessel {
    #[serde(rename = "vesselIMONumber")]
    pub vessel_imo_number: String,
    #[serde(rename = "vesselName")]
    pub vessel_name: String,
}

/// A document an event belongs to.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DcsaDocumentReference {
    pub document_reference_type: DocumentType,
    pub document_reference_value: String,
}

/// DCSA wants ISO 8601 with an offset; whole seconds and `Z` read best.
fn utc_seconds<S: Serializer>(value: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&value.to_rfc3339_opts(SecondsFormat::Secs, true))
}

/// One event of the timeline.
#[derive(Clone, Debug)]
struct Milestone {
    /// Names the milestone within the voyage; the event ids derive from it.
    key: String,
    code: DcsaCode,
    /// The container, for equipment events.
    container: Option<usize>,
    empty: Option<EmptyIndicator>,
    place: Place,
    /// When it happens.
    at: DateTime<Utc>,
    /// When the carrier records it; the actual event is published from then on.
    recorded_at: DateTime<Utc>,
    /// The legs whose delay `at` includes.
    slips: Vec<usize>,
    /// Whether the carrier publishes an estimate before it happens.
    estimated: bool,
}

/// Where a milestone happens.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// On a vessel call: the port (index into `ports`) and the leg whose vessel it is.
    Vessel { port: usize, leg: usize },
    /// At the gate of the port's terminal or empty depot, by truck.
    Gate { port: usize, facility: &'static str },
}

/// Namespace of the sandbox's event and transport call ids:
/// `Uuid::new_v5(&Uuid::NAMESPACE_DNS, b"sandbox-carrier.tidemark.invalid")`. Changing it
/// changes every id, which Tidemark would take for new events.
const NAMESPACE: Uuid = Uuid::from_u128(0x1a87_3556_ab9a_5c44_a90c_112e_4654_62c1);

const EQUIPMENT_CODES: &[&str] = &["45G1", "45G1", "22G1", "42G1"];
const VESSEL_ADJECTIVES: &[&str] = &[
    "NORTHERN", "SILVER", "GOLDEN", "BLUE", "OCEAN", "PACIFIC", "ATLANTIC", "CORAL", "STELLAR",
    "MERIDIAN", "HARBOUR", "CAPE", "BRIGHT", "SWIFT", "EASTERN", "TIDAL",
];
const VESSEL_NOUNS: &[&str] = &[
    "HORIZON", "VOYAGER", "PIONEER", "MARINER", "ZEPHYR", "AURORA", "HERON", "FALCON", "ORION",
    "LYRA", "VEGA", "DAWN", "ATLAS", "BEACON", "COMPASS", "TRIDENT",
];
/// Maritime identification digits of common container-ship flags: Hong Kong, Singapore,
/// Liberia, Marshall Islands, Madeira, Panama, Denmark, Malta.
const MMSI_PREFIXES: &[&str] = &["477", "563", "636", "538", "255", "352", "219", "215"];

fn hours(value: f64) -> Duration {
    Duration::minutes((value * 60.0).round() as i64)
}

/// Builds the voyage of `number` (already normalized) along `ports`.
pub(super) fn build(
    number: String,
    ports: Vec<SandboxPort>,
    service_code: String,
    draws: &Draws,
    epoch: DateTime<Utc>,
) -> Voyage {
    let container_count = 1 + draws.below("containers", 3) as usize;
    let containers: Vec<SandboxContainer> = (0..container_count)
        .map(|index| SandboxContainer {
            number: ContainerNumber::from_owner_and_serial(
                "TDMU",
                draws.below(&format!("container {index}"), 1_000_000) as u32,
            ),
            iso_equipment_code: draws
                .pick(&format!("equipment {index}"), EQUIPMENT_CODES)
                .copied()
                .unwrap_or("45G1")
                .to_owned(),
        })
        .collect();

    // The timeline is laid out with the first departure at the epoch, then shifted to the
    // voyage's phase once its length is known.
    let mut timeline = Timeline::default();
    let last_port = ports.len() - 1;
    let mut departure = epoch;
    for index in 0..containers.len() {
        let empty_out =
            departure - hours(24.0 * (5.0 + 3.0 * draws.unit(&format!("empty out {index}"))));
        let full_in = departure - hours(36.0 + 48.0 * draws.unit(&format!("full in {index}")));
        timeline.equipment(
            index,
            DcsaCode::Gtot,
            EmptyIndicator::Empty,
            Place::Gate {
                port: 0,
                facility: "DEPO",
            },
            empty_out,
            &[],
        );
        timeline.equipment(
            index,
            DcsaCode::Gtin,
            EmptyIndicator::Laden,
            Place::Gate {
                port: 0,
                facility: "POTE",
            },
            full_in,
            &[],
        );
    }

    let mut legs = Vec::new();
    let mut slips: Vec<usize> = Vec::new();
    for leg in 0..last_port {
        let (from, to) = (&ports[leg], &ports[leg + 1]);
        let vessel = vessel(
            draws,
            leg,
            legs.last().map(|previous: &SeaLeg| &previous.vessel),
        );
        let path = sea_path(from, to);
        let distance_nm = path.length_nm();
        let speed = 16.0 + 2.0 * draws.unit(&format!("speed {leg}"));
        let sailing = hours(distance_nm / speed);
        // Half the legs arrive late, by 3 to 36 hours but never by much more than 40% of
        // the sailing time, so the vessel still makes a plausible 11 knots or more.
        let late = draws.below(&format!("late {leg}"), 2) == 0;
        let delay = if late || (draws.showcase && leg + 1 == last_port) {
            let longest = (sailing.num_minutes() as f64 / 60.0 * 0.4).min(33.0);
            hours(3.0 + longest * draws.unit(&format!("delay {leg}")))
        } else {
            Duration::zero()
        };

        for index in 0..containers.len() {
            let load = departure - hours(2.0 + 10.0 * draws.unit(&format!("load {leg} {index}")));
            timeline.equipment(
                index,
                DcsaCode::Load,
                EmptyIndicator::Laden,
                Place::Vessel { port: leg, leg },
                load,
                &slips,
            );
        }
        timeline.transport(
            DcsaCode::Depa,
            Place::Vessel { port: leg, leg },
            departure,
            &slips,
        );

        let arrival = departure + sailing + delay;
        let delay_known_at = departure + sailing / 2;
        if delay > Duration::zero() {
            slips.push(leg);
        }
        timeline.transport(
            DcsaCode::Arri,
            Place::Vessel { port: leg + 1, leg },
            arrival,
            &slips,
        );
        let at_pod = leg + 1 == last_port;
        for (index, container) in containers.iter().enumerate() {
            // At least twelve hours before the next vessel loads at a hub (see the dwell below).
            let discharge =
                arrival + hours(3.0 + 6.0 * draws.unit(&format!("discharge {leg} {index}")));
            timeline.equipment(
                index,
                DcsaCode::Disc,
                EmptyIndicator::Laden,
                Place::Vessel { port: leg + 1, leg },
                discharge,
                &slips,
            );
            // The sandbox terminal (`tidemark_terminals::sandbox`) holds each box for
            // customs and releases it 34 to 38 hours after discharge, never when its serial
            // ends in 7; the line follows that story: it says available only once the
            // terminal has released the box (40 to 48 hours), the trucker collects it
            // within the four free days, mostly, and a box the terminal never releases
            // never leaves.
            if at_pod && container.number.serial() % 10 != 7 {
                let available =
                    discharge + hours(40.0 + 8.0 * draws.unit(&format!("available {index}")));
                let full_out =
                    available + hours(6.0 + 48.0 * draws.unit(&format!("full out {index}")));
                let empty_in =
                    full_out + hours(48.0 + 96.0 * draws.unit(&format!("empty in {index}")));
                timeline.equipment(
                    index,
                    DcsaCode::Avpu,
                    EmptyIndicator::Laden,
                    Place::Vessel { port: leg + 1, leg },
                    available,
                    &slips,
                );
                timeline.equipment(
                    index,
                    DcsaCode::Gtot,
                    EmptyIndicator::Laden,
                    Place::Gate {
                        port: leg + 1,
                        facility: "POTE",
                    },
                    full_out,
                    &slips,
                );
                timeline.equipment(
                    index,
                    DcsaCode::Gtin,
                    EmptyIndicator::Empty,
                    Place::Gate {
                        port: leg + 1,
                        facility: "DEPO",
                    },
                    empty_in,
                    &slips,
                );
            }
        }

        legs.push(SeaLeg {
            voyage_number: voyage_number(draws, leg, from, to),
            vessel,
            from: from.clone(),
            to: to.clone(),
            departure,
            arrival,
            delay,
            delay_known_at,
            distance_nm,
            path,
        });
        // A hub keeps the containers one to three days before the next vessel sails.
        departure = arrival + hours(24.0 * (1.0 + 2.0 * draws.unit(&format!("dwell {leg}"))));
    }

    let shift = phase_shift(draws, epoch, &legs);
    for leg in &mut legs {
        leg.departure += shift;
        leg.arrival += shift;
        leg.delay_known_at += shift;
    }
    let mut milestones = timeline.milestones;
    for milestone in &mut milestones {
        milestone.at += shift;
        // The carrier records an event 2 to 45 minutes after it happens.
        let lag = 2.0 + 43.0 * draws.unit(&format!("lag {}", milestone.key));
        milestone.recorded_at = milestone.at + Duration::minutes(lag.round() as i64);
    }
    // Stable, so that simultaneous events keep the order they were laid out in.
    milestones.sort_by_key(|milestone| milestone.at);
    let first = milestones.first().map_or(epoch, |milestone| milestone.at);
    let booked_at = (first - Duration::days(2)).min(epoch - Duration::hours(1));

    Voyage {
        number,
        containers,
        ports,
        legs,
        service_code,
        booked_at,
        milestones,
    }
}

/// How far to move a timeline laid out with its first departure at the epoch.
///
/// Three in four voyages left the port of lading up to two days before the epoch, so that a
/// freshly tracked number shows a vessel at sea; one in eight sails in the coming days, and
/// one in eight arrived up to six days before the epoch.
fn phase_shift(draws: &Draws, epoch: DateTime<Utc>, legs: &[SeaLeg]) -> Duration {
    let u = draws.unit("phase offset");
    let phase = if draws.showcase {
        draws.below("phase", 6)
    } else {
        draws.below("phase", 8)
    };
    let Some(first) = legs.first() else {
        return Duration::zero();
    };
    match phase {
        0..=5 => {
            // Leave at least twelve hours of the first leg after the epoch.
            let room = (first.arrival - first.departure - Duration::hours(12))
                .clamp(Duration::zero(), Duration::hours(48));
            -hours(u * room.num_minutes() as f64 / 60.0)
        }
        6 => Duration::hours(12) + hours(u * 96.0),
        _ => {
            let last_arrival = legs.last().map_or(first.arrival, |leg| leg.arrival);
            -(last_arrival - epoch) - hours(u * 144.0)
        }
    }
}

fn vessel(draws: &Draws, leg: usize, avoid: Option<&Vessel>) -> Vessel {
    let mut attempt = 0;
    loop {
        let label = format!("vessel {leg} {attempt}");
        let six = 900_000 + draws.below(&format!("{label} imo"), 100_000) as u32;
        let imo = format!("{six}{}", imo_check_digit(six));
        if avoid.is_none_or(|other| other.imo != imo) {
            let adjective = draws.pick(&format!("{label} adjective"), VESSEL_ADJECTIVES);
            let noun = draws.pick(&format!("{label} noun"), VESSEL_NOUNS);
            let prefix = draws.pick(&format!("{label} flag"), MMSI_PREFIXES);
            return Vessel {
                name: format!(
                    "{} {}",
                    adjective.copied().unwrap_or("SANDBOX"),
                    noun.copied().unwrap_or("VESSEL")
                ),
                imo,
                mmsi: format!(
                    "{}{:06}",
                    prefix.copied().unwrap_or("477"),
                    draws.below(&format!("{label} mmsi"), 1_000_000)
                ),
            };
        }
        attempt += 1;
    }
}

/// The IMO number check digit: the six digits weighted 7, 6, 5, 4, 3, 2, summed, modulo 10.
pub(crate) fn imo_check_digit(six_digits: u32) -> u32 {
    let mut rest = six_digits;
    let mut sum = 0;
    // From the last digit (weight 2) to the first (weight 7).
    for weight in 2..=7 {
        sum += (rest % 10) * weight;
        rest /= 10;
    }
    sum % 10
}

fn voyage_number(draws: &Draws, leg: usize, from: &SandboxPort, to: &SandboxPort) -> String {
    let east = (to.longitude - from.longitude).rem_euclid(360.0) < 180.0;
    format!(
        "{:03}{}",
        100 + draws.below(&format!("voyage {leg}"), 900),
        if east { 'E' } else { 'W' }
    )
}

/// Collects milestones in layout order.
#[derive(Default)]
struct Timeline {
    milestones: Vec<Milestone>,
}

impl Timeline {
    fn transport(&mut self, code: DcsaCode, place: Place, at: DateTime<Utc>, slips: &[usize]) {
        let Place::Vessel { port, leg } = place else {
            return;
        };
        self.milestones.push(Milestone {
            key: format!("{code} port {port} leg {leg}"),
            code,
            container: None,
            empty: None,
            place,
            at,
            recorded_at: at,
            slips: slips.to_vec(),
            estimated: true,
        });
    }

    fn equipment(
        &mut self,
        container: usize,
        code: DcsaCode,
        empty: EmptyIndicator,
        place: Place,
        at: DateTime<Utc>,
        slips: &[usize],
    ) {
        let port = match place {
            Place::Vessel { port, .. } | Place::Gate { port, .. } => port,
        };
        self.milestones.push(Milestone {
            key: format!("{code} {empty} port {port} container {container}"),
            code,
            container: Some(container),
            empty: Some(empty),
            place,
            at,
            recorded_at: at,
            slips: slips.to_vec(),
            estimated: false,
        });
    }
}

impl Voyage {
    /// The number the voyage belongs to (uppercase), its bill of lading and booking number.
    pub fn number(&self) -> &str {
        &self.number
    }

    /// The containers, one to three.
    pub fn containers(&self) -> &[SandboxContainer] {
        &self.containers
    }

    /// The sea legs: one, or two with a transshipment.
    pub fn legs(&self) -> &[SeaLeg] {
        &self.legs
    }

    /// Where the containers are first loaded.
    pub fn port_of_lading(&self) -> &SandboxPort {
        &self.legs[0].from
    }

    /// Where the containers change vessel, if they do.
    pub fn transshipment_port(&self) -> Option<&SandboxPort> {
        (self.legs.len() > 1).then(|| &self.legs[0].to)
    }

    /// Where the containers are discharged for the last time.
    pub fn port_of_discharge(&self) -> &SandboxPort {
        let last = self.legs.len() - 1;
        &self.legs[last].to
    }

    /// What the carrier publishes at `now`: every actual event recorded by then, and an
    /// estimate for each vessel call still to come, in time order. Empty before the booking.
    pub fn events_until(&self, now: DateTime<Utc>) -> Vec<DcsaEvent> {
        if now < self.booked_at {
            return Vec::new();
        }
        let mut events: Vec<DcsaEvent> = self
            .milestones
            .iter()
            .filter_map(|milestone| {
                if milestone.recorded_at <= now {
                    Some(self.event(
                        milestone,
                        Classifier::Actual,
                        milestone.at,
                        milestone.recorded_at,
                    ))
                } else if milestone.estimated {
                    let (at, issued) = self.estimate(milestone, now);
                    Some(self.event(milestone, Classifier::Estimated, at, issued))
                } else {
                    None
                }
            })
            .collect();
        // Stable: events at the same time keep the timeline's order.
        events.sort_by_key(|event| event.event_date_time);
        events
    }

    /// Where the vessel carrying the containers is at `at`, when it is at sea.
    pub fn vessel_position(&self, at: DateTime<Utc>) -> Option<VesselPosition> {
        let leg = self
            .legs
            .iter()
            .find(|leg| leg.departure <= at && at < leg.arrival)?;
        let elapsed = (at - leg.departure).num_seconds() as f64;
        let total = (leg.arrival - leg.departure).num_seconds() as f64;
        let point = leg.path.point_at(elapsed / total);
        Some(VesselPosition {
            imo: leg.vessel.imo.clone(),
            mmsi: leg.vessel.mmsi.clone(),
            name: leg.vessel.name.clone(),
            latitude: point.latitude,
            longitude: point.longitude,
            // The delay is spread over the leg: the vessel sails slower than planned.
            speed_knots: leg.distance_nm / (total / 3_600.0),
            heading_degrees: point.heading_degrees,
        })
    }

    /// The estimate of a milestone as published at `now`, and when it was issued: the delays
    /// not yet known at `now` are left out.
    fn estimate(
        &self,
        milestone: &Milestone,
        now: DateTime<Utc>,
    ) -> (DateTime<Utc>, DateTime<Utc>) {
        let mut at = milestone.at;
        let mut issued = self.booked_at;
        for &leg in &milestone.slips {
            let leg = &self.legs[leg];
            if leg.delay_known_at <= now {
                issued = issued.max(leg.delay_known_at);
            } else {
                at -= leg.delay;
            }
        }
        (at, issued)
    }

    fn event(
        &self,
        milestone: &Milestone,
        classifier: Classifier,
        at: DateTime<Utc>,
        created: DateTime<Utc>,
    ) -> DcsaEvent {
        let container = milestone
            .container
            .and_then(|index| self.containers.get(index));
        let is_transport = milestone.code.kind() == EventKind::Transport;
        DcsaEvent {
            event_id: self.uuid(&format!("event {} {classifier}", milestone.key)),
            event_created_date_time: created,
            event_type: milestone.code.kind(),
            event_classifier_code: classifier,
            event_date_time: at,
            transport_event_type_code: is_transport.then_some(milestone.code),
            equipment_event_type_code: (!is_transport).then_some(milestone.code),
            equipment_reference: container.map(|c| c.number.as_str().to_owned()),
            iso_equipment_code: container.map(|c| c.iso_equipment_code.clone()),
            empty_indicator_code: milestone.empty,
            transport_call: self.transport_call(milestone),
            document_references: [DocumentType::Booking, DocumentType::TransportDocument]
                .into_iter()
                .map(|document_type| DcsaDocumentReference {
                    document_reference_type: document_type,
                    document_reference_value: self.number.clone(),
                })
                .collect(),
        }
    }

    fn transport_call(&self, milestone: &Milestone) -> DcsaTransportCall {
        let mut call = self.call_without_facility(milestone);
        let terminal = match milestone.place {
            Place::Vessel { port, .. } => self.terminal_at(port),
            Place::Gate { port, facility } => (facility == "POTE")
                .then(|| self.terminal_at(port))
                .flatten(),
        };
        if let Some(terminal) = terminal {
            match &terminal.smdg_code {
                Some(code) => {
                    call.facility_code = Some(code.clone());
                    call.facility_code_list_provider = Some("SMDG");
                }
                None => call.other_facility = Some(terminal.name.clone()),
            }
        }
        call
    }

    fn call_without_facility(&self, milestone: &Milestone) -> DcsaTransportCall {
        match milestone.place {
            Place::Vessel { port, leg } => {
                let sea_leg = &self.legs[leg];
                DcsaTransportCall {
                    transport_call_id: self.uuid(&format!("call port {port} leg {leg}")),
                    transport_call_sequence_number: 1,
                    carrier_service_code: Some(self.service_code.clone()),
                    export_voyage_number: Some(sea_leg.voyage_number.clone()),
                    import_voyage_number: Some(sea_leg.voyage_number.clone()),
                    un_location_code: self.ports[port].locode.clone(),
                    facility_code: None,
                    facility_code_list_provider: None,
                    facility_type_code: "POTE",
                    other_facility: None,
                    mode_of_transport: ModeOfTransport::Vessel,
                    vessel: Some(DcsaVessel {
                        vessel_imo_number: sea_leg.vessel.imo.clone(),
                        vessel_name: sea_leg.vessel.name.clone(),
                    }),
                }
            }
            Place::Gate { port, facility } => DcsaTransportCall {
                transport_call_id: self.uuid(&format!("call {}", milestone.key)),
                transport_call_sequence_number: 1,
                carrier_service_code: None,
                export_voyage_number: None,
                import_voyage_number: None,
                un_location_code: self.ports[port].locode.clone(),
                facility_code: None,
                facility_code_list_provider: None,
                facility_type_code: facility,
                other_facility: None,
                mode_of_transport: ModeOfTransport::Truck,
                vessel: None,
            },
        }
    }

    /// The terminal this voyage uses at `port`, the same for every call there; `None` where
    /// the port's terminals are not known.
    fn terminal_at(&self, port: usize) -> Option<&SandboxTerminal> {
        let terminals = &self.ports[port].terminals;
        let draw = usize::from(self.uuid(&format!("terminal {port}")).as_bytes()[0]);
        terminals.get(draw % terminals.len().max(1))
    }

    /// A UUIDv5 for a name within this voyage, the same in every process.
    fn uuid(&self, name: &str) -> Uuid {
        Uuid::new_v5(&NAMESPACE, format!("{}/{name}", self.number).as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_namespace_is_the_documented_uuid_v5() {
        let expected = Uuid::new_v5(&Uuid::NAMESPACE_DNS, b"sandbox-carrier.tidemark.invalid");

        assert_eq!(NAMESPACE, expected);
    }

    #[test]
    fn imo_check_digits_match_published_numbers() {
        // IMO 9074729 and 9321483 (the DCSA sample's vessel).
        assert_eq!(imo_check_digit(907_472), 9);
        assert_eq!(imo_check_digit(932_148), 3);
    }
}
