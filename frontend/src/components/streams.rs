//! Requests at once (`streams`): per protocol a bar per request on one
//! time axis, its wait then its transfer, so where HTTP/2's streams wait
//! for each other and HTTP/3's do not is seen, not read; the figures as a
//! table. Drawn once as markup, when the probe is done.

use h123_shared::ProbeResult;
use h123_shared::markup::streams::streams;
use leptos::prelude::*;

/// The requests-at-once chart; nothing for a probe that asked for none.
#[component]
pub fn StreamsChart(
    /// The finished result.
    result: Signal<ProbeResult>,
) -> impl IntoView {
    move || {
        let markup = result.with(streams)?;
        Some(view! {
            <section class="streams" aria-labelledby="streams-title" inner_html=markup></section>
        })
    }
}
