//! Which configured terminal is asked about a container whose carrier named its POD
//! terminal: the shipment's `pod_terminal_id` is one of the reference terminals
//! ([`tidemark_geo::reference`]), a profile's facilities are matched to them here.
//!
//! A facility is every reference terminal at its port (its UN/LOCODE) with
//! - its SMDG code: the facility's `smdg`, else its `code` (Port of Virginia's `NIT`, `VIG`),
//! - its CBP FIRMS code (`firms`), or
//! - its name, as the reference terminal's name or nickname, ignoring case and the
//!   parenthesised abbreviation the SMDG list adds (`NORFOLK INTERNATIONAL TERMINALS (NIT)`).
//!
//! Every match counts, not the first: the reference data holds some terminals twice (a
//! curated row and the SMDG list's, under different names), and a carrier may name either.
//! A facility that only names a port (eModal's "Los Angeles terminals on eModal") matches no
//! terminal: such a source is asked only about containers whose POD terminal no other
//! configured terminal reaches.

use std::collections::BTreeSet;

use tidemark_geo::reference::{ReferenceData, Terminal};
use tidemark_terminals::profile::{Facility, TerminalProfile};
use uuid::Uuid;

use crate::use_cases::terminals::Context;

fn same(known: Option<&str>, named: Option<&str>) -> bool {
    match (known, named) {
        (Some(known), Some(named)) => {
            let (known, named) = (known.trim(), named.trim());
            !known.is_empty() && known.eq_ignore_ascii_case(named)
        }
        _ => false,
    }
}

/// A name without a trailing parenthesised abbreviation: `MAHER (MCT)` is `MAHER`.
fn bare(name: &str) -> &str {
    name.trim()
        .strip_suffix(')')
        .and_then(|name| name.rsplit_once(" ("))
        .map_or(name.trim(), |(bare, _)| bare.trim())
}

/// Whether the reference terminal `terminal` is the facility (see the module's rules).
pub fn is_facility(terminal: &Terminal, facility: &Facility) -> bool {
    let smdg = facility.smdg.as_deref().or(facility.code.as_deref());
    let name = Some(facility.name.as_str());
    same(terminal.smdg_code.as_deref(), smdg)
        || same(terminal.firms_code.as_deref(), facility.firms.as_deref())
        || same(Some(&terminal.name), name)
        || same(Some(bare(&terminal.name)), name)
        || same(terminal.nickname.as_deref(), name)
}

/// The reference terminals a profile's facilities are.
pub fn terminals_of(reference: &ReferenceData, profile: &TerminalProfile) -> BTreeSet<Uuid> {
    profile
        .facilities
        .value
        .iter()
        .flatten()
        .flat_map(|facility| {
            reference
                .terminals_at_port(&facility.locode)
                .into_iter()
                .filter(|terminal| is_facility(terminal, facility))
                .map(|terminal| terminal.id)
        })
        .collect()
}

/// The POD terminals other configured terminals reach and `terminal` does not: a container
/// whose shipment names one of them is not asked of `terminal`. Empty for the sandbox,
/// which answers for its own line wherever it goes.
pub fn other_terminals(context: &Context<'_>, terminal: &str) -> Vec<Uuid> {
    let Some(own) = context.terminals.get(terminal) else {
        return Vec::new();
    };
    if terminal == super::SANDBOX {
        return Vec::new();
    }
    let own = terminals_of(context.reference, own.profile());
    let others: BTreeSet<Uuid> = context
        .terminals
        .iter()
        .filter(|&(id, _)| id != terminal && id != super::SANDBOX)
        .flat_map(|(_, connector)| terminals_of(context.reference, connector.profile()))
        .collect();
    others.difference(&own).copied().collect()
}

#[cfg(test)]
mod tests {
    use tidemark_terminals::profile::Profiles;

    use super::*;

    fn reached(profile: &str) -> Vec<String> {
        let reference = ReferenceData::embedded();
        let profile = Profiles::embedded()
            .get(profile)
            .expect("an embedded profile");
        terminals_of(reference, profile)
            .into_iter()
            .filter_map(|id| reference.terminal(id))
            .map(|terminal| format!("{} {}", terminal.port_locode, terminal.name))
            .collect()
    }

    #[test]
    fn the_port_of_virginia_reaches_nit_and_vig_by_their_smdg_codes() {
        let mut names = reached("port_of_virginia");
        names.sort();

        assert_eq!(
            names,
            [
                "USORF Norfolk International Terminals",
                "USORF Virginia International Gateway"
            ]
        );
    }

    #[test]
    fn apm_terminals_reaches_pier_400_under_both_of_its_reference_names() {
        let names = reached("apm_terminals");

        assert!(
            names.contains(&"USLAX APM Terminals Pier 400".to_owned()),
            "by its FIRMS code: {names:?}"
        );
        assert!(
            names.contains(&"USLAX APM TERMINALS LOS ANGELES PIER 400".to_owned()),
            "by its SMDG code: {names:?}"
        );
        assert!(
            !names.iter().any(|name| name.contains("West Basin")),
            "{names:?}"
        );
    }

    #[test]
    fn apm_terminals_reaches_port_elizabeth_under_new_york_where_carriers_put_it() {
        let names = reached("apm_terminals");

        assert!(
            names.contains(&"USNYC APM Terminals Elizabeth".to_owned()),
            "{names:?}"
        );
        assert!(
            !names.iter().any(|name| name.contains("MAHER")),
            "{names:?}"
        );
    }

    #[test]
    fn port_houston_reaches_barbours_cut_and_bayport() {
        let names = reached("port_houston");

        assert!(
            names.contains(&"USHOU Barbours Cut Container Terminal".to_owned()),
            "{names:?}"
        );
        assert!(
            names.contains(&"USHOU BARBOURS CUT MARINE TERMINAL".to_owned()),
            "{names:?}"
        );
        assert!(
            names.contains(&"USHOU Bayport Container Terminal".to_owned()),
            "{names:?}"
        );
        assert!(
            !names.iter().any(|name| name.contains("JACINTO")),
            "{names:?}"
        );
    }

    #[test]
    fn a_source_whose_facilities_name_only_ports_reaches_no_terminal() {
        assert!(reached("emodal").is_empty());
    }
}
