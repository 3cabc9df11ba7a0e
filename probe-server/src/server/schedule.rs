//! The monitors' scheduler: every instance looks for due slots a few times a second, takes
//! each by moving the monitor's next slot in the store (compare and set, so of several
//! instances on one PostgreSQL database exactly one runs a slot, and a dead instance's
//! monitors are simply taken by the others), records the slots that passed unrun as missed,
//! and runs the slot as a normal probe linked to its monitor, then counts its points on
//! `/metrics` (`server::metrics`), stores them and judges its alerts (`server::alerts`).
//! The claim stores the slot's point as `running` in its own transaction, and the run's points
//! (or a missed one) replace it, so a slot always has a point: one still `running` when the
//! server starts again is `cancelled`, saying the server stopped during the run. After a
//! restart, the slots that fell due while the server was down run spread by an offset from
//! each monitor's id ([`RESTART_SPREAD_MS`] at most), or, when that reaches the monitor's next
//! slot, are missed, saying the server was not running.
//!
//! Monitors count as one client of their own ([`MONITORS`]): they share the fair running
//! slots with people's probes and may fill at most half of the queue, so a thousand of them
//! never starve an interactive probe, and every run takes its byte budget from one quota of
//! all monitors together (`--monitor-bytes-per-minute`), so however many monitors strangers
//! make, what they make the server fetch from others is bounded. That quota is shared evenly
//! among the clients that made running monitors (counted again at every look that finds
//! slots due), each run paid from its monitor's client's share, so one client's monitors
//! cannot spend what another's need; a slot refused for want of room or bytes is recorded as
//! missed, saying why. Requests are bounded too: at most `--max-monitor-runs-per-host-minute`
//! runs start at one target site (a registrable domain or an address) a minute over all
//! monitors (`server::host_runs`), the sites of the addresses a run dials counted too, a slot
//! over it missed, saying so.
//!
//! Nothing is stored once a shutdown has returned: each look for due slots and each slot's
//! run is work the shutdown waits for (`AppState::scheduler_work`), and none begins once it
//! has started (a slot claimed but not begun keeps its `running` point, cancelled at the next
//! start).

use super::AppState;
use super::client::ClientKey;
use super::host_runs::RunSites;
use super::registry::LiveProbe;
use crate::api::error::ApiError;
use crate::api::probes::Launch;
use crate::store::monitor_rows::StoredMonitor;
use h123_shared::api::{MonitorLink, ProbeRecord};
use h123_shared::monitor::{
    Claim, MonitorPoint, missed_point, points_of, refused_points, running_point,
};
use std::net::Ipv6Addr;
use std::time::Duration;

/// The client every monitor's run counts as (no peer has the unspecified address).
pub const MONITORS: ClientKey = ClientKey::V6(Ipv6Addr::UNSPECIFIED, 128);

/// The longest an instance sleeps between looks for due slots: it wakes at the earliest slot
/// it knows of, and at least this often for monitors made or resumed meanwhile (at any instance).
const TICK: Duration = Duration::from_millis(200);

/// Most due monitors taken in one look (the rest are taken at the next).
const BATCH: usize = 256;

/// The widest spread of the slots that fell due while this instance was not running: after a
/// stop, a thousand monitors' late slots would otherwise all run in the first seconds.
const RESTART_SPREAD_MS: u64 = 60_000;

/// Runs the scheduler for as long as the server runs; nothing when monitors are off.
pub fn spawn(state: AppState) {
    if state.config.monitors.max_total == 0 {
        return;
    }
    let up_since = crate::probe::trace::unix_ms();
    tokio::spawn(async move {
        let mut failing = false;
        let mut wake = TICK;
        while !state.is_shutting_down() {
            tokio::time::sleep(wake).await;
            wake = TICK;
            let Some(work) = state.scheduler_work() else {
                break;
            };
            let taken = take_due(&state, up_since).await;
            drop(work);
            match taken {
                Ok(next) => {
                    failing = false;
                    let now = crate::probe::trace::unix_ms();
                    if let Some(next) = next {
                        // A millisecond at least, so a full batch does not spin.
                        wake = Duration::from_millis(next.saturating_sub(now).max(1)).min(TICK);
                    }
                }
                // Said once per outage, not five times a second.
                Err(e) if !failing => {
                    failing = true;
                    eprintln!("h123 serve: monitors cannot be scheduled: {e}");
                }
                Err(_) => {}
            }
        }
    });
}

/// Takes every slot due now and starts its run (a slot that fell due before `up_since`, when
/// this scheduler started, after its [`restart_delay`]); the earliest next slot of a running
/// monitor.
async fn take_due(state: &AppState, up_since: u64) -> crate::store::Result<Option<u64>> {
    let now = crate::probe::trace::unix_ms();
    let due = state.store.due_monitors(now, BATCH).await?;
    if !due.is_empty() {
        let clients = state.store.monitor_clients().await?;
        state.monitor_egress.set_sharers(clients);
    }
    for stored in due {
        if state.is_shutting_down() {
            break;
        }
        let monitor = &stored.monitor;
        let due = monitor.next_slot_unix_ms;
        let claim = Claim::at(due, monitor.spec.every_ms, now);
        // The slot's point is `running` from the claim on, in the claim's transaction, so a
        // crash leaves it to be cancelled at the next start, never no point at all.
        if !state
            .store
            .claim_slot(
                monitor.id.clone(),
                (due, claim.next),
                running_point(claim.run, now),
            )
            .await?
        {
            // Another instance took it, or it was paused meanwhile.
            continue;
        }
        if claim.missed > 0 {
            let mut missed = missed_point(claim.missed_from, claim.missed);
            missed.detail = Some(missed_reason(claim.missed_from, up_since));
            state
                .metrics
                .monitor_run(monitor, std::slice::from_ref(&missed), now);
            state
                .store
                .add_points(monitor.id.clone(), vec![missed])
                .await?;
        }
        let late = restart_delay(&monitor.id, monitor.spec.every_ms, &claim, up_since, now);
        let state = state.clone();
        tokio::spawn(async move {
            if let Some(delay) = late.filter(|delay| !delay.is_zero()) {
                tokio::time::sleep(delay).await;
            }
            // Begun after a shutdown, it stores nothing.
            let Some(_work) = state.scheduler_work() else {
                return;
            };
            match late {
                Some(_) => run_slot(state.clone(), stored, claim.run).await,
                None => {
                    // Its next slot comes before its turn in the spread: this one passes.
                    let mut missed = missed_point(claim.run, 1);
                    missed.detail = Some(NOT_RUNNING.to_owned());
                    store_points(&state, &stored, vec![missed], None).await;
                }
            }
        });
    }
    state.store.next_slot().await
}

/// Why slots that passed unrun from `from` on are missed, when this scheduler started at
/// `up_since`.
fn missed_reason(from: u64, up_since: u64) -> String {
    if from < up_since {
        NOT_RUNNING.to_owned()
    } else {
        "the scheduler found it more than an interval late (the server was busy)".to_owned()
    }
}

/// Why a slot that fell due while no scheduler ran is missed.
const NOT_RUNNING: &str = "the server was not running at its time";

/// Runs monitor `stored`'s slot `slot` and stores its points.
async fn run_slot(state: AppState, stored: StoredMonitor, slot: u64) {
    let started = crate::probe::trace::unix_ms();
    let monitor = &stored.monitor;
    let site = super::host_runs::site_of(&monitor.spec.options.url);
    if !state.monitor_hosts.take(&site) {
        // Over the cap at this site: the slot passes unrun, saying why.
        let missed = capped(&state, slot, &site);
        store_points(&state, &stored, vec![missed], None).await;
        return;
    }
    // The sites of the addresses it dials are taken at the dial.
    let sites = RunSites::new(state.monitor_hosts.clone(), site.clone());
    let launch = Launch {
        client: MONITORS,
        payer: payer(&stored),
        quota: state.monitor_egress.clone(),
        per_client: (state.config.max_queued / 2).max(1),
        owner_hash: stored.owner_hash.clone().unwrap_or_default(),
        monitor: Some(MonitorLink {
            id: monitor.id.clone(),
            slot_unix_ms: slot,
        }),
        gate: Some(sites.clone()),
    };
    let mut record = None;
    let points: Vec<MonitorPoint> = match launch.start(&state, monitor.spec.options.clone()).await {
        Ok(live) => {
            let done = finished(&live).await;
            match sites.spent_site() {
                // An address it was to dial is over the cap: the slot is missed, saying why.
                Some(spent) => vec![capped(&state, slot, &spent)],
                None => {
                    let points = points_of(&done, slot, started, &monitor.spec.gates());
                    record = Some(done);
                    points
                }
            }
        }
        // No room now, or no bytes left: the slot passed without a run, saying why.
        Err(
            why @ (ApiError::ServerBusy
            | ApiError::TooManyProbes(_)
            | ApiError::ShuttingDown
            | ApiError::EgressSpent(_)
            | ApiError::EgressShareSpent(_)
            | ApiError::ServerBytesSpent(_)),
        ) => {
            state.monitor_hosts.give_back(&site);
            let mut missed = missed_point(slot, 1);
            missed.detail = Some(match why {
                ApiError::EgressSpent(_) => "the monitors' bytes per minute are spent".to_owned(),
                ApiError::EgressShareSpent(_) => {
                    "its client's share of the monitors' bytes per minute is spent".to_owned()
                }
                ApiError::ServerBytesSpent(_) => {
                    "the server's bytes from targets per minute are spent".to_owned()
                }
                other => other.to_string(),
            });
            vec![missed]
        }
        // Refused (a target that now resolves to a private address, a vantage gone):
        // a failed run that says why.
        Err(refusal) => refused_points(
            &monitor.spec.options,
            slot,
            started,
            &state.config.vantage.name,
            &format!("not run: {refusal}"),
        ),
    };
    store_points(&state, &stored, points, record.as_ref()).await;
}

/// The missed point of slot `slot`, found over the cap at `site`, counted on `/metrics`.
fn capped(state: &AppState, slot: u64, site: &str) -> MonitorPoint {
    state.metrics.slot_capped();
    let mut missed = missed_point(slot, 1);
    missed.detail = Some(state.monitor_hosts.spent(site));
    missed
}

/// Counts a slot's `points` on `/metrics`, stores them and judges the monitor's alerts on them.
async fn store_points(
    state: &AppState,
    stored: &StoredMonitor,
    points: Vec<MonitorPoint>,
    record: Option<&ProbeRecord>,
) {
    let monitor = &stored.monitor;
    let now = crate::probe::trace::unix_ms();
    state.metrics.monitor_run(monitor, &points, now);
    if let Err(e) = state
        .store
        .add_points(monitor.id.clone(), points.clone())
        .await
    {
        eprintln!("h123 serve: cannot store monitor {}'s run: {e}", monitor.id);
    }
    super::alerts::after_run(state, stored, &points, record).await;
}

/// How long the claimed slot `claim.run` of monitor `id` (every `every_ms`) waits at `now`:
/// nothing for a slot due while this scheduler ran (since `up_since`); for one that fell due
/// before, an offset from a hash of its id below its interval and [`RESTART_SPREAD_MS`], so
/// after a restart the late slots spread as the monitors' own slots do instead of all running
/// at once. `None` when that offset reaches the monitor's next slot: the late one is missed.
fn restart_delay(
    id: &str,
    every_ms: u64,
    claim: &Claim,
    up_since: u64,
    now: u64,
) -> Option<Duration> {
    if claim.run >= up_since {
        return Some(Duration::ZERO);
    }
    let window = every_ms.clamp(1, RESTART_SPREAD_MS);
    // Not the id's own hash: that is the monitor's phase, and an offset equal to it would put
    // every late run exactly at (or past) its next slot.
    let offset = h123_shared::monitor::first_slot(&format!("{id}/restart"), 0, window);
    (now + offset < claim.next).then(|| Duration::from_millis(offset))
}

/// The client whose share of the monitors' bytes pays for `stored`'s runs: the one that made
/// it, or [`MONITORS`] for the monitors made before clients were kept (one client together).
fn payer(stored: &StoredMonitor) -> ClientKey {
    stored
        .client
        .as_deref()
        .and_then(|text| text.parse().ok())
        .unwrap_or(MONITORS)
}

/// The probe's final record, once it has one.
async fn finished(live: &LiveProbe) -> ProbeRecord {
    let mut changes = live.subscribe();
    while !live.is_finished() {
        if changes.changed().await.is_err() {
            break;
        }
    }
    live.record()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_late_from_before_a_restart_spread_and_others_wait_for_nothing() {
        let up = 1_000_000;
        let on_time = Claim::at(up, 60_000, up);
        assert_eq!(
            restart_delay("abc", 60_000, &on_time, up, up),
            Some(Duration::ZERO)
        );
        // 230 monitors every minute, all late after a 68 s stop: spread over their interval,
        // each before its next slot or missed.
        let delays: Vec<Option<u64>> = (0..230)
            .map(|n| {
                let id = format!("mon{n:04}x");
                let due = h123_shared::monitor::first_slot(&id, up - 68_000 - 60_000, 60_000);
                let claim = Claim::at(due, 60_000, up);
                restart_delay(&id, 60_000, &claim, up, up).map(|d| {
                    let d = u64::try_from(d.as_millis()).unwrap();
                    assert!(up + d < claim.next, "a late run before its next slot");
                    d
                })
            })
            .collect();
        let ran: Vec<u64> = delays.iter().flatten().copied().collect();
        assert!(ran.len() > 50, "most late slots still run: {}", ran.len());
        let first_3s = ran.iter().filter(|d| **d < 3000).count();
        assert!(first_3s < 30, "{first_3s} of 230 in the first 3 s");
        // A monitor every second waits less than a second, or misses its late slot.
        let claim = Claim::at(up - 1, 1000, up);
        assert!(
            restart_delay("abc", 1000, &claim, up, up).is_none_or(|d| d < Duration::from_secs(1))
        );
    }

    #[test]
    fn a_stretch_missed_while_the_server_was_down_says_so() {
        assert_eq!(missed_reason(10, 20), NOT_RUNNING);
        assert!(missed_reason(30, 20).contains("busy"));
    }
}
