//! The web UI: files from `--web-root` with an SPA fallback to `index.html`
//! (so `/r/{id}` opens the app), or a small built-in page when there is none.

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse};
use std::path::Path;
use tower_http::services::{ServeDir, ServeFile};

/// The page served when no built UI is configured.
pub const BUILTIN_PAGE: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>h123</title></head><body><h1>h123</h1><p>The web UI is not built (no <code>--web-root</code>, and no <code>./dist</code>). The API works: see <a href=\"/api/openapi.json\">/api/openapi.json</a>, or <code>POST /api/v1/probes</code> with <code>{\"url\": \"https://example.com/\"}</code>.</p></body></html>";

/// A router serving `root` (with SPA fallback), or the built-in page when `None`.
pub fn router<S: Clone + Send + Sync + 'static>(root: Option<&Path>) -> Router<S> {
    match root {
        Some(root) => {
            let index = ServeFile::new(root.join("index.html"));
            Router::new().fallback_service(ServeDir::new(root).fallback(index))
        }
        None => Router::new().fallback(builtin),
    }
}

async fn builtin() -> impl IntoResponse {
    (
        StatusCode::OK,
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"))],
        Html(BUILTIN_PAGE),
    )
}
