//! Which polls matter most, and how often each kind of shipment is polled.
//!
//! A new tracking request comes first (a user is waiting for it); then shipments near a
//! milestone: arriving within 48 hours, or arrived (discharge, availability, pick-up and
//! the empty return all follow the arrival, and tracking stops once every container is
//! done); then shipments not yet sailed or whose voyage is unknown; last, shipments at sea
//! with a distant ETA, whose news can wait hours.

use chrono::{DateTime, Duration, Utc};

use crate::Shipment;

/// How close an arrival must be for a shipment to be near its milestone.
pub const NEAR_ARRIVAL: Duration = Duration::hours(48);

/// A poll's rank when a carrier's budget is short: lower is served first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PollPriority {
    /// A tracking request without a shipment yet (new, retrying or awaiting the manifest).
    NewRequest,
    /// Arrival within 48 hours, or arrived and not yet done.
    NearMilestone,
    /// Not sailed yet, or nothing known of the voyage.
    Routine,
    /// Sailed, with an ETA more than 48 hours away.
    AtSea,
}

impl PollPriority {
    pub const ALL: [Self; 4] = [
        Self::NewRequest,
        Self::NearMilestone,
        Self::Routine,
        Self::AtSea,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::NewRequest => "new_request",
            Self::NearMilestone => "near_milestone",
            Self::Routine => "routine",
            Self::AtSea => "at_sea",
        }
    }

    /// The share of a carrier's daily budget this priority may use, so that the last
    /// part of a day's calls stays free for more urgent polls.
    pub fn day_share(self) -> f64 {
        match self {
            Self::NewRequest => 1.0,
            Self::NearMilestone => 0.95,
            Self::Routine => 0.9,
            Self::AtSea => 0.8,
        }
    }

    /// The priority of a tracked shipment at `now`.
    pub fn of_shipment(shipment: &Shipment, now: DateTime<Utc>) -> Self {
        let arriving = shipment
            .pod_eta_at
            .is_some_and(|eta| eta <= now + NEAR_ARRIVAL);
        if shipment.pod_ata_at.is_some() || arriving {
            Self::NearMilestone
        } else if shipment.pol_atd_at.is_some() {
            Self::AtSea
        } else {
            Self::Routine
        }
    }
}

/// How often a tracked shipment is polled, by priority (settings
/// `tracking_poll_near_milestone_seconds`, `tracking_poll_seconds`,
/// `tracking_poll_at_sea_seconds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PollIntervals {
    pub near_milestone: Duration,
    pub routine: Duration,
    pub at_sea: Duration,
}

impl PollIntervals {
    pub fn of(&self, priority: PollPriority) -> Duration {
        match priority {
            PollPriority::NewRequest | PollPriority::NearMilestone => self.near_milestone,
            PollPriority::Routine => self.routine,
            PollPriority::AtSea => self.at_sea,
        }
    }

    /// When a tracked shipment is next due: its last attempt (else its creation) plus its
    /// priority's interval.
    pub fn due_at(&self, shipment: &Shipment, now: DateTime<Utc>) -> DateTime<Utc> {
        let last = shipment
            .line_tracking_last_attempted_at
            .unwrap_or(shipment.created_at);
        last + self.of(PollPriority::of_shipment(shipment, now))
    }

    /// The shortest interval: no shipment is due before its last poll plus this.
    pub fn shortest(&self) -> Duration {
        self.near_milestone.min(self.routine).min(self.at_sea)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-03-01T00:00:00Z")
            .unwrap()
            .to_utc()
    }

    fn shipment() -> Shipment {
        let created = now() - Duration::days(10);
        Shipment {
            id: crate::ShipmentId(uuid::Uuid::nil()),
            account_id: crate::AccountId(uuid::Uuid::nil()),
            tracking_request_id: crate::TrackingRequestId(uuid::Uuid::nil()),
            bill_of_lading_number: "MAEU123456789".to_owned(),
            normalized_number: "MAEU123456789".to_owned(),
            ref_numbers: Vec::new(),
            tags: Vec::new(),
            shipping_line_scac: "MAEU".to_owned(),
            port_of_lading_locode: None,
            port_of_discharge_locode: None,
            destination_locode: None,
            pod_vessel_name: None,
            pod_vessel_imo: None,
            pod_voyage_number: None,
            pol_etd_at: None,
            pol_atd_at: None,
            pod_eta_at: None,
            pod_original_eta_at: None,
            pol_original_etd_at: None,
            destination_original_eta_at: None,
            pod_terminal_id: None,
            pod_ata_at: None,
            destination_eta_at: None,
            destination_ata_at: None,
            line_tracking_last_attempted_at: None,
            line_tracking_last_succeeded_at: None,
            line_tracking_stopped_at: None,
            line_tracking_stopped_reason: None,
            line_tracking_stopped_by: None,
            customer_id: None,
            created_at: created,
            updated_at: created,
        }
    }

    #[test]
    fn a_shipment_arriving_within_two_days_is_near_its_milestone() {
        let mut arriving = shipment();
        arriving.pol_atd_at = Some(now() - Duration::days(9));
        arriving.pod_eta_at = Some(now() + Duration::hours(47));

        assert_eq!(
            PollPriority::of_shipment(&arriving, now()),
            PollPriority::NearMilestone
        );
    }

    #[test]
    fn an_arrived_shipment_is_near_its_next_milestone() {
        let mut arrived = shipment();
        arrived.pod_ata_at = Some(now() - Duration::days(3));

        assert_eq!(
            PollPriority::of_shipment(&arrived, now()),
            PollPriority::NearMilestone
        );
    }

    #[test]
    fn a_shipment_at_sea_with_a_distant_eta_can_wait() {
        let mut at_sea = shipment();
        at_sea.pol_atd_at = Some(now() - Duration::days(2));
        at_sea.pod_eta_at = Some(now() + Duration::days(20));

        assert_eq!(
            PollPriority::of_shipment(&at_sea, now()),
            PollPriority::AtSea
        );
        assert_eq!(
            PollPriority::of_shipment(&shipment(), now()),
            PollPriority::Routine
        );
    }

    #[test]
    fn each_priority_is_due_after_its_own_interval() {
        let intervals = PollIntervals {
            near_milestone: Duration::minutes(30),
            routine: Duration::hours(1),
            at_sea: Duration::hours(6),
        };
        let mut at_sea = shipment();
        at_sea.pol_atd_at = Some(now() - Duration::days(2));
        at_sea.line_tracking_last_attempted_at = Some(now());

        assert_eq!(intervals.due_at(&at_sea, now()), now() + Duration::hours(6));
        assert_eq!(intervals.shortest(), Duration::minutes(30));
    }

    #[test]
    fn urgent_polls_keep_a_larger_share_of_the_day() {
        let shares: Vec<f64> = PollPriority::ALL.iter().map(|p| p.day_share()).collect();

        assert!(shares.windows(2).all(|pair| pair[0] > pair[1]));
    }
}
