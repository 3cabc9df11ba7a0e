//! A time on the reader's clock.

use crate::components::to_local_time;
use leptos::prelude::*;

/// Around a `<time data-unix-ms>` the server drew in UTC (`children`: right for every reader
/// before the bundle arrives, and without script): once hydrated, the time on the reader's clock.
/// It reads the time from the drawing: as a prop it would bring serde's JSON reader into the
/// bundle (13 KB gzipped) for one number.
#[island]
pub fn LocalTime(
    /// The `<time>`, as the server drew it.
    children: Children,
) -> impl IntoView {
    let around = NodeRef::<leptos::html::Span>::new();
    // Effects run only in the browser, where the reader's offset is known.
    Effect::new(move || {
        if let Some(Ok(Some(time))) = around.get().map(|span| span.query_selector("time")) {
            to_local_time(&time);
        }
    });
    view! { <span class="local-time" node_ref=around>{children()}</span> }
}
