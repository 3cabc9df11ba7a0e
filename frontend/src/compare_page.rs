//! `/compare/{a}/{b}` without a view tree (the `h123-compare` bundle, no Leptos): the server
//! draws the comparison (the Leptos component `pages::compare`) into the page itself, and this
//! only gives it behaviour: times on the reader's clock, the waterfalls' hover, focus and keys
//! ([`chart::listen`]), the axis labels fitted, the API links on the configured base, the title.
//! When a static host served the page (nothing drawn), it fetches the comparison as the server
//! draws it (`GET /api/v1/compare/{a}/{b}/view`), or shows the problem page.

use crate::chart::{self, axis};
use crate::result_page::{actions, local_times, problem_title, set_title};
use crate::{api, components, navigate, perf};
use h123_shared::route::Route;
use wasm_bindgen_futures::spawn_local;
use web_sys::Document;

/// Starts the page: the handlers on the document, then the comparison, drawn or fetched.
pub fn start() {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Ok(Some(loading)) = document.query_selector("#shell .loading") {
        loading.remove();
    }
    let Route::Compare(a, b) = navigate::current() else {
        return;
    };
    chart::listen(&document);
    if document.get_element_by_id("comparison").is_some() {
        adopt(&document);
        perf::mark(perf::APP);
    } else {
        spawn_local(async move { fetch(&a, &b).await });
    }
}

/// Fetches the comparison as the server draws it and shows it in the shell, or the problem page.
async fn fetch(a: &str, b: &str) {
    let html = match api::comparison_view(a, b).await {
        Ok(html) => html,
        Err(error) => components::problem_markup(&error, false),
    };
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Ok(Some(main)) = document.query_selector("#shell main") {
        main.set_inner_html(&html);
    }
    if document.get_element_by_id("comparison").is_some() {
        adopt(&document);
    } else {
        set_title(&document, problem_title(&document).as_deref());
    }
}

/// Makes the drawn comparison the page's: its title, times, axes and API links.
fn adopt(document: &Document) {
    let Ok(Some(main)) = document.query_selector("#shell main") else {
        return;
    };
    if let Some(summary) = document.get_element_by_id("comparison") {
        set_title(document, summary.get_attribute("data-title").as_deref());
    }
    local_times(&main);
    axis::fit_labels(document);
    actions::complete_links(document, &main);
}
