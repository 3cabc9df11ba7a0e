//! A form's request to the API: one at a time (the form `aria-busy`, its button saying
//! "Starting…"), what it answered handed on, a refusal shown right after the form and named in
//! the title.

use crate::api::Result;
use crate::components;
use crate::result_page::set_title;
use std::future::Future;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::spawn_local;
use web_sys::{Element, HtmlButtonElement};

/// The submit button's own label on `form` (the probe form's or the load comparison's).
fn label(form: &Element) -> &'static str {
    if form.class_list().contains("bench-form") {
        "Compare"
    } else {
        "Measure"
    }
}

/// Sets `form`'s submit button busy or not.
fn button(form: &Element, busy: bool) {
    let Some(button) = form
        .query_selector("button[type=submit]")
        .ok()
        .flatten()
        .and_then(|b| b.dyn_into::<HtmlButtonElement>().ok())
    else {
        return;
    };
    button.set_disabled(busy);
    button.set_text_content(Some(if busy { "Starting…" } else { label(form) }));
}

/// Puts `form` back to taking a submit (as the loader's hold-back left it, say).
pub fn idle(form: &Element) {
    let _ = form.remove_attribute("aria-busy");
    button(form, false);
}

/// Sends `request` from `form` unless one is pending; calls `then` with its answer, or shows its
/// refusal after the form (`bench`: it answered a bench request) and lets the form submit again.
pub fn send<T: 'static>(
    form: &Element,
    bench: bool,
    request: impl Future<Output = Result<T>> + 'static,
    then: impl FnOnce(T) + 'static,
) {
    if form.get_attribute("aria-busy").as_deref() == Some("true") {
        return;
    }
    let _ = form.set_attribute("aria-busy", "true");
    button(form, true);
    if let Some(refusal) = form
        .next_element_sibling()
        .filter(|e| e.class_list().contains("refusal"))
    {
        refusal.remove();
    }
    let form = form.clone();
    spawn_local(async move {
        match request.await {
            // The form stays busy while the page moves on.
            Ok(answer) => then(answer),
            Err(error) => {
                let html = components::problem_markup(&error, bench);
                let _ = form.insert_adjacent_html(
                    "afterend",
                    &format!(r#"<div class="refusal">{html}</div>"#),
                );
                if let Some(document) = form.owner_document() {
                    let title = form
                        .next_element_sibling()
                        .and_then(|r| r.query_selector(".problem h1").ok().flatten())
                        .and_then(|h| h.text_content());
                    set_title(&document, title.as_deref());
                }
                idle(&form);
            }
        }
    });
}
