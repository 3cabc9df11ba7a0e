//! Requests at once (`streams`): per protocol a bar per request on one time axis, its wait then
//! its transfer, so where HTTP/2's streams wait for each other and HTTP/3's do not is seen, not
//! read; the figures as a table.

use h123_shared::ProbeResult;
use h123_shared::format::ms;
use h123_shared::streams::{StreamBar, bursts, layout, lines};
use leptos::prelude::*;

/// Width of the bars' axis, in SVG units.
const AXIS: f64 = 1000.0;
/// Height of one request's row, and of its bar, in SVG units.
const ROW: f64 = 14.0;
const BAR: f64 = 10.0;

/// The section's inside, if the probe sent requests at once.
pub fn streams(result: &ProbeResult) -> Option<impl IntoView + use<>> {
    let lines = lines(result);
    let (head, described) = lines.split_first()?;
    let (end, groups) = layout(result);
    let hint = format!(
        "{head}. A bar per request: its wait for the first byte, then its transfer; every protocol on one axis, 0 to {}.",
        ms(end)
    );
    let charts = described
        .iter()
        .zip(&groups)
        .map(|(line, (protocol, bars))| {
            let height = ROW * bars.len() as f64;
            let drawn = bars
                .iter()
                .enumerate()
                .map(|(i, bar)| draw(bar, i as f64 * ROW))
                .collect_view();
            view! {
                <h3 class="streams-line">{line.clone()}</h3>
                <svg class="streams-chart" data-protocol=protocol.as_str() viewBox=format!("0 0 {AXIS} {height}") preserveAspectRatio="none" role="img" aria-label=line.clone()>
                    {drawn}
                </svg>
            }
        })
        .collect_view();
    Some(view! {
        <h2 id="streams-title">"Requests at once"</h2>
        <p class="hint">{hint}</p>
        {charts}
        {table(result)}
    })
}

/// One request's bar at height `y`.
fn draw(bar: &StreamBar, y: f64) -> impl IntoView + use<> {
    let first = bar.first_byte.unwrap_or(bar.done) * AXIS;
    let done = bar.done * AXIS;
    let class = if bar.ok { "stream" } else { "stream failed" };
    let y = format!("{y:.1}");
    view! {
        <g class=class>
            <title>{bar.label.clone()}</title>
            <rect class="fill phase-wait" x="0" y=y.clone() width=format!("{first:.1}") height=BAR></rect>
            <rect class="fill phase-receive" x=format!("{first:.1}") y=y width=format!("{:.1}", (done - first).max(0.0)) height=BAR></rect>
        </g>
    }
}

/// The chart as a table: per protocol and request, its first byte and completion.
fn table(result: &ProbeResult) -> impl IntoView + use<> {
    let rows = bursts(result)
        .flat_map(|(run, burst)| {
            burst.streams.iter().enumerate().map(move |(i, s)| {
                let outcome = s.problem().unwrap_or_else(|| ms(s.done_us));
                view! {
                    <tr>
                        <th scope="row">{run.protocol.http_version()}</th>
                        <td>{i + 1}</td>
                        <td>{s.first_byte_us.map_or_else(|| "–".to_owned(), ms)}</td>
                        <td>{outcome}</td>
                    </tr>
                }
            })
        })
        .collect_view();
    view! {
        <details class="chart-table">
            <summary>"Chart as a table"</summary>
            <div class="table-scroll">
                <table class="streams-table">
                    <thead><tr><th scope="col">"Protocol"</th><th scope="col">"Request"</th><th scope="col">"First byte"</th><th scope="col">"Done"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </details>
    }
}
