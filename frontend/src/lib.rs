//! h123's web UI, moving to Leptos (issue 48). The pages moved so far are Leptos components
//! ([`pages`]) the server renders (feature `ssr`), their interactive parts [`islands`] hydrated in
//! the browser by the bundle Trunk builds (feature `hydrate`, `frontend/islands`). The others,
//! without a view tree: the server draws them into `index.html` (the home page, a result) and each
//! page's wasm bundle (a binary in `src/bin/`, which `index.html`'s
//! loader picks by the path) only gives the drawn page its behaviour, or draws the same markup
//! when a static host served the page. A visitor downloads only the page they opened; moving to
//! another page is a full load ([`navigate::to`]).

// Leptos views nest their types deeply (an element with many attributes, a page of parts).
#![recursion_limit = "256"]

pub mod api;
pub mod browser_measure;
pub mod chart;
pub mod clipboard;
pub mod components;
pub mod home_page;
#[cfg(any(feature = "ssr", feature = "hydrate"))]
pub mod islands;
pub mod navigate;
pub mod pages;
pub mod perf;
pub mod result_page;
