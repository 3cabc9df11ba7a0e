//! A finished bench's comparison table as rows of cells: one column per protocol, one row per
//! figure, the best throughput marked and every rate also given as a share of it. A run that did
//! not run shows a dash.

use crate::bench::{BenchResult, BenchRun, LatencySummary, Ratio, ratios};
use crate::format::{byte_rate, count, ms, rate};
use crate::{Micros, Protocol};

/// One cell: its text, lines under it, and whether it is the best of its row.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// The figure in words.
    pub text: String,
    /// Lines under it (an error count's kinds).
    pub detail: Vec<String>,
    /// Whether it is the best of its row.
    pub best: bool,
}

impl Cell {
    fn plain(text: String) -> Self {
        Cell {
            text,
            detail: Vec::new(),
            best: false,
        }
    }
}

/// A row: its key (for tests and styling), its label, a cell per run in the result's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// A stable name of the figure: `rps`, `latency-p50`…
    pub key: &'static str,
    /// The figure's name for readers.
    pub label: &'static str,
    /// A cell per run.
    pub cells: Vec<Cell>,
}

/// A row from one figure of each run; a run that did not run shows a dash.
fn row(
    runs: &[BenchRun],
    key: &'static str,
    label: &'static str,
    cell: impl Fn(&BenchRun) -> Cell,
) -> Row {
    Row {
        key,
        label,
        cells: runs
            .iter()
            .map(|r| {
                if r.failure.is_some() && r.requests == 0 {
                    Cell::plain("–".into())
                } else {
                    cell(r)
                }
            })
            .collect(),
    }
}

/// A row of one latency figure (`pick`) of each run's summary (`of`); a dash without samples.
fn latency(
    runs: &[BenchRun],
    (key, label): (&'static str, &'static str),
    pick: fn(&LatencySummary) -> Micros,
    of: fn(&BenchRun) -> &LatencySummary,
) -> Row {
    row(runs, key, label, move |r| {
        let summary = of(r);
        Cell::plain(if summary.count == 0 {
            "–".into()
        } else {
            ms(pick(summary))
        })
    })
}

/// Every row of the table of `result`.
pub fn rows(result: &BenchResult) -> Vec<Row> {
    let runs = &result.runs;
    let ratios: Vec<Ratio> = ratios(result);
    let ratio = |p: Protocol| ratios.iter().find(|r| r.protocol == p);
    let mut rows = vec![
        row(runs, "rps", "Requests/s", |r| Cell {
            text: rate(r.requests_per_sec()),
            detail: Vec::new(),
            best: ratio(r.protocol).is_some_and(|x| x.of_best >= 1.0),
        }),
        row(runs, "of-best", "Of the best", |r| {
            Cell::plain(
                ratio(r.protocol)
                    .map_or_else(|| "–".into(), |x| format!("{:.0}%", x.of_best * 100.0)),
            )
        }),
        row(runs, "requests", "Requests", |r| {
            Cell::plain(count(r.requests))
        }),
        row(runs, "successes", "Successes", |r| {
            Cell::plain(count(r.successes))
        }),
        row(runs, "errors", "Errors", |r| Cell {
            text: count(r.errors),
            detail: r
                .errors_by_kind
                .iter()
                .map(|(kind, n)| format!("{kind}: {}", count(*n)))
                .collect(),
            best: false,
        }),
    ];
    if result.options.rate.is_some() {
        rows.push(row(runs, "send-rate", "Sent/s", |r| {
            Cell::plain(rate(r.send_rate))
        }));
    }
    rows.push(row(runs, "bytes", "Body bytes/s", |r| {
        Cell::plain(byte_rate(r.bytes_per_sec()))
    }));
    let total: fn(&BenchRun) -> &LatencySummary = |r| &r.latency;
    let first_byte: fn(&BenchRun) -> &LatencySummary = |r| &r.ttfb;
    rows.extend([
        latency(runs, ("latency-min", "Latency min"), |s| s.min, total),
        latency(runs, ("latency-p50", "Latency p50"), |s| s.p50, total),
        latency(runs, ("latency-p90", "Latency p90"), |s| s.p90, total),
        latency(runs, ("latency-p99", "Latency p99"), |s| s.p99, total),
        latency(runs, ("latency-p999", "Latency p99.9"), |s| s.p999, total),
        latency(runs, ("latency-max", "Latency max"), |s| s.max, total),
        latency(runs, ("ttfb-p50", "First byte p50"), |s| s.p50, first_byte),
        latency(runs, ("ttfb-p99", "First byte p99"), |s| s.p99, first_byte),
        row(runs, "connections", "Connections opened", |r| {
            Cell::plain(count(r.connections_opened))
        }),
    ]);
    rows
}
