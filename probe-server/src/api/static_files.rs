//! The web UI: files from `--web-root` (precompressed variants by `Accept-Encoding`,
//! cache headers by kind of file, ETags per encoding) with an SPA fallback to
//! `index.html`, or a small built-in page when there is none; the pages the server draws into
//! `index.html` (`/`, `/r/{id}`, `/b/{id}`, `/compare/{a}/{b}`, and with Leptos the page for a
//! path no page knows: `rendered_page`).
//!
//! Files whose names carry a content hash (scripts/build-web's) never change under that name:
//! they are cached for a year (`immutable`). `index.html`, and every route
//! that answers with it, is `no-cache`: revalidated on each visit by its ETag,
//! so a rebuilt UI is picked up at once.

use super::conditional;
use super::encoding::{self, Encoding};
use super::permalink_page::{self, NotDrawn};
use super::security::ConnectSources;
use super::web_root;
use crate::server::AppState;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The page served when no built UI is configured.
pub const BUILTIN_PAGE: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>h123</title></head><body><h1>h123</h1><p>The web UI is not built (no <code>--web-root</code>, and no <code>./dist</code>). The API works: see <a href=\"/api/openapi.json\">/api/openapi.json</a>, or <code>POST /api/v1/probes</code> with <code>{\"url\": \"https://example.com/\"}</code>.</p></body></html>";

/// `Cache-Control` of files whose name carries a content hash.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// `Cache-Control` of `index.html` and the routes answered with it.
pub const NO_CACHE: &str = "no-cache";

/// A router serving `root` (with SPA fallback), or the built-in page when `None`.
pub fn router(root: Option<Arc<PathBuf>>) -> Router<AppState> {
    match root {
        Some(root) => Router::new().fallback(move |request: Request| serve(root.clone(), request)),
        None => Router::new().fallback(builtin),
    }
}

async fn builtin() -> impl IntoResponse {
    (
        StatusCode::OK,
        [(header::CACHE_CONTROL, HeaderValue::from_static(NO_CACHE))],
        Html(BUILTIN_PAGE),
    )
}

/// Answers one request for the UI: a file, or `index.html`.
async fn serve(root: Arc<PathBuf>, request: Request) -> Response {
    // Only the head is needed (a body is not `Sync`, so it is not held across awaits).
    let (request, _body) = request.into_parts();
    let method = request.method.clone();
    if method != Method::GET && method != Method::HEAD {
        let mut response = StatusCode::METHOD_NOT_ALLOWED.into_response();
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let path = request.uri.path().to_owned();
    let headers = &request.headers;
    if let Some(name) = file_name(&path)
        && let Some(response) = file(&root, &name, headers, &method).await
    {
        return response;
    }
    // A path no page knows gets the page saying so, rendered by Leptos, as a 404 (or, in a
    // shell with no place for it, the app, which says so).
    match h123_shared::route::Route::parse(&path) {
        h123_shared::route::Route::NotFound => {
            match super::rendered_page::not_found(&root, &path, headers, &method).await {
                Some(response) => response,
                None => not_found(&root, headers, &method).await,
            }
        }
        _ => index(&root, headers, &method).await,
    }
}

/// `/r/{id}`: probe `id`'s page, under the read limits; the plain `index.html` when they refuse,
/// as a 404 when there is no such probe; the built-in page without a web root.
pub async fn probe_page(
    root: Option<Arc<PathBuf>>,
    State(state): State<AppState>,
    request: Request,
) -> Response {
    let Some(root) = root else {
        return builtin().await.into_response();
    };
    let (request, _body) = request.into_parts();
    let (headers, method) = (&request.headers, &request.method);
    let id = request.uri.path().strip_prefix("/r/").unwrap_or_default();
    let (page, record) = match permalink_page::render(&state, &root, id, &request).await {
        Ok(drawn) => drawn,
        Err(NotDrawn::Unknown) => return not_found(&root, headers, method).await,
        Err(NotDrawn::Plain) => return index(&root, headers, method).await,
    };
    let mut response = page_response(page, headers, method);
    // The page that measures from the browser may fetch the probe's URL (and its redirects).
    if request
        .uri
        .query()
        .is_some_and(h123_shared::browser::asks_to_measure)
    {
        response
            .extensions_mut()
            .insert(ConnectSources(h123_shared::browser::origins(&record)));
    }
    response
}

/// `/`: `index.html` with the home page drawn in place of its loading line, as this server
/// offers it (the Leptos component `h123_frontend::pages::home`: the network picker when it takes network conditions, the
/// hint when it measures public addresses only, the load comparison form when it runs benches),
/// so the page is on screen and takes typing before its wasm has arrived; the built-in page
/// without a web root.
pub async fn home_page(
    root: Option<Arc<PathBuf>>,
    State(state): State<AppState>,
    request: Request,
) -> Response {
    let Some(root) = root else {
        return builtin().await.into_response();
    };
    let (request, _body) = request.into_parts();
    let (headers, method) = (&request.headers, &request.method);
    // A shell with no loading line has no place for the page: it is served as it is (its
    // precompressed copies included), and the page's script draws it.
    let Some(shell) = web_root::read(&root, "index.html")
        .await
        .and_then(|b| String::from_utf8(b).ok())
        .filter(|shell| shell.contains(permalink_page::LOADING_LINE))
    else {
        return index(&root, headers, method).await;
    };
    let home = super::config::home_markup(&state);
    page_response(
        shell.replacen(permalink_page::LOADING_LINE, &home, 1),
        headers,
        method,
    )
}

/// `/compare/{a}/{b}`: the comparison's page, or the plain `index.html` as for [`probe_page`].
pub async fn comparison_page(
    root: Option<Arc<PathBuf>>,
    State(state): State<AppState>,
    request: Request,
) -> Response {
    let Some(root) = root else {
        return builtin().await.into_response();
    };
    let (request, _body) = request.into_parts();
    let (headers, method) = (&request.headers, &request.method);
    let ids = request
        .uri
        .path()
        .strip_prefix("/compare/")
        .unwrap_or_default();
    match permalink_page::render_comparison(&state, &root, ids, &request).await {
        Some(page) => page_response(page, headers, method),
        None => index(&root, headers, method).await,
    }
}

/// `/b/{id}`: bench `id`'s page, under the read limits; the plain `index.html` when they refuse,
/// as a 404 when there is no such bench; the built-in page without a web root.
pub async fn bench_page(
    root: Option<Arc<PathBuf>>,
    State(state): State<AppState>,
    request: Request,
) -> Response {
    let Some(root) = root else {
        return builtin().await.into_response();
    };
    let (request, _body) = request.into_parts();
    let (headers, method) = (&request.headers, &request.method);
    let id = request.uri.path().strip_prefix("/b/").unwrap_or_default();
    match permalink_page::render_bench(&state, &root, id, &request).await {
        Ok(page) => page_response(page, headers, method),
        Err(NotDrawn::Unknown) => not_found(&root, headers, method).await,
        Err(NotDrawn::Plain) => index(&root, headers, method).await,
    }
}

/// The plain `index.html` as a 404: the app says what was not found.
async fn not_found(root: &Path, headers: &HeaderMap, method: &Method) -> Response {
    let mut response = index(root, headers, method).await;
    if response.status() == StatusCode::OK {
        *response.status_mut() = StatusCode::NOT_FOUND;
    }
    response
}

/// The plain `index.html` (the app says what is wrong), or 404 when the root has none.
async fn index(root: &Path, headers: &HeaderMap, method: &Method) -> Response {
    file(root, "index.html", headers, method)
        .await
        .unwrap_or_else(|| StatusCode::NOT_FOUND.into_response())
}

/// The file a request path names, relative to the web root: only plain
/// names (`[A-Za-z0-9._-]` segments, none starting with a dot), so nothing
/// outside the root, hidden, or percent-encoded is ever opened.
fn file_name(path: &str) -> Option<String> {
    let rest = path.strip_prefix('/')?;
    if rest.is_empty() {
        return Some("index.html".to_owned());
    }
    let plain = rest.split('/').all(|segment| {
        !segment.is_empty()
            && !segment.starts_with('.')
            && segment
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    });
    plain.then(|| rest.to_owned())
}

/// Serves the file `name` under `root` in the best encoding the client
/// accepts that exists on disk; `None` when the file does not exist.
async fn file(root: &Path, name: &str, headers: &HeaderMap, method: &Method) -> Option<Response> {
    web_root::inside(root, name).await?;
    for encoding in Encoding::PREFERENCE {
        if !encoding::accepts(headers, encoding) {
            continue;
        }
        let Some(body) = web_root::read(root, format!("{name}{}", encoding.suffix())).await else {
            continue;
        };
        let cache = if is_hashed(name) { IMMUTABLE } else { NO_CACHE };
        let representation = Representation {
            body,
            content_type: content_type(name),
            encoding,
            cache,
        };
        return Some(respond(representation, headers, method));
    }
    None
}

/// A permalink's page (made per request, so gzipped here when the client accepts it).
/// A page drawn for this request (`200`), gzipped when the client takes it, revalidated by its
/// ETag.
pub fn page_response(page: String, headers: &HeaderMap, method: &Method) -> Response {
    let page = page.into_bytes();
    let gzipped = encoding::wants_gzip(headers, page.len())
        .then(|| encoding::gzip(&page))
        .flatten();
    let (body, encoding) = match gzipped {
        Some(body) => (body, Encoding::Gzip),
        None => (page, Encoding::Identity),
    };
    let representation = Representation {
        body,
        content_type: "text/html; charset=utf-8",
        encoding,
        cache: NO_CACHE,
    };
    respond(representation, headers, method)
}

/// One encoding of one file, ready to send.
struct Representation {
    body: Vec<u8>,
    content_type: &'static str,
    encoding: Encoding,
    cache: &'static str,
}

/// 200 with the body (none for `HEAD`), or 304 when `If-None-Match` holds
/// this encoding's ETag (each encoding's bytes have their own tag), with the
/// same caching headers and media type either way.
fn respond(rep: Representation, request_headers: &HeaderMap, method: &Method) -> Response {
    let tag = conditional::etag(&rep.body);
    let not_modified = conditional::matches(request_headers, &tag);
    let length = rep.body.len();
    let mut response = if not_modified || method == Method::HEAD {
        Response::new(Body::empty())
    } else {
        Response::new(Body::from(rep.body))
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&tag) {
        headers.insert(header::ETAG, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(rep.cache));
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    // On a 304 too: the hardening middleware picks the page's policy by it, and
    // a browser replaces the cached page's headers with the 304's, so a 304
    // with an asset's policy would stop the cached page's scripts.
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(rep.content_type),
    );
    if not_modified {
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        return response;
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    if let Some(token) = rep.encoding.token() {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(token));
    }
    response
}

/// Whether `name` carries a content hash: a `-` followed by 12 to 16
/// hex digits at the end of the stem (`app-35b7f4c58902ab0_bg.wasm`,
/// `style-5546b83d3fc61a1.css`).
pub fn is_hashed(name: &str) -> bool {
    let file = name.rsplit('/').next().unwrap_or(name);
    let stem = file.split('.').next().unwrap_or(file);
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    stem.rsplit_once('-').is_some_and(|(_, hash)| {
        (12..=16).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// The media type of a UI file, by its extension.
fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "wasm" => "application/wasm",
        "svg" => "image/svg+xml",
        "json" => "application/json",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_hashed_names_are_recognised() {
        assert!(is_hashed("h123-frontend-35b7f4c58902ab0_bg.wasm"));
        assert!(is_hashed("h123-frontend-35b7f4c58902ab0.js"));
        assert!(is_hashed("style-5546b83d3fc61a1.css"));
        assert!(!is_hashed("index.html"));
        assert!(!is_hashed("h123-frontend.js"));
        assert!(!is_hashed("style-notahexhashatall.css"));
    }

    #[test]
    fn only_plain_names_reach_the_disk() {
        assert_eq!(file_name("/").as_deref(), Some("index.html"));
        assert_eq!(file_name("/style-1.css").as_deref(), Some("style-1.css"));
        assert_eq!(file_name("/a/b.js").as_deref(), Some("a/b.js"));
        assert_eq!(file_name("/../etc/passwd"), None);
        assert_eq!(file_name("/.hidden"), None);
        assert_eq!(file_name("/a//b"), None);
        assert_eq!(file_name("/%2e%2e/x"), None);
        assert_eq!(file_name("/a\\b"), None);
    }
}
