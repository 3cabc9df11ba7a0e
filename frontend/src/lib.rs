//! h123's web UI: the site's frame around one page. Each page is its own wasm bundle (a binary in
//! `src/bin/`), which `index.html`'s loader picks by the path, so a visitor downloads only the page
//! they opened; moving to another page is a full load ([`navigate::to`]).

pub mod api;
pub mod bench_page;
pub mod browser_measure;
pub mod chart;
pub mod clipboard;
pub mod compare_page;
pub mod components;
pub mod navigate;
pub mod pages;
pub mod perf;
pub mod result_page;
pub mod submit;
pub mod takeover;
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
    mount(page);
}

/// Mounts the app for `page` in the body.
fn mount(page: impl FnOnce(Route) -> Option<AnyView> + Send + 'static) {
    leptos::mount::mount_to_body(move || {
        let page =
            page(navigate::current()).unwrap_or_else(|| view! { <NotFoundPage /> }.into_any());
        view! { <Frame>{page}</Frame> }
    });
    perf::mark(perf::APP);
}

/// Like [`start`], taking over the form the server drew into the shell (the home page's): it is
/// read before the shell goes and put into the app's form once mounted, in one task, so nothing
/// is painted between and nothing typed is lost.
pub fn start_taking_over(page: impl FnOnce(Route) -> Option<AnyView> + Send + 'static) {
    let shell = document().get_element_by_id("shell");
    let drawn = shell
        .as_ref()
        .and_then(|s| s.query_selector("form[data-drawn]").ok().flatten())
        .map(|form| takeover::capture(&form));
    if let Some(shell) = shell {
        shell.remove();
    }
    mount(page);
    if let Some(drawn) = drawn
        && let Ok(Some(form)) = document().query_selector("main form.probe-form")
    {
        takeover::restore(&drawn, &form);
    }
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
