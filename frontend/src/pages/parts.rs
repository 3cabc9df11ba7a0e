//! Small parts several pages draw: a time on the reader's clock, a note of lines, a coordinate.

use crate::islands::LocalTime;
use h123_shared::format::{datetime_minute, wall_clock};
use leptos::prelude::*;

/// A coordinate as SVG wants it: one decimal.
pub fn at(value: f64) -> String {
    format!("{value:.1}")
}

/// `unix_ms` as a `<time>` in UTC, on the reader's clock once hydrated (the island
/// [`LocalTime`]; a page bundle rewrites it by its `data-unix-ms`).
pub fn time(unix_ms: u64) -> impl IntoView + use<> {
    view! {
        <LocalTime>
            <time datetime=datetime_minute(unix_ms) data-unix-ms=unix_ms>{wall_clock(unix_ms, 0)}</time>
        </LocalTime>
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
