//! The comparison table: per connection state, median (and p95) per phase per protocol; a leader
//! and gaps only beyond the noise; a protocol that produced nothing keeps its column and says why.
//! Drawn as markup (`shared::markup::comparison`): one element, however many cells.

use h123_shared::ProbeResult;
use h123_shared::markup::comparison::comparison;
use h123_shared::table::comparison_table;
use leptos::prelude::*;

/// The comparison table of a result.
#[component]
pub fn Comparison(
    /// The finished result.
    #[prop(into)]
    result: Signal<ProbeResult>,
) -> impl IntoView {
    view! {
        <section
            class="comparison"
            aria-labelledby="comparison-title"
            inner_html=move || result.with(|r| comparison(&comparison_table(r)))
        ></section>
    }
}
