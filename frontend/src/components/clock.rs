//! A moment on the reader's clock.

use h123_shared::format::wall_clock;
use web_sys::Element;

/// A date from milliseconds since the epoch, on the reader's clock (`format::wall_clock`; not
/// `toLocaleString`, whose first call cost the result page 17 ms of script, 4x that on a slow phone).
pub fn local_time(unix_ms: u64) -> String {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(unix_ms as f64));
    // JavaScript gives the offset in minutes west of UTC.
    wall_clock(unix_ms, -(date.get_timezone_offset() as i32))
}

/// Writes `time`, a `<time data-unix-ms>` as the server draws it (in UTC), on the reader's clock.
pub fn to_local_time(time: &Element) {
    if let Some(ms) = time
        .get_attribute("data-unix-ms")
        .and_then(|ms| ms.parse::<u64>().ok())
    {
        time.set_text_content(Some(&local_time(ms)));
    }
}
