//! A finished bench's latency percentile chart: inline SVG of `bench_chart`'s geometry, one line
//! per protocol on one latency axis, with a legend, and a table as its text alternative.

use crate::pages::parts::at;
use h123_shared::Protocol;
use h123_shared::bench::BenchResult;
use h123_shared::bench_chart::{Frame, chart as layout, dash, describe, table};
use h123_shared::format::ms;
use leptos::prelude::*;

/// A protocol's entry in a chart's legend: a sample of its line (coloured by the stylesheet,
/// `dash` its pattern) and its name.
pub(super) fn key(p: Protocol, dash: Option<&'static str>) -> impl IntoView + use<> {
    view! {
        <li>
            <svg class="line-swatch" width="32" height="12" aria-hidden="true">
                <line class=format!("line proto-{}", p.as_str()) x1="1" x2="31" y1="6" y2="6" stroke-dasharray=dash></line>
            </svg>
            {p.http_version()}
        </li>
    }
}

/// The chart's section: heading and legend, hints, the chart, and the chart as a table.
pub fn chart(result: &BenchResult) -> impl IntoView + use<> {
    let frame = Frame::default();
    let c = layout(result, frame);
    let (left, right, top, base) = (
        frame.left,
        frame.width - frame.right,
        frame.top,
        frame.baseline(),
    );
    let keys = c
        .lines
        .iter()
        .map(|line| key(line.protocol, dash(line.protocol)))
        .collect_view();
    let y_ticks = c
        .y_ticks
        .iter()
        .map(|t| {
            view! {
                <line class="grid" x1=at(left) x2=at(right) y1=at(t.at) y2=at(t.at)></line>
                <text class="tick" x=at(left - 8.0) y=at(t.at + 4.0) text-anchor="end">{t.label.clone()}</text>
            }
        })
        .collect_view();
    let x_ticks = c
        .x_ticks
        .iter()
        .map(|t| {
            view! {
                <line class="grid" x1=at(t.at) x2=at(t.at) y1=at(top) y2=at(base)></line>
                <text class="tick" x=at(t.at) y=at(base + 18.0) text-anchor="middle">{t.label.clone()}</text>
            }
        })
        .collect_view();
    let lines = c
        .lines
        .iter()
        .map(|line| {
            let p = line.protocol.as_str();
            view! {
                <path class=format!("line proto-{p}") data-protocol=p d=line.path.clone() stroke-dasharray=line.dash></path>
            }
        })
        .collect_view();
    view! {
        <section class="bench-chart-section" aria-labelledby="chart-title">
            <div class="section-head">
                <h2 id="chart-title">"Latency by percentile"</h2>
                <ul class="legend" aria-label="Protocols">{keys}</ul>
            </div>
            <p class="hint">"How slow the slowest requests were: at 99% on the axis, 1 in 100 requests took longer. The axis stretches the tail, so 90, 99, 99.9 and 99.99% are evenly spaced; every protocol shares the latency axis."</p>
            <p class="scroll-hint" aria-hidden="true">"The chart is wider than the screen: scroll it sideways."</p>
            <div class="chart-scroll">
                <svg class="bench-chart" viewBox=format!("0 0 {} {}", frame.width, frame.height) role="img" aria-label=describe(result)>
                    {y_ticks}
                    {x_ticks}
                    <line class="axis" x1=at(left) x2=at(right) y1=at(base) y2=at(base)></line>
                    <line class="axis" x1=at(left) x2=at(left) y1=at(top) y2=at(base)></line>
                    <text class="axis-title" x=at((left + right) / 2.0) y=at(frame.height - 6.0) text-anchor="middle">"percentile of requests"</text>
                    {lines}
                </svg>
            </div>
            {alternative(result)}
        </section>
    }
}

/// The chart as a table: a row per percentile, a column per protocol.
fn alternative(result: &BenchResult) -> impl IntoView + use<> {
    let alt = table(result);
    let heads = alt
        .protocols
        .iter()
        .map(|p| view! { <th scope="col">{p.http_version()}</th> })
        .collect_view();
    let rows = alt
        .rows
        .into_iter()
        .map(|row| {
            let cells = row
                .values
                .iter()
                .map(|value| view! { <td>{value.map_or_else(|| "–".to_string(), ms)}</td> })
                .collect_view();
            view! { <tr><th scope="row">{row.label}</th>{cells}</tr> }
        })
        .collect_view();
    view! {
        <details class="chart-table">
            <summary>"Chart as a table"</summary>
            <div class="table-scroll">
                <table>
                    <thead><tr><th scope="col">"Percentile"</th>{heads}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </details>
    }
}
