//! A sweep's decay chart: inline SVG drawn by `sweep::chart::plot` (the picture's drawing too),
//! requests per second at each step on a log axis, one line per protocol, the model's ceiling as
//! a dashed line where one applies; the table as its text alternative and the picture as a
//! download. While the sweep runs it holds the steps finished so far.

use super::super::escape;
use super::chart::key;
use crate::api::BenchLinks;
use crate::bench_chart::Frame;
use crate::sweep::chart::{DecayChart, chart, plot};
use crate::sweep::{SweepAxis, SweepResult, curve, protocols};
use std::fmt::Write as _;

/// The decay chart's section of bench `id`'s sweep: heading and legend, hint, chart, table and
/// the picture's download (`href` the API's path, also in `data-api`).
pub fn section(id: &str, sweep: &SweepResult) -> String {
    let picture = escape(&format!("{}/decay.svg", BenchLinks::for_id(id).self_));
    let mut out = String::with_capacity(8192);
    out.push_str(r#"<section class="bench-chart-section decay" aria-labelledby="decay-title">"#);
    inside(&mut out, sweep);
    let _ = write!(
        out,
        r#"<p><a class="button" href="{picture}" data-api="{picture}" download="h123-decay-{}.svg">Download SVG</a></p></section>"#,
        escape(id)
    );
    out
}

/// What the swept figure is called.
fn figure(sweep: &SweepResult) -> &'static str {
    match sweep.sweep.axis {
        SweepAxis::Rtt => "added round-trip time",
        SweepAxis::Loss => "loss",
    }
}

/// The section's inside: heading and legend, hint, chart, table.
fn inside(out: &mut String, sweep: &SweepResult) {
    let c = chart(sweep, Frame::default());
    let figure = figure(sweep);
    let _ = write!(
        out,
        r#"<div class="section-head"><h2 id="decay-title">Requests per second by {figure}</h2><ul class="legend" aria-label="Protocols">"#
    );
    for line in &c.lines {
        key(out, line.protocol, line.dash);
    }
    if c.has_model() {
        out.push_str(r#"<li class="model-key"><svg class="line-swatch" width="32" height="12" aria-hidden="true"><line class="line model" x1="1" x2="31" y1="6" y2="6"></line></svg>dashed, ringed: the model's ceiling</li>"#);
    }
    out.push_str(r#"</ul></div><p class="hint">"#);
    out.push_str(match sweep.sweep.axis {
        SweepAxis::Rtt => "Each step adds round-trip time to every protocol alike. The dashed lines are what a closed loop can reach at best: requests in flight over the first step's mean latency plus the added round trip (Little's law).",
        SweepAxis::Loss => "Each step drops this share of packets, both ways, for every protocol alike. Loss has no simple model for small requests, so only the measurements are drawn.",
    });
    out.push_str(" The rate axis is logarithmic: each gridline is ten times the one below, so every step stays readable and equal gaps are equal ratios.");
    out.push_str(r#"</p><p class="scroll-hint" aria-hidden="true">The chart is wider than the screen: scroll it sideways.</p>"#);
    svg(out, sweep, &c, figure);
    table(out, sweep, figure);
}

/// The chart itself: the shared plot in a themed `<svg>`.
fn svg(out: &mut String, sweep: &SweepResult, c: &DecayChart, figure: &str) {
    let f = c.frame;
    let _ = write!(
        out,
        r#"<div class="chart-scroll"><svg class="bench-chart decay-chart" viewBox="0 0 {} {}" role="img" aria-label="Requests per second by {figure} on a logarithmic scale, {} of {} steps measured, one line per protocol">"#,
        f.width,
        f.height,
        sweep.steps.len(),
        sweep.sweep.steps.len()
    );
    plot(out, c, figure);
    out.push_str("</svg></div>");
}

/// The chart as a table: a row per finished step, per protocol its point in words.
fn table(out: &mut String, sweep: &SweepResult, figure: &str) {
    let columns = protocols(sweep);
    let _ = write!(
        out,
        r#"<details class="chart-table"><summary>Chart as a table</summary><div class="table-scroll"><table class="decay-table"><thead><tr><th scope="col">{figure}</th>"#
    );
    for p in &columns {
        let _ = write!(out, r#"<th scope="col">{}</th>"#, p.http_version());
    }
    out.push_str("</tr></thead><tbody>");
    let curves: Vec<_> = columns.iter().map(|&p| curve(sweep, p)).collect();
    for (i, step) in sweep.steps.iter().enumerate() {
        let _ = write!(
            out,
            r#"<tr><th scope="row">{}</th>"#,
            escape(&sweep.sweep.label(step.value))
        );
        for points in &curves {
            let cell = points.get(i).map(|p| p.text()).unwrap_or_default();
            let _ = write!(out, "<td>{}</td>", escape(&cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div></details>");
}
