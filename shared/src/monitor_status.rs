//! A monitor's status at a glance: each protocol's last run at each vantage, and its uptime and
//! p95 total over the last day, week and month (the status page and
//! `GET /api/v1/monitors/{id}/status`). A run is up when every attempt answered without an
//! HTTP error; failed, erroring and skipped runs are down; missed slots are counted apart. The
//! server draws it from rollups (`monitor_rollup::status`); `status` here, from points, is the
//! exact reference that is checked against.

use crate::json::ReadJson;
#[cfg(test)]
use crate::monitor::MonitorPoint;
use crate::monitor::PointState;
use crate::schema::{Micros, Protocol};
#[cfg(test)]
use crate::stats::percentile;
use serde::{Deserialize, Serialize};
#[cfg(test)]
use std::collections::BTreeMap;

const DAY_MS: u64 = 24 * 3600 * 1000;

/// The windows a status covers, by name and length, shortest first.
pub const WINDOWS: [(&str, u64); 3] = [("24h", DAY_MS), ("7d", 7 * DAY_MS), ("30d", 30 * DAY_MS)];

/// A protocol's last run at one vantage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LastRun {
    /// Its slot, milliseconds since the Unix epoch.
    pub slot_unix_ms: u64,
    /// How it came out.
    pub state: PointState,
    /// Its total on new connections, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Micros>,
    /// The status of its first answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The thresholds it breached.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breached: Vec<String>,
    /// What failed, or why the protocol was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Its probe record (`/r/{probe_id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_id: Option<String>,
}

impl LastRun {
    /// The last run that `point` records.
    pub fn of(point: &crate::monitor::MonitorPoint) -> LastRun {
        LastRun {
            slot_unix_ms: point.slot_unix_ms,
            state: point.state,
            total: point.figures.total,
            status: point.status,
            breached: point.breached.clone(),
            detail: point.detail.clone(),
            probe_id: point.probe_id.clone(),
        }
    }
}

/// One protocol's runs at one vantage over one window.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WindowFigures {
    /// The window: `24h`, `7d` or `30d`.
    pub window: String,
    /// Runs in it.
    pub runs: u32,
    /// Of those, runs that were up.
    pub up: u32,
    /// The 95th percentile of the total on new connections over the runs that were up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_total: Option<Micros>,
}

impl WindowFigures {
    /// Uptime as a percentage with two decimals (`99.93%`), `—` without runs.
    pub fn uptime_text(&self) -> String {
        if self.runs == 0 {
            return "—".to_owned();
        }
        let hundredths = u64::from(self.up) * 10_000 / u64::from(self.runs);
        format!("{}.{:02}%", hundredths / 100, hundredths % 100)
    }
}

/// One protocol at one vantage.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StatusRow {
    /// The protocol.
    pub protocol: Protocol,
    /// The vantage (empty for the server itself).
    pub vantage: String,
    /// The latest run.
    pub last: LastRun,
    /// The figures per window, shortest first.
    pub windows: Vec<WindowFigures>,
}

/// Slots that passed without a run in one window.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WindowMissed {
    /// The window: `24h`, `7d` or `30d`.
    pub window: String,
    /// Slots missed in it.
    pub missed: u64,
}

/// `GET /api/v1/monitors/{id}/status`: where a monitor stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MonitorStatus {
    /// When it was taken, milliseconds since the Unix epoch.
    pub at_unix_ms: u64,
    /// A row per protocol and vantage that ran in the last 30 days, in protocol order.
    pub rows: Vec<StatusRow>,
    /// Missed slots per window, shortest first.
    pub missed: Vec<WindowMissed>,
    /// The latest slot, while no run's points stand for it: under way, or cut short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest: Option<LatestSlot>,
}

/// A monitor's latest slot while no run's points stand for it: its run under way since it was
/// claimed (`running`), or cut short because the server stopped (`cancelled`, `detail` saying
/// so). Neither is up or down: the rows keep the last run that finished.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ReadJson)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LatestSlot {
    /// The slot, milliseconds since the Unix epoch.
    pub slot_unix_ms: u64,
    /// `running` or `cancelled`.
    pub state: PointState,
    /// When its run started (was claimed), milliseconds since the Unix epoch.
    pub since_unix_ms: u64,
    /// Why it was cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl LatestSlot {
    /// The latest slot among `points` when a `running` or `cancelled` point is all it holds;
    /// `None` when its run's points (or a missed one) are in, or there are no points.
    pub fn of(points: &[crate::monitor::MonitorPoint]) -> Option<LatestSlot> {
        let latest = points.iter().map(|p| p.slot_unix_ms).max()?;
        let mut in_it = points.iter().filter(|p| p.slot_unix_ms == latest);
        let point = in_it.next()?;
        let open = matches!(point.state, PointState::Running | PointState::Cancelled);
        (open && in_it.next().is_none()).then(|| LatestSlot {
            slot_unix_ms: point.slot_unix_ms,
            state: point.state,
            since_unix_ms: point.started_unix_ms,
            detail: point.detail.clone(),
        })
    }
}

/// The status at `now` of a monitor every `every_ms` from its points of the last 30 days, exactly:
/// the reference `monitor_rollup::status` (what the server answers, from rollups) is checked
/// against.
#[cfg(test)]
pub fn status(points: &[MonitorPoint], now: u64, every_ms: u64) -> MonitorStatus {
    let mut rows: BTreeMap<(Protocol, &str), Vec<&MonitorPoint>> = BTreeMap::new();
    for point in points {
        if let Some(protocol) = point.protocol {
            rows.entry((protocol, point.vantage.as_str()))
                .or_default()
                .push(point);
        }
    }
    let rows = rows
        .into_iter()
        .filter_map(|((protocol, vantage), runs)| {
            let last = runs.iter().max_by_key(|p| p.slot_unix_ms)?;
            Some(StatusRow {
                protocol,
                vantage: vantage.to_owned(),
                last: LastRun::of(last),
                windows: WINDOWS
                    .iter()
                    .map(|(name, length)| window(name, &runs, now.saturating_sub(*length)))
                    .collect(),
            })
        })
        .collect();
    MonitorStatus {
        at_unix_ms: now,
        rows,
        missed: WINDOWS
            .iter()
            .map(|(name, length)| WindowMissed {
                window: (*name).to_owned(),
                missed: missed_since(points, now.saturating_sub(*length), every_ms),
            })
            .collect(),
        latest: LatestSlot::of(points),
    }
}

/// The figures of `runs` from `since` on.
#[cfg(test)]
fn window(name: &str, runs: &[&MonitorPoint], since: u64) -> WindowFigures {
    let inside: Vec<&&MonitorPoint> = runs.iter().filter(|p| p.slot_unix_ms >= since).collect();
    let mut totals: Vec<Micros> = inside
        .iter()
        .filter(|p| p.state == PointState::Ok)
        .filter_map(|p| p.figures.total)
        .collect();
    totals.sort_unstable();
    WindowFigures {
        window: name.to_owned(),
        runs: inside.len() as u32,
        up: inside.iter().filter(|p| p.state == PointState::Ok).count() as u32,
        p95_total: (!totals.is_empty()).then(|| percentile(&totals, 95)),
    }
}

/// Slots of the missed stretches among `points` from `since` on.
#[cfg(test)]
fn missed_since(points: &[MonitorPoint], since: u64, every_ms: u64) -> u64 {
    let every = every_ms.max(1);
    points
        .iter()
        .filter(|p| p.state == PointState::Missed)
        .map(|p| {
            let last = p.slot_unix_ms + p.missed.saturating_sub(1) * every;
            match since.checked_sub(p.slot_unix_ms) {
                None | Some(0) => p.missed,
                Some(_) if last < since => 0,
                Some(before) => p.missed - before.div_ceil(every),
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::{Figures, missed_point};

    const NOW: u64 = 40 * DAY_MS;

    fn run(protocol: Protocol, ago_ms: u64, state: PointState, total_ms: u64) -> MonitorPoint {
        MonitorPoint {
            slot_unix_ms: NOW - ago_ms,
            started_unix_ms: NOW - ago_ms,
            vantage: String::new(),
            protocol: Some(protocol),
            state,
            missed: 0,
            probe_id: Some(format!("p{ago_ms}")),
            status: Some(200),
            figures: Figures {
                total: Some(Micros(total_ms * 1000)),
                ..Figures::default()
            },
            breached: Vec::new(),
            detail: None,
        }
    }

    #[test]
    fn uptime_and_p95_are_per_window_and_the_last_run_is_the_latest() {
        let hour = 3600 * 1000;
        let mut points = vec![
            run(Protocol::H3, 2 * DAY_MS, PointState::Failed, 0),
            run(Protocol::H3, 20 * DAY_MS, PointState::Ok, 900),
        ];
        for n in 1..=20 {
            points.push(run(Protocol::H3, n * hour, PointState::Ok, n));
        }
        let status = status(&points, NOW, hour);
        let row = &status.rows[0];
        assert_eq!(row.last.slot_unix_ms, NOW - hour);
        assert_eq!(row.last.probe_id.as_deref(), Some(&*format!("p{hour}")));
        let [day, week, month] = &row.windows[..] else {
            panic!("three windows: {:?}", row.windows);
        };
        assert_eq!((day.runs, day.up), (20, 20));
        assert_eq!(day.uptime_text(), "100.00%");
        assert_eq!(day.p95_total, Some(Micros(19_000)));
        assert_eq!((week.runs, week.up), (21, 20));
        assert_eq!(week.uptime_text(), "95.23%");
        assert_eq!((month.runs, month.up), (22, 21));
        assert_eq!(month.p95_total, Some(Micros(20_000)));
    }

    #[test]
    fn missed_slots_count_only_inside_each_window() {
        let every = 60_000;
        // 10 slots, the last 4 of them inside the last day.
        let stretch = missed_point(NOW - DAY_MS - 6 * every, 10);
        let status = status(&[stretch], NOW, every);
        let missed: Vec<u64> = status.missed.iter().map(|m| m.missed).collect();
        assert_eq!(missed, [4, 10, 10]);
        assert!(status.rows.is_empty());
        assert_eq!(
            WindowFigures {
                window: "24h".into(),
                runs: 0,
                up: 0,
                p95_total: None
            }
            .uptime_text(),
            "—"
        );
    }

    #[test]
    fn a_running_or_cancelled_slot_is_the_latest_apart_from_the_last_run() {
        let every = 60_000;
        let last = run(Protocol::H2, 2 * every, PointState::Ok, 40);
        let running = crate::monitor::running_point(NOW - every, NOW - every + 150);
        let status = status(&[last.clone(), running.clone()], NOW, every);
        let row = &status.rows[0];
        assert_eq!(
            row.last.state,
            PointState::Ok,
            "the last finished run stays"
        );
        assert_eq!((row.windows[0].runs, row.windows[0].up), (1, 1));
        assert_eq!(status.missed[0].missed, 0, "running is not missed");
        assert_eq!(
            status.latest,
            Some(LatestSlot {
                slot_unix_ms: NOW - every,
                state: PointState::Running,
                since_unix_ms: NOW - every + 150,
                detail: None,
            })
        );
        let cancelled = MonitorPoint {
            state: PointState::Cancelled,
            detail: Some("the server stopped during this run".into()),
            ..running
        };
        let slot = LatestSlot::of(&[last.clone(), cancelled]).expect("cancelled");
        assert_eq!(slot.state, PointState::Cancelled);
        assert_eq!(
            slot.detail.as_deref(),
            Some("the server stopped during this run")
        );
        // Once the run's points are in, or with none at all, there is no latest slot apart.
        assert_eq!(LatestSlot::of(&[last]), None);
        assert_eq!(LatestSlot::of(&[]), None);
    }
}
