//! The waterfalls: one panel per protocol, every row on the shared axis of `shared::waterfall::layout`.

mod legend;
mod panel;
mod table;

use h123_shared::live::AttemptKey;
use h123_shared::waterfall::{Waterfall, layout};
use h123_shared::{Phase, ProbeResult};
use legend::{Legend, PatternDefs};
use leptos::prelude::*;
use panel::Panel;
use table::WaterfallTable;

/// Formats an axis fraction as an SVG/CSS percentage.
fn pct(fraction: f64) -> String {
    format!("{:.4}%", fraction * 100.0)
}

/// All waterfalls of a result, with legend, value readout and text alternative.
#[component]
pub fn Waterfalls(
    /// The result as far as it is known.
    #[prop(into)]
    result: Signal<ProbeResult>,
    /// Attempts still running, with their open phase.
    running: Memo<Vec<(AttemptKey, Option<Phase>)>>,
) -> impl IntoView {
    let waterfall: Memo<Waterfall> = Memo::new(move |_| result.with(layout));
    let protocols = Memo::new(move |_| result.with(|r| r.options.protocols.clone()));
    let reserve = Memo::new(move |_| result.with(|r| r.options.repeat.max(1)));
    let readout = RwSignal::new(None::<String>);
    view! {
        <section class="waterfalls" aria-labelledby="waterfalls-title">
            <div class="section-head">
                <h2 id="waterfalls-title">"Waterfalls"</h2>
                <Legend />
            </div>
            <PatternDefs />
            <div class="wf-panels">
                <For each=move || protocols.get() key=|p| *p let:protocol>
                    <Panel protocol waterfall running readout reserve />
                </For>
            </div>
            <p class="wf-readout" aria-live="polite">
                {move || {
                    readout.get().unwrap_or_else(|| "Hover or focus a bar for its exact times.".into())
                }}
            </p>
            <WaterfallTable waterfall />
        </section>
    }
}
