//! Taking over a form the server drew (the home page's, `shared::markup::home`): what the
//! visitor typed, ticked, opened and focused before the wasm arrived is read from the drawn
//! form, and put into the app's own form once it is mounted, through the same `input` and
//! `change` events typing makes, so the app's state follows. A submit made before the wasm
//! arrived (`index.html`'s loader holds it back and marks it) is made again on the app's form.

use std::cell::Cell;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, HtmlElement, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};

thread_local! {
    /// What the drawn form said the server offers: (network conditions, public addresses only).
    static OFFER: Cell<Option<(bool, bool)>> = const { Cell::new(None) };
}

/// What the server that drew the form offers (network conditions, public addresses only), when
/// a drawn form was taken over: the app's form starts as drawn instead of waiting for the API.
pub fn drawn_offer() -> Option<(bool, bool)> {
    OFFER.with(Cell::get)
}

/// One control's state, keyed by its id, or its name and place among those of that name.
struct Control {
    key: String,
    value: String,
    checked: bool,
}

/// The drawn form's state, to be put into the app's.
pub struct Drawn {
    controls: Vec<Control>,
    advanced_open: bool,
    focused: Option<(String, Option<u32>, Option<u32>)>,
    scroll: f64,
}

/// The form's controls, each with its key.
fn controls(form: &Element) -> Vec<(String, Element)> {
    let mut out: Vec<(String, Element)> = Vec::new();
    let Ok(list) = form.query_selector_all("input, select, textarea") else {
        return out;
    };
    for i in 0..list.length() {
        let Some(el) = list.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else {
            continue;
        };
        let key = match el.id() {
            id if !id.is_empty() => id,
            _ => {
                let name = el.get_attribute("name").unwrap_or_default();
                let prefix = format!("{name}#");
                let nth = out.iter().filter(|(k, _)| k.starts_with(&prefix)).count();
                format!("{prefix}{nth}")
            }
        };
        out.push((key, el));
    }
    out
}

fn value_of(el: &Element) -> (String, bool) {
    if let Some(input) = el.dyn_ref::<HtmlInputElement>() {
        (input.value(), input.checked())
    } else if let Some(select) = el.dyn_ref::<HtmlSelectElement>() {
        (select.value(), false)
    } else if let Some(area) = el.dyn_ref::<HtmlTextAreaElement>() {
        (area.value(), false)
    } else {
        (String::new(), false)
    }
}

/// Reads the drawn form `form` (in the shell about to be removed).
pub fn capture(form: &Element) -> Drawn {
    let offer = |name| form.get_attribute(name).as_deref() == Some("true");
    OFFER.with(|o| o.set(Some((offer("data-network"), offer("data-public-only")))));
    let keyed = controls(form);
    let active = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.active_element());
    let focused = active.and_then(|active| {
        let (key, el) = keyed.iter().find(|(_, el)| *el == active)?;
        let (start, end) = match el.dyn_ref::<HtmlInputElement>() {
            Some(input) => (
                input.selection_start().ok().flatten(),
                input.selection_end().ok().flatten(),
            ),
            None => match el.dyn_ref::<HtmlTextAreaElement>() {
                Some(area) => (
                    area.selection_start().ok().flatten(),
                    area.selection_end().ok().flatten(),
                ),
                None => (None, None),
            },
        };
        Some((key.clone(), start, end))
    });
    let controls = keyed
        .iter()
        .map(|(key, el)| {
            let (value, checked) = value_of(el);
            Control {
                key: key.clone(),
                value,
                checked,
            }
        })
        .collect();
    let advanced_open = form
        .query_selector("details.advanced")
        .ok()
        .flatten()
        .is_some_and(|d| d.has_attribute("open"));
    let scroll = web_sys::window()
        .and_then(|w| w.scroll_y().ok())
        .unwrap_or(0.0);
    Drawn {
        controls,
        advanced_open,
        focused,
        scroll,
    }
}

/// Sends `kind` (bubbling) to `el`, as typing or clicking would.
fn fire(el: &Element, kind: &str) {
    let init = web_sys::EventInit::new();
    init.set_bubbles(true);
    if let Ok(event) = web_sys::Event::new_with_event_init_dict(kind, &init) {
        let _ = el.dispatch_event(&event);
    }
}

/// Puts `drawn` into the app's form `form`, then makes a submit held back before the wasm came.
pub fn restore(drawn: &Drawn, form: &Element) {
    if drawn.advanced_open
        && let Ok(Some(details)) = form.query_selector("details.advanced")
    {
        let _ = details.set_attribute("open", "");
    }
    let keyed = controls(form);
    for (key, el) in &keyed {
        let Some(was) = drawn.controls.iter().find(|c| c.key == *key) else {
            continue;
        };
        let (value, checked) = value_of(el);
        if let Some(input) = el.dyn_ref::<HtmlInputElement>()
            && matches!(input.type_().as_str(), "checkbox" | "radio")
        {
            if checked != was.checked {
                input.set_checked(was.checked);
                fire(el, "change");
            }
        } else if value != was.value {
            if let Some(input) = el.dyn_ref::<HtmlInputElement>() {
                input.set_value(&was.value);
            } else if let Some(select) = el.dyn_ref::<HtmlSelectElement>() {
                select.set_value(&was.value);
            } else if let Some(area) = el.dyn_ref::<HtmlTextAreaElement>() {
                area.set_value(&was.value);
            }
            fire(el, "input");
            fire(el, "change");
        }
    }
    if let Some(window) = web_sys::window() {
        window.scroll_to_with_x_and_y(0.0, drawn.scroll);
    }
    if let Some((key, start, end)) = &drawn.focused
        && let Some((_, el)) = keyed.iter().find(|(k, _)| k == key)
    {
        if let Some(el) = el.dyn_ref::<HtmlElement>() {
            let _ = el.focus();
        }
        if let (Some(start), Some(end)) = (start, end) {
            if let Some(input) = el.dyn_ref::<HtmlInputElement>() {
                let _ = input.set_selection_range(*start, *end);
            } else if let Some(area) = el.dyn_ref::<HtmlTextAreaElement>() {
                let _ = area.set_selection_range(*start, *end);
            }
        }
    }
    // The loader's mark: the drawn form was submitted before the app could take it.
    let Some(window) = web_sys::window() else {
        return;
    };
    let key = JsValue::from_str("h123PendingSubmit");
    if js_sys::Reflect::get(&window, &key).is_ok_and(|v| v.is_truthy()) {
        let _ = js_sys::Reflect::delete_property(&window, &key);
        if let Some(form) = form.dyn_ref::<web_sys::HtmlFormElement>() {
            let _ = form.request_submit();
        }
    }
}
