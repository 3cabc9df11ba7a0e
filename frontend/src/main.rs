//! Entry point of the web UI: mounts the app on the page's body.

fn main() {
    leptos::mount::mount_to_body(h123_frontend::App);
}
