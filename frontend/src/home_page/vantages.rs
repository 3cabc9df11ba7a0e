//! The probe form's vantage picker: when the server has agents, a checkbox per vantage (the
//! server's own first) with its label, tags and health, drawn as markup once the list arrives; the
//! choice is kept in `localStorage` across reloads, and the note asks for at least one and names
//! the offline ones chosen.

use super::field;
use crate::api;
use h123_shared::api::VantageInfo;
use h123_shared::markup::{element, escape};
use std::fmt::Write as _;
use wasm_bindgen_futures::spawn_local;
use web_sys::Element;

/// Where the chosen vantage names are kept, comma-separated.
const CHOSEN_KEY: &str = "h123.vantages";

/// The picker's boxes, ticked or not.
const BOXES: &str = r#".vantage-picker input[name="vantage"]"#;

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The names chosen last time (none stored: empty).
fn stored() -> Vec<String> {
    storage()
        .and_then(|s| s.get_item(CHOSEN_KEY).ok().flatten())
        .map(|v| v.split(',').map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The boxes' markup, `chosen` ticked.
fn boxes(items: &[VantageInfo], chosen: &[String]) -> String {
    let mut out = String::new();
    for info in items {
        let v = &info.vantage;
        let name = escape(&v.name);
        let _ = write!(
            out,
            r#"<label class="toggle vantage{}" data-vantage="{name}"><input type="checkbox" name="vantage" value="{name}"{}>"#,
            if info.online { "" } else { " offline" },
            if chosen.contains(&v.name) {
                " checked"
            } else {
                ""
            },
        );
        element(&mut out, "span", r#" class="vantage-label""#, v.shown());
        if v.label.is_some() {
            element(&mut out, "code", r#" class="vantage-name""#, &v.name);
        }
        element(
            &mut out,
            "span",
            r#" class="vantage-tags""#,
            &v.tags.join(", "),
        );
        element(
            &mut out,
            "span",
            r#" class="vantage-health""#,
            &info.health(),
        );
        out.push_str("</label>");
    }
    out
}

/// Asks the server for its vantages and, when it lists more than its own, shows them in the
/// probe form `form` (the choice stored last time ticked, else the server's own). Until then the
/// picker stays hidden and the probe runs at the server, as it always did.
pub fn offer(form: Element) {
    spawn_local(async move {
        let Ok(list) = api::vantages().await else {
            return;
        };
        if list.len() < 2 {
            return;
        }
        let kept = stored();
        let mut names: Vec<String> = list
            .iter()
            .map(|i| i.vantage.name.clone())
            .filter(|n| kept.contains(n))
            .collect();
        if names.is_empty() {
            names.push(list[0].vantage.name.clone());
        }
        let Some(picker) = field::find(&form, ".vantage-picker") else {
            return;
        };
        if let Some(holder) = field::find(&picker, ".vantage-boxes") {
            holder.set_inner_html(&boxes(&list, &names));
        }
        let _ = picker.remove_attribute("hidden");
        super::probe_form::refresh(&form);
    });
}

/// Whether `form` offers a choice of vantages (the server has agents).
pub fn offered(form: &Element) -> bool {
    field::find(form, ".vantage-picker").is_some_and(|p| !p.has_attribute("hidden"))
}

/// The vantage names ticked in `form`, in the server's order (none while none is offered).
pub fn chosen(form: &Element) -> Vec<String> {
    field::ticked(form, BOXES)
}

/// Keeps `form`'s choice for the next visit.
pub fn store(form: &Element) {
    if let Some(storage) = storage() {
        let _ = storage.set_item(CHOSEN_KEY, &chosen(form).join(","));
    }
}

/// Writes the picker's note: at least one is needed; the offline ones chosen are named.
pub fn note(form: &Element) {
    if !offered(form) {
        return;
    }
    let chosen = chosen(form);
    let offline: Vec<String> = field::all(form, ".vantage.offline")
        .iter()
        .filter_map(|label| label.get_attribute("data-vantage"))
        .filter(|name| chosen.contains(name))
        .collect();
    let text = if chosen.is_empty() {
        "Pick at least one vantage.".to_owned()
    } else if offline.is_empty() {
        String::new()
    } else {
        format!(
            "Offline: {}. Unless it comes back within its lease, its part of the result says it did not take the probe.",
            offline.join(", ")
        )
    };
    field::note(form, ".vantage-note", &text, chosen.is_empty());
}
