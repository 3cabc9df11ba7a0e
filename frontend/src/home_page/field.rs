//! Reading and marking a drawn form's fields: values, ticks, numbers kept within their bounds,
//! and the notes that describe them.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};

/// The elements under `root` that match `selector`, in document order.
pub fn all(root: &Element, selector: &str) -> Vec<Element> {
    let Ok(list) = root.query_selector_all(selector) else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.item(i)?.dyn_into::<Element>().ok())
        .collect()
}

/// The element of `form` that matches `selector`, if any.
pub fn find(form: &Element, selector: &str) -> Option<Element> {
    form.query_selector(selector).ok().flatten()
}

/// The value of `form`'s field `selector` (an input, a select or a text area); empty when absent.
pub fn value(form: &Element, selector: &str) -> String {
    find(form, selector).map_or_else(String::new, |el| value_of(&el))
}

/// The value of the field `el` (an input, a select or a text area).
pub fn value_of(el: &Element) -> String {
    if let Some(input) = el.dyn_ref::<HtmlInputElement>() {
        input.value()
    } else if let Some(select) = el.dyn_ref::<HtmlSelectElement>() {
        select.value()
    } else if let Some(area) = el.dyn_ref::<HtmlTextAreaElement>() {
        area.value()
    } else {
        String::new()
    }
}

/// Whether `form`'s checkbox or radio `selector` is ticked.
pub fn checked(form: &Element, selector: &str) -> bool {
    find(form, selector)
        .and_then(|el| el.dyn_into::<HtmlInputElement>().ok())
        .is_some_and(|input| input.checked())
}

/// The values of `form`'s ticked boxes that match `selector`, in document order.
pub fn ticked(form: &Element, selector: &str) -> Vec<String> {
    all(form, selector)
        .into_iter()
        .filter_map(|el| el.dyn_into::<HtmlInputElement>().ok())
        .filter(HtmlInputElement::checked)
        .map(|input| input.value())
        .collect()
}

/// The whole number in `form`'s number field `selector` (already within its bounds), or the
/// value it was drawn with when it holds none.
pub fn number(form: &Element, selector: &str) -> u64 {
    let Some(el) = find(form, selector) else {
        return 1;
    };
    let typed = el
        .dyn_ref::<HtmlInputElement>()
        .and_then(|input| input.value().trim().parse().ok());
    typed
        .or_else(|| el.get_attribute("value")?.parse().ok())
        .unwrap_or(1)
}

/// Keeps the number typed into `field` within its `min` and `max` (a number out of them becomes
/// the nearest bound, as the field shows).
pub fn clamp(field: &Element) {
    let Some(input) = field.dyn_ref::<HtmlInputElement>() else {
        return;
    };
    let Ok(typed) = input.value().trim().parse::<u64>() else {
        return;
    };
    let bound = |name| {
        field
            .get_attribute(name)
            .and_then(|v| v.parse::<u64>().ok())
    };
    let kept = typed
        .max(bound("min").unwrap_or(1))
        .min(bound("max").unwrap_or(u64::MAX));
    if kept != typed {
        input.set_value(&kept.to_string());
    }
}

/// Marks `form`'s field `selector` invalid or not (`aria-invalid`).
pub fn invalid(form: &Element, selector: &str, invalid: bool) {
    if let Some(el) = find(form, selector) {
        let _ = el.set_attribute("aria-invalid", if invalid { "true" } else { "false" });
    }
}

/// Writes `text` into `form`'s note `selector`, marked as an error or not.
pub fn note(form: &Element, selector: &str, text: &str, error: bool) {
    if let Some(el) = find(form, selector) {
        if el.text_content().as_deref() != Some(text) {
            el.set_text_content(Some(text));
        }
        let _ = el.class_list().toggle_with_force("error", error);
    }
}
