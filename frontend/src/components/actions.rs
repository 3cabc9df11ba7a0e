//! What to do with a result: copy its permalink or curl command, download it, run it again.

use crate::api;
use crate::components::ApiProblem;
use crate::submit::Submission;
use h123_shared::api::{ProbeLinks, ProbeRecord};
use h123_shared::curl::curl_command;
use leptos::prelude::*;

/// Puts text on the clipboard; says whether the browser offers one (only
/// secure contexts do: https or localhost).
pub fn copy(text: &str) -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let navigator = window.navigator();
    let available = js_sys::Reflect::get(&navigator, &"clipboard".into())
        .is_ok_and(|c| !c.is_undefined() && !c.is_null());
    if available {
        // The promise settles later; a refusal there is rare (page not focused).
        let _ = navigator.clipboard().write_text(text);
    }
    available
}

/// The page's origin, e.g. `https://h123.example`.
pub fn origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}

/// The actions bar of a result.
#[component]
pub fn Actions(
    /// The probe.
    record: ProbeRecord,
    /// Whether it has finished (downloads are then complete).
    #[prop(into)]
    done: Signal<bool>,
) -> impl IntoView {
    let links = ProbeLinks::for_id(&record.id);
    let note = RwSignal::new(String::new());
    let permalink = format!("{}{}", origin(), links.permalink);
    let curl = record
        .options
        .protocols
        .iter()
        .map(|p| curl_command(&record.options, *p))
        .collect::<Vec<_>>()
        .join("\n");
    let (permalink_text, curl_text) = (permalink.clone(), curl.clone());
    let say = move |ok: bool, what: &str| {
        note.set(if ok {
            format!("{what} copied to the clipboard.")
        } else {
            format!("This page cannot use the clipboard; copy the {what} from below.")
        })
    };
    // "Run again": the same options as a new probe, opened once the server accepts it.
    let rerun = Submission::default();
    let options = record.options.clone();
    let id = record.id.clone();
    view! {
        <nav class="actions" aria-label="Result actions">
            <button type="button" on:click=move |_| say(copy(&permalink), "Permalink")>
                "Copy permalink"
            </button>
            <button type="button" on:click=move |_| say(copy(&curl), "curl command")>
                "Copy curl command"
            </button>
            <a class="button" href=api::api_url(&links.self_) download=format!("h123-{id}.json") class:partial=move || !done.get()>
                "JSON"
            </a>
            <a class="button" href=api::api_url(&links.har) download=format!("h123-{id}.har")>
                "HAR"
            </a>
            <a class="button" href=api::api_url(&links.waterfall_svg) download=format!("h123-{id}.svg")>
                "SVG"
            </a>
            <button
                type="button"
                class="primary"
                disabled=move || rerun.pending.get()
                on:click=move |_| {
                    let options = options.clone();
                    rerun.send(async move { api::create_probe(&options).await }, |created| {
                        crate::navigate::to(&created.links.permalink)
                    });
                }
            >
                "Run again"
            </button>
            <span class="note" role="status">
                {move || note.get()}
            </span>
        </nav>
        <details class="copy-texts">
            <summary>"Permalink and curl commands"</summary>
            <pre>{permalink_text}</pre>
            <pre>{curl_text}</pre>
        </details>
        {move || rerun.refused.get().map(|error| view! { <ApiProblem error /> })}
    }
}
