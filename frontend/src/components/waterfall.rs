//! The waterfalls: one panel per protocol, every row on the shared axis of `shared::waterfall::layout`
//! (or, for one vantage among several, on the axis common to all of them: `layout_on`).

mod legend;
mod panel;
mod table;

use h123_shared::live::AttemptKey;
use h123_shared::waterfall::{Waterfall, layout, layout_on};
use h123_shared::{Micros, Phase, ProbeResult};
pub use legend::{Legend, PatternDefs};
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
    /// What a common axis must cover (`waterfall::fitted_span` over every vantage's result), when
    /// this is one vantage's waterfalls among several; else the axis fits this result.
    #[prop(optional)]
    span: Option<Memo<Micros>>,
    /// The vantage's name, when this is one vantage's waterfalls among several, in its group
    /// (headed `vantage-title-{name}`).
    #[prop(optional)]
    vantage: Option<String>,
) -> impl IntoView {
    let waterfall: Memo<Waterfall> = Memo::new(move |_| match span {
        Some(span) => result.with(|r| layout_on(r, span.get())),
        None => result.with(layout),
    });
    let protocols = Memo::new(move |_| result.with(|r| r.options.protocols.clone()));
    let reserve = Memo::new(move |_| result.with(|r| r.options.repeat.max(1)));
    let readout = RwSignal::new(None::<String>);
    // One vantage among several: the group's heading names the section, and the page draws
    // the legend and the fill patterns once.
    let labelled_by = match &vantage {
        None => "waterfalls-title".to_owned(),
        Some(name) => format!("vantage-title-{name}"),
    };
    let head = vantage.is_none().then(|| {
        view! {
            <div class="section-head">
                <h2 id="waterfalls-title">"Waterfalls"</h2>
                <Legend />
            </div>
            <PatternDefs />
        }
    });
    view! {
        <section class="waterfalls" aria-labelledby=labelled_by>
            {head}
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
