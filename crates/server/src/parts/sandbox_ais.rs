//! The sandbox fleet's AIS transmitter: the NMEA sentences of each tracked `TEST` voyage's
//! vessel (static data, type 5; positions, type 1, time-stamped in a tag block) since it
//! last reported, and what has been sent so far (`use_cases::vessels::sandbox` sends them
//! through the AIS ingest path).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Duration, Utc};
use tidemark_carriers::sandbox::Sandbox;
use tidemark_geo::ais::{PositionReport, StaticData, encode_position, encode_static};

/// Positions one voyage sends at most per tick (about a month at five-minute steps).
const MAX_POSITIONS_PER_VOYAGE: usize = 10_000;

/// A tracked voyage: its number and when its tracking started.
pub type VoyageKey = (String, DateTime<Utc>);

/// The sandbox fleet's AIS transmitter: what it has sent so far, per voyage.
pub struct SandboxAis {
    sandbox: Arc<Sandbox>,
    step: Duration,
    /// The time of the last position sent, per voyage.
    sent: Mutex<HashMap<VoyageKey, DateTime<Utc>>>,
}

impl SandboxAis {
    /// A transmitter sending one position per `step` of voyage time.
    pub fn new(sandbox: Arc<Sandbox>, step: Duration) -> Self {
        Self {
            sandbox,
            step: step.max(Duration::seconds(1)),
            sent: Mutex::new(HashMap::new()),
        }
    }

    /// The sentences of one voyage for the positions after `after` up to `now`.
    pub fn sentences(
        &self,
        number: &str,
        epoch: DateTime<Utc>,
        after: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> (Vec<String>, Option<DateTime<Utc>>) {
        let Some(voyage) = self.sandbox.voyage(number, epoch) else {
            return (Vec::new(), None);
        };
        let mut lines = Vec::new();
        let mut last = None;
        for leg in voyage.legs() {
            let start = after.map_or(leg.departure, |t| (t + self.step).max(leg.departure));
            let end = leg.arrival.min(now);
            if start > end {
                continue;
            }
            // A long backfill is sent at wider steps, so it still ends at `end` (the
            // vessel's current position) within the cap.
            let cap = i32::try_from(MAX_POSITIONS_PER_VOYAGE - 1).unwrap_or(i32::MAX);
            let step = self.step.max((end - start) / cap);
            let (Ok(mmsi), Ok(imo)) = (
                leg.vessel.mmsi.parse::<u32>(),
                leg.vessel.imo.parse::<u32>(),
            ) else {
                continue;
            };
            lines.extend(encode_static(&StaticData {
                mmsi,
                imo: Some(imo),
                name: Some(leg.vessel.name.clone()),
                message_type: 5,
                received_at: Some(end.timestamp()),
                ..StaticData::default()
            }));
            let mut at = start;
            let mut count = 0;
            // The last point is `end` itself, so the latest fix is current.
            while count < MAX_POSITIONS_PER_VOYAGE {
                let Some(position) = voyage.vessel_position(at.min(end - Duration::seconds(1)))
                else {
                    break;
                };
                lines.push(encode_position(&PositionReport {
                    mmsi,
                    latitude: position.latitude,
                    longitude: position.longitude,
                    speed_over_ground_knots: Some(position.speed_knots),
                    course_over_ground: Some(position.heading_degrees),
                    true_heading: Some(position.heading_degrees.round() as u16 % 360),
                    timestamp_second: None,
                    navigation_status: Some(
                        tidemark_geo::ais::NavigationStatus::UnderWayUsingEngine,
                    ),
                    message_type: 1,
                    received_at: Some(at.min(end).timestamp()),
                }));
                last = Some(at.min(end));
                count += 1;
                if at >= end {
                    break;
                }
                at = (at + step).min(end);
            }
        }
        (lines, last)
    }

    /// Forgets the voyages no longer tracked, so what is remembered stays within the
    /// voyages followed (a voyage forgotten too early is only sent again, and re-sent
    /// positions are thinned away).
    pub fn forget_all_but(&self, tracked: &[VoyageKey]) {
        let tracked: std::collections::HashSet<&VoyageKey> = tracked.iter().collect();
        let mut sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        sent.retain(|voyage, _| tracked.contains(voyage));
        let kept = sent.len();
        if sent.capacity() > 64 && kept < sent.capacity() / 4 {
            sent.shrink_to(kept * 2);
        }
    }

    /// The sentences of what these voyages' vessels did since they last reported, and what
    /// to [`record`](Self::record) as sent once they are stored.
    pub fn unsent(
        &self,
        voyages: Vec<VoyageKey>,
        now: DateTime<Utc>,
    ) -> (Vec<String>, Vec<(VoyageKey, DateTime<Utc>)>) {
        let mut lines = Vec::new();
        let mut sent_now = Vec::new();
        let sent = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        for (number, epoch) in voyages {
            let after = sent.get(&(number.clone(), epoch)).copied();
            let (voyage_lines, last) = self.sentences(&number, epoch, after, now);
            lines.extend(voyage_lines);
            if let Some(last) = last {
                sent_now.push(((number, epoch), last));
            }
        }
        (lines, sent_now)
    }

    /// Remembers the last position sent per voyage.
    pub fn record(&self, sent_now: Vec<(VoyageKey, DateTime<Utc>)>) {
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(sent_now);
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use tidemark_geo::reference::ReferenceData;

    use super::*;

    #[test]
    fn voyages_no_longer_tracked_are_forgotten() {
        let transmitter = SandboxAis::new(
            crate::parts::carriers::sandbox(ReferenceData::embedded()),
            Duration::minutes(5),
        );
        let epoch = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
        let voyage = |n: usize| (format!("TEST-{n}"), epoch);
        transmitter
            .sent
            .lock()
            .unwrap()
            .extend((0..10_000).map(|n| (voyage(n), epoch)));

        transmitter.forget_all_but(&[voyage(3), voyage(20_000)]);

        let sent = transmitter.sent.lock().unwrap();
        assert_eq!(sent.len(), 1);
        assert!(sent.contains_key(&voyage(3)));
    }
}
