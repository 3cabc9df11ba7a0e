//! A page's actions bar with its permalink: the copy button, the page's other actions, and the
//! permalink's text.

use crate::clipboard;
use leptos::prelude::*;

/// `<nav class="actions">` named `label`: "Copy permalink", then `children` (the page's other
/// actions, drawn by the server), then a note (a live region) saying what the button did; and
/// under it the permalink's text, `path` as drawn, the page's origin before it once hydrated.
#[island]
pub fn CopyPermalink(
    /// The bar's accessible name, e.g. "Bench actions".
    label: String,
    /// The permalink's path, e.g. `/b/{id}`.
    path: String,
    /// The page's other actions.
    children: Children,
) -> impl IntoView {
    let link = RwSignal::new(path.clone());
    let note = RwSignal::new(String::new());
    // Effects run only in the browser, where the origin is known.
    Effect::new(move || link.set(format!("{}{path}", clipboard::origin())));
    let copy = move |_| {
        note.set(if clipboard::copy(&link.get_untracked()) {
            "Permalink copied to the clipboard.".to_owned()
        } else {
            "This page cannot use the clipboard; copy the Permalink from below.".to_owned()
        });
    };
    view! {
        <nav class="actions" aria-label=label>
            <button type="button" data-action="copy" data-copy="permalink" on:click=copy>"Copy permalink"</button>
            {children()}
            <span class="note" role="status">{move || note.get()}</span>
        </nav>
        <details class="copy-texts">
            <summary>"Permalink"</summary>
            <pre data-text="permalink">{move || link.get()}</pre>
        </details>
    }
}
