//! The form's vantage picker: when the server has agents, a checkbox per vantage (the server's own
//! first) with its label, tags and health; the choice is kept in `localStorage` across reloads.
//! The boxes are drawn once, as markup (`shared::markup`), and one change handler reads them.

use crate::api;
use h123_shared::api::VantageInfo;
use h123_shared::markup::{element, escape};
use leptos::prelude::*;
use leptos::task::spawn_local;
use std::fmt::Write as _;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;

/// Where the chosen vantage names are kept, comma-separated.
const CHOSEN_KEY: &str = "h123.vantages";

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

/// The vantage checkboxes, shown only when the server lists more than its own vantage. Until
/// then `chosen` stays empty and `offered` false, and the probe runs at the server as it always
/// did; once shown, `chosen` holds the names ticked in the server's order (the choice stored
/// last time, else the server's own) and the form asks for at least one.
#[component]
pub fn VantagePicker(
    /// The vantage names ticked.
    chosen: RwSignal<Vec<String>>,
    /// Whether the server offers a choice (it has agents).
    offered: RwSignal<bool>,
) -> impl IntoView {
    let items = RwSignal::new(Vec::<VantageInfo>::new());
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
        // The page may have moved on meanwhile: then the signals are gone, and so is the form.
        if items.try_set(list).is_none() {
            chosen.set(names);
            offered.set(true);
        }
    });
    let on_change = move |ev: web_sys::Event| {
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
        else {
            return;
        };
        let (name, on) = (input.value(), input.checked());
        chosen.update(|names| {
            // In the list's order, with `name` ticked or not.
            *names = items.with_untracked(|l| {
                l.iter()
                    .map(|i| &i.vantage.name)
                    .filter(|n| if **n == name { on } else { names.contains(n) })
                    .cloned()
                    .collect()
            });
            if let Some(storage) = storage() {
                let _ = storage.set_item(CHOSEN_KEY, &names.join(","));
            }
        });
    };
    let note = move || {
        chosen.with(|chosen| {
            if chosen.is_empty() {
                return "Pick at least one vantage.".to_owned();
            }
            let offline: Vec<String> = items.with(|l| {
                l.iter()
                    .filter(|i| !i.online && chosen.contains(&i.vantage.name))
                    .map(|i| i.vantage.name.clone())
                    .collect()
            });
            if offline.is_empty() {
                return String::new();
            }
            format!(
                "Offline: {}. Unless it comes back within its lease, its part of the result says it did not take the probe.",
                offline.join(", ")
            )
        })
    };
    let html = move || items.with(|l| boxes(l, &chosen.get_untracked()));
    view! {
        <fieldset class="vantage-picker" hidden=move || items.with(Vec::is_empty) on:change=on_change>
            <legend>"Measure from"</legend>
            <div class="vantage-boxes" inner_html=html></div>
            <p class="field-note vantage-note" class:error=move || chosen.with(Vec::is_empty)>
                {note}
            </p>
        </fieldset>
    }
}
