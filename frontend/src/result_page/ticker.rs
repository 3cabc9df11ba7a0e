//! A running phase's clock: between two drawings of a running probe, the page moves each live
//! row's open phase on from where the server drew it (`data-now-us`, the attempt's time at the
//! drawing), five times a second: its elapsed time in the row's total and its waiting note, and
//! its bar on the common axis, up to the phase's limit. The next drawing starts it afresh; a
//! finished one stops it.

use h123_shared::format::ms;
use h123_shared::schema::Micros;
use std::cell::Cell;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::Element;

/// How often the open phases move on, in milliseconds.
const TICK_MS: i32 = 200;

thread_local! {
    /// When the drawing on the page arrived (`performance.now()`, ms).
    static DRAWN_AT: Cell<f64> = const { Cell::new(0.0) };
    /// The running interval's handle, while one runs.
    static INTERVAL: Cell<Option<i32>> = const { Cell::new(None) };
}

/// A fresh drawing `result` is on the page: its live rows move on from now, while it runs.
pub fn drawn(result: &Element, running: bool) {
    let Some(window) = web_sys::window() else {
        return;
    };
    DRAWN_AT.set(now_ms());
    let live = running
        && result
            .query_selector(".wf-row.live[data-open]")
            .ok()
            .flatten()
            .is_some();
    match (live, INTERVAL.get()) {
        (true, None) => {
            let tick = Closure::<dyn FnMut()>::new(tick);
            if let Ok(handle) = window.set_interval_with_callback_and_timeout_and_arguments_0(
                tick.as_ref().unchecked_ref(),
                TICK_MS,
            ) {
                INTERVAL.set(Some(handle));
            }
            tick.forget();
        }
        (false, Some(handle)) => {
            window.clear_interval_with_handle(handle);
            INTERVAL.set(None);
        }
        _ => {}
    }
}

/// `performance.now()`, in milliseconds (0 without it).
fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Moves every live row's open phase on to now.
fn tick() {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(rows) = document.query_selector_all("#result .wf-row.live[data-open]") else {
        return;
    };
    let since_drawn_us = ((now_ms() - DRAWN_AT.get()).max(0.0) * 1_000.0) as u64;
    for i in 0..rows.length() {
        if let Some(row) = rows.item(i).and_then(|n| n.dyn_into::<Element>().ok()) {
            move_on(&row, since_drawn_us);
        }
    }
}

/// One live row, `since_drawn_us` after its drawing.
fn move_on(row: &Element, since_drawn_us: u64) {
    let number = |name: &str| {
        row.get_attribute(name)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let (since, drawn, axis) = (
        number("data-since-us"),
        number("data-now-us"),
        number("data-axis-us"),
    );
    let limit = number("data-limit-ms").saturating_mul(1_000);
    let elapsed = (drawn + since_drawn_us).saturating_sub(since).min(limit);
    let text = ms(Micros(elapsed));
    if let Ok(Some(total)) = row.query_selector(".wf-total") {
        total.set_text_content(Some(&format!("{text}…")));
    }
    let attempt = row.get_attribute("data-attempt").unwrap_or_default();
    let note = row.closest(".wf-panel").ok().flatten().and_then(|panel| {
        let selector = format!(r#".wf-waiting[data-attempt="{attempt}"] .wf-elapsed"#);
        panel.query_selector(&selector).ok().flatten()
    });
    if let Some(note) = note {
        note.set_text_content(Some(&text));
    }
    let phase = row.get_attribute("data-open").unwrap_or_default();
    let bars = row.query_selector_all(&format!(r#".bar[data-phase="{phase}"] rect"#));
    if let (Ok(rects), true) = (bars, axis > 0) {
        let room = axis.saturating_sub(since);
        // Integer arithmetic: float formatting would add kilobytes to the bundle.
        let per_million = u128::from(elapsed.min(room)) * 1_000_000 / u128::from(axis);
        let width = format!("{}.{:04}%", per_million / 10_000, per_million % 10_000);
        // The open phase is the row's last bar of its kind: its two rects (colour, pattern).
        let n = rects.length();
        for i in n.saturating_sub(2)..n {
            if let Some(rect) = rects.item(i).and_then(|r| r.dyn_into::<Element>().ok()) {
                let _ = rect.set_attribute("width", &width);
            }
        }
    }
}
