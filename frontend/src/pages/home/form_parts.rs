//! Parts both of the home page's forms draw: a checkbox per protocol and the network picker.

use super::NETWORK_NOTE;
use h123_shared::Protocol;
use h123_shared::network::NAMED_PROFILES;
use leptos::prelude::*;

/// One checkbox per protocol, all ticked, with the form name `name`.
pub fn protocol_toggles(name: &'static str) -> impl IntoView + use<> {
    Protocol::ALL
        .iter()
        .map(|p| {
            view! {
                <label class="toggle"><input type="checkbox" name=name value=p.as_str() checked/>{p.http_version()}</label>
            }
        })
        .collect_view()
}

/// The network picker whose select has the id `id` (the figures field and the note take it as a
/// prefix): none, a named profile, or figures typed in (hidden until "custom" is chosen).
pub fn network_picker(id: &'static str) -> impl IntoView + use<> {
    let note = format!("{id}-note");
    let profiles = NAMED_PROFILES
        .iter()
        .map(|p| view! { <option value=p.name>{p.name}</option> })
        .collect_view();
    view! {
        <div class="field network-field">
            <label for=id>"Network"</label>
            <select id=id aria-describedby=note.clone()>
                <option value="none">"this server's own path"</option>
                {profiles}
                <option value="custom">"custom figures…"</option>
            </select>
            <input id=format!("{id}-figures") type="text" spellcheck="false" aria-label="Network figures" aria-describedby=note.clone() aria-invalid="false" placeholder="rtt=100ms,loss=2%,down=10mbit,up=2mbit" hidden/>
            <p id=note class="field-note">{NETWORK_NOTE}</p>
        </div>
    }
}
