//! `/b/{id}` without a view tree (the `h123-bench` bundle, no Leptos): the server draws the bench
//! (the Leptos component [`crate::pages::bench`]) into the page itself and as `GET /api/v1/benches/{id}/view`, and
//! this only gives it behaviour: the title, times on the reader's clock, the API links on the
//! configured base, the copy button. While the bench runs it asks for the view every 500 ms and
//! puts in what changed ([`poll`]). When a static host served the page (nothing drawn), it
//! fetches the view, or draws the problem page.

mod poll;

use crate::result_page::{actions, local_times, problem_title, set_title};
use crate::{api, chart, components, navigate, perf};
use h123_shared::route::Route;
use wasm_bindgen_futures::spawn_local;
use web_sys::{Document, Element};

/// Starts the page: the copy button's handler on the document, then the bench, drawn or fetched.
pub fn start() {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Ok(Some(loading)) = document.query_selector("#shell .loading") {
        loading.remove();
    }
    let Route::Bench(id) = navigate::current() else {
        return;
    };
    chart::on(&document, "click", |ev| {
        if let Some(button) = chart::within(&ev, r#"#bench [data-action="copy"]"#) {
            actions::copy(&button);
        }
    });
    match document.get_element_by_id("bench") {
        Some(bench) => shown(&document, &bench),
        None => spawn_local(async move { fetch(&id).await }),
    }
}

/// Fetches the bench's view and shows it, or the problem page when there is none.
async fn fetch(id: &str) {
    let html = match api::bench_view(id).await {
        Ok(html) => html,
        Err(error) => components::problem_markup(&error, true),
    };
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Ok(Some(main)) = document.query_selector("#shell main") {
        main.set_inner_html(&html);
    }
    match document.get_element_by_id("bench") {
        Some(bench) => shown(&document, &bench),
        None => set_title(&document, problem_title(&document).as_deref()),
    }
}

/// The bench `bench` is on the page: it is adopted, and followed while it runs.
fn shown(document: &Document, bench: &Element) {
    // The drawing as the server made it, before the page changes its times and links.
    let drawn = poll::Drawn::of(bench);
    adopt(document, bench);
    perf::mark(perf::APP);
    if is_running(bench) {
        let id = bench.get_attribute("data-id").unwrap_or_default();
        spawn_local(poll::follow(id, drawn));
    }
}

/// Whether the drawn bench is still running.
fn is_running(bench: &Element) -> bool {
    bench.get_attribute("data-status").as_deref() == Some("running")
}

/// Makes the drawn bench `bench` the page's: its title, times and API links.
fn adopt(document: &Document, bench: &Element) {
    set_title(document, bench.get_attribute("data-title").as_deref());
    local_times(bench);
    actions::complete_links(document, bench);
}
