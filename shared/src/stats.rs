//! Statistics over the attempts of a protocol run, and a protocol comparison built on them.
//!
//! Only successful attempts on the requested URL (hop 0) count: a failed
//! attempt's phases are cut short, and redirect hops measure other URLs. A
//! metric's sample holds one value per counted attempt where that phase
//! happened, so `dns` and `tls` typically come from the first attempt only.
//!
//! Percentiles use the **nearest-rank** method: the p-th percentile of `n`
//! sorted values is the value at 1-based rank `ceil(p / 100 * n)`. It is always
//! an observed value (never interpolated); the median is p50, which for an even
//! count is the lower of the two middle values.

use crate::schema::{Attempt, Micros, Phase, ProbeResult, Protocol, ProtocolRun};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a statistic is taken over: a phase, time to first byte, or the total.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// The dns phase.
    Dns,
    /// The connect phase.
    Connect,
    /// The tls phase.
    Tls,
    /// The quic phase.
    Quic,
    /// The send phase.
    Send,
    /// The wait phase.
    Wait,
    /// The receive phase.
    Receive,
    /// Time to first byte: from the attempt's start to the end of wait.
    Ttfb,
    /// The whole attempt.
    Total,
}

impl Metric {
    /// All metrics, phases first in timeline order, then `ttfb` and `total`.
    pub const ALL: [Metric; 9] = [
        Metric::Dns,
        Metric::Connect,
        Metric::Tls,
        Metric::Quic,
        Metric::Send,
        Metric::Wait,
        Metric::Receive,
        Metric::Ttfb,
        Metric::Total,
    ];

    /// Lowercase name, as serialized.
    pub fn as_str(self) -> &'static str {
        match self.phase() {
            Some(phase) => phase.as_str(),
            None if self == Metric::Ttfb => "ttfb",
            None => "total",
        }
    }

    /// The phase this metric is about, if it is one.
    pub fn phase(self) -> Option<Phase> {
        match self {
            Metric::Dns => Some(Phase::Dns),
            Metric::Connect => Some(Phase::Connect),
            Metric::Tls => Some(Phase::Tls),
            Metric::Quic => Some(Phase::Quic),
            Metric::Send => Some(Phase::Send),
            Metric::Wait => Some(Phase::Wait),
            Metric::Receive => Some(Phase::Receive),
            Metric::Ttfb | Metric::Total => None,
        }
    }

    /// This metric's value for one attempt, if it applies (failures are not
    /// excluded here; [`run_stats`] does that).
    pub fn value(self, attempt: &Attempt) -> Option<Micros> {
        let phases = &attempt.phases;
        match self {
            Metric::Ttfb => phases
                .wait
                .map(|w| w.end_us.saturating_sub(phases.total.start_us)),
            Metric::Total => Some(phases.total.duration()),
            _ => self
                .phase()
                .and_then(|p| phases.get(p))
                .map(|s| s.duration()),
        }
    }
}

impl From<Phase> for Metric {
    fn from(phase: Phase) -> Self {
        match phase {
            Phase::Dns => Metric::Dns,
            Phase::Connect => Metric::Connect,
            Phase::Tls => Metric::Tls,
            Phase::Quic => Metric::Quic,
            Phase::Send => Metric::Send,
            Phase::Wait => Metric::Wait,
            Phase::Receive => Metric::Receive,
        }
    }
}

/// Summary of one metric's sample.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseStats {
    /// Number of values (at least 1).
    pub count: usize,
    /// Smallest value.
    pub min: Micros,
    /// Nearest-rank 50th percentile.
    pub median: Micros,
    /// Nearest-rank 95th percentile.
    pub p95: Micros,
    /// Largest value.
    pub max: Micros,
}

impl PhaseStats {
    /// Statistics of a sample, or `None` when it is empty.
    pub fn from_values(mut values: Vec<Micros>) -> Option<PhaseStats> {
        values.sort_unstable();
        Some(PhaseStats {
            count: values.len(),
            min: *values.first()?,
            median: percentile(&values, 50),
            p95: percentile(&values, 95),
            max: *values.last()?,
        })
    }
}

/// The nearest-rank `p`-th percentile (`p` in 1..=100) of sorted values;
/// zero for an empty slice.
pub fn percentile(sorted: &[Micros], p: u32) -> Micros {
    if sorted.is_empty() {
        return Micros(0);
    }
    let n = sorted.len();
    let rank = (p.clamp(1, 100) as usize * n).div_ceil(100);
    sorted[rank.clamp(1, n) - 1]
}

/// Statistics of one protocol run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunStats {
    /// The protocol measured.
    pub protocol: Protocol,
    /// Attempts on the requested URL (hop 0).
    pub attempts: usize,
    /// How many of those failed (in any hop).
    pub failed: usize,
    /// Per metric, over successful attempts where it applies; metrics with no
    /// values are absent.
    pub metrics: BTreeMap<Metric, PhaseStats>,
}

impl RunStats {
    /// The statistics of one metric, if any attempt had it.
    pub fn get(&self, metric: Metric) -> Option<&PhaseStats> {
        self.metrics.get(&metric)
    }
}

/// Computes per-metric statistics over the successful hop-0 attempts of a run.
/// An attempt counts as failed when any of its hops failed.
pub fn run_stats(run: &ProtocolRun) -> RunStats {
    let failed_attempts: Vec<u32> = run
        .attempts
        .iter()
        .filter(|a| a.failure.is_some())
        .map(|a| a.attempt)
        .collect();
    let counted: Vec<&Attempt> = run
        .attempts
        .iter()
        .filter(|a| a.hop == 0 && !failed_attempts.contains(&a.attempt))
        .collect();
    let metrics = Metric::ALL
        .into_iter()
        .filter_map(|metric| {
            let values = counted.iter().filter_map(|a| metric.value(a)).collect();
            PhaseStats::from_values(values).map(|stats| (metric, stats))
        })
        .collect();
    let attempts = run.attempts.iter().filter(|a| a.hop == 0).count();
    let mut failed_unique = failed_attempts;
    failed_unique.sort_unstable();
    failed_unique.dedup();
    RunStats {
        protocol: run.protocol,
        attempts,
        failed: failed_unique.len(),
        metrics,
    }
}

/// [`run_stats`] for every run of a result, in run order.
pub fn result_stats(result: &ProbeResult) -> Vec<RunStats> {
    result.runs.iter().map(run_stats).collect()
}

/// One protocol's median for a metric, against the fastest protocol's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonCell {
    /// The protocol.
    pub protocol: Protocol,
    /// Its median for the metric.
    pub median: Micros,
    /// Milliseconds slower than the fastest median (0 for the fastest).
    pub diff_ms: f64,
    /// Percent slower than the fastest median; `None` when the fastest median is 0.
    pub diff_percent: Option<f64>,
}

/// A metric's medians across protocols.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    /// The metric compared.
    pub metric: Metric,
    /// The protocol with the lowest median (the earliest run on a tie).
    pub fastest: Protocol,
    /// One cell per protocol that has the metric, in run order.
    pub cells: Vec<ComparisonCell>,
}

/// Compares medians across runs: one row per metric that at least one run has,
/// in [`Metric::ALL`] order. A row with a single cell names that protocol as
/// fastest; callers decide whether such rows are worth showing.
pub fn compare(stats: &[RunStats]) -> Vec<ComparisonRow> {
    Metric::ALL
        .into_iter()
        .filter_map(|metric| {
            let medians: Vec<(Protocol, Micros)> = stats
                .iter()
                .filter_map(|s| s.get(metric).map(|m| (s.protocol, m.median)))
                .collect();
            let &(fastest, best) = medians.iter().min_by_key(|(_, median)| *median)?;
            let cells = medians
                .into_iter()
                .map(|(protocol, median)| {
                    let diff = median.saturating_sub(best);
                    ComparisonCell {
                        protocol,
                        median,
                        diff_ms: diff.as_ms(),
                        diff_percent: (best.0 > 0).then(|| diff.0 as f64 * 100.0 / best.0 as f64),
                    }
                })
                .collect();
            Some(ComparisonRow {
                metric,
                fastest,
                cells,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Failure, FailureKind, Phases, Span, TtfbSource};

    fn span(start: u64, end: u64) -> Option<Span> {
        Some(Span {
            start_us: Micros(start),
            end_us: Micros(end),
        })
    }

    /// An attempt with contiguous phases: optional setup of `setup` µs (dns
    /// 10%, connect 30%, tls 60%), then send 10 µs, wait `wait`, receive 100.
    fn attempt(n: u32, setup: u64, wait: u64) -> Attempt {
        let mut phases = Phases::default();
        if setup > 0 {
            phases.dns = span(0, setup / 10);
            phases.connect = span(setup / 10, setup * 4 / 10);
            phases.tls = span(setup * 4 / 10, setup);
        }
        phases.send = span(setup, setup + 10);
        phases.wait = span(setup + 10, setup + 10 + wait);
        phases.receive = span(setup + 10 + wait, setup + 110 + wait);
        phases.total = span(0, setup + 110 + wait).unwrap();
        Attempt {
            attempt: n,
            hop: 0,
            url: "https://example.com/".into(),
            started_at_unix_ms: 0,
            phases,
            ttfb_source: TtfbSource::TransportRead,
            dns: None,
            connection: None,
            tls: None,
            response: None,
            quic: None,
            failure: None,
        }
    }

    fn run(protocol: Protocol, attempts: Vec<Attempt>) -> ProtocolRun {
        ProtocolRun {
            protocol,
            skipped: None,
            cut_short: None,
            discovery: None,
            attempts,
        }
    }

    fn us(values: &[u64]) -> Vec<Micros> {
        values.iter().copied().map(Micros).collect()
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v = us(&[15, 20, 35, 40, 50]);
        assert_eq!(percentile(&v, 5), Micros(15));
        assert_eq!(percentile(&v, 30), Micros(20));
        assert_eq!(percentile(&v, 40), Micros(20));
        assert_eq!(percentile(&v, 50), Micros(35));
        assert_eq!(percentile(&v, 100), Micros(50));
        // Even count: the lower middle value.
        assert_eq!(percentile(&us(&[1, 2, 3, 4]), 50), Micros(2));
        // p95 of 20 values is rank 19; of 21 values, rank 20.
        let twenty: Vec<Micros> = (1..=20).map(Micros).collect();
        assert_eq!(percentile(&twenty, 95), Micros(19));
        let twenty_one: Vec<Micros> = (1..=21).map(Micros).collect();
        assert_eq!(percentile(&twenty_one, 95), Micros(20));
        assert_eq!(percentile(&[], 50), Micros(0));
    }

    #[test]
    fn stats_of_unsorted_values() {
        let s = PhaseStats::from_values(us(&[30, 10, 20])).unwrap();
        assert_eq!(
            s,
            PhaseStats {
                count: 3,
                min: Micros(10),
                median: Micros(20),
                p95: Micros(30),
                max: Micros(30)
            }
        );
        assert_eq!(PhaseStats::from_values(Vec::new()), None);
        let one = PhaseStats::from_values(us(&[7])).unwrap();
        assert_eq!(
            (one.min, one.median, one.p95, one.max),
            (Micros(7), Micros(7), Micros(7), Micros(7))
        );
    }

    #[test]
    fn phases_only_count_where_they_happened() {
        let r = run(
            Protocol::H2,
            vec![
                attempt(1, 1000, 500),
                attempt(2, 0, 300),
                attempt(3, 0, 400),
            ],
        );
        let s = run_stats(&r);
        assert_eq!((s.attempts, s.failed), (3, 0));
        assert_eq!(s.get(Metric::Tls).unwrap().count, 1);
        assert_eq!(s.get(Metric::Tls).unwrap().median, Micros(600));
        assert_eq!(s.get(Metric::Quic), None);
        let wait = s.get(Metric::Wait).unwrap();
        assert_eq!(
            (wait.count, wait.min, wait.median, wait.max),
            (3, Micros(300), Micros(400), Micros(500))
        );
        // TTFB is the wait end offset: 1000 + 10 + 500 for the first attempt.
        let ttfb = s.get(Metric::Ttfb).unwrap();
        assert_eq!((ttfb.min, ttfb.max), (Micros(310), Micros(1510)));
        assert_eq!(s.get(Metric::Total).unwrap().max, Micros(1610));
    }

    #[test]
    fn failed_attempts_and_redirect_hops_are_left_out() {
        let mut failed = attempt(2, 0, 9_999);
        failed.failure = Some(Failure {
            phase: Phase::Wait,
            kind: FailureKind::Timeout,
            message: "timed out".into(),
        });
        let mut hop = attempt(1, 50_000, 50_000);
        hop.hop = 1;
        let mut failed_hop = attempt(3, 0, 7_777);
        failed_hop.hop = 1;
        failed_hop.failure = failed.failure.clone();
        let r = run(
            Protocol::H1,
            vec![
                attempt(1, 0, 100),
                hop,
                failed,
                attempt(3, 0, 8_888),
                failed_hop,
            ],
        );
        let s = run_stats(&r);
        assert_eq!((s.attempts, s.failed), (3, 2));
        let wait = s.get(Metric::Wait).unwrap();
        assert_eq!((wait.count, wait.max), (1, Micros(100)));

        let empty = run_stats(&run(Protocol::H3, Vec::new()));
        assert!(empty.metrics.is_empty());
        assert_eq!(empty.attempts, 0);
    }

    #[test]
    fn comparison_names_the_fastest_median_and_the_gaps() {
        let stats = vec![
            run_stats(&run(Protocol::H1, vec![attempt(1, 0, 2_000)])),
            run_stats(&run(Protocol::H2, vec![attempt(1, 0, 1_000)])),
            run_stats(&run(Protocol::H3, vec![attempt(1, 0, 1_500)])),
        ];
        let rows = compare(&stats);
        let wait = rows.iter().find(|r| r.metric == Metric::Wait).unwrap();
        assert_eq!(wait.fastest, Protocol::H2);
        let h1 = &wait.cells[0];
        assert_eq!((h1.protocol, h1.median), (Protocol::H1, Micros(2_000)));
        assert_eq!(h1.diff_ms, 1.0);
        assert_eq!(h1.diff_percent, Some(100.0));
        assert_eq!(wait.cells[1].diff_ms, 0.0);
        assert_eq!(wait.cells[2].diff_percent, Some(50.0));
        // No run had TLS, so no row for it; rows follow Metric::ALL order.
        assert!(rows.iter().all(|r| r.metric != Metric::Tls));
        let order: Vec<Metric> = rows.iter().map(|r| r.metric).collect();
        assert_eq!(
            order,
            vec![
                Metric::Send,
                Metric::Wait,
                Metric::Receive,
                Metric::Ttfb,
                Metric::Total
            ]
        );
    }

    #[test]
    fn comparison_ties_and_zero_baselines() {
        let a = attempt(1, 0, 0);
        let stats = vec![
            run_stats(&run(Protocol::H1, vec![a.clone()])),
            run_stats(&run(Protocol::H2, vec![a])),
        ];
        let rows = compare(&stats);
        let wait = rows.iter().find(|r| r.metric == Metric::Wait).unwrap();
        assert_eq!(wait.fastest, Protocol::H1);
        assert_eq!(wait.cells[1].diff_percent, None);
        assert!(compare(&[]).is_empty());
    }

    #[test]
    fn metric_names_round_trip() {
        for m in Metric::ALL {
            let json = serde_json::to_string(&m).unwrap();
            assert_eq!(json, format!("\"{}\"", m.as_str()));
        }
        for p in Phase::ALL {
            assert_eq!(Metric::from(p).phase(), Some(p));
        }
        let s = run_stats(&run(Protocol::H1, vec![attempt(1, 100, 100)]));
        let json = serde_json::to_value(&s).unwrap();
        assert!(json["metrics"]["ttfb"]["median"].is_u64());
    }
}
