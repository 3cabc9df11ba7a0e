//! The forms' network picker (`pages::home`): none, a named
//! profile, or figures typed in, and the note both the select and the figures are described by.

use super::field;
use crate::pages::home::NETWORK_NOTE;
use h123_shared::network::NAMED_PROFILES;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlInputElement};

/// The picker's select `select` changed: the figures field shows for "custom" (emptied, to be
/// typed), and hides otherwise.
pub fn chosen(select: &Element) {
    let custom = field::value_of(select) == "custom";
    let figures = select
        .next_element_sibling()
        .and_then(|f| f.dyn_into::<HtmlInputElement>().ok());
    if let Some(figures) = figures {
        if custom && figures.hidden() {
            figures.set_value("");
        }
        figures.set_hidden(!custom);
    }
}

/// The network conditions' text the picker with the select `#id` of `form` holds: empty for
/// none, a profile's name, or the figures typed.
pub fn text(form: &Element, id: &str) -> String {
    match field::value(form, &format!("#{id}")).as_str() {
        "none" | "" => String::new(),
        "custom" => field::value(form, &format!("#{id}-figures")),
        name => name.to_owned(),
    }
}

/// Writes the picker's note: `problem` (the figures marked invalid), else the chosen profile's
/// source, else what the conditions do.
pub fn show(form: &Element, id: &str, problem: Option<String>) {
    field::invalid(form, &format!("#{id}-figures"), problem.is_some());
    let chosen = text(form, id);
    let error = problem.is_some();
    let note = problem.unwrap_or_else(|| {
        NAMED_PROFILES
            .iter()
            .find(|p| p.name == chosen)
            .map_or(NETWORK_NOTE, |p| p.source)
            .to_owned()
    });
    field::note(form, &format!("#{id}-note"), &note, error);
}
