//! The comparison table: median (and p95) per phase per protocol, the fastest marked, the gaps in ms and %.

use h123_shared::ProbeResult;
use h123_shared::format::ms;
use h123_shared::table::{TableCell, comparison_table};
use leptos::prelude::*;

/// The gap to the fastest, e.g. `+1.20 ms (+34%)`.
fn gap(cell: &TableCell) -> String {
    let percent = cell
        .diff_percent
        .map(|p| format!(" (+{p:.0}%)"))
        .unwrap_or_default();
    format!("+{:.2} ms{percent}", cell.diff_ms)
}

/// One cell: median, p95 when there are several values, and fastest or gap.
#[component]
fn Cell(cell: Option<TableCell>, show_p95: bool) -> impl IntoView {
    let Some(cell) = cell else {
        return view! { <td class="na">"–"</td> }.into_any();
    };
    let several = cell.diff_ms > 0.0 || cell.fastest;
    view! {
        <td class:fastest=cell.fastest>
            <span class="median">{ms(cell.median)}</span>
            {(show_p95 && cell.p95.is_some())
                .then(|| view! { <span class="p95">{format!("p95 {}", ms(cell.p95.unwrap_or_default()))}</span> })}
            {several
                .then(|| {
                    if cell.fastest {
                        view! { <span class="gap best">"fastest"</span> }.into_any()
                    } else {
                        view! { <span class="gap">{gap(&cell)}</span> }.into_any()
                    }
                })}
        </td>
    }
    .into_any()
}

/// The comparison table of a result.
#[component]
pub fn Comparison(
    /// The finished result.
    #[prop(into)]
    result: Signal<ProbeResult>,
) -> impl IntoView {
    let table = Memo::new(move |_| result.with(comparison_table));
    view! {
        <section class="comparison" aria-labelledby="comparison-title">
            <h2 id="comparison-title">"Comparison"</h2>
            <p class="hint">
                "Median per phase over successful attempts"
                {move || table.with(|t| t.show_p95).then_some(", with the 95th percentile")}
                ". Differences are to the fastest protocol; on a fast path they are often smaller than the server's own time."
            </p>
            <div class="table-scroll">
                <table>
                    <thead>
                        <tr>
                            <th scope="col">"Phase"</th>
                            {move || {
                                table
                                    .with(|t| {
                                        t.protocols
                                            .iter()
                                            .map(|p| view! { <th scope="col">{p.http_version()}</th> })
                                            .collect_view()
                                    })
                            }}
                        </tr>
                    </thead>
                    <tbody>
                        {move || {
                            table
                                .with(|t| {
                                    let show_p95 = t.show_p95;
                                    t.rows
                                        .iter()
                                        .map(|row| {
                                            view! {
                                                <tr>
                                                    <th scope="row">{row.metric.as_str()}</th>
                                                    {row
                                                        .cells
                                                        .iter()
                                                        .map(|cell| view! { <Cell cell=cell.clone() show_p95 /> })
                                                        .collect_view()}
                                                </tr>
                                            }
                                        })
                                        .collect_view()
                                })
                        }}
                    </tbody>
                </table>
            </div>
        </section>
    }
}
