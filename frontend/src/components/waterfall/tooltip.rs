//! The hovered or focused bar's exact times in a tooltip beside it, drawn straight into the DOM.

use wasm_bindgen::JsCast;
use web_sys::{Element, Event};

/// The tooltip is at most 16rem wide, centred on its bar: half of that, in pixels.
const HALF_WIDTH_PX: f64 = 128.0;

/// The bar an event happened on, and the waterfalls section holding it.
fn bar_and_section(ev: &Event) -> Option<(Element, Element)> {
    let bar: Element = ev.current_target()?.dyn_into().ok()?;
    let section = bar.closest(".waterfalls").ok()??;
    Some((bar, section))
}

/// Shows `text` in the section's tooltip, above the middle of the bar `ev` happened on (kept
/// inside the section's width).
pub fn show(ev: &Event, text: &str) {
    let Some((bar, section)) = bar_and_section(ev) else {
        return;
    };
    let Ok(Some(tip)) = section.query_selector(".wf-tooltip") else {
        return;
    };
    let (b, s) = (
        bar.get_bounding_client_rect(),
        section.get_bounding_client_rect(),
    );
    let half = HALF_WIDTH_PX.min(s.width() / 2.0);
    let left = (b.left() - s.left() + b.width() / 2.0)
        .min(s.width() - half)
        .max(half);
    let top = b.top() - s.top();
    tip.set_text_content(Some(text));
    let _ = tip.set_attribute(
        "style",
        &format!("left: {}px; top: {}px", left as i32, top as i32),
    );
    let _ = tip.remove_attribute("hidden");
}

/// Hides the section's tooltip.
pub fn hide(ev: &Event) {
    if let Some(Ok(Some(tip))) = bar_and_section(ev).map(|(_, s)| s.query_selector(".wf-tooltip")) {
        let _ = tip.set_attribute("hidden", "");
    }
}
