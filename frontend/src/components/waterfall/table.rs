//! The waterfall as a table: the text alternative to the chart, with every phase of every attempt.

use h123_shared::Phase;
use h123_shared::format::ms;
use h123_shared::markup::element;
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

/// The table's markup: a column per phase that occurs, a row per attempt.
fn markup(waterfall: &Waterfall) -> String {
    let phases = columns(waterfall);
    let mut out = String::from(r#"<table><thead><tr><th scope="col">Attempt</th>"#);
    for phase in &phases {
        element(&mut out, "th", r#" scope="col""#, phase.as_str());
    }
    out.push_str(r#"<th scope="col">total</th></tr></thead><tbody>"#);
    for row in &waterfall.rows {
        out.push_str("<tr>");
        element(&mut out, "th", r#" scope="row""#, &row.label);
        for phase in &phases {
            let cell = row
                .bars
                .iter()
                .find(|b| b.phase == *phase)
                .map(|b| ms(b.end_us.saturating_sub(b.start_us)))
                .unwrap_or_else(|| "–".into());
            element(&mut out, "td", "", &cell);
        }
        element(&mut out, "td", "", &ms(row.total_us));
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

/// A table of every attempt's phase durations, drawn as markup (one element, however many
/// attempts: far less for the page to build than a view per cell).
#[component]
pub fn WaterfallTable(
    /// The laid-out result.
    waterfall: Memo<Waterfall>,
) -> impl IntoView {
    view! {
        <details class="wf-table">
            <summary>"Waterfall as a table"</summary>
            <div class="table-scroll" inner_html=move || waterfall.with(markup)></div>
        </details>
    }
}
