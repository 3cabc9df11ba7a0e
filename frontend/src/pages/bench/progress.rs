//! Where a running bench is: a sweep's step, the protocol, its requests, errors and time, and a
//! progress bar over every run planned.

use h123_shared::bench::words::{progress_fraction, progress_text, steps};
use h123_shared::bench::{BenchOptions, BenchProgress};
use leptos::prelude::*;

/// The progress section of a bench set up with `options`, at `p`.
pub fn progress(options: &BenchOptions, p: &BenchProgress) -> impl IntoView + use<> {
    let hint = if steps(options) > 1 {
        "Steps run one after another, each protocol in turn, never at once. The decay chart grows as each step ends."
    } else {
        "Protocols run one after another, never at once. The table and chart appear when the last one is done."
    };
    view! {
        <section class="bench-progress" aria-label="Progress">
            <progress max="1" value=format!("{:.3}", progress_fraction(options, p))></progress>
            <p class="progress-text" role="status" aria-live="polite">{progress_text(options, p)}</p>
            <p class="hint">{hint}</p>
        </section>
    }
}
