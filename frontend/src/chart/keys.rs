//! The chart's keyboard path: one tab stop for all its bars, the arrow keys between them
//! (roving focus: up and down between rows, left and right between a row's phases), and a skip
//! link past them to the table.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, KeyboardEvent, SvgElement};

/// Moves the focus between the bars of `chart` (the panels a key went down in): up and down to
/// the previous and next row (every panel's rows in turn, the same phase where that row has it),
/// left and right to the previous and next phase of the row, Home and End to the chart's first
/// and last bar; the bar moved to becomes the chart's one tab stop.
pub fn rove(chart: &Element, ev: &KeyboardEvent) {
    let key = ev.key();
    if !matches!(
        key.as_str(),
        "ArrowRight" | "ArrowLeft" | "ArrowDown" | "ArrowUp" | "Home" | "End"
    ) {
        return;
    }
    let Some(bar) = ev
        .target()
        .and_then(|t| t.dyn_into::<Element>().ok())
        .filter(|b| b.matches(".bar").unwrap_or(false))
    else {
        return;
    };
    let rows: Vec<Vec<Element>> = all(chart, ".wf-row")
        .iter()
        .map(|row| all(row, ".bar"))
        .filter(|bars| !bars.is_empty())
        .collect();
    let Some((r, i)) = rows
        .iter()
        .enumerate()
        .find_map(|(r, bars)| Some((r, bars.iter().position(|b| *b == bar)?)))
    else {
        return;
    };
    ev.prevent_default();
    let next = match key.as_str() {
        "ArrowRight" => &rows[r][(i + 1).min(rows[r].len() - 1)],
        "ArrowLeft" => &rows[r][i.saturating_sub(1)],
        "Home" => &rows[0][0],
        "End" => rows.last().and_then(|bars| bars.last()).unwrap_or(&bar),
        down_or_up => {
            let to = if down_or_up == "ArrowDown" {
                (r + 1).min(rows.len() - 1)
            } else {
                r.saturating_sub(1)
            };
            let phase = bar.get_attribute("data-phase");
            let bars = &rows[to];
            bars.iter()
                .find(|b| b.get_attribute("data-phase") == phase)
                .unwrap_or(&bars[i.min(bars.len() - 1)])
        }
    };
    for b in rows.iter().flatten() {
        let _ = b.set_attribute("tabindex", if b == next { "0" } else { "-1" });
    }
    if let Some(next) = next.dyn_ref::<SvgElement>() {
        let _ = next.focus();
    }
}

/// The elements under `root` matching `selector`, in document order.
fn all(root: &Element, selector: &str) -> Vec<Element> {
    let Ok(list) = root.query_selector_all(selector) else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into::<Element>().ok())
        .collect()
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
