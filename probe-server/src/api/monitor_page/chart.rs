//! One metric of a monitor's page: `shared::monitor_chart`'s layout drawn as inline SVG (coloured
//! by the page's stylesheet, with plain colours for readers without it), the legend, and the
//! table that is its text alternative. A point that is one run links to that run's probe.

use h123_shared::bench_chart::{Frame, dash_attribute};
use h123_shared::format::{ms, wall_clock};
use h123_shared::markup::escape;
use h123_shared::monitor::{Series, SeriesLine, SeriesMetric};
use h123_shared::monitor_chart::{MonitorChart, bucket_words, layout};
use h123_shared::sweep::chart::colour;
use h123_shared::{Micros, Protocol};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Where a chart is drawn: the page's full width, short enough for six on a page.
const FRAME: Frame = Frame {
    width: 720.0,
    height: 200.0,
    left: 64.0,
    right: 16.0,
    top: 12.0,
    bottom: 40.0,
};

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
fn line_name(protocol: Protocol, vantage: &str) -> String {
    match vantage {
        "" => protocol.http_version().to_owned(),
        v => format!("{} from {v}", protocol.http_version()),
    }
}

/// The section of `series` (its metric's heading, legend, chart and table) with `threshold`
/// marked, headed at level 2 with the id `metric-{name}`.
pub fn section(series: &Series, threshold: Option<Micros>) -> String {
    let metric = series.metric;
    let id = format!("metric-{}", metric.as_str());
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        r##"<section class="monitor-metric" aria-labelledby="{id}"><h2 id="{id}">{}</h2>"##,
        title(metric)
    );
    if series.lines.iter().all(|l| l.buckets.is_empty()) && series.missed.is_empty() {
        out.push_str(r##"<p class="hint">No runs in this window.</p></section>"##);
        return out;
    }
    legend(&mut out, &series.lines, threshold);
    let chart = layout(series, threshold, FRAME);
    svg(&mut out, &chart, &id, &summary(series));
    table(&mut out, series);
    out.push_str("</section>");
    out
}

/// The lines' names with their colour and dash, and what the marks mean.
fn legend(out: &mut String, lines: &[SeriesLine], threshold: Option<Micros>) {
    out.push_str(r##"<ul class="chart-legend">"##);
    for line in lines {
        let _ = write!(
            out,
            r##"<li><svg width="28" height="10" aria-hidden="true"><line x1="0" y1="5" x2="28" y2="5" class="chart-line {p}" stroke="{c}" stroke-width="2.5"{d}/></svg>{name}</li>"##,
            p = line.protocol.as_str(),
            c = colour(line.protocol),
            d = dash_attribute(h123_shared::bench_chart::dash(line.protocol)),
            name = escape(&line_name(line.protocol, &line.vantage)),
        );
    }
    out.push_str(
        r##"<li><span class="mark-key fail" aria-hidden="true">×</span>failed run</li><li><span class="mark-key missed" aria-hidden="true">|</span>missed slot</li>"##,
    );
    if let Some(limit) = threshold {
        let _ = write!(
            out,
            r##"<li><span class="mark-key breach" aria-hidden="true">○</span>over the {} threshold</li>"##,
            ms(limit)
        );
    }
    out.push_str("</ul>");
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
fn svg(out: &mut String, chart: &MonitorChart, id: &str, summary: &str) {
    let f = chart.frame;
    let right = f.width - f.right;
    let base = f.baseline();
    let _ = write!(
        out,
        r##"<svg class="monitor-chart" viewBox="0 0 {w} {h}" role="img" aria-labelledby="{id}-t {id}-d"><title id="{id}-t">{t}</title><desc id="{id}-d">{d}</desc>"##,
        w = f.width,
        h = f.height,
        t = escape(&format!("Chart: {}", id.trim_start_matches("metric-"))),
        d = escape(summary),
    );
    for tick in &chart.y_ticks {
        let _ = write!(
            out,
            r##"<line class="chart-grid" x1="{l}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#e6e7e9"/><text class="chart-label" x="{lx}" y="{ty:.1}" text-anchor="end">{}</text>"##,
            escape(&tick.label),
            l = f.left,
            y = tick.at,
            lx = f.left - 6.0,
            ty = tick.at + 4.0,
        );
    }
    for tick in &chart.x_ticks {
        let _ = write!(
            out,
            r##"<line class="chart-grid" x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{base}" stroke="#e6e7e9"/><text class="chart-label" x="{x:.1}" y="{ly}" text-anchor="middle">{}</text>"##,
            escape(&tick.label),
            x = tick.at,
            top = f.top,
            ly = base + 30.0,
        );
    }
    if let Some((y, limit)) = chart.threshold {
        let _ = write!(
            out,
            r##"<line class="chart-threshold" x1="{l}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#9a6700" stroke-dasharray="6 4"><title>threshold {}</title></line>"##,
            ms(limit),
            l = f.left,
        );
    }
    for line in &chart.lines {
        let p = line.protocol.as_str();
        let c = colour(line.protocol);
        let _ = write!(
            out,
            r##"<path class="chart-line {p}" d="{}" fill="none" stroke="{c}" stroke-width="2"{}/>"##,
            line.path,
            dash_attribute(line.dash),
        );
        let name = line_name(line.protocol, &line.vantage);
        for point in &line.points {
            let label = escape(&format!(
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
            ));
            let class = if point.breached {
                "chart-breach"
            } else {
                "chart-point"
            };
            let r = if point.breached { 5 } else { 3 };
            let dot = format!(
                r##"<circle class="{class} {p}" cx="{:.1}" cy="{:.1}" r="{r}"><title>{label}</title></circle>"##,
                point.x, point.y,
            );
            match &point.probe_id {
                Some(probe) => {
                    let _ = write!(out, r##"<a href="/r/{}">{dot}</a>"##, escape(probe));
                }
                None => out.push_str(&dot),
            }
        }
    }
    for mark in &chart.failures {
        let who = mark.protocol.map_or("", |p| p.as_str());
        let _ = write!(
            out,
            r##"<path class="chart-fail" d="M{a:.1},{t:.1} L{b:.1},{u:.1} M{b:.1},{t:.1} L{a:.1},{u:.1}" stroke="#b42318" stroke-width="2"><title>{} failed at {}</title></path>"##,
            escape(&format!("{} run(s) of {who}", mark.count)),
            wall_clock(mark.start_unix_ms, 0),
            a = mark.x - 4.0,
            b = mark.x + 4.0,
            t = base - 12.0,
            u = base - 4.0,
        );
    }
    for mark in &chart.missed {
        let _ = write!(
            out,
            r##"<line class="chart-missed" x1="{x:.1}" y1="{base}" x2="{x:.1}" y2="{y2}" stroke="#5b5f66" stroke-width="2"><title>{} missed slot(s) at {}</title></line>"##,
            mark.count,
            wall_clock(mark.start_unix_ms, 0),
            x = mark.x,
            y2 = base + 12.0,
        );
    }
    let _ = write!(
        out,
        r##"<line class="chart-axis" x1="{l}" y1="{base}" x2="{right}" y2="{base}" stroke="#5b5f66"/></svg>"##,
        l = f.left
    );
}

/// The figures as a table: a row per bucket, a column per line, and the missed slots.
fn table(out: &mut String, series: &Series) {
    let mut rows: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let width = series.lines.len() + 1;
    for (column, line) in series.lines.iter().enumerate() {
        for bucket in &line.buckets {
            let mut cell = escape(&bucket_words(bucket));
            if let Some(probe) = &bucket.probe_id {
                let _ = write!(cell, r##" <a href="/r/{}">run</a>"##, escape(probe));
            }
            rows.entry(bucket.start_unix_ms)
                .or_insert_with(|| vec![String::new(); width])[column] = cell;
        }
    }
    for missed in &series.missed {
        rows.entry(missed.start_unix_ms)
            .or_insert_with(|| vec![String::new(); width])[width - 1] = missed.missed.to_string();
    }
    let _ = write!(
        out,
        r##"<details class="chart-table"><summary>The figures as a table ({} rows)</summary><table><thead><tr><th scope="col">From (UTC)</th>"##,
        rows.len()
    );
    for line in &series.lines {
        let _ = write!(
            out,
            r##"<th scope="col">{}</th>"##,
            escape(&line_name(line.protocol, &line.vantage))
        );
    }
    out.push_str(r##"<th scope="col">Missed</th></tr></thead><tbody>"##);
    for (start, cells) in rows {
        let _ = write!(
            out,
            r##"<tr><th scope="row">{}</th>"##,
            escape(&wall_clock(start, 0))
        );
        for cell in cells {
            let _ = write!(out, "<td>{cell}</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></details>");
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let html = section(&series(), Some(Micros(50_000)));
        assert!(html.contains(r##"<a href="/r/aaa""##), "{html}");
        assert_eq!(html.matches("chart-breach h3").count(), 1, "{html}");
        assert_eq!(html.matches(r##"<path class="chart-fail""##).count(), 1);
        assert_eq!(html.matches(r##"<line class="chart-missed""##).count(), 1);
        assert!(html.contains("chart-threshold"), "{html}");
        assert!(html.contains("HTTP/3 from eu&quot;&lt;x&gt;"), "{html}");
        assert!(!html.contains("<x>"), "the vantage is escaped: {html}");
        assert!(html.contains("(4 rows)"), "{html}");
        assert!(html.contains("<td>no answer in 1 run, 1 failed"), "{html}");
    }

    #[test]
    fn an_empty_window_says_so() {
        let mut empty = series();
        empty.lines.clear();
        empty.missed.clear();
        let html = section(&empty, None);
        assert!(html.contains("No runs in this window."), "{html}");
        assert!(!html.contains("<svg"), "{html}");
    }
}
