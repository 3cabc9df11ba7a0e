//! Copying the page's permalink: the button in a page's actions bar, and the permalink's text.

use crate::clipboard;
use leptos::prelude::*;

/// "Copy permalink", then `children` (the page's other actions, drawn by the server), then a
/// note (a live region) saying what the button did. Drawn inside the page's `<nav class="actions">`,
/// whose name the server gives. The permalink is the page's own address.
#[island]
pub fn CopyPermalink(
    /// The page's other actions.
    children: Children,
) -> impl IntoView {
    let note = RwSignal::new(String::new());
    let copy = move |_| {
        note.set(clipboard::said(
            "Permalink",
            clipboard::copy(&clipboard::permalink()),
        ));
    };
    view! {
        <button type="button" data-action="copy" data-copy="permalink" on:click=copy>"Copy permalink"</button>
        {children()}
        <span class="note" role="status">{move || note.get()}</span>
    }
}

/// The permalink's text, for copying by hand: `children` (its path, as the server drew it), the
/// page's whole address once hydrated. The path is a child, not a prop (a prop would bring
/// serde's JSON reader into the bundle, 13 KB gzipped), so the address is written into the
/// `<pre>` by hand.
#[island]
pub fn PermalinkText(
    /// The permalink's path.
    children: Children,
) -> impl IntoView {
    let text = NodeRef::<leptos::html::Pre>::new();
    // Effects run only in the browser, where the page's address is known.
    Effect::new(move || {
        if let Some(pre) = text.get() {
            pre.set_text_content(Some(&clipboard::permalink()));
        }
    });
    view! {
        <pre data-text="permalink" node_ref=text>{children()}</pre>
    }
}
