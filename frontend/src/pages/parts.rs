//! Small parts several pages draw: a time on the reader's clock, a note of lines, a coordinate.

use h123_shared::format::{datetime_minute, wall_clock};
use leptos::prelude::*;

/// A coordinate as SVG wants it: one decimal.
pub fn at(value: f64) -> String {
    format!("{value:.1}")
}

/// `unix_ms` as a `<time>` in UTC, which the page's script rewrites on the reader's clock
/// (`data-unix-ms`).
pub fn time(unix_ms: u64) -> impl IntoView + use<> {
    view! {
        <time datetime=datetime_minute(unix_ms) data-unix-ms=unix_ms>{wall_clock(unix_ms, 0)}</time>
    }
}

/// A note of `lines`, a paragraph each, named `label` (as `<aside class="network-note">`);
/// nothing without lines.
pub fn note(label: &'static str, lines: Vec<String>) -> Option<impl IntoView + use<>> {
    (!lines.is_empty()).then(|| {
        let paragraphs = lines
            .into_iter()
            .map(|line| view! { <p>{line}</p> })
            .collect_view();
        view! { <aside class="network-note" aria-label=label>{paragraphs}</aside> }
    })
}
