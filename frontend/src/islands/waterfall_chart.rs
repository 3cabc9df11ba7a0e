//! The waterfalls' behaviour: exact times on hover and focus, the keyboard path through the bars,
//! the skip link to the table, and axis labels that fit the axis's width.

use crate::chart::{axis, keys, tooltip, within};
use h123_shared::waterfall::HINT;
use leptos::ev;
use leptos::prelude::*;
use web_sys::Event;

/// Around a section's chart (its skip link and panels, drawn by the server as `children`): the
/// tooltip and the readout (a polite live region) as signals, and the handlers. The bars stay
/// the server's drawing (shipping their data would cost the bundle a record reader), so the
/// handlers find the bar an event happened in by its class.
#[island]
pub fn WaterfallChart(
    /// The skip link and the panels, as the server drew them.
    children: Children,
) -> impl IntoView {
    let root = NodeRef::<leptos::html::Div>::new();
    let tip = RwSignal::new(None::<tooltip::Tip>);
    let point = move |ev: Event| {
        if let Some((bar, section)) = tooltip::bar_and_section(&ev) {
            tip.set(Some(tooltip::place(&bar, &section)));
        }
    };
    let leave = move |ev: Event| {
        if tooltip::bar_and_section(&ev).is_some() {
            tip.set(None);
        }
    };
    let fit = move || {
        if let Some(root) = root.get_untracked() {
            axis::fit_within(&root);
        }
    };
    // Effects run only in the browser: fitted once hydrated, then on every resize (for the
    // page's life: the island is never taken down).
    Effect::new(move || {
        if root.get().is_some() {
            fit();
            let _ = window_event_listener(ev::resize, move |_| fit());
        }
    });
    let keydown = move |ev: ev::KeyboardEvent| {
        if let Some(panels) = within(&ev, ".wf-panels") {
            keys::rove(&panels, &ev);
        }
    };
    let click = move |ev: ev::MouseEvent| {
        if let Some(link) = within(&ev, ".skip-link") {
            ev.prevent_default();
            keys::skip_to_table(&link);
        }
    };
    view! {
        <div
            class="wf-chart"
            node_ref=root
            on:mouseover=move |ev| point(ev.into())
            on:focusin=move |ev| point(ev.into())
            on:mouseout=move |ev| leave(ev.into())
            on:focusout=move |ev| leave(ev.into())
            on:keydown=keydown
            on:click=click
        >
            {children()}
            <p
                class="wf-tooltip"
                aria-hidden="true"
                hidden=move || tip.with(Option::is_none)
                style=move || tip.with(|t| t.as_ref().map(tooltip::Tip::style))
            >
                {move || tip.with(|t| t.as_ref().map(|t| t.text.clone()))}
            </p>
            <p class="wf-readout" aria-live="polite">
                {move || tip.with(|t| t.as_ref().map_or_else(|| HINT.to_owned(), |t| t.text.clone()))}
            </p>
        </div>
    }
}
