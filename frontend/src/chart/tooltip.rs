//! The pointed-at or focused bar's exact times, in a tooltip beside it and in the section's
//! readout (a polite live region), drawn straight into the DOM, from the pointer and focus events
//! the bars hand up (`chart::listen`).

use h123_shared::waterfall::HINT;
use wasm_bindgen::JsCast;
use web_sys::{Element, Event};

/// The tooltip is at most 16rem wide, centred on its bar: half of that, in pixels.
const HALF_WIDTH_PX: f64 = 128.0;

/// The bar an event happened in (the bar or one of its shapes), and the waterfalls section holding it.
pub fn bar_and_section(ev: &Event) -> Option<(Element, Element)> {
    let target: Element = ev.target()?.dyn_into().ok()?;
    let bar = target.closest(".bar").ok()??;
    let section = bar.closest(".waterfalls").ok()??;
    Some((bar, section))
}

/// A bar's times as the tooltip shows them, and where: its left and top in pixels within the
/// section.
#[derive(Clone, Debug, PartialEq)]
pub struct Tip {
    /// The bar's label: its phase and exact times.
    pub text: String,
    /// The middle of the bar, kept inside the section's width.
    pub left: i32,
    /// The bar's top.
    pub top: i32,
}

impl Tip {
    /// The tooltip's `style`: at [`Tip::left`], [`Tip::top`].
    pub fn style(&self) -> String {
        format!("left: {}px; top: {}px", self.left, self.top)
    }
}

/// The tooltip of `bar` in `section`: its label, above the middle of the bar.
pub fn place(bar: &Element, section: &Element) -> Tip {
    let (b, s) = (
        bar.get_bounding_client_rect(),
        section.get_bounding_client_rect(),
    );
    let half = HALF_WIDTH_PX.min(s.width() / 2.0);
    Tip {
        text: bar.get_attribute("aria-label").unwrap_or_default(),
        left: (b.left() - s.left() + b.width() / 2.0)
            .min(s.width() - half)
            .max(half) as i32,
        top: (b.top() - s.top()) as i32,
    }
}

/// Shows the times of the bar `ev` happened in (its label) in the section's readout and in its
/// tooltip, above the middle of the bar (kept inside the section's width).
pub fn point(ev: &Event) {
    let Some((bar, section)) = bar_and_section(ev) else {
        return;
    };
    let tip = place(&bar, &section);
    set_readout(&section, &tip.text);
    let Ok(Some(element)) = section.query_selector(".wf-tooltip") else {
        return;
    };
    element.set_text_content(Some(&tip.text));
    let _ = element.set_attribute("style", &tip.style());
    let _ = element.remove_attribute("hidden");
}

/// Hides the tooltip and restores the readout's hint when `ev` leaves a bar.
pub fn leave(ev: &Event) {
    let Some((_, section)) = bar_and_section(ev) else {
        return;
    };
    set_readout(&section, HINT);
    if let Ok(Some(tip)) = section.query_selector(".wf-tooltip") {
        let _ = tip.set_attribute("hidden", "");
    }
}

/// Writes `text` into the section's readout.
fn set_readout(section: &Element, text: &str) {
    if let Ok(Some(readout)) = section.query_selector(".wf-readout") {
        readout.set_text_content(Some(text));
    }
}
