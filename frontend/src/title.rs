//! The document's title per route, so tabs, history and bookmarks say which page they hold.

/// Sets `document.title` to `page`, followed by the app's name.
pub fn set(page: &str) {
    leptos::prelude::document().set_title(&format!("{page} · h123"));
}
