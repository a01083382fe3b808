//! Terminals under their budgets: about 100,000 discharged containers in the yards of 40
//! terminals, a simulated day after a simulated day of warm-up, one scheduler tick a minute
//! (the server's default `scheduler_tick_seconds`). Issue 31's proof.
//!
//! `cargo bench -p tidemark-server --bench terminal_budgets` (add `--profile dev` to skip the
//! release build; the simulation's figures are the same, only slower to get; the stores'
//! timings are a debug build's then). PostgreSQL too with `TIDEMARK_TEST_POSTGRES_URL`.
//!
//! It runs the policy of `use_cases::terminals::check` with the server's own constants and
//! functions: each tick every terminal runs once (the scheduler queues one `check_terminal`
//! job per terminal) and takes batches of [`check::batch_of`] its profile, up to
//! [`check::batches_now`] (the budget's pace) while they come full: containers not
//! yet out, discharged ones first, those last asked before [`RECHECK`] ago, longest unasked
//! first; then, from [`LOOK_AHEAD`] before their vessel's arrival, the nearest arrivals last
//! asked before [`RECHECK_BEFORE_DISCHARGE`] ago; a batch [`check::asks_arrivals_first`]
//! picks takes the due arrivals first (`BENCH_TERMINALS_NO_ARRIVALS_BATCHES=1` simulates
//! without those batches, to compare). A non-empty batch then takes its call with
//! [`health::take_call`] under [`health::limits_of`] its profile (what `health::acquire`
//! does in the shared state), which enforces the budget; a batch refused waits for the next
//! tick, unasked, and ends the terminal's run. Terminals always answer. That order lives in the stores' SQL
//! ([`tidemark_store::Store::containers_awaiting_pickup`]), so the bench keeps its own copy
//! and proves it: after the simulation it seeds the containers the store would hold at the
//! end (about 170,000: the yards and the arrivals within the look-ahead, with each
//! terminal's last ask) into SQLite (and PostgreSQL), and for three ticks asks the real
//! selection ([`check::selection`]) of all 40 terminals, panicking unless it picks exactly
//! the containers in exactly the order the simulation would; it prints what a tick costs
//! there (40 selections and the 40 `record_terminal_asks` that follow them; the writes of
//! the answers per shipment are left out).
//!
//! Terminals: the built-in profiles of `crates/terminals/profiles.toml` (the sandbox, which
//! only asks about the `TEST` line, left out), 10 terminals each; each serves a port of its
//! own, so a container is asked by one terminal. Batch sizes and budgets are the profiles'
//! own: a published one as published, an unpublished budget as the server treats it (no
//! limit). Three of the APM Terminals ones (billed per call) have an operator's day budget
//! of 1,000 calls, an assumption of this bench, so that a budget binds somewhere.
//!
//! Containers: 1 to 8 per bill of lading (one vessel arrival), spread over the terminals by
//! size (weights 1 to 4); each is discharged 1 to 24 hours after its vessel's arrival and
//! goes full-out 1 to 7 days later, one in ten held 7 to 21 days. Arrivals are spread evenly
//! so that about 100,000 containers are in the yards at any time (20,000 discharged a day,
//! through the day). The store learns a full-out from the terminal's next answer, or from
//! the carrier an hour after it, whichever comes first. At the start every container already
//! discharged was last asked at a random time of the day before (not before its discharge).
//!
//! Printed per terminal: calls in the busiest minute and hour and per day against its
//! budget (each call's next 60 seconds and 24 hours are checked against the budget; a
//! violation panics), containers asked a day, and the age of the last successful check
//! (p50/p95, sampled every 30 minutes) of containers discharged and not yet out.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Duration, TimeZone, Utc};
use futures::StreamExt;
use tidemark_domain::carriers::{Acquire, CarrierState, Limits};
use tidemark_domain::tracking_update::{CarrierReport, Known, ReportedContainer, plan};
use tidemark_domain::{
    Account, AccountId, ContainerId, RequestType, TrackingRequest, TrackingRequestId,
    TrackingRequestStatus, UuidV7Ids,
};
use tidemark_server::config::Config;
use tidemark_server::use_cases::terminals::check::{
    self, LOOK_AHEAD, RECHECK, RECHECK_BEFORE_DISCHARGE,
};
use tidemark_server::use_cases::terminals::health;
use tidemark_store::{Store, TerminalSelection};
use tidemark_terminals::Profiles;
use tidemark_terminals::profile::{Confidence, Fact, TerminalProfile};
use uuid::Uuid;

/// The built-in profiles the 40 terminals are made of, ten each.
const PROFILES: [&str; 4] = [
    "port_of_virginia",
    "apm_terminals",
    "port_houston",
    "emodal",
];
const PER_PROFILE: usize = 10;
/// Containers in the yards at any time, about.
const IN_YARD: f64 = 100_000.0;
/// APM Terminals terminals with an operator's day budget (assumed), and that budget.
const CAPPED: usize = 3;
const CAPPED_PER_DAY: u32 = 1_000;
/// The store learns a full-out from the carrier this many minutes after it, unless the
/// terminal said so before.
const CARRIER_REPORTS_OUT: i64 = 60;
const DAY: i64 = 24 * 60;
const SAMPLE_EVERY: i64 = 30;
/// Ticks asked of the real stores after the simulation.
const STORE_TICKS: i64 = 3;
const ID_BASE: u128 = 0x0190_0000_0000_7000_8000_0000_0000_0000;

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

    /// Uniform in `from..to` (minutes, or any count).
    fn between(&mut self, from: i64, to: i64) -> i64 {
        let span = u64::try_from((to - from).max(1)).unwrap_or(1);
        from + i64::try_from(self.next() % span).unwrap_or(0)
    }
}

struct Terminal {
    /// Its id in the store (`<profile>-<n>`).
    id: String,
    profile: TerminalProfile,
    port: String,
    batch: u32,
    limits: Limits,
    weight: i64,
    state: CarrierState,
    /// Minutes of its calls.
    calls: Vec<i64>,
    refused: usize,
    /// Containers in the store it may ask about (arrival within the look-ahead, not out).
    live: Vec<usize>,
    asked_measured: usize,
    ages: Vec<f64>,
    yard_samples: Vec<usize>,
}

/// One container; times in minutes from the start of the warm-up day.
#[derive(Clone)]
struct Boxed {
    terminal: usize,
    shipment: usize,
    arrival: i64,
    discharge: i64,
    full_out: i64,
    /// This terminal's last ask (`i64::MIN`: never).
    last_ask: i64,
    /// Whether the store knows it is out (the terminal said so).
    out: bool,
    asked_before_discharge: bool,
    first_ask_after_discharge: Option<i64>,
}

impl Boxed {
    /// Whether the store still holds it as not out at `m`.
    fn in_store(&self, m: i64) -> bool {
        !self.out && m < self.full_out + CARRIER_REPORTS_OUT
    }

    fn id(index: usize) -> Uuid {
        Uuid::from_u128(ID_BASE + index as u128)
    }
}

/// The order of the stores' selection (discharged first, by their last ask; then arrivals by
/// arrival, then last ask; then id), for the containers due at `m`.
type Key = (bool, i64, i64, usize);

/// Whom a terminal asks at `m`, in the order the store gives them: at most `batch` of
/// `live`. The copy of `containers_awaiting_pickup`'s SQL this bench proves against the
/// stores.
fn pick(
    containers: &[Boxed],
    live: &[usize],
    m: i64,
    batch: u32,
    arriving_only: bool,
) -> Vec<usize> {
    let recheck = RECHECK.num_minutes();
    let before_discharge = RECHECK_BEFORE_DISCHARGE.num_minutes();
    let look_ahead = LOOK_AHEAD.num_minutes();
    let mut due: Vec<Key> = live
        .iter()
        .filter_map(|&index| {
            let c = &containers[index];
            if c.discharge <= m {
                // An ask made before the discharge does not count once it is discharged.
                let asked = if c.last_ask < c.discharge {
                    i64::MIN
                } else {
                    c.last_ask
                };
                (!arriving_only && asked < m - recheck).then_some((false, 0, asked, index))
            } else {
                (c.arrival <= m + look_ahead && c.last_ask < m - before_discharge)
                    .then_some((true, c.arrival, c.last_ask, index))
            }
        })
        .collect();
    let batch = batch as usize;
    if due.len() > batch {
        due.select_nth_unstable(batch - 1);
        due.truncate(batch);
    }
    due.sort_unstable();
    due.into_iter().map(|key| key.3).collect()
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

/// Where a fact comes from, for the table.
fn source_of<T>(fact: &Fact<T>) -> &'static str {
    match (fact.value.is_some(), fact.confidence) {
        (false, _) => "unpublished",
        (true, Confidence::Configured) => "operator (assumed)",
        (true, Confidence::Assumed) => "assumed",
        (true, Confidence::High) => "published (high)",
        (true, Confidence::Medium) => "published (medium)",
        (true, Confidence::Low) => "published (low)",
    }
}

fn terminals() -> Vec<Terminal> {
    let mut terminals = Vec::new();
    for id in PROFILES {
        let builtin = Profiles::embedded()
            .get(id)
            .expect("a built-in terminal profile");
        for n in 0..PER_PROFILE {
            let mut profile = builtin.clone();
            if id == "apm_terminals" && n < CAPPED {
                profile.requests_per_day = Fact {
                    value: Some(CAPPED_PER_DAY),
                    confidence: Confidence::Configured,
                    source: "the bench's assumed operator setting".to_owned(),
                };
            }
            let index = terminals.len();
            let name = format!("{id}-{n}");
            terminals.push(Terminal {
                batch: check::batch_of(&profile),
                limits: health::limits_of(&profile),
                state: CarrierState::new(&health::state_key(&name)),
                id: name,
                profile,
                port: format!("XX{index:03}"),
                weight: i64::try_from(1 + index % 4).unwrap_or(1),
                calls: Vec::new(),
                refused: 0,
                live: Vec::new(),
                asked_measured: 0,
                ages: Vec::new(),
                yard_samples: Vec::new(),
            });
        }
    }
    terminals
}

/// The containers whose tracking window touches the simulated days, in order of their
/// first ask (arrival less the look-ahead).
fn containers(random: &mut Random, terminals: &[Terminal], end: i64) -> Vec<Boxed> {
    let weights: i64 = terminals.iter().map(|t| t.weight).sum();
    // Mean dwell: 0.9 x 4 days + 0.1 x 14 days = 5 days; mean 4.5 containers a bill.
    let per_day = IN_YARD / 5.0 / 4.5;
    let first = -25 * DAY;
    let last = end + LOOK_AHEAD.num_minutes();
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_precision_loss,
        reason = "a count of bills"
    )]
    let bills = (per_day * (last - first) as f64 / DAY as f64) as usize;
    let mut all = Vec::new();
    for shipment in 0..bills {
        let arrival = random.between(first, last);
        let mut pick = random.between(0, weights);
        let terminal = terminals
            .iter()
            .position(|t| {
                pick -= t.weight;
                pick < 0
            })
            .unwrap_or(0);
        for _ in 0..random.between(1, 9) {
            let discharge = arrival + random.between(60, DAY);
            let dwell = if random.between(0, 10) == 0 {
                random.between(7 * DAY, 21 * DAY)
            } else {
                random.between(DAY, 7 * DAY)
            };
            let container = Boxed {
                terminal,
                shipment,
                arrival,
                discharge,
                full_out: discharge + dwell,
                last_ask: i64::MIN,
                out: false,
                asked_before_discharge: false,
                first_ask_after_discharge: None,
            };
            if container.in_store(0) {
                all.push(container);
            }
        }
    }
    all.sort_by_key(|c| (c.arrival - LOOK_AHEAD.num_minutes(), c.shipment));
    for c in &mut all {
        if c.discharge < 0 {
            c.last_ask = random.between(c.discharge.max(-DAY), 0);
        }
    }
    all
}

/// The most calls in any window of `span` minutes starting at a call.
fn busiest(calls: &[i64], span: i64) -> usize {
    let mut most = 0;
    let mut to = 0;
    for (from, &at) in calls.iter().enumerate() {
        while to < calls.len() && calls[to] < at + span {
            to += 1;
        }
        most = most.max(to - from);
    }
    most
}

struct World {
    start: DateTime<Utc>,
    terminals: Vec<Terminal>,
    containers: Vec<Boxed>,
    end: i64,
}

impl World {
    fn at(&self, m: i64) -> DateTime<Utc> {
        self.start + Duration::minutes(m)
    }
}

#[expect(clippy::too_many_lines, reason = "one simulation, read top to bottom")]
fn simulate(tick: i64) -> World {
    let start = Utc
        .with_ymd_and_hms(2026, 6, 1, 0, 0, 0)
        .single()
        .expect("valid date");
    let end = 2 * DAY;
    let mut random = Random(31);
    let mut terminals = terminals();
    let mut containers = containers(&mut random, &terminals, end);
    let look_ahead = LOOK_AHEAD.num_minutes();
    // `BENCH_TERMINALS_NO_ARRIVALS_BATCHES` simulates the order before batches were kept for
    // the arrivals (discharged always first), to compare.
    let keep_arrivals_batches = std::env::var_os("BENCH_TERMINALS_NO_ARRIVALS_BATCHES").is_none();
    let mut next = 0;
    let mut m = 0;
    while m < end {
        let measuring = m >= DAY;
        while next < containers.len() && containers[next].arrival - look_ahead <= m {
            terminals[containers[next].terminal].live.push(next);
            next += 1;
        }
        for terminal in &mut terminals {
            terminal.live.retain(|&index| containers[index].in_store(m));
            let batches = check::batches_now(
                &terminal.profile,
                &terminal.state,
                start + Duration::minutes(m),
                Duration::minutes(tick),
            );
            let now = start + Duration::minutes(m);
            for place in 0..batches {
                // As the server does: some batches are kept for the arrivals, when any is due.
                let mut batch = Vec::new();
                let arrivals = keep_arrivals_batches && check::asks_arrivals_first(now, place) && {
                    batch = pick(&containers, &terminal.live, m, terminal.batch, true);
                    !batch.is_empty()
                };
                if !arrivals {
                    batch = pick(&containers, &terminal.live, m, terminal.batch, false);
                }
                if batch.is_empty() {
                    break;
                }
                if let Acquire::Wait { .. } =
                    health::take_call(&mut terminal.state, now, terminal.limits)
                {
                    terminal.refused += 1;
                    break;
                }
                terminal.calls.push(m);
                if measuring {
                    terminal.asked_measured += batch.len();
                }
                let full = arrivals || batch.len() >= terminal.batch as usize;
                for index in batch {
                    let c = &mut containers[index];
                    c.last_ask = m;
                    if c.discharge > m {
                        c.asked_before_discharge = true;
                    } else if c.first_ask_after_discharge.is_none() {
                        c.first_ask_after_discharge = Some(m);
                    }
                    // The terminal's answer gives the full-out: the store marks it out.
                    if c.full_out <= m {
                        c.out = true;
                    }
                }
                if !full {
                    break;
                }
            }
        }
        if measuring && m % SAMPLE_EVERY == 0 {
            for terminal in &mut terminals {
                let mut in_yard = 0;
                for &index in &terminal.live {
                    let c = &containers[index];
                    if c.discharge <= m && m < c.full_out {
                        in_yard += 1;
                        let since = if c.last_ask == i64::MIN {
                            c.discharge
                        } else {
                            c.last_ask
                        };
                        #[expect(clippy::cast_precision_loss, reason = "minutes for humans")]
                        terminal.ages.push((m - since) as f64);
                    }
                }
                terminal.yard_samples.push(in_yard);
            }
        }
        m += tick;
    }

    let in_yard_at = |m: i64| {
        containers
            .iter()
            .filter(|c| c.discharge <= m && m < c.full_out)
            .count()
    };
    println!(
        "{} terminals, {} containers discharged and not yet out at the start of the measured day \
         ({} at its end), {} discharged during it; one tick every {tick} min; recheck {} min \
         once discharged, {} min before, from {} h before arrival",
        terminals.len(),
        in_yard_at(DAY),
        in_yard_at(end),
        containers
            .iter()
            .filter(|c| (DAY..end).contains(&c.discharge))
            .count(),
        RECHECK.num_minutes(),
        RECHECK_BEFORE_DISCHARGE.num_minutes(),
        LOOK_AHEAD.num_hours(),
    );
    println!(
        "{:<20} {:>5} {:>18} {:>7} {:>6} {:>7} {:>7} {:>8} {:>7} {:>7}  {:<18} {:>15}",
        "terminal",
        "batch",
        "batch source",
        "in yard",
        "max/m",
        "max/h",
        "calls/d",
        "asked/d",
        "bud/min",
        "bud/day",
        "budget source",
        "age p50/p95 min"
    );
    let mut all_ages = Vec::new();
    for terminal in &mut terminals {
        let id = terminal.id.clone();
        if let Some(limit) = terminal.limits.per_minute {
            let most = busiest(&terminal.calls, 1);
            assert!(
                most <= limit as usize,
                "{id}: {most} calls in one minute, over its {limit}"
            );
        }
        if let Some(limit) = terminal.limits.per_day {
            let most = busiest(&terminal.calls, DAY);
            assert!(
                most <= limit as usize,
                "{id}: {most} calls in 24 hours, over its {limit}"
            );
        }
        let measured: Vec<i64> = terminal
            .calls
            .iter()
            .copied()
            .filter(|&m| m >= DAY)
            .collect();
        let yard = terminal.yard_samples.iter().sum::<usize>() / terminal.yard_samples.len().max(1);
        let budget_source = match (terminal.limits.per_minute, terminal.limits.per_day) {
            (None, None) => "unpublished: none",
            _ => {
                if terminal.limits.per_day.is_some() {
                    source_of(&terminal.profile.requests_per_day)
                } else {
                    source_of(&terminal.profile.requests_per_minute)
                }
            }
        };
        all_ages.extend_from_slice(&terminal.ages);
        let ages = format!(
            "{:.0} / {:.0}",
            percentile(&mut terminal.ages, 0.5),
            percentile(&mut terminal.ages, 0.95)
        );
        println!(
            "{id:<20} {:>5} {:>18} {yard:>7} {:>6} {:>7} {:>7} {:>8} {:>7} {:>7}  {budget_source:<18} {ages:>15}",
            terminal.batch,
            source_of(&terminal.profile.batch_size),
            busiest(&measured, 1),
            busiest(&measured, 60),
            measured.len(),
            terminal.asked_measured,
            terminal
                .limits
                .per_minute
                .map_or("-".to_owned(), |v| v.to_string()),
            terminal
                .limits
                .per_day
                .map_or("-".to_owned(), |v| v.to_string()),
        );
        if terminal.refused > 0 {
            println!(
                "{:<20} {} ticks' batches refused by the budget (over both days)",
                "", terminal.refused
            );
        }
    }
    println!(
        "every terminal kept to its budget: each call's next 60 s and 24 h checked, both days"
    );
    println!(
        "age of the last successful check, discharged and not yet out, all terminals: \
         p50 {:.0} min, p95 {:.0} min ({} samples, every {SAMPLE_EVERY} min)",
        percentile(&mut all_ages, 0.5),
        percentile(&mut all_ages, 0.95),
        all_ages.len()
    );
    for name in PROFILES {
        let mut ages: Vec<f64> = Vec::new();
        let mut waits: Vec<f64> = Vec::new();
        let mut discharged = 0_usize;
        let mut before = 0_usize;
        for c in &containers {
            if !terminals[c.terminal].id.starts_with(name) || !(DAY..end).contains(&c.discharge) {
                continue;
            }
            discharged += 1;
            before += usize::from(c.asked_before_discharge);
            let first = c.first_ask_after_discharge.unwrap_or(end);
            #[expect(clippy::cast_precision_loss, reason = "minutes for humans")]
            waits.push((first - c.discharge) as f64);
        }
        for terminal in terminals.iter().filter(|t| t.id.starts_with(name)) {
            ages.extend_from_slice(&terminal.ages);
        }
        #[expect(clippy::cast_precision_loss, reason = "a share for humans")]
        let share = 100.0 * before as f64 / discharged.max(1) as f64;
        println!(
            "{name:<17} age p50 {:>5.0} min, p95 {:>5.0} min; discharged that day {discharged:>6}: \
             asked before discharge {:>5.1} %, first ask after discharge p50 {:>5.0} min, p95 {:>5.0} min",
            percentile(&mut ages, 0.5),
            percentile(&mut ages, 0.95),
            share,
            percentile(&mut waits, 0.5),
            percentile(&mut waits, 0.95),
        );
    }
    println!(
        "(first ask after discharge: a container not asked by the end of the day counts until then)"
    );
    World {
        start,
        terminals,
        containers,
        end,
    }
}

fn request(account: AccountId, number: String, at: DateTime<Utc>) -> TrackingRequest {
    TrackingRequest {
        id: TrackingRequestId::new(&UuidV7Ids),
        account_id: account,
        request_type: RequestType::BillOfLading,
        request_number: number,
        scac: "MAEU".to_owned(),
        ref_numbers: Vec::new(),
        shipment_tags: Vec::new(),
        status: TrackingRequestStatus::Pending,
        failed_reason: None,
        is_retrying: false,
        retry_count: None,
        shipment_id: None,
        initial_custom_fields: None,
        customer_id: None,
        submitted_by: None,
        polled_at: None,
        created_at: at,
        updated_at: at,
    }
}

/// The containers the store holds at the end of the simulation (by index), by shipment.
fn held(world: &World) -> BTreeMap<usize, Vec<usize>> {
    let mut shipments: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for terminal in &world.terminals {
        for &index in &terminal.live {
            if world.containers[index].in_store(world.end) {
                shipments
                    .entry(world.containers[index].shipment)
                    .or_default()
                    .push(index);
            }
        }
    }
    shipments
}

/// Writes one shipment and its containers as a carrier's poll would have left them.
async fn write_shipment(
    store: &dyn Store,
    world: &World,
    account: AccountId,
    shipment: usize,
    indexes: &[usize],
) {
    let end = world.end;
    let first = &world.containers[indexes[0]];
    let created_at = world.at(first.arrival - 20 * DAY);
    let pending = request(account, format!("TMBL{shipment:08}"), created_at);
    store
        .create_tracking_request(&pending)
        .await
        .expect("request");
    let report = CarrierReport {
        containers: indexes
            .iter()
            .map(|&index| ReportedContainer {
                number: format!("TMKU{index:07}"),
                iso_equipment_code: Some("45G1".to_owned()),
            })
            .collect(),
        port_of_discharge: Some(world.terminals[first.terminal].port.clone()),
        ..CarrierReport::default()
    };
    let mut update = plan(&pending, Known::default(), &report, &UuidV7Ids, created_at);
    update.shipment.pod_eta_at = Some(world.at(first.arrival));
    for (container, &index) in update.new_containers.iter_mut().zip(indexes) {
        let c = &world.containers[index];
        container.id = ContainerId(Boxed::id(index));
        container.pod_arrived_at = (c.arrival <= end).then(|| world.at(c.arrival));
        container.pod_discharged_at = (c.discharge <= end).then(|| world.at(c.discharge));
    }
    let mut created = pending.clone();
    created.status = TrackingRequestStatus::Created;
    created.shipment_id = Some(update.shipment.id);
    store
        .record_tracking_result(&created, pending.updated_at, Some(&update), &[])
        .await
        .expect("record");
}

/// Seeds the store with what it holds at the end; returns the asks to write: (terminal,
/// container id, asked at).
async fn seed(store: &Arc<dyn Store>, world: &World) -> Vec<(String, Uuid, DateTime<Utc>)> {
    let account = Account {
        id: AccountId::new(&UuidV7Ids),
        name: "terminal-budgets".to_owned(),
        created_at: world.start,
    };
    store.create_account(&account).await.expect("account");
    let shipments = held(world);
    futures::stream::iter(shipments.iter())
        .for_each_concurrent(4, |(&shipment, indexes)| {
            let store = Arc::clone(store);
            async move {
                write_shipment(store.as_ref(), world, account.id, shipment, indexes).await;
            }
        })
        .await;
    shipments
        .values()
        .flatten()
        .filter_map(|&index| {
            let c = &world.containers[index];
            (c.last_ask != i64::MIN).then(|| {
                (
                    world.terminals[c.terminal].id.clone(),
                    Boxed::id(index),
                    world.at(c.last_ask),
                )
            })
        })
        .collect()
}

fn seed_asks_sqlite(path: &std::path::Path, asks: &[(String, Uuid, DateTime<Utc>)]) {
    let mut conn = rusqlite::Connection::open(path).expect("open SQLite");
    let tx = conn.transaction().expect("transaction");
    {
        let mut insert = tx
            .prepare(
                "INSERT INTO terminal_checks (terminal, container_id, asked_at) VALUES (?1, ?2, ?3)",
            )
            .expect("prepare");
        for (terminal, id, at) in asks {
            insert
                .execute(rusqlite::params![
                    terminal,
                    id.to_string(),
                    tidemark_domain::timestamp_text::utc_text(*at, true)
                ])
                .expect("insert ask");
        }
    }
    tx.commit().expect("commit");
}

async fn seed_asks_postgres(url: &str, schema: &str, asks: &[(String, Uuid, DateTime<Utc>)]) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect to PostgreSQL");
    let connection = tokio::spawn(connection);
    for chunk in asks.chunks(10_000) {
        let terminals: Vec<&str> = chunk.iter().map(|a| a.0.as_str()).collect();
        let ids: Vec<Uuid> = chunk.iter().map(|a| a.1).collect();
        let times: Vec<DateTime<Utc>> = chunk.iter().map(|a| a.2).collect();
        client
            .execute(
                &format!(
                    "INSERT INTO {schema}.terminal_checks (terminal, container_id, asked_at)
                     SELECT * FROM UNNEST($1::text[], $2::uuid[], $3::timestamptz[])"
                ),
                &[&terminals, &ids, &times],
            )
            .await
            .expect("insert asks");
    }
    client
        .batch_execute(&format!(
            "ANALYZE {schema}.containers; ANALYZE {schema}.shipments; \
             ANALYZE {schema}.terminal_checks;"
        ))
        .await
        .expect("analyze");
    drop(client);
    let _ = connection.await;
}

/// A few ticks of the real selection for every terminal, each checked against [`pick`] and
/// followed by its `record_terminal_asks`; prints what a tick costs.
async fn ticks(name: &str, store: &dyn Store, world: &World, tick: i64) {
    // The store knows the discharges up to the end only: later ones stay arrivals there.
    let mut containers = world.containers.clone();
    for c in &mut containers {
        if c.discharge > world.end {
            c.discharge = i64::MAX;
        }
    }
    let live: Vec<Vec<usize>> = world
        .terminals
        .iter()
        .map(|t| {
            t.live
                .iter()
                .copied()
                .filter(|&index| containers[index].in_store(world.end))
                .collect()
        })
        .collect();
    let mut tick_ms = Vec::new();
    let mut select_ms = Vec::new();
    let mut record_ms = Vec::new();
    let mut picked = 0;
    for k in 0..STORE_TICKS {
        let m = world.end + k * tick;
        let now = world.at(m);
        let mut this_tick = 0.0;
        for (terminal, live) in world.terminals.iter().zip(&live) {
            let ports = [terminal.port.clone()];
            let selection = check::selection(
                &terminal.id,
                Some(&ports[..]),
                None,
                &[],
                terminal.batch,
                now,
            );
            let started = Instant::now();
            let got = store
                .containers_awaiting_pickup(&selection)
                .await
                .expect("selection");
            let selected = started.elapsed().as_secs_f64() * 1000.0;
            let expected: Vec<Uuid> = pick(&containers, live, m, terminal.batch, false)
                .into_iter()
                .map(Boxed::id)
                .collect();
            // The batch kept for arrivals, checked the same way (not timed).
            let arrivals = store
                .containers_awaiting_pickup(&TerminalSelection {
                    arriving_only: true,
                    ..selection
                })
                .await
                .expect("arrivals' selection");
            let expected_arrivals: Vec<Uuid> = pick(&containers, live, m, terminal.batch, true)
                .into_iter()
                .map(Boxed::id)
                .collect();
            assert_eq!(
                arrivals
                    .iter()
                    .map(|a| a.container.id.0)
                    .collect::<Vec<_>>(),
                expected_arrivals,
                "{name}: {} at tick {k}: the store's arrivals differ from the bench's order",
                terminal.id
            );
            let got: Vec<Uuid> = got.iter().map(|a| a.container.id.0).collect();
            assert_eq!(
                got, expected,
                "{name}: {} at tick {k}: the store's selection differs from the bench's order",
                terminal.id
            );
            picked += got.len();
            let ids: Vec<ContainerId> = got.iter().map(|&id| ContainerId(id)).collect();
            let started = Instant::now();
            store
                .record_terminal_asks(&terminal.id, &ids, now)
                .await
                .expect("record asks");
            let recorded = started.elapsed().as_secs_f64() * 1000.0;
            for id in got {
                let index = usize::try_from(id.as_u128() - ID_BASE).expect("an index");
                containers[index].last_ask = m;
            }
            select_ms.push(selected);
            record_ms.push(recorded);
            this_tick += selected + recorded;
        }
        tick_ms.push(this_tick);
    }
    println!(
        "{name:>9}: the store's selection picked what the bench's order picks, in its order, \
         for all {} terminals at {STORE_TICKS} ticks ({picked} containers)",
        world.terminals.len()
    );
    println!(
        "{name:>9}: a tick (each terminal's selection and record_terminal_asks): p50 {:.1} ms, \
         max {:.1} ms; one selection p50 {:.2} ms, p95 {:.2} ms; one record_terminal_asks \
         p50 {:.2} ms, p95 {:.2} ms",
        percentile(&mut tick_ms, 0.5),
        percentile(&mut tick_ms, 1.0),
        percentile(&mut select_ms.clone(), 0.5),
        percentile(&mut select_ms, 0.95),
        percentile(&mut record_ms.clone(), 0.5),
        percentile(&mut record_ms, 0.95),
    );
}

async fn stores(world: &World, tick: i64) {
    let held_count: usize = held(world).values().map(Vec::len).sum();
    let shipments = held(world).len();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bench.db");
    let sqlite: Arc<dyn Store> =
        Arc::new(tidemark_store_sqlite::SqliteStore::open(&path).expect("SQLite"));
    let started = Instant::now();
    let asks = seed(&sqlite, world).await;
    seed_asks_sqlite(&path, &asks);
    println!(
        "   sqlite: seeded {held_count} containers of {shipments} shipments and {} asks in {:.0} s",
        asks.len(),
        started.elapsed().as_secs_f64()
    );
    ticks("sqlite", sqlite.as_ref(), world, tick).await;
    drop(sqlite);
    match (
        std::env::var("TIDEMARK_TEST_POSTGRES_URL"),
        tidemark_store_postgres::testing::temp_schema().await,
    ) {
        (Ok(url), Some(schema)) => {
            let store = schema.store();
            let started = Instant::now();
            let asks = seed(&store, world).await;
            seed_asks_postgres(&url, schema.name(), &asks).await;
            println!(
                " postgres: seeded {held_count} containers of {shipments} shipments and {} asks in {:.0} s",
                asks.len(),
                started.elapsed().as_secs_f64()
            );
            ticks("postgres", store.as_ref(), world, tick).await;
        }
        _ => println!(" postgres: skipped (set TIDEMARK_TEST_POSTGRES_URL)"),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let config = Config::from_pairs(&[]).expect("default config");
    let tick_seconds = i64::try_from(config.scheduler_tick.as_secs()).expect("a short tick");
    assert!(
        tick_seconds >= 60 && tick_seconds % 60 == 0,
        "the simulation ticks in whole minutes"
    );
    let started = Instant::now();
    let world = simulate(tick_seconds / 60);
    println!("(simulated in {:.1} s)", started.elapsed().as_secs_f64());
    if std::env::var_os("BENCH_TERMINALS_NO_STORES").is_some() {
        return;
    }
    stores(&world, tick_seconds / 60).await;
}
