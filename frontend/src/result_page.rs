//! `/r/{id}` without a view tree: the server draws the result (the Leptos component
//! `pages::result`, into the page itself and as the probe's live view), and this only gives it
//! behaviour. It adopts the drawn result (or fetches it, when a static host served the page),
//! follows a running probe's view stream, and answers the page's clicks, keys and pointer from
//! the document: hover and focus times, the keyboard path, copy, run again, compare with, and the
//! browser's measurement.

pub(crate) mod actions;
mod offer;
mod stream;
mod ticker;

use crate::chart::{self, axis};
use crate::components::to_local_time;
use crate::{api, components, navigate, perf};

use h123_shared::route::Route;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::spawn_local;
use web_sys::{Document, Element};

/// Starts the page: the handlers on the document, then the result, drawn or fetched.
pub fn start() {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Ok(Some(loading)) = document.query_selector("#shell .loading") {
        loading.remove();
    }
    let Route::Result(id) = navigate::current() else {
        return;
    };
    listen(&document);
    match document.get_element_by_id("result") {
        Some(result) => {
            adopt(&document, &result);
            follow_if_running(&result);
        }
        None => spawn_local(async move { fetch(&id).await }),
    }
}

/// Fetches the result's view and shows it, or the problem page when there is none.
async fn fetch(id: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let html = match api::view(id).await {
        Ok(html) => html,
        Err(error) => components::problem_markup(&error, false),
    };
    match document.get_element_by_id("result") {
        Some(result) => result.set_outer_html(&html),
        None => {
            if let Ok(Some(main)) = document.query_selector("#shell main") {
                main.set_inner_html(&html);
            }
        }
    }
    match document.get_element_by_id("result") {
        Some(result) => {
            adopt(&document, &result);
            follow_if_running(&result);
        }
        None => set_title(&document, problem_title(&document).as_deref()),
    }
}

/// Follows the result's live view while its probe runs.
fn follow_if_running(result: &Element) {
    if is_running(result) {
        stream::follow(&result.get_attribute("data-id").unwrap_or_default());
    }
}

/// Whether the drawn result is of a probe still running.
fn is_running(result: &Element) -> bool {
    result.get_attribute("data-status").as_deref() == Some("running")
}

/// Makes the drawn result `result` the page's: its title, times and axes, its API links, the
/// clock of its running phases, and once finished, the browser's offer.
fn adopt(document: &Document, result: &Element) {
    set_title(document, result.get_attribute("data-title").as_deref());
    local_times(result);
    axis::fit_labels(document);
    actions::complete_links(document, result);
    ticker::drawn(result, is_running(result));
    if !is_running(result) {
        perf::mark_result_then_paint();
        offer::show(result, &result.get_attribute("data-id").unwrap_or_default());
    }
}

/// What can hold the keyboard in a drawn result, in document order.
const FOCUSABLE: &str = "a[href], button, input, summary, [tabindex]";

/// Puts a fresh drawing of the result (from its live view) in place of the page's, and adopts
/// it; what had the keyboard (a bar, a button) has it again in the new drawing.
fn replace(html: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Some(old) = document.get_element_by_id("result") else {
        return;
    };
    let focused = focused_index(&document, &old);
    old.set_outer_html(html);
    if let Some(result) = document.get_element_by_id("result") {
        adopt(&document, &result);
        if let Some(i) = focused {
            focus_nth(&result, i);
        }
    }
}

/// Where among `result`'s focusable elements the keyboard is, if it is in there.
pub(crate) fn focused_index(document: &Document, result: &Element) -> Option<usize> {
    let active = wasm_bindgen::JsValue::from(document.active_element()?);
    let all = result.query_selector_all(FOCUSABLE).ok()?;
    (0..all.length())
        .find(|i| all.item(*i).map(wasm_bindgen::JsValue::from).as_ref() == Some(&active))
        .map(|i| i as usize)
}

/// Puts the keyboard on `result`'s `i`-th focusable element (an HTML one, or a bar's SVG group).
pub(crate) fn focus_nth(result: &Element, i: usize) {
    let Some(target) = result
        .query_selector_all(FOCUSABLE)
        .ok()
        .and_then(|all| all.item(i as u32))
    else {
        return;
    };
    let _ = match target.dyn_ref::<web_sys::HtmlElement>() {
        Some(html) => html.focus(),
        None => target
            .dyn_ref::<web_sys::SvgElement>()
            .map_or(Ok(()), web_sys::SvgElement::focus),
    };
}

/// Sets `document.title` to `page`, followed by the app's name.
pub(crate) fn set_title(document: &Document, page: Option<&str>) {
    if let Some(page) = page {
        document.set_title(&format!("{page} · h123"));
    }
}

/// The problem page's heading, for the title.
pub(crate) fn problem_title(document: &Document) -> Option<String> {
    document.query_selector(".problem h1").ok()??.text_content()
}

/// Writes every `<time data-unix-ms>` in `root` on the reader's clock.
pub(crate) fn local_times(root: &Element) {
    let Ok(times) = root.query_selector_all("time[data-unix-ms]") else {
        return;
    };
    for i in 0..times.length() {
        if let Some(time) = times.item(i).and_then(|t| t.dyn_into::<Element>().ok()) {
            to_local_time(&time);
        }
    }
}

/// The page's handlers, on the document (so a fresh drawing needs none of its own): the
/// waterfalls' ([`chart::listen`]), the actions' and the compare field's.
fn listen(document: &Document) {
    chart::listen(document);
    chart::on(document, "click", |ev| {
        if let Some(button) = chart::within(&ev, "[data-action]") {
            actions::act(&button);
        }
    });
    chart::on(document, "submit", |ev| {
        if let Some(form) = chart::within(&ev, "form.compare-with") {
            ev.prevent_default();
            actions::compare_with(&form);
        }
    });
}
