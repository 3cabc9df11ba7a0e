//! The phase legend, and the fill patterns that tell phases apart without colour.

use h123_shared::markup::waterfall::{PATTERNS, legend};
use leptos::prelude::*;

/// The hidden SVG that holds the patterns every bar refers to.
#[component]
pub fn PatternDefs() -> impl IntoView {
    view! { <svg class="pattern-defs" aria-hidden="true" width="0" height="0" inner_html=PATTERNS></svg> }
}

/// A swatch per phase, as drawn in the bars, with the phase name.
#[component]
pub fn Legend() -> impl IntoView {
    view! { <ul class="legend" aria-label="Phases" inner_html=legend()></ul> }
}
