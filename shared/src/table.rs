//! The protocol comparison table: per connection state and metric, each protocol's median and p95,
//! with a leader and gaps only where the difference is beyond the noise.
//!
//! Attempts are whole redirect chains ([`crate::chain`]) that succeeded (no
//! failure, status below 400), grouped by connection state so that new
//! connections are compared with new ones and reused with reused. Cells apply
//! the verdict's significance rule ([`crate::verdict::SIGNIFICANCE_RULE`]):
//! no "fastest" and no gap where the difference is within the spread or under
//! the floor. Every protocol keeps its column; one that produced nothing says
//! why. The web UI and the CLI render this same model.

use crate::chain::{Chain, ConnState, chains};
use crate::schema::{Micros, ProbeResult, Protocol, ProtocolRun};
use crate::stats::{Metric, PhaseStats};
use crate::verdict::{self, ProtocolSample, StateComparison};
use serde::{Deserialize, Serialize};

/// The whole table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonTable {
    /// One column per protocol run, in run order, measured or not.
    pub columns: Vec<Column>,
    /// Whether any cell has more than one value (then p95 is worth showing).
    pub show_p95: bool,
    /// One section per connection state that has successful attempts.
    pub sections: Vec<TableSection>,
}

/// A protocol's column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Column {
    /// The protocol.
    pub protocol: Protocol,
    /// Why it has no figures, when it has none (e.g. `connect: connection refused`).
    pub unmeasured: Option<String>,
}

/// The rows of one connection state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableSection {
    /// The connection state of every attempt counted here.
    pub state: ConnState,
    /// One row per metric that any protocol has, in [`Metric::ALL`] order.
    pub rows: Vec<TableRow>,
}

/// One metric across protocols.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableRow {
    /// The metric.
    pub metric: Metric,
    /// One entry per column; `None` where that protocol has no value.
    pub cells: Vec<Option<TableCell>>,
}

/// One protocol's figures for a metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableCell {
    /// Number of values.
    pub count: usize,
    /// Median.
    pub median: Micros,
    /// 95th percentile, when there is more than one value.
    pub p95: Option<Micros>,
    /// Whether this protocol leads the row beyond the noise.
    pub fastest: bool,
    /// Milliseconds slower than the row's fastest median, only when beyond the noise.
    pub diff_ms: Option<f64>,
}

/// A metric's value for a whole chain: the total and time to first byte from
/// the chain's start, a phase summed over its hops.
pub fn chain_value(metric: Metric, chain: &Chain) -> Option<Micros> {
    match metric {
        Metric::Total => Some(chain.total()),
        Metric::Ttfb => chain.ttfb(),
        _ => {
            let values: Vec<Micros> = chain
                .hops
                .iter()
                .filter_map(|(a, _)| metric.value(a))
                .collect();
            (!values.is_empty()).then(|| Micros(values.iter().map(|v| v.0).sum()))
        }
    }
}

/// Builds the comparison table of a result.
pub fn comparison_table(result: &ProbeResult) -> ComparisonTable {
    let per_run: Vec<(&ProtocolRun, Vec<Chain>)> = result
        .runs
        .iter()
        .map(|run| {
            let good = chains(run).into_iter().filter(Chain::succeeded).collect();
            (run, good)
        })
        .collect();
    let columns: Vec<Column> = per_run
        .iter()
        .map(|(run, good)| Column {
            protocol: run.protocol,
            unmeasured: good.is_empty().then(|| unmeasured(run)),
        })
        .collect();
    let values = |column: usize, state: ConnState, metric: Metric| -> Vec<Micros> {
        per_run[column]
            .1
            .iter()
            .filter(|c| c.state() == state)
            .filter_map(|c| chain_value(metric, c))
            .collect()
    };
    let sections: Vec<TableSection> = ConnState::ALL
        .into_iter()
        .filter_map(|state| {
            let stats_of = |metric| -> Vec<Option<PhaseStats>> {
                (0..per_run.len())
                    .map(|c| PhaseStats::from_values(values(c, state, metric)))
                    .collect()
            };
            let totals = samples(&columns, &stats_of(Metric::Total));
            let whole = (totals.len() > 1).then(|| verdict::compare(state, totals));
            let rows: Vec<TableRow> = Metric::ALL
                .into_iter()
                .filter_map(|metric| {
                    let stats = stats_of(metric);
                    let whole = whole.as_ref().filter(|_| metric != Metric::Total);
                    stats
                        .iter()
                        .any(Option::is_some)
                        .then(|| row(metric, state, &columns, &stats, whole))
                })
                .collect();
            (!rows.is_empty()).then_some(TableSection { state, rows })
        })
        .collect();
    let show_p95 = sections
        .iter()
        .flat_map(|s| &s.rows)
        .flat_map(|r| r.cells.iter().flatten())
        .any(|c| c.p95.is_some());
    ComparisonTable {
        columns,
        show_p95,
        sections,
    }
}

/// The protocols' samples of one metric, in column order.
fn samples(columns: &[Column], stats: &[Option<PhaseStats>]) -> Vec<ProtocolSample> {
    columns
        .iter()
        .zip(stats)
        .filter_map(|(col, s)| {
            s.map(|s| ProtocolSample {
                protocol: col.protocol,
                count: s.count,
                median: s.median,
                min: s.min,
                max: s.max,
                next_to_max: s.next_to_max,
            })
        })
        .collect()
}

/// One row, with leaders and gaps by the significance rule; a part of the request (every
/// metric but the total) also by the `whole`'s bar ([`verdict::compare_part`]).
fn row(
    metric: Metric,
    state: ConnState,
    columns: &[Column],
    stats: &[Option<PhaseStats>],
    whole: Option<&StateComparison>,
) -> TableRow {
    let samples = samples(columns, stats);
    let comparison = (samples.len() > 1).then(|| match whole {
        Some(whole) => verdict::compare_part(state, samples.clone(), whole),
        None => verdict::compare(state, samples.clone()),
    });
    let fastest = samples.iter().map(|s| s.median).min().unwrap_or_default();
    let cells = columns
        .iter()
        .zip(stats)
        .map(|(col, s)| {
            let s = (*s)?;
            let leads = comparison.as_ref().is_some_and(|c| c.leads(col.protocol));
            let beaten = comparison
                .as_ref()
                .is_some_and(|c| c.differs() && !c.leaders.contains(&col.protocol));
            Some(TableCell {
                count: s.count,
                median: s.median,
                p95: (s.count > 1).then_some(s.p95),
                fastest: leads,
                diff_ms: beaten.then(|| s.median.saturating_sub(fastest).as_ms()),
            })
        })
        .collect();
    TableRow { metric, cells }
}

/// Why a run has no successful attempt, in a few words.
pub fn unmeasured(run: &ProtocolRun) -> String {
    if let Some(reason) = &run.skipped {
        return format!("skipped: {reason}");
    }
    let all = chains(run);
    if let Some(f) = all.iter().find_map(Chain::failure) {
        return format!("failed in {}: {}", f.phase.as_str(), f.message);
    }
    match all.iter().find_map(Chain::status) {
        Some(status) => format!("HTTP error: {}", crate::format::status(status)),
        None => "no attempts".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{attempt, failed, fresh, result, reused, run};
    use crate::schema::{FailureKind, Phase};

    fn cell(t: &ComparisonTable, state: ConnState, metric: Metric, col: usize) -> TableCell {
        t.sections
            .iter()
            .find(|s| s.state == state)
            .and_then(|s| s.rows.iter().find(|r| r.metric == metric))
            .and_then(|r| r.cells[col].clone())
            .unwrap()
    }

    #[test]
    fn states_are_separate_and_only_real_differences_are_marked() {
        // Four new connections then four reused requests per protocol.
        let attempts = |tls: [u64; 4], waits: [u64; 4]| {
            let mut out: Vec<_> = (1..)
                .zip(tls)
                .map(|(n, tls)| fresh(n, 100, 200, tls, 4_000))
                .collect();
            out.extend((5..).zip(waits).map(|(n, wait)| reused(n, wait)));
            out
        };
        let r = result(vec![
            run(
                Protocol::H1,
                attempts(
                    [30_000, 30_100, 29_900, 30_200],
                    [2_000, 2_100, 2_050, 2_080],
                ),
            ),
            run(
                Protocol::H2,
                attempts([9_000, 8_950, 9_100, 9_050], [2_050, 2_000, 1_990, 2_030]),
            ),
        ]);
        let t = comparison_table(&r);
        assert_eq!(
            t.sections.iter().map(|s| s.state).collect::<Vec<_>>(),
            vec![ConnState::New, ConnState::Reused]
        );
        assert!(t.show_p95);
        // New connection: TLS 30 ms against 9 ms, well beyond their 0.3 ms spread.
        let h1 = cell(&t, ConnState::New, Metric::Tls, 0);
        let h2 = cell(&t, ConnState::New, Metric::Tls, 1);
        assert!(h2.fastest && !h1.fastest);
        assert_eq!((h1.diff_ms, h2.diff_ms), (Some(21.0), None));
        // Reused: 50 µs apart, inside the floor: nobody leads, no gap.
        let wait = cell(&t, ConnState::Reused, Metric::Wait, 0);
        assert!(!wait.fastest && wait.diff_ms.is_none());
        assert_eq!((wait.count, wait.p95), (4, Some(Micros(2_100))));
        assert!(t.columns.iter().all(|c| c.unmeasured.is_none()));
        // Three new connections a protocol are too few to mark the same gap.
        let mut r = r;
        for run in &mut r.runs {
            run.attempts.remove(3);
        }
        let t = comparison_table(&r);
        let h1 = cell(&t, ConnState::New, Metric::Tls, 0);
        let h2 = cell(&t, ConnState::New, Metric::Tls, 1);
        assert_eq!((h1.count, h2.count), (3, 3));
        assert!(!h1.fastest && !h2.fastest);
        assert_eq!((h1.diff_ms, h2.diff_ms), (None, None));
    }

    #[test]
    fn a_phase_difference_the_whole_request_cannot_show_is_not_marked() {
        // Four new connections a protocol: `send` 0.17 ms against 1.01 ms, tight, but the
        // totals (about 19 ms) vary by 0.6 ms of wait and differ by less than their floor.
        let new = |send: u64| -> Vec<_> {
            (1..)
                .zip([16_000, 16_200, 16_400, 16_600])
                .map(|(n, wait)| {
                    attempt(
                        n,
                        &[
                            (Phase::Connect, 1_000),
                            (Phase::Tls, 2_000),
                            (Phase::Send, send),
                            (Phase::Wait, wait),
                            (Phase::Receive, 100),
                        ],
                        false,
                    )
                })
                .collect()
        };
        let t = comparison_table(&result(vec![
            run(Protocol::H1, new(170)),
            run(Protocol::H3, new(1_010)),
        ]));
        for col in 0..2 {
            let send = cell(&t, ConnState::New, Metric::Send, col);
            assert!(!send.fastest && send.diff_ms.is_none(), "{send:?}");
        }
        // The same gap over a 2 ms request whose totals hold still is marked.
        let quick = |send: u64| -> Vec<_> {
            (1..5)
                .map(|n| attempt(n, &[(Phase::Send, send), (Phase::Wait, 1_000)], false))
                .collect()
        };
        let t = comparison_table(&result(vec![
            run(Protocol::H1, quick(170)),
            run(Protocol::H3, quick(1_010)),
        ]));
        assert!(cell(&t, ConnState::New, Metric::Send, 0).fastest);
        assert_eq!(
            cell(&t, ConnState::New, Metric::Send, 1).diff_ms,
            Some(0.84)
        );
    }

    #[test]
    fn failed_protocols_keep_their_column_and_errors_are_not_figures() {
        let refused = failed(
            attempt(1, &[(Phase::Connect, 100)], false),
            Phase::Connect,
            FailureKind::Refused,
        );
        let mut not_found = fresh(1, 0, 1, 1, 1);
        not_found.response.as_mut().unwrap().status = 404;
        let mut skipped = run(Protocol::H3, Vec::new());
        skipped.skipped = Some("not advertised".into());
        let t = comparison_table(&result(vec![
            run(Protocol::H1, vec![refused]),
            run(Protocol::H2, vec![not_found]),
            skipped,
        ]));
        let reasons: Vec<Option<String>> = t.columns.iter().map(|c| c.unmeasured.clone()).collect();
        assert_eq!(
            reasons,
            vec![
                Some("failed in connect: Refused in connect".into()),
                Some("HTTP error: 404 Not Found".into()),
                Some("skipped: not advertised".into())
            ]
        );
        assert!(t.sections.is_empty());
    }

    #[test]
    fn chain_values_sum_hops() {
        let mut hop = reused(1, 5_000);
        hop.hop = 1;
        let r = run(Protocol::H1, vec![fresh(1, 0, 1_000, 1_000, 10_000), hop]);
        let c = &chains(&r)[0];
        assert_eq!(chain_value(Metric::Wait, c), Some(Micros(15_000)));
        assert_eq!(chain_value(Metric::Tls, c), Some(Micros(1_000)));
        assert_eq!(chain_value(Metric::Total, c), Some(Micros(12_550 + 5_550)));
        assert_eq!(chain_value(Metric::Quic, c), None);
    }
}
