//! A metric's section on the monitor page: its heading, legend, inline SVG chart (laid out by
//! `shared::monitor_chart`, coloured by the stylesheet; a point per run linking its result) and
//! the table that is its text alternative.

use h123_shared::bench_chart::{Frame, dash};
use h123_shared::format::{ms, wall_clock};
use h123_shared::monitor::{Series, SeriesLine, SeriesMetric};
use h123_shared::monitor_chart::{ChartLine, MonitorChart, bucket_words, layout};
use h123_shared::sweep::chart::colour;
use h123_shared::{Micros, Protocol};
use leptos::prelude::*;
use std::collections::BTreeMap;

/// Where a chart is drawn: the page's full width, short enough for six on a page.
const FRAME: Frame = Frame {
    width: 720.0,
    height: 200.0,
    left: 64.0,
    right: 16.0,
    top: 12.0,
    bottom: 40.0,
};

/// The grid's and the axis' colours (the stylesheet's `.chart-grid` and `.chart-axis` win).
const GRID: &str = "#e6e7e9";
const AXIS: &str = "#5b5f66";

/// A metric's heading.
pub fn title(metric: SeriesMetric) -> &'static str {
    match metric {
        SeriesMetric::Total => "Total, new connections",
        SeriesMetric::Ttfb => "Time to first byte, new connections",
        SeriesMetric::Dns => "DNS lookup",
        SeriesMetric::Connect => "TCP connect",
        SeriesMetric::Tls => "TLS or QUIC handshake",
        SeriesMetric::ReusedTotal => "Total, reused connections",
    }
}

/// A line's name: the protocol, and the vantage when it is not the server's own.
pub(super) fn line_name(protocol: Protocol, vantage: &str) -> String {
    match vantage {
        "" => protocol.http_version().to_owned(),
        v => format!("{} from {v}", protocol.http_version()),
    }
}

/// A coordinate as the chart writes it: one decimal.
fn at(value: f64) -> String {
    format!("{value:.1}")
}

/// The section of `series` (its metric's heading, legend, chart and table) with `threshold`
/// marked, headed at level 2 with the id `metric-{name}`.
pub fn section(series: &Series, threshold: Option<Micros>) -> impl IntoView + use<> {
    let id = format!("metric-{}", series.metric.as_str());
    let empty = series.lines.iter().all(|l| l.buckets.is_empty()) && series.missed.is_empty();
    let body = match empty {
        true => view! { <p class="hint">"No runs in this window."</p> }.into_any(),
        false => {
            let chart = layout(series, threshold, FRAME);
            view! {
                {legend(&series.lines, threshold)}
                {svg(&chart, &id, summary(series))}
                {table(series)}
            }
            .into_any()
        }
    };
    let heading = id.clone();
    view! {
        <section class="monitor-metric" aria-labelledby=id>
            <h2 id=heading>{title(series.metric)}</h2>
            {body}
        </section>
    }
}

/// The lines' names with their colour and dash, and what the marks mean.
fn legend(lines: &[SeriesLine], threshold: Option<Micros>) -> impl IntoView + use<> {
    let keys = lines
        .iter()
        .map(|line| {
            let class = format!("chart-line {}", line.protocol.as_str());
            view! {
                <li>
                    <svg width="28" height="10" aria-hidden="true">
                        <line x1="0" y1="5" x2="28" y2="5" class=class stroke=colour(line.protocol)
                            stroke-width="2.5" stroke-dasharray=dash(line.protocol)/>
                    </svg>
                    {line_name(line.protocol, &line.vantage)}
                </li>
            }
        })
        .collect_view();
    let over = threshold.map(|limit| {
        view! {
            <li><span class="mark-key breach" aria-hidden="true">"○"</span>{format!("over the {} threshold", ms(limit))}</li>
        }
    });
    view! {
        <ul class="chart-legend">
            {keys}
            <li><span class="mark-key fail" aria-hidden="true">"×"</span>"failed run"</li>
            <li><span class="mark-key missed" aria-hidden="true">"|"</span>"missed slot"</li>
            {over}
        </ul>
    }
}

/// What the chart shows, in a sentence (its accessible name's description).
fn summary(series: &Series) -> String {
    let runs: u32 = series
        .lines
        .iter()
        .flat_map(|l| &l.buckets)
        .map(|b| b.runs)
        .sum();
    let missed: u64 = series.missed.iter().map(|m| m.missed).sum();
    format!(
        "{} from {} to {}: {runs} protocol runs, {missed} missed slots; the table below has the figures.",
        title(series.metric),
        wall_clock(series.from_unix_ms, 0),
        wall_clock(series.to_unix_ms, 0)
    )
}

/// The chart as inline SVG.
fn svg(chart: &MonitorChart, id: &str, summary: String) -> impl IntoView + use<> {
    let f = chart.frame;
    let right = f.width - f.right;
    let base = f.baseline();
    let y_ticks = chart
        .y_ticks
        .iter()
        .map(|tick| {
            view! {
                <line class="chart-grid" x1=f.left y1=at(tick.at) x2=right y2=at(tick.at) stroke=GRID/>
                <text class="chart-label" x=f.left - 6.0 y=at(tick.at + 4.0) text-anchor="end">{tick.label.clone()}</text>
            }
        })
        .collect_view();
    let x_ticks = chart
        .x_ticks
        .iter()
        .map(|tick| {
            view! {
                <line class="chart-grid" x1=at(tick.at) y1=f.top x2=at(tick.at) y2=base stroke=GRID/>
                <text class="chart-label" x=at(tick.at) y=base + 30.0 text-anchor="middle">{tick.label.clone()}</text>
            }
        })
        .collect_view();
    let threshold = chart.threshold.map(|(y, limit)| {
        view! {
            <line class="chart-threshold" x1=f.left y1=at(y) x2=right y2=at(y) stroke="#9a6700" stroke-dasharray="6 4">
                <title>{format!("threshold {}", ms(limit))}</title>
            </line>
        }
    });
    let lines = chart.lines.iter().map(chart_line).collect_view();
    let failures = chart
        .failures
        .iter()
        .map(|mark| {
            let (a, b, t, u) = (mark.x - 4.0, mark.x + 4.0, base - 12.0, base - 4.0);
            let d = format!(
                "M{a:.1},{t:.1} L{b:.1},{u:.1} M{b:.1},{t:.1} L{a:.1},{u:.1}"
            );
            let who = mark.protocol.map_or("", |p| p.as_str());
            let words = format!(
                "{} run(s) of {who} failed at {}",
                mark.count,
                wall_clock(mark.start_unix_ms, 0)
            );
            view! {
                <path class="chart-fail" d=d stroke="#b42318" stroke-width="2"><title>{words}</title></path>
            }
        })
        .collect_view();
    let missed = chart
        .missed
        .iter()
        .map(|mark| {
            let words = format!(
                "{} missed slot(s) at {}",
                mark.count,
                wall_clock(mark.start_unix_ms, 0)
            );
            view! {
                <line class="chart-missed" x1=at(mark.x) y1=base x2=at(mark.x) y2=base + 12.0 stroke=AXIS stroke-width="2">
                    <title>{words}</title>
                </line>
            }
        })
        .collect_view();
    let labelled_by = format!("{id}-t {id}-d");
    let name = format!("Chart: {}", id.trim_start_matches("metric-"));
    view! {
        <svg class="monitor-chart" viewBox=format!("0 0 {} {}", f.width, f.height) role="img" aria-labelledby=labelled_by>
            <title id=format!("{id}-t")>{name}</title>
            <desc id=format!("{id}-d")>{summary}</desc>
            {y_ticks}
            {x_ticks}
            {threshold}
            {lines}
            {failures}
            {missed}
            <line class="chart-axis" x1=f.left y1=base x2=right y2=base stroke=AXIS/>
        </svg>
    }
}

/// One line: its path and a point per bucket, each linking the run it shows.
fn chart_line(line: &ChartLine) -> impl IntoView + use<> {
    let p = line.protocol.as_str();
    let name = line_name(line.protocol, &line.vantage);
    let points = line
        .points
        .iter()
        .map(|point| {
            let label = format!(
                "{name} from {}: {}{}{}",
                wall_clock(point.start_unix_ms, 0),
                ms(point.median),
                match point.runs {
                    1 => String::new(),
                    n => format!(" median of {n} runs; opens the slowest"),
                },
                if point.breached {
                    ", over a threshold"
                } else {
                    ""
                }
            );
            let (class, r) = match point.breached {
                true => (format!("chart-breach {p}"), "5"),
                false => (format!("chart-point {p}"), "3"),
            };
            let dot = view! {
                <circle class=class cx=at(point.x) cy=at(point.y) r=r><title>{label}</title></circle>
            };
            match &point.probe_id {
                Some(probe) => view! { <a href=format!("/r/{probe}")>{dot}</a> }.into_any(),
                None => dot.into_any(),
            }
        })
        .collect_view();
    view! {
        <path class=format!("chart-line {p}") d=line.path.clone() fill="none" stroke=colour(line.protocol)
            stroke-width="2" stroke-dasharray=line.dash/>
        {points}
    }
}

/// The figures as a table: a row per bucket, a column per line, and the missed slots.
fn table(series: &Series) -> impl IntoView + use<> {
    /// A cell: the bucket's words and the run it links.
    #[derive(Clone, Default)]
    struct Cell {
        words: String,
        probe: Option<String>,
    }
    let width = series.lines.len() + 1;
    let mut rows: BTreeMap<u64, Vec<Cell>> = BTreeMap::new();
    for (column, line) in series.lines.iter().enumerate() {
        for bucket in &line.buckets {
            rows.entry(bucket.start_unix_ms)
                .or_insert_with(|| vec![Cell::default(); width])[column] = Cell {
                words: bucket_words(bucket),
                probe: bucket.probe_id.clone(),
            };
        }
    }
    for missed in &series.missed {
        rows.entry(missed.start_unix_ms)
            .or_insert_with(|| vec![Cell::default(); width])[width - 1]
            .words = missed.missed.to_string();
    }
    let caption = format!("The figures as a table ({} rows)", rows.len());
    let heads = series
        .lines
        .iter()
        .map(|line| view! { <th scope="col">{line_name(line.protocol, &line.vantage)}</th> })
        .collect_view();
    let body = rows
        .into_iter()
        .map(|(start, cells)| {
            let cells = cells
                .into_iter()
                .map(|cell| {
                    let run = cell
                        .probe
                        .map(|probe| view! { " "<a href=format!("/r/{probe}")>"run"</a> });
                    view! { <td>{cell.words}{run}</td> }
                })
                .collect_view();
            view! { <tr><th scope="row">{wall_clock(start, 0)}</th>{cells}</tr> }
        })
        .collect_view();
    view! {
        <details class="chart-table">
            <summary>{caption}</summary>
            <table>
                <thead><tr><th scope="col">"From (UTC)"</th>{heads}<th scope="col">"Missed"</th></tr></thead>
                <tbody>{body}</tbody>
            </table>
        </details>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::render;
    use h123_shared::monitor::{Bucket, MissedBucket};

    fn series() -> Series {
        let bucket = |start: u64, median: Option<u64>, failures: u32, probe: &str| Bucket {
            start_unix_ms: start,
            runs: 1,
            failures,
            breaches: u32::from(median.is_some_and(|m| m > 50_000)),
            min: median.map(Micros),
            median: median.map(Micros),
            p95: median.map(Micros),
            max: median.map(Micros),
            probe_id: Some(probe.to_owned()),
            slowest_probe_id: median.map(|_| probe.to_owned()),
        };
        Series {
            metric: SeriesMetric::Total,
            from_unix_ms: 0,
            to_unix_ms: 240_000,
            bucket_ms: 60_000,
            lines: vec![SeriesLine {
                protocol: Protocol::H3,
                vantage: "eu\"<x>".to_owned(),
                buckets: vec![
                    bucket(0, Some(40_000), 0, "aaa"),
                    bucket(60_000, Some(90_000), 0, "bbb"),
                    bucket(120_000, None, 1, "ccc"),
                ],
            }],
            missed: vec![MissedBucket {
                start_unix_ms: 180_000,
                missed: 1,
            }],
            verdict: None,
        }
    }

    #[test]
    fn points_link_their_runs_and_every_mark_is_in_the_chart_and_the_table() {
        let series = series();
        let html = render(|| section(&series, Some(Micros(50_000))));
        assert!(html.contains(r#"<a href="/r/aaa""#), "{html}");
        assert_eq!(html.matches("chart-breach h3").count(), 1, "{html}");
        assert_eq!(html.matches(r#"class="chart-fail""#).count(), 1, "{html}");
        assert_eq!(html.matches(r#"class="chart-missed""#).count(), 1, "{html}");
        assert!(html.contains("chart-threshold"), "{html}");
        assert!(html.contains("HTTP/3 from eu\"&lt;x&gt;"), "{html}");
        assert!(!html.contains("<x>"), "the vantage is escaped: {html}");
        assert!(html.contains("(4 rows)"), "{html}");
        assert!(html.contains("<td>no answer in 1 run, 1 failed"), "{html}");
        assert!(html.contains(r#"viewBox="0 0 720 200""#), "{html}");
    }

    #[test]
    fn an_empty_window_says_so() {
        let mut empty = series();
        empty.lines.clear();
        empty.missed.clear();
        let html = render(|| section(&empty, None));
        assert!(html.contains("No runs in this window."), "{html}");
        assert!(!html.contains("<svg"), "{html}");
    }
}
