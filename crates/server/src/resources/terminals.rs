//! `terminal`: a container terminal of the reference data.

use serde::Serialize;
use tidemark_geo::reference::{ReferenceData, Terminal};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::resources::jsonapi::{
    Included, Relationships, Resource, ResourceIdentifier, included_object,
};

#[derive(Debug, Serialize, ToSchema)]
pub struct TerminalAttributes {
    pub id: String,
    pub name: String,
    pub nickname: Option<String>,
    /// CBP FIRMS code.
    pub firms_code: Option<String>,
    pub smdg_code: Option<String>,
    pub bic_facility_code: Option<String>,
    pub street: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub state_abbr: Option<String>,
    pub zip: Option<String>,
    pub country: Option<String>,
    pub facility_type: String,
    /// Which container fields Tidemark fills for boxes at this terminal.
    pub provided_data: TerminalProvidedData,
}

/// Which container fields Tidemark fills at a terminal, in Terminal49's shape. Tidemark
/// reads no terminal systems: what it knows comes from the carrier's events, the same at
/// every terminal.
#[derive(Debug, Serialize, ToSchema)]
pub struct TerminalProvidedData {
    pub available_for_pickup: bool,
    pub available_for_pickup_notes: &'static str,
    pub pod_full_out_at: bool,
    pub pod_full_out_at_notes: &'static str,
    pub empty_terminated_at: bool,
    pub empty_terminated_at_notes: &'static str,
    pub pickup_lfd: bool,
    pub pickup_lfd_notes: &'static str,
    pub pickup_appointment_at: bool,
    pub pickup_appointment_at_notes: &'static str,
    pub holds_at_pod_terminal: bool,
    pub holds_at_pod_terminal_notes: &'static str,
    pub fees_at_pod_terminal: bool,
    pub fees_at_pod_terminal_notes: &'static str,
    pub location_at_pod_terminal: bool,
    pub location_at_pod_terminal_notes: &'static str,
    pub pod_full_out_chassis_number: bool,
    pub pod_full_out_chassis_number_notes: &'static str,
}

const NO_TERMINAL_SYSTEM: &str = "Tidemark does not read terminal systems.";

const FROM_CARRIER_EVENTS: TerminalProvidedData = TerminalProvidedData {
    available_for_pickup: true,
    available_for_pickup_notes: "From the carrier's events, when it reports availability.",
    pod_full_out_at: true,
    pod_full_out_at_notes: "From the carrier's events (gate out full at the port of discharge).",
    empty_terminated_at: true,
    empty_terminated_at_notes: "From the carrier's events (gate in empty).",
    pickup_lfd: false,
    pickup_lfd_notes: NO_TERMINAL_SYSTEM,
    pickup_appointment_at: false,
    pickup_appointment_at_notes: NO_TERMINAL_SYSTEM,
    holds_at_pod_terminal: false,
    holds_at_pod_terminal_notes: NO_TERMINAL_SYSTEM,
    fees_at_pod_terminal: false,
    fees_at_pod_terminal_notes: NO_TERMINAL_SYSTEM,
    location_at_pod_terminal: false,
    location_at_pod_terminal_notes: NO_TERMINAL_SYSTEM,
    pod_full_out_chassis_number: false,
    pod_full_out_chassis_number_notes: NO_TERMINAL_SYSTEM,
};

pub struct TerminalResource<'a> {
    pub terminal: &'a Terminal,
    pub port_id: Option<Uuid>,
}

impl Resource for TerminalResource<'_> {
    const TYPE: &'static str = "terminal";
    const PATH: &'static str = "terminals";
    type Attributes = TerminalAttributes;

    fn id(&self) -> String {
        self.terminal.id.to_string()
    }

    fn attributes(&self) -> TerminalAttributes {
        let t = self.terminal;
        TerminalAttributes {
            id: t.id.to_string(),
            name: t.name.clone(),
            nickname: t.nickname.clone(),
            firms_code: t.firms_code.clone(),
            smdg_code: t.smdg_code.clone(),
            bic_facility_code: t.bic_facility_code.clone(),
            street: t.street.clone(),
            city: t.city.clone(),
            state: t.state.clone(),
            state_abbr: t.state_abbr.clone(),
            zip: t.zip.clone(),
            country: t.country.clone(),
            facility_type: t.facility_type.clone(),
            provided_data: FROM_CARRIER_EVENTS,
        }
    }

    fn relationships(&self) -> Relationships {
        Relationships::default()
            .one(
                "port",
                self.port_id.map(|id| ResourceIdentifier::new("port", id)),
            )
            // The metro area of a terminal is its port's city (Terminal49 relates both).
            .one(
                "metro_area",
                self.port_id.map(|_| {
                    ResourceIdentifier::new(
                        "metro_area",
                        tidemark_geo::reference::metro_area_id(&self.terminal.port_locode),
                    )
                }),
            )
    }
}

/// The terminal with this id as an included resource, with its port.
pub fn terminal_object(reference: &ReferenceData, id: Uuid, base: &str) -> Option<Included> {
    let terminal = reference.terminal(id)?;
    let port_id = reference
        .port_by_locode(&terminal.port_locode)
        .map(|port| port.id);
    Some(included_object(
        &TerminalResource { terminal, port_id },
        base,
    ))
}

/// The terminals with these ids as included resources, each once, in the order first named;
/// ids that are not reference terminals are left out.
pub fn terminal_objects(
    reference: &ReferenceData,
    ids: impl IntoIterator<Item = Uuid>,
    base: &str,
) -> Vec<Included> {
    let mut seen = std::collections::HashSet::new();
    ids.into_iter()
        .filter(|id| seen.insert(*id))
        .filter_map(|id| terminal_object(reference, id, base))
        .collect()
}
