//! The page for a path no page knows: rendered by Leptos (`h123_frontend::pages::not_found`) into
//! `index.html`'s shell as an islands page ([`permalink_page::islands_page`]), served as a 404.

use super::permalink_page::{self, Preview, islands_page};
use super::static_files;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use h123_frontend::pages::{self, not_found};
use std::path::Path;

/// A path no page knows (`path`): the Leptos "not found" page as a 404, or `None` when the web
/// root has no shell with a place for it.
pub async fn not_found(
    root: &Path,
    path: &str,
    headers: &HeaderMap,
    method: &Method,
) -> Option<Response> {
    let shell = permalink_page::shell(root)
        .await
        .filter(|shell| shell.contains(permalink_page::LOADING_LINE))?;
    let preview = Preview {
        title: format!("{} · h123", not_found::TITLE),
        description: not_found::WHAT.to_owned(),
        image: String::new(),
        url: path.to_owned(),
        data: None,
    };
    let body = pages::render(not_found::NotFoundPage);
    let mut response = static_files::page_response(
        islands_page(&shell, &preview, &preview.title, &body, headers),
        headers,
        method,
    );
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
        let html = islands_page(&shell, &preview, &preview.title, &body, &HeaderMap::new());
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
