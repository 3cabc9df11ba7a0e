//! The chart's keyboard path: one tab stop for all its bars, the arrow keys between them
//! (roving focus), and a skip link past them to the table.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, KeyboardEvent, SvgElement};

/// Moves the focus between the bars of `chart` (the panels a key went down in): left and up to
/// the previous, right and down to the next, Home and End to the ends; the bar moved to becomes
/// the chart's one tab stop.
pub fn rove(chart: &Element, ev: &KeyboardEvent) {
    let step = match ev.key().as_str() {
        "ArrowRight" | "ArrowDown" => 1,
        "ArrowLeft" | "ArrowUp" => -1,
        "Home" => i32::MIN,
        "End" => i32::MAX,
        _ => return,
    };
    let Ok(bars) = chart.query_selector_all(".bar") else {
        return;
    };
    let last = bars.length().saturating_sub(1) as i32;
    let target = ev.target().map(wasm_bindgen::JsValue::from);
    let Some(at) = (0..=last).find(|i| bars.item(*i as u32).map(Into::into) == target) else {
        return;
    };
    ev.prevent_default();
    let next = at.saturating_add(step).clamp(0, last);
    for i in 0..=last {
        if let Some(bar) = bars
            .item(i as u32)
            .and_then(|b| b.dyn_into::<SvgElement>().ok())
        {
            let _ = bar.set_attribute("tabindex", if i == next { "0" } else { "-1" });
            if i == next {
                let _ = bar.focus();
            }
        }
    }
}

/// The skip link `link` was followed: opens its section's table and puts the keyboard on it.
pub fn skip_to_table(link: &Element) {
    let Some(Ok(Some(table))) = link
        .closest(".waterfalls")
        .ok()
        .flatten()
        .map(|section| section.query_selector(".wf-table"))
    else {
        return;
    };
    let _ = table.set_attribute("open", "");
    if let Some(summary) = table
        .first_element_child()
        .and_then(|s| s.dyn_into::<HtmlElement>().ok())
    {
        let _ = summary.focus();
    }
}
