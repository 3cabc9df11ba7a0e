//! A finished bench's comparison table (`shared::bench::table`'s rows): one column per protocol,
//! one row per figure, the best throughput marked; a run that could not start says why under it.

use h123_shared::bench::BenchResult;
use h123_shared::bench::table::{Cell, rows};
use leptos::prelude::*;

/// The comparison table of a finished bench, and under it why a run did not run.
pub fn table(result: &BenchResult) -> impl IntoView + use<> {
    let heads = result
        .runs
        .iter()
        .map(|run| {
            let p = run.protocol;
            view! { <th scope="col" class=format!("proto proto-{}", p.as_str())>{p.http_version()}</th> }
        })
        .collect_view();
    let body = rows(result)
        .into_iter()
        .map(|row| {
            let cells = row
                .cells
                .into_iter()
                .zip(&result.runs)
                .map(|(c, run)| cell(c, run.protocol.as_str()))
                .collect_view();
            view! { <tr data-metric=row.key><th scope="row">{row.label}</th>{cells}</tr> }
        })
        .collect_view();
    let failures = result
        .runs
        .iter()
        .filter_map(|run| {
            let failure = run.failure.as_ref()?;
            let words = format!(
                "{} did not run: {}",
                run.protocol.http_version(),
                failure.message
            );
            Some(view! { <p class="run-failure">{words}</p> })
        })
        .collect_view();
    view! {
        <section class="comparison bench-table" aria-labelledby="bench-table-title">
            <h2 id="bench-table-title">"Comparison"</h2>
            <p class="hint">"Per protocol over the measured window (warm-up excluded). Latency runs from the request's send (at a fixed rate, its intended send) to the last body byte; errors count in requests/s."</p>
            <div class="table-scroll">
                <table>
                    <thead><tr><th scope="col">"Figure"</th>{heads}</tr></thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
            {failures}
        </section>
    }
}

/// One cell of `protocol`'s column: its figure, "best" when it is, and its detail lines.
fn cell(cell: Cell, protocol: &'static str) -> AnyView {
    let best = cell
        .best
        .then(|| view! { <span class="gap best">"best"</span> });
    let detail = cell
        .detail
        .into_iter()
        .map(|line| view! { <span class="gap">{line}</span> })
        .collect_view();
    let inside = view! { <span class="value">{cell.text}</span>{best}{detail} };
    // Two elements, as a class from an `Option` would leave `class=""` on the others.
    match cell.best {
        true => view! { <td data-protocol=protocol class="fastest">{inside}</td> }.into_any(),
        false => view! { <td data-protocol=protocol>{inside}</td> }.into_any(),
    }
}
