//! h123's web UI: the app shell and its routes.

pub mod api;
pub mod browser_measure;
pub mod components;
pub mod pages;
pub mod perf;
pub mod title;

use leptos::prelude::*;
use leptos_router::components::{A, Route, Router, Routes};
use leptos_router::path;
use pages::{BenchPage, ComparePage, HomePage, NotFoundPage, ResultPage};

/// The whole app: header, routed page, footer.
#[component]
pub fn App() -> impl IntoView {
    view! {
        <Router>
            <header class="site-header">
                <A href="/" attr:class="brand">
                    "h123"
                </A>
                <span class="tagline">"where an HTTP request spends its time, over HTTP/1.1, /2 and /3"</span>
            </header>
            <main id="main">
                <Routes fallback=NotFoundPage>
                    <Route path=path!("/") view=HomePage />
                    <Route path=path!("/r/:id") view=ResultPage />
                    <Route path=path!("/b/:id") view=BenchPage />
                    <Route path=path!("/compare/:a/:b") view=ComparePage />
                </Routes>
            </main>
            <footer class="site-footer">
                "Times are microsecond offsets from each attempt's start, on a monotonic clock. "
                <a href=api::api_url("/api/openapi.json")>"API"</a>
            </footer>
        </Router>
    }
}
