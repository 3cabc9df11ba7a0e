//! The latency percentile chart: inline SVG drawn from `shared::bench_chart`,
//! one line per protocol on one latency axis, with a legend and a table as
//! its text alternative.

use h123_shared::bench::BenchResult;
use h123_shared::bench_chart::{Frame, chart, dash, describe, table};
use h123_shared::format::ms;
use leptos::prelude::*;

/// A coordinate as SVG wants it.
fn n(v: f64) -> String {
    format!("{v:.1}")
}

/// The chart of a finished bench.
#[component]
pub fn PercentileChart(
    /// The finished result.
    result: BenchResult,
) -> impl IntoView {
    let frame = Frame::default();
    let c = chart(&result, frame);
    let label = describe(&result);
    let alt = table(&result);
    let (left, right, top, base) = (
        frame.left,
        frame.width - frame.right,
        frame.top,
        frame.baseline(),
    );
    let legend = c
        .lines
        .iter()
        .map(|line| {
            let p = line.protocol;
            view! {
                <li>
                    <svg class="line-swatch" width="32" height="12" aria-hidden="true">
                        <line class=format!("line proto-{}", p.as_str()) x1="1" x2="31" y1="6" y2="6" stroke-dasharray=dash(p)></line>
                    </svg>
                    {p.http_version()}
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="bench-chart-section" aria-labelledby="chart-title">
            <div class="section-head">
                <h2 id="chart-title">"Latency by percentile"</h2>
                <ul class="legend" aria-label="Protocols">{legend}</ul>
            </div>
            <p class="hint">
                "How slow the slowest requests were: at 99% on the axis, 1 in 100 requests took longer. "
                "The axis stretches the tail, so 90, 99, 99.9 and 99.99% are evenly spaced; every protocol shares the latency axis."
            </p>
            <p class="scroll-hint" aria-hidden="true">
                "The chart is wider than the screen: scroll it sideways."
            </p>
            <div class="chart-scroll">
                <svg
                    class="bench-chart"
                    viewBox=format!("0 0 {} {}", frame.width, frame.height)
                    role="img"
                    aria-label=label
                >
                    {c.y_ticks
                        .iter()
                        .map(|t| {
                            view! {
                                <line class="grid" x1=n(left) x2=n(right) y1=n(t.at) y2=n(t.at)></line>
                                <text class="tick" x=n(left - 8.0) y=n(t.at + 4.0) text-anchor="end">{t.label.clone()}</text>
                            }
                        })
                        .collect_view()}
                    {c.x_ticks
                        .iter()
                        .map(|t| {
                            view! {
                                <line class="grid" x1=n(t.at) x2=n(t.at) y1=n(top) y2=n(base)></line>
                                <text class="tick" x=n(t.at) y=n(base + 18.0) text-anchor="middle">{t.label.clone()}</text>
                            }
                        })
                        .collect_view()}
                    <line class="axis" x1=n(left) x2=n(right) y1=n(base) y2=n(base)></line>
                    <line class="axis" x1=n(left) x2=n(left) y1=n(top) y2=n(base)></line>
                    <text class="axis-title" x=n((left + right) / 2.0) y=n(frame.height - 6.0) text-anchor="middle">
                        "percentile of requests"
                    </text>
                    {c.lines
                        .iter()
                        .map(|line| {
                            let p = line.protocol.as_str();
                            view! {
                                <path class=format!("line proto-{p}") data-protocol=p d=line.path.clone() stroke-dasharray=line.dash></path>
                            }
                        })
                        .collect_view()}
                </svg>
            </div>
            <details class="chart-table">
                <summary>"Chart as a table"</summary>
                <div class="table-scroll">
                    <table>
                        <thead>
                            <tr>
                                <th scope="col">"Percentile"</th>
                                {alt.protocols.iter().map(|p| view! { <th scope="col">{p.http_version()}</th> }).collect_view()}
                            </tr>
                        </thead>
                        <tbody>
                            {alt
                                .rows
                                .into_iter()
                                .map(|row| {
                                    view! {
                                        <tr>
                                            <th scope="row">{row.label}</th>
                                            {row
                                                .values
                                                .into_iter()
                                                .map(|v| view! { <td>{v.map_or_else(|| "–".to_string(), ms)}</td> })
                                                .collect_view()}
                                        </tr>
                                    }
                                })
                                .collect_view()}
                        </tbody>
                    </table>
                </div>
            </details>
        </section>
    }
}
