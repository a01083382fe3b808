//! The sandbox terminal: a made-up terminal whose answers follow from the container number
//! and the time the container was discharged, so demos and tests see the whole story of an
//! import without a real terminal.
//!
//! For a container discharged at `D`, at `now`:
//!
//! | from | the terminal says |
//! | --- | --- |
//! | before `D + quiet` | nothing: the container is absent (`quiet` is 4 to 8 hours, by number) |
//! | `D + quiet` | not available; a **customs** hold `pending`; yard block `SBX-<letter><row>` |
//! | `D + quiet + 12 h` | the customs hold is `hold` |
//! | `D + quiet + 30 h` | the customs hold is released: **available**; last free day = `D`'s day + 4 |
//! | each day after the last free day | a **demurrage** fee of 150.00 USD a day so far, and an appointment at 10:00 UTC on the day after the last free day |
//!
//! From `D + quiet + 30 h` the last free day is known whether or not the container is
//! released (free time runs regardless). Numbers whose **serial ends in 7** (the sixth digit
//! after the owner code, before the check digit: `MSCU1234571`) are **never released**:
//! the customs hold stays, the container is never available, and demurrage accrues.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Duration, NaiveTime, Utc};
use serde_json::json;
use tidemark_domain::{Clock, ContainerNumber};

use crate::connector::{ContainerQuery, TerminalConnector, TerminalError, check_batch};
use crate::profile::{Profiles, TerminalProfile};
use crate::status::{Fee, FeeKind, Hold, HoldKind, HoldStatus, TerminalStatus};

/// Free days after the day of discharge.
pub const FREE_DAYS: i64 = 4;
/// Demurrage a day once the last free day has passed, in cents.
pub const DEMURRAGE_CENTS_PER_DAY: i64 = 15_000;
/// How long the customs hold is `pending` before it is `hold`.
const PENDING_FOR: Duration = Duration::hours(12);
/// How long after the terminal first reports the container the hold is released.
const RELEASED_AFTER: Duration = Duration::hours(30);

/// Whether the sandbox never releases this container: its serial ends in 7.
pub fn never_released(container: &ContainerNumber) -> bool {
    container.serial() % 10 == 7
}

/// How long after discharge the terminal says nothing: 4 to 8 hours, by the number's
/// FNV-1a hash (stable across builds and platforms, unlike `std`'s hasher).
fn quiet_for(container: &ContainerNumber) -> Duration {
    let hash = container
        .as_str()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
    Duration::hours(4 + i64::try_from(hash % 5).unwrap_or(0))
}

/// What the sandbox terminal says at `now` about `container`, discharged at
/// `discharged_at`; `None` while it says nothing.
pub fn status_at(
    container: &ContainerNumber,
    discharged_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Option<TerminalStatus> {
    let reported_at = discharged_at + quiet_for(container);
    if now < reported_at {
        return None;
    }
    let since = now - reported_at;
    let mut status = TerminalStatus::new(container.clone(), now);
    let serial = container.serial();
    let block = char::from(b'A' + u8::try_from(serial % 6).unwrap_or(0));
    status.location = Some(format!("SBX-{block}{:02}", serial % 40 + 1));

    let released = since >= RELEASED_AFTER && !never_released(container);
    let phase = if released {
        "released"
    } else if since >= PENDING_FOR {
        "customs_hold"
    } else {
        "customs_pending"
    };
    if !released {
        status.holds.push(Hold {
            kind: HoldKind::Customs,
            status: if since >= PENDING_FOR {
                HoldStatus::Hold
            } else {
                HoldStatus::Pending
            },
            description: "CUSTOMS HOLD (sandbox)".to_owned(),
        });
    }
    status.availability = Some(released);

    let mut days_late = 0;
    if since >= RELEASED_AFTER {
        let lfd = discharged_at.date_naive() + Duration::days(FREE_DAYS);
        status.last_free_day = Some(lfd);
        days_late = (now.date_naive() - lfd).num_days().max(0);
        if days_late > 0 {
            status.fees.push(Fee {
                kind: FeeKind::Demurrage,
                amount_cents: days_late * DEMURRAGE_CENTS_PER_DAY,
                currency_code: "USD".to_owned(),
                description: format!("Demurrage, {days_late} day(s) past {lfd} (sandbox)"),
            });
            if released {
                let day_after = lfd + Duration::days(1);
                status.appointment_at =
                    Some(day_after.and_time(NaiveTime::MIN).and_utc() + Duration::hours(10));
            }
        }
    }
    status.raw = json!({
        "sandbox": {
            "container": container.as_str(),
            "discharged_at": discharged_at,
            "reported_at": reported_at,
            "phase": phase,
            "never_released": never_released(container),
            "days_past_last_free_day": days_late,
        }
    });
    Some(status)
}

/// Where the sandbox learns when a container was discharged: the server's record of it.
pub type DischargeTimes = Arc<dyn Fn(&ContainerNumber) -> Option<DateTime<Utc>> + Send + Sync>;

/// The sandbox terminal as a connector: [`status_at`] for each container whose discharge
/// time is known, at the clock's now. Containers with no discharge time are absent.
pub struct SandboxTerminal {
    profile: TerminalProfile,
    clock: Arc<dyn Clock>,
    discharges: DischargeTimes,
}

impl SandboxTerminal {
    pub fn new(clock: Arc<dyn Clock>, discharges: DischargeTimes) -> Self {
        Self {
            profile: sandbox_profile(),
            clock,
            discharges,
        }
    }

    /// A sandbox that knows a fixed set of discharge times (tests, demos).
    pub fn with_discharges(
        clock: Arc<dyn Clock>,
        discharges: HashMap<ContainerNumber, DateTime<Utc>>,
    ) -> Self {
        Self::new(
            clock,
            Arc::new(move |container| discharges.get(container).copied()),
        )
    }
}

/// The embedded `sandbox` profile.
fn sandbox_profile() -> TerminalProfile {
    Profiles::embedded()
        .get("sandbox")
        .cloned()
        .expect("the embedded profiles hold `sandbox` (unit-tested in profile.rs)")
}

#[async_trait]
impl TerminalConnector for SandboxTerminal {
    fn profile(&self) -> &TerminalProfile {
        &self.profile
    }

    async fn lookup(&self, batch: &[ContainerQuery]) -> Result<Vec<TerminalStatus>, TerminalError> {
        check_batch(&self.profile, batch)?;
        let now = self.clock.now();
        Ok(batch
            .iter()
            .filter_map(|query| {
                let discharged_at = (self.discharges)(&query.container)?;
                status_at(&query.container, discharged_at, now)
            })
            .collect())
    }
}
