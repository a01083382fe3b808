//! From DCSA events to Terminal49's `container.transport.*` milestones.
//!
//! This is `reference/dcsa/dcsa_to_t49_event_mapping.csv` written as one match. A DCSA code
//! alone does not say which milestone an event is: `LOAD` onto a vessel is `vessel_loaded` at
//! the port of lading and `transshipment_loaded` at a hub. So the caller, which knows the
//! shipment's route, says where the event's place sits in it with a [`LegContext`].
//!
//! Rows that cannot be a transport event name are left to the caller: customs codes
//! (`CUSS`/`CUSI`/`CUSR`) feed `container.updated`, and `shipment.estimated.arrival` goes with
//! every `container.transport.estimated.vessel_arrived`.

use tidemark_domain::TransportEventName;

use crate::event::{
    CarrierEvent, Classifier, DcsaCode, EmptyIndicator, ModeOfTransport, RouteHint,
};

/// Where a place sits in a shipment's route.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LocationRole {
    /// Before the port of lading: the shipper's side, an origin depot or rail ramp.
    InlandOrigin,
    /// Where the container is first loaded onto the ocean vessel (POL).
    PortOfLading,
    /// A port strictly between POL and POD where the container changes vessel.
    Transshipment,
    /// Where the container is discharged from the last ocean vessel (POD).
    PortOfDischarge,
    /// A stop after the port of discharge that is not the final one, such as a rail ramp on
    /// the way.
    Inland,
    /// The place of delivery (DCSA `PDE`) when it is not the port of discharge.
    InlandDestination,
    /// Not on the known route, or the route is not known yet.
    #[default]
    Unknown,
}

/// How far the container has come, for the rules that depend on it rather than on the place
/// (an empty depot is rarely on the route).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JourneyStage {
    /// No laden load onto a vessel yet.
    BeforeFirstLoad,
    /// Between the first load and the full-out at destination.
    #[default]
    Underway,
    /// The full container has left the destination terminal or ramp.
    AfterFullOut,
}

/// What the route says about one event's place, given by the caller of [`t49_event_name`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LegContext {
    /// Where the event's UN/LOCODE sits in the route.
    pub role: LocationRole,
    /// The event's vessel leg is a feeder leg (a short-sea leg that is not the main ocean
    /// leg), as the route rules decide. Barge legs are feeder legs whatever this says.
    pub feeder_leg: bool,
    pub stage: JourneyStage,
}

impl LegContext {
    /// A context for a place with the given role, on a main leg, with the container underway.
    pub fn at(role: LocationRole) -> Self {
        Self {
            role,
            ..Self::default()
        }
    }

    /// The same context on a feeder leg.
    #[must_use]
    pub fn on_feeder_leg(self) -> Self {
        Self {
            feeder_leg: true,
            ..self
        }
    }

    /// The same context at another stage of the journey.
    #[must_use]
    pub fn in_stage(self, stage: JourneyStage) -> Self {
        Self { stage, ..self }
    }
}

/// What carries the container on the event's transport call, as the mapping sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leg {
    /// An ocean vessel on the main route.
    Mainline,
    /// A barge, or a vessel on a leg the route rules call a feeder.
    Feeder,
    Rail,
    Truck,
    /// No transport call, or no mode on it, away from the ocean route.
    Unknown,
}

impl Leg {
    /// The leg from the call's mode ([`CarrierEvent::inferred_mode`]). Without one, a move
    /// at a port of the ocean route (lading, transshipment, discharge) is taken as the
    /// vessel's: DCSA 3.0.0 equipment events usually carry no transport details at all,
    /// and a load or discharge at a seaport is onto or off a ship unless the carrier says
    /// otherwise.
    fn of(event: &CarrierEvent, context: &LegContext) -> Self {
        let on_ocean_route = matches!(
            context.role,
            LocationRole::PortOfLading
                | LocationRole::Transshipment
                | LocationRole::PortOfDischarge
        );
        match event.inferred_mode() {
            Some(ModeOfTransport::Vessel) if context.feeder_leg => Self::Feeder,
            Some(ModeOfTransport::Vessel) => Self::Mainline,
            Some(ModeOfTransport::Barge) => Self::Feeder,
            Some(ModeOfTransport::Rail) => Self::Rail,
            Some(ModeOfTransport::Truck) => Self::Truck,
            None if on_ocean_route && context.feeder_leg => Self::Feeder,
            None if on_ocean_route => Self::Mainline,
            None => Self::Unknown,
        }
    }
}

/// The Terminal49 transport event an event stands for at its place in the route, or `None`
/// when it has no such milestone (it stays a raw event).
///
/// Estimates (`EST`, and `PLN`, which CMA CGM sends for its arrivals and departures) map to
/// `container.transport.estimated.*` whatever their time; where a call has both, the `EST`
/// is the better estimate and the caller keeps it over the `PLN`; emitting one only when the estimate changed is the caller's job, as
/// is emitting `shipment.estimated.arrival` with `estimated.vessel_arrived`. Transport events
/// describe a vessel's call, so the caller also fans them out to every container on it.
pub fn t49_event_name(event: &CarrierEvent, context: &LegContext) -> Option<TransportEventName> {
    use Classifier::{Actual, Estimated, Planned};
    use DcsaCode::{Arri, Avpu, Depa, Disc, Gtin, Gtot, Load};
    use EmptyIndicator::{Empty, Laden};
    use LocationRole::{
        Inland, InlandDestination, InlandOrigin, PortOfDischarge, PortOfLading, Transshipment,
        Unknown,
    };
    use TransportEventName as T;

    let facility = event.facility_type_code();
    let stage = context.stage;
    let destination_side = matches!(context.role, PortOfDischarge | Inland | InlandDestination);
    // The carrier's word that the move is on the import side (3.0.0 `movementType`): an
    // empty box gated in there is the empty returned, whatever else the answer shows.
    let import_move = event.route_hint == Some(RouteHint::ImportMove);

    // A load or discharge whose emptiness the carrier leaves out is a booked box's, laden:
    // an empty container's move is flagged `EMPTY`. Gate moves still need the indicator,
    // since an unflagged gate-out could be the empty pick-up.
    let empty_indicator = match (event.dcsa_code, event.empty_indicator) {
        (Load | Disc, None) => Some(Laden),
        (_, indicator) => indicator,
    };
    let name = match (
        event.dcsa_code,
        event.classifier,
        empty_indicator,
        Leg::of(event, context),
        context.role,
    ) {
        // Origin.
        (Gtot, Actual, Some(Empty), _, InlandOrigin | PortOfLading) => T::EmptyOut,
        // Empty depots are seldom on the route; before the first load, a depot is origin side.
        (Gtot, Actual, Some(Empty), _, Unknown) if stage == JourneyStage::BeforeFirstLoad => {
            T::EmptyOut
        }
        (Gtin, Actual, Some(Laden), _, PortOfLading) if matches!(facility, None | Some("POTE")) => {
            T::FullIn
        }
        (Gtin, Actual, Some(Laden), _, InlandOrigin) if facility == Some("RAMP") => T::FullIn,
        (Load, Actual, Some(Laden), Leg::Mainline, PortOfLading) => T::VesselLoaded,
        (Depa, Actual, _, Leg::Mainline, PortOfLading) => T::VesselDeparted,
        (Depa, Estimated | Planned, _, Leg::Mainline, PortOfLading) => T::EstimatedVesselDeparted,

        // Transshipment.
        (Arri, Actual, _, Leg::Mainline, Transshipment) => T::TransshipmentArrived,
        (Disc, Actual, Some(Laden), Leg::Mainline, Transshipment) => T::TransshipmentDischarged,
        (Load, Actual, Some(Laden), Leg::Mainline, Transshipment) => T::TransshipmentLoaded,
        (Depa, Actual, _, Leg::Mainline, Transshipment) => T::TransshipmentDeparted,

        // Feeder vessel or barge.
        (Arri, Actual, _, Leg::Feeder, _) => T::FeederArrived,
        (Depa, Actual, _, Leg::Feeder, _) => T::FeederDeparted,
        (Load, Actual, Some(Laden), Leg::Feeder, InlandOrigin | PortOfLading | Transshipment) => {
            T::FeederLoaded
        }
        (Disc, Actual, Some(Laden), Leg::Feeder, _) => T::FeederDischarged,

        // Destination. DCSA T&T has no berthing code; a carrier that marks the berth with
        // facility type BRTH tells us, and ARRI otherwise may mean the pilot station.
        (Arri, Actual, _, Leg::Mainline, PortOfDischarge) if facility == Some("BRTH") => {
            T::VesselBerthed
        }
        (Arri, Actual, _, Leg::Mainline, PortOfDischarge) => T::VesselArrived,
        (Arri, Estimated | Planned, _, Leg::Mainline, PortOfDischarge) => T::EstimatedVesselArrived,
        (Disc, Actual, Some(Laden), Leg::Mainline, PortOfDischarge) => T::VesselDischarged,
        (Avpu, Actual, Some(Laden), _, PortOfDischarge | InlandDestination) => T::Available,
        (Gtot, Actual, Some(Laden), _, PortOfDischarge | InlandDestination) => T::FullOut,
        (Gtin, Actual, Some(Empty), _, _) if stage == JourneyStage::AfterFullOut || import_move => {
            T::EmptyIn
        }

        // Rail and the final inland leg, on the destination side where Terminal49 tracks them.
        (Load, Actual, Some(Laden), Leg::Rail, _) if destination_side => T::RailLoaded,
        (Depa, Actual, _, Leg::Rail, _) if destination_side => T::RailDeparted,
        (Arri, Actual, _, Leg::Rail | Leg::Truck, InlandDestination) => {
            T::ArrivedAtInlandDestination
        }
        (Arri, Estimated | Planned, _, Leg::Rail | Leg::Truck, InlandDestination) => {
            T::EstimatedArrivedAtInlandDestination
        }
        (Arri, Actual, _, Leg::Rail, PortOfDischarge | Inland) => T::RailArrived,
        (Disc, Actual, Some(Laden), Leg::Rail, _) if destination_side => T::RailUnloaded,

        // Everything else stays a raw event: other codes (STUF, DROP, customs…), shipment
        // events, estimates Terminal49 has no name for, and events off the known route.
        _ => return None,
    };
    Some(name)
}
