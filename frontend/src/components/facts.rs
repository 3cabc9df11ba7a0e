//! Connection, transport (TCP_INFO, QUIC path) and TLS facts per protocol,
//! and what happened with HTTP/3.

use h123_shared::ProbeResult;
use h123_shared::markup::facts::facts;
use leptos::prelude::*;

/// Connection, TLS and HTTP/3 facts of a result, drawn as markup (one element for the page to
/// draw, not two views a fact).
#[component]
pub fn Facts(
    /// The finished result.
    #[prop(into)]
    result: Signal<ProbeResult>,
) -> impl IntoView {
    view! {
        <section
            class="facts-section"
            aria-labelledby="facts-title"
            inner_html=move || result.with(facts)
        ></section>
    }
}
