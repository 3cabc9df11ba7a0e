//! Performance marks around the result view, so the time from result JSON to painted waterfalls can be measured.

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

/// Mark set when a final result's JSON has been parsed.
pub const RESULT_JSON: &str = "h123:result-json";
/// Mark set on the frame after the waterfalls of that result were drawn.
pub const WATERFALL_PAINTED: &str = "h123:waterfall-painted";
/// Mark set when a page's script has adopted the page the server drew (the home page's forms, a
/// comparison, a bench).
pub const APP: &str = "h123:app";
/// Measure between the two marks.
pub const JSON_TO_PAINT: &str = "h123:json-to-paint";

/// Marks the arrival of a final result and, two animation frames later (the
/// frame that shows the new DOM has then been painted), marks and measures the paint.
pub fn mark_result_then_paint() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Some(performance) = window.performance() else {
        return;
    };
    // A measurement is best effort: failures only lose the figure.
    let _ = performance.mark(RESULT_JSON);
    let second = Closure::once_into_js(move || {
        let _ = performance.mark(WATERFALL_PAINTED);
        let _ = performance.measure_with_start_mark_and_end_mark(
            JSON_TO_PAINT,
            RESULT_JSON,
            WATERFALL_PAINTED,
        );
    });
    let first = Closure::once_into_js(move || {
        if let Some(window) = web_sys::window() {
            let _ = window.request_animation_frame(second.unchecked_ref());
        }
    });
    let _ = window.request_animation_frame(first.unchecked_ref());
}

/// Marks `name` now (best effort).
pub fn mark(name: &str) {
    if let Some(performance) = web_sys::window().and_then(|w| w.performance()) {
        let _ = performance.mark(name);
    }
}
