//! A sweep's decay chart, drawn from `shared::sweep::chart`'s layout: requests per second at each
//! step on a log axis, one line per protocol, the model's ceiling as a dashed line where one
//! applies. One [`plot`] draws it in the page's section (with the table as its text alternative
//! and the picture as a download; while the sweep runs, the steps finished so far) and in the
//! standalone [`picture`] (`h123 bench --sweep ... -o svg`, `GET /api/v1/benches/{id}/decay.svg`).

use super::chart::key;
use crate::pages::parts::at;
use h123_shared::api::BenchLinks;
use h123_shared::bench_chart::Frame;
use h123_shared::sweep::chart::{DecayChart, MODEL_COLOUR, MODEL_DASH, Y_TITLE, chart, colour};
use h123_shared::sweep::{SweepAxis, SweepResult, curve, protocols, table};
use leptos::prelude::*;

/// The muted colour of the plot's ticks and axes in the picture (the page's stylesheet themes
/// them by class).
const MUTED: &str = "#374151";

/// Room above the picture's plot for its title and legend.
const HEADER: f64 = 56.0;

/// The decay chart's section of bench `id`'s sweep: heading and legend, hint, chart, table and
/// the picture's download (`href` the API's path, also in `data-api`).
pub fn section(id: &str, sweep: &SweepResult) -> impl IntoView + use<> {
    let picture = format!("{}/decay.svg", BenchLinks::for_id(id).self_);
    let c = chart(sweep, Frame::default());
    let figure = sweep.sweep.axis.figure();
    let mut keys = c
        .lines
        .iter()
        .map(|line| key(line.protocol, line.dash).into_any())
        .collect::<Vec<_>>();
    if c.has_model() {
        keys.push(
            view! {
                <li class="model-key">
                    <svg class="line-swatch" width="32" height="12" aria-hidden="true">
                        <line class="line model" x1="1" x2="31" y1="6" y2="6"></line>
                    </svg>
                    "dashed, ringed: the model's ceiling"
                </li>
            }
            .into_any(),
        );
    }
    let hint = format!(
        "{} The rate axis is logarithmic: each gridline is ten times the one below, so every step stays readable and equal gaps are equal ratios.",
        match sweep.sweep.axis {
            SweepAxis::Rtt =>
                "Each step adds round-trip time to every protocol alike. The dashed lines are what a closed loop can reach at best: requests in flight over the first step's mean latency plus the added round trip (Little's law).",
            SweepAxis::Loss =>
                "Each step drops this share of packets, both ways, for every protocol alike. Loss has no simple model for small requests, so only the measurements are drawn.",
        }
    );
    let label = format!(
        "Requests per second by {figure} on a logarithmic scale, {} of {} steps measured, one line per protocol",
        sweep.steps.len(),
        sweep.sweep.steps.len()
    );
    let f = c.frame;
    view! {
        <section class="bench-chart-section decay" aria-labelledby="decay-title">
            <div class="section-head">
                <h2 id="decay-title">{format!("Requests per second by {figure}")}</h2>
                <ul class="legend" aria-label="Protocols">{keys}</ul>
            </div>
            <p class="hint">{hint}</p>
            <p class="scroll-hint" aria-hidden="true">"The chart is wider than the screen: scroll it sideways."</p>
            <div class="chart-scroll">
                <svg class="bench-chart decay-chart" viewBox=format!("0 0 {} {}", f.width, f.height) role="img" aria-label=label>
                    {plot(&c, figure)}
                </svg>
            </div>
            {steps_table(sweep, figure)}
            <p>
                <a class="button" href=picture.clone() data-api=picture download=format!("h123-decay-{id}.svg")>"Download SVG"</a>
            </p>
        </section>
    }
}

/// The plot of `c` (the inside of an `<svg>`): grid, ticks, axis titles (`figure` across), then
/// per protocol its measured line and points and the model's dashed line and rings on top. Each
/// element has a class the page's stylesheet themes and the presentation attributes a standalone
/// picture needs (a stylesheet's rules win over them).
pub fn plot(c: &DecayChart, figure: &'static str) -> impl IntoView + use<> {
    let f = c.frame;
    let (left, right, top, base) = (f.left, f.width - f.right, f.top, f.baseline());
    let minor = c
        .y_minor
        .iter()
        .map(|&y| {
            view! { <line class="grid minor" x1=at(left) x2=at(right) y1=at(y) y2=at(y) stroke="#f3f4f6"></line> }
        })
        .collect_view();
    let y_ticks = c
        .y_ticks
        .iter()
        .map(|t| {
            view! {
                <line class="grid" x1=at(left) x2=at(right) y1=at(t.at) y2=at(t.at) stroke="#e5e7eb"></line>
                <text class="tick" x=at(left - 8.0) y=at(t.at + 4.0) text-anchor="end" fill=MUTED>{t.label.clone()}</text>
            }
        })
        .collect_view();
    let x_ticks = c
        .x_ticks
        .iter()
        .map(|t| {
            view! {
                <line class="grid" x1=at(t.at) x2=at(t.at) y1=at(top) y2=at(base) stroke="#e5e7eb"></line>
                <text class="tick" x=at(t.at) y=at(base + 18.0) text-anchor="middle" fill=MUTED>{t.label.clone()}</text>
            }
        })
        .collect_view();
    let middle = at((top + base) / 2.0);
    let measured = c
        .lines
        .iter()
        .map(|line| {
            let (p, colour) = (line.protocol.as_str(), colour(line.protocol));
            let marks = line
                .measured_marks
                .iter()
                .map(|&(x, y)| {
                    view! { <circle class=format!("mark measured proto-{p}") cx=at(x) cy=at(y) r="4" fill=colour></circle> }
                })
                .collect_view();
            view! {
                <path class=format!("line measured proto-{p}") data-protocol=p d=line.measured.clone() fill="none" stroke=colour stroke-width="2.5" stroke-dasharray=line.dash>
                    <title>{line.protocol.http_version()}</title>
                </path>
                {marks}
            }
        })
        .collect_view();
    // The model on top, dark and dashed: it runs close to the measured lines.
    let model = c
        .lines
        .iter()
        .map(|line| {
            let p = line.protocol.as_str();
            let rings = line
                .model_marks
                .iter()
                .map(|&(x, y)| {
                    view! { <circle class=format!("mark model proto-{p}") cx=at(x) cy=at(y) r="6" fill="none" stroke=MODEL_COLOUR stroke-width="1.5"></circle> }
                })
                .collect_view();
            view! {
                <path class=format!("line model proto-{p}") data-protocol=p d=line.model.clone() fill="none" stroke=MODEL_COLOUR stroke-width="1.5" stroke-dasharray=MODEL_DASH></path>
                {rings}
            }
        })
        .collect_view();
    view! {
        {minor}
        {y_ticks}
        {x_ticks}
        <line class="axis" x1=at(left) x2=at(right) y1=at(base) y2=at(base) stroke=MUTED></line>
        <line class="axis" x1=at(left) x2=at(left) y1=at(top) y2=at(base) stroke=MUTED></line>
        <text class="axis-title" x=at((left + right) / 2.0) y=at(base + 36.0) text-anchor="middle" fill=MUTED>{figure}</text>
        <text class="axis-title y-title" x="14" y=middle.clone() transform=format!("rotate(-90 14 {middle})") text-anchor="middle" fill=MUTED>{Y_TITLE}</text>
        {measured}
        {model}
    }
}

/// The chart as a table: a row per finished step, per protocol its point in words.
fn steps_table(sweep: &SweepResult, figure: &'static str) -> impl IntoView + use<> {
    let columns = protocols(sweep);
    let heads = columns
        .iter()
        .map(|p| view! { <th scope="col">{p.http_version()}</th> })
        .collect_view();
    let curves: Vec<_> = columns.iter().map(|&p| curve(sweep, p)).collect();
    let rows = sweep
        .steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let cells = curves
                .iter()
                .map(|points| view! { <td>{points.get(i).map(|p| p.text()).unwrap_or_default()}</td> })
                .collect_view();
            view! { <tr><th scope="row">{sweep.sweep.label(step.value)}</th>{cells}</tr> }
        })
        .collect_view();
    view! {
        <details class="chart-table">
            <summary>"Chart as a table"</summary>
            <div class="table-scroll">
                <table class="decay-table">
                    <thead><tr><th scope="col">{figure}</th>{heads}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </details>
    }
}

/// The decay chart of `result` as a standalone SVG picture: the [`plot`] under a title and a
/// legend, on white, with the table as its description.
pub fn picture(result: &SweepResult) -> impl IntoView + use<> {
    let frame = Frame {
        top: HEADER,
        height: 340.0 + HEADER,
        ..Frame::default()
    };
    let c = chart(result, frame);
    let figure = result.sweep.axis.figure();
    let title = format!(
        "Requests per second (log scale) by {figure}: {} {}",
        result.options.method.as_str(),
        result.options.url
    );
    let mut legend = Vec::new();
    let mut x = frame.left;
    for line in &c.lines {
        legend.push(view! {
            <line x1=at(x) y1="36" x2=at(x + 24.0) y2="36" stroke=colour(line.protocol) stroke-width="2.5" stroke-dasharray=line.dash></line>
            <text x=at(x + 30.0) y="40" fill="#111827">{line.protocol.http_version()}</text>
        }.into_any());
        x += 96.0;
    }
    if c.has_model() {
        legend.push(view! {
            <line x1=at(x) y1="36" x2=at(x + 24.0) y2="36" stroke=MODEL_COLOUR stroke-width="1.5" stroke-dasharray=MODEL_DASH></line>
            <text x=at(x + 30.0) y="40" fill=MUTED>"model: closed-loop ceiling (Little's law)"</text>
        }.into_any());
    }
    let (width, height) = (frame.width.to_string(), frame.height.to_string());
    view! {
        <svg xmlns="http://www.w3.org/2000/svg" viewBox=format!("0 0 {width} {height}") width=width.clone() height=height.clone() font-family="system-ui, sans-serif" font-size="12" role="img">
            <title>{title.clone()}</title>
            <desc>{table(result)}</desc>
            <rect width="100%" height="100%" fill="#ffffff"></rect>
            <text x=at(frame.left) y="18" font-weight="bold" fill="#111827">{title}</text>
            {legend}
            {plot(&c, figure)}
        </svg>
    }
}
