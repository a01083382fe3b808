//! One test per row group of `reference/dcsa/dcsa_to_t49_event_mapping.csv`.

use chrono::{TimeZone, Utc};
use tidemark_carriers::dcsa::{JourneyStage, LegContext, LocationRole, t49_event_name};
use tidemark_carriers::{
    CarrierEvent, Classifier, DcsaCode, EmptyIndicator, ModeOfTransport, RouteHint, TransportCall,
};
use tidemark_domain::TransportEventName as T;

use Classifier::{Actual, Estimated, Planned};
use DcsaCode::{Arri, Depa, Disc, Gtin, Gtot, Load};
use EmptyIndicator::{Empty, Laden};
use LocationRole::{
    Inland, InlandDestination, InlandOrigin, PortOfDischarge, PortOfLading, Transshipment, Unknown,
};
use ModeOfTransport::{Barge, Rail, Truck, Vessel};

/// An event with the given code, classifier and empty indicator on a transport call of the
/// given mode (none when `mode` is `None`).
fn event(
    code: DcsaCode,
    classifier: Classifier,
    empty: Option<EmptyIndicator>,
    mode: Option<ModeOfTransport>,
) -> CarrierEvent {
    CarrierEvent {
        event_id: Some("e-1".to_owned()),
        kind: code.kind(),
        dcsa_code: code,
        classifier,
        event_datetime: Utc
            .with_ymd_and_hms(2024, 3, 1, 12, 0, 0)
            .single()
            .expect("a valid date"),
        event_created_datetime: None,
        equipment_reference: Some("CSQU3054383".to_owned()),
        iso_equipment_code: None,
        empty_indicator: empty,
        un_location_code: Some("NLRTM".to_owned()),
        location_name: None,
        transport_call: mode.map(|mode| TransportCall {
            mode_of_transport: Some(mode),
            ..TransportCall::default()
        }),
        document_references: Vec::new(),
        references: Vec::new(),
        route_hint: None,
    }
}

fn equipment(code: DcsaCode, empty: EmptyIndicator, mode: ModeOfTransport) -> CarrierEvent {
    event(code, Actual, Some(empty), Some(mode))
}

fn transport(code: DcsaCode, classifier: Classifier, mode: ModeOfTransport) -> CarrierEvent {
    event(code, classifier, None, Some(mode))
}

fn with_facility(mut event: CarrierEvent, facility_type: &str) -> CarrierEvent {
    if let Some(call) = event.transport_call.as_mut() {
        call.facility_type_code = Some(facility_type.to_owned());
    }
    event
}

fn at(role: LocationRole) -> LegContext {
    LegContext::at(role)
}

#[test]
fn an_empty_gate_out_on_the_origin_side_is_empty_out() {
    let gate_out = event(Gtot, Actual, Some(Empty), None);

    assert_eq!(
        t49_event_name(&gate_out, &at(InlandOrigin)),
        Some(T::EmptyOut)
    );
    assert_eq!(
        t49_event_name(&gate_out, &at(PortOfLading)),
        Some(T::EmptyOut)
    );
    assert_eq!(
        t49_event_name(
            &gate_out,
            &at(Unknown).in_stage(JourneyStage::BeforeFirstLoad)
        ),
        Some(T::EmptyOut)
    );
    assert_eq!(t49_event_name(&gate_out, &at(Unknown)), None);
    assert_eq!(t49_event_name(&gate_out, &at(PortOfDischarge)), None);
}

#[test]
fn a_laden_gate_in_at_the_port_of_lading_terminal_or_origin_ramp_is_full_in() {
    let gate_in = event(Gtin, Actual, Some(Laden), None);
    let at_terminal = with_facility(equipment(Gtin, Laden, Truck), "POTE");
    let at_ramp = with_facility(equipment(Gtin, Laden, Rail), "RAMP");
    let at_depot = with_facility(equipment(Gtin, Laden, Truck), "DEPO");

    assert_eq!(t49_event_name(&gate_in, &at(PortOfLading)), Some(T::FullIn));
    assert_eq!(
        t49_event_name(&at_terminal, &at(PortOfLading)),
        Some(T::FullIn)
    );
    assert_eq!(t49_event_name(&at_ramp, &at(InlandOrigin)), Some(T::FullIn));
    assert_eq!(t49_event_name(&at_depot, &at(PortOfLading)), None);
    assert_eq!(t49_event_name(&gate_in, &at(InlandOrigin)), None);
}

#[test]
fn a_laden_load_onto_a_vessel_at_the_port_of_lading_is_vessel_loaded() {
    let load = equipment(Load, Laden, Vessel);

    assert_eq!(
        t49_event_name(&load, &at(PortOfLading)),
        Some(T::VesselLoaded)
    );
}

#[test]
fn a_laden_load_onto_a_barge_or_feeder_before_the_port_of_discharge_is_feeder_loaded() {
    let barge = equipment(Load, Laden, Barge);
    let feeder_vessel = equipment(Load, Laden, Vessel);

    assert_eq!(
        t49_event_name(&barge, &at(InlandOrigin)),
        Some(T::FeederLoaded)
    );
    assert_eq!(
        t49_event_name(&barge, &at(Transshipment)),
        Some(T::FeederLoaded)
    );
    assert_eq!(
        t49_event_name(&feeder_vessel, &at(PortOfLading).on_feeder_leg()),
        Some(T::FeederLoaded)
    );
    assert_eq!(t49_event_name(&barge, &at(PortOfDischarge)), None);
}

#[test]
fn laden_moves_at_a_transshipment_port_are_transshipment_discharged_and_loaded() {
    let discharge = equipment(Disc, Laden, Vessel);
    let load = equipment(Load, Laden, Vessel);

    assert_eq!(
        t49_event_name(&discharge, &at(Transshipment)),
        Some(T::TransshipmentDischarged)
    );
    assert_eq!(
        t49_event_name(&load, &at(Transshipment)),
        Some(T::TransshipmentLoaded)
    );
}

#[test]
fn a_laden_discharge_from_a_barge_anywhere_is_feeder_discharged() {
    let discharge = equipment(Disc, Laden, Barge);

    assert_eq!(
        t49_event_name(&discharge, &at(Transshipment)),
        Some(T::FeederDischarged)
    );
    assert_eq!(
        t49_event_name(&discharge, &at(PortOfDischarge)),
        Some(T::FeederDischarged)
    );
    assert_eq!(
        t49_event_name(&discharge, &at(Unknown)),
        Some(T::FeederDischarged)
    );
}

#[test]
fn a_laden_discharge_from_a_vessel_at_the_port_of_discharge_is_vessel_discharged() {
    let discharge = equipment(Disc, Laden, Vessel);

    assert_eq!(
        t49_event_name(&discharge, &at(PortOfDischarge)),
        Some(T::VesselDischarged)
    );
}

#[test]
fn laden_rail_moves_inland_are_rail_loaded_and_unloaded() {
    let load = equipment(Load, Laden, Rail);
    let discharge = equipment(Disc, Laden, Rail);

    assert_eq!(
        t49_event_name(&load, &at(PortOfDischarge)),
        Some(T::RailLoaded)
    );
    assert_eq!(t49_event_name(&load, &at(Inland)), Some(T::RailLoaded));
    assert_eq!(
        t49_event_name(&discharge, &at(InlandDestination)),
        Some(T::RailUnloaded)
    );
    // Terminal49 tracks rail on the import side only.
    assert_eq!(t49_event_name(&load, &at(InlandOrigin)), None);
}

#[test]
fn available_for_pickup_at_the_destination_is_available() {
    let available = event(DcsaCode::Avpu, Actual, Some(Laden), None);

    assert_eq!(
        t49_event_name(&available, &at(PortOfDischarge)),
        Some(T::Available)
    );
    assert_eq!(
        t49_event_name(&available, &at(InlandDestination)),
        Some(T::Available)
    );
    assert_eq!(t49_event_name(&available, &at(PortOfLading)), None);
}

#[test]
fn a_laden_gate_out_at_the_destination_is_full_out() {
    let gate_out = equipment(Gtot, Laden, Truck);

    assert_eq!(
        t49_event_name(&gate_out, &at(PortOfDischarge)),
        Some(T::FullOut)
    );
    assert_eq!(
        t49_event_name(&gate_out, &at(InlandDestination)),
        Some(T::FullOut)
    );
    assert_eq!(t49_event_name(&gate_out, &at(PortOfLading)), None);
}

#[test]
fn an_empty_gate_in_after_full_out_is_empty_in() {
    let gate_in = event(Gtin, Actual, Some(Empty), None);

    assert_eq!(
        t49_event_name(&gate_in, &at(Unknown).in_stage(JourneyStage::AfterFullOut)),
        Some(T::EmptyIn)
    );
    assert_eq!(t49_event_name(&gate_in, &at(PortOfDischarge)), None);
}

#[test]
fn an_empty_gate_in_the_carrier_calls_an_import_move_is_empty_in_without_a_full_out() {
    let mut gate_in = event(Gtin, Actual, Some(Empty), None);
    gate_in.route_hint = Some(RouteHint::ImportMove);

    for stage in [JourneyStage::BeforeFirstLoad, JourneyStage::Underway] {
        assert_eq!(
            t49_event_name(&gate_in, &at(Unknown).in_stage(stage)),
            Some(T::EmptyIn),
            "{stage:?}"
        );
    }
}

#[test]
fn an_empty_gate_in_on_the_export_side_is_no_empty_in() {
    let mut gate_in = event(Gtin, Actual, Some(Empty), None);
    gate_in.route_hint = Some(RouteHint::ExportMove);

    assert_eq!(
        t49_event_name(
            &gate_in,
            &at(Unknown).in_stage(JourneyStage::BeforeFirstLoad)
        ),
        None
    );
}

#[test]
fn iot_and_reefer_events_are_never_milestones() {
    for code in [DcsaCode::Detc, DcsaCode::Meas, DcsaCode::Adju] {
        let reading = event(code, Actual, None, Some(Vessel));
        for role in [PortOfLading, Transshipment, PortOfDischarge, Unknown] {
            assert_eq!(t49_event_name(&reading, &at(role)), None, "{code} {role:?}");
        }
    }
}

#[test]
fn a_drop_off_at_the_consignee_stays_a_raw_event() {
    let drop = with_facility(equipment(DcsaCode::Drop, Laden, Truck), "CLOC");

    assert_eq!(t49_event_name(&drop, &at(InlandDestination)), None);
}

#[test]
fn customs_events_are_not_transport_events() {
    for code in [DcsaCode::Cuss, DcsaCode::Cusi, DcsaCode::Cusr] {
        let customs = equipment(code, Laden, Truck);

        assert_eq!(
            t49_event_name(&customs, &at(PortOfDischarge)),
            None,
            "{code}"
        );
    }
}

#[test]
fn equipment_codes_without_a_milestone_stay_raw_events() {
    let codes = [
        DcsaCode::Stuf,
        DcsaCode::Strp,
        DcsaCode::Pick,
        DcsaCode::Insp,
        DcsaCode::Rsea,
        DcsaCode::Rmvd,
        DcsaCode::Avdo,
        DcsaCode::Cros,
    ];

    for code in codes {
        for role in [
            InlandOrigin,
            PortOfLading,
            PortOfDischarge,
            InlandDestination,
        ] {
            let raw = equipment(code, Laden, Vessel);

            assert_eq!(t49_event_name(&raw, &at(role)), None, "{code} at {role:?}");
        }
    }
}

#[test]
fn an_actual_vessel_departure_from_the_port_of_lading_is_vessel_departed() {
    let departure = transport(Depa, Actual, Vessel);

    assert_eq!(
        t49_event_name(&departure, &at(PortOfLading)),
        Some(T::VesselDeparted)
    );
}

#[test]
fn an_estimated_or_planned_departure_from_the_port_of_lading_is_estimated_vessel_departed() {
    let estimated = transport(Depa, Estimated, Vessel);
    let planned = transport(Depa, Planned, Vessel);

    assert_eq!(
        t49_event_name(&estimated, &at(PortOfLading)),
        Some(T::EstimatedVesselDeparted)
    );
    assert_eq!(
        t49_event_name(&planned, &at(PortOfLading)),
        Some(T::EstimatedVesselDeparted)
    );
}

#[test]
fn actual_vessel_calls_at_a_transshipment_port_are_transshipment_arrived_and_departed() {
    let arrival = transport(Arri, Actual, Vessel);
    let departure = transport(Depa, Actual, Vessel);
    let estimate = transport(Arri, Estimated, Vessel);

    assert_eq!(
        t49_event_name(&arrival, &at(Transshipment)),
        Some(T::TransshipmentArrived)
    );
    assert_eq!(
        t49_event_name(&departure, &at(Transshipment)),
        Some(T::TransshipmentDeparted)
    );
    // Terminal49 has no estimated transshipment events.
    assert_eq!(t49_event_name(&estimate, &at(Transshipment)), None);
}

#[test]
fn barge_and_feeder_calls_anywhere_are_feeder_arrived_and_departed() {
    let arrival = transport(Arri, Actual, Barge);
    let departure = transport(Depa, Actual, Barge);
    let feeder_arrival = transport(Arri, Actual, Vessel);

    assert_eq!(
        t49_event_name(&arrival, &at(Unknown)),
        Some(T::FeederArrived)
    );
    assert_eq!(
        t49_event_name(&departure, &at(InlandOrigin)),
        Some(T::FeederDeparted)
    );
    assert_eq!(
        t49_event_name(&feeder_arrival, &at(Transshipment).on_feeder_leg()),
        Some(T::FeederArrived)
    );
}

#[test]
fn an_actual_vessel_arrival_at_the_port_of_discharge_is_vessel_arrived() {
    let arrival = transport(Arri, Actual, Vessel);

    assert_eq!(
        t49_event_name(&arrival, &at(PortOfDischarge)),
        Some(T::VesselArrived)
    );
    assert_eq!(t49_event_name(&arrival, &at(PortOfLading)), None);
}

#[test]
fn an_estimated_arrival_at_the_port_of_discharge_is_estimated_vessel_arrived() {
    let estimated = transport(Arri, Estimated, Vessel);

    assert_eq!(
        t49_event_name(&estimated, &at(PortOfDischarge)),
        Some(T::EstimatedVesselArrived)
    );
}

#[test]
fn a_planned_arrival_at_the_port_of_discharge_is_an_estimated_vessel_arrival_as_a_departure_is() {
    // CMA CGM sends its arrivals as PLN only; read like EST, as planned departures are.
    let planned = transport(Arri, Planned, Vessel);

    assert_eq!(
        t49_event_name(&planned, &at(PortOfDischarge)),
        Some(T::EstimatedVesselArrived)
    );
}

#[test]
fn an_arrival_at_a_berth_of_the_port_of_discharge_is_vessel_berthed() {
    let at_berth = with_facility(transport(Arri, Actual, Vessel), "BRTH");

    assert_eq!(
        t49_event_name(&at_berth, &at(PortOfDischarge)),
        Some(T::VesselBerthed)
    );
}

#[test]
fn rail_calls_inland_are_rail_departed_and_rail_arrived() {
    let departure = transport(Depa, Actual, Rail);
    let arrival = transport(Arri, Actual, Rail);

    assert_eq!(
        t49_event_name(&departure, &at(PortOfDischarge)),
        Some(T::RailDeparted)
    );
    assert_eq!(t49_event_name(&arrival, &at(Inland)), Some(T::RailArrived));
}

#[test]
fn arriving_by_rail_or_truck_at_the_final_inland_destination_is_arrived_at_inland_destination() {
    let by_rail = transport(Arri, Actual, Rail);
    let by_truck = transport(Arri, Actual, Truck);

    assert_eq!(
        t49_event_name(&by_rail, &at(InlandDestination)),
        Some(T::ArrivedAtInlandDestination)
    );
    assert_eq!(
        t49_event_name(&by_truck, &at(InlandDestination)),
        Some(T::ArrivedAtInlandDestination)
    );
    assert_eq!(t49_event_name(&by_truck, &at(Inland)), None);
}

#[test]
fn an_estimated_arrival_at_the_final_inland_destination_is_estimated_arrived_at_inland_destination()
{
    let estimated = transport(Arri, Estimated, Rail);
    let planned = transport(Arri, Planned, Truck);

    assert_eq!(
        t49_event_name(&estimated, &at(InlandDestination)),
        Some(T::EstimatedArrivedAtInlandDestination)
    );
    assert_eq!(
        t49_event_name(&planned, &at(InlandDestination)),
        Some(T::EstimatedArrivedAtInlandDestination)
    );
}

#[test]
fn shipment_events_are_document_statuses_only() {
    for code in [
        DcsaCode::Conf,
        DcsaCode::Issu,
        DcsaCode::Rels,
        DcsaCode::Hold,
    ] {
        let status = event(code, Actual, None, None);

        assert_eq!(t49_event_name(&status, &at(PortOfLading)), None, "{code}");
    }
}

#[test]
fn empty_or_estimated_equipment_moves_have_no_milestone() {
    // The DCSA sample's LOAD events are estimated and empty.
    let estimated_empty_load = event(Load, Estimated, Some(Empty), Some(Vessel));
    let estimated_laden_load = event(Load, Estimated, Some(Laden), Some(Vessel));
    let empty_load = event(Load, Actual, Some(Empty), Some(Vessel));

    for load in [estimated_empty_load, estimated_laden_load, empty_load] {
        assert_eq!(t49_event_name(&load, &at(PortOfLading)), None);
    }
}

#[test]
fn a_load_without_an_empty_indicator_is_a_laden_boxs() {
    let load = event(Load, Actual, None, Some(Vessel));

    assert_eq!(
        t49_event_name(&load, &at(PortOfLading)),
        Some(T::VesselLoaded)
    );
}

#[test]
fn a_move_without_a_mode_at_a_port_of_the_ocean_route_is_the_vessels() {
    // DCSA 3.0.0 equipment events usually carry no transport details at all.
    let load = event(Load, Actual, Some(Laden), None);
    let discharge = event(Disc, Actual, Some(Laden), None);

    assert_eq!(
        t49_event_name(&load, &at(PortOfLading)),
        Some(T::VesselLoaded)
    );
    assert_eq!(
        t49_event_name(&discharge, &at(PortOfDischarge)),
        Some(T::VesselDischarged)
    );
    assert_eq!(
        t49_event_name(&discharge, &at(Transshipment)),
        Some(T::TransshipmentDischarged)
    );
}

#[test]
fn a_move_without_a_mode_off_the_ocean_route_has_no_milestone() {
    let load = event(Load, Actual, Some(Laden), None);

    assert_eq!(t49_event_name(&load, &at(Unknown)), None);
    assert_eq!(t49_event_name(&load, &at(InlandDestination)), None);
}

#[test]
fn a_call_that_names_a_vessel_is_a_vessel_leg_without_a_mode() {
    let mut arrival = event(Arri, Actual, None, None);
    arrival.transport_call = Some(TransportCall {
        vessel_name: Some("MAERSK ESSEX".to_owned()),
        ..TransportCall::default()
    });

    assert_eq!(arrival.inferred_mode(), Some(Vessel));
    assert_eq!(
        t49_event_name(&arrival, &at(PortOfDischarge)),
        Some(T::VesselArrived)
    );
}
