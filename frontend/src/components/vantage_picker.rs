//! The form's vantage picker: when the server has agents, a checkbox per vantage (the server's own
//! first) with its label, tags and health; the choice is kept in `localStorage` across reloads.

use crate::api;
use h123_shared::api::VantageInfo;
use leptos::prelude::*;
use leptos::task::spawn_local;

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
    let toggle = move |name: String, on: bool| {
        chosen.update(|names| {
            names.retain(|n| *n != name);
            if on {
                names.push(name);
            }
            let order =
                |n: &String| items.with_untracked(|l| l.iter().position(|i| i.vantage.name == *n));
            names.sort_by_key(order);
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
    move || {
        let list = items.get();
        (!list.is_empty()).then(|| {
            view! {
                <fieldset class="vantage-picker">
                    <legend>"Measure from"</legend>
                    {list.into_iter().map(|info| toggle_view(info, chosen, toggle)).collect_view()}
                    <p class="field-note vantage-note" class:error=move || chosen.with(Vec::is_empty)>
                        {note}
                    </p>
                </fieldset>
            }
        })
    }
}

/// One vantage's checkbox: label, name, tags and health.
fn toggle_view(
    info: VantageInfo,
    chosen: RwSignal<Vec<String>>,
    toggle: impl Fn(String, bool) + Copy + 'static,
) -> impl IntoView {
    let name = info.vantage.name.clone();
    let (tagged, value, checked) = (name.clone(), name.clone(), name.clone());
    let tags = info.vantage.tags.join(", ");
    view! {
        <label class="toggle vantage" class:offline=!info.online data-vantage=tagged>
            <input
                type="checkbox"
                name="vantage"
                value=value
                prop:checked=move || chosen.with(|c| c.contains(&checked))
                on:change=move |ev| toggle(name.clone(), event_target_checked(&ev))
            />
            <span class="vantage-label">{info.vantage.shown().to_owned()}</span>
            {info.vantage.label.is_some().then(|| view! { <code class="vantage-name">{info.vantage.name.clone()}</code> })}
            <span class="vantage-tags">{tags}</span>
            <span class="vantage-health">{info.health()}</span>
        </label>
    }
}
