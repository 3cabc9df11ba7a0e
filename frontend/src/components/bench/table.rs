//! The bench comparison table: one column per protocol, one row per figure,
//! the best throughput marked and every rate also given as a share of it.

use h123_shared::bench::{BenchResult, BenchRun, LatencySummary, Ratio, ratios};
use h123_shared::format::{byte_rate, count, ms, rate};
use h123_shared::{Micros, Protocol};
use leptos::prelude::*;

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

/// A row: its key (for tests and styling), its label, a cell per protocol.
struct Line {
    key: &'static str,
    label: &'static str,
    cells: Vec<Cell>,
}

/// Builds a row from one figure of each run; runs that did not run show a dash.
fn line(
    runs: &[&BenchRun],
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

fn latency(
    runs: &[&BenchRun],
    key: &'static str,
    label: &'static str,
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
    let runs: Vec<&BenchRun> = result.runs.iter().collect();
    let ratios: Vec<Ratio> = ratios(result);
    let ratio = |p: Protocol| ratios.iter().find(|r| r.protocol == p);
    let mut rows = vec![
        line(&runs, "rps", "Requests/s", |r| Cell {
            text: rate(r.requests_per_sec()),
            detail: Vec::new(),
            best: ratio(r.protocol).is_some_and(|x| x.of_best >= 1.0),
        }),
        line(&runs, "of-best", "Of the best", |r| {
            Cell::plain(
                ratio(r.protocol)
                    .map_or_else(|| "–".into(), |x| format!("{:.0}%", x.of_best * 100.0)),
            )
        }),
        line(&runs, "requests", "Requests", |r| {
            Cell::plain(count(r.requests))
        }),
        line(&runs, "successes", "Successes", |r| {
            Cell::plain(count(r.successes))
        }),
        line(&runs, "errors", "Errors", |r| Cell {
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
        rows.push(line(&runs, "send-rate", "Sent/s", |r| {
            Cell::plain(rate(r.send_rate))
        }));
    }
    rows.extend([
        line(&runs, "bytes", "Body bytes/s", |r| {
            Cell::plain(byte_rate(r.bytes_per_sec()))
        }),
        latency(
            &runs,
            "latency-min",
            "Latency min",
            |s| s.min,
            |r| &r.latency,
        ),
        latency(
            &runs,
            "latency-p50",
            "Latency p50",
            |s| s.p50,
            |r| &r.latency,
        ),
        latency(
            &runs,
            "latency-p90",
            "Latency p90",
            |s| s.p90,
            |r| &r.latency,
        ),
        latency(
            &runs,
            "latency-p99",
            "Latency p99",
            |s| s.p99,
            |r| &r.latency,
        ),
        latency(
            &runs,
            "latency-p999",
            "Latency p99.9",
            |s| s.p999,
            |r| &r.latency,
        ),
        latency(
            &runs,
            "latency-max",
            "Latency max",
            |s| s.max,
            |r| &r.latency,
        ),
        latency(&runs, "ttfb-p50", "First byte p50", |s| s.p50, |r| &r.ttfb),
        latency(&runs, "ttfb-p99", "First byte p99", |s| s.p99, |r| &r.ttfb),
        line(&runs, "connections", "Connections opened", |r| {
            Cell::plain(count(r.connections_opened))
        }),
    ]);
    rows
}

/// The comparison table of a finished bench.
#[component]
pub fn BenchTable(
    /// The finished result.
    result: BenchResult,
) -> impl IntoView {
    let protocols: Vec<Protocol> = result.runs.iter().map(|r| r.protocol).collect();
    let failures: Vec<(Protocol, String)> = result
        .runs
        .iter()
        .filter_map(|r| r.failure.as_ref().map(|f| (r.protocol, f.message.clone())))
        .collect();
    let rows = lines(&result);
    view! {
        <section class="comparison bench-table" aria-labelledby="bench-table-title">
            <h2 id="bench-table-title">"Comparison"</h2>
            <p class="hint">
                "Per protocol over the measured window (warm-up excluded). Latency runs from the request's send "
                "(at a fixed rate, its intended send) to the last body byte; errors count in requests/s."
            </p>
            <div class="table-scroll">
                <table>
                    <thead>
                        <tr>
                            <th scope="col">"Figure"</th>
                            {protocols
                                .iter()
                                .map(|p| {
                                    view! {
                                        <th scope="col" class=format!("proto proto-{}", p.as_str())>
                                            {p.http_version()}
                                        </th>
                                    }
                                })
                                .collect_view()}
                        </tr>
                    </thead>
                    <tbody>
                        {rows
                            .into_iter()
                            .map(|row| {
                                view! {
                                    <tr data-metric=row.key>
                                        <th scope="row">{row.label}</th>
                                        {row
                                            .cells
                                            .into_iter()
                                            .zip(&protocols)
                                            .map(|(cell, p)| {
                                                view! {
                                                    <td data-protocol=p.as_str() class:fastest=cell.best>
                                                        <span class="value">{cell.text}</span>
                                                        {cell.best.then(|| view! { <span class="gap best">"best"</span> })}
                                                        {cell
                                                            .detail
                                                            .into_iter()
                                                            .map(|d| view! { <span class="gap">{d}</span> })
                                                            .collect_view()}
                                                    </td>
                                                }
                                            })
                                            .collect_view()}
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
            {failures
                .into_iter()
                .map(|(p, message)| {
                    view! { <p class="run-failure">{format!("{} did not run: {message}", p.http_version())}</p> }
                })
                .collect_view()}
        </section>
    }
}
