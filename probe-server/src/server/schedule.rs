//! The monitors' scheduler: every instance looks for due slots a few times a second, takes
//! each by moving the monitor's next slot in the store (compare and set, so of several
//! instances on one PostgreSQL database exactly one runs a slot, and a dead instance's
//! monitors are simply taken by the others), records the slots that passed unrun as missed,
//! and runs the slot as a normal probe linked to its monitor, then counts its points on
//! `/metrics` (`server::metrics`), stores them and judges its alerts (`server::alerts`).
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
//! runs start at one target host a minute over all monitors (`server::host_runs`), a slot over
//! it missed, saying so.

use super::AppState;
use super::client::ClientKey;
use super::registry::LiveProbe;
use crate::api::error::ApiError;
use crate::api::probes::Launch;
use crate::store::monitor_rows::StoredMonitor;
use h123_shared::api::{MonitorLink, ProbeRecord};
use h123_shared::monitor::{Claim, MonitorPoint, missed_point, points_of, refused_points};
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
const RESTART_SPREAD_MS: u64 = 30_000;

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
            match take_due(&state, up_since).await {
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
        let monitor = &stored.monitor;
        let due = monitor.next_slot_unix_ms;
        let claim = Claim::at(due, monitor.spec.every_ms, now);
        if !state
            .store
            .claim_slot(monitor.id.clone(), due, claim.next)
            .await?
        {
            // Another instance took it, or it was paused meanwhile.
            continue;
        }
        if claim.missed > 0 {
            let missed = missed_point(claim.missed_from, claim.missed);
            state
                .metrics
                .monitor_run(monitor, std::slice::from_ref(&missed), now);
            state
                .store
                .add_points(monitor.id.clone(), vec![missed])
                .await?;
        }
        let delay = restart_delay(&monitor.id, monitor.spec.every_ms, claim.run, up_since);
        let state = state.clone();
        tokio::spawn(async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            run_slot(state, stored, claim.run).await;
        });
    }
    state.store.next_slot().await
}

/// Runs monitor `stored`'s slot `slot` and stores its points.
async fn run_slot(state: AppState, stored: StoredMonitor, slot: u64) {
    let started = crate::probe::trace::unix_ms();
    let monitor = &stored.monitor;
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
    };
    let host = super::host_runs::host_of(&monitor.spec.options.url);
    if !state.monitor_hosts.take(&host) {
        // Over the cap at this host: the slot passes unrun, saying why.
        let mut missed = missed_point(slot, 1);
        missed.detail = Some(format!(
            "the monitors' runs at {host} are spent: at most {} a minute at one host",
            state.monitor_hosts.per_minute()
        ));
        store_points(&state, &stored, vec![missed], None).await;
        return;
    }
    let mut record = None;
    let points: Vec<MonitorPoint> = match launch.start(&state, monitor.spec.options.clone()).await {
        Ok(live) => {
            let done = finished(&live).await;
            let points = points_of(&done, slot, started, &monitor.spec.gates());
            record = Some(done);
            points
        }
        // No room now, or no bytes left: the slot passed without a run, saying why.
        Err(
            why @ (ApiError::ServerBusy
            | ApiError::TooManyProbes(_)
            | ApiError::ShuttingDown
            | ApiError::EgressSpent(_)
            | ApiError::EgressShareSpent(_)),
        ) => {
            state.monitor_hosts.give_back(&host);
            let mut missed = missed_point(slot, 1);
            missed.detail = Some(match why {
                ApiError::EgressSpent(_) => "the monitors' bytes per minute are spent".to_owned(),
                ApiError::EgressShareSpent(_) => {
                    "its client's share of the monitors' bytes per minute is spent".to_owned()
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

/// How long the run of slot `run` of monitor `id` (every `every_ms`) waits: nothing for a slot
/// due while this scheduler ran (since `up_since`); for one that fell due before, an offset
/// from the monitor's id below its interval and [`RESTART_SPREAD_MS`], so after a restart the
/// late slots spread as the monitors' own slots do instead of all running at once.
fn restart_delay(id: &str, every_ms: u64, run: u64, up_since: u64) -> Duration {
    if run >= up_since {
        return Duration::ZERO;
    }
    let window = every_ms.clamp(1, RESTART_SPREAD_MS);
    Duration::from_millis(h123_shared::monitor::first_slot(id, 0, window))
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
        assert_eq!(restart_delay("abc", 60_000, up, up), Duration::ZERO);
        assert_eq!(restart_delay("abc", 60_000, up + 5, up), Duration::ZERO);
        // 230 monitors every minute, all late after a stop: spread over the 30 s window.
        let delays: Vec<u64> = (0..230)
            .map(|n| restart_delay(&format!("mon{n:04}x"), 60_000, up - 68_000, up))
            .map(|d| u64::try_from(d.as_millis()).unwrap())
            .collect();
        assert!(delays.iter().all(|d| *d < RESTART_SPREAD_MS));
        let busiest = (0..RESTART_SPREAD_MS / 1000)
            .map(|s| delays.iter().filter(|d| **d / 3000 == s / 3).count())
            .max()
            .unwrap();
        assert!(
            busiest < 60,
            "at most a quarter in any 3 s: {busiest} of 230"
        );
        // A monitor every second waits less than a second.
        assert!(restart_delay("abc", 1000, up - 1, up) < Duration::from_secs(1));
    }
}
