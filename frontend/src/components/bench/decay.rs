//! A sweep's decay chart: inline SVG drawn by `shared::sweep::chart::plot`
//! (the picture's drawing too), requests per second at each step on a log
//! axis, one line per protocol, the model's ceiling as a dashed line where
//! one applies; the table as its text
//! alternative and the picture as a download. Drawn once as markup: it
//! changes only when a step ends, and markup keeps the wasm small.

use h123_shared::api::BenchLinks;
use h123_shared::bench_chart::{Frame, dash_attribute};
use h123_shared::markup::escape;
use h123_shared::sweep::chart::{DecayChart as Drawn, chart, plot};
use h123_shared::sweep::{SweepAxis, SweepResult, curve, protocols};
use leptos::prelude::*;
use std::fmt::Write as _;

/// The decay chart of a sweep, finished or so far.
#[component]
pub fn DecayChart(
    /// The bench's id (for the picture's download).
    id: String,
    /// The sweep and the steps measured so far.
    sweep: SweepResult,
) -> impl IntoView {
    let picture = crate::api::api_url(&format!("{}/decay.svg", BenchLinks::for_id(&id).self_));
    let markup = format!(
        "{}<p><a class=\"button\" href=\"{}\" download=\"h123-decay-{}.svg\">Download SVG</a></p>",
        markup(&sweep),
        escape(&picture),
        escape(&id)
    );
    view! {
        <section class="bench-chart-section decay" aria-labelledby="decay-title" inner_html=markup></section>
    }
}

/// What the swept figure is called.
fn figure(sweep: &SweepResult) -> &'static str {
    match sweep.sweep.axis {
        SweepAxis::Rtt => "added round-trip time",
        SweepAxis::Loss => "loss",
    }
}

/// The section's inside: heading and legend, hint, chart, table.
fn markup(sweep: &SweepResult) -> String {
    let frame = Frame::default();
    let c = chart(sweep, frame);
    let figure = figure(sweep);
    let mut out = String::with_capacity(8192);
    let _ = write!(
        out,
        "<div class=\"section-head\"><h2 id=\"decay-title\">Requests per second by {figure}</h2><ul class=\"legend\" aria-label=\"Protocols\">"
    );
    for line in &c.lines {
        let p = line.protocol;
        let _ = write!(
            out,
            "<li><svg class=\"line-swatch\" width=\"32\" height=\"12\" aria-hidden=\"true\"><line class=\"line proto-{}\" x1=\"1\" x2=\"31\" y1=\"6\" y2=\"6\"{}></line></svg>{}</li>",
            p.as_str(),
            dash_attribute(line.dash),
            p.http_version()
        );
    }
    if c.has_model() {
        out.push_str("<li class=\"model-key\"><svg class=\"line-swatch\" width=\"32\" height=\"12\" aria-hidden=\"true\"><line class=\"line model\" x1=\"1\" x2=\"31\" y1=\"6\" y2=\"6\"></line></svg>dashed, ringed: the model's ceiling</li>");
    }
    out.push_str("</ul></div><p class=\"hint\">");
    out.push_str(match sweep.sweep.axis {
        SweepAxis::Rtt => "Each step adds round-trip time to every protocol alike. The dashed lines are what a closed loop can reach at best: requests in flight over the first step's mean latency plus the added round trip (Little's law).",
        SweepAxis::Loss => "Each step drops this share of packets, both ways, for every protocol alike. Loss has no simple model for small requests, so only the measurements are drawn.",
    });
    out.push_str(" The rate axis is logarithmic: each gridline is ten times the one below, so every step stays readable and equal gaps are equal ratios.");
    out.push_str("</p><p class=\"scroll-hint\" aria-hidden=\"true\">The chart is wider than the screen: scroll it sideways.</p>");
    svg(&mut out, sweep, &c, figure);
    table(&mut out, sweep, figure);
    out
}

/// The chart itself: the shared plot in a themed `<svg>`.
fn svg(out: &mut String, sweep: &SweepResult, c: &Drawn, figure: &str) {
    let f = c.frame;
    let _ = write!(
        out,
        "<div class=\"chart-scroll\"><svg class=\"bench-chart decay-chart\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"Requests per second by {figure} on a logarithmic scale, {} of {} steps measured, one line per protocol\">",
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
        "<details class=\"chart-table\"><summary>Chart as a table</summary><div class=\"table-scroll\"><table class=\"decay-table\"><thead><tr><th scope=\"col\">{figure}</th>"
    );
    for p in &columns {
        let _ = write!(out, "<th scope=\"col\">{}</th>", p.http_version());
    }
    out.push_str("</tr></thead><tbody>");
    let curves: Vec<_> = columns.iter().map(|&p| curve(sweep, p)).collect();
    for (i, step) in sweep.steps.iter().enumerate() {
        let _ = write!(
            out,
            "<tr><th scope=\"row\">{}</th>",
            escape(&sweep.sweep.label(step.value))
        );
        for points in &curves {
            let _ = write!(out, "<td>{}</td>", escape(&points[i].text()));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div></details>");
}
