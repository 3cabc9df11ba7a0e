//! The comparison table: per connection state, median (and p95) per phase per protocol; a leader
//! and gaps only beyond the noise; a protocol that produced nothing keeps its column and says why.

use h123_shared::ProbeResult;
use h123_shared::format::ms;
use h123_shared::table::{TableCell, comparison_table};
use h123_shared::verdict::SIGNIFICANCE_RULE;
use leptos::prelude::*;

/// One cell: median, p95 when there are several values, and "fastest" or the gap when beyond the noise.
#[component]
fn Cell(cell: Option<TableCell>, show_p95: bool) -> impl IntoView {
    let Some(cell) = cell else {
        return view! { <td class="na">"–"</td> }.into_any();
    };
    view! {
        <td class:fastest=cell.fastest>
            <span class="median">{ms(cell.median)}</span>
            {(show_p95 && cell.p95.is_some())
                .then(|| view! { <span class="p95">{format!("p95 {}", ms(cell.p95.unwrap_or_default()))}</span> })}
            {cell.fastest.then(|| view! { <span class="gap best">"fastest"</span> })}
            {cell.diff_ms.map(|d| view! { <span class="gap">{format!("+{d:.2} ms")}</span> })}
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
    let width = move || table.with(|t| t.columns.len() + 1);
    view! {
        <section class="comparison" aria-labelledby="comparison-title">
            <h2 id="comparison-title">"Comparison"</h2>
            <p class="hint" title=SIGNIFICANCE_RULE>
                "Median per phase over successful attempts, new connections compared with new ones and reused with reused"
                {move || table.with(|t| t.show_p95).then_some(", with the 95th percentile")}
                ". \"Fastest\" and gaps appear only where the difference is beyond the measured noise."
            </p>
            <div class="table-scroll">
                <table>
                    <thead>
                        <tr>
                            <th scope="col">"Phase"</th>
                            {move || {
                                table
                                    .with(|t| {
                                        t.columns
                                            .iter()
                                            .map(|c| view! { <th scope="col">{c.protocol.http_version()}</th> })
                                            .collect_view()
                                    })
                            }}
                        </tr>
                    </thead>
                    <tbody>
                        {move || {
                            table
                                .with(|t| {
                                    let unmeasured = t
                                        .columns
                                        .iter()
                                        .any(|c| c.unmeasured.is_some())
                                        .then(|| {
                                            view! {
                                                <tr class="unmeasured-row">
                                                    <th scope="row">"status"</th>
                                                    {t
                                                        .columns
                                                        .iter()
                                                        .map(|c| match &c.unmeasured {
                                                            Some(why) => {
                                                                view! {
                                                                    <td class="unmeasured">
                                                                        <a href="#findings-title">{why.clone()}</a>
                                                                    </td>
                                                                }
                                                                    .into_any()
                                                            }
                                                            None => view! { <td>"measured"</td> }.into_any(),
                                                        })
                                                        .collect_view()}
                                                </tr>
                                            }
                                        });
                                    let show_p95 = t.show_p95;
                                    let sections = t
                                        .sections
                                        .iter()
                                        .map(|section| {
                                            let rows = section
                                                .rows
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
                                                .collect_view();
                                            view! {
                                                <tr class="state">
                                                    <th scope="rowgroup" colspan=width()>
                                                        {section.state.label()}
                                                    </th>
                                                </tr>
                                                {rows}
                                            }
                                        })
                                        .collect_view();
                                    view! {
                                        {unmeasured}
                                        {sections}
                                    }
                                })
                        }}
                    </tbody>
                </table>
            </div>
        </section>
    }
}
