//! The pages as Leptos components, drawn to HTML by the server (feature `ssr`, [`render`]) with
//! their interactive parts as [`islands`](crate::islands) hydrated in the browser: the home page,
//! a result, a comparison, a bench, a monitor's pages and the page for a path no page knows. The
//! home and result pages still get their behaviour from their web-sys bundles
//! (`src/bin/`).

#[cfg(feature = "ssr")]
pub mod bench;
#[cfg(feature = "ssr")]
pub mod compare;
pub mod home;
#[cfg(feature = "ssr")]
pub mod monitor;
pub mod not_found;
#[cfg(feature = "ssr")]
mod parts;
#[cfg(any(feature = "ssr", feature = "hydrate"))]
pub mod problem;
#[cfg(feature = "ssr")]
pub mod result;

/// `page` drawn to HTML as the server sends it: its islands wrapped in `<leptos-island>`
/// elements that name their hydrating function, for `index.html`'s loader to call.
#[cfg(feature = "ssr")]
pub fn render<V: leptos::IntoView + 'static>(page: impl FnOnce() -> V) -> String {
    use leptos::prelude::*;
    // Islands with children mark their children's place through the render context.
    let context = std::sync::Arc::new(hydration_context::SsrSharedContext::new());
    Owner::new_root(Some(context)).with(|| page().to_html())
}

/// `picture` (an `<svg>` view) drawn as a standalone SVG document. The `<!>` markers Leptos
/// writes between a view's parts for hydration are taken out: a picture is never hydrated, and
/// an SVG file is XML, where they are not allowed (text in a view is escaped, so none comes from
/// the drawing's words).
#[cfg(feature = "ssr")]
pub fn render_picture<V: leptos::IntoView + 'static>(picture: impl FnOnce() -> V) -> String {
    let mut svg = render(picture).replace("<!>", "");
    svg.push('\n');
    svg
}
