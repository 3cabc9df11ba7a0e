//! The pages as Leptos components, drawn to HTML by the server (feature `ssr`, [`render`]) with
//! their interactive parts as [`islands`](crate::islands) hydrated in the browser. So far: a
//! monitor's pages and the page for a path no page knows. The other pages are still drawn as
//! markup (`shared::markup`) and given their behaviour by their web-sys bundles (`src/bin/`).

#[cfg(feature = "ssr")]
pub mod monitor;
pub mod not_found;

/// `page` drawn to HTML as the server sends it: its islands wrapped in `<leptos-island>`
/// elements that name their hydrating function, for `index.html`'s loader to call.
#[cfg(feature = "ssr")]
pub fn render<V: leptos::IntoView + 'static>(page: impl FnOnce() -> V) -> String {
    use leptos::prelude::*;
    Owner::new().with(|| page().to_html())
}
