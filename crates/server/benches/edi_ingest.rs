//! EDI ingest: how many X12 315 transactions per second go from an interchange's bytes to
//! stored transactions (parse, store, match), and then through `apply_edi` to shipments,
//! containers, transport events and domain events.
//!
//! `cargo bench -p tidemark-server --bench edi_ingest` (SQLite; PostgreSQL too when
//! `TIDEMARK_TEST_POSTGRES_URL` is set). 20 interchanges of 1,000 315s each (the shape of
//! `crates/edi/tests/fixtures/x12_4010_315_hamsud_discharged.edi`), one container each;
//! half the containers have a pending tracking request. The bytes and the requests are
//! made before the clock starts. Phase 1 receives every interchange as `POST
//! /v2/edi_messages` does; phase 2 runs the `apply_edi` work it queued, one call per job
//! (an interchange's matched requests, `APPLY_EDI_BATCH` at a time), with as many workers
//! as a worker process runs at once. Claiming and finishing the jobs is not measured.
//!
//! Then a second scenario, "further statuses", on the same database: 20 more interchanges
//! for the same containers, each with its next status, as a feed mostly sends them once
//! shipments are tracked. Half the transactions name a request that now has its shipment;
//! applying one updates that shipment (its containers, events and raw events read, planned
//! against and written) instead of creating it.

use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Duration, TimeZone, Utc};
use tidemark_domain::container_number::check_digit;
use tidemark_domain::{
    Account, AccountId, IdGenerator, MockClock, RequestType, TrackingRequest, TrackingRequestId,
    TrackingRequestStatus, UuidV7Ids,
};
use tidemark_server::use_cases::edi::{Channel, Inbound, receive};
use tidemark_server::use_cases::tracking::engine::{APPLY_EDI_BATCH, PollOutcome, apply_edi_all};
use tidemark_server::{App, Config};
use tidemark_store::Store;

/// The shipped binary's allocator (`main.rs`), so the benchmark measures what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const INTERCHANGES: usize = 20;
const PER_INTERCHANGE: usize = 1_000;
const TRANSACTIONS: usize = INTERCHANGES * PER_INTERCHANGE;
/// As many as a worker process runs at once by default (`worker_concurrency`).
const WORKERS: usize = 8;

/// Ocean statuses a 315 feed sends, with where each happens.
const STATUSES: [(&str, &str, &str); 4] = [
    ("AE", "KRPUS", "PUSAN NEWPORT CONTAINER"),
    ("VD", "KRPUS", "PUSAN NEWPORT CONTAINER"),
    ("VA", "MXZLO", "SSA MEXICO HOLDINGS"),
    ("UV", "MXZLO", "SSA MEXICO HOLDINGS"),
];

/// The `i`th container: a valid ISO 6346 number (owner `MRS`, equipment `U`).
fn container(i: usize) -> (String, String, u8) {
    let serial = format!("{:06}", 100_000 + i);
    let digit = check_digit(&format!("MRSU{serial}")).expect("a well-formed prefix");
    ("MRSU".to_owned(), serial, digit)
}

fn container_number(i: usize) -> String {
    let (owner, serial, digit) = container(i);
    format!("{owner}{serial}{digit}")
}

fn local(at: DateTime<Utc>) -> (String, String, String) {
    (
        at.format("%Y%m%d").to_string(),
        at.format("%H%M").to_string(),
        at.format("%H%M%S").to_string(),
    )
}

/// One 315 for the `i`th container, as Hamburg Süd sends them (B4, N9 BM/BN/EQ/SCA, Q2,
/// R4 + DTM for the loading, discharge, delivery and activity places). `wave` 0 is the
/// first status sent for it, each further wave the next one.
fn transaction(i: usize, control: usize, epoch: DateTime<Utc>, wave: usize) -> String {
    let (owner, serial, digit) = container(i);
    let number = format!("{owner}{serial}{digit}");
    let minutes = i64::try_from(i % 1_440).expect("small");
    let loaded = epoch + Duration::minutes(minutes);
    let departed = loaded + Duration::hours(20);
    let arrived = loaded + Duration::days(17);
    let discharged = arrived + Duration::hours(9);
    let status = (i + wave) % STATUSES.len();
    let (code, locode, place) = STATUSES[status];
    let status_at = [loaded, departed, arrived, discharged][status];
    let (b4_date, b4_time, _) = local(status_at);
    let (load_date, _, load_time) = local(loaded);
    let (eta_date, _, eta_time) = local(arrived);
    let (status_date, _, status_time) = local(status_at);
    let delivery = arrived + Duration::days(5);
    let (delivery_date, _, delivery_time) = local(delivery);
    let bill = format!("SUDUN6BENCH{i:06}");
    let booking = format!("6BEN{i:06}");
    let voyage = format!("{:03}S", 600 + i % 7);
    let segments = [
        format!("ST*315*{control:09}"),
        format!("B4***{code}*{b4_date}*{b4_time}**{owner}*{serial}*L*45G1*{locode}*UN*{digit}"),
        "N9*4F*800992458*SAMSUNG SDS".to_owned(),
        format!("N9*BM*{bill}"),
        format!("N9*BN*{booking}"),
        format!("N9*EQ*{number}"),
        "N9*SCA*SUDU".to_owned(),
        format!("N9*SN*{}", 5_500_000 + i),
        "N9*WU*MAERSK STEPNICA".to_owned(),
        format!("Q2*9352004********{voyage}***L*MAERSK STEPNICA"),
        "R4*L*UN*KRPUS*PUSAN NEWPORT CONTAINER *KR".to_owned(),
        format!("DTM*140*{load_date}*{load_time}*LT"),
        "R4*D*UN*MXZLO*SSA MEXICO HOLDINGS*MX".to_owned(),
        format!("DTM*140*{eta_date}*{eta_time}*LT"),
        "R4*E*UN*MXQRO*QUERETARO*MX***QU".to_owned(),
        format!("DTM*139*{delivery_date}*{delivery_time}*LT"),
        format!("R4*5*UN*{locode}*{place}"),
        format!("DTM*140*{status_date}*{status_time}*LT"),
    ];
    let count = segments.len() + 1;
    let mut text = segments.join("~");
    text.push_str(&format!("~SE*{count}*{control:09}~"));
    text
}

/// The `n`th interchange of a `wave`: `PER_INTERCHANGE` 315s in one functional group.
fn interchange(n: usize, epoch: DateTime<Utc>, wave: usize) -> Vec<u8> {
    let control = 720_000 + wave * INTERCHANGES + n;
    let sent = epoch
        + Duration::days(20)
        + Duration::hours(i64::try_from(wave).expect("small"))
        + Duration::minutes(i64::try_from(n).expect("small"));
    let (date, time, _) = local(sent);
    let short_date = &date[2..];
    let mut text = format!(
        "ISA*00*          *00*          *ZZ*HAMSUD         *ZZ*TIDEMARK       *{short_date}*{time}*U*00401*{control:09}*0*P*>~GS*QO*HAMSUD*TIDEMARK*{date}*{time}*{control}*X*004010~"
    );
    for t in 0..PER_INTERCHANGE {
        let i = n * PER_INTERCHANGE + t;
        text.push_str(&transaction(
            i,
            1_000_000 + wave * TRANSACTIONS + i,
            epoch,
            wave,
        ));
    }
    text.push_str(&format!(
        "GE*{PER_INTERCHANGE}*{control}~IEA*1*{control:09}~"
    ));
    text.into_bytes()
}

/// A pending container request, as `POST /v2/tracking_requests` stores it.
fn request(account: AccountId, number: &str, at: DateTime<Utc>) -> TrackingRequest {
    TrackingRequest {
        id: TrackingRequestId::new(&UuidV7Ids),
        account_id: account,
        request_type: RequestType::Container,
        request_number: number.to_owned(),
        scac: "SUDU".to_owned(),
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

/// Wall and machine-CPU seconds of a phase.
struct Timed {
    elapsed: f64,
    busy: Option<f64>,
}

impl Timed {
    fn line(&self, what: &str, count: usize, unit: &str) -> String {
        #[expect(clippy::cast_precision_loss, reason = "a rate for humans")]
        let count = count as f64;
        let mut line = format!(
            "{what} {count:.0} {unit} in {:.2} s = {:.0} {unit}/s",
            self.elapsed,
            count / self.elapsed
        );
        if let Some(busy) = self.busy {
            line.push_str(&format!(
                ", CPU busy {busy:.2} s = {:.0} ms per 1,000",
                busy * 1_000_000.0 / count
            ));
        }
        line
    }
}

async fn run(name: &str, store: Arc<dyn Store>, interchanges: &[Vec<u8>], further: &[Vec<u8>]) {
    let epoch = Utc
        .with_ymd_and_hms(2026, 2, 1, 6, 0, 0)
        .single()
        .expect("valid date");
    let clock = Arc::new(MockClock::new(epoch + Duration::days(28)));
    let config = Config::from_pairs(&[]).expect("default config");
    let app = Arc::new(App::new(
        config,
        Arc::clone(&store),
        Arc::clone(&clock) as _,
        Arc::new(UuidV7Ids),
    ));
    let ids = UuidV7Ids;
    let account = Account {
        id: AccountId::new(&ids),
        name: format!("bench-{}", ids.next_id()),
        created_at: epoch,
    };
    store.create_account(&account).await.expect("account");
    // Users asked for half of the containers before their statuses came in.
    let mut requests = Vec::with_capacity(TRANSACTIONS / 2);
    for i in (0..TRANSACTIONS).step_by(2) {
        let request = request(account.id, &container_number(i), epoch);
        store
            .create_tracking_request(&request)
            .await
            .expect("request");
        requests.push(request.id);
    }
    wave(
        name,
        &app,
        account.id,
        &requests,
        interchanges,
        "first results",
    )
    .await;
    wave(
        name,
        &app,
        account.id,
        &requests,
        further,
        "further statuses",
    )
    .await;
}

/// Receives `interchanges` (phase 1) and applies what they matched (phase 2), then prints
/// the rates.
async fn wave(
    name: &str,
    app: &Arc<App>,
    account: AccountId,
    requests: &[TrackingRequestId],
    interchanges: &[Vec<u8>],
    scenario: &str,
) {
    // Phase 1: each interchange received (stored raw, read, its transactions stored and
    // matched, one `apply_edi` job queued per request named).
    let inbound = Inbound {
        channel: Channel::Api,
        source_name: None,
        create_shipments: false,
    };
    let (mut received, mut unmatched) = (0, 0);
    let phase_one = timed(async {
        for bytes in interchanges {
            let message = receive(&app.edi(), account, &inbound, bytes)
                .await
                .expect("received");
            assert_eq!(message.status, "processed", "{message:?}");
            received += message.transactions as usize;
            unmatched += message.unmatched as usize;
        }
    })
    .await;
    assert_eq!(received, TRANSACTIONS);
    assert_eq!(unmatched, TRANSACTIONS - requests.len());

    // Phase 2: the queued work, as its jobs hold it: each interchange's matched requests,
    // `APPLY_EDI_BATCH` to a job, their stored EDI applied.
    let jobs: Arc<Vec<Vec<TrackingRequestId>>> = Arc::new(
        requests
            .chunks(PER_INTERCHANGE / 2)
            .flat_map(|matched| matched.chunks(APPLY_EDI_BATCH).map(<[_]>::to_vec))
            .collect(),
    );
    let phase_two = timed(async {
        let mut workers = tokio::task::JoinSet::new();
        for worker in 0..WORKERS {
            let (app, jobs) = (Arc::clone(app), Arc::clone(&jobs));
            workers.spawn(async move {
                let mut tracked = 0;
                for job in jobs.iter().skip(worker).step_by(WORKERS) {
                    let outcomes = apply_edi_all(&app.engine(), account, job)
                        .await
                        .expect("read");
                    assert_eq!(outcomes.len(), job.len());
                    for (_, outcome) in outcomes {
                        let outcome = outcome.expect("applied");
                        assert!(matches!(outcome, PollOutcome::Tracked), "{outcome:?}");
                        tracked += 1;
                    }
                }
                tracked
            });
        }
        let mut tracked = 0;
        while let Some(done) = workers.join_next().await {
            tracked += done.expect("worker");
        }
        assert_eq!(tracked, requests.len());
    })
    .await;

    let both = Timed {
        elapsed: phase_one.elapsed + phase_two.elapsed,
        busy: phase_one.busy.zip(phase_two.busy).map(|(a, b)| a + b),
    };
    println!(
        "{name:>10}: {INTERCHANGES} interchanges of {PER_INTERCHANGE} 315s, {} matched ({scenario})",
        requests.len()
    );
    println!(
        "{:>10}  {}",
        "",
        phase_one.line("receive:", TRANSACTIONS, "transactions")
    );
    println!(
        "{:>10}  {} ({WORKERS} workers)",
        "",
        phase_two.line("apply_edi:", requests.len(), "requests")
    );
    println!(
        "{:>10}  {}",
        "",
        both.line("end to end:", TRANSACTIONS, "transactions")
    );
}

async fn timed(work: impl Future<Output = ()>) -> Timed {
    let busy_before = busy_cpu_seconds();
    let started = Instant::now();
    work.await;
    Timed {
        elapsed: started.elapsed().as_secs_f64(),
        busy: busy_cpu_seconds()
            .zip(busy_before)
            .map(|(after, before)| after - before),
    }
}

/// Seconds every core of the machine spent busy (Linux `/proc/stat`), or `None` elsewhere:
/// the cost in CPU, which a slower or shared machine changes less than the rate.
fn busy_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu = stat.lines().next()?.strip_prefix("cpu ")?;
    let ticks: Vec<f64> = cpu
        .split_whitespace()
        .map(|field| field.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal: idle, waiting and stolen time are not
    // the benchmark's.
    let busy = [0, 1, 2, 5, 6]
        .iter()
        .map(|&field| ticks.get(field).copied())
        .sum::<Option<f64>>()?;
    // USER_HZ is 100 on every Linux architecture Tidemark builds for.
    Some(busy / 100.0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let epoch = Utc
        .with_ymd_and_hms(2026, 2, 1, 6, 0, 0)
        .single()
        .expect("valid date");
    let interchanges: Vec<Vec<u8>> = (0..INTERCHANGES)
        .map(|n| interchange(n, epoch, 0))
        .collect();
    // The next status of every container, once the first ones are applied.
    let further: Vec<Vec<u8>> = (0..INTERCHANGES)
        .map(|n| interchange(n, epoch, 1))
        .collect();
    // Reading alone, for scale: what the parser costs of phase 1.
    let started = Instant::now();
    for bytes in &interchanges {
        let read = tidemark_edi::read(bytes).expect("a readable interchange");
        assert_eq!(read.transactions.len(), PER_INTERCHANGE);
        assert!(read.transactions.iter().all(Result::is_ok));
    }
    let parse = started.elapsed().as_secs_f64();
    #[expect(clippy::cast_precision_loss, reason = "a rate for humans")]
    let rate = TRANSACTIONS as f64 / parse;
    println!(
        "{:>10}: {TRANSACTIONS} transactions read in {parse:.2} s = {rate:.0} transactions/s ({} KiB)",
        "parse only",
        interchanges.iter().map(Vec::len).sum::<usize>() / 1024
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let sqlite =
        tidemark_store_sqlite::SqliteStore::open(dir.path().join("bench.db")).expect("SQLite");
    run("sqlite", Arc::new(sqlite), &interchanges, &further).await;
    if let Some(schema) = tidemark_store_postgres::testing::temp_schema().await {
        run("postgres", schema.store(), &interchanges, &further).await;
    } else {
        println!("  postgres: skipped (set TIDEMARK_TEST_POSTGRES_URL)");
    }
}
