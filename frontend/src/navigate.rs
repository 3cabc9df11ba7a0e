//! Where the page is, and moving to another: each page is its own bundle, so a move is a full load.

use h123_shared::route::Route;

/// The document's path, e.g. `/b/{id}` (without its query or fragment).
pub fn path() -> String {
    web_sys::window()
        .and_then(|w| w.location().pathname().ok())
        .unwrap_or_default()
}

/// The page the document's address names.
pub fn current() -> Route {
    Route::parse(&path())
}

/// Opens `path` in place of the current page, as a link would.
pub fn to(path: &str) {
    // A failure leaves the visitor where they are, which is all that can be done.
    if let Some(window) = web_sys::window() {
        let _ = window.location().assign(path);
    }
}
