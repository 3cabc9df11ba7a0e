//! Counters and histograms for `GET /metrics`, rendered in the Prometheus text format.

mod monitor;

use h123_shared::Visibility;
use h123_shared::api::ProbeStatus;
use h123_shared::monitor::{Monitor, MonitorPoint};
use h123_shared::{Phase, ProbeResult, Protocol};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds (seconds) of the phase duration buckets.
const PHASE_BUCKETS: &[f64] = &[
    0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// Upper bounds (seconds) of the API latency buckets.
const HTTP_BUCKETS: &[f64] = &[
    0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// Rejection reasons listed even before one happens (a probe creation's limits): a dashboard's
/// query finds them at zero. Any other reason shows once it has been counted.
const ALWAYS_LISTED: [&str; 5] = [
    "rate",
    "client_probes",
    "client_bytes",
    "server_bytes",
    "queue_full",
];

/// The server's metrics.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    runs: BTreeMap<(Protocol, &'static str), u64>,
    probes: BTreeMap<&'static str, u64>,
    phases: BTreeMap<Phase, Histogram>,
    requests: BTreeMap<(String, u16), u64>,
    latency: BTreeMap<String, Histogram>,
    rejections: BTreeMap<&'static str, u64>,
    target_bytes: u64,
    /// The database's used bytes and whether over `--max-db-bytes`, as the last pass left it.
    db_size: Option<(u64, bool)>,
    agent_jobs: BTreeMap<AgentJobEvent, u64>,
    monitors: monitor::MonitorMetrics,
    /// Monitor slots missed over their target host's runs a minute.
    slots_capped: u64,
    /// Deliveries' tries skipped, by one of `delivery_budget::SKIP_REASONS`.
    deliveries_skipped: BTreeMap<&'static str, u64>,
}

/// What happened to an agent's job, for `h123_agent_jobs_total`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AgentJobEvent {
    /// Handed to its agent (by this instance).
    Claimed,
    /// Its agent reported the result or a problem (to this instance).
    Reported,
    /// Ended without a report: never claimed, or its agent went quiet.
    Expired,
}

impl AgentJobEvent {
    const ALL: [AgentJobEvent; 3] = [
        AgentJobEvent::Claimed,
        AgentJobEvent::Reported,
        AgentJobEvent::Expired,
    ];

    fn as_str(self) -> &'static str {
        match self {
            AgentJobEvent::Claimed => "claimed",
            AgentJobEvent::Reported => "reported",
            AgentJobEvent::Expired => "expired",
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Histogram {
    buckets: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, bounds: &[f64], value: f64) {
        if self.buckets.len() != bounds.len() {
            self.buckets = vec![0; bounds.len()];
        }
        for (bucket, bound) in self.buckets.iter_mut().zip(bounds) {
            if value <= *bound {
                *bucket += 1;
            }
        }
        self.sum += value;
        self.count += 1;
    }

    fn render(&self, out: &mut String, name: &str, labels: &str, bounds: &[f64]) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (i, bound) in bounds.iter().enumerate() {
            let n = self.buckets.get(i).copied().unwrap_or(0);
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {n}");
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}",
            self.count
        );
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", self.sum);
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", self.count);
    }
}

/// Gauges read at scrape time.
#[derive(Copy, Clone, Debug, Default)]
pub struct Gauges {
    /// Probes accepted and not yet finished.
    pub in_flight: usize,
    /// Probes running now (the rest wait in the queue).
    pub running: usize,
}

impl Metrics {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a finished probe: its status, each protocol's outcome and every phase.
    pub fn probe_finished(&self, status: ProbeStatus, result: &ProbeResult) {
        let mut inner = self.lock();
        let status = status.as_str();
        *inner.probes.entry(status).or_default() += 1;
        for run in &result.runs {
            let outcome = if run.skipped.is_some() {
                "skipped"
            } else if run.attempts.iter().any(|a| a.failure.is_some()) {
                "failed"
            } else {
                "ok"
            };
            *inner.runs.entry((run.protocol, outcome)).or_default() += 1;
            for attempt in &run.attempts {
                for (phase, span) in attempt.phases.present() {
                    inner
                        .phases
                        .entry(phase)
                        .or_default()
                        .observe(PHASE_BUCKETS, span.duration().as_secs());
                }
            }
        }
    }

    /// Counts an API request on `route` (the matched path pattern).
    pub fn request(&self, route: &str, status: u16, took: Duration) {
        let mut inner = self.lock();
        *inner
            .requests
            .entry((route.to_owned(), status))
            .or_default() += 1;
        inner
            .latency
            .entry(route.to_owned())
            .or_default()
            .observe(HTTP_BUCKETS, took.as_secs_f64());
    }

    /// Counts a refused request under `reason` (`rate`, `read_rate`, `streams_busy`, ...).
    pub fn rejected(&self, reason: &'static str) {
        *self.lock().rejections.entry(reason).or_default() += 1;
    }

    /// Counts `bytes` the server's probes received from their targets.
    pub fn target_bytes(&self, bytes: u64) {
        self.lock().target_bytes += bytes;
    }

    /// Sets what the last size-capped retention pass left: the database's used bytes and
    /// whether they are still over `--max-db-bytes`.
    pub fn db_size(&self, used: u64, over_cap: bool) {
        self.lock().db_size = Some((used, over_cap));
    }

    /// Counts an agent's job `event`.
    pub fn agent_job(&self, event: AgentJobEvent) {
        *self.lock().agent_jobs.entry(event).or_default() += 1;
    }

    /// Counts `monitor`'s run (or missed stretch) that gave `points` at `now_unix_ms`: under
    /// its id when it is public, else under `_other`; bounded in monitors as
    /// `server::metrics::monitor` says.
    pub fn monitor_run(&self, monitor: &Monitor, points: &[MonitorPoint], now_unix_ms: u64) {
        let public = monitor.spec.options.visibility == Visibility::Public;
        let protocols = &monitor.spec.options.protocols;
        self.lock()
            .monitors
            .run(&monitor.id, public, protocols, points, now_unix_ms);
    }

    /// Counts a monitor slot missed because its target site's runs a minute were spent
    /// (`server::host_runs`); no label: nothing about the monitor or its site is published.
    pub fn slot_capped(&self) {
        self.lock().slots_capped += 1;
    }

    /// Counts a delivery's try skipped for `reason`, one of `delivery_budget::SKIP_REASONS`.
    pub fn delivery_skipped(&self, reason: &'static str) {
        *self.lock().deliveries_skipped.entry(reason).or_default() += 1;
    }

    /// Removes deleted monitor `id`'s series.
    pub fn monitor_deleted(&self, id: &str) {
        self.lock().monitors.deleted(id);
    }

    /// The Prometheus text exposition.
    pub fn render(&self, gauges: Gauges) -> String {
        let inner = self.lock();
        let mut out = String::with_capacity(8192);
        out.push_str("# HELP h123_probes_total Probes finished, by final status.\n# TYPE h123_probes_total counter\n");
        for (status, n) in &inner.probes {
            let _ = writeln!(out, "h123_probes_total{{status=\"{status}\"}} {n}");
        }
        out.push_str("# HELP h123_protocol_runs_total Protocol runs of finished probes, by protocol and outcome (ok, failed, skipped).\n# TYPE h123_protocol_runs_total counter\n");
        for ((protocol, outcome), n) in &inner.runs {
            let _ = writeln!(
                out,
                "h123_protocol_runs_total{{protocol=\"{protocol}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        out.push_str("# HELP h123_phase_duration_seconds Measured phase durations.\n# TYPE h123_phase_duration_seconds histogram\n");
        for (phase, h) in &inner.phases {
            let labels = format!("phase=\"{}\"", phase.as_str());
            h.render(
                &mut out,
                "h123_phase_duration_seconds",
                &labels,
                PHASE_BUCKETS,
            );
        }
        out.push_str("# HELP h123_http_requests_total API requests, by route and status.\n# TYPE h123_http_requests_total counter\n");
        for ((route, status), n) in &inner.requests {
            let route = escape_label(route);
            let _ = writeln!(
                out,
                "h123_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}"
            );
        }
        out.push_str("# HELP h123_http_request_duration_seconds API request latency, by route.\n# TYPE h123_http_request_duration_seconds histogram\n");
        for (route, h) in &inner.latency {
            let labels = format!("route=\"{}\"", escape_label(route));
            h.render(
                &mut out,
                "h123_http_request_duration_seconds",
                &labels,
                HTTP_BUCKETS,
            );
        }
        out.push_str("# HELP h123_rejections_total Requests refused by a limit: creations (rate, client_probes, client_bytes, server_bytes, queue_full, always listed), reads (read_rate, light_rate, reads_busy), streams (streams_client, streams_busy), scrapes (scrape_rate, scrape_cross_site: a browser's cross-site request, scrape_module_target: a target outside its module's targets), benches (bench_busy).\n# TYPE h123_rejections_total counter\n");
        let others = inner
            .rejections
            .keys()
            .copied()
            .filter(|reason| !ALWAYS_LISTED.contains(reason));
        for reason in ALWAYS_LISTED.into_iter().chain(others) {
            let n = inner.rejections.get(reason).copied().unwrap_or(0);
            let _ = writeln!(out, "h123_rejections_total{{reason=\"{reason}\"}} {n}");
        }
        out.push_str("# HELP h123_target_bytes_total Bytes the server's finished probes received from their targets.\n# TYPE h123_target_bytes_total counter\n");
        let _ = writeln!(out, "h123_target_bytes_total {}", inner.target_bytes);
        out.push_str("# HELP h123_agent_jobs_total Agents' jobs handed out, reported and expired at this instance.\n# TYPE h123_agent_jobs_total counter\n");
        for event in AgentJobEvent::ALL {
            let n = inner.agent_jobs.get(&event).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "h123_agent_jobs_total{{event=\"{}\"}} {n}",
                event.as_str()
            );
        }
        if let Some((used, over)) = inner.db_size {
            out.push_str("# HELP h123_db_used_bytes The database's bytes as --max-db-bytes counts them, after the last retention pass.\n# TYPE h123_db_used_bytes gauge\n");
            let _ = writeln!(out, "h123_db_used_bytes {used}");
            out.push_str("# HELP h123_db_over_cap 1 when the last retention pass could not bring the database within --max-db-bytes without deleting what --keep-records-secs keeps.\n# TYPE h123_db_over_cap gauge\n");
            let _ = writeln!(out, "h123_db_over_cap {}", u8::from(over));
        }
        inner.monitors.render(&mut out);
        out.push_str("# HELP h123_monitor_slots_capped_total Monitor slots missed because their target host's runs a minute (--max-monitor-runs-per-host-minute) were spent.\n# TYPE h123_monitor_slots_capped_total counter\n");
        let _ = writeln!(
            out,
            "h123_monitor_slots_capped_total {}",
            inner.slots_capped
        );
        out.push_str("# HELP h123_deliveries_skipped_total Notification tries not made, by reason: receiver_resting (it failed its last tries), budget_spent (--max-deliveries-per-minute), no_place (none of --max-deliveries-in-flight came free), overtaken (a retry a newer notification made stale).\n# TYPE h123_deliveries_skipped_total counter\n");
        for reason in super::delivery_budget::SKIP_REASONS {
            let n = inner.deliveries_skipped.get(reason).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "h123_deliveries_skipped_total{{reason=\"{reason}\"}} {n}"
            );
        }
        let _ = write!(
            out,
            "# HELP h123_probes_in_flight Probes accepted and not yet finished.\n# TYPE h123_probes_in_flight gauge\nh123_probes_in_flight {}\n# HELP h123_probes_running Probes running now.\n# TYPE h123_probes_running gauge\nh123_probes_running {}\n",
            gauges.in_flight, gauges.running
        );
        out
    }
}

fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_cumulative_buckets() {
        let metrics = Metrics::default();
        metrics.request("/api/v1/probes/{id}", 200, Duration::from_micros(700));
        metrics.request("/api/v1/probes/{id}", 404, Duration::from_millis(3));
        metrics.rejected("rate");
        metrics.rejected("read_rate");
        let text = metrics.render(Gauges {
            in_flight: 2,
            running: 1,
        });
        assert!(
            text.contains(
                "h123_http_requests_total{route=\"/api/v1/probes/{id}\",status=\"404\"} 1"
            )
        );
        assert!(text.contains(
            "h123_http_request_duration_seconds_bucket{route=\"/api/v1/probes/{id}\",le=\"0.001\"} 1"
        ));
        assert!(text.contains(
            "h123_http_request_duration_seconds_bucket{route=\"/api/v1/probes/{id}\",le=\"+Inf\"} 2"
        ));
        assert!(text.contains("h123_rejections_total{reason=\"rate\"} 1"));
        assert!(
            text.contains("h123_rejections_total{reason=\"read_rate\"} 1"),
            "every reason counted is shown: {text}"
        );
        assert!(text.contains("h123_rejections_total{reason=\"queue_full\"} 0"));
        assert!(text.contains("h123_probes_in_flight 2"));
    }

    #[test]
    fn the_help_text_names_every_rejection_reason_the_code_counts() {
        let help = Metrics::default()
            .render(Gauges {
                in_flight: 0,
                running: 0,
            })
            .lines()
            .find(|line| line.starts_with("# HELP h123_rejections_total "))
            .expect("the rejections' HELP line")
            .to_owned();
        let mut reasons = Vec::new();
        let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).expect("src/ readable") {
                let path = entry.expect("an entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|ext| ext == "rs") {
                    let text = std::fs::read_to_string(&path).expect("a source file");
                    for (at, call) in text.match_indices(".rejected(\"") {
                        let reason = &text[at + call.len()..];
                        reasons.push(reason[..reason.find('"').unwrap_or(0)].to_owned());
                    }
                }
            }
        }
        assert!(reasons.len() >= 14, "the reasons were found: {reasons:?}");
        for reason in reasons {
            let named = help
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|word| word == reason);
            assert!(
                named,
                "{reason} is counted but not in the HELP text: {help}"
            );
        }
    }
}
