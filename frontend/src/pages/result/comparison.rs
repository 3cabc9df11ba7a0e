//! The comparison table: per connection state, median (and p95) per phase per protocol; a leader
//! and gaps only beyond the noise; a protocol that produced nothing keeps its column and says why.

use h123_shared::format::ms;
use h123_shared::table::{ComparisonTable, TableCell};
use h123_shared::verdict::SIGNIFICANCE_RULE;
use leptos::prelude::*;

/// The section's content: the hint, then the table.
pub fn comparison(t: &ComparisonTable) -> impl IntoView + use<> {
    let p95 = if t.show_p95 {
        ", with the 95th percentile"
    } else {
        ""
    };
    let hint = format!(
        "Median per phase over successful attempts, new connections compared with new ones and reused with reused{p95}. \"Fastest\" and gaps appear only where the difference clears the measured noise and the floor (0.5 ms or 5% of the faster median), and a phase's also those of the whole request."
    );
    let heads = t
        .columns
        .iter()
        .map(|c| view! { <th scope="col">{c.protocol.http_version()}</th> })
        .collect_view();
    let unmeasured = t.columns.iter().any(|c| c.unmeasured.is_some()).then(|| {
        let cells = t
            .columns
            .iter()
            .map(|c| match &c.unmeasured {
                Some(why) => view! {
                    <td class="unmeasured"><a href="#findings-title">{why.clone()}</a></td>
                }
                .into_any(),
                None => view! { <td>"measured"</td> }.into_any(),
            })
            .collect_view();
        view! { <tr class="unmeasured-row"><th scope="row">"status"</th>{cells}</tr> }
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
                    let cells = row
                        .cells
                        .iter()
                        .map(|cell| cell_view(cell.as_ref(), show_p95))
                        .collect_view();
                    view! { <tr><th scope="row">{row.metric.as_str()}</th>{cells}</tr> }
                })
                .collect_view();
            view! {
                <tr class="state"><th scope="rowgroup" colspan=t.columns.len() + 1>{section.state.label()}</th></tr>
                {rows}
            }
        })
        .collect_view();
    view! {
        <h2 id="comparison-title">"Comparison"</h2>
        <p class="hint" title=SIGNIFICANCE_RULE>{hint}</p>
        <div class="table-scroll">
            <table class="protocol-table">
                <thead><tr><th scope="col">"Phase"</th>{heads}</tr></thead>
                <tbody>{unmeasured}{sections}</tbody>
            </table>
        </div>
    }
}

/// One cell: median, p95 when there are several values, and "fastest" or the gap when beyond
/// the noise.
fn cell_view(cell: Option<&TableCell>, show_p95: bool) -> AnyView {
    let Some(cell) = cell else {
        return view! { <td class="na">"–"</td> }.into_any();
    };
    let p95 = cell
        .p95
        .filter(|_| show_p95)
        .map(|p95| view! { <span class="p95">{format!("p95 {}", ms(p95))}</span> });
    let fastest = cell
        .fastest
        .then(|| view! { <span class="gap best">"fastest"</span> });
    let gap = cell
        .diff_ms
        .map(|d| view! { <span class="gap">{format!("+{d:.2} ms")}</span> });
    view! {
        <td class=cell.fastest.then_some("fastest")>
            <span class="median">{ms(cell.median)}</span>
            {p95}
            {fastest}
            {gap}
        </td>
    }
    .into_any()
}
