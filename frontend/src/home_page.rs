//! `/` without a view tree (the `h123-home` bundle, no Leptos): the server draws the home page
//! (the Leptos component `pages::home`: the probe form, the load comparison form when it runs
//! benches, the recent results' frame) into the page itself, and this gives the drawn forms their
//! behaviour in place, so what was typed before the wasm arrived stays where it was; a submit the
//! loader held back meanwhile (`window.h123PendingSubmit`) is made once the forms are adopted.
//! When a static host served the page (nothing drawn), it fetches the forms as the server draws
//! them (`GET /api/v1/config/view`), or says why it cannot. Every other path gets the "not found"
//! page.

mod bench_form;
mod field;
mod network;
mod probe_form;
mod recent;
mod submission;
mod vantages;

use crate::pages::not_found;
use crate::result_page::{actions, problem_title, set_title};
use crate::{api, chart, components, navigate, perf};
use h123_shared::route::Route;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::spawn_local;
use web_sys::{Document, Element, Event, HtmlElement, HtmlFormElement};

/// Starts the page: the home page, drawn or fetched, or "not found".
pub fn start() {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if navigate::current() != Route::Home {
        not_found(&document);
        return;
    }
    if document
        .query_selector("form.probe-form")
        .ok()
        .flatten()
        .is_some()
    {
        adopt(&document);
    } else {
        spawn_local(draw());
    }
}

/// Says there is no page at this address, where a static host served the page (`h123 serve`
/// renders the Leptos page, [`crate::pages::not_found`], and loads no bundle).
fn not_found(document: &Document) {
    if let Ok(Some(main)) = document.query_selector("#shell main") {
        main.set_inner_html(&components::problem_section(
            not_found::TITLE,
            not_found::WHAT,
            not_found::NEXT,
            None,
        ));
    }
    set_title(document, Some(not_found::TITLE));
    actions::api_links(document);
    perf::mark(perf::APP);
}

/// Puts the home page as the server draws it in place of the loading line, then adopts it; or,
/// when the server does not answer, the problem page saying why.
async fn draw() {
    let (html, drawn) = match api::home_view().await {
        Ok(html) => (html, true),
        Err(error) => (components::problem_markup(&error, false), false),
    };
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    match document.query_selector("#shell .loading") {
        Ok(Some(loading)) => loading.set_outer_html(&html),
        _ => {
            if let Ok(Some(main)) = document.query_selector("#shell main") {
                let _ = main.insert_adjacent_html("beforeend", &html);
            }
        }
    }
    if drawn {
        adopt(&document);
    } else {
        set_title(&document, problem_title(&document).as_deref());
        actions::api_links(&document);
    }
}

/// Makes the drawn home page the page's: its title, its forms' handlers and notes, the keyboard
/// on the URL field, the vantages and the recent results; then a submit held back meanwhile.
fn adopt(document: &Document) {
    set_title(document, Some("HTTP timing waterfalls"));
    chart::on(document, "input", |ev| edited(&ev, true));
    chart::on(document, "change", |ev| edited(&ev, false));
    chart::on(document, "paste", |ev| {
        if chart::within(&ev, "form.probe-form #url").is_some() {
            probe_form::paste(&ev);
        }
    });
    chart::on(document, "focusout", |ev| {
        if let Some(field) = chart::within(&ev, "#url, #bench-url") {
            left(&field);
        }
    });
    chart::on(document, "submit", |ev| {
        if let Some(form) = chart::within(&ev, "form.probe-form") {
            ev.prevent_default();
            probe_form::submit(&form);
        } else if let Some(form) = chart::within(&ev, "form.bench-form") {
            ev.prevent_default();
            bench_form::submit(&form);
        }
    });
    let forms = document.document_element().map_or_else(Vec::new, |root| {
        field::all(&root, "form.probe-form, form.bench-form")
    });
    for form in forms {
        // The loader holds back submits of the drawn forms only until now.
        let _ = form.remove_attribute("data-drawn");
        refresh(&form);
    }
    if let Some(probe) = document.query_selector("form.probe-form").ok().flatten() {
        vantages::offer(probe);
    }
    recent::fill();
    focus_url(document);
    actions::api_links(document);
    perf::mark(perf::APP);
    pending_submit();
}

/// Brings the notes of `form` (the probe form or the load comparison form) up to date.
fn refresh(form: &Element) {
    if form.class_list().contains("probe-form") {
        probe_form::refresh(form);
    } else {
        bench_form::refresh(form);
    }
}

/// A field of a form changed (`typing`: as it is typed, else once changed): what it changes,
/// then the form's notes.
fn edited(ev: &Event, typing: bool) {
    let Some(target) = ev.target().and_then(|t| t.dyn_into::<Element>().ok()) else {
        return;
    };
    let Some(form) = chart::within(ev, "form.probe-form, form.bench-form") else {
        return;
    };
    match target.id().as_str() {
        "url" | "bench-url" if typing => {
            let _ = target.set_attribute("data-typed", "");
            probe_form::typed(&target);
        }
        "network" | "bench-network" if !typing => network::chosen(&target),
        _ if typing && target.has_attribute("max") => field::clamp(&target),
        _ if !typing && target.get_attribute("name").as_deref() == Some("vantage") => {
            vantages::store(&form);
        }
        _ => {}
    }
    refresh(&form);
}

/// The URL field `field` was left: once something was typed in it, its problem may show.
fn left(field: &Element) {
    if field.has_attribute("data-typed")
        && let Ok(Some(form)) = field.closest("form")
    {
        let _ = form.set_attribute("data-touched", "");
        refresh(&form);
    }
}

/// The page is for measuring: the URL field takes the keyboard, unless the visitor is already
/// in another field.
fn focus_url(document: &Document) {
    let elsewhere = document
        .active_element()
        .is_some_and(|e| e.tag_name() != "BODY");
    if !elsewhere
        && let Some(field) = document
            .get_element_by_id("url")
            .and_then(|f| f.dyn_into::<HtmlElement>().ok())
    {
        let _ = field.focus();
    }
}

/// The form the loader held a submit of before the wasm came (`index.html`), submitted again.
fn pending_submit() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let key = JsValue::from_str("h123PendingSubmit");
    let Ok(form) = js_sys::Reflect::get(&window, &key) else {
        return;
    };
    let _ = js_sys::Reflect::delete_property(&window, &key);
    if let Ok(form) = form.dyn_into::<HtmlFormElement>() {
        submission::idle(&form);
        let _ = form.request_submit();
    }
}
