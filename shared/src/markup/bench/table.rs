//! A finished bench's comparison table: one column per protocol, one row per figure, the best
//! throughput marked and every rate also given as a share of it; a run that could not start
//! says why under the table.

use super::super::element;
use crate::bench::{BenchResult, BenchRun, LatencySummary, Ratio, ratios};
use crate::format::{byte_rate, count, ms, rate};
use crate::{Micros, Protocol};
use std::fmt::Write as _;

/// One cell: its text, extra lines under it, and whether it is the best of its row.
struct Cell {
    text: String,
    detail: Vec<String>,
    best: bool,
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

/// A row: its key (`data-metric`, for tests and styling), its label, a cell per protocol.
struct Line {
    key: &'static str,
    label: &'static str,
    cells: Vec<Cell>,
}

/// A row from one figure of each run; a run that did not run shows a dash.
fn line(
    runs: &[BenchRun],
    key: &'static str,
    label: &'static str,
    cell: impl Fn(&BenchRun) -> Cell,
) -> Line {
    Line {
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
) -> Line {
    line(runs, key, label, move |r| {
        let summary = of(r);
        Cell::plain(if summary.count == 0 {
            "–".into()
        } else {
            ms(pick(summary))
        })
    })
}

/// Every row of the table.
fn lines(result: &BenchResult) -> Vec<Line> {
    let runs = &result.runs;
    let ratios: Vec<Ratio> = ratios(result);
    let ratio = |p: Protocol| ratios.iter().find(|r| r.protocol == p);
    let mut rows = vec![
        line(runs, "rps", "Requests/s", |r| Cell {
            text: rate(r.requests_per_sec()),
            detail: Vec::new(),
            best: ratio(r.protocol).is_some_and(|x| x.of_best >= 1.0),
        }),
        line(runs, "of-best", "Of the best", |r| {
            Cell::plain(
                ratio(r.protocol)
                    .map_or_else(|| "–".into(), |x| format!("{:.0}%", x.of_best * 100.0)),
            )
        }),
        line(runs, "requests", "Requests", |r| {
            Cell::plain(count(r.requests))
        }),
        line(runs, "successes", "Successes", |r| {
            Cell::plain(count(r.successes))
        }),
        line(runs, "errors", "Errors", |r| Cell {
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
        rows.push(line(runs, "send-rate", "Sent/s", |r| {
            Cell::plain(rate(r.send_rate))
        }));
    }
    rows.push(line(runs, "bytes", "Body bytes/s", |r| {
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
        line(runs, "connections", "Connections opened", |r| {
            Cell::plain(count(r.connections_opened))
        }),
    ]);
    rows
}

/// The comparison table of a finished bench, and under it why a run did not run.
pub fn table(result: &BenchResult) -> String {
    let mut out = String::from(
        r#"<section class="comparison bench-table" aria-labelledby="bench-table-title"><h2 id="bench-table-title">Comparison</h2><p class="hint">Per protocol over the measured window (warm-up excluded). Latency runs from the request's send (at a fixed rate, its intended send) to the last body byte; errors count in requests/s.</p><div class="table-scroll"><table><thead><tr><th scope="col">Figure</th>"#,
    );
    for run in &result.runs {
        let p = run.protocol;
        let _ = write!(
            out,
            r#"<th scope="col" class="proto proto-{}">{}</th>"#,
            p.as_str(),
            p.http_version()
        );
    }
    out.push_str("</tr></thead><tbody>");
    for row in lines(result) {
        let _ = write!(
            out,
            r#"<tr data-metric="{}"><th scope="row">{}</th>"#,
            row.key, row.label
        );
        for (cell, run) in row.cells.into_iter().zip(&result.runs) {
            let _ = write!(
                out,
                r#"<td data-protocol="{}"{}>"#,
                run.protocol.as_str(),
                if cell.best { r#" class="fastest""# } else { "" }
            );
            element(&mut out, "span", r#" class="value""#, &cell.text);
            if cell.best {
                out.push_str(r#"<span class="gap best">best</span>"#);
            }
            for detail in &cell.detail {
                element(&mut out, "span", r#" class="gap""#, detail);
            }
            out.push_str("</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    for run in &result.runs {
        if let Some(failure) = &run.failure {
            element(
                &mut out,
                "p",
                r#" class="run-failure""#,
                &format!(
                    "{} did not run: {}",
                    run.protocol.http_version(),
                    failure.message
                ),
            );
        }
    }
    out.push_str("</section>");
    out
}
