//! The time axis's labels as many as fit: the markup writes every tick's label (those that would
//! not fit a narrow axis `hidden`), and the page shows the ones that fit the axis's real width.

use h123_shared::Micros;
use h123_shared::waterfall::{Tick, label_stride};
use wasm_bindgen::JsCast;
use web_sys::{Document, Element};

/// Shows, on every time axis of `document`, the labels that fit its width and hides the others.
pub fn fit_labels(document: &Document) {
    let Ok(axes) = document.query_selector_all(".wf-ticks") else {
        return;
    };
    for i in 0..axes.length() {
        if let Some(axis) = axes.item(i).and_then(|a| a.dyn_into::<Element>().ok()) {
            fit(&axis);
        }
    }
}

/// One axis: its labels read back as ticks, every `stride`-th shown.
fn fit(axis: &Element) {
    let children = axis.children();
    let labels: Vec<Element> = (0..children.length())
        .filter_map(|i| children.item(i))
        .collect();
    let ticks: Vec<Tick> = labels
        .iter()
        .map(|label| Tick {
            at_us: Micros(0),
            x: left_fraction(label).unwrap_or(0.0),
            label: label.text_content().unwrap_or_default(),
        })
        .collect();
    let stride = label_stride(&ticks, f64::from(axis.client_width().max(0)));
    for (i, label) in labels.iter().enumerate() {
        let _ = if i % stride == 0 {
            label.remove_attribute("hidden")
        } else {
            label.set_attribute("hidden", "")
        };
    }
}

/// A label's place on the axis, from its `style="left: N%"`.
fn left_fraction(label: &Element) -> Option<f64> {
    let style = label.get_attribute("style")?;
    let percent = style.split_once("left:")?.1.trim().trim_end_matches(';');
    Some(percent.trim_end_matches('%').trim().parse::<f64>().ok()? / 100.0)
}
