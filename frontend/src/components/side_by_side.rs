//! Two results' verdicts and waterfalls, A above B, every waterfall on one time axis so a bar in
//! one compares honestly with the same bar in the other.

use crate::components::VerdictPanel;
use crate::components::waterfall::{Legend, PatternDefs, Waterfalls};
use h123_shared::api::ProbeRecord;
use h123_shared::waterfall::fitted_span;
use leptos::prelude::*;

/// Both results, on the axis common to them.
#[component]
pub fn SideBySide(
    /// The first result's record.
    a: ProbeRecord,
    /// The second result's record.
    b: ProbeRecord,
) -> impl IntoView {
    let span = Memo::new({
        let both = [a.result.clone(), b.result.clone()];
        move |_| fitted_span(&both)
    });
    view! {
        <section class="vantage-groups" aria-labelledby="sides-title">
            <div class="section-head">
                <h2 id="sides-title">"Both results, on one time axis"</h2>
                <Legend />
            </div>
            <PatternDefs />
            {side("a", a, span)}
            {side("b", b, span)}
        </section>
    }
}

/// One side's group: its heading, verdict and waterfalls.
fn side(name: &'static str, record: ProbeRecord, span: Memo<h123_shared::Micros>) -> impl IntoView {
    let letter = name.to_ascii_uppercase();
    let result = Signal::stored(record.result);
    let running = Memo::new(|_| Vec::new());
    view! {
        <section class="vantage-group" data-side=name aria-labelledby=format!("vantage-title-{name}")>
            <h2 id=format!("vantage-title-{name}")>
                {format!("{letter}: {}", record.options.url)}
            </h2>
            <VerdictPanel result vantage=name.to_owned() />
            <Waterfalls result running span vantage=name.to_owned() />
        </section>
    }
}
