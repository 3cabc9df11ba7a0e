//! Entry point of the web UI: replaces the page's static shell with the app.

fn main() {
    // The shell (index.html's header and summary, painted before the wasm ran) gives way to the app.
    if let Some(shell) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("shell"))
    {
        shell.remove();
    }
    leptos::mount::mount_to_body(h123_frontend::App);
}
