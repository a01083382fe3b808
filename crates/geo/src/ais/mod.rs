//! AIS (NMEA 0183 `!AIVDM`/`!AIVDO`) decoding into vessel positions and static data, and
//! the matching encoder that the sandbox carrier uses to publish its simulated vessels.
//!
//! The NMEA layer (tag blocks, fields, checksum, trailing receiver metadata, multi-part
//! reassembly) is ours: the `ais` crate's own sentence parser keeps a single in-flight
//! message, so it cannot reassemble interleaved channels, and its fragment arithmetic can
//! overflow on hostile input. Payloads are decoded by the `ais` crate (`unarmor` + `parse`),
//! except latitude and longitude, which it returns as `f32` (about 1.5 m steps near 180°,
//! ten times coarser than AIS resolution); those two are re-read from the raw bits.
//!
//! ```
//! use tidemark_geo::ais::{AisMessage, Decoder};
//!
//! let mut decoder = Decoder::new();
//! let message = decoder.decode("!AIVDM,1,1,,A,15RTgt0PAso;90TKcjM8h6g208CQ,0*4A");
//! let Some(AisMessage::Position(position)) = message else { panic!("a position report") };
//! assert_eq!(position.mmsi, 371_798_000);
//! assert_eq!(position.speed_over_ground_knots, Some(12.3));
//! assert_eq!(decoder.stats().decoded, 1);
//! ```

mod decoder;
mod encoder;
mod fragments;
mod sentence;
#[cfg(test)]
mod tests;

use serde::Serialize;

pub use decoder::{DecodeStats, Decoder};
pub use encoder::{encode_position, encode_static};

/// One decoded AIS message of a kind Tidemark uses.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AisMessage {
    /// A position report (types 1, 2, 3, 18, 19, 27) with valid coordinates.
    Position(PositionReport),
    /// Static and voyage data (type 5) or one part of a class B static report (type 24).
    Static(StaticData),
}

/// A vessel position. Values marked "not available" by the sender are `None`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PositionReport {
    /// Maritime Mobile Service Identity of the sender.
    pub mmsi: u32,
    /// Degrees, north positive, within −90..=90.
    pub latitude: f64,
    /// Degrees, east positive, within −180..=180.
    pub longitude: f64,
    /// Knots; 0.1 kn resolution (whole knots for type 27). 102.2 means "102.2 or more".
    pub speed_over_ground_knots: Option<f64>,
    /// Degrees from true north, 0..360; 0.1° resolution (whole degrees for type 27).
    pub course_over_ground: Option<f64>,
    /// Degrees from true north, 0..=359.
    pub true_heading: Option<u16>,
    /// Second of the UTC minute when the report was made (0..=59).
    pub timestamp_second: Option<u8>,
    /// Class A and long-range reports only.
    pub navigation_status: Option<NavigationStatus>,
    /// AIS message type the report came from (1, 2, 3, 18, 19 or 27).
    pub message_type: u8,
    /// Reception time in Unix seconds, from the receiver's tag block (`c:`) or trailing
    /// metadata. AIS messages carry no date, so this is the only absolute time available.
    pub received_at: Option<i64>,
}

/// Navigation status of a class A or long-range report (ITU-R M.1371, table 46).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NavigationStatus {
    UnderWayUsingEngine,
    AtAnchor,
    NotUnderCommand,
    RestrictedManoeuvrability,
    ConstrainedByDraught,
    Moored,
    Aground,
    EngagedInFishing,
    UnderWaySailing,
    AisSartActive,
    /// Codes 9–13, reserved for future use (some are used regionally).
    Reserved(u8),
}

impl NavigationStatus {
    /// The status for a 4-bit code; 15 ("not defined") and out-of-range codes give `None`.
    #[must_use]
    pub fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => Self::UnderWayUsingEngine,
            1 => Self::AtAnchor,
            2 => Self::NotUnderCommand,
            3 => Self::RestrictedManoeuvrability,
            4 => Self::ConstrainedByDraught,
            5 => Self::Moored,
            6 => Self::Aground,
            7 => Self::EngagedInFishing,
            8 => Self::UnderWaySailing,
            9..=13 => Self::Reserved(code),
            14 => Self::AisSartActive,
            _ => return None,
        })
    }

    /// The 4-bit code of this status.
    #[must_use]
    pub fn code(self) -> u8 {
        match self {
            Self::UnderWayUsingEngine => 0,
            Self::AtAnchor => 1,
            Self::NotUnderCommand => 2,
            Self::RestrictedManoeuvrability => 3,
            Self::ConstrainedByDraught => 4,
            Self::Moored => 5,
            Self::Aground => 6,
            Self::EngagedInFishing => 7,
            Self::UnderWaySailing => 8,
            Self::Reserved(code) => code,
            Self::AisSartActive => 14,
        }
    }
}

/// Static (identity) and voyage data of a vessel.
///
/// A type 5 message fills every field it carries. Type 24 comes in two independent parts:
/// part A carries only the name, part B the ship type, call sign and dimensions; use
/// [`StaticData::merge`] to combine what is known about one MMSI.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StaticData {
    pub mmsi: u32,
    /// IMO ship number; only seven-digit values are kept (0 means "not available").
    pub imo: Option<u32>,
    /// Vessel name, without `@` padding and surrounding spaces.
    pub name: Option<String>,
    pub call_sign: Option<String>,
    /// ITU ship and cargo type code (1..=99; 70–79 cargo, 80–89 tanker).
    pub ship_type: Option<u8>,
    /// Free-text destination as typed by the crew (ideally a UN/LOCODE).
    pub destination: Option<String>,
    /// Estimated time of arrival, without a year.
    pub eta: Option<Eta>,
    /// Present static draught in metres (0.1 m resolution).
    pub draught_metres: Option<f64>,
    pub dimensions: Option<Dimensions>,
    /// AIS message type the data came from (5 or 24).
    pub message_type: u8,
    /// Reception time in Unix seconds, when the receiver supplied one.
    pub received_at: Option<i64>,
}

impl StaticData {
    /// Takes every field that `other` carries, treating `other` as the newer report, and
    /// keeps the later reception time. Combines type 24 parts A and B, or a type 5 with a
    /// later type 24.
    pub fn merge(&mut self, other: &StaticData) {
        fn fill<T: Clone>(mine: &mut Option<T>, theirs: &Option<T>) {
            if theirs.is_some() {
                mine.clone_from(theirs);
            }
        }
        fill(&mut self.imo, &other.imo);
        fill(&mut self.name, &other.name);
        fill(&mut self.call_sign, &other.call_sign);
        fill(&mut self.ship_type, &other.ship_type);
        fill(&mut self.destination, &other.destination);
        fill(&mut self.eta, &other.eta);
        fill(&mut self.draught_metres, &other.draught_metres);
        fill(&mut self.dimensions, &other.dimensions);
        self.received_at = self.received_at.max(other.received_at);
    }
}

/// ETA as sent in a type 5 message: month, day, hour and minute in UTC, no year.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Eta {
    pub month: u8,
    pub day: u8,
    /// `None` when the sender gave the date only.
    pub hour: Option<u8>,
    pub minute: Option<u8>,
}

/// Distances in metres from the position reference point to the hull.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Dimensions {
    pub to_bow: u16,
    pub to_stern: u16,
    pub to_port: u16,
    pub to_starboard: u16,
}

impl Dimensions {
    /// Overall length in metres.
    #[must_use]
    pub fn length(&self) -> u16 {
        self.to_bow + self.to_stern
    }

    /// Overall beam in metres.
    #[must_use]
    pub fn beam(&self) -> u16 {
        self.to_port + self.to_starboard
    }
}
