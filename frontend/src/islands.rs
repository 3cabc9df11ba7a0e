//! The pages' islands: the only components shipped to the browser (`frontend/islands`, built by
//! Trunk), each hydrated on the element the server drew it in. `index.html`'s loader initialises
//! the module, calls [`hydrate`], then calls each `<leptos-island>`'s function by its
//! `data-component` name (as Leptos's own `island_script.js` does).

mod bench_follow;
mod copy_permalink;
mod go_back;
mod local_time;
#[cfg(feature = "hydrate")]
mod remote;
mod waterfall_chart;

pub use bench_follow::BenchFollow;
pub use copy_permalink::{CopyPermalink, PermalinkText};
pub use go_back::GoBack;
pub use local_time::LocalTime;
#[cfg(feature = "hydrate")]
pub use remote::draw_remote;
pub use waterfall_chart::WaterfallChart;

/// Starts the reactive system the islands hydrate into; the loader calls it once, first.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    leptos::mount::hydrate_islands();
}
