//! The poll scheduler under real carriers' budgets: 100,000 active shipments across 15
//! carriers, a simulated day after a simulated day of warm-up, one scheduler tick a minute.
//!
//! `cargo bench -p tidemark-server --bench carrier_budgets` (add `--profile dev` to skip the
//! release build; the figures are the same, only slower to get).
//!
//! It runs the scheduling policy the server runs, with the same domain functions: each tick,
//! per carrier, [`CarrierState::capacity`] says how many polls to queue (the minute budget,
//! and the day budget paced over the day); due polls are taken new requests first, then
//! the most overdue for their own [`PollPriority`]'s interval (as `shipments_due` orders
//! them); each poll then
//! [`CarrierState::acquire`]s its call, which is what enforces the budget. Carriers answer
//! every call. The store and HTTP are left out (the `scheduler` bench measures the tick's
//! database cost), so this shows what the budgets allow, not how fast the machine is.
//!
//! Budgets: CARRIERS.md's published figures where there are some (Hapag-Lloyd's default
//! plan, 10 a minute and 6,000 a day; COSCO 1,000 a day); the others are unpublished and
//! set here to an assumed 60 a minute and 20,000 a day, said so in the output. Shipments are
//! spread over the carriers by rough market share; voyages last 10 to 40 days, with arrivals
//! spread evenly, and each shipment stays tracked until 5 days after arrival. 2,000 new
//! tracking requests arrive a day, spread over the day.
//!
//! Printed: per carrier, polls in the busiest hour and per day against the budget (a
//! violation of any 60-second window panics), and the age of the last successful poll
//! (p50/p95, sampled hourly) of shipments near a milestone and at sea, and how long new
//! requests waited for their first poll.

use std::collections::HashMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use tidemark_domain::carriers::{Acquire, CarrierState, Limits, PollIntervals, PollPriority};
use tidemark_domain::tracking_update::{CarrierReport, Known, plan};
use tidemark_domain::{
    AccountId, RequestType, Shipment, TrackingRequest, TrackingRequestId, TrackingRequestStatus,
    UuidV7Ids,
};

const SHIPMENTS: usize = 100_000;
const NEW_REQUESTS_PER_DAY: usize = 2_000;
const TICK: i64 = 60;

/// SCAC, share of shipments in ‰, calls per minute, per day, and whether CARRIERS.md
/// publishes the budget (else assumed).
type Line = (&'static str, u32, Option<u32>, Option<u32>, bool);

const CARRIERS: [Line; 15] = [
    ("MSCU", 200, Some(60), Some(20_000), false),
    ("MAEU", 150, Some(60), Some(20_000), false),
    ("CMDU", 130, Some(60), Some(20_000), false),
    ("COSU", 110, None, Some(1_000), true),
    ("HLCU", 70, Some(10), Some(6_000), true),
    ("ONEY", 60, Some(60), Some(20_000), false),
    ("EGLV", 60, Some(60), Some(20_000), false),
    ("OOLU", 50, Some(60), Some(20_000), false),
    ("HDMU", 30, Some(60), Some(20_000), false),
    ("YMLU", 30, Some(60), Some(20_000), false),
    ("ZIMU", 30, Some(60), Some(20_000), false),
    ("WHLC", 20, Some(60), Some(20_000), false),
    ("PCIU", 20, Some(60), Some(20_000), false),
    ("MATS", 5, Some(60), Some(20_000), false),
    ("SUDU", 35, Some(60), Some(20_000), false),
];

/// splitmix64: deterministic and dependency-free.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> i64 {
        i64::try_from(self.next() % n).unwrap_or(0)
    }
}

struct Tracked {
    carrier: usize,
    departs: DateTime<Utc>,
    arrives: DateTime<Utc>,
    last_attempted: Option<DateTime<Utc>>,
    last_succeeded: Option<DateTime<Utc>>,
    created: DateTime<Utc>,
}

fn template(now: DateTime<Utc>) -> Shipment {
    let request = TrackingRequest {
        id: TrackingRequestId::new(&UuidV7Ids),
        account_id: AccountId::new(&UuidV7Ids),
        request_type: RequestType::BillOfLading,
        request_number: "BENCH".to_owned(),
        scac: "MAEU".to_owned(),
        ref_numbers: Vec::new(),
        shipment_tags: Vec::new(),
        status: TrackingRequestStatus::Created,
        failed_reason: None,
        is_retrying: false,
        retry_count: None,
        shipment_id: None,
        initial_custom_fields: None,
        customer_id: None,
        submitted_by: None,
        polled_at: None,
        created_at: now,
        updated_at: now,
    };
    plan(
        &request,
        Known::default(),
        &CarrierReport::default(),
        &UuidV7Ids,
        now,
    )
    .shipment
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a sample"
    )]
    let index = ((values.len() - 1) as f64 * p).round() as usize;
    values[index]
}

#[expect(clippy::too_many_lines, reason = "one simulation, read top to bottom")]
fn main() {
    let start = Utc
        .with_ymd_and_hms(2026, 6, 1, 0, 0, 0)
        .single()
        .expect("valid date");
    let warm_up = Duration::days(1);
    let day = Duration::days(1);
    let intervals = PollIntervals {
        near_milestone: Duration::minutes(30),
        routine: Duration::hours(1),
        at_sea: Duration::hours(6),
    };
    let mut random = Random(15);
    let total_share: u32 = CARRIERS.iter().map(|c| c.1).sum();

    // Voyages whose tracking window (departure - 3 days to arrival + 5 days) covers the
    // simulated days, spread evenly.
    let mut shipments = Vec::with_capacity(SHIPMENTS);
    for _ in 0..SHIPMENTS {
        let pick = u32::try_from(random.below(u64::from(total_share))).unwrap_or(0);
        let mut acc = 0;
        let carrier = CARRIERS
            .iter()
            .position(|c| {
                acc += c.1;
                pick < acc
            })
            .unwrap_or(0);
        let voyage = Duration::days(10) + Duration::minutes(random.below(30 * 24 * 60));
        let arrives = start - Duration::days(5) + Duration::minutes(random.below(50 * 24 * 60));
        let departs = arrives - voyage;
        let created = departs - Duration::days(3);
        shipments.push(Tracked {
            carrier,
            departs,
            arrives,
            // Polled recently before the simulation starts, at a random point of a day.
            last_attempted: Some(start - Duration::minutes(random.below(24 * 60))),
            last_succeeded: None,
            created,
        });
    }
    for shipment in &mut shipments {
        shipment.last_succeeded = shipment.last_attempted;
    }
    // New requests: (carrier, created at, first polled at).
    let mut new_requests: Vec<(usize, DateTime<Utc>, Option<DateTime<Utc>>)> = (0
        ..NEW_REQUESTS_PER_DAY * 2)
        .map(|i| {
            let carrier = i % CARRIERS.len();
            let at = start + Duration::seconds(random.below(2 * 24 * 3600));
            (carrier, at, None)
        })
        .collect();
    new_requests.sort_by_key(|r| r.1);

    let mut states: Vec<CarrierState> = CARRIERS.iter().map(|c| CarrierState::new(c.0)).collect();
    let limits: Vec<Limits> = CARRIERS
        .iter()
        .map(|c| Limits {
            per_minute: c.2,
            per_day: c.3,
        })
        .collect();
    let mut calls: Vec<Vec<DateTime<Utc>>> = vec![Vec::new(); CARRIERS.len()];
    let mut scratch = template(start);
    let mut near_ages = Vec::new();
    let mut at_sea_ages = Vec::new();
    let mut near_by_carrier: Vec<Vec<f64>> = vec![Vec::new(); CARRIERS.len()];
    let mut at_sea_by_carrier: Vec<Vec<f64>> = vec![Vec::new(); CARRIERS.len()];
    let mut waits = Vec::new();

    let end = start + warm_up + day;
    let mut now = start;
    let mut tick = 0_i64;
    while now < end {
        let measuring = now >= start + warm_up;
        let priority_of = |scratch: &mut Shipment, s: &Tracked| {
            scratch.pol_atd_at = (s.departs <= now).then_some(s.departs);
            scratch.pod_eta_at = Some(s.arrives);
            scratch.pod_ata_at = (s.arrives <= now).then_some(s.arrives);
            PollPriority::of_shipment(scratch, now)
        };
        // Due polls by carrier: (priority, waiting since, which).
        let mut due: HashMap<usize, Vec<(PollPriority, DateTime<Utc>, usize)>> = HashMap::new();
        for (index, request) in new_requests.iter().enumerate() {
            if request.1 > now {
                break;
            }
            if request.2.is_none() {
                due.entry(request.0).or_default().push((
                    PollPriority::NewRequest,
                    request.1,
                    usize::MAX - index,
                ));
            }
        }
        for (index, shipment) in shipments.iter().enumerate() {
            let tracking = shipment.created <= now && now <= shipment.arrives + Duration::days(5);
            if !tracking {
                continue;
            }
            let priority = priority_of(&mut scratch, shipment);
            let last = shipment.last_attempted.unwrap_or(shipment.created);
            if last + intervals.of(priority) <= now {
                due.entry(shipment.carrier)
                    .or_default()
                    .push((priority, last, index));
            }
        }
        for (carrier, mut polls) in due {
            let capacity = states[carrier]
                .capacity(now, limits[carrier], Duration::seconds(TICK))
                .map_or(polls.len(), |c| c as usize);
            if capacity == 0 {
                continue;
            }
            if polls.len() > capacity {
                // As `shipments_due` orders them: new requests, then the most overdue for
                // their own interval, the more urgent priority among equals.
                let lateness = |p: &(PollPriority, DateTime<Utc>, usize)| -> (i64, PollPriority) {
                    if p.0 == PollPriority::NewRequest {
                        return (i64::MIN, p.0);
                    }
                    let waited = (now - p.1).num_seconds() * 1000;
                    (-(waited / intervals.of(p.0).num_seconds().max(1)), p.0)
                };
                polls.select_nth_unstable_by_key(capacity - 1, lateness);
                polls.truncate(capacity);
            }
            for (priority, _, which) in polls {
                if states[carrier].acquire(now, limits[carrier], priority) != Acquire::Go {
                    continue;
                }
                calls[carrier].push(now);
                if which > SHIPMENTS {
                    let request = &mut new_requests[usize::MAX - which];
                    request.2 = Some(now);
                    if measuring {
                        #[expect(clippy::cast_precision_loss, reason = "minutes for humans")]
                        waits.push((now - request.1).num_seconds() as f64 / 60.0);
                    }
                } else {
                    shipments[which].last_attempted = Some(now);
                    shipments[which].last_succeeded = Some(now);
                }
            }
        }
        if measuring && tick % 60 == 0 {
            for shipment in &shipments {
                let tracking =
                    shipment.created <= now && now <= shipment.arrives + Duration::days(5);
                if !tracking {
                    continue;
                }
                #[expect(clippy::cast_precision_loss, reason = "hours for humans")]
                let age = shipment
                    .last_succeeded
                    .map_or(0.0, |at| (now - at).num_seconds() as f64 / 3600.0);
                match priority_of(&mut scratch, shipment) {
                    PollPriority::NearMilestone => {
                        near_ages.push(age);
                        near_by_carrier[shipment.carrier].push(age);
                    }
                    PollPriority::AtSea => {
                        at_sea_ages.push(age);
                        at_sea_by_carrier[shipment.carrier].push(age);
                    }
                    _ => {}
                }
            }
        }
        now += Duration::seconds(TICK);
        tick += 1;
    }

    println!(
        "{SHIPMENTS} shipments, {} carriers, {NEW_REQUESTS_PER_DAY} new requests a day; one tick a minute; \
         intervals: near milestone 30 min, routine 1 h, at sea 6 h",
        CARRIERS.len()
    );
    println!(
        "{:<5} {:>9} {:>10} {:>10} {:>8} {:>8} {:>17} {:>17}  budget",
        "scac",
        "shipments",
        "busiest h",
        "polls/day",
        "per min",
        "per day",
        "near p50/p95 h",
        "at sea p50/p95 h"
    );
    for (index, (scac, _, per_minute, per_day, published)) in CARRIERS.iter().enumerate() {
        let measured: Vec<DateTime<Utc>> = calls[index]
            .iter()
            .copied()
            .filter(|&at| at >= start + warm_up)
            .collect();
        for (i, at) in calls[index].iter().enumerate() {
            let in_minute = calls[index][i..]
                .iter()
                .take_while(|&&other| other < *at + Duration::seconds(60))
                .count();
            if let Some(limit) = per_minute {
                assert!(
                    in_minute <= *limit as usize,
                    "{scac}: {in_minute} calls in the minute from {at}"
                );
            }
        }
        let mut by_hour = [0_usize; 24];
        for at in &measured {
            let hour = usize::try_from((*at - (start + warm_up)).num_hours()).unwrap_or(0);
            by_hour[hour.min(23)] += 1;
        }
        if let Some(limit) = per_day {
            assert!(measured.len() <= *limit as usize, "{scac}: over its day");
        }
        let count = shipments.iter().filter(|s| s.carrier == index).count();
        let near = &mut near_by_carrier[index];
        let near = format!(
            "{:.1} / {:.1}",
            percentile(near, 0.5),
            percentile(near, 0.95)
        );
        let sea = &mut at_sea_by_carrier[index];
        let sea = format!("{:.1} / {:.1}", percentile(sea, 0.5), percentile(sea, 0.95));
        println!(
            "{scac:<5} {count:>9} {:>10} {:>10} {:>8} {:>8} {near:>17} {sea:>17}  {}",
            by_hour.iter().max().unwrap_or(&0),
            measured.len(),
            per_minute.map_or("-".to_owned(), |v| v.to_string()),
            per_day.map_or("-".to_owned(), |v| v.to_string()),
            if *published {
                "published (CARRIERS.md)"
            } else {
                "assumed"
            }
        );
    }
    println!(
        "age of the last successful poll, near a milestone: p50 {:.2} h, p95 {:.2} h ({} samples)",
        percentile(&mut near_ages, 0.5),
        percentile(&mut near_ages, 0.95),
        near_ages.len()
    );
    println!(
        "age of the last successful poll, at sea:           p50 {:.2} h, p95 {:.2} h ({} samples)",
        percentile(&mut at_sea_ages, 0.5),
        percentile(&mut at_sea_ages, 0.95),
        at_sea_ages.len()
    );
    println!(
        "new requests' wait for their first poll:           p50 {:.1} min, p95 {:.1} min ({} requests)",
        percentile(&mut waits, 0.5),
        percentile(&mut waits, 0.95),
        waits.len()
    );
}
