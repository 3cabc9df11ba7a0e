//! A time on the reader's clock.

use h123_shared::format::{datetime_minute, wall_clock};
use leptos::prelude::*;

/// `unix_ms` as a `<time>`: drawn in UTC by the server (right for every reader before the bundle
/// arrives, and without script), written on the reader's clock once hydrated.
#[island]
pub fn LocalTime(
    /// The time, in milliseconds since the Unix epoch.
    unix_ms: u64,
) -> impl IntoView {
    let shown = RwSignal::new(wall_clock(unix_ms, 0));
    // Effects run only in the browser, where the reader's offset is known.
    Effect::new(move || shown.set(wall_clock(unix_ms, reader_offset_minutes(unix_ms))));
    view! {
        <time datetime=datetime_minute(unix_ms) data-unix-ms=unix_ms>{move || shown.get()}</time>
    }
}

/// The reader's offset from UTC at `unix_ms`, in minutes east (JavaScript gives minutes west).
fn reader_offset_minutes(unix_ms: u64) -> i32 {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(unix_ms as f64));
    -(date.get_timezone_offset() as i32)
}
