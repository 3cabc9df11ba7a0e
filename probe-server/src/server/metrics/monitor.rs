//! Monitors' runs on `/metrics`: per-phase histograms and run counters by monitor and protocol,
//! for a bounded number of monitors.
//!
//! `h123_monitor_phase_seconds{monitor,protocol,phase}` takes each successful point's figures
//! (dns, connect, tls, ttfb, total, reused_total: the medians of the run's attempts, as in
//! `shared::monitor::SeriesMetric`), so an SLO is one `histogram_quantile` or one bucket ratio,
//! with no recording rule; `h123_monitor_runs_total{monitor,protocol,state}` counts the points
//! by state (ok, http_error, failed, skipped, missed), for uptime SLOs.
//!
//! There is no `vantage` label: a monitor's vantages are summed into its series. A vantage is
//! an agent the operator names (`--agent`), so a label would multiply every monitor's series by
//! however many agents there are; a monitor's line per vantage is in its `series` API.
//!
//! **Invariant:** only what anyone may read is labelled. An unlisted monitor's id is the
//! capability to read it (its page, series, runs, badges), so its runs are always added to
//! `monitor="_other"`, never under its id.
//!
//! **Invariant:** the exposition is bounded. At most [`MAX_TRACKED`] public monitors have
//! series of their own; the runs of any further one, and of every unlisted one, are added to
//! `monitor="_other"` and counted in `h123_monitor_untracked_runs_total`. A monitor's series go when it is deleted here, or when
//! it has not run here for [`STALE_MS`] (deleted at another instance, paused, or run by the
//! others). The worst case is (200 + 1) monitors x 3 protocols x (6 phases x 15 lines of a
//! histogram (12 buckets, `+Inf`, sum and count) + 5 states) = 57,285 series, plus two.

use super::{Histogram, escape_label};
use h123_shared::Protocol;
use h123_shared::monitor::{MAX_EVERY_MS, MonitorPoint, PointState, SeriesMetric};
use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;

/// Most monitors with series of their own at one instance.
pub const MAX_TRACKED: usize = 200;

/// How long a monitor keeps its series without a run here: two of the longest intervals.
pub const STALE_MS: u64 = 2 * MAX_EVERY_MS;

/// The `monitor` label of the runs of monitors past [`MAX_TRACKED`].
const OTHER: &str = "_other";

/// How many deleted monitors are remembered, so a run that ends after its monitor's deletion
/// does not bring its series back.
const FORGOTTEN: usize = 256;

/// Upper bounds (seconds) of the buckets: web latencies seen from a vantage, 1 ms to 10 s.
const BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The monitors' series.
#[derive(Debug, Default)]
pub(super) struct MonitorMetrics {
    tracked: BTreeMap<String, Series>,
    other: Series,
    untracked_runs: u64,
    forgotten: VecDeque<String>,
}

/// One monitor's (or `_other`'s) histograms and counters.
#[derive(Debug, Default)]
struct Series {
    last_unix_ms: u64,
    phases: BTreeMap<(Protocol, &'static str), Histogram>,
    runs: BTreeMap<(Protocol, &'static str), u64>,
}

impl MonitorMetrics {
    /// Adds monitor `id`'s points of one run (or missed stretch) at `now_unix_ms`, under its
    /// id only when it is `public`; a missed stretch counts its slots as missed for each of the
    /// monitor's `protocols`.
    pub(super) fn run(
        &mut self,
        id: &str,
        public: bool,
        protocols: &[Protocol],
        points: &[MonitorPoint],
        now_unix_ms: u64,
    ) {
        if self.forgotten.iter().any(|gone| gone == id) {
            return;
        }
        let series = self.series_of(id, public, now_unix_ms);
        for point in points {
            match point.protocol {
                Some(protocol) => series.point(protocol, point),
                None => {
                    for protocol in protocols {
                        *series.runs.entry((*protocol, "missed")).or_default() += point.missed;
                    }
                }
            }
        }
    }

    /// Removes monitor `id`'s series, for good.
    pub(super) fn deleted(&mut self, id: &str) {
        self.tracked.remove(id);
        if self.forgotten.len() == FORGOTTEN {
            self.forgotten.pop_front();
        }
        self.forgotten.push_back(id.to_owned());
    }

    /// The series in the Prometheus text format.
    pub(super) fn render(&self, out: &mut String) {
        let all = || {
            let other = (!self.other.runs.is_empty()).then_some((OTHER, &self.other));
            let tracked = self.tracked.iter().map(|(id, s)| (id.as_str(), s));
            tracked.chain(other)
        };
        out.push_str("# HELP h123_monitor_phase_seconds Monitors' phase durations (each run's median per vantage), by monitor, protocol and phase.\n# TYPE h123_monitor_phase_seconds histogram\n");
        for (id, series) in all() {
            series.render_phases(out, &escape_label(id));
        }
        out.push_str("# HELP h123_monitor_runs_total Monitors' protocol runs (one per vantage), by monitor, protocol and state.\n# TYPE h123_monitor_runs_total counter\n");
        for (id, series) in all() {
            series.render_runs(out, &escape_label(id));
        }
        let _ = write!(
            out,
            "# HELP h123_monitor_untracked_runs_total Runs of unlisted monitors and of public ones past the {MAX_TRACKED} with series of their own, counted under monitor=\"{OTHER}\".\n# TYPE h123_monitor_untracked_runs_total counter\nh123_monitor_untracked_runs_total {}\n# HELP h123_monitors_tracked Monitors with series of their own (at most {MAX_TRACKED}).\n# TYPE h123_monitors_tracked gauge\nh123_monitors_tracked {}\n",
            self.untracked_runs,
            self.tracked.len()
        );
    }

    /// The series `id`'s run goes to, after the stale ones are dropped: its own when it is
    /// `public` and there is room, else `_other`.
    fn series_of(&mut self, id: &str, public: bool, now_unix_ms: u64) -> &mut Series {
        self.tracked
            .retain(|_, s| now_unix_ms.saturating_sub(s.last_unix_ms) <= STALE_MS);
        let room = self.tracked.contains_key(id) || self.tracked.len() < MAX_TRACKED;
        let series = if public && room {
            self.tracked.entry(id.to_owned()).or_default()
        } else {
            self.untracked_runs += 1;
            &mut self.other
        };
        series.last_unix_ms = now_unix_ms;
        series
    }
}

impl Series {
    /// Counts `point` of `protocol` and, when it succeeded, observes its figures.
    fn point(&mut self, protocol: Protocol, point: &MonitorPoint) {
        *self
            .runs
            .entry((protocol, point.state.as_str()))
            .or_default() += 1;
        if point.state != PointState::Ok {
            return;
        }
        for metric in SeriesMetric::ALL {
            if let Some(took) = metric.of(&point.figures) {
                self.phases
                    .entry((protocol, metric.as_str()))
                    .or_default()
                    .observe(BUCKETS, took.as_secs());
            }
        }
    }

    fn render_phases(&self, out: &mut String, monitor: &str) {
        for ((protocol, phase), histogram) in &self.phases {
            let labels = format!("monitor=\"{monitor}\",protocol=\"{protocol}\",phase=\"{phase}\"");
            histogram.render(out, "h123_monitor_phase_seconds", &labels, BUCKETS);
        }
    }

    fn render_runs(&self, out: &mut String, monitor: &str) {
        for ((protocol, state), n) in &self.runs {
            let _ = writeln!(
                out,
                "h123_monitor_runs_total{{monitor=\"{monitor}\",protocol=\"{protocol}\",state=\"{state}\"}} {n}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use h123_shared::Micros;
    use h123_shared::monitor::Figures;

    fn point(protocol: Protocol, state: PointState, total_ms: u64) -> MonitorPoint {
        MonitorPoint {
            slot_unix_ms: 0,
            started_unix_ms: 0,
            vantage: "here".to_owned(),
            protocol: Some(protocol),
            state,
            missed: 0,
            probe_id: None,
            status: Some(200),
            figures: Figures {
                total: Some(Micros(total_ms * 1000)),
                ..Figures::default()
            },
            breached: Vec::new(),
            detail: None,
        }
    }

    fn rendered(metrics: &MonitorMetrics) -> String {
        let mut out = String::new();
        metrics.render(&mut out);
        out
    }

    #[test]
    fn buckets_are_cumulative_and_only_successes_are_observed() {
        let mut metrics = MonitorMetrics::default();
        let points = [
            point(Protocol::H2, PointState::Ok, 30),
            point(Protocol::H2, PointState::Ok, 300),
            point(Protocol::H2, PointState::HttpError, 3),
        ];
        metrics.run("m1", true, &[Protocol::H2], &points, 1);
        let text = rendered(&metrics);
        let bucket = |le: &str| {
            format!(
                "h123_monitor_phase_seconds_bucket{{monitor=\"m1\",protocol=\"h2\",phase=\"total\",le=\"{le}\"}}"
            )
        };
        for (le, n) in [
            ("0.025", 0),
            ("0.05", 1),
            ("0.25", 1),
            ("0.5", 2),
            ("+Inf", 2),
        ] {
            assert!(
                text.contains(&format!("{} {n}\n", bucket(le))),
                "{le}\n{text}"
            );
        }
        assert!(text.contains(
            "h123_monitor_phase_seconds_count{monitor=\"m1\",protocol=\"h2\",phase=\"total\"} 2\n"
        ));
        assert!(!text.contains("phase=\"dns\""), "{text}");
        assert!(text.contains(
            "h123_monitor_runs_total{monitor=\"m1\",protocol=\"h2\",state=\"http_error\"} 1\n"
        ));
    }

    #[test]
    fn a_missed_stretch_counts_its_slots_for_each_protocol() {
        let mut metrics = MonitorMetrics::default();
        let missed = h123_shared::monitor::missed_point(0, 3);
        metrics.run("m1", true, &[Protocol::H1, Protocol::H3], &[missed], 1);
        let text = rendered(&metrics);
        for protocol in ["h1", "h3"] {
            assert!(text.contains(&format!(
                "h123_monitor_runs_total{{monitor=\"m1\",protocol=\"{protocol}\",state=\"missed\"}} 3\n"
            )));
        }
    }

    #[test]
    fn an_unlisted_monitor_is_counted_under_other_never_by_its_id() {
        let mut metrics = MonitorMetrics::default();
        let ok = [point(Protocol::H2, PointState::Ok, 10)];
        metrics.run("secretid", false, &[Protocol::H2], &ok, 1);
        metrics.run("openid", true, &[Protocol::H2], &ok, 1);
        let text = rendered(&metrics);
        assert!(!text.contains("secretid"), "{text}");
        assert!(text.contains("monitor=\"openid\""), "{text}");
        assert!(text.contains(
            "h123_monitor_runs_total{monitor=\"_other\",protocol=\"h2\",state=\"ok\"} 1\n"
        ));
        assert!(
            text.contains("h123_monitor_untracked_runs_total 1\n"),
            "{text}"
        );
    }

    #[test]
    fn labels_are_escaped() {
        let mut metrics = MonitorMetrics::default();
        let ok = [point(Protocol::H1, PointState::Ok, 1)];
        metrics.run("a\"b\\c\nd", true, &[Protocol::H1], &ok, 1);
        let text = rendered(&metrics);
        assert!(text.contains("monitor=\"a\\\"b\\\\c\\nd\""), "{text}");
    }

    #[test]
    fn monitors_past_the_cap_share_other_and_are_counted() {
        let mut metrics = MonitorMetrics::default();
        let ok = [point(Protocol::H2, PointState::Ok, 10)];
        for i in 0..MAX_TRACKED + 2 {
            metrics.run(&format!("m{i}"), true, &[Protocol::H2], &ok, 1);
        }
        // A tracked monitor keeps its series.
        metrics.run("m0", true, &[Protocol::H2], &ok, 1);
        let text = rendered(&metrics);
        assert!(text.contains(&format!("h123_monitors_tracked {MAX_TRACKED}\n")));
        assert!(text.contains("h123_monitor_untracked_runs_total 2\n"));
        assert!(text.contains(
            "h123_monitor_runs_total{monitor=\"_other\",protocol=\"h2\",state=\"ok\"} 2\n"
        ));
        assert!(
            text.contains(
                "h123_monitor_runs_total{monitor=\"m0\",protocol=\"h2\",state=\"ok\"} 2\n"
            )
        );
        assert!(!text.contains(&format!("monitor=\"m{}\"", MAX_TRACKED)));
        let monitors: std::collections::BTreeSet<&str> = text
            .lines()
            .filter_map(|l| l.split("monitor=\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(monitors.len(), MAX_TRACKED + 1);
    }

    #[test]
    fn a_deleted_monitor_goes_for_good_and_a_stale_one_makes_room() {
        let mut metrics = MonitorMetrics::default();
        let ok = [point(Protocol::H2, PointState::Ok, 10)];
        metrics.run("gone", true, &[Protocol::H2], &ok, 1);
        metrics.run("stale", true, &[Protocol::H2], &ok, 1);
        metrics.deleted("gone");
        // A run that was under way when it was deleted.
        metrics.run("gone", true, &[Protocol::H2], &ok, 2);
        assert!(!rendered(&metrics).contains("monitor=\"gone\""));
        assert!(rendered(&metrics).contains("monitor=\"stale\""));
        metrics.run("fresh", true, &[Protocol::H2], &ok, 2 + STALE_MS);
        let text = rendered(&metrics);
        assert!(!text.contains("monitor=\"stale\""), "{text}");
        assert!(text.contains("h123_monitors_tracked 1\n"), "{text}");
    }
}
