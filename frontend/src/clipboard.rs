//! Copying a link or a command: the clipboard where the browser offers one, and the page's
//! origin that makes a path a link.

/// Puts text on the clipboard; says whether the browser offers one (only secure contexts do:
/// https or localhost).
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

/// What a copy button's note says once it was pressed: `what` (e.g. "Permalink") `copied` to
/// the clipboard, or where to copy it from by hand.
pub fn said(what: &str, copied: bool) -> String {
    // Joined, not `format!`: formatting here cost the islands bundle 9.5 KB gzipped.
    if copied {
        [what, " copied to the clipboard."].concat()
    } else {
        [
            "This page cannot use the clipboard; copy the ",
            what,
            " from below.",
        ]
        .concat()
    }
}

/// The page's own address without its query or fragment: a permalink page's permalink, e.g.
/// `https://h123.example/b/{id}`.
pub fn permalink() -> String {
    origin() + &crate::navigate::path()
}

/// The page's origin, e.g. `https://h123.example`.
pub fn origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}
