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

/// The page's own address without its query or fragment: a permalink page's permalink, e.g.
/// `https://h123.example/b/{id}`.
pub fn permalink() -> String {
    let path = web_sys::window()
        .and_then(|w| w.location().pathname().ok())
        .unwrap_or_default();
    format!("{}{path}", origin())
}

/// The page's origin, e.g. `https://h123.example`.
pub fn origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}
