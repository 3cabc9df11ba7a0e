//! h123's web UI: the site's frame around one page. Each page is its own wasm bundle (a binary in
//! `src/bin/`), which `index.html`'s loader picks by the path, so a visitor downloads only the page
//! they opened; moving to another page is a full load ([`navigate::to`]).

pub mod api;
pub mod browser_measure;
pub mod chart;
pub mod clipboard;
pub mod components;
pub mod navigate;
pub mod pages;
pub mod perf;
pub mod result_page;
pub mod submit;
pub mod title;

use h123_shared::route::Route;
use leptos::prelude::*;
use pages::NotFoundPage;

/// Starts a page's bundle: the page's static shell (painted before the wasm ran) gives way to the
/// app, the site's header and footer around the page `page` draws for the address's route, or
/// "not found" when it draws none.
pub fn start(page: impl FnOnce(Route) -> Option<AnyView> + Send + 'static) {
    if let Some(shell) = document().get_element_by_id("shell") {
        shell.remove();
    }
    leptos::mount::mount_to_body(move || {
        let page =
            page(navigate::current()).unwrap_or_else(|| view! { <NotFoundPage /> }.into_any());
        view! { <Frame>{page}</Frame> }
    });
}

/// The site's header and footer around a page.
#[component]
fn Frame(children: Children) -> impl IntoView {
    view! {
        <header class="site-header">
            <a href="/" class="brand">
                "h123"
            </a>
            <span class="tagline">"where an HTTP request spends its time, over HTTP/1.1, /2 and /3"</span>
        </header>
        <main id="main">{children()}</main>
        <footer class="site-footer">
            "Times are microsecond offsets from each attempt's start, on a monotonic clock. "
            <a href=api::api_url("/api/openapi.json")>"API"</a>
        </footer>
    }
}
