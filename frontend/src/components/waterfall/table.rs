//! The waterfall as a table: the text alternative to the chart, with every phase of every attempt.

use h123_shared::Phase;
use h123_shared::format::ms;
use h123_shared::waterfall::Waterfall;
use leptos::prelude::*;

/// Phases that occur in any row, in timeline order.
fn columns(waterfall: &Waterfall) -> Vec<Phase> {
    Phase::ALL
        .into_iter()
        .filter(|p| {
            waterfall
                .rows
                .iter()
                .any(|r| r.bars.iter().any(|b| b.phase == *p))
        })
        .collect()
}

/// A table of every attempt's phase durations.
#[component]
pub fn WaterfallTable(
    /// The laid-out result.
    waterfall: Memo<Waterfall>,
) -> impl IntoView {
    view! {
        <details class="wf-table">
            <summary>"Waterfall as a table"</summary>
            <div class="table-scroll">
                {move || {
                    waterfall
                        .with(|w| {
                            let phases = columns(w);
                            view! {
                                <table>
                                    <thead>
                                        <tr>
                                            <th scope="col">"Attempt"</th>
                                            {phases.iter().map(|p| view! { <th scope="col">{p.as_str()}</th> }).collect_view()}
                                            <th scope="col">"total"</th>
                                        </tr>
                                    </thead>
                                    <tbody>
                                        {w
                                            .rows
                                            .iter()
                                            .map(|row| {
                                                view! {
                                                    <tr>
                                                        <th scope="row">{row.label.clone()}</th>
                                                        {phases
                                                            .iter()
                                                            .map(|p| {
                                                                let cell = row
                                                                    .bars
                                                                    .iter()
                                                                    .find(|b| b.phase == *p)
                                                                    .map(|b| ms(b.end_us.saturating_sub(b.start_us)))
                                                                    .unwrap_or_else(|| "–".into());
                                                                view! { <td>{cell}</td> }
                                                            })
                                                            .collect_view()}
                                                        <td>{ms(row.total_us)}</td>
                                                    </tr>
                                                }
                                            })
                                            .collect_view()}
                                    </tbody>
                                </table>
                            }
                        })
                }}
            </div>
        </details>
    }
}
