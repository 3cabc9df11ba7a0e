//! A finished bench's latency percentile chart: inline SVG of `bench_chart`'s geometry, one line
//! per protocol on one latency axis, with a legend, and a table as its text alternative.

use super::super::{element, escape};
use crate::Protocol;
use crate::bench::BenchResult;
use crate::bench_chart::{Frame, chart as layout, dash, dash_attribute, describe, table};
use crate::format::ms;
use std::fmt::Write as _;

/// A protocol's entry in a chart's legend: a sample of its line (coloured by the stylesheet,
/// `dash` its pattern) and its name.
pub(super) fn key(out: &mut String, p: Protocol, dash: Option<&str>) {
    let _ = write!(
        out,
        r#"<li><svg class="line-swatch" width="32" height="12" aria-hidden="true"><line class="line proto-{}" x1="1" x2="31" y1="6" y2="6"{}></line></svg>{}</li>"#,
        p.as_str(),
        dash_attribute(dash),
        p.http_version()
    );
}

/// A coordinate as SVG wants it.
fn n(v: f64) -> String {
    format!("{v:.1}")
}

/// The chart's section: heading and legend, hints, the chart, and the chart as a table.
pub fn chart(result: &BenchResult) -> String {
    let frame = Frame::default();
    let c = layout(result, frame);
    let mut out = String::from(
        r#"<section class="bench-chart-section" aria-labelledby="chart-title"><div class="section-head"><h2 id="chart-title">Latency by percentile</h2><ul class="legend" aria-label="Protocols">"#,
    );
    for line in &c.lines {
        key(&mut out, line.protocol, dash(line.protocol));
    }
    out.push_str(r#"</ul></div><p class="hint">How slow the slowest requests were: at 99% on the axis, 1 in 100 requests took longer. The axis stretches the tail, so 90, 99, 99.9 and 99.99% are evenly spaced; every protocol shares the latency axis.</p><p class="scroll-hint" aria-hidden="true">The chart is wider than the screen: scroll it sideways.</p>"#);
    let (left, right, top, base) = (
        frame.left,
        frame.width - frame.right,
        frame.top,
        frame.baseline(),
    );
    let _ = write!(
        out,
        r#"<div class="chart-scroll"><svg class="bench-chart" viewBox="0 0 {} {}" role="img" aria-label="{}">"#,
        frame.width,
        frame.height,
        escape(&describe(result))
    );
    for t in &c.y_ticks {
        let _ = write!(
            out,
            r#"<line class="grid" x1="{}" x2="{}" y1="{y}" y2="{y}"></line><text class="tick" x="{}" y="{}" text-anchor="end">{}</text>"#,
            n(left),
            n(right),
            n(left - 8.0),
            n(t.at + 4.0),
            escape(&t.label),
            y = n(t.at),
        );
    }
    for t in &c.x_ticks {
        let _ = write!(
            out,
            r#"<line class="grid" x1="{x}" x2="{x}" y1="{}" y2="{}"></line><text class="tick" x="{x}" y="{}" text-anchor="middle">{}</text>"#,
            n(top),
            n(base),
            n(base + 18.0),
            escape(&t.label),
            x = n(t.at),
        );
    }
    let _ = write!(
        out,
        r#"<line class="axis" x1="{l}" x2="{}" y1="{b}" y2="{b}"></line><line class="axis" x1="{l}" x2="{l}" y1="{}" y2="{b}"></line><text class="axis-title" x="{}" y="{}" text-anchor="middle">percentile of requests</text>"#,
        n(right),
        n(top),
        n((left + right) / 2.0),
        n(frame.height - 6.0),
        l = n(left),
        b = n(base),
    );
    for line in &c.lines {
        let p = line.protocol.as_str();
        let _ = write!(
            out,
            r#"<path class="line proto-{p}" data-protocol="{p}" d="{}"{}></path>"#,
            escape(&line.path),
            dash_attribute(line.dash)
        );
    }
    out.push_str("</svg></div>");
    alternative(&mut out, result);
    out.push_str("</section>");
    out
}

/// The chart as a table: a row per percentile, a column per protocol.
fn alternative(out: &mut String, result: &BenchResult) {
    let alt = table(result);
    out.push_str(r#"<details class="chart-table"><summary>Chart as a table</summary><div class="table-scroll"><table><thead><tr><th scope="col">Percentile</th>"#);
    for p in &alt.protocols {
        let _ = write!(out, r#"<th scope="col">{}</th>"#, p.http_version());
    }
    out.push_str("</tr></thead><tbody>");
    for row in &alt.rows {
        out.push_str("<tr>");
        element(out, "th", r#" scope="row""#, &row.label);
        for value in &row.values {
            element(out, "td", "", &value.map_or_else(|| "–".to_string(), ms));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div></details>");
}
