//! A button back to the page before, for a page the visitor reached by a wrong link.

use leptos::prelude::*;

/// "Back to the page before": hidden as drawn (before the bundle, or without script, it could
/// not work), shown once hydrated when this tab has a page to go back to.
#[island]
pub fn GoBack() -> impl IntoView {
    let before = RwSignal::new(false);
    // Effects run only in the browser, once the island is hydrated.
    Effect::new(move || {
        let entries = window().history().and_then(|h| h.length()).unwrap_or(0);
        before.set(entries > 1);
    });
    let back = move |_| {
        if let Ok(history) = window().history() {
            let _ = history.back();
        }
    };
    view! {
        <p hidden=move || !before.get()>
            <button type="button" on:click=back>"Back to the page before"</button>
        </p>
    }
}
