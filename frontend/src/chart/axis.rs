//! The time axis's labels as many as fit: the markup writes every tick's label (those that would
//! not fit a narrow axis `hidden`), and the page shows the ones that fit the axis's real width.

use h123_shared::Micros;
use h123_shared::waterfall::{Tick, label_stride};
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, NodeList};

/// Shows, on every time axis of `document`, the labels that fit its width and hides the others.
pub fn fit_labels(document: &Document) {
    if let Ok(axes) = document.query_selector_all(".wf-ticks") {
        fit_all(&axes);
    }
}

/// As [`fit_labels`], for the time axes inside `root`.
pub fn fit_within(root: &Element) {
    if let Ok(axes) = root.query_selector_all(".wf-ticks") {
        fit_all(&axes);
    }
}

/// Fits each of `axes`.
fn fit_all(axes: &NodeList) {
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
    Some(fixed_point(percent.trim_end_matches('%').trim())? / 100.0)
}

/// `text`, a fixed-point number as the server writes one ("12.5000"), read without `f64`'s
/// parser, which would cost the bundles some 15 KB of wasm.
fn fixed_point(text: &str) -> Option<f64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let scale = 10_u32.checked_pow(u32::try_from(fraction.len()).ok()?)?;
    let fraction = match fraction {
        "" => 0,
        digits => digits.parse::<u32>().ok()?,
    };
    Some(f64::from(whole.parse::<u32>().ok()?) + f64::from(fraction) / f64::from(scale))
}

#[cfg(test)]
mod tests {
    use super::fixed_point;

    #[test]
    fn fixed_point_numbers_read_as_the_server_writes_them() {
        assert_eq!(fixed_point("12.5000"), Some(12.5));
        assert_eq!(fixed_point("100"), Some(100.0));
        assert_eq!(fixed_point("0.0000"), Some(0.0));
        assert_eq!(fixed_point("33.3333"), Some(33.3333));
        for bad in ["", "-1.5", "1.2.3", "x", "1.x"] {
            assert_eq!(fixed_point(bad), None, "{bad}");
        }
    }
}
