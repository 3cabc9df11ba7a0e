//! The waterfall as a table: the text alternative to the chart, with every phase of every attempt.

use h123_shared::markup::waterfall::table;
use h123_shared::waterfall::Waterfall;
use leptos::prelude::*;

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
            <div class="table-scroll" inner_html=move || waterfall.with(table)></div>
        </details>
    }
}
