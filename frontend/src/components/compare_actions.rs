//! Comparing results: "Compare with…" on a finished result (any permalink or id pasted), and a
//! comparison's own links (A and B swapped, its JSON), drawn as plain markup.

use crate::api;
use h123_shared::compare::probe_id_in;
use h123_shared::markup::escape;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// What the field says of an entry with no result id in it.
const NO_ID: &str = "Paste another result's permalink (…/r/ followed by 12 characters) or its id.";

/// The form on a finished result that compares it with another: the other one is A (before),
/// this one B (after). Read and marked through the DOM on submit: nothing here is reactive.
#[component]
pub fn CompareWith(
    /// This result's id.
    id: String,
) -> impl IntoView {
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let doc = document();
        let Some(field) = doc
            .get_element_by_id("compare-with")
            .and_then(|f| f.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        let other = probe_id_in(&field.value()).map(str::to_owned);
        let _ = field.set_attribute(
            "aria-invalid",
            if other.is_some() { "false" } else { "true" },
        );
        if let Some(note) = doc.get_element_by_id("compare-with-problem") {
            note.set_text_content(Some(if other.is_some() { "" } else { NO_ID }));
        }
        if let Some(other) = other {
            crate::navigate::to(&format!("/compare/{other}/{id}"));
        }
    };
    view! {
        <form class="compare-with" on:submit=submit>
            <label for="compare-with">"Compare with another result"</label>
            <input
                id="compare-with"
                type="text"
                placeholder="https://…/r/… or an id"
                aria-describedby="compare-with-problem"
            />
            <button type="submit">"Compare"</button>
            <span id="compare-with-problem" class="field-problem" role="alert"></span>
        </form>
    }
}

/// A comparison's links: A and B swapped, and its JSON.
pub fn compare_links(a: &str, b: &str) -> String {
    let (a, b) = (escape(a), escape(b));
    format!(
        r#"<nav class="actions" aria-label="Comparison actions"><a class="button" href="/compare/{b}/{a}">Swap A and B</a><a class="button" href="{}" download="h123-compare-{a}-{b}.json">JSON</a></nav>"#,
        escape(&api::api_url(&format!("/api/v1/compare/{a}/{b}")))
    )
}
