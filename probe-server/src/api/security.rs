//! Response hardening: a Content-Security-Policy per kind of answer (web UI, API, SVG), `nosniff`, no framing, no referrer, and a 4xx for over-long paths.
//!
//! The web UI's policy allows its own scripts, WebAssembly compilation
//! (`'wasm-unsafe-eval'`) and the inline loader script of
//! `index.html`, by its SHA-256 (computed from the file each time the page
//! is served, so a rebuilt UI needs no restart), and
//! nothing else runs; styles may be inline (the waterfall positions its
//! labels with `style` attributes). API answers and the SVG export run no
//! script at all.

use super::error::ApiError;
use crate::store::base64;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Longest request path accepted (bytes); longer ones get `414 uri_too_long`.
pub const MAX_PATH_BYTES: usize = 2048;

/// Longest path segment accepted (a file name's limit); longer ones get a JSON 404.
pub const MAX_SEGMENT_BYTES: usize = 255;

/// The policy of API answers: nothing may load or run.
pub const API_CSP: &str = "default-src 'none'; frame-ancestors 'none'";

/// The policy of the SVG export: its inline styles apply, no script runs.
pub const SVG_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'";

/// The policy of the UI's other files (scripts, WebAssembly, styles): they are not documents.
pub const ASSET_CSP: &str = "default-src 'none'; frame-ancestors 'none'";

/// Origins a page may connect to beyond its own (`connect-src`): set as a response extension by
/// the handler of a page that measures from the browser (`/r/{id}?measure=browser`: the probe's
/// URL and redirects, `shared::browser::origins`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConnectSources(pub Vec<String>);

/// The web UI's policy, allowing the inline scripts of `index_html` by hash, and connections to
/// `connect` beyond its own origin.
pub fn ui_csp(index_html: &str, connect: &ConnectSources) -> String {
    let hashes: String = inline_scripts(index_html)
        .map(|script| format!(" 'sha256-{}'", base64(&Sha256::digest(script.as_bytes()))))
        .collect();
    // Origins come from `shared::browser::origins` (scheme, host, port); anything that could
    // end the directive is dropped all the same.
    let connect: String = connect
        .0
        .iter()
        .filter(|o| !o.contains([';', ',', ' ', '\'', '"']) && o.is_ascii())
        .map(|o| format!(" {o}"))
        .collect();
    format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{hashes}; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'{connect}; \
         object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )
}

/// The bodies of the `<script>` elements without `src` in `html`.
fn inline_scripts(html: &str) -> impl Iterator<Item = &str> {
    html.split("<script").skip(1).filter_map(|rest| {
        let (tag, after) = rest.split_once('>')?;
        if tag.contains("src=") {
            return None;
        }
        after.split_once("</script>").map(|(body, _)| body)
    })
}

/// Where the web UI's page comes from, for its policy.
#[derive(Clone, Debug)]
pub struct UiPolicy {
    /// The web root, whose `index.html` is read (inside the root only) per page.
    root: Option<PathBuf>,
}

impl UiPolicy {
    /// The policy of the UI served from `web_root` (the built-in page when `None`).
    pub fn new(web_root: Option<&Path>) -> Self {
        UiPolicy {
            root: web_root.map(Path::to_path_buf),
        }
    }

    /// The policy header for the page as it is on disk now, connecting to `connect` too.
    fn header(&self, connect: &ConnectSources) -> HeaderValue {
        let page = self
            .root
            .as_deref()
            .and_then(|root| super::web_root::read_text_blocking(root, "index.html"))
            .unwrap_or_else(|| super::static_files::BUILTIN_PAGE.to_owned());
        HeaderValue::from_str(&ui_csp(&page, connect))
            .unwrap_or_else(|_| HeaderValue::from_static(API_CSP))
    }
}

/// The middleware: refuses over-long paths, then sets the hardening headers
/// on whatever answers (`ui` gives the web UI's policy).
pub async fn harden(ui: Arc<UiPolicy>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if path.len() > MAX_PATH_BYTES {
        return finish(
            ApiError::UriTooLong(MAX_PATH_BYTES).into_response(),
            API_CSP,
        );
    }
    if path.split('/').any(|s| s.len() > MAX_SEGMENT_BYTES) {
        let response = ApiError::NotFound(format!(
            "nothing here: a path segment is longer than {MAX_SEGMENT_BYTES} bytes"
        ))
        .into_response();
        return finish(response, API_CSP);
    }
    let kind =
        if path.ends_with(".svg") && (path.starts_with("/api/") || path.starts_with("/badge/")) {
            Kind::Svg
        } else if path.starts_with("/api/")
            || path == "/api"
            || path == "/healthz"
            || path == "/metrics"
        {
            Kind::Api
        } else {
            Kind::Ui
        };
    let response = next.run(request).await;
    match kind {
        Kind::Svg => finish(response, SVG_CSP),
        Kind::Api => finish(response, API_CSP),
        Kind::Ui => {
            let mut response = response;
            set_common(response.headers_mut());
            let is_page = response
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("text/html"));
            let policy = if is_page {
                let connect = response.extensions().get::<ConnectSources>();
                ui.header(connect.unwrap_or(&ConnectSources::default()))
            } else {
                HeaderValue::from_static(ASSET_CSP)
            };
            response
                .headers_mut()
                .insert(header::CONTENT_SECURITY_POLICY, policy);
            response
        }
    }
}

enum Kind {
    Ui,
    Api,
    Svg,
}

fn finish(mut response: Response, csp: &'static str) -> Response {
    set_common(response.headers_mut());
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(csp),
    );
    response
}

fn set_common(headers: &mut HeaderMap) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ui_policy_hashes_inline_scripts_only() {
        let html = "<head><script type=\"module\">alert(1)</script>\
                    <script src=\"/app.js\"></script></head>";
        let csp = ui_csp(html, &ConnectSources::default());
        // printf 'alert(1)' | openssl dgst -sha256 -binary | base64
        assert!(
            csp.contains("'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"),
            "{csp}"
        );
        assert_eq!(csp.matches("'sha256-").count(), 1);
        assert!(csp.contains("'wasm-unsafe-eval'"));
        assert!(csp.contains("frame-ancestors 'none'"));
        assert!(!ui_csp("<p>no script</p>", &ConnectSources::default()).contains("sha256"));
        assert!(csp.contains("connect-src 'self';"), "{csp}");
    }

    #[test]
    fn a_measuring_page_connects_to_its_targets_and_nothing_else() {
        let connect = ConnectSources(vec![
            "https://127.0.0.1:4433".into(),
            "https://x; script-src *".into(),
            "http://[::1]:80".into(),
        ]);
        let csp = ui_csp("", &connect);
        assert!(
            csp.contains("connect-src 'self' https://127.0.0.1:4433 http://[::1]:80;"),
            "{csp}"
        );
        assert!(!csp.contains("script-src *"), "{csp}");
    }

    #[test]
    fn base64_pads_as_the_rfc_says() {
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"\xfb\xff"), "+/8=");
    }
}
