//! The waterfalls' behaviour in the DOM, whoever drew them (the server, or a page as markup):
//! exact times on hover and focus, the keyboard path through the bars, and axis labels that fit
//! the axis's width. It listens on the document, so a fresh drawing needs no handlers of its own.

pub mod axis;
pub mod keys;
pub mod tooltip;

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{Document, Element, Event, EventTarget, KeyboardEvent};

/// Gives every waterfall of the page its behaviour, for the page's life.
pub fn listen(document: &Document) {
    on(document, "mouseover", |ev| tooltip::point(&ev));
    on(document, "focusin", |ev| tooltip::point(&ev));
    on(document, "mouseout", |ev| tooltip::leave(&ev));
    on(document, "focusout", |ev| tooltip::leave(&ev));
    on(document, "keydown", |ev| {
        if let (Some(chart), Some(key)) = (within(&ev, ".wf-panels"), ev.dyn_ref::<KeyboardEvent>())
        {
            keys::rove(&chart, key);
        }
    });
    on(document, "click", |ev| {
        if let Some(link) = within(&ev, ".waterfalls .skip-link") {
            ev.prevent_default();
            keys::skip_to_table(&link);
        }
    });
    if let Some(window) = web_sys::window() {
        on(&window, "resize", |_| {
            if let Some(document) = web_sys::window().and_then(|w| w.document()) {
                axis::fit_labels(&document);
            }
        });
    }
}

/// Calls `handle` with every `name` event on `target`, for the page's life.
pub fn on(target: &EventTarget, name: &str, handle: fn(Event)) {
    let listener = Closure::<dyn FnMut(Event)>::new(handle);
    let _ = target.add_event_listener_with_callback(name, listener.as_ref().unchecked_ref());
    listener.forget();
}

/// The element matching `selector` that `ev` happened in, if any.
pub fn within(ev: &Event, selector: &str) -> Option<Element> {
    ev.target()?
        .dyn_into::<Element>()
        .ok()?
        .closest(selector)
        .ok()?
}
