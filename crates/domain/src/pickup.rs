//! What importers pay for: can the container be picked up, by when, what holds it and what
//! it costs. Terminals and EDI status messages (X12 315/322, IFTSTA) report these facts one
//! observation at a time; [`PickupFacts::apply`] folds each observation into what a
//! container shows (`holds_at_pod_terminal`, `fees_at_pod_terminal`, `pickup_lfd`,
//! `pickup_appointment_at`, `location_at_pod_terminal`, `terminal_checked_at`).
//!
//! Availability itself is a milestone (`available` / `not_available` transport events), so
//! it is not kept here.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

/// Terminal49's hold names (`holds_at_pod_terminal[].name`).
pub const HOLD_NAMES: &[&str] = &["freight", "customs", "USDA", "VACIS", "TMF", "other"];

/// Terminal49's fee types (`fees_at_pod_terminal[].type`).
pub const FEE_TYPES: &[&str] = &["demurrage", "extended_dwell_time", "exam", "total", "other"];

/// Who set the last free day a container shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LfdSource {
    #[default]
    Terminal,
    Rail,
    Line,
}

/// One hold in force: `{name, status, description}` as Terminal49 shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PickupHold {
    /// One of [`HOLD_NAMES`].
    pub name: String,
    /// `hold` or `pending`.
    pub status: String,
    /// The sender's own words.
    pub description: String,
}

/// One fee owed: `{type, amount, currency_code}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PickupFee {
    /// One of [`FEE_TYPES`].
    #[serde(rename = "type")]
    pub kind: String,
    /// A decimal as text (`"285.00"`), `None` when the sender says a fee runs but not how
    /// much.
    pub amount: Option<String>,
    pub currency_code: Option<String>,
}

/// What a container shows about its pick-up, as last reported.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PickupFacts {
    pub last_free_day: Option<NaiveDate>,
    #[serde(default)]
    pub lfd_source: LfdSource,
    /// The line's own last free day, kept beside the terminal's.
    #[serde(default)]
    pub line_last_free_day: Option<NaiveDate>,
    #[serde(default)]
    pub rail_last_free_day: Option<NaiveDate>,
    #[serde(default)]
    pub holds: Vec<PickupHold>,
    #[serde(default)]
    pub fees: Vec<PickupFee>,
    pub appointment_at: Option<DateTime<Utc>>,
    pub location: Option<String>,
    /// When a terminal or feed last reported on the container.
    pub checked_at: Option<DateTime<Utc>>,
}

/// The inland leg by rail, from the container's rail milestones (carrier or EDI):
/// Terminal49's `pod_rail_*` and `ind_*` fields. The railroads are those EDI statuses
/// named for each leg; [`InlandFacts::pod_rail_carrier`] and
/// [`InlandFacts::ind_rail_carrier`] are what the container shows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InlandFacts {
    pub pod_rail_loaded_at: Option<DateTime<Utc>>,
    pub pod_rail_departed_at: Option<DateTime<Utc>>,
    pub ind_eta_at: Option<DateTime<Utc>>,
    pub ind_ata_at: Option<DateTime<Utc>>,
    pub ind_rail_unloaded_at: Option<DateTime<Utc>>,
    /// The railroad (SCAC) last named for the leg leaving the port of discharge.
    #[serde(default)]
    pub pod_rail_carrier_scac: Option<String>,
    /// The railroad (SCAC) last named for the leg into the inland destination.
    #[serde(default)]
    pub ind_rail_carrier_scac: Option<String>,
}

impl InlandFacts {
    /// Folds in a railroad a status named: it becomes its leg's.
    pub fn apply_rail_carrier(&mut self, carrier: &ObservedRailCarrier) {
        let slot = match carrier.leg {
            RailLeg::FromPort => &mut self.pod_rail_carrier_scac,
            RailLeg::InlandDestination => &mut self.ind_rail_carrier_scac,
        };
        *slot = Some(carrier.scac.clone());
    }

    /// `pod_rail_carrier_scac`: the railroad named for the leg leaving the port, else the
    /// one named at the inland destination (one railroad known: one rail leg, carried by
    /// it throughout).
    pub fn pod_rail_carrier(&self) -> Option<&str> {
        self.pod_rail_carrier_scac
            .as_deref()
            .or(self.ind_rail_carrier_scac.as_deref())
    }

    /// `ind_rail_carrier_scac`: the railroad named at the inland destination, else the one
    /// named leaving the port.
    pub fn ind_rail_carrier(&self) -> Option<&str> {
        self.ind_rail_carrier_scac
            .as_deref()
            .or(self.pod_rail_carrier_scac.as_deref())
    }
}

/// The rail leg a railroad was named for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RailLeg {
    /// Leaving the port of discharge: Terminal49's `pod_rail_carrier_scac`.
    FromPort,
    /// Into the inland destination: `ind_rail_carrier_scac`.
    InlandDestination,
}

/// A railroad an EDI status named for one rail leg.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedRailCarrier {
    /// The railroad's SCAC (`BNSF`, `UP`).
    pub scac: String,
    pub leg: RailLeg,
}

/// A hold as one observation reports it: placed, pending, or lifted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedHold {
    pub name: String,
    pub state: HoldState,
    pub description: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldState {
    Hold,
    Pending,
    Released,
}

/// One report on a container's pick-up: from a terminal's answer or one EDI status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PickupObservation {
    pub container_number: String,
    pub observed_at: DateTime<Utc>,
    pub last_free_day: Option<NaiveDate>,
    pub lfd_source: LfdSource,
    /// Holds the observation names; with `complete_holds`, every hold not named is lifted
    /// (a terminal's full answer), else only those named change (one EDI status).
    pub holds: Vec<ObservedHold>,
    pub complete_holds: bool,
    /// Fees named replace those of the same type; with `complete_fees`, all of them.
    pub fees: Vec<PickupFee>,
    pub complete_fees: bool,
    pub appointment_at: Option<DateTime<Utc>>,
    pub location: Option<String>,
    /// A railroad the status named, for the container's [`InlandFacts`].
    pub rail_carrier: Option<ObservedRailCarrier>,
}

impl PickupObservation {
    /// Whether the observation names a railroad and nothing else (a rail move's status,
    /// not a terminal's word): it changes no pick-up fact, `checked_at` included.
    pub fn only_names_a_railroad(&self) -> bool {
        self.rail_carrier.is_some()
            && *self
                == Self {
                    container_number: self.container_number.clone(),
                    observed_at: self.observed_at,
                    rail_carrier: self.rail_carrier.clone(),
                    ..Self::default()
                }
    }
}

impl PickupFacts {
    /// Folds one observation in. Observations older than what was last applied still
    /// count for what they name (EDI arrives out of order) but never move `checked_at` back.
    pub fn apply(&mut self, observation: &PickupObservation) {
        if observation.only_names_a_railroad() {
            return;
        }
        if let Some(day) = observation.last_free_day {
            match observation.lfd_source {
                LfdSource::Terminal => {
                    self.last_free_day = Some(day);
                    self.lfd_source = LfdSource::Terminal;
                }
                LfdSource::Rail => {
                    self.rail_last_free_day = Some(day);
                    if self.lfd_source != LfdSource::Terminal || self.last_free_day.is_none() {
                        self.last_free_day = Some(day);
                        self.lfd_source = LfdSource::Rail;
                    }
                }
                LfdSource::Line => {
                    self.line_last_free_day = Some(day);
                    // The terminal's day is the one a trucker is held to: the line's shows
                    // only while no terminal has said.
                    if self.last_free_day.is_none() || self.lfd_source == LfdSource::Line {
                        self.last_free_day = Some(day);
                        self.lfd_source = LfdSource::Line;
                    }
                }
            }
        }
        if observation.complete_holds {
            self.holds.clear();
        }
        for hold in &observation.holds {
            self.holds.retain(|known| known.name != hold.name);
            let status = match hold.state {
                HoldState::Released => continue,
                HoldState::Hold => "hold",
                HoldState::Pending => "pending",
            };
            self.holds.push(PickupHold {
                name: hold_name(&hold.name).to_owned(),
                status: status.to_owned(),
                description: hold.description.clone(),
            });
        }
        self.holds.sort_by(|a, b| a.name.cmp(&b.name));
        if observation.complete_fees {
            self.fees.clear();
        }
        for fee in &observation.fees {
            let kind = fee_type(&fee.kind);
            self.fees.retain(|known| known.kind != kind);
            self.fees.push(PickupFee {
                kind: kind.to_owned(),
                ..fee.clone()
            });
        }
        self.fees.sort_by(|a, b| a.kind.cmp(&b.kind));
        if observation.appointment_at.is_some() {
            self.appointment_at = observation.appointment_at;
        }
        if let Some(location) = observation
            .location
            .as_ref()
            .filter(|l| !l.trim().is_empty())
        {
            self.location = Some(location.clone());
        }
        if self
            .checked_at
            .is_none_or(|checked| checked < observation.observed_at)
        {
            self.checked_at = Some(observation.observed_at);
        }
    }

    /// The terminal's own last free day, when a terminal set the one shown.
    pub fn terminal_last_free_day(&self) -> Option<NaiveDate> {
        self.last_free_day
            .filter(|_| self.lfd_source == LfdSource::Terminal)
    }

    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// A hold's name as Terminal49 spells it; anything else is `other`.
pub fn hold_name(name: &str) -> &'static str {
    HOLD_NAMES
        .iter()
        .find(|known| known.eq_ignore_ascii_case(name.trim()))
        .copied()
        .unwrap_or("other")
}

/// A fee's type as Terminal49 spells it; anything else is `other`.
pub fn fee_type(kind: &str) -> &'static str {
    FEE_TYPES
        .iter()
        .find(|known| known.eq_ignore_ascii_case(kind.trim()))
        .copied()
        .unwrap_or("other")
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 2, hour, 0, 0).unwrap()
    }

    fn hold(name: &str, state: HoldState) -> ObservedHold {
        ObservedHold {
            name: name.to_owned(),
            state,
            description: format!("{name} says so"),
        }
    }

    fn observed(hour: u32) -> PickupObservation {
        PickupObservation {
            container_number: "MSCU1234566".to_owned(),
            observed_at: at(hour),
            ..PickupObservation::default()
        }
    }

    #[test]
    fn a_released_hold_is_removed_and_others_stay() {
        let mut facts = PickupFacts::default();
        facts.apply(&PickupObservation {
            holds: vec![
                hold("customs", HoldState::Hold),
                hold("freight", HoldState::Pending),
            ],
            ..observed(1)
        });
        facts.apply(&PickupObservation {
            holds: vec![hold("customs", HoldState::Released)],
            ..observed(2)
        });

        assert_eq!(facts.holds.len(), 1);
        assert_eq!(facts.holds[0].name, "freight");
        assert_eq!(facts.holds[0].status, "pending");
    }

    #[test]
    fn a_complete_answer_lifts_the_holds_it_does_not_name() {
        let mut facts = PickupFacts::default();
        facts.apply(&PickupObservation {
            holds: vec![hold("USDA", HoldState::Hold)],
            ..observed(1)
        });
        facts.apply(&PickupObservation {
            complete_holds: true,
            ..observed(2)
        });

        assert!(facts.holds.is_empty());
    }

    #[test]
    fn an_unknown_hold_kind_is_other_and_keeps_its_words() {
        let mut facts = PickupFacts::default();
        facts.apply(&PickupObservation {
            holds: vec![hold("line hold", HoldState::Hold)],
            ..observed(1)
        });

        assert_eq!(facts.holds[0].name, "other");
        assert_eq!(facts.holds[0].description, "line hold says so");
    }

    #[test]
    fn the_terminals_last_free_day_outranks_the_lines() {
        let day = |d| NaiveDate::from_ymd_opt(2026, 3, d).unwrap();
        let mut facts = PickupFacts::default();
        facts.apply(&PickupObservation {
            last_free_day: Some(day(5)),
            lfd_source: LfdSource::Line,
            ..observed(1)
        });
        assert_eq!(facts.last_free_day, Some(day(5)));

        facts.apply(&PickupObservation {
            last_free_day: Some(day(7)),
            lfd_source: LfdSource::Terminal,
            ..observed(2)
        });
        facts.apply(&PickupObservation {
            last_free_day: Some(day(6)),
            lfd_source: LfdSource::Line,
            ..observed(3)
        });

        assert_eq!(facts.last_free_day, Some(day(7)));
        assert_eq!(facts.lfd_source, LfdSource::Terminal);
        assert_eq!(facts.line_last_free_day, Some(day(6)));
    }

    #[test]
    fn an_older_observation_never_moves_the_check_time_back() {
        let mut facts = PickupFacts::default();
        facts.apply(&observed(5));
        facts.apply(&observed(3));

        assert_eq!(facts.checked_at, Some(at(5)));
    }

    fn railroad(scac: &str, leg: RailLeg) -> ObservedRailCarrier {
        ObservedRailCarrier {
            scac: scac.to_owned(),
            leg,
        }
    }

    #[test]
    fn a_railroad_named_leaving_the_port_is_the_pod_rail_carrier() {
        let mut inland = InlandFacts::default();
        inland.apply_rail_carrier(&railroad("UP", RailLeg::FromPort));

        assert_eq!(inland.pod_rail_carrier_scac.as_deref(), Some("UP"));
        assert_eq!(inland.ind_rail_carrier_scac, None);
    }

    #[test]
    fn a_railroad_named_at_the_inland_destination_is_the_ind_rail_carrier() {
        let mut inland = InlandFacts::default();
        inland.apply_rail_carrier(&railroad("BNSF", RailLeg::InlandDestination));

        assert_eq!(inland.ind_rail_carrier_scac.as_deref(), Some("BNSF"));
        assert_eq!(inland.pod_rail_carrier_scac, None);
    }

    #[test]
    fn the_only_railroad_known_is_shown_for_both_legs() {
        let mut inland = InlandFacts::default();
        inland.apply_rail_carrier(&railroad("BNSF", RailLeg::InlandDestination));

        assert_eq!(inland.pod_rail_carrier(), Some("BNSF"));
        assert_eq!(inland.ind_rail_carrier(), Some("BNSF"));
    }

    #[test]
    fn each_leg_shows_its_own_railroad_when_both_are_named() {
        let mut inland = InlandFacts::default();
        inland.apply_rail_carrier(&railroad("BNSF", RailLeg::InlandDestination));
        inland.apply_rail_carrier(&railroad("UP", RailLeg::FromPort));

        assert_eq!(inland.pod_rail_carrier(), Some("UP"));
        assert_eq!(inland.ind_rail_carrier(), Some("BNSF"));
    }

    #[test]
    fn a_later_railroad_for_a_leg_replaces_the_earlier() {
        let mut inland = InlandFacts::default();
        inland.apply_rail_carrier(&railroad("UP", RailLeg::FromPort));
        inland.apply_rail_carrier(&railroad("CSXT", RailLeg::FromPort));

        assert_eq!(inland.pod_rail_carrier(), Some("CSXT"));
        assert_eq!(inland.ind_rail_carrier(), Some("CSXT"));
    }

    #[test]
    fn stored_inland_facts_without_railroads_still_read() {
        let inland: InlandFacts = serde_json::from_value(serde_json::json!({
            "pod_rail_loaded_at": null,
            "pod_rail_departed_at": null,
            "ind_eta_at": null,
            "ind_ata_at": null,
            "ind_rail_unloaded_at": null,
        }))
        .expect("the stored shape before railroads");

        assert_eq!(inland, InlandFacts::default());
    }

    #[test]
    fn an_observation_naming_only_a_railroad_changes_no_pickup_fact() {
        let mut facts = PickupFacts::default();
        facts.apply(&PickupObservation {
            rail_carrier: Some(railroad("UP", RailLeg::FromPort)),
            ..observed(4)
        });

        assert!(facts.is_empty(), "{facts:?}");
    }

    #[test]
    fn a_fee_replaces_the_one_of_its_type() {
        let fee = |amount: &str| PickupFee {
            kind: "demurrage".to_owned(),
            amount: Some(amount.to_owned()),
            currency_code: Some("USD".to_owned()),
        };
        let mut facts = PickupFacts::default();
        facts.apply(&PickupObservation {
            fees: vec![fee("150.00")],
            ..observed(1)
        });
        facts.apply(&PickupObservation {
            fees: vec![fee("300.00")],
            ..observed(2)
        });

        assert_eq!(facts.fees, vec![fee("300.00")]);
    }
}
