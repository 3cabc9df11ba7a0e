//! The waterfalls: one panel per protocol, every row on the shared axis of `shared::waterfall::layout`
//! (or, for one vantage among several, on the axis common to all of them: `layout_on`).

mod keys;
mod legend;
mod table;
mod tooltip;

use h123_shared::live::AttemptKey;
use h123_shared::markup::waterfall::Panels;
use h123_shared::waterfall::{Waterfall, layout, layout_on};
use h123_shared::{Micros, Phase, ProbeResult};
pub use legend::{Legend, PatternDefs};
use leptos::prelude::*;
use table::WaterfallTable;

/// The width in pixels of the waterfalls' time axis (every panel's is the same), measured after
/// the first frame and again on every resize, for the axis labels that fit it.
pub(super) fn axis_width() -> RwSignal<u32> {
    let axis_px = RwSignal::new(0u32);
    let measure = move || {
        if let Ok(Some(ticks)) = document().query_selector(".wf-ticks") {
            axis_px.set(ticks.client_width().max(0) as u32);
        }
    };
    request_animation_frame(measure);
    let resized = window_event_listener(leptos::ev::resize, move |_| measure());
    on_cleanup(move || resized.remove());
    axis_px
}

/// All waterfalls of a result, with legend, value readout and text alternative.
#[component]
pub fn Waterfalls(
    /// The result as far as it is known.
    #[prop(into)]
    result: Signal<ProbeResult>,
    /// Attempts still running, with their open phase.
    running: Memo<Vec<(AttemptKey, Option<Phase>)>>,
    /// What a common axis must cover (`waterfall::fitted_span` over every vantage's result, and
    /// the browser's measurement), when other rows share the axis; else it fits this result.
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
    let axis_px = axis_width();
    let panels = move || {
        let (protocols, reserve) = result.with(|r| (r.options.protocols.clone(), r.options.repeat));
        let axis_px = axis_px.get();
        running.with(|running| {
            let panels = Panels {
                protocols: &protocols,
                running,
                reserve: reserve.max(1),
                axis_px,
            };
            waterfall.with(|w| panels.markup(w))
        })
    };
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
            <a class="skip-link" href="#" on:click=move |ev| keys::skip_to_table(&ev)>
                "Skip the chart to its table"
            </a>
            <div
                class="wf-panels"
                on:keydown=move |ev| keys::rove(&ev)
                on:mouseover=move |ev| tooltip::point(&ev)
                on:focusin=move |ev| tooltip::point(&ev)
                on:mouseout=move |ev| tooltip::leave(&ev)
                on:focusout=move |ev| tooltip::leave(&ev)
                inner_html=panels
            ></div>
            <p class="wf-tooltip" aria-hidden="true" hidden></p>
            <p class="wf-readout" aria-live="polite">{tooltip::HINT}</p>
            <WaterfallTable waterfall />
        </section>
    }
}
