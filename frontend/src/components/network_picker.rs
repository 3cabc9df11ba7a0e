//! The forms' network picker: none, a named profile, or figures typed in.

use h123_shared::network::NAMED_PROFILES;
use leptos::prelude::*;

/// The form's network picker: none, a named profile, or figures typed in, whose problem is the
/// note both the select and the figures are described by.
#[component]
pub fn NetworkPicker(
    /// The profile text chosen (empty: the real path alone).
    chosen: RwSignal<String>,
    /// Why the typed figures are refused, if they are.
    problem: Memo<Option<String>>,
    /// The select's id; the figures and the note take it as a prefix.
    #[prop(default = "network")]
    id: &'static str,
) -> impl IntoView {
    let custom = RwSignal::new(false);
    let figures_id = format!("{id}-figures");
    let note_id = format!("{id}-note");
    view! {
        <div class="field network-field">
            <label for=id>"Network"</label>
            <select
                id=id
                aria-describedby=note_id.clone()
                on:change=move |ev| {
                    let value = event_target_value(&ev);
                    custom.set(value == "custom");
                    chosen.set(if value == "custom" || value == "none" { String::new() } else { value });
                }
            >
                <option value="none">"this server's own path"</option>
                {NAMED_PROFILES
                    .iter()
                    .map(|p| view! { <option value=p.name>{p.name}</option> })
                    .collect_view()}
                <option value="custom">"custom figures…"</option>
            </select>
            <input
                id=figures_id
                type="text"
                spellcheck="false"
                aria-label="Network figures"
                aria-describedby=note_id.clone()
                aria-invalid=move || problem.with(Option::is_some).to_string()
                placeholder="rtt=100ms,loss=2%,down=10mbit,up=2mbit"
                hidden=move || !custom.get()
                prop:value=move || chosen.get()
                on:input=move |ev| chosen.set(event_target_value(&ev))
            />
            <p id=note_id class="field-note" class:error=move || problem.with(Option::is_some)>
                {move || {
                    problem.get().unwrap_or_else(|| {
                        let text = chosen.get();
                        match NAMED_PROFILES.iter().find(|p| p.name == text) {
                            Some(p) => p.source.to_owned(),
                            None => "Delay, loss and rate limits applied to every protocol alike, both ways.".to_owned(),
                        }
                    })
                }}
            </p>
        </div>
    }
}
