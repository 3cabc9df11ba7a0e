//! A time on the reader's clock.

use crate::components::local_time;
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
    Effect::new(move || shown.set(local_time(unix_ms)));
    view! {
        <time datetime=datetime_minute(unix_ms) data-unix-ms=unix_ms>{move || shown.get()}</time>
    }
}
