//! Pages rendered by Leptos (`h123_frontend::pages`) into `index.html`'s shell, marked
//! `<html data-islands>` so its loader loads the islands bundle (not a page bundle) and hydrates
//! each island. So far: the page for a path no page knows.

use super::permalink_page::{self, Preview};
use super::static_files;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use h123_frontend::pages::{self, not_found};
use std::path::Path;

/// The attribute on `<html>` that tells the loader the server rendered the page with Leptos.
pub const ISLANDS_MARK: &str = "data-islands";

/// `shell` with `body` (rendered by [`pages::render`]) drawn whole in place of its summary and
/// loading line, titled and previewed as `preview` says, and marked [`ISLANDS_MARK`].
pub fn page(shell: &str, preview: &Preview, body: &str, headers: &HeaderMap) -> String {
    permalink_page::drawn_page(shell, preview, body, headers).replacen(
        "<html",
        &format!("<html {ISLANDS_MARK}"),
        1,
    )
}

/// A path no page knows (`path`): the Leptos "not found" page as a 404, or `None` when the web
/// root has no shell with a place for it.
pub async fn not_found(
    root: &Path,
    path: &str,
    headers: &HeaderMap,
    method: &Method,
) -> Option<Response> {
    let shell = super::web_root::read(root, "index.html")
        .await
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .filter(|shell| shell.contains(permalink_page::LOADING_LINE))?;
    let preview = Preview {
        title: format!("{} · h123", not_found::TITLE),
        description: not_found::WHAT.to_owned(),
        image: String::new(),
        url: path.to_owned(),
        data: None,
    };
    let body = pages::render(not_found::NotFoundPage);
    let mut response =
        static_files::page_response(page(&shell, &preview, &body, headers), headers, method);
    if response.status() == StatusCode::OK {
        *response.status_mut() = StatusCode::NOT_FOUND;
    }
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendered_page_is_marked_titled_and_drawn_whole() {
        let shell = format!(
            "<!doctype html><html lang=\"en\"><head><title>h123</title></head><body><main>{}x{}{}</main></body></html>",
            permalink_page::SUMMARY_MARKER,
            permalink_page::SUMMARY_END,
            permalink_page::LOADING_LINE
        );
        let preview = Preview {
            title: "Page not found · h123".into(),
            description: not_found::WHAT.into(),
            image: String::new(),
            url: "/no/such/page".into(),
            data: None,
        };
        let body = pages::render(not_found::NotFoundPage);
        let html = page(&shell, &preview, &body, &HeaderMap::new());
        assert!(html.contains("<html data-islands lang=\"en\">"), "{html}");
        assert!(
            html.contains("<title>Page not found · h123</title>"),
            "{html}"
        );
        assert!(
            html.contains("<main><section role=\"alert\" class=\"problem\">"),
            "{html}"
        );
        assert!(!html.contains(permalink_page::LOADING_LINE), "{html}");
        assert!(html.contains("<h1>Page not found</h1>"), "{html}");
        assert!(
            html.contains("<a href=\"/\">Back to a new measurement</a>"),
            "{html}"
        );
        let island = html
            .split_once("<leptos-island data-component=\"GoBack_")
            .expect("the way back is an island")
            .1;
        assert!(
            island.contains("<p hidden"),
            "hidden until hydrated: {html}"
        );
    }
}
