//! The diagnosis: findings most severe first, each with its evidence and next step. Drawn as
//! markup (`shared::markup::findings`): one element, however many findings.

use h123_shared::ProbeResult;
use h123_shared::markup::findings::findings;
use leptos::prelude::*;

/// All findings of a result, from the server's analysis (attached to every finished record).
#[component]
pub fn Findings(
    /// The finished result.
    #[prop(into)]
    result: Signal<ProbeResult>,
) -> impl IntoView {
    view! {
        <section
            class="findings"
            aria-labelledby="findings-title"
            inner_html=move || result.with(|r| findings(r.analysis.as_ref()))
        ></section>
    }
}
